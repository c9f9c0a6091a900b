//! `mutagraph run`: one model on several backends, each in its worker, against the reference.
use super::{InputArgs, PoolArgs};
use crate::campaign::admission::{Sizing, choose};
use anyhow::Context;
use mutagraph_backends::compare::{CompareOptions, Metrics, Tolerance, compare_named};
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Outcome, Pool, PoolError, RunReport};
use mutagraph_ir::{Model, validate};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `mutagraph run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model file.
    pub model: PathBuf,
    /// Backends, comma-separated (default: reference, ort, tract, burn-ndarray as compiled
    /// in; `cpu`: every CPU backend and variant).
    #[arg(long, value_delimiter = ',')]
    pub backends: Vec<String>,
    /// Input values: an .npz archive (as bundles ship them), one .pb TensorProto file, a
    /// directory of input_N.pb files, or a bug bundle directory.
    #[arg(long, conflicts_with = "seed")]
    pub inputs: Option<PathBuf>,
    /// Seed of the generated inputs.
    #[arg(long)]
    pub seed: Option<u64>,
    /// One size for every symbolic / unknown input dim of generated inputs, batches too
    /// (default: sizes solved from the graph, as `inspect` shows them).
    #[arg(long)]
    pub free_dim: Option<usize>,
    #[command(flatten)]
    pub given: InputArgs,
    #[command(flatten)]
    pub tolerance: super::ToleranceArgs,
    /// The ground-truth backend (`reference-f64`: the f64 interpreter keeping f64 outputs),
    /// or `none` to run only the given backends.
    #[arg(long, default_value = "reference-f64")]
    pub reference: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Exit 0 even when a backend fails or disagrees with the reference (by default such
    /// a run exits 1).
    #[arg(long)]
    pub no_fail: bool,
    /// Write every backend's outputs to this `.npz`, each array named `BACKEND/OUTPUT`
    /// (percent-encoded in the archive as bundles' names are: `urllib.parse.unquote`).
    #[arg(long, value_name = "FILE.npz")]
    pub save_outputs: Option<PathBuf>,
    /// Do not look for the first node where a differing backend leaves the reference (it
    /// runs the model again with every value exposed).
    #[arg(long)]
    pub no_localize: bool,
    #[command(flatten)]
    pub pool: PoolArgs,
}

/// Runs `mutagraph run`.
pub fn main(a: Args, g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args {
        model,
        backends,
        inputs,
        seed,
        free_dim,
        given,
        tolerance,
        reference,
        json,
        no_fail,
        save_outputs: save_to,
        no_localize,
        pool,
    } = a;
    let fixed = given.fixed()?;
    let tol = tolerance.get()?;
    // A bundle directory stands for its model, run on its own inputs.
    let (model, inputs) = if crate::inputs::is_bundle(&model) {
        let m = crate::inputs::bundle_model(&model);
        (m, inputs.or(Some(model)))
    } else {
        (model, inputs)
    };
    let m = Model::load(&model)?;
    // Backends get the model as checked, one self-contained buffer (text, and tensors
    // kept in side files, become one protobuf).
    // Its warnings (an op of ONNX Runtime's own schema in the default domain, say) are
    // printed with the declared-dim notes.
    let checked =
        validate::validate(&m).map_err(|e| anyhow::anyhow!("{}: {e}", model.display()))?;
    let bytes = m.to_bytes();
    for note in mutagraph_ir::import::declared_dim_notes(&m.graph) {
        tracing::warn!("{}: {note}", model.display());
    }
    for w in checked.warnings {
        tracing::warn!("{}: {w}", model.display());
    }
    let backends = super::backend_list(backends)?;
    let mut p = Pool::new(pool.options()?);
    let (values, source) = match &inputs {
        Some(path) => (
            crate::inputs::read(&m, &model, path)?,
            format!("from {}", path.display()),
        ),
        None => {
            // The inputs a campaign's admission would choose (the same sizes, values and
            // checks), so that `run`, `consistency` and `campaign` run a model alike.
            let seed = seed.unwrap_or(0);
            // A shape or value that does not fit this model is an error naming the input.
            mutagraph_ir::solve::solve(&m, &fixed)
                .map_err(|e| anyhow::anyhow!("{}: {e}", model.display()))?;
            let sizing = match free_dim {
                Some(n) => Sizing::Uniform(n.max(1)),
                None => Sizing::Solved,
            };
            let choice = if reference == "none" {
                choose(&m, sizing, &fixed, seed, None)
            } else {
                let mut run_ref =
                    |i: &NamedValues| p.run(&reference, &bytes, i).map_err(|e| e.to_string());
                choose(&m, sizing, &fixed, seed, Some(&mut run_ref))
            }
            .map_err(|e| anyhow::anyhow!("{}: {e}", model.display()))?;
            if let Some(why) = &choice.refused {
                tracing::warn!("{}: {why}", model.display());
            }
            let range = match choice.chosen.float_range {
                Some((lo, hi)) => format!(", floats in [{lo}, {hi})"),
                None => String::new(),
            };
            (choice.inputs, format!("generated, seed {seed}{range}"))
        }
    };
    let name = model.display().to_string();
    let mut summary = run_model(
        &mut p,
        RunRequest {
            model_name: &name,
            model: &bytes,
            inputs: &values,
            input_source: source,
            reference: (reference != "none").then_some(reference.as_str()),
            backends: &backends,
            tolerance: tol,
        },
    )?;
    if !no_localize && reference != "none" {
        localize(&mut p, &mut summary, &m, &values, tol)?;
    }
    if let Some(path) = &save_to {
        save_outputs(&summary, path)?;
    }
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        crate::out!("{}", summary.to_text());
    }
    let problems = summary.problems();
    if problems.is_empty() || no_fail {
        return Ok(ExitCode::SUCCESS);
    }
    if !g.quiet {
        eprintln!(
            "{}: {} of {} backends failed or disagree (--no-fail to exit 0):",
            model.display(),
            problems.len(),
            summary.runs.len()
        );
        for p in &problems {
            eprintln!("  {p}");
        }
    }
    Ok(ExitCode::from(1))
}

/// A backend's run and how it compares with the reference.
#[derive(Clone, Debug, Serialize)]
pub struct BackendRun {
    /// The run (its outcome is `status` and `detail`; its outputs are in `values`).
    #[serde(skip)]
    pub report: RunReport,
    /// The run's measurements.
    #[serde(flatten)]
    pub measured: Measured,
    /// Its outputs, when it ran.
    #[serde(skip)]
    pub values: Option<NamedValues>,
    /// Where its outputs first leave the reference's, when they differ and the model was
    /// run again with every value exposed (`consistency`'s localization).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_diverging: Option<crate::consistency::measure::Blame>,
    /// Status word.
    pub status: String,
    /// Failure detail (empty when ok).
    pub detail: String,
    /// Output summaries.
    pub outputs: Vec<OutputSummary>,
    /// Against the reference, when both produced outputs.
    pub vs_reference: Option<VsReference>,
}

/// What was measured of a run: who ran, how long, how much memory.
#[derive(Clone, Debug, Serialize)]
pub struct Measured {
    /// The backend.
    pub backend: String,
    /// Its library's version.
    pub version: String,
    /// Wall time of the whole request, ms.
    pub wall_ms: f64,
    /// Loading and compiling, ms.
    pub prepare_ms: f64,
    /// The run itself, ms.
    pub run_ms: f64,
    /// Peak resident memory of the worker, bytes.
    pub peak_rss: u64,
}

impl Measured {
    fn of(r: &RunReport) -> Measured {
        Measured {
            backend: r.backend.clone(),
            version: r.version.clone(),
            wall_ms: r.wall_ms,
            prepare_ms: r.prepare_ms,
            run_ms: r.run_ms,
            peak_rss: r.peak_rss,
        }
    }
}

/// Shape, dtype and NaN/Inf counts of one output.
#[derive(Clone, Debug, Serialize)]
pub struct OutputSummary {
    /// Name.
    pub name: String,
    /// Description (`f32[1, 10]`, `seq(3)`).
    pub value: String,
    /// NaN elements.
    pub nan: usize,
    /// Infinite elements.
    pub inf: usize,
}

/// Error metrics against the reference.
#[derive(Clone, Debug, Serialize)]
pub struct VsReference {
    /// The tolerance used for `agrees`.
    pub tolerance: String,
    /// True when every output agrees within it.
    pub agrees: bool,
    /// Metrics over all outputs together.
    pub metrics: Metrics,
    /// The first disagreement, in words.
    pub reason: Option<String>,
}

/// The result of `run`.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    /// The model file.
    pub model: String,
    /// The inputs (name and description).
    pub inputs: Vec<(String, String)>,
    /// Where the inputs came from.
    pub input_source: String,
    /// The backend used as ground truth (empty when none).
    pub reference: String,
    /// One entry per backend, the reference first.
    pub runs: Vec<BackendRun>,
}

fn summarize(out: &NamedValues) -> Vec<OutputSummary> {
    out.iter()
        .map(|(n, v)| {
            let (nan, inf) = v
                .tensors()
                .iter()
                .map(|t| t.nan_inf_counts())
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
            OutputSummary {
                name: n.clone(),
                value: v.describe(),
                nan,
                inf,
            }
        })
        .collect()
}

/// Compares `got` with the reference outputs (element types may differ: the reference may
/// compute in f64).
pub fn vs_reference(reference: &NamedValues, got: &NamedValues, tol: Tolerance) -> VsReference {
    let c = compare_named(
        reference,
        got,
        CompareOptions {
            tolerance: tol,
            check_dtype: false,
        },
    );
    VsReference {
        tolerance: tol.name.to_string(),
        agrees: c.ok,
        metrics: c.metrics,
        reason: c.reason,
    }
}

/// What to run.
pub struct RunRequest<'a> {
    /// Name shown for the model (its path).
    pub model_name: &'a str,
    /// ONNX bytes.
    pub model: &'a [u8],
    /// Inputs.
    pub inputs: &'a NamedValues,
    /// Where they came from, in words.
    pub input_source: String,
    /// The ground-truth backend (`None`: no comparison).
    pub reference: Option<&'a str>,
    /// The backends to compare with it.
    pub backends: &'a [String],
    /// The tolerance of "agrees".
    pub tolerance: Tolerance,
}

/// Runs the model on the reference and on the backends.
pub fn run_model(pool: &mut Pool, req: RunRequest<'_>) -> Result<RunSummary, PoolError> {
    let RunRequest {
        model_name,
        model,
        inputs,
        input_source,
        reference,
        backends,
        tolerance: tol,
    } = req;
    let mut order: Vec<String> = reference.iter().map(|r| r.to_string()).collect();
    order.extend(
        backends
            .iter()
            .filter(|b| Some(b.as_str()) != reference)
            .cloned(),
    );
    let mut runs = Vec::new();
    let mut ref_out: Option<NamedValues> = None;
    for (i, b) in order.iter().enumerate() {
        let report = pool.run(b, model, inputs)?;
        let outputs = report.outcome.outputs().map(summarize).unwrap_or_default();
        let is_ref = i == 0 && reference.is_some();
        let vs = match (&ref_out, report.outcome.outputs()) {
            (Some(r), Some(o)) if !is_ref => Some(vs_reference(r, o, tol)),
            _ => None,
        };
        if is_ref {
            ref_out = report.outcome.outputs().cloned();
        }
        let (report, values) = take_outputs(report);
        runs.push(BackendRun {
            status: report.outcome.status().to_string(),
            detail: report.outcome.detail(),
            outputs,
            vs_reference: vs,
            measured: Measured::of(&report),
            report,
            values,
            first_diverging: None,
        });
    }
    Ok(RunSummary {
        model: model_name.to_string(),
        inputs: inputs
            .iter()
            .map(|(n, v)| (n.clone(), v.describe()))
            .collect(),
        input_source,
        reference: reference.unwrap_or("").to_string(),
        runs,
    })
}

/// The report without its outputs (summarized, never printed in full), and the outputs.
fn take_outputs(mut r: RunReport) -> (RunReport, Option<NamedValues>) {
    let values = match &mut r.outcome {
        Outcome::Ok(o) => Some(std::mem::take(o)),
        _ => None,
    };
    (r, values)
}

/// Pins each backend whose outputs differ from the reference's on the first node where
/// they leave them (the model run again with every value exposed).
pub fn localize(
    pool: &mut Pool,
    summary: &mut RunSummary,
    model: &Model,
    inputs: &NamedValues,
    tolerance: Tolerance,
) -> Result<(), PoolError> {
    let suspects: Vec<String> = summary
        .runs
        .iter()
        .filter(|r| r.vs_reference.as_ref().is_some_and(|v| !v.agrees))
        .map(|r| r.report.backend.clone())
        .collect();
    let names: Vec<&str> = suspects.iter().map(String::as_str).collect();
    let blames = crate::consistency::measure::localize_suspects(
        pool,
        &summary.reference,
        tolerance,
        model,
        inputs,
        &names,
    )?;
    for b in blames {
        if let Some(r) = summary
            .runs
            .iter_mut()
            .find(|r| r.report.backend == b.backend)
        {
            r.first_diverging = Some(b);
        }
    }
    Ok(())
}

/// Writes every backend's outputs into one `.npz`, each array named `BACKEND/OUTPUT`
/// (Polygraphy's `--save-outputs`, in the format bundles use).
pub fn save_outputs(summary: &RunSummary, path: &std::path::Path) -> anyhow::Result<()> {
    let mut all = Vec::new();
    for r in &summary.runs {
        for (name, v) in r.values.iter().flatten() {
            if let Some(t) = v.tensor() {
                all.push((format!("{}/{name}", r.report.backend), t.clone()));
            }
        }
    }
    mutagraph_oracles::bundle::write_npz(path, &all)
        .with_context(|| format!("writing {}", path.display()))
}

impl RunSummary {
    /// What went wrong, one line per backend: a run that did not end `ok`, or outputs that
    /// differ from the reference beyond the tolerance. `run` exits 1 when there is any.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.runs {
            let b = &r.report.backend;
            if r.status != "ok" {
                out.push(format!("{b}: {} ({})", r.status, r.detail.trim_end()));
            } else if let Some(v) = r.vs_reference.as_ref().filter(|v| !v.agrees) {
                out.push(format!(
                    "{b}: differs from {} beyond the '{}' tolerance{}{}",
                    self.reference,
                    v.tolerance,
                    v.reason
                        .as_ref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default(),
                    r.first_diverging
                        .as_ref()
                        .map(|d| format!("; first diverging node: {}", d.describe()))
                        .unwrap_or_default()
                ));
            }
        }
        out
    }

    /// The text table.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "model  {}\ninputs {} ({})\n",
            self.model,
            self.input_source,
            {
                let v: Vec<String> = self
                    .inputs
                    .iter()
                    .map(|(n, d)| format!("{n}: {d}"))
                    .collect();
                v.join(", ")
            }
        );
        let vs = format!("vs {}", self.reference);
        s.push_str(&format!(
            "\n{:<14} {:<12} {:>9} {:>9} {:>9} {:>8} {:>10} {:>10} {:>5} {:>5}  {}\n",
            "backend",
            "status",
            "wall ms",
            "prep ms",
            "run ms",
            "peak MB",
            "max abs",
            "max rel",
            "NaN",
            "Inf",
            vs
        ));
        for r in &self.runs {
            let (nan, inf) = r
                .outputs
                .iter()
                .fold((0, 0), |a, o| (a.0 + o.nan, a.1 + o.inf));
            let (abs, rel, verdict) = match &r.vs_reference {
                Some(v) => (
                    format!("{:.2e}", v.metrics.max_abs),
                    format!("{:.2e}", v.metrics.max_rel),
                    if v.agrees {
                        format!("agrees ({})", v.tolerance)
                    } else {
                        format!("DIFFERS: {}", v.reason.clone().unwrap_or_default())
                    },
                ),
                None if r.report.backend == self.reference => {
                    ("-".into(), "-".into(), "(ground truth)".into())
                }
                None if r.status == "ok" && !self.reference.is_empty() => {
                    ("-".into(), "-".into(), "(no reference outputs)".into())
                }
                None => ("-".into(), "-".into(), r.detail.clone()),
            };
            s.push_str(&format!(
                "{:<14} {:<12} {:>9.2} {:>9.2} {:>9.2} {:>8.1} {:>10} {:>10} {:>5} {:>5}  {}\n",
                r.report.backend,
                r.status,
                r.report.wall_ms,
                r.report.prepare_ms,
                r.report.run_ms,
                r.report.peak_rss as f64 / 1e6,
                abs,
                rel,
                nan,
                inf,
                verdict
            ));
        }
        s
    }
}
