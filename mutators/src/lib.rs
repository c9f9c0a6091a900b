//! Mutation operators over the IR (structure, layer, weight, NaN), one struct per mutation.
//!
//! This crate is reserved by the workspace layout; its contents arrive with their own issue.
//! It re-exports the IR so that dependents can already name it.
pub use mutagraph_ir as ir;

pub mod builder;
pub mod zoo;
