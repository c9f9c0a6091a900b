//! Test oracles over the runs of one mutant, adjudication against the f64 reference,
//! localization, dedup signatures, minimization and bug bundles.
//!
//! An [`Oracle`] looks at the [`MutantRuns`] (every backend's [`RunReport`] on the same model
//! and inputs, plus re-runs of some of them) and returns [`Finding`]s: plain data. One oracle
//! per symptom ([`checks`]): crash, NaN/Inf, inconsistency (allclose with named tolerances,
//! D_MAD), hang, slow, memory, flaky. Where backends disagree the reference decides which one
//! is wrong; when every other backend agrees against the reference, the reference is named.
pub use mutagraph_ir as ir;

pub mod bundle;
pub mod checks;
pub mod envelope;
pub mod finding;
pub mod localize;
pub mod minimize;
pub mod mutant;
pub mod triage;
pub mod undefined;

pub use checks::{
    Crash, Flaky, Hang, Inconsistency, Memory, NanInf, Slow, default_oracles, slow_candidates,
};
pub use finding::{
    Blame, Finding, Kind, Layer, Location, core_message, key_phrase, normalize_message,
};
pub use mutant::Mutant;
pub use triage::{Triage, Triaged, Verdict};

use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::RunReport;

/// The runs of one mutant on every backend of a campaign, on the same model and inputs.
#[derive(Clone, Debug, Default)]
pub struct MutantRuns {
    /// One report per backend, in the campaign's backend order.
    pub runs: Vec<RunReport>,
    /// Index in `runs` of the ground truth (the reference interpreter), if it is in the set.
    pub reference: Option<usize>,
    /// Second runs of some backends on the same model and inputs (flakiness, and the
    /// confirmation of slowness).
    pub reruns: Vec<RunReport>,
    /// How much slower than the others each backend already was on the unmutated seed
    /// ([`checks::slowness`]), by backend: a mutant is slow only where it multiplies that.
    /// Empty outside campaigns.
    pub slow_baseline: std::collections::BTreeMap<String, f64>,
}

impl MutantRuns {
    /// The reference outputs, when the reference ran fine.
    pub fn reference_outputs(&self) -> Option<&NamedValues> {
        self.runs.get(self.reference?)?.outcome.outputs()
    }

    /// The runs other than the reference.
    pub fn others(&self) -> impl Iterator<Item = &RunReport> {
        self.runs
            .iter()
            .enumerate()
            .filter(move |(i, _)| Some(*i) != self.reference)
            .map(|(_, r)| r)
    }

    /// The runs with `ground` in the reference's slot, as the ground truth, and not also
    /// among the others (judging by peers, when the reference lacks an op of the model).
    /// Unchanged without a reference slot.
    pub fn with_ground(&self, ground: &RunReport) -> MutantRuns {
        let mut peer = self.clone();
        let Some(slot) = self.reference else {
            return peer;
        };
        peer.runs[slot] = ground.clone();
        if let Some(j) =
            (0..peer.runs.len()).find(|&j| j != slot && peer.runs[j].backend == ground.backend)
        {
            peer.runs.remove(j);
            peer.reference = Some(if j < slot { slot - 1 } else { slot });
        }
        peer.reruns.retain(|r| r.backend != ground.backend);
        peer
    }

    /// True when some run other than `backend`'s produced outputs.
    pub fn someone_else_ran(&self, backend: &str) -> bool {
        self.runs
            .iter()
            .any(|r| r.backend != backend && r.outcome.outputs().is_some())
    }
}

/// A test oracle.
pub trait Oracle: Send + Sync {
    /// Its name.
    fn name(&self) -> &'static str;
    /// The findings on one mutant's runs (empty when all is well).
    fn judge(&self, runs: &MutantRuns) -> Vec<Finding>;
}

/// Every oracle's findings on one mutant.
pub fn judge_all(oracles: &[Box<dyn Oracle>], runs: &MutantRuns) -> Vec<Finding> {
    oracles.iter().flat_map(|o| o.judge(runs)).collect()
}
