//! The mutators crate's integration tests, linked into one test binary: each file below was its own
//! binary, and every one linked tract, burn and ort (about 200 MB each in a debug build), which
//! filled a CI machine's disk while linking.

mod coverage;
mod layer_weight_ops;
mod operators;
mod patterns;
mod recipes;
mod reduce;
mod structure_ops;
mod zoo;
