//! What a campaign persists: the counters, phase times, pool and coverage of `state.json` (the
//! resume point), `stats.json`, each corpus entry's trace, and the summary a session ends with.
use super::*;

/// Per-operator counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    #[serde(default)]
    pub pool_resets: u64,
    /// Diverse mutants (= corpus files).
    pub diverse: u64,
    /// Findings, all of them.
    pub findings: u64,
    /// Findings by kind.
    pub findings_by_kind: BTreeMap<String, u64>,
    /// Bundles merged into another one after minimization showed one root cause (moved to
    /// `merged/`; `unique_findings` counts the bundles left under `findings/`).
    #[serde(default)]
    pub merged: u64,
    /// Distinct signatures (= bug bundles under `findings/`).
    #[serde(default)]
    pub unique_findings: u64,
    /// Bundles filed from a seed's own run before any mutation (admission): bugs on the
    /// user's unmutated model.
    #[serde(default)]
    pub seed_findings: u64,
    /// Seeds run unmutated by admission (each on every backend; not counted in `executions`).
    #[serde(default)]
    pub seed_runs: u64,
    /// Bundles withdrawn to `unconfirmed/` because their own model and inputs, run again in
    /// the minimizer's fresh worker processes, did not show the finding.
    #[serde(default)]
    pub unconfirmed: u64,
    /// Findings dropped by localization as amplified rounding of the inputs (`unstable`).
    #[serde(default)]
    pub unstable: u64,
    /// Findings dropped because the blamed node got values for which ONNX leaves the result
    /// open (NaN into an op with unspecified NaN handling, out-of-range float-to-int casts).
    #[serde(default)]
    pub undefined: u64,
    /// Numeric findings that localization could not pin on a node, outside an optimizer (not
    /// filed).
    #[serde(default)]
    pub unlocalized: u64,
    /// Failures no independent implementation witnesses (no other library runs the model at
    /// its unoptimized level, or the reference fails on it too): not filed.
    #[serde(default)]
    pub unwitnessed: u64,
    /// Failures of an optimized variant where the library's unoptimized level does not
    /// implement the model (the gap showing through the optimizer): not filed.
    #[serde(default)]
    pub unsupported: u64,
    /// mutagraph's own failures, never filed: the reference failing or outvoted, a panic in our
    /// interpreter or binding, an invalid model from the generator.
    #[serde(default)]
    pub ours: u64,
    /// The part of `ours` that is the reference's: it failed where a library ran the model,
    /// or the other libraries agreed with each other against it.
    #[serde(default)]
    pub reference_failures: u64,
    /// Second runs made for the slowness and flakiness oracles.
    #[serde(default)]
    pub reruns: u64,
    /// Bundles minimized.
    #[serde(default)]
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
pub struct Timings {
    /// Seed selection.
    pub select: f64,
    /// Operators.
    pub mutate: f64,
    /// Export to bytes.
    pub export: f64,
    /// Input generation.
    pub inputs: f64,
    /// The main loop waiting for the backends (mutation of the next batch overlaps with the
    /// backends' work, so this is less than the backends' busy time).
    pub backends_wait: f64,
    /// Wall time during which backends were running (from dispatch to the last reply).
    #[serde(default)]
    pub backends_busy: f64,
    /// Oracles.
    pub oracles: f64,
    /// Re-runs and localization of findings, bundles (mostly backend runs).
    #[serde(default)]
    pub triage: f64,
    /// Coverage and scheduler updates.
    pub coverage: f64,
    /// Writing files.
    pub io: f64,
    /// Per backend: where its share of the backend time goes.
    #[serde(default)]
    pub per_backend: BTreeMap<String, BackendTime>,
}

/// Seconds a backend spent on the campaign's runs (summed over runs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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

/// Everything needed to continue a campaign exactly (`state.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Iterations committed; also the RNG position (streams are derived from it).
    pub iteration: u64,
    /// The master seed the streams are derived from.
    pub rng_seed: u64,
    /// Pool slots.
    pub pool: Vec<Slot>,
    /// Scheduler statistics.
    pub seeds: SeedStats,
    /// Coverage over the campaign universe (seeds and every mutant generated).
    pub coverage: Coverage,
    /// Counters.
    pub counters: Counters,
    /// Phase times.
    pub timings: Timings,
    /// Wall time of the campaign over all sessions, seconds.
    pub elapsed_s: f64,
    /// Deduplicated findings by signature.
    #[serde(default)]
    pub signatures: BTreeMap<String, SigEntry>,
    /// Root causes found by minimization ([`Finding::root_signature`]) → the signature of
    /// the bundle filed for it.
    #[serde(default)]
    pub roots: BTreeMap<String, String>,
    /// The triage's counters.
    #[serde(default)]
    pub triage: TriageStats,
    /// Examples of mutagraph's own failures kept under `ours/` (at most [`OURS_KEPT`]).
    #[serde(default)]
    pub ours_kept: BTreeSet<String>,
    /// Where each session started (the first at 0; a resume adds one).
    #[serde(default)]
    pub sessions: Vec<SessionStart>,
}

/// Where a session of a campaign started, in the campaign's iterations and time (both run on
/// across sessions): the report marks each resume on its time axis.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionStart {
    /// Iterations committed when it started.
    pub iteration: u64,
    /// Campaign time when it started, seconds.
    pub elapsed_s: f64,
}

/// How many examples of mutagraph's own failures `ours/` keeps (one per reason and message).
pub const OURS_KEPT: usize = 200;

/// `stats.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stats {
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
    /// Coverage per family.
    pub coverage: Report,
    /// Coverage of the seeds alone.
    pub seed_coverage: Report,
    /// Phase times.
    pub timings: Timings,
    /// Share of wall time not spent waiting for backends, percent.
    pub outside_backends_percent: f64,
    /// Seeds in the pool.
    pub pool: Vec<Slot>,
    /// The triage's own counters (extra runs, verdicts, `ours` and `undefined` by class).
    #[serde(default)]
    pub triage: TriageStats,
    /// Where each session started.
    #[serde(default)]
    pub sessions: Vec<SessionStart>,
}

/// The trace file of a corpus entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Seed name (zoo name or file path as given).
    pub seed: String,
    /// The seed as the campaign used it, in the output directory.
    pub seed_file: String,
    /// Iteration that made it.
    pub iteration: u64,
    /// Every record from the seed, in order.
    pub records: Vec<Record>,
}

/// Corpus id of the mutant of an iteration.
pub fn corpus_id(iteration: u64) -> String {
    format!("m{iteration:08}")
}

/// What a finished session reports.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The output directory.
    pub out: PathBuf,
    /// Iterations committed in total.
    pub iterations: u64,
    /// Executions in total.
    pub executions: u64,
    /// Findings in total (every hit).
    pub findings: u64,
    /// Bug bundles under `findings/`.
    pub unique_findings: u64,
    /// Bundles minimized.
    pub minimized: u64,
    /// Minimizations still pending when the session ended (resumed next session).
    pub minimizations_pending: usize,
    /// Campaign wall time over all sessions, seconds.
    pub elapsed_s: f64,
    /// This session's wall time, seconds.
    pub session_s: f64,
    /// The signal that stopped the session early (`SIGINT`, `SIGTERM`), if one did.
    pub stopped_by: Option<String>,
}

impl Summary {
    /// The summary as the command prints it.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "campaign {}: {} iterations, {} executions, {} unique findings ({} hits), {} minimized, {} in total ({} this session)",
            self.out.display(),
            self.iterations,
            self.executions,
            self.unique_findings,
            self.findings,
            self.minimized,
            status::hms(self.elapsed_s),
            status::hms(self.session_s),
        );
        if self.minimizations_pending > 0 {
            s.push_str(&format!(
                "; {} minimizations left for the next session",
                self.minimizations_pending
            ));
        }
        if let Some(sig) = &self.stopped_by {
            s.push_str(&format!(
                "\nstopped by {sig}: state saved; run the same command to resume"
            ));
        }
        s.push('\n');
        s
    }
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
