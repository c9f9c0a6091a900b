//! `stats.json` ([`Stats`]) and the counters, phase times, pool slots and session starts it
//! shares with `state.json` (`campaign::State`).
use super::Versioned;
use mutagraph_mutators::coverage::Report;
use mutagraph_oracles::triage::TriageStats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Per-operator counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpCounters {
    /// Operator name.
    pub name: String,
    /// Times a seed with this operator was selected.
    pub selected: u64,
    /// Mutants made.
    pub mutated: u64,
    /// Not applicable (model unchanged).
    pub skipped: u64,
    /// Diverse mutants.
    pub diverse: u64,
    /// Illegal mutants (rejected, inputs impossible, or loaded by no backend).
    pub illegal: u64,
}

/// Campaign counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counters {
    /// Iterations done.
    pub iterations: u64,
    /// Mutants sent to the backends.
    pub executions: u64,
    /// Backend runs (executions × backends).
    pub backend_runs: u64,
    /// Mutants made (`Outcome::Mutated`).
    pub mutants: u64,
    /// Operator not applicable.
    pub skipped: u64,
    /// Operator built an invalid edit.
    pub rejected: u64,
    /// Inputs could not be generated (not executed).
    pub inputs_failed: u64,
    /// Executed mutants that no backend could load or compile.
    pub load_failed_everywhere: u64,
    /// Pool slots started again from their seed (their model reached 3/4 of the node limit).
    pub pool_resets: u64,
    /// Diverse mutants (= corpus files).
    pub diverse: u64,
    /// Findings, all of them.
    pub findings: u64,
    /// Findings by kind.
    pub findings_by_kind: BTreeMap<String, u64>,
    /// Bundles merged into another one after minimization showed one root cause (moved to
    /// `merged/`; `unique_findings` counts the bundles left under `findings/`).
    pub merged: u64,
    /// Distinct signatures (= bug bundles under `findings/`).
    pub unique_findings: u64,
    /// Bundles filed from a seed's own run before any mutation (admission): bugs on the
    /// user's unmutated model.
    pub seed_findings: u64,
    /// Seeds run unmutated by admission (each on every backend; not counted in `executions`).
    pub seed_runs: u64,
    /// Bundles withdrawn to `unconfirmed/` because their own model and inputs, run again in
    /// the minimizer's fresh worker processes, did not show the finding.
    pub unconfirmed: u64,
    /// Findings dropped by localization as amplified rounding of the inputs (`unstable`).
    pub unstable: u64,
    /// Findings dropped because the blamed node got values for which ONNX leaves the result
    /// open (NaN into an op with unspecified NaN handling, out-of-range float-to-int casts).
    pub undefined: u64,
    /// Numeric findings that localization could not pin on a node, outside an optimizer (not
    /// filed).
    pub unlocalized: u64,
    /// Failures no independent implementation witnesses (no other library runs the model at
    /// its unoptimized level, or the reference fails on it too): not filed.
    pub unwitnessed: u64,
    /// Failures of an optimized variant where the library's unoptimized level does not
    /// implement the model (the gap showing through the optimizer): not filed.
    pub unsupported: u64,
    /// mutagraph's own failures, never filed: the reference failing or outvoted, a panic in our
    /// interpreter or binding, an invalid model from the generator.
    pub ours: u64,
    /// The part of `ours` that is the reference's: it failed where a library ran the model,
    /// or the other libraries agreed with each other against it.
    pub reference_failures: u64,
    /// Second runs made for the slowness and flakiness oracles.
    pub reruns: u64,
    /// Bundles minimized.
    pub minimized: u64,
    /// Per operator, in `Config::operators` order.
    pub per_operator: Vec<OpCounters>,
}

impl Counters {
    /// Illegal mutants: rejected, inputs impossible, or loaded nowhere.
    pub fn illegal(&self) -> u64 {
        self.rejected + self.inputs_failed + self.load_failed_everywhere
    }

    /// Illegal share of the attempted mutants (iterations that were not skipped), percent.
    pub fn illegal_percent(&self) -> f64 {
        let tried = self.iterations - self.skipped;
        if tried == 0 {
            0.0
        } else {
            100.0 * self.illegal() as f64 / tried as f64
        }
    }
}

/// Seconds spent per phase (summed over sessions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Timings {
    /// Seed selection.
    pub select: f64,
    /// Operators.
    pub mutate: f64,
    /// Export to bytes.
    pub export: f64,
    /// Input generation.
    pub inputs: f64,
    /// The search's thread waiting for the stages (nothing to generate: as many cases in
    /// flight as the pipeline holds, or a commit waiting for them).
    pub backends_wait: f64,
    /// Time of one backend worker: the runs' wall time summed, over the lanes × backends.
    pub backends_busy: f64,
    /// Oracles and second runs (slowness, flakiness), on the triage stage's thread.
    pub oracles: f64,
    /// Localization of findings and its extra runs, on the triage stage's thread.
    pub triage: f64,
    /// Recording the judged findings (bundles, hits), on the search's thread.
    pub record: f64,
    /// Commits waiting for the cases in flight.
    pub drain: f64,
    /// Coverage and scheduler updates.
    pub coverage: f64,
    /// Writing files.
    pub io: f64,
    /// Per backend: where its share of the backend time goes.
    pub per_backend: BTreeMap<String, BackendTime>,
}

/// Seconds a backend spent on the campaign's runs (summed over runs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BackendTime {
    /// Runs.
    pub runs: u64,
    /// Wall time seen from the engine (protocol included).
    pub wall_s: f64,
    /// Load and compile inside the worker.
    pub prepare_s: f64,
    /// Inference inside the worker.
    pub run_s: f64,
}

/// A pool slot: where its current model comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slot {
    /// Index of the seed it descends from.
    pub seed: usize,
    /// Corpus id of its current model (`None`: still the seed).
    pub corpus: Option<String>,
}

/// Where a session of a campaign started, in the campaign's iterations and time (both run on
/// across sessions): the report marks each resume on its time axis.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionStart {
    /// Iterations committed when it started.
    pub iteration: u64,
    /// Campaign time when it started, seconds.
    pub elapsed_s: f64,
}

/// `stats.json`: the campaign's totals, written about once a second and at the end of a
/// session, read by the report. Every field defaults, so a file written before a field existed
/// (or by hand) still reads; the report shows coverage only when the file has it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Stats {
    /// Format version ([`Versioned::VERSION`]; 0: written before versions).
    pub version: u32,
    /// Counters.
    #[serde(flatten)]
    pub counters: Counters,
    /// Wall time over all sessions, seconds.
    pub elapsed_s: f64,
    /// Executions per second of wall time.
    pub execs_per_s: f64,
    /// Illegal mutants.
    pub illegal: u64,
    /// Illegal share of attempted mutants, percent.
    pub illegal_percent: f64,
    /// Coverage per family (always written; absent only from a file that predates it).
    pub coverage: Option<Report>,
    /// Coverage of the seeds alone (always written, as `coverage`).
    pub seed_coverage: Option<Report>,
    /// Phase times.
    pub timings: Timings,
    /// Share of wall time not spent waiting for backends, percent.
    pub outside_backends_percent: f64,
    /// Seeds in the pool.
    pub pool: Vec<Slot>,
    /// The triage's own counters (extra runs, verdicts, `ours` and `undefined` by class).
    pub triage: TriageStats,
    /// Where each session started.
    pub sessions: Vec<SessionStart>,
    /// The corpus's size against the disk budget, and what the budget deleted.
    #[serde(default)]
    pub corpus: Option<crate::corpus::CorpusStats>,
    /// The graph rewrites each optimizing backend applied to the mutants.
    pub rewrites: Vec<RewriteCoverage>,
    /// ONNX Runtime's `com.microsoft` ops of the universe, and which of them mutants used.
    pub contrib_ops: Option<ContribCoverage>,
}

/// The rewrites one backend applied (ONNX Runtime names its graph transformers in its log,
/// tract its patches: [`mutagraph_backends::rewrites::rule_name`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RewriteCoverage {
    /// The backend (`ort`).
    pub backend: String,
    /// Each rewrite that changed a mutant, with how many mutants it changed.
    pub fired: BTreeMap<String, u64>,
    /// The known rewrites of this backend ([`RewriteCoverage::known_from`] says which).
    #[serde(alias = "targeted")]
    pub known: Vec<String>,
    /// Where `known` comes from: the pattern library (`mutagraph_mutators::patterns`, for
    /// ONNX Runtime), or the rewrites the backend applies over the ONNX backend test suite
    /// (tract's, `backends/conformance/rewrites/`).
    pub known_from: String,
    /// How many of `known` fired.
    #[serde(alias = "targeted_fired")]
    pub known_fired: usize,
    /// The distinct combinations of rewrites it applied to one mutant (each new one credited
    /// the seed that made it: the MCMC fitness's rewrite family).
    pub combinations: usize,
}

/// [`RewriteCoverage::known_from`] for ONNX Runtime: the rewrites the pattern library is made for.
pub const FROM_PATTERNS: &str = "the pattern library";
/// [`RewriteCoverage::known_from`] for tract: the rewrites it applies over the ONNX backend test
/// suite.
pub const FROM_SUITE: &str = "the ONNX backend test suite";

impl RewriteCoverage {
    /// Whether the known rewrites are those the backend applies over the ONNX backend test
    /// suite (else the pattern library's, as in campaigns that predate the field).
    pub fn known_from_suite(&self) -> bool {
        self.known_from == FROM_SUITE
    }

    /// The coverage of `backend` from what it fired; `known` are its known rewrites, from
    /// `known_from` (empty for a backend without any).
    pub fn of(
        backend: &str,
        fired: &BTreeMap<String, u64>,
        (known, known_from): (&[&str], &str),
        combinations: usize,
    ) -> RewriteCoverage {
        RewriteCoverage {
            backend: backend.to_string(),
            fired: fired.clone(),
            known: known.iter().map(|s| s.to_string()).collect(),
            known_from: known_from.to_string(),
            known_fired: known.iter().filter(|t| fired.contains_key(**t)).count(),
            combinations,
        }
    }

    /// The rewrites that fired and are not known (for tract: rewrites the ONNX backend test
    /// suite never makes it apply).
    pub fn beyond_known(&self) -> Vec<&str> {
        self.fired
            .keys()
            .filter(|f| !self.known.contains(f))
            .map(String::as_str)
            .collect()
    }
}

/// The contrib ops of the campaign's universe, covered or not.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContribCoverage {
    /// Those some mutant used.
    pub covered: Vec<String>,
    /// Those no mutant used yet.
    pub uncovered: Vec<String>,
}

impl Versioned for Stats {
    const VERSION: u32 = 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn illegal_share_counts_attempted_mutants() {
        let c = Counters {
            iterations: 10,
            skipped: 2,
            rejected: 1,
            load_failed_everywhere: 1,
            ..Default::default()
        };
        assert_eq!(c.illegal(), 2);
        assert_eq!(c.illegal_percent(), 25.0);
    }
}
