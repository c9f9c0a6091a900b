//! Test oracles over the runs of one mutant: crash, NaN/Inf, inconsistency, hang, performance, flakiness.
//!
//! This crate is reserved by the workspace layout; its contents arrive with their own issue.
//! It re-exports the IR so that dependents can already name it.
pub use mutagraph_ir as ir;
