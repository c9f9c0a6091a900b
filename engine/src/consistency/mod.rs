//! The consistency benchmark (`mutagraph consistency`): how consistently the backends compute
//! the same models.
//!
//! Each model ([`sources`]: the zoo, model files, directories, campaign directories) gets its
//! inputs the way a campaign's admission chooses a seed's (sizes solved from the graph or
//! `--free-dim`, the fallback sizes when the reference does not run it there, `--input-shape`
//! and `--input-value` kept; generated from `--seed`, the same for every model, so a model's
//! inputs do not depend on the other models). Every backend of the set runs it in its own
//! worker, [`Options::repeat`] times (the median `run` time is the model's latency on it), and
//! every pair of backends that both ran it is compared with the project's comparison
//! ([`mutagraph_backends::compare`], the campaign's named tolerance). With the reference in the
//! set, each library that disagrees with it is localized to the first diverging node, as the
//! campaign's triage does ([`mutagraph_oracles::localize`]), which attributes the disagreement
//! to that node's op type ([`measure`]). [`aggregate`] turns the per-model rows into the
//! agreement matrix, outcomes and latency per backend, and disagreement per op type; [`page`]
//! renders them.
//!
//! Written into the output directory, each file atomically: [`JSON_FILE`] (format
//! [`VERSION`]: the tables and every model's row), [`MARKDOWN_FILE`] and [`HTML_FILE`] (one
//! self-contained page, no script).
pub mod aggregate;
pub mod measure;
pub mod page;
pub mod sources;
pub mod stats;

pub use aggregate::Tables;
pub use measure::ModelRow;
pub use sources::{Entry, campaign_models, collect};

use crate::campaign::admission::Sizing;
use mutagraph_backends::catalog;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::worker::{Pool, PoolError, PoolOptions};
use mutagraph_ir::model::write_atomic;
use mutagraph_ir::solve::Fixed;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The format version of [`JSON_FILE`].
pub const VERSION: u32 = 1;
/// The JSON result in the output directory.
pub const JSON_FILE: &str = "consistency.json";
/// The Markdown summary in the output directory.
pub const MARKDOWN_FILE: &str = "consistency.md";
/// The HTML page in the output directory.
pub const HTML_FILE: &str = "consistency.html";

/// Why a consistency run could not be made. A model that cannot be read or run is not one:
/// it is listed in [`Report::refused`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path given does not exist, cannot be read, or holds no model.
    #[error("{}: {problem}", path.display())]
    Input {
        /// The path.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A backend's worker could not be started.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// An output file could not be written (the error names it).
    #[error(transparent)]
    Write(#[from] mutagraph_ir::Error),
    /// The result could not be encoded as JSON.
    #[error("encoding {JSON_FILE}: {0}")]
    Json(#[from] serde_json::Error),
}

/// What to run and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// The backend set, in report order.
    pub backends: Vec<String>,
    /// The seed of every model's generated inputs.
    pub seed: u64,
    /// How dynamic input dims are sized.
    pub sizing: Sizing,
    /// Input shapes and values the user fixed.
    pub fixed: Fixed,
    /// The tolerance of "agree".
    pub tolerance: Tolerance,
    /// Runs per backend and model (the median run time is kept).
    pub repeat: usize,
    /// Localize disagreements with the reference (when one is in the set).
    pub localize: bool,
}

impl Options {
    /// The index of the ground truth in the set (the first backend that is one).
    pub fn reference(&self) -> Option<usize> {
        self.backends
            .iter()
            .position(|b| catalog::is_ground_truth(b))
    }
}

/// A model that was not run, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Refused {
    /// The model's name.
    pub model: String,
    /// Why (naming the file where there is one).
    pub reason: String,
}

/// The tolerance of "agree": `|a - e| <= atol + rtol * |e|`, widened for f16 / bf16 values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToleranceInfo {
    /// Its name.
    pub name: String,
    /// Absolute part.
    pub atol: f64,
    /// Relative part.
    pub rtol: f64,
}

/// What the latencies depend on besides the backends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// `release`, or `debug`: then the backends written in Rust (the reference, tract, burn)
    /// run unoptimized and their times say little.
    pub build: String,
    /// CPUs available to this process.
    pub cpus: usize,
    /// The 1-minute load average when the run started (Linux).
    pub load_avg: Option<f64>,
}

impl Machine {
    fn now() -> Machine {
        Machine {
            build: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
            .into(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            load_avg: std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|t| t.split_whitespace().next()?.parse().ok()),
        }
    }
}

/// The result of a consistency run ([`JSON_FILE`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Format version ([`VERSION`]).
    pub version: u32,
    /// The backend set, in order.
    pub backends: Vec<String>,
    /// Each backend's version.
    pub versions: BTreeMap<String, String>,
    /// The ground truth, when it is in the set.
    pub reference: Option<String>,
    /// The tolerance of "agree".
    pub tolerance: ToleranceInfo,
    /// The seed of the generated inputs.
    pub seed: u64,
    /// Runs per backend and model.
    pub repeat: usize,
    /// How disagreement is attributed to op types: `localization` (the op of the first node
    /// where a library diverges from the reference) or `containment` (every op of a model that
    /// some pair disagreed on).
    pub attribution: String,
    /// What was asked for (`zoo`, paths).
    pub sources: Vec<String>,
    /// Models run.
    pub models_run: usize,
    /// Wall time of the run, seconds.
    pub elapsed_s: f64,
    /// Where the times were measured.
    pub machine: Machine,
    /// The matrix, the pairs, outcomes and latency per backend, disagreement per op type.
    #[serde(flatten)]
    pub tables: Tables,
    /// Models not run, with the reason.
    pub refused: Vec<Refused>,
    /// One row per model run.
    pub models: Vec<ModelRow>,
}

/// Runs every entry on the set. Models that cannot be read, are invalid or get no inputs are
/// listed as refused; only a worker that cannot be started stops the run.
pub fn run(
    sources: &[String],
    entries: &[Entry],
    opts: &Options,
    pool_opts: PoolOptions,
) -> Result<Report, Error> {
    let start = Instant::now();
    let machine = Machine::now();
    let mut pool = Pool::new(pool_opts);
    let mut versions = BTreeMap::new();
    for b in &opts.backends {
        versions.insert(b.clone(), pool.version(b)?);
    }
    let mut rows = Vec::new();
    let mut refused = Vec::new();
    for (k, e) in entries.iter().enumerate() {
        let t = Instant::now();
        match one(&mut pool, opts, e)? {
            Ok(row) => {
                tracing::info!(
                    "[{}/{}] {}: {} ({:.1} s)",
                    k + 1,
                    entries.len(),
                    e.name,
                    summary_line(&row),
                    t.elapsed().as_secs_f64()
                );
                rows.push(row);
            }
            Err(reason) => {
                tracing::warn!(
                    "[{}/{}] {}: not run: {reason}",
                    k + 1,
                    entries.len(),
                    e.name
                );
                refused.push(Refused {
                    model: e.name.clone(),
                    reason,
                });
            }
        }
    }
    let reference = opts.reference();
    let localized = opts.localize && reference.is_some();
    Ok(Report {
        version: VERSION,
        backends: opts.backends.clone(),
        versions,
        reference: reference.map(|r| opts.backends[r].clone()),
        tolerance: ToleranceInfo {
            name: opts.tolerance.name.to_string(),
            atol: opts.tolerance.atol,
            rtol: opts.tolerance.rtol,
        },
        seed: opts.seed,
        repeat: opts.repeat,
        attribution: if localized {
            "localization"
        } else {
            "containment"
        }
        .into(),
        sources: sources.to_vec(),
        models_run: rows.len(),
        elapsed_s: start.elapsed().as_secs_f64(),
        machine,
        tables: aggregate::tables(&rows, &opts.backends, reference, localized),
        refused,
        models: rows,
    })
}

/// One model: read, checked, typed and run; `Ok(Err(reason))` when it is refused. A panic of
/// ours on a strange model refuses that model, it does not end the run.
fn one(pool: &mut Pool, opts: &Options, e: &Entry) -> Result<Result<ModelRow, String>, Error> {
    let mut m = match e.load() {
        Ok(m) => m,
        Err(why) => return Ok(Err(why)),
    };
    if let Err(err) = mutagraph_ir::validate::validate(&m) {
        return Ok(Err(format!("{}: {err}", e.name)));
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        mutagraph_ir::infer::infer_model(&mut m, Default::default());
        measure::measure(pool, opts, &e.name, &m)
    }));
    match r {
        Ok(r) => Ok(r?),
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Ok(Err(format!(
                "mutagraph failed on it (a bug of ours, please report it): {msg}"
            )))
        }
    }
}

/// `4/4 ran, 6/6 pairs agree` for the progress log.
fn summary_line(row: &ModelRow) -> String {
    let ran = row.runs.iter().filter(|r| r.ran()).count();
    let agree = row.pairs.iter().filter(|p| p.agree).count();
    let mut s = format!(
        "{ran}/{} ran, {agree}/{} pairs agree",
        row.runs.len(),
        row.pairs.len()
    );
    for b in &row.blame {
        s.push_str(&format!(
            "; {} {} at {}",
            b.backend,
            b.verdict,
            b.op.as_deref().unwrap_or("?")
        ));
    }
    s
}

/// The files [`write`] wrote.
#[derive(Clone, Debug, Serialize)]
pub struct Written {
    /// [`JSON_FILE`].
    pub json: PathBuf,
    /// [`MARKDOWN_FILE`].
    pub markdown: PathBuf,
    /// [`HTML_FILE`].
    pub html: PathBuf,
}

/// Writes the three files into `out` (created when missing), each atomically.
pub fn write(report: &Report, out: &Path) -> Result<Written, Error> {
    std::fs::create_dir_all(out).map_err(|e| Error::Input {
        path: out.to_path_buf(),
        problem: format!("cannot create the output directory: {e}"),
    })?;
    let w = Written {
        json: out.join(JSON_FILE),
        markdown: out.join(MARKDOWN_FILE),
        html: out.join(HTML_FILE),
    };
    let mut json = serde_json::to_vec_pretty(report)?;
    json.push(b'\n');
    write_atomic(&w.json, &json)?;
    write_atomic(&w.markdown, page::markdown(report).as_bytes())?;
    write_atomic(&w.html, page::html(report).as_bytes())?;
    Ok(w)
}
