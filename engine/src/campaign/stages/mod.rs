//! The stages of the campaign's path that run beside the search, each a type owning its state
//! and its threads: [`execute::Execute`] (the backends' lanes) and [`triage::Triaging`] (the
//! oracles, the extra runs and the triage). They report to the pipeline
//! ([`super::pipeline`]) through one channel of [`Event`]s; the pipeline is the only code
//! that knows them all.
pub mod execute;
pub mod triage;

use super::Job;
use mutagraph_backends::worker::RunReport;
use mutagraph_oracles::MutantRuns;
use mutagraph_oracles::triage::Triaged;
use std::sync::Arc;

/// Position of a case in the order the search generated it (the order it is judged in).
pub type Seq = u64;

/// What a stage tells the pipeline.
pub enum Event {
    /// One backend's run of case `seq` (`Err`: the worker could not be started at all).
    Ran {
        seq: Seq,
        backend: usize,
        report: Result<RunReport, String>,
    },
    /// Case `seq` judged and triaged.
    Judged(Box<Judged>),
}

/// A case after the triage: what the pipeline records.
pub struct Judged {
    pub job: Arc<Job>,
    /// Its runs (with their second runs), when it was executed.
    pub runs: Option<MutantRuns>,
    /// Every finding with its verdict.
    pub triaged: Vec<Triaged>,
    /// Second runs made for slowness and flakiness.
    pub reruns: u64,
    /// Seconds of the oracles and the second runs.
    pub oracles_s: f64,
    /// Seconds of the triage (localization and its extra runs).
    pub triage_s: f64,
}
