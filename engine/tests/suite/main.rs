//! The engine crate's integration tests, linked into one test binary: each file below was its own
//! binary, and every one linked tract, burn and ort (about 200 MB each in a debug build), which
//! filled a CI machine's disk while linking.

mod common;

mod admission;
mod bundle_docs;
mod bundles;
mod campaign_cli;
mod campaign_kill;
mod cli;
mod conformance_suite;
mod consistency_cli;
mod corrupt_models;
mod coverage_cli;
mod drift;
mod hostile;
mod import_cli;
mod minimize_cli;
mod oracle_eval_cli;
mod planted;
mod prompt_cli;
mod prompt_loop;
mod ray_launcher;
mod real_models;
mod report;
mod root_causes;
mod run_cli;
mod sync_campaign;
mod triage;
mod worker_faults;
mod zoo_cli;
