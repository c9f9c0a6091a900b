//! Inference backends (ONNX Runtime, tract, burn, f64 reference) run in isolated workers.
//!
//! This crate is reserved by the workspace layout; its contents arrive with their own issue.
//! It re-exports the IR so that dependents can already name it.
pub use mutagraph_ir as ir;
