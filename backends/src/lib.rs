//! Inference backends (ONNX Runtime, tract, burn, f64 reference), run in isolated worker
//! processes.
//!
//! - [`backend::Backend`] / [`backend::Prepared`]: the one trait pair every backend implements.
//! - [`value`]: host tensors and values exchanged with backends, with their protobuf encodings.
//! - [`catalog`]: backends by name.
//! - [`worker`]: the worker process protocol, the serve loop and the pool with timeouts and
//!   memory caps; every run ends as one [`worker::Outcome`].
//! - [`planted`]: the reference with one op carrying a known bug (tests of the campaign).
//! - [`compare`]: error metrics and named tolerances; [`suite`]: the ONNX backend test suite;
//!   [`conformance`]: running it.
//! - [`semantics`]: what the attributes of the recurrent and control-flow ops mean, read once
//!   for both interpreters (the reference and burn's).
pub use mutagraph_ir as ir;

pub mod backend;
pub mod catalog;
pub mod compare;
pub mod conformance;
pub mod fault;
pub mod inputs;
pub mod planted;
pub mod probe;
pub mod reference;
pub mod rewrites;
pub mod semantics;
pub mod suite;
pub mod value;
pub mod worker;

#[cfg(feature = "burn")]
pub mod burn;
#[cfg(feature = "ort")]
pub mod ort;
#[cfg(feature = "tract")]
pub mod tract;

pub use backend::{Backend, BackendError, Capabilities, Prepared, Stage};
pub use value::{Data, HostTensor, NamedValues, Value};
