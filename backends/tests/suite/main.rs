//! The backends crate's integration tests, linked into one test binary: each file below was its own
//! binary, and every one linked tract, burn and ort (about 200 MB each in a debug build), which
//! filled a CI machine's disk while linking.

mod common;

mod burn_recurrent_control;
mod burn_suite;
mod edge_cases;
mod intermediates;
mod newer_ops;
mod ort_suite;
mod planted;
mod reference_suite;
mod tract_suite;
