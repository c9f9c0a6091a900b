//! mutagraph's intermediate representation of ONNX models.
//!
//! * [`pb`]: prost types of the ONNX format (proto2, generated from `proto/onnx.proto`).
//! * [`Model`] / [`Graph`] / [`Node`]: a petgraph `StableDiGraph` of ops with stable [`NodeId`]s;
//!   edges carry the values flowing between ops. Import ([`Model::from_bytes`]) and export
//!   ([`Model::to_bytes`]) are lossless: what the IR does not model is kept verbatim.
//! * [`external`]: tensor data in side files, read in by [`Model::load`] (confined to the
//!   model's directory) and written back beside a model by [`external::save`].
//! * [`registry`]: one [`OpSpec`](registry::OpSpec) per ONNX op (arity, attributes, dtype
//!   constraints, type-and-shape transfer, input constraints, parameter buckets).
//! * [`onnx_ops`]: the name and versions of every operator ONNX defines (default domain and
//!   `ai.onnx.ml`), from the `onnx` package: what validation knows of ops without a spec.
//! * [`infer`]: type and shape inference over a graph with the registry.
//! * [`validate`]: structural and typing checks.
//! * [`patch`]: edits, applied all at once and validated.
//! * [`slice`]: graph slicing (a model cut down to some nodes, every intermediate value as an
//!   output).
//! * [`names`]: plain names (`retuned_1`) for what the mutators named (`retuned_m3b17de67_5`).
//! * [`text`]: ONNX's textual syntax (`parse_model`, `print_model`).
//! * [`rng`] and [`hash`]: the workspace's one seeded stream (SplitMix64) and one stable hash
//!   (FNV-1a).

pub mod attr;
pub mod dtype;
pub mod error;
pub mod export;
pub mod external;
pub mod graph;
pub mod hash;
pub mod import;
pub mod infer;
pub mod limits;
pub mod model;
pub mod names;
pub mod onnx_ops;
pub mod ops;
pub mod patch;
pub mod registry;
pub mod rng;
pub mod slice;
pub mod solve;
pub mod tensor;
pub mod text;
pub mod types;
pub mod validate;

/// Types generated from `proto/onnx.proto`.
#[allow(clippy::all, missing_docs)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/onnx.rs"));
}

pub use attr::{AttrValue, Attribute};
pub use dtype::DType;
pub use error::{Error, Result};
pub use graph::{Edge, Graph, Node, NodeId};
pub use model::Model;
pub use registry::Registry;
pub use types::{Dim, TensorType, ValueType};
