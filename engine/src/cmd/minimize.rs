//! `mutagraph minimize BUNDLE|MODEL [--check CMD]`: delta debugging of a failing model.
//!
//! * A bug bundle (a `findings/<id>/` directory): its original model and inputs, minimized
//!   while the bundle's signature stays; the bundle gets `minimized.onnx` and the rest
//!   (see [`crate::bundle`]).
//! * A model file: run on the backends, judged; the first finding (or the one chosen with
//!   `--kind` / `--backend`) is the signature to keep.
//! * `--check CMD`: an external interestingness test instead: the candidate's path is appended
//!   to `CMD` (run by `sh -c`, also in `$MUTAGRAPH_MODEL`); exit status 0 = still interesting.
use super::{InputArgs, PoolArgs, parse_duration};
use crate::bundle;
use crate::minimizer::{Done, Finished, MinimizeJob, MinimizedInfo, minimize_one};
use anyhow::{Context, Result, anyhow, bail};
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Pool, PoolOptions};
use mutagraph_ir::Model;
use mutagraph_oracles::MutantRuns;
use mutagraph_oracles::finding::Finding;
use mutagraph_oracles::minimize::{Options, minimize};
use mutagraph_oracles::triage::{Triage, Verdict};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The arguments of `mutagraph minimize`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A bug bundle directory or an .onnx model.
    pub target: PathBuf,
    /// External interestingness test: CMD gets the candidate's path appended (also in
    /// $MUTAGRAPH_MODEL); exit status 0 = still interesting.
    #[arg(long)]
    pub check: Option<String>,
    /// Backends (default: the bundle's campaign backends, or reference, ort, tract,
    /// burn-ndarray as compiled in).
    #[arg(long, value_delimiter = ',')]
    pub backends: Vec<String>,
    /// Where the minimized model goes (default: BUNDLE/minimized.onnx with the rest of the
    /// bundle updated, or MODEL.min.onnx).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Budget: predicate calls.
    #[arg(long, default_value_t = 400)]
    pub max_checks: usize,
    /// Budget: wall time (`90s`, `2m`, `1h30m`).
    #[arg(long, value_parser = parse_duration)]
    pub time_limit: Option<Duration>,
    /// Seed of generated inputs (model files).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub given: InputArgs,
    /// Keep the finding of this kind (crash, nan, inconsistency, hang).
    #[arg(long)]
    pub kind: Option<String>,
    /// Keep the finding on this backend.
    #[arg(long)]
    pub backend: Option<String>,
    #[command(flatten)]
    pub tolerance: super::ToleranceArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub pool: PoolArgs,
}

/// Runs `mutagraph minimize`.
pub fn main(a: Args, _g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args {
        target,
        check,
        backends,
        out,
        max_checks,
        time_limit,
        seed,
        given,
        kind,
        backend,
        tolerance,
        json,
        pool,
    } = a;
    let tol = tolerance.get()?;
    let req = Request {
        target: target.clone(),
        check,
        backends,
        out,
        max_checks,
        time_limit,
        seed,
        fixed: given.fixed()?,
        kind,
        backend,
        tolerance: tol,
    };
    let o = run(req, pool.options()?)?;
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&o)?);
    } else {
        crate::out!("{}", o.to_text(&target));
    }
    Ok(ExitCode::SUCCESS)
}

/// What to minimize and how.
pub struct Request {
    /// A bundle directory or a model file.
    pub target: PathBuf,
    /// External interestingness command.
    pub check: Option<String>,
    /// Backends (default: the bundle's campaign backends, or the default set).
    pub backends: Vec<String>,
    /// Output model (default: the bundle's `minimized.onnx`, or `<model>.min.onnx`).
    pub out: Option<PathBuf>,
    /// Budget.
    pub max_checks: usize,
    /// Budget.
    pub time_limit: Option<Duration>,
    /// Seed of generated inputs (model files).
    pub seed: u64,
    /// Input shapes and values given for generated inputs (model files).
    pub fixed: mutagraph_ir::solve::Fixed,
    /// Keep the finding of this kind (model files).
    pub kind: Option<String>,
    /// Keep the finding on this backend (model files).
    pub backend: Option<String>,
    /// Tolerance.
    pub tolerance: Tolerance,
}

/// What it did.
#[derive(Debug, serde::Serialize)]
pub struct Outcome {
    /// The minimized model's path.
    pub out: PathBuf,
    /// Statistics.
    pub info: MinimizedInfo,
    /// The signature kept (`None` with `--check`).
    pub signature: Option<String>,
    /// The attributes the bug needs, found on the minimized model.
    pub trigger: Vec<String>,
    /// The root cause's signature (the signature, when no trigger was found).
    pub root: Option<String>,
}

impl Outcome {
    /// What `minimize` prints for the model `target`.
    pub fn to_text(&self, target: &Path) -> String {
        let i = &self.info;
        let mut s = format!(
            "{}: nodes {} -> {} in {} checks ({} invalid candidates skipped), {:.1} s; written to {}\n",
            target.display(),
            i.nodes_before,
            i.nodes_after,
            i.checks,
            i.invalid_candidates,
            i.wall_s,
            self.out.display()
        );
        if let Some(sig) = &self.signature {
            s.push_str(&format!("  kept: {sig}\n"));
        }
        if !self.trigger.is_empty() {
            s.push_str(&format!("  needs: {}\n", self.trigger.join(", ")));
        }
        if let Some(root) = self
            .root
            .as_ref()
            .filter(|r| Some(*r) != self.signature.as_ref())
        {
            s.push_str(&format!("  root cause: {root}\n"));
        }
        for (name, checks, removed) in &i.passes {
            if *checks > 0 || *removed > 0 {
                s.push_str(&format!(
                    "  {name}: {checks} checks, {removed} nodes removed\n"
                ));
            }
        }
        s
    }
}

fn external(cmd: &str, dir: &Path, n: &mut usize, m: &Model) -> bool {
    *n += 1;
    let p = dir.join(format!("candidate-{n}.onnx"));
    if m.save(&p).is_err() {
        return false;
    }
    let quoted = format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
    let ok = Command::new("sh")
        .arg("-c")
        .arg(format!("{cmd} {quoted}"))
        .env("MUTAGRAPH_MODEL", &p)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let _ = std::fs::remove_file(&p);
    ok
}

/// The seed a bundle's mutant was made from (the campaign's `seeds/` copy, two directories
/// up) and the mutation records, for the minimizer's first pass, which drops records as the
/// campaign's does. `None` when the bundle already starts from its minimized model (the
/// records build the original), or the seed file is not there.
fn seed_and_trace(
    dir: &Path,
    meta: &bundle::Meta,
    from_minimized: bool,
) -> Option<(Vec<u8>, Vec<mutagraph_mutators::mutation::Record>)> {
    if from_minimized || meta.trace.len() < 2 {
        return None;
    }
    let file = meta.seed_file.as_ref()?;
    let seed = dir.parent()?.parent()?.join("seeds").join(file);
    Some((std::fs::read(seed).ok()?, meta.trace.clone()))
}

/// Runs the command.
pub fn run(req: Request, pool_opts: PoolOptions) -> Result<Outcome> {
    let is_bundle = req.target.is_dir();
    if is_bundle && !req.target.join("meta.json").exists() {
        return Err(super::refused(format!(
            "{}: not a bug bundle (it has no meta.json); give a bundle directory \
             (OUT/findings/<id>) or a model file",
            req.target.display()
        )));
    }
    // A bundle starts from the model `recheck` checks (its minimized model when it has one,
    // with that model's inputs), so the two commands judge the same case.
    let (model_path, meta, bundle_inputs) = if is_bundle {
        let meta = bundle::read_meta(&req.target)?;
        let (file, _, values) = super::recheck::bundle_case(&req.target)?;
        (req.target.join(file), Some(meta), Some(values))
    } else {
        (req.target.clone(), None, None)
    };
    let mut model = Model::load(&model_path).map_err(|e| e.in_file(&model_path))?;
    mutagraph_ir::infer::infer_model(&mut model, Default::default());
    mutagraph_ir::validate::validate(&model)
        .map_err(|e| anyhow!("{}: {e}", model_path.display()))?;
    let existing = is_bundle
        .then(|| req.target.join("minimized.onnx"))
        .filter(|p| p.exists())
        .and_then(|p| Model::load(&p).ok())
        .map(|m| m.graph.node_count());
    let opts = Options {
        max_checks: req.max_checks,
        time_limit: req.time_limit,
        focus: meta
            .as_ref()
            .and_then(|m| m.finding.location.as_ref().map(|l| l.value.clone())),
        ..Options::default()
    };
    let out = req.out.clone().unwrap_or_else(|| {
        if is_bundle {
            req.target.join("minimized.onnx")
        } else {
            model_path.with_extension("min.onnx")
        }
    });

    if let Some(cmd) = &req.check {
        return minimize_external(cmd, &model, &model_path, &opts, out);
    }

    let mut pool = Pool::new(pool_opts);
    let (backends, finding, inputs, intermediates, input_seed) = match &meta {
        Some(_) if !req.fixed.is_empty() => {
            return Err(super::refused(format!(
                "{}: a bundle keeps its inputs; --input-shape and --input-value apply to model \
                 files",
                req.target.display()
            )));
        }
        Some(meta) => {
            let backends: Vec<String> = if req.backends.is_empty() {
                meta.config["backends"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|b| b.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default()
            } else {
                req.backends.clone()
            };
            let ins = bundle_inputs.clone().expect("read with the bundle's model");
            (backends, meta.finding.clone(), ins, None, meta.input_seed)
        }
        None => find_on_model(&req, &model, &model_path, &mut pool)?,
    };
    let signature = match &meta {
        Some(m) => m.signature.clone(),
        None => finding.signature(),
    };
    let job = MinimizeJob {
        signature,
        dir: req.target.clone(),
        finding: finding.clone(),
        model: model.to_bytes(),
        inputs: inputs.clone(),
        intermediates,
        input_seed,
        trace: meta
            .as_ref()
            .and_then(|m| seed_and_trace(&req.target, m, existing.is_some())),
        whole: None,
    };
    let mut o = opts.clone();
    o.focus = finding.location.as_ref().map(|l| l.value.clone());
    let stop = AtomicBool::new(false);
    let done: Done = match minimize_one(&mut pool, &backends, req.tolerance, &job, &o, &stop) {
        Some(Finished::Minimized(done)) => *done,
        Some(Finished::NotShown(n)) => bail!(
            "{}: the finding `{}` does not reproduce on the original model any more (this run: {})",
            req.target.display(),
            job.signature,
            if n.shown.is_empty() {
                "no finding".to_string()
            } else {
                n.shown.join("; ")
            }
        ),
        None => bail!(
            "{}: the original model could not be run again to check the finding `{}`",
            req.target.display(),
            job.signature
        ),
    };
    pool.shutdown();
    let new_nodes = Model::from_bytes(&done.model).map_or(usize::MAX, |m| m.graph.node_count());
    if let Some(old) = existing.filter(|&old| req.out.is_none() && old <= new_nodes) {
        // Never a worse result: the bundle keeps its minimized model.
        eprintln!(
            "{}: kept minimized.onnx ({old} nodes): this run found no smaller model ({new_nodes} nodes)",
            req.target.display()
        );
        let mut info = done.info;
        info.nodes_after = old;
        return Ok(Outcome {
            out: req.target.join("minimized.onnx"),
            info,
            signature: Some(job.signature),
            root: Some(done.finding.root_signature()),
            trigger: done.finding.trigger,
        });
    }
    if is_bundle && req.out.is_none() {
        bundle::write_minimized(&req.target, &done)?;
    } else {
        mutagraph_ir::model::write_atomic(&out, &done.model)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(Outcome {
        out,
        info: done.info,
        signature: Some(job.signature),
        root: Some(done.finding.root_signature()),
        trigger: done.finding.trigger,
    })
}

/// The backends, the finding, its inputs, the intermediate values and the input seed.
type FoundOnModel = (Vec<String>, Finding, NamedValues, Option<NamedValues>, u64);

/// Minimizes with an external check command: no backends of ours.
fn minimize_external(
    cmd: &str,
    model: &Model,
    model_path: &Path,
    opts: &Options,
    out: PathBuf,
) -> Result<Outcome> {
    let tmp = tempfile::tempdir().context("creating a temporary directory")?;
    let mut n = 0;
    if !external(cmd, tmp.path(), &mut n, model) {
        bail!(
            "{}: the check command does not find the original model interesting (exit status \
             non-zero): nothing to minimize",
            model_path.display()
        );
    }
    let t = Instant::now();
    let mut pred = |m: &Model| external(cmd, tmp.path(), &mut n, m);
    let (small, r) =
        minimize(model, opts, &mut pred).map_err(|e| anyhow!("{}: {e}", model_path.display()))?;
    small.save(&out).map_err(|e| e.in_file(&out))?;
    Ok(Outcome {
        out,
        signature: None,
        trigger: Vec::new(),
        root: None,
        info: MinimizedInfo {
            nodes_before: r.nodes_before,
            nodes_after: r.nodes_after,
            checks: r.checks,
            invalid_candidates: r.invalid_candidates,
            wall_s: t.elapsed().as_secs_f64(),
            passes: r
                .passes
                .iter()
                .map(|p| (p.name.clone(), p.checks, p.nodes_removed))
                .collect(),
            op_type: None,
        },
    })
}

/// What a model file (not a bundle) is minimized for: the first finding the triage reports on
/// it, with the backends, inputs and input seed it showed on.
fn find_on_model(
    req: &Request,
    model: &Model,
    model_path: &Path,
    pool: &mut Pool,
) -> Result<FoundOnModel> {
    let backends = if req.backends.is_empty() {
        mutagraph_backends::catalog::default_set()
            .into_iter()
            .map(String::from)
            .collect()
    } else {
        req.backends.clone()
    };
    let opts = GenOptions::for_model(model, None, &req.fixed)
        .map_err(|e| anyhow!("{}: {e}", model_path.display()))?;
    let ins = inputs::generate(model, req.seed, &opts)
        .map_err(|e| anyhow!("{}: {e}", model_path.display()))?;
    let bytes = model.to_bytes();
    let mut triage = Triage::new(&backends, req.tolerance);
    let mut runs = Vec::new();
    for b in &backends {
        runs.push(
            pool.run(b, &bytes, &ins)
                .map_err(|e| anyhow!("backend '{b}': {e}"))?,
        );
    }
    let mr = MutantRuns {
        runs,
        reference: triage.reference_index(),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let found = triage
        .judge(pool, &bytes, &ins, &mr)
        .into_iter()
        .filter(|t| t.verdict == Verdict::Report)
        .filter(|t| {
            req.kind
                .as_deref()
                .is_none_or(|k| t.finding.kind.name() == k)
        })
        .find(|t| {
            req.backend
                .as_deref()
                .is_none_or(|b| t.finding.backends.iter().any(|x| x == b))
        });
    let Some(t) = found else {
        bail!(
            "{}: no finding on backends {} with these inputs (seed {}); nothing to minimize",
            model_path.display(),
            backends.join(","),
            req.seed
        );
    };
    Ok((backends, t.finding, ins, t.intermediates, req.seed))
}
