//! The case value: one mutant as the search made it (bytes, inputs, records), which travels
//! through the stages to the record; and each seed's plan for running its mutants.
use super::*;

/// One mutant of a batch, ready to run.
pub(super) struct Job {
    pub(super) iteration: u64,
    pub(super) op: usize,
    pub(super) seed: usize,
    pub(super) bytes: Vec<u8>,
    /// The time limit of each backend's run.
    pub(super) timeout: Duration,
    /// `None` when the inputs could not be generated (not executed).
    pub(super) inputs: Option<NamedValues>,
    /// The seed the inputs were generated from.
    pub(super) input_seed: u64,
    pub(super) records: Vec<Record>,
    pub(super) diverse: bool,
    /// The coverage items of a diverse mutant (its corpus entry's, for culling).
    pub(super) items: Vec<String>,
}

/// How the mutants of one seed are run, from what admission saw of the seed.
pub(super) struct SeedPlan {
    /// How their inputs are generated.
    pub(super) inputs: GenOptions,
    /// The time limit of each backend's run.
    pub(super) timeout: Duration,
    /// How much slower than the others each backend was on the seed.
    pub(super) slowness: BTreeMap<String, f64>,
}
