//! The case value: one mutant as the search made it (bytes, inputs, records), which travels
//! through the stages to the record; and each seed's plan for running its mutants.
use super::*;

/// One mutant, ready to run: the case value that travels from the search to the record.
pub(super) struct Job {
    pub(super) iteration: u64,
    pub(super) op: usize,
    pub(super) seed: usize,
    /// The MCMC seed selected for it (pool slot × operator; [`super::mcmc::SeedStats`]);
    /// `None` for a seed's own run.
    pub(super) selected: Option<usize>,
    /// The mutant: its bytes, and its typed model and precision once a stage needed them.
    pub(super) mutant: Mutant,
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

impl SeedPlan {
    /// The plan of a seed from what admission saw of it (and the values a window's inputs
    /// were captured with); `floor` is the shortest time limit of a run.
    pub(super) fn new(
        (admitted, tensors): &(admission::Admitted, super::intake::Tensors),
        floor: Duration,
    ) -> SeedPlan {
        SeedPlan {
            inputs: GenOptions {
                tensors: tensors.clone(),
                ..admitted.gen_options()
            },
            timeout: admitted.run_timeout(floor),
            slowness: admitted.slowness.clone(),
        }
    }
}
