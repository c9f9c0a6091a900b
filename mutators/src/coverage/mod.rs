//! The coverage model that guides the campaign (MEMO's layer type / layer pair / layer
//! parameter coverage, plus an input coverage), with explicit finite universes.
//!
//! # Families and their universes
//!
//! A [`Universe`] is computed once from the op registry ([`Registry::global`]). Only ops of the
//! default ONNX domain are in it (the `ai.onnx.preview.training` ops are left out). The full
//! universe holds every such op; [`Universe::restricted`] keeps a given list of op types (the
//! campaign restricts it to the ops every backend under test supports, so that the
//! denominators only count what the campaign can generate).
//!
//! * **Op types**: one item per op.
//! * **Op pairs** `a → b`: one item per *connectable* ordered pair. `a → b` is connectable when
//!   some output port of `a` can feed some input port of `b`: both ports are tensor ports
//!   (their type variable is named) and the dtype sets of the two type variables intersect, or
//!   both ports are untyped (the registry leaves sequence and optional ports untyped, `tc ""`),
//!   in which case they connect. An untyped port never connects to a tensor port. This is an
//!   approximation: the registry describes no rank constraints on ports, so ranks are not
//!   checked (`Size → Conv` counts as connectable though a rank-0 tensor cannot be a Conv
//!   input), and a `""` port of the `Optional` ops that would in truth take a tensor is taken
//!   as non-tensor. A pair seen in a model but outside the universe is not counted as covered;
//!   [`Report::outside_pairs`] tells how many such pairs were seen.
//! * **Parameters**: one item per bucket of every attribute spec of every op (the registry
//!   buckets each attribute into at most 5 buckets, see [`mutagraph_ir::registry::Buckets`]).
//!   An attribute that a node leaves out but whose spec has a default (at the model's opset)
//!   covers the bucket of its default: the library runs the default's code path.
//! * **Inputs**: per op, per tensor input port, per dtype allowed by the port's type variable,
//!   per shape cell. The cells are: rank 0 (scalar), and for each rank class `1`, `2`, `3`,
//!   `4`, `≥5` one of three shape classes: [`ShapeClass::ZeroSized`] (some dimension is 0),
//!   [`ShapeClass::HasUnit`] (no 0 but some 1: broadcasting and squeezing paths),
//!   [`ShapeClass::General`] (every known dimension is ≥ 2; symbolic dimensions count as
//!   general). That is 16 cells per (op, port, dtype). An input whose rank or dtype is unknown
//!   covers nothing. Variadic inputs all map onto their port. Ranks are not pruned by the
//!   op's rank constraints (the registry does not describe them), so this family's
//!   denominator is an over-approximation and its percentage reads low.
//!
//! Nodes of subgraphs (`If`, `Loop`, `Scan` bodies) count like nodes of the main graph; pairs
//! are taken within each graph.
//!
//! # Cost
//!
//! Items are dense integer ids and each family is a bitset, so adding a model costs a pass
//! over its nodes and edges with a hash lookup per op type and value name.
//!
//! # Files
//!
//! * `universe.rs`: the [`Universe`] (its op types, connectable pairs and input ports);
//! * `params.rs`: the parameter family (bucket ids of a universe, the buckets a node covers);
//! * `cells.rs`: the input family's shape cells ([`shape_cell`], [`ShapeClass`]);
//! * `covered.rs`: [`Coverage`], what adding a model or merging a coverage covers;
//! * `report.rs`: [`Delta`], [`Family`], [`Report`];
//! * `saved.rs`: the serialized form (readable item keys);
//! * `bitset.rs`: the bit set each family is.
//!
//! [`Registry::global`]: mutagraph_ir::registry::Registry::global
mod bitset;
mod cells;
mod covered;
mod params;
mod report;
mod saved;
mod universe;

pub use cells::{SHAPE_CELLS, ShapeClass, shape_cell, shape_class};
pub use covered::Coverage;
pub(crate) use params::node_buckets;
pub use report::{Delta, Family, Report};
pub use universe::{Sizes, Universe, UniverseError};
