//! `mutagraph campaign`: the coverage-guided mutation campaign (MEMO Algorithm 2).
//!
//! Each iteration selects a seed ⟨pool model, operator⟩ ([`mcmc`]), applies the operator to a
//! copy of the model, exports the mutant, generates seeded inputs, runs it on every backend of
//! the set (each backend in its own worker, backends concurrently), judges the runs with the
//! oracles and updates the coverage and the scheduler. A mutant that covers a new op type, op
//! pair or parameter bucket is *diverse*: it replaces its parent in the pool and goes to the
//! corpus.
//!
//! The search never depends on what the backends did: it is a pure function of `--seed`, the
//! seeds and the operators, so results do not depend on `-j`, on timing, or on how often the
//! campaign was stopped and resumed. Every random stream of iteration `i` is derived from
//! `(--seed, i)`, so the "RNG state" saved in `state.json` is the iteration counter.
//!
//! Output directory (every file written atomically: temporary file, fsync, rename; corpus
//! entries on the [`writer`]'s thread, on disk before the state that names them):
//! * `campaign.toml`: the effective configuration.
//! * `seeds/<name>.onnx`: the (reduced) seed models.
//! * `corpus/<id>.onnx` + `corpus/<id>.trace.json`: diverse mutants, with the seed name and every
//!   mutation record from the seed (`mutation::replay_trace` rebuilds the exact bytes).
//! * `findings/<kind>-<backend>-<n>/`: the first 3 findings per (kind, backend, op) key:
//!   `model.onnx`, `input_<i>.pb`, `outputs/<backend>/output_<i>.pb`, `report.json`.
//! * `stats.json` and a `timeseries.csv` row about once a second; `state.json`, the resume
//!   point, written last in each commit (every [`COMMIT_EVERY`], after the batch crossing it).
pub mod admission;
pub mod lock;
pub mod mcmc;
pub mod minimizer;
pub mod status;
pub mod writer;

use crate::bundle;
use crate::findings::{Seen, SigEntry};
use anyhow::{Context, Result, anyhow, bail};
use mcmc::{Scheduler, SeedStats};
use minimizer::{Finished, MinimizeJob, Minimizer, NotShown};
use mutagraph_backends::backend::Stage;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Outcome as RunOutcome, Pool, PoolOptions, RunReport};
use mutagraph_ir::model::write_atomic;
use mutagraph_ir::solve::Fixed;
use mutagraph_ir::{Model, validate};
use mutagraph_mutators::builder::SplitMix64;
use mutagraph_mutators::coverage::{Coverage, Report};
use mutagraph_mutators::mutation::{Ctx, Limits, Mutator, Outcome, Record};
use mutagraph_mutators::operators;
use mutagraph_mutators::recipes::Recipes;
use mutagraph_mutators::zoo;
use mutagraph_oracles::MutantRuns;
use mutagraph_oracles::triage::{Triage, TriageStats, Triaged, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The state is committed at most this often (after the batch that crosses it): each commit
/// costs fsyncs. A kill loses only uncommitted iterations, which the resumed run redoes
/// identically (the search is deterministic).
pub const COMMIT_EVERY: Duration = Duration::from_millis(1000);

/// One executed mutant in this many is run a second time on every backend (flakiness).
pub const FLAKY_EVERY: u64 = 64;

/// Seed reduction (MEMO §3.2, [`mutagraph_mutators::reduce`]); a model the reduction cannot
/// handle is kept as it is.
pub fn reduce_seed(model: &Model) -> Model {
    match mutagraph_mutators::reduce::reduce(model) {
        Ok((m, _)) => m,
        Err(_) => model.clone(),
    }
}

/// The effective configuration, saved as `campaign.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Seed sources as given (`zoo`, directories, files).
    pub seeds: Vec<String>,
    /// Backends, in run order.
    pub backends: Vec<String>,
    /// Master seed of every random stream.
    pub seed: u64,
    /// `mcmc` or `random`.
    pub search: String,
    /// The MH parameter `p`.
    pub mcmc_p: f64,
    /// Operators, in `operators::all()` order.
    pub operators: Vec<String>,
    /// Mutants in flight (batch size). May change on resume.
    pub jobs: usize,
    /// Total iterations of the campaign (`None`: unbounded). May change on resume.
    pub iterations: Option<u64>,
    /// Time limit of one session, seconds (`None`: unbounded). May change on resume.
    pub time_s: Option<f64>,
    /// Tolerance of the inconsistency oracle.
    pub tolerance: String,
    /// Per-run timeout, seconds.
    pub run_timeout_s: f64,
    /// Memory cap per worker, MiB.
    pub mem_limit_mib: u64,
    /// Size of the dynamic dims of generated inputs (`None`: admission finds one per seed).
    #[serde(default)]
    pub free_dim: Option<usize>,
    /// Input shapes and values the user gave (`--input-shape`, `--input-value`).
    #[serde(default, skip_serializing_if = "Fixed::is_empty")]
    pub fixed: Fixed,
}

/// What the command line asked for; `None` fields take the saved value on resume, or the
/// default on a fresh campaign.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// `--seeds`.
    pub seeds: Vec<String>,
    /// `--out`.
    pub out: PathBuf,
    /// `--time`.
    pub time: Option<Duration>,
    /// `--iterations`.
    pub iterations: Option<u64>,
    /// `-j`.
    pub jobs: Option<usize>,
    /// `--backends`.
    pub backends: Vec<String>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--search`.
    pub search: Option<String>,
    /// `--mcmc-p`.
    pub mcmc_p: Option<f64>,
    /// `--quiet`.
    pub quiet: bool,
    /// Minimize new findings in the background (`--no-minimize` turns it off).
    pub minimize: bool,
    /// How long the end of a session waits for pending minimizations.
    pub minimize_grace: Duration,
    /// `--free-dim`.
    pub free_dim: Option<usize>,
    /// `--input-shape` and `--input-value`.
    pub fixed: Fixed,
}

/// Parses a duration: `90s`, `10m`, `1h`, `1h30m`, `2m30s`, `1.5s`, `250ms`, or a plain number
/// of seconds.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let text = s.trim();
    let bad = || anyhow!("bad duration '{text}' (examples: 90s, 10m, 1h30m, 250ms)");
    if text.is_empty() {
        return Err(bad());
    }
    if let Ok(v) = text.parse::<f64>() {
        return if v >= 0.0 && v.is_finite() {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(bad())
        };
    }
    let mut total = 0.0f64;
    let mut rest = text;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let v: f64 = rest[..n].parse().map_err(|_| bad())?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let mul = match &rest[..u] {
            "ms" => 1e-3,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            _ => bail!("bad duration unit in '{text}' (use ms, s, m, h or d, as in 1h30m)"),
        };
        total += v * mul;
        rest = &rest[u..];
    }
    if !total.is_finite() {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(total))
}

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

/// A loaded seed.
pub struct Seed {
    /// Name (zoo name or path).
    pub name: String,
    /// File name under `seeds/`.
    pub file: String,
    /// The reduced model.
    pub model: Model,
}

/// Reads, checks, types and reduces one seed file. A panic of ours on a strange seed is an
/// error of that seed, never the end of the campaign.
fn load_one(path: &Path) -> Result<Model> {
    let m = Model::load(path).map_err(|e| anyhow!("seed {e}"))?;
    validate::validate(&m).map_err(|e| anyhow!("seed {}: {e}", path.display()))?;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut m = m;
        typed(&mut m);
        reduce_seed(&m)
    }))
    .map_err(|p| {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        anyhow!(
            "seed {}: mutagraph failed on it (a bug of ours, please report it): {msg}",
            path.display()
        )
    })
}

/// Whether a file in a seed directory is a model (`.onnx`, or `.onnxtxt` text).
fn is_model_file(f: &Path) -> bool {
    f.extension().is_some_and(|x| x == "onnx") || mutagraph_ir::text::is_text_path(f)
}

/// Runs shape inference on a model read from bytes: the operators choose their sites by the
/// inferred types of values.
fn typed(m: &mut Model) {
    mutagraph_ir::infer::infer_model(m, Default::default());
}

/// Loads the seeds: `zoo`, a directory (its `*.onnx`, sorted), or a file.
pub fn load_seeds(specs: &[String]) -> Result<Vec<Seed>> {
    let mut out: Vec<(String, Model)> = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    for s in specs {
        if s == "zoo" {
            out.extend(
                zoo::all()
                    .into_iter()
                    .map(|(n, m)| (n.to_string(), reduce_seed(&m))),
            );
            continue;
        }
        let p = Path::new(s);
        if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("reading seed directory {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| is_model_file(f))
                .collect();
            files.sort();
            if files.is_empty() {
                bail!(
                    "seed directory {} has no .onnx or .onnxtxt file",
                    p.display()
                );
            }
            // One broken file of a directory does not stop the campaign: it is named and left
            // out (a file named on its own is an error).
            for f in files {
                match load_one(&f) {
                    Ok(m) => out.push((f.display().to_string(), m)),
                    Err(e) => {
                        tracing::warn!("{e:#}; not used");
                        refused.push(format!("{e:#}"));
                    }
                }
            }
        } else if !p.exists() {
            bail!("seed {}: no such file or directory", p.display());
        } else {
            // What a seed file contains never stops the campaign: the seed is named and left
            // out, and the campaign goes on with the others.
            match load_one(p) {
                Ok(m) => out.push((s.clone(), m)),
                Err(e) => {
                    tracing::warn!("{e:#}; not used");
                    refused.push(format!("{e:#}"));
                }
            }
        }
    }
    if out.is_empty() {
        bail!(
            "no usable seed model; refused: {}",
            refused
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    Ok(out
        .into_iter()
        .map(|(name, m)| {
            let stem = Path::new(&name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "seed".into());
            let stem: String = stem
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let n = used.entry(stem.clone()).or_default();
            let file = if *n == 0 {
                format!("{stem}.onnx")
            } else {
                format!("{stem}-{n}.onnx")
            };
            *n += 1;
            Seed {
                name,
                file,
                model: m,
            }
        })
        .collect())
}

fn is_reference(b: &str) -> bool {
    b == "reference" || b == "reference-f64"
}

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(v)?;
    write_atomic(path, &bytes).with_context(|| format!("writing {}", path.display()))
}

fn mix(seed: u64, iteration: u64, stream: u64) -> u64 {
    let mut r = SplitMix64::new(
        seed ^ iteration.wrapping_mul(0xD1B5_4A32_D192_ED03)
            ^ stream.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7),
    );
    r.next_u64()
}

/// One mutant of a batch, ready to run.
struct Job {
    iteration: u64,
    op: usize,
    seed: usize,
    bytes: Vec<u8>,
    /// The time limit of each backend's run.
    timeout: Duration,
    /// `None` when the inputs could not be generated (not executed).
    inputs: Option<NamedValues>,
    /// The seed the inputs were generated from.
    input_seed: u64,
    records: Vec<Record>,
    diverse: bool,
}

/// How the mutants of one seed are run, from what admission saw of the seed.
struct SeedPlan {
    /// How their inputs are generated.
    inputs: GenOptions,
    /// The time limit of each backend's run.
    timeout: Duration,
    /// How much slower than the others each backend was on the seed.
    slowness: BTreeMap<String, f64>,
}

/// The campaign in memory.
struct Campaign {
    out: PathBuf,
    /// How each seed's (and its mutants') inputs are generated and run, as admission chose.
    seed_inputs: Vec<SeedPlan>,
    config: Config,
    seeds: Vec<Seed>,
    ops: Vec<Box<dyn Mutator>>,
    recipes: Recipes,
    limits: Limits,
    scheduler: Box<dyn Scheduler>,
    /// The triage stage: oracles, verdict policy, extra runs.
    stage: Triage,
    reference: Option<usize>,
    state: State,
    seed_coverage: Report,
    /// Current model and trace of each pool slot.
    models: Vec<(Model, Vec<Record>)>,
    /// Worker pools: `[backend][lane]`.
    pools: Vec<Vec<Pool>>,
    /// The pool of re-runs and the triage's runs (one worker per backend it needs).
    triage: Pool,
    /// The named tolerance of the inconsistency oracle and localization.
    tolerance: Tolerance,
    /// Signatures whose `meta.json` must be rewritten at the next commit.
    dirty: BTreeSet<String>,
    /// Signatures whose documents lag their `meta.json`, and since when
    /// ([`bundle::DOCS_EVERY`]).
    stale_docs: BTreeMap<String, Instant>,
    /// The background minimizer.
    minimizer: Option<Minimizer>,
    /// Seconds the end of a session waits for pending minimizations.
    minimize_grace: Duration,
    /// Writes the corpus entries off the main thread.
    corpus: writer::Writer,
    /// Campaign time of this session's last new unique finding (the status shows it).
    last_find: Option<f64>,
    /// Lines of the status screen drawn last (redrawn in place on a terminal).
    status_lines: usize,
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

fn check_same<T: PartialEq + std::fmt::Debug>(
    what: &str,
    given: Option<T>,
    saved: &T,
) -> Result<()> {
    match given {
        Some(g) if &g != saved => bail!(
            "the campaign in this directory was started with {what} = {saved:?}, not {g:?} \
             (only --time, --iterations, -j and --quiet may change on resume; use another --out)"
        ),
        _ => Ok(()),
    }
}

/// Runs (or resumes) a campaign.
pub fn run(req: Request, pool_opts: PoolOptions) -> Result<Summary> {
    let out = req.out.clone();
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let _lock = lock::OutLock::acquire(&out)?;
    let cfg_path = out.join("campaign.toml");
    let ops = operators::all();
    let op_names: Vec<String> = ops.iter().map(|o| o.name().to_string()).collect();
    let saved: Option<Config> = if cfg_path.exists() {
        let text = std::fs::read_to_string(&cfg_path)
            .with_context(|| format!("reading {}", cfg_path.display()))?;
        Some(toml::from_str(&text).with_context(|| format!("parsing {}", cfg_path.display()))?)
    } else {
        None
    };
    let timeout_s = pool_opts.timeout.as_secs_f64();
    let mem_mib = pool_opts.mem_limit >> 20;
    let mut config = match saved {
        Some(c) => {
            check_same(
                "--seeds",
                (!req.seeds.is_empty()).then(|| req.seeds.clone()),
                &c.seeds,
            )?;
            check_same(
                "--backends",
                (!req.backends.is_empty()).then(|| req.backends.clone()),
                &c.backends,
            )?;
            check_same("--seed", req.seed, &c.seed)?;
            check_same("--search", req.search.clone(), &c.search)?;
            check_same("--mcmc-p", req.mcmc_p, &c.mcmc_p)?;
            check_same("--free-dim", req.free_dim.map(Some), &c.free_dim)?;
            check_same(
                "--input-shape/--input-value",
                (!req.fixed.is_empty()).then(|| req.fixed.clone()),
                &c.fixed,
            )?;
            if c.operators != op_names {
                bail!(
                    "the campaign in {} used operators {:?}; this build has {:?}",
                    out.display(),
                    c.operators,
                    op_names
                );
            }
            c
        }
        None => {
            if req.seeds.is_empty() {
                bail!("--seeds is required to start a campaign");
            }
            let backends = if req.backends.is_empty() {
                mutagraph_backends::catalog::default_set()
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            } else {
                req.backends.clone()
            };
            Config {
                seeds: req.seeds.clone(),
                backends,
                seed: req.seed.unwrap_or(0),
                search: req.search.clone().unwrap_or_else(|| "mcmc".into()),
                mcmc_p: f64::NAN, // set once the seed count is known
                operators: op_names.clone(),
                jobs: 1,
                iterations: None,
                time_s: None,
                tolerance: "approximate".into(),
                run_timeout_s: timeout_s,
                mem_limit_mib: mem_mib,
                free_dim: req.free_dim.map(|n| n.max(1)),
                fixed: req.fixed.clone(),
            }
        }
    };
    if let Some(j) = req.jobs {
        config.jobs = j.max(1);
    }
    // Worker limits change outcomes, never the search: the current command line's apply.
    config.run_timeout_s = timeout_s;
    config.mem_limit_mib = mem_mib;
    if req.iterations.is_some() {
        config.iterations = req.iterations;
    }
    if let Some(t) = req.time {
        config.time_s = Some(t.as_secs_f64());
    }
    if ops.is_empty() {
        bail!("no mutation operators in this build");
    }
    for b in &config.backends {
        if !mutagraph_backends::catalog::is_compiled(b)
            && let Err(e) = mutagraph_backends::catalog::create(b, &Default::default())
        {
            bail!("{e}");
        }
    }
    if mcmc::by_name(&config.search, 0.1).is_none() {
        bail!("--search must be mcmc or random, not '{}'", config.search);
    }
    let seeds = load_seeds(&config.seeds)?;
    if req.mcmc_p.is_some_and(|p| !(p > 0.0 && p < 1.0)) {
        bail!("--mcmc-p must be in (0, 1)");
    }
    let tolerance = mutagraph_backends::compare::Tolerance::by_name(&config.tolerance)
        .ok_or_else(|| anyhow!("unknown tolerance '{}'", config.tolerance))?;

    // Worker pools: one per backend and lane; the first lane answers the capabilities.
    let mut pools: Vec<Vec<Pool>> = Vec::new();
    for _ in &config.backends {
        pools.push(
            (0..config.jobs)
                .map(|_| Pool::new(pool_opts.clone()))
                .collect(),
        );
    }
    let reference = config.backends.iter().position(|b| is_reference(b));
    let mut stage = Triage::new(&config.backends, tolerance);
    // A crash met again and again is filed as a hit of its bug without the triage's extra runs.
    stage.learn = true;
    let mut triage_pool = Pool::new(pool_opts.clone());
    let sizing = match config.free_dim {
        Some(n) => admission::Sizing::Uniform(n),
        None => admission::Sizing::Solved,
    };
    // Each shape or value given must fit an input of some seed.
    let fits: Vec<Fixed> = seeds
        .iter()
        .map(|s| admission::fixed_for(&s.model, &config.fixed))
        .collect();
    for name in config.fixed.shapes.keys() {
        if !fits.iter().any(|f| f.shapes.contains_key(name)) {
            let why = seeds
                .iter()
                .find_map(|s| {
                    let one = Fixed {
                        shapes: [(name.clone(), config.fixed.shapes[name].clone())].into(),
                        ..Fixed::default()
                    };
                    mutagraph_ir::solve::solve(&s.model, &one)
                        .err()
                        .filter(|e| !matches!(e, mutagraph_ir::solve::SolveError::NoInput { .. }))
                        .map(|e| format!("{}: {e}", s.name))
                })
                .unwrap_or_else(|| format!("no seed has an input named '{name}'"));
            bail!("--input-shape {name}: {why}");
        }
    }
    for name in config.fixed.values.keys() {
        if !fits.iter().any(|f| f.values.contains_key(name)) {
            bail!("--input-value {name}: no seed has an input named '{name}'");
        }
    }
    // Admission: each seed once, unmutated, on every backend (decided once per campaign).
    let admission_path = out.join(admission::FILE);
    let resumed_admission: Option<admission::Decisions> = if admission_path.exists() {
        Some(
            serde_json::from_slice(
                &std::fs::read(&admission_path)
                    .with_context(|| format!("reading {}", admission_path.display()))?,
            )
            .with_context(|| format!("parsing {}", admission_path.display()))?,
        )
    } else {
        None
    };
    let mut seed_runs: Vec<(usize, admission::SeedRun)> = Vec::new();
    // Seeds the reference cannot run, with the reason (named in the error when none is left).
    let refused: BTreeMap<String, String>;
    let (seeds, seed_inputs): (Vec<Seed>, Vec<admission::Admitted>) = match resumed_admission {
        Some(d) => {
            refused = d.refused.clone();
            seeds
                .into_iter()
                .filter(|s| !d.refused.contains_key(&s.name))
                .map(|s| {
                    let g = d.admitted.get(&s.name).cloned().unwrap_or_default();
                    (s, g)
                })
                .unzip()
        }
        None => {
            let mut decisions = admission::Decisions::default();
            let mut kept = Vec::new();
            for (i, s) in seeds.into_iter().enumerate() {
                if crate::interrupt::requested() {
                    bail!(
                        "stopped during seed admission; nothing was written (run the command again to start)"
                    );
                }
                let input_seed = mix(config.seed, i as u64, 7);
                match admission::admit(
                    &s,
                    &config.backends,
                    reference,
                    &mut pools,
                    &mut stage,
                    &mut triage_pool,
                    input_seed,
                    sizing,
                    &config.fixed,
                ) {
                    admission::Admission::Refused(why) => {
                        tracing::warn!("{}", admission::advice(&s.name, &why));
                        decisions.refused.insert(s.name.clone(), why);
                    }
                    admission::Admission::Admitted(run) => {
                        let g = run.chosen.clone();
                        decisions
                            .admitted
                            .insert(s.name.clone(), run.chosen.clone());
                        seed_runs.push((kept.len(), *run));
                        kept.push((s, g));
                    }
                }
            }
            write_json(&admission_path, &decisions)?;
            refused = decisions.refused.clone();
            kept.into_iter().unzip()
        }
    };
    // Mutants are made from each seed with the shapes it was admitted at declared: every value
    // then has a static shape, so a mutant valid for the IR is valid at the sizes it runs at
    // (with the symbols left in, a conv window could outgrow its input). The seed itself ran
    // as given.
    let seeds: Vec<Seed> = seeds
        .into_iter()
        .zip(&seed_inputs)
        .map(|(mut s, a)| {
            s.model = mutagraph_ir::solve::concretize(&s.model, &a.shapes);
            s
        })
        .collect();
    if seeds.is_empty() {
        let why: Vec<String> = refused
            .iter()
            .take(5)
            .map(|(name, why)| format!("seed {name}: {why}"))
            .collect();
        bail!(
            "no seed can be mutated: the reference runs none of them ({}{}; see {})",
            why.join("; "),
            if refused.len() > 5 { "; ..." } else { "" },
            admission_path.display()
        );
    }
    let n_seeds = seeds.len() * ops.len();
    if config.mcmc_p.is_nan() {
        config.mcmc_p = req.mcmc_p.unwrap_or_else(|| mcmc::default_p(n_seeds));
    }
    let scheduler = mcmc::by_name(&config.search, config.mcmc_p).expect("checked");
    // The generator's ops: those that exist at the seeds' opset (the lowest one).
    let opset = seeds
        .iter()
        .map(|s| s.model.default_opset())
        .min()
        .unwrap_or(17);
    let mut recipes = Recipes::for_opset(opset);
    let mut supported: Vec<mutagraph_backends::backend::Capabilities> = Vec::new();
    let has_other = config.backends.iter().any(|b| !is_reference(b));
    for (b, lanes) in config.backends.iter().zip(&mut pools) {
        if has_other && is_reference(b) {
            continue;
        }
        let caps = lanes[0].capabilities(b).map_err(|e| {
            anyhow!("backend '{b}': {e}{}", if b.starts_with("ort") {
                " (ONNX Runtime is needed: `pip install onnxruntime==1.31.1`, or pass --ort-dylib)"
            } else {
                ""
            })
        })?;
        supported.push(caps);
    }
    recipes.retain(|op| supported.iter().any(|c| c.supports("", op)));
    // The universe: the recipes' op types, the pairs they can connect, and the parameter
    // buckets of the attribute versions that exist at the seeds' opset.
    let universe = Arc::new(
        recipes
            .universe()
            .map_err(|e| anyhow!("coverage universe: {e}"))?
            .params_at_opset(opset),
    );
    let mut seed_cov = Coverage::new(universe.clone());
    for s in &seeds {
        seed_cov.add_model(&s.model);
    }
    let seed_coverage = seed_cov.report();

    for d in ["seeds", "corpus", "findings"] {
        std::fs::create_dir_all(out.join(d))
            .with_context(|| format!("creating {}", out.join(d).display()))?;
    }
    let state_path = out.join("state.json");
    let fresh = !state_path.exists();
    let (state, models) = if fresh {
        let pool: Vec<Slot> = (0..seeds.len())
            .map(|i| Slot {
                seed: i,
                corpus: None,
            })
            .collect();
        let state = State {
            iteration: 0,
            rng_seed: config.seed,
            pool,
            seeds: SeedStats::new(seeds.len(), ops.len()),
            coverage: seed_cov,
            counters: Counters {
                per_operator: op_names
                    .iter()
                    .map(|n| OpCounters {
                        name: n.clone(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            },
            timings: Timings::default(),
            elapsed_s: 0.0,
            signatures: BTreeMap::new(),
            roots: BTreeMap::new(),
            triage: TriageStats::default(),
            ours_kept: BTreeSet::new(),
            sessions: Vec::new(),
        };
        let models = seeds
            .iter()
            .map(|s| (s.model.clone(), Vec::new()))
            .collect();
        (state, models)
    } else {
        let text = std::fs::read(&state_path)
            .with_context(|| format!("reading {}", state_path.display()))?;
        let mut state: State = serde_json::from_slice(&text)
            .with_context(|| format!("parsing {}", state_path.display()))?;
        // The saved coverage names its items; re-home them in this campaign's universe.
        let mut cov = Coverage::new(universe.clone());
        cov.merge(&state.coverage);
        state.coverage = cov;
        if state.pool.len() != seeds.len() || state.seeds.ops != ops.len() {
            bail!(
                "{} does not match the seeds and operators",
                state_path.display()
            );
        }
        let mut models = Vec::new();
        for slot in &state.pool {
            match &slot.corpus {
                None => models.push((seeds[slot.seed].model.clone(), Vec::new())),
                Some(id) => {
                    let p = out.join("corpus").join(format!("{id}.onnx"));
                    let mut m = Model::load(&p)
                        .with_context(|| format!("resuming from {}", p.display()))?;
                    typed(&mut m);
                    let tp = out.join("corpus").join(format!("{id}.trace.json"));
                    let t: Trace = serde_json::from_slice(
                        &std::fs::read(&tp).with_context(|| format!("reading {}", tp.display()))?,
                    )
                    .with_context(|| format!("parsing {}", tp.display()))?;
                    models.push((m, t.records));
                }
            }
        }
        (state, models)
    };
    let cfg_text = toml::to_string(&config)?;
    write_atomic(&cfg_path, cfg_text.as_bytes())
        .with_context(|| format!("writing {}", cfg_path.display()))?;
    for s in &seeds {
        let p = out.join("seeds").join(&s.file);
        let bytes = s.model.to_bytes();
        if std::fs::read(&p).ok().as_deref() != Some(bytes.as_slice()) {
            write_atomic(&p, &bytes).with_context(|| format!("writing {}", p.display()))?;
        }
    }
    // The triage's extra runs and the minimizer's wait as long as the slowest seed's mutants may take.
    let floor = pool_opts.timeout;
    let seed_inputs: Vec<SeedPlan> = seed_inputs
        .iter()
        .map(|a| SeedPlan {
            inputs: a.gen_options(),
            timeout: a.run_timeout(floor),
            slowness: a.slowness.clone(),
        })
        .collect();
    triage_pool.set_timeout(seed_inputs.iter().map(|s| s.timeout).max().unwrap_or(floor));
    let mut slowest = pool_opts.clone();
    slowest.timeout = triage_pool.options().timeout;
    let minimizer = if req.minimize {
        Some(Minimizer::start(
            slowest,
            config.backends.clone(),
            tolerance,
        ))
    } else {
        None
    };
    let mut c = Campaign {
        out,
        seed_inputs,
        stage,
        triage: triage_pool,
        tolerance,
        dirty: BTreeSet::new(),
        stale_docs: BTreeMap::new(),
        minimizer,
        minimize_grace: req.minimize_grace,
        config,
        seeds,
        ops,
        recipes,
        limits: Limits::default(),
        scheduler,
        reference,
        state,
        seed_coverage,
        models,
        pools,
        corpus: writer::Writer::new(),
        last_find: None,
        status_lines: 0,
    };
    if !fresh {
        c.requeue_unminimized();
    }
    // The seeds' own bugs are filed before any mutant runs: mutants that show them again
    // count as their hits.
    for (seed, run) in seed_runs {
        c.file_seed_findings(seed, run)?;
    }
    c.state.triage = c.stage.stats.clone();
    c.main_loop(req.quiet, fresh)
}

/// Time since the session started, for the status.
struct Clock {
    session: Instant,
    limit: Option<Duration>,
}

impl Campaign {
    fn main_loop(&mut self, quiet: bool, fresh: bool) -> Result<Summary> {
        let session = Instant::now();
        let elapsed0 = self.state.elapsed_s;
        self.state.sessions.push(SessionStart {
            iteration: self.state.iteration,
            elapsed_s: elapsed0,
        });
        let ts_path = self.out.join("timeseries.csv");
        let mut ts = open_timeseries(&ts_path, fresh)?;
        let tty = std::io::stderr().is_terminal();
        let status_every = if tty {
            Duration::from_millis(500)
        } else {
            Duration::from_secs(10)
        };
        let mut last_status = Instant::now();
        let clock = Clock {
            session,
            limit: self.config.time_s.map(Duration::from_secs_f64),
        };
        let mut last_row = Instant::now();
        let mut last_commit = Instant::now();
        let limit = self.config.time_s.map(Duration::from_secs_f64);
        if fresh {
            self.commit_state(elapsed0, true)?;
        }
        // Batches are pipelined: while the backends run batch k, the main thread judges batch
        // k - 1 (the oracles and the triage, whose extra runs use their own workers) and
        // generates batch k + 1 (the search does not depend on the runs, so the order of
        // results is the same as without overlap). When a commit is due nothing is generated
        // ahead and batch k is judged at once, so the committed state never covers iterations
        // whose results are not on disk.
        let mut ahead: Option<Vec<Job>> = None;
        let mut pending: Option<(Vec<Job>, BatchRuns)> = None;
        loop {
            let total = self.config.iterations;
            let stop = |st: &State| {
                total.is_some_and(|n| st.iteration >= n)
                    || limit.is_some_and(|l| session.elapsed() >= l)
                    || crate::interrupt::requested()
            };
            let jobs = match ahead.take() {
                Some(j) => j,
                None => {
                    if stop(&self.state) {
                        break;
                    }
                    let n = self.batch_size();
                    self.generate(n)?
                }
            };
            let overlap = !stop(&self.state) && last_commit.elapsed() < COMMIT_EVERY;
            let next_n = self.batch_size();
            let mut pools = std::mem::take(&mut self.pools);
            let backends = self.config.backends.clone();
            let previous = pending.take();
            let (results, busy, next, judged) = std::thread::scope(|s| {
                let h = s.spawn(|| {
                    let t = Instant::now();
                    let r = execute_jobs(&mut pools, &backends, &jobs);
                    (r, t.elapsed().as_secs_f64())
                });
                let judged = previous.map(|(j, r)| self.judge_and_write(&j, r));
                let next = if overlap && next_n > 0 {
                    Some(self.generate(next_n))
                } else {
                    None
                };
                let w = Instant::now();
                let (r, busy) = h
                    .join()
                    .unwrap_or_else(|_| (Err(anyhow!("executor thread panicked")), 0.0));
                (r, busy, (next, w.elapsed().as_secs_f64()), judged)
            });
            self.pools = pools;
            judged.transpose()?;
            self.state.timings.backends_wait += next.1;
            self.state.timings.backends_busy += busy;
            ahead = next.0.transpose()?;
            let results = results?;
            if ahead.is_some() {
                pending = Some((jobs, results));
            } else {
                self.judge_and_write(&jobs, results)?;
            }
            let elapsed = elapsed0 + session.elapsed().as_secs_f64();
            self.state.elapsed_s = elapsed;
            if ahead.is_none() && last_commit.elapsed() >= COMMIT_EVERY {
                let row = last_row.elapsed() >= Duration::from_secs(1);
                self.commit_state(elapsed, row)?;
                last_commit = Instant::now();
                if row {
                    last_row = Instant::now();
                    self.timeseries_row(&mut ts, elapsed)?;
                }
            }
            if !quiet && last_status.elapsed() >= status_every {
                last_status = Instant::now();
                self.status(tty, elapsed, &clock);
            }
        }
        let mut pending_min = 0;
        if !quiet && self.minimizer.as_ref().is_some_and(|m| m.pending() > 0) {
            self.status(tty, elapsed0 + session.elapsed().as_secs_f64(), &clock);
        }
        if let Some(m) = &mut self.minimizer {
            m.wait_idle(self.minimize_grace);
            pending_min = m.pending();
            m.stop();
        }
        let elapsed = elapsed0 + session.elapsed().as_secs_f64();
        self.state.elapsed_s = elapsed;
        self.commit_state(elapsed, true)?;
        self.renew_stale_docs(true)?;
        self.timeseries_row(&mut ts, elapsed)?;
        self.minimizer = None;
        self.triage.shutdown();
        if !quiet {
            self.status(tty, elapsed, &clock);
        }
        for lanes in &mut self.pools {
            for p in lanes {
                p.shutdown();
            }
        }
        Ok(Summary {
            out: self.out.clone(),
            iterations: self.state.iteration,
            executions: self.state.counters.executions,
            findings: self.state.counters.findings,
            unique_findings: self.state.counters.unique_findings,
            minimized: self.state.counters.minimized,
            minimizations_pending: pending_min,
            elapsed_s: elapsed,
            session_s: session.elapsed().as_secs_f64(),
            stopped_by: crate::interrupt::which().map(String::from),
        })
    }

    /// Iterations of the next batch (`-j`, or what is left of `--iterations`).
    fn batch_size(&self) -> u64 {
        let remaining = match self.config.iterations {
            Some(n) => n.saturating_sub(self.state.iteration),
            None => u64::MAX,
        };
        (self.config.jobs as u64).min(remaining)
    }

    /// Selects, mutates, exports and prepares inputs for `n` iterations; updates the search
    /// (scheduler, pool, coverage) as it goes.
    fn generate(&mut self, n: u64) -> Result<Vec<Job>> {
        let mut jobs = Vec::new();
        for k in 0..n {
            let it = self.state.iteration + k;
            let seed_master = self.state.rng_seed;
            let t = Instant::now();
            let mut sel_rng = SplitMix64::new(mix(seed_master, it, 1));
            let seed = self.scheduler.select(&mut self.state.seeds, &mut sel_rng);
            let (slot, op) = self.state.seeds.split(seed);
            let tm = &mut self.state.timings;
            tm.select += t.elapsed().as_secs_f64();
            let counters = &mut self.state.counters;
            counters.iterations += 1;
            counters.per_operator[op].selected += 1;

            // A slot whose model has grown far toward the node limit starts again from its
            // seed: operators that add ops would mostly be skipped on it.
            let seed_nodes = self.seeds[self.state.pool[slot].seed]
                .model
                .graph
                .node_count();
            let limits = self.limits.for_seed(seed_nodes);
            if self
                .limits
                .grown_out(seed_nodes, self.models[slot].0.graph.node_count())
            {
                let seed_model = self.seeds[self.state.pool[slot].seed].model.clone();
                self.models[slot] = (seed_model, Vec::new());
                self.state.pool[slot].corpus = None;
                self.state.counters.pool_resets += 1;
            }
            let tm = &mut self.state.timings;
            let counters = &mut self.state.counters;
            let t = Instant::now();
            let mut model = self.models[slot].0.clone();
            let mut mrng = SplitMix64::new(mix(seed_master, it, 2));
            let outcome = {
                let mut ctx = Ctx {
                    rng: &mut mrng,
                    coverage: &self.state.coverage,
                    recipes: &self.recipes,
                    limits: &limits,
                };
                // An operator that panics (a bug of ours) costs one illegal mutant, not the
                // campaign; the copy it worked on is dropped.
                let mutator = &self.ops[op];
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    mutator.mutate(&mut model, &mut ctx)
                }))
                .unwrap_or_else(|_| Outcome::Rejected(format!("{} panicked", mutator.name())))
            };
            tm.mutate += t.elapsed().as_secs_f64();
            let record = match outcome {
                Outcome::Skipped(_) => {
                    counters.skipped += 1;
                    counters.per_operator[op].skipped += 1;
                    continue;
                }
                Outcome::Rejected(_) => {
                    counters.rejected += 1;
                    counters.per_operator[op].illegal += 1;
                    continue;
                }
                Outcome::Mutated(r) => r,
            };
            counters.mutants += 1;
            counters.per_operator[op].mutated += 1;
            let t = Instant::now();
            let bytes = model.to_bytes();
            tm.export += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let input_seed = mix(seed_master, it, 3);
            let plan = &self.seed_inputs[self.state.pool[slot].seed];
            let (gen_opts, timeout) = (&plan.inputs, &plan.timeout);
            let ins = inputs::generate(&model, input_seed, gen_opts);
            tm.inputs += t.elapsed().as_secs_f64();
            let t = Instant::now();
            // Every generated mutant joins M' (Alg. 2 line 12); it is diverse when it grew a
            // MEMO family (types, pairs, parameters).
            let delta = self.state.coverage.add_model(&model);
            let diverse = delta.is_diverse();
            let mut records = self.models[slot].1.clone();
            records.push(record);
            if diverse {
                self.state.seeds.record_diverse(seed);
                counters.diverse += 1;
                counters.per_operator[op].diverse += 1;
                // UpdateSeeds: the mutant replaces its parent (as it will be reloaded from the
                // corpus on resume, so both paths mutate the same model).
                let reloaded = match Model::from_bytes(&bytes) {
                    Ok(mut m) => {
                        typed(&mut m);
                        m
                    }
                    Err(_) => model.clone(),
                };
                self.models[slot] = (reloaded, records.clone());
                self.state.pool[slot].corpus = Some(corpus_id(it));
            }
            tm.coverage += t.elapsed().as_secs_f64();
            let inputs = match ins {
                Ok(v) => Some(v),
                Err(_) => {
                    counters.inputs_failed += 1;
                    counters.per_operator[op].illegal += 1;
                    None
                }
            };
            if inputs.is_some() || diverse {
                jobs.push(Job {
                    iteration: it,
                    op,
                    seed: self.state.pool[slot].seed,
                    bytes,
                    timeout: *timeout,
                    inputs,
                    input_seed,
                    records,
                    diverse,
                });
            }
        }
        self.state.iteration += n;
        // The corpus entries are written now (while the backends run the previous batch);
        // the state that names them is committed only after this batch is judged.
        let t = Instant::now();
        for job in jobs.iter().filter(|j| j.diverse) {
            self.write_corpus(job)?;
        }
        self.state.timings.io += t.elapsed().as_secs_f64();
        Ok(jobs)
    }

    fn judge_and_write(
        &mut self,
        jobs: &[Job],
        results: Vec<Vec<Option<RunReport>>>,
    ) -> Result<()> {
        for (job, runs) in jobs.iter().zip(results) {
            let executed = runs.iter().all(|r| r.is_some());
            if !executed {
                continue;
            }
            let t = Instant::now();
            let runs: Vec<RunReport> = runs.into_iter().flatten().collect();
            for r in &runs {
                let bt = self
                    .state
                    .timings
                    .per_backend
                    .entry(r.backend.clone())
                    .or_default();
                bt.runs += 1;
                bt.wall_s += r.wall_ms / 1e3;
                bt.prepare_s += r.prepare_ms / 1e3;
                bt.run_s += r.run_ms / 1e3;
            }
            let counters = &mut self.state.counters;
            counters.executions += 1;
            counters.backend_runs += runs.len() as u64;
            let nowhere = runs.iter().all(|r| {
                matches!(
                    &r.outcome,
                    RunOutcome::Error { stage, .. } | RunOutcome::Unsupported { stage, .. }
                        if *stage != Stage::Run
                )
            });
            if nowhere {
                counters.load_failed_everywhere += 1;
                counters.per_operator[job.op].illegal += 1;
            }
            let mut mr = MutantRuns {
                runs,
                reference: self.reference,
                reruns: Vec::new(),
                slow_baseline: self.seed_inputs[job.seed].slowness.clone(),
            };
            // Second runs: slowness candidates (confirmed by steady-state runs), and one
            // executed mutant in FLAKY_EVERY on every backend (flakiness).
            let inputs = job.inputs.as_ref().expect("executed");
            let slow_runs = mutagraph_oracles::triage::reproduce::confirm_slowness(
                &mut self.triage,
                &job.bytes,
                inputs,
                &mut mr,
            );
            self.state.counters.reruns += slow_runs;
            let sample = mix(self.state.rng_seed, job.iteration, 4).is_multiple_of(FLAKY_EVERY);
            if sample && slow_runs == 0 {
                let again: Vec<String> = mr.others().map(|r| r.backend.clone()).collect();
                for b in again {
                    if let Ok(r) = self.triage.run(&b, &job.bytes, inputs) {
                        mr.reruns.push(r);
                        self.state.counters.reruns += 1;
                    }
                }
            }
            self.state.timings.oracles += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let judged = self.stage.judge(&mut self.triage, &job.bytes, inputs, &mr);
            for tr in judged {
                self.record(job, tr, &mr)?;
            }
            self.state.timings.triage += t.elapsed().as_secs_f64();
        }
        self.state.triage = self.stage.stats.clone();
        Ok(())
    }

    fn write_corpus(&self, job: &Job) -> Result<()> {
        let id = corpus_id(job.iteration);
        let dir = self.out.join("corpus");
        let seed = &self.seeds[job.seed];
        let trace = Trace {
            seed: seed.name.clone(),
            seed_file: format!("seeds/{}", seed.file),
            iteration: job.iteration,
            records: job.records.clone(),
        };
        // The trace first (the writer keeps the order): a kill -9 between the two writes leaves
        // at worst a trace without its model, never a corpus model without the trace that
        // rebuilds it.
        let files = [
            writer::File {
                path: dir.join(format!("{id}.trace.json")),
                bytes: serde_json::to_vec_pretty(&trace)?,
            },
            writer::File {
                path: dir.join(format!("{id}.onnx")),
                bytes: job.bytes.clone(),
            },
        ];
        for f in files {
            self.corpus.write(f).map_err(|e| anyhow!(e))?;
        }
        Ok(())
    }

    /// Counts a triaged finding under its verdict; a reported one is filed under its
    /// signature: a new signature gets a bug bundle (and goes to the minimizer), a known one a
    /// hit.
    fn record(&mut self, job: &Job, t: Triaged, runs: &MutantRuns) -> Result<()> {
        let inputs = job.inputs.as_ref().expect("executed");
        let c = &mut self.state.counters;
        match &t.verdict {
            Verdict::Report => {}
            Verdict::Unstable(_) => {
                c.unstable += 1;
                return Ok(());
            }
            Verdict::Undefined(_) => {
                c.undefined += 1;
                return Ok(());
            }
            Verdict::Unwitnessed(_) => {
                c.unwitnessed += 1;
                return Ok(());
            }
            Verdict::Unsupported(_) => {
                c.unsupported += 1;
                return Ok(());
            }
            Verdict::Unlocalized(_) => {
                c.unlocalized += 1;
                return Ok(());
            }
            Verdict::Ours(why) => {
                c.ours += 1;
                if why.starts_with("the reference") || why.starts_with("the other backends") {
                    c.reference_failures += 1;
                }
                return self.keep_ours(job, &t);
            }
        }
        let Triaged {
            finding: f,
            localization,
            intermediates,
            native,
            ..
        } = t;
        let c = &mut self.state.counters;
        c.findings += 1;
        *c.findings_by_kind
            .entry(f.kind.name().to_string())
            .or_default() += 1;
        let sig = f.signature();
        let seen = Seen {
            iteration: job.iteration,
            elapsed_s: self.state.elapsed_s,
        };
        // A signature merged into another bundle counts there.
        let filed = self
            .state
            .signatures
            .get(&sig)
            .map(|e| e.alias_of.clone().unwrap_or_else(|| sig.clone()));
        if let Some(filed) = filed
            && let Some(e) = self.state.signatures.get_mut(&filed)
        {
            e.hits += 1;
            e.last_seen = seen;
            e.note(&f);
            self.dirty.insert(filed);
            return Ok(());
        }
        let id = f.signature_id();
        let entry = SigEntry::first(id.clone(), &f, seen);
        let dir = self.out.join("findings").join(&id);
        let seed = &self.seeds[job.seed];
        let found = bundle::Found {
            finding: &f,
            signature: &sig,
            entry: &entry,
            localization: localization.as_ref(),
            model: &job.bytes,
            inputs,
            input_seed: job.input_seed,
            runs,
            native: native.as_ref(),
            seed: &seed.name,
            iteration: job.iteration,
            trace: &job.records,
            config: serde_json::to_value(&self.config)?,
            tolerance: self.tolerance,
        };
        if let Err(e) = bundle::write_new(&dir, &found) {
            // A value the bundle's formats cannot hold is a failure of ours on this mutant,
            // never the end of the campaign; a failing disk still stops it.
            let content = e
                .chain()
                .filter_map(|c| c.downcast_ref::<mutagraph_oracles::bundle::BundleError>())
                .any(|b| !matches!(b, mutagraph_oracles::bundle::BundleError::Io { .. }));
            if !content {
                return Err(e);
            }
            tracing::error!("a finding's bundle cannot be written (a bug of ours): {e:#}");
            bundle::discard_new(&dir);
            let c = &mut self.state.counters;
            c.findings -= 1;
            if let Some(n) = c.findings_by_kind.get_mut(f.kind.name()) {
                *n -= 1;
            }
            c.ours += 1;
            return Ok(());
        }
        let c = &mut self.state.counters;
        c.unique_findings += 1;
        self.last_find = Some(self.state.elapsed_s);
        self.state.signatures.insert(sig.clone(), entry);
        if let Some(m) = &self.minimizer
            && crate::findings::minimizable(f.kind)
        {
            m.submit(MinimizeJob {
                signature: sig,
                dir,
                finding: f,
                model: job.bytes.clone(),
                inputs: inputs.clone(),
                intermediates,
                input_seed: job.input_seed,
                trace: Some((self.seeds[job.seed].model.to_bytes(), job.records.clone())),
            });
        }
        Ok(())
    }

    /// Counts the unmutated seed `seed`'s run (not an execution: those are mutants') and
    /// files what the triage
    /// reported on it (iteration 0, no mutation records): seed findings.
    fn file_seed_findings(&mut self, seed: usize, run: admission::SeedRun) -> Result<()> {
        self.state.counters.seed_runs += 1;
        let job = Job {
            iteration: 0,
            op: 0,
            seed,
            bytes: run.bytes,
            timeout: self.seed_inputs[seed].timeout,
            inputs: Some(run.inputs),
            input_seed: run.input_seed,
            records: Vec::new(),
            diverse: false,
        };
        for t in run.judged {
            let known = self.state.signatures.contains_key(&t.finding.signature());
            if t.verdict == Verdict::Report && !known {
                self.state.counters.seed_findings += 1;
                eprintln!(
                    "seed {}: {} on the unmutated seed: {}",
                    self.seeds[seed].name,
                    t.finding.backends.join("+"),
                    t.finding.message.lines().next().unwrap_or_default()
                );
            }
            self.record(&job, t, &run.runs)?;
        }
        Ok(())
    }

    /// Keeps the first example of each of mutagraph's own failures (by reason and message)
    /// under `ours/<id>/`: the model, its inputs and `why.txt`, for fixing the reference, the
    /// interpreter or the generator. Never a finding.
    fn keep_ours(&mut self, job: &Job, t: &Triaged) -> Result<()> {
        let Verdict::Ours(why) = &t.verdict else {
            return Ok(());
        };
        let key = format!(
            "{}|{}|{}",
            t.finding.backends.join("+"),
            why.split(':').next().unwrap_or_default(),
            mutagraph_oracles::core_message(&t.finding.message)
        );
        if self.state.ours_kept.len() >= OURS_KEPT || self.state.ours_kept.contains(&key) {
            return Ok(());
        }
        let id = format!(
            "{}-{:08x}",
            t.finding.kind,
            mutagraph_oracles::finding::fnv1a(key.as_bytes()) as u32
        );
        let dir = self.out.join("ours").join(&id);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        write_atomic(&dir.join("model.onnx"), &job.bytes)
            .with_context(|| format!("writing {}", dir.display()))?;
        if let Some(inputs) = &job.inputs {
            mutagraph_oracles::bundle::write_npz(
                &dir.join("inputs.npz"),
                &inputs
                    .iter()
                    .filter_map(|(n, v)| Some((n.clone(), v.tensor()?.clone())))
                    .collect::<Vec<_>>(),
            )?;
        }
        let text = format!(
            "{why}\n\nfinding: {} on {}\n{}\n",
            t.finding.kind,
            t.finding.backends.join(", "),
            t.finding.message
        );
        write_atomic(&dir.join("why.txt"), text.as_bytes())
            .with_context(|| format!("writing {}", dir.display()))?;
        self.state.ours_kept.insert(key);
        Ok(())
    }

    /// On resume: bundles whose minimization a stop interrupted go back to the minimizer.
    fn requeue_unminimized(&self) {
        let Some(m) = &self.minimizer else { return };
        for (sig, e) in &self.state.signatures {
            if !crate::findings::minimizable(e.kind) || e.alias_of.is_some() {
                continue;
            }
            let dir = self.out.join("findings").join(&e.id);
            let Ok(meta) = bundle::read_meta(&dir) else {
                continue;
            };
            if meta.minimized.is_some() {
                continue;
            }
            let Ok(model) = Model::load(dir.join("original.onnx")) else {
                continue;
            };
            let Ok(inputs) = inputs::read(&model, &dir.join("inputs")) else {
                continue;
            };
            let seed = self.seeds.iter().find(|s| s.name == meta.seed);
            m.submit(MinimizeJob {
                signature: sig.clone(),
                dir,
                finding: meta.finding.clone(),
                model: model.to_bytes(),
                inputs,
                intermediates: None,
                input_seed: meta.input_seed,
                trace: seed.map(|s| (s.model.to_bytes(), meta.trace.clone())),
            });
        }
    }

    /// Files the bundle of `dup` under the bundle of `primary`, whose root cause minimization
    /// showed it to be (`root`): `primary` takes its hits and every later one, and the bundle
    /// moves, whole, from `findings/` to `merged/`.
    fn merge(&mut self, dup: &str, primary: &str, root: &str) -> Result<()> {
        let Some(d) = self.state.signatures.get(dup).cloned() else {
            return Ok(());
        };
        let Some(p) = self.state.signatures.get_mut(primary) else {
            return Ok(());
        };
        p.absorb(&d);
        p.aliases.push(dup.to_string());
        let primary_id = p.id.clone();
        for e in self.state.signatures.values_mut() {
            if e.alias_of.as_deref() == Some(dup) {
                e.alias_of = Some(primary.to_string());
            }
        }
        if let Some(e) = self.state.signatures.get_mut(dup) {
            e.alias_of = Some(primary.to_string());
        }
        let from = self.out.join("findings").join(&d.id);
        bundle::note_merged(&from, &primary_id, root)?;
        self.move_bundle(&d.id, "merged")?;
        self.state.counters.unique_findings = self.state.counters.unique_findings.saturating_sub(1);
        self.state.counters.merged += 1;
        self.dirty.insert(primary.to_string());
        Ok(())
    }

    /// Moves bundle `id`, whole, from `findings/` to `to/` (replacing an older bundle of that
    /// id there).
    fn move_bundle(&self, id: &str, to: &str) -> Result<()> {
        let from = self.out.join("findings").join(id);
        let to_dir = self.out.join(to);
        std::fs::create_dir_all(&to_dir)
            .with_context(|| format!("creating {}", to_dir.display()))?;
        let to = to_dir.join(id);
        if to.exists() {
            std::fs::remove_dir_all(&to).with_context(|| format!("removing {}", to.display()))?;
        }
        std::fs::rename(&from, &to)
            .with_context(|| format!("moving {} to {}", from.display(), to.display()))
    }

    /// Withdraws the bundle of a finding that its own model and inputs, run again in fresh
    /// workers, did not show: it moves to `unconfirmed/` with what the second run showed, and
    /// the signature is forgotten, so a later hit files it anew and is checked again.
    fn unconfirm(&mut self, n: &NotShown) -> Result<()> {
        let Some(e) = self.state.signatures.get(&n.signature) else {
            return Ok(());
        };
        if e.alias_of.is_some() || !e.aliases.is_empty() {
            return Ok(());
        }
        let id = e.id.clone();
        let from = self.out.join("findings").join(&id);
        if !from.exists() {
            return Ok(());
        }
        bundle::note_not_shown(&from, &n.shown)?;
        self.move_bundle(&id, "unconfirmed")?;
        self.state.signatures.remove(&n.signature);
        self.dirty.remove(&n.signature);
        self.state.counters.unique_findings = self.state.counters.unique_findings.saturating_sub(1);
        self.state.counters.unconfirmed += 1;
        Ok(())
    }

    /// Files the minimizer's results and rewrites the `meta.json` of signatures hit since the
    /// last commit.
    fn flush_findings(&mut self) -> Result<()> {
        let results = self
            .minimizer
            .as_ref()
            .map(|m| m.results())
            .unwrap_or_default();
        for finished in results {
            let done = match finished {
                Finished::Minimized(done) => done,
                Finished::NotShown(n) => {
                    self.unconfirm(&n)?;
                    continue;
                }
            };
            bundle::write_minimized(&done.dir, &done)?;
            self.state.counters.minimized += 1;
            let root = done.finding.root_signature();
            match self.state.roots.get(&root).cloned() {
                Some(primary) if primary != done.signature => {
                    self.merge(&done.signature, &primary, &root)?
                }
                _ => {
                    self.state.roots.insert(root, done.signature.clone());
                }
            }
        }
        for sig in std::mem::take(&mut self.dirty) {
            if let Some(e) = self.state.signatures.get(&sig) {
                let dir = self.out.join("findings").join(&e.id);
                // A bundle merged away just before a stop, with the state not yet saved,
                // is under `merged/`: its hits stay counted in the state.
                if dir.exists() {
                    bundle::update_hits(&dir, e)?;
                    self.stale_docs.entry(sig).or_insert_with(Instant::now);
                }
            }
        }
        self.renew_stale_docs(false)
    }

    /// Renders again the documents of bundles hit since they were rendered: those waiting
    /// for [`bundle::DOCS_EVERY`] or more, or all of them (`all`, at the end of a session).
    fn renew_stale_docs(&mut self, all: bool) -> Result<()> {
        let due: Vec<String> = self
            .stale_docs
            .iter()
            .filter(|(_, since)| all || since.elapsed() >= bundle::DOCS_EVERY)
            .map(|(s, _)| s.clone())
            .collect();
        for sig in due {
            self.stale_docs.remove(&sig);
            if let Some(e) = self.state.signatures.get(&sig) {
                let dir = self.out.join("findings").join(&e.id);
                if dir.exists() {
                    bundle::renew_docs(&dir)?;
                }
            }
        }
        Ok(())
    }

    fn stats(&self, elapsed: f64) -> Stats {
        let c = &self.state.counters;
        let tm = &self.state.timings;
        Stats {
            counters: c.clone(),
            elapsed_s: elapsed,
            execs_per_s: if elapsed > 0.0 {
                c.executions as f64 / elapsed
            } else {
                0.0
            },
            illegal: c.illegal(),
            illegal_percent: c.illegal_percent(),
            coverage: self.state.coverage.report(),
            seed_coverage: self.seed_coverage.clone(),
            timings: tm.clone(),
            outside_backends_percent: if elapsed > 0.0 {
                (100.0 * (1.0 - (tm.backends_busy + tm.triage) / elapsed)).max(0.0)
            } else {
                0.0
            },
            pool: self.state.pool.clone(),
            triage: self.state.triage.clone(),
            sessions: self.state.sessions.clone(),
        }
    }

    /// Stats (when `with_stats`), then state: the state is the commit point (the corpus files
    /// and findings of the committed iterations are already on disk).
    fn commit_state(&mut self, elapsed: f64, with_stats: bool) -> Result<()> {
        let t = Instant::now();
        self.corpus.flush().map_err(|e| anyhow!(e))?;
        self.flush_findings()?;
        if with_stats {
            write_json(&self.out.join("stats.json"), &self.stats(elapsed))?;
        }
        write_json(&self.out.join("state.json"), &self.state)?;
        self.state.timings.io += t.elapsed().as_secs_f64();
        Ok(())
    }

    fn timeseries_row(&self, f: &mut std::fs::File, elapsed: f64) -> Result<()> {
        let c = &self.state.counters;
        let r = self.state.coverage.report();
        let line = format!(
            "{:.3},{},{:.3},{:.3},{:.3},{:.3},{:.3},{},{}\n",
            elapsed,
            c.executions,
            if elapsed > 0.0 {
                c.executions as f64 / elapsed
            } else {
                0.0
            },
            r.op_types.percent,
            r.op_pairs.percent,
            r.params.percent,
            r.inputs.percent,
            c.findings,
            c.illegal()
        );
        f.write_all(line.as_bytes())
            .context("writing timeseries.csv")?;
        Ok(())
    }

    fn status(&mut self, tty: bool, elapsed: f64, clock: &Clock) {
        let report = self.state.coverage.report();
        let snap = status::Snapshot {
            out: &self.out,
            elapsed,
            session: clock.session.elapsed().as_secs_f64(),
            limit: clock.limit.map(|l| l.as_secs_f64()),
            iterations_limit: self.config.iterations,
            counters: &self.state.counters,
            timings: &self.state.timings,
            coverage: &report,
            last_find: self.last_find,
            minimizing: self.minimizer.as_ref().map_or(0, |m| m.pending()),
            stopping: crate::interrupt::requested(),
        };
        self.status_lines = status::draw(&snap, tty, self.status_lines);
    }
}

/// Corpus id of the mutant of an iteration.
pub fn corpus_id(iteration: u64) -> String {
    format!("m{iteration:08}")
}

const TS_HEADER: &str = "elapsed_s,executions,execs_per_s,op_types_pct,op_pairs_pct,params_pct,inputs_pct,findings,illegal\n";

/// Opens `timeseries.csv` for appending; a fresh campaign starts it, a resumed one drops a
/// partial last line left by a kill.
fn open_timeseries(path: &Path, fresh: bool) -> Result<std::fs::File> {
    let ctx = || format!("opening {}", path.display());
    if fresh || !path.exists() {
        write_atomic(path, TS_HEADER.as_bytes()).with_context(ctx)?;
    } else {
        let bytes = std::fs::read(path).with_context(ctx)?;
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if keep != bytes.len() {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(ctx)?;
            f.set_len(keep as u64).with_context(ctx)?;
        }
        if keep == 0 {
            write_atomic(path, TS_HEADER.as_bytes()).with_context(ctx)?;
        }
    }
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .with_context(ctx)
}

/// Each job's run on each backend (`None` where the job had no inputs).
type BatchRuns = Vec<Vec<Option<RunReport>>>;

/// Runs every job on every backend: one thread per (backend, lane), backends concurrently.
fn execute_jobs(
    pools: &mut [Vec<Pool>],
    backends: &[String],
    jobs: &[Job],
) -> Result<Vec<Vec<Option<RunReport>>>> {
    let runnable: Vec<usize> = (0..jobs.len())
        .filter(|&i| jobs[i].inputs.is_some())
        .collect();
    let nb = backends.len();
    let mut results: Vec<Vec<Option<RunReport>>> = vec![vec![None; nb]; jobs.len()];
    let outcome: Vec<Result<Vec<(usize, usize, RunReport)>>> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (b, lanes) in pools.iter_mut().enumerate() {
            let nl = lanes.len();
            for (l, pool) in lanes.iter_mut().enumerate() {
                let name = &backends[b];
                let mine: Vec<usize> = runnable
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|(k, _)| k % nl == l)
                    .map(|(_, i)| i)
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                handles.push(s.spawn(move || -> Result<Vec<(usize, usize, RunReport)>> {
                    let mut v = Vec::new();
                    for i in mine {
                        let r = pool
                            .run_within(
                                name,
                                &jobs[i].bytes,
                                jobs[i].inputs.as_ref().expect("runnable"),
                                jobs[i].timeout,
                            )
                            .map_err(|e| anyhow!("backend '{name}': {e}"))?;
                        v.push((i, b, r));
                    }
                    Ok(v)
                }));
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("executor thread panicked")))
            })
            .collect()
    });
    for r in outcome {
        for (i, b, rep) in r? {
            results[i][b] = Some(rep);
        }
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("soon").is_err());
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("2m30s").unwrap(), Duration::from_secs(150));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("1h30").is_err());
        assert!(parse_duration("m").is_err());
    }

    #[test]
    fn resumed_timeseries_drops_a_partial_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("timeseries.csv");
        let mut f = open_timeseries(&p, true).unwrap();
        f.write_all(b"1.0,1,1.0,1,1,1,1,0,0\n2.0,2,1.").unwrap();
        drop(f);
        let mut f = open_timeseries(&p, false).unwrap();
        f.write_all(b"3.0,3,1.0,1,1,1,1,0,0\n").unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text,
            format!("{TS_HEADER}1.0,1,1.0,1,1,1,1,0,0\n3.0,3,1.0,1,1,1,1,0,0\n")
        );
    }

    #[test]
    fn streams_differ_by_iteration_and_stream() {
        assert_ne!(mix(1, 0, 1), mix(1, 1, 1));
        assert_ne!(mix(1, 0, 1), mix(1, 0, 2));
        assert_ne!(mix(1, 0, 1), mix(2, 0, 1));
        assert_eq!(mix(7, 9, 3), mix(7, 9, 3));
    }

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
