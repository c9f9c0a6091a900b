//! Bug bundles: one directory per finding signature under `findings/`.
//!
//! `original.onnx`, `inputs.npz` + `inputs/input_<i>.pb`, `outputs/<backend>/output_<i>.pb`,
//! `expected.npz` (the f64 reference), `expected_native.npz` (the reference in the model's own
//! float types, for numeric findings), `actual.npz` (the faulty library), `meta.json`,
//! `repro.py` (runs the library itself), `snippet.py` (a few lines of `onnx.helper` and the
//! library's API), `repro/` (burn: a cargo project calling burn's tensor API), `REPORT.md`;
//! after minimization also `minimized.onnx` with `minimized_*` values, and the documents then
//! describe the minimized model.
//!
//! A new bundle is written in a temporary directory renamed into place; later files are
//! written atomically, `meta.json` last. The documents are rendered from the files on disk
//! ([`render_docs`]); `meta.json` follows every hit, the documents (whose rendering reads and
//! types the whole model) at most every [`DOCS_EVERY`] and at the end of a session.
use crate::campaign::minimizer::{Done, MinimizedInfo};

/// A bundle's documents are renewed for new hits at most this often during a campaign.
pub const DOCS_EVERY: Duration = Duration::from_secs(60);
use crate::environment::{self, Environment};
use crate::findings::{Seen, SigEntry};
use anyhow::{Context, Result};
use mutagraph_backends::backend::Stage;
use mutagraph_backends::catalog::{self, Library};
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::value::{HostTensor, NamedValues, Value};
use mutagraph_ir::Model;
use mutagraph_ir::model::write_atomic;
use mutagraph_mutators::mutation::Record;
use mutagraph_oracles::bundle::describe::{focus, shown_values, trigger_facts};
use mutagraph_oracles::bundle::snippet::{Api, python_snippet};
use mutagraph_oracles::bundle::{
    BackendStatus, Comparison, Minimization, ModelDescription, NodeLine, Provenance, ReportSpec,
    ReproSpec, ValueLine, render_report_md, render_repro_py,
};
use mutagraph_oracles::envelope::Precision;
use mutagraph_oracles::localize::Localization;
use mutagraph_oracles::{Finding, Kind, Layer, MutantRuns, key_phrase};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A new finding, as the campaign knows it.
pub struct Found<'a> {
    /// The finding.
    pub finding: &'a Finding,
    /// Its signature.
    pub signature: &'a str,
    /// The dedup record.
    pub entry: &'a SigEntry,
    /// Localization.
    pub localization: Option<&'a Localization>,
    /// The mutant.
    pub model: &'a [u8],
    /// Its inputs.
    pub inputs: &'a NamedValues,
    /// Their seed.
    pub input_seed: u64,
    /// The runs.
    pub runs: &'a MutantRuns,
    /// The native-precision reference's outputs, when computed.
    pub native: Option<&'a NamedValues>,
    /// Seed model name.
    pub seed: &'a str,
    /// Iteration.
    pub iteration: u64,
    /// Mutation trace from the seed.
    pub trace: &'a [Record],
    /// The campaign configuration.
    pub config: serde_json::Value,
    /// The tolerance.
    pub tolerance: Tolerance,
}

/// One backend's run, in `meta.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunLine {
    /// Backend.
    pub backend: String,
    /// Version.
    pub version: String,
    /// ok / error / crash / ...
    pub status: String,
    /// Failure text.
    pub detail: String,
    /// Run time, ms.
    pub run_ms: f64,
    /// Peak RSS, bytes.
    pub peak_rss: u64,
}

/// What a reproduction checks, in `meta.json` (and `repro.py`'s header).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Reproduce {
    /// The library whose own API reproduces it: `onnxruntime`, `tract`, `burn`, or a
    /// test backend's name.
    pub library: String,
    /// The variants that showed the bug.
    pub showing: Vec<String>,
    /// The variants that ran the model correctly (the unoptimized variant of an optimizer
    /// bug).
    pub clean: Vec<String>,
    /// A phrase of the failure message a reproduction must see (crashes).
    pub expect_error: Option<String>,
    /// Per graph output: (rtol, atol), from the narrowest float type on its path.
    pub tolerances: BTreeMap<String, (f64, f64)>,
    /// (rtol, atol) of the campaign's tolerance.
    pub default_tolerance: (f64, f64),
    /// A steady-state run at least this long reproduces a slowness finding (seconds).
    pub slow_seconds: f64,
}

/// `meta.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Meta {
    /// Directory name.
    pub id: String,
    /// Dedup signature.
    pub signature: String,
    /// Kind.
    pub kind: Kind,
    /// Faulty backends (the variants that showed it).
    pub backends: Vec<String>,
    /// The library, as its maintainers name it (`ONNX Runtime`).
    #[serde(default)]
    pub library: String,
    /// Kernel or optimizer.
    #[serde(default)]
    pub layer: Option<Layer>,
    /// Stage.
    pub stage: Option<Stage>,
    /// Symptom.
    pub symptom: String,
    /// Localized op type.
    pub op_type: Option<String>,
    /// Message.
    pub message: String,
    /// Hits.
    pub hits: u64,
    /// First seen.
    pub first_seen: Seen,
    /// Last seen.
    pub last_seen: Seen,
    /// Hits per set of variants that showed it.
    #[serde(default)]
    pub variants_seen: BTreeMap<String, u64>,
    /// Hits per op.
    #[serde(default)]
    pub ops_seen: BTreeMap<String, u64>,
    /// The finding.
    pub finding: Finding,
    /// Localization on the original model.
    pub localization: Option<Localization>,
    /// Minimization.
    pub minimized: Option<MinimizedInfo>,
    /// The runs on the minimized model.
    #[serde(default)]
    pub minimized_runs: Vec<RunLine>,
    /// The finding as it shows on the minimized model.
    #[serde(default)]
    pub minimized_finding: Option<Finding>,
    /// Seed model.
    pub seed: String,
    /// Iteration.
    pub iteration: u64,
    /// Seed of the inputs.
    pub input_seed: u64,
    /// Mutation operators applied from the seed, in order.
    pub operators: Vec<String>,
    /// The full mutation trace (replayable on `seeds/<seed>.onnx`).
    pub trace: Vec<Record>,
    /// Backend versions.
    pub backend_versions: BTreeMap<String, String>,
    /// The runs.
    pub runs: Vec<RunLine>,
    /// Tolerance name.
    pub tolerance: String,
    /// What a reproduction checks.
    #[serde(default)]
    pub reproduce: Reproduce,
    /// The machine it was seen on.
    #[serde(default)]
    pub environment: Environment,
    /// Campaign configuration.
    pub config: serde_json::Value,
    /// Triage note (filled by hand).
    pub triage: Option<String>,
    /// The root cause's signature, once minimization found the attributes the bug needs
    /// ([`Finding::root_signature`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_signature: Option<String>,
    /// Those attributes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trigger: Vec<String>,
    /// Other signatures found to be this bundle's root cause (their bundles are under
    /// `merged/`, their hits counted here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// For a bundle under `merged/`: the bundle it was merged into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_into: Option<String>,
    /// For a bundle under `unconfirmed/`: what a fresh run of its model and inputs showed
    /// (each finding's verdict and signature; empty: nothing), the filed finding not among
    /// them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_shown_again: Option<Vec<String>>,
}

fn run_lines(runs: &MutantRuns) -> Vec<RunLine> {
    runs.runs
        .iter()
        .map(|r| RunLine {
            backend: r.backend.clone(),
            version: r.version.clone(),
            status: r.outcome.status().to_string(),
            detail: r.outcome.detail(),
            run_ms: r.run_ms,
            peak_rss: r.peak_rss,
        })
        .collect()
}

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(v)?;
    write_atomic(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))
}

fn tensors(values: &NamedValues) -> Vec<(String, HostTensor)> {
    values
        .iter()
        .filter_map(|(n, v)| Some((n.clone(), v.tensor()?.clone())))
        .collect()
}

fn write_npz(path: &Path, values: &NamedValues) -> Result<()> {
    mutagraph_oracles::bundle::write_npz(path, &tensors(values))?;
    Ok(())
}

fn w(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// Writes inputs and every backend's outputs: `<prefix>inputs.npz`, `<prefix>inputs/`,
/// `<prefix>expected.npz`, `<prefix>expected_native.npz`, `<prefix>actual.npz`,
/// `<prefix>outputs/<backend>/`.
fn write_values(
    dir: &Path,
    prefix: &str,
    inputs: &NamedValues,
    runs: &MutantRuns,
    native: Option<&NamedValues>,
    faulty: &str,
) -> Result<()> {
    write_npz(&dir.join(format!("{prefix}inputs.npz")), inputs)?;
    let idir = dir.join(format!("{prefix}inputs"));
    std::fs::create_dir_all(&idir).with_context(|| format!("creating {}", idir.display()))?;
    for (i, (name, v)) in inputs.iter().enumerate() {
        w(&idir.join(format!("input_{i}.pb")), &v.encode(name))?;
    }
    if let Some(o) = runs.reference_outputs() {
        write_npz(&dir.join(format!("{prefix}expected.npz")), o)?;
    }
    if let Some(n) = native {
        write_npz(&dir.join(format!("{prefix}expected_native.npz")), n)?;
    }
    for r in &runs.runs {
        if let Some(o) = r.outcome.outputs() {
            let d = dir.join(format!("{prefix}outputs")).join(&r.backend);
            std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
            for (i, (name, v)) in o.iter().enumerate() {
                w(&d.join(format!("output_{i}.pb")), &v.encode(name))?;
            }
            if r.backend == faulty {
                write_npz(&dir.join(format!("{prefix}actual.npz")), o)?;
            }
        }
    }
    Ok(())
}

/// The library key `repro.py` runs (`onnxruntime`, `tract`, `burn`) for a backend.
fn repro_library(backend: &str) -> String {
    match catalog::library(backend) {
        Library::OnnxRuntime => "onnxruntime".into(),
        Library::Tract => "tract".into(),
        Library::Burn => "burn".into(),
        _ => backend.into(),
    }
}

/// What a reproduction of `f` on `model` checks.
fn reproduce_info(f: &Finding, model: &[u8], tol: Tolerance, runs: &MutantRuns) -> Reproduce {
    let precision = Model::from_bytes(model)
        .map(|mut m| {
            mutagraph_ir::infer::infer_model(&mut m, Default::default());
            Precision::of(&m, tol)
        })
        .unwrap_or_else(|_| Precision::flat(tol));
    let mut tolerances = BTreeMap::new();
    if let Some(outs) = runs.reference_outputs() {
        for (name, _) in outs {
            let t = precision.for_value(name);
            tolerances.insert(name.clone(), (t.rtol, t.atol));
        }
    }
    let faulty = f.backends.first().cloned().unwrap_or_default();
    let slow_seconds = if f.kind == Kind::Slow {
        runs.runs
            .iter()
            .chain(&runs.reruns)
            .filter(|r| r.backend == faulty)
            .map(|r| r.run_ms)
            .fold(f64::INFINITY, f64::min)
            / 1e3
            * 0.5
    } else {
        0.0
    };
    Reproduce {
        library: repro_library(&faulty),
        showing: f.backends.clone(),
        clean: f
            .variants
            .iter()
            .filter(|(_, shows)| !shows)
            .map(|(n, _)| n.clone())
            .collect(),
        expect_error: match f.kind {
            Kind::Crash => key_phrase(&f.message),
            // a wrong shape upstream of a failure: the library shows it by that failure
            Kind::Inconsistency => f
                .message
                .split_once("; downstream: ")
                .and_then(|(_, failure)| key_phrase(failure)),
            _ => None,
        },
        tolerances,
        default_tolerance: (tol.rtol, tol.atol),
        slow_seconds: if slow_seconds.is_finite() {
            slow_seconds.max(mutagraph_oracles::checks::SLOW_MIN_MS / 1e3)
        } else {
            0.0
        },
    }
}

/// Removes what [`write_new`] left of a bundle it could not finish (its temporary directory).
pub fn discard_new(dir: &Path) {
    let _ = std::fs::remove_dir_all(tmp_dir(dir));
}

/// The directory [`write_new`] fills before renaming it to `dir`.
fn tmp_dir(dir: &Path) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.with_file_name(format!(".tmp-{name}"))
}

/// A new bundle, written in a temporary directory renamed to `dir`.
pub fn write_new(dir: &Path, f: &Found) -> Result<()> {
    let tmp = tmp_dir(dir);
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).with_context(|| format!("removing {}", tmp.display()))?;
    }
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    w(&tmp.join("original.onnx"), f.model)?;
    let faulty = f.finding.backends[0].as_str();
    write_values(&tmp, "", f.inputs, f.runs, f.native, faulty)?;
    let meta = Meta {
        id: f.entry.id.clone(),
        signature: f.signature.to_string(),
        kind: f.finding.kind,
        backends: f.finding.backends.clone(),
        library: catalog::library(faulty).display().to_string(),
        layer: f.finding.layer,
        stage: f.finding.stage,
        symptom: f.finding.symptom.clone(),
        op_type: f.finding.op_type().map(String::from),
        message: f.finding.message.clone(),
        hits: f.entry.hits,
        first_seen: f.entry.first_seen.clone(),
        last_seen: f.entry.last_seen.clone(),
        variants_seen: f.entry.variants.clone(),
        ops_seen: f.entry.ops.clone(),
        finding: f.finding.clone(),
        localization: f.localization.cloned(),
        minimized: None,
        minimized_runs: Vec::new(),
        minimized_finding: None,
        seed: f.seed.to_string(),
        iteration: f.iteration,
        input_seed: f.input_seed,
        operators: f.trace.iter().map(|r| r.operator.clone()).collect(),
        trace: f.trace.to_vec(),
        backend_versions: f
            .runs
            .runs
            .iter()
            .map(|r| (r.backend.clone(), r.version.clone()))
            .collect(),
        runs: run_lines(f.runs),
        tolerance: f.tolerance.name.to_string(),
        reproduce: reproduce_info(f.finding, f.model, f.tolerance, f.runs),
        environment: environment::current().clone(),
        config: f.config.clone(),
        triage: None,
        root_signature: None,
        trigger: Vec::new(),
        aliases: Vec::new(),
        merged_into: None,
        not_shown_again: None,
    };
    render_docs(&tmp, &meta)?;
    write_json(&tmp.join("meta.json"), &meta)?;
    if dir.exists() {
        // A bundle of an iteration a kill kept from being committed: this one replaces it.
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::rename(&tmp, dir).with_context(|| format!("renaming {}", tmp.display()))
}

/// Reads a bundle's `meta.json`.
pub fn read_meta(dir: &Path) -> Result<Meta> {
    let p = dir.join("meta.json");
    let text = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
    serde_json::from_slice(&text).with_context(|| format!("parsing {}", p.display()))
}

/// Updates hit counts, variants, ops and last-seen time, and renders the documents again.
pub fn update_hits(dir: &Path, e: &SigEntry) -> Result<()> {
    let mut meta = read_meta(dir)?;
    meta.hits = e.hits;
    meta.last_seen = e.last_seen.clone();
    meta.variants_seen = e.variants.clone();
    meta.ops_seen = e.ops.clone();
    meta.aliases = e.aliases.clone();
    write_json(&dir.join("meta.json"), &meta)
}

/// Renders a bundle's documents again from its files (after [`update_hits`]: the hits they
/// show).
pub fn renew_docs(dir: &Path) -> Result<()> {
    render_docs(dir, &read_meta(dir)?)
}

/// Marks a bundle as merged into the bundle `into` (same root cause, `root`).
pub fn note_merged(dir: &Path, into: &str, root: &str) -> Result<()> {
    let mut meta = read_meta(dir)?;
    meta.merged_into = Some(into.to_string());
    meta.root_signature = Some(root.to_string());
    write_json(&dir.join("meta.json"), &meta)
}

/// Records in a bundle's `meta.json` that a fresh run of its model and inputs did not show
/// the finding, and what that run showed instead.
pub fn note_not_shown(dir: &Path, shown: &[String]) -> Result<()> {
    let mut meta = read_meta(dir)?;
    meta.not_shown_again = Some(shown.to_vec());
    write_json(&dir.join("meta.json"), &meta)
}

/// Files a minimization result.
pub fn write_minimized(dir: &Path, d: &Done) -> Result<()> {
    let mut meta = read_meta(dir)?;
    w(&dir.join("minimized.onnx"), &d.model)?;
    write_values(
        dir,
        "minimized_",
        &d.inputs,
        &d.runs,
        d.native.as_ref(),
        &meta.backends[0],
    )?;
    meta.minimized = Some(d.info.clone());
    meta.minimized_runs = run_lines(&d.runs);
    meta.minimized_finding = Some(d.finding.clone());
    meta.trigger = d.finding.trigger.clone();
    meta.root_signature = Some(d.finding.root_signature());
    let tol = Tolerance::by_name(&meta.tolerance).unwrap_or(Tolerance::APPROXIMATE);
    let mut repro = reproduce_info(&d.finding, &d.model, tol, &d.runs);
    if repro.expect_error.is_none() {
        repro.expect_error = meta.reproduce.expect_error.clone();
    }
    meta.reproduce = repro;
    render_docs(dir, &meta)?;
    write_json(&dir.join("meta.json"), &meta)
}

/// The model as the report lists it: inputs, one line per node, outputs.
pub fn describe_model(m: &Model, file: &str) -> ModelDescription {
    let ty = |n: &str| m.graph.value_type(n).to_string();
    let mut d = ModelDescription {
        file: file.into(),
        opset: m.default_opset().to_string(),
        ..Default::default()
    };
    for i in m.graph.real_inputs() {
        let n = i.name.clone().unwrap_or_default();
        d.inputs.push(ValueLine {
            ty: ty(&n),
            name: n,
        });
    }
    if let Ok(order) = m.graph.topo_order() {
        for id in order {
            let n = m.graph.node(id).expect("listed");
            d.nodes.push(NodeLine {
                op_type: n.op_type.clone(),
                inputs: n
                    .inputs
                    .iter()
                    .map(|i| {
                        if m.graph.initializers.contains_key(i) {
                            format!("{i} (weight {})", ty(i))
                        } else {
                            i.clone()
                        }
                    })
                    .collect(),
                outputs: n
                    .outputs
                    .iter()
                    .map(|o| format!("{o}: {}", ty(o)))
                    .collect(),
                attributes: n
                    .attributes
                    .iter()
                    .map(|a| format!("{}={}", a.name, a.value.short()))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    for o in &m.graph.outputs {
        let n = o.name.clone().unwrap_or_default();
        d.outputs.push(ValueLine {
            ty: ty(&n),
            name: n,
        });
    }
    d
}

/// Reads an `.npz` of the bundle as named values (missing file: `None`).
fn npz_values(path: &Path) -> Option<NamedValues> {
    if !path.exists() {
        return None;
    }
    let arrays = mutagraph_oracles::bundle::read_npz(path).ok()?;
    Some(
        arrays
            .into_iter()
            .map(|(n, t)| (n, Value::Tensor(t)))
            .collect(),
    )
}

/// Expected vs actual per output, the differing elements first.
fn comparisons(
    want: &NamedValues,
    native: Option<&NamedValues>,
    got: &NamedValues,
    reproduce: &Reproduce,
) -> Vec<Comparison> {
    let mut out = Vec::new();
    for (name, wv) in want {
        let Some((_, gv)) = got.iter().find(|(g, _)| g == name) else {
            continue;
        };
        let (Some(e), Some(a)) = (wv.tensor(), gv.tensor()) else {
            continue;
        };
        let n = native
            .and_then(|nv| nv.iter().find(|(k, _)| k == name))
            .and_then(|(_, v)| v.tensor());
        let (rtol, atol) = reproduce
            .tolerances
            .get(name)
            .copied()
            .unwrap_or(reproduce.default_tolerance);
        if e.shape != a.shape {
            out.push(Comparison {
                output: name.clone(),
                expected: format!("shape {:?}", e.shape),
                actual: format!("shape {:?}", a.shape),
                max_abs: None,
                wrong: None,
            });
            continue;
        }
        let (Some(ev), Some(av)) = (e.to_f64s(), a.to_f64s()) else {
            continue;
        };
        let nv = n.and_then(|t| t.to_f64s()).filter(|v| v.len() == ev.len());
        let float = e.dtype.is_float();
        let tol = Tolerance {
            name: "report",
            atol: if float || atol >= 1.0 { atol } else { 0.0 },
            rtol: if float { rtol } else { 0.0 },
        };
        let bad: Vec<usize> = (0..ev.len())
            .filter(|&i| {
                let z = nv.as_ref().map_or(ev[i], |v| v[i]);
                !mutagraph_backends::compare::envelope_holds(ev[i], z, av[i], tol)
            })
            .collect();
        let max_abs = ev
            .iter()
            .zip(&av)
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        let fmt = |x: f64| {
            if e.dtype.is_float() {
                format!("{x:.6}")
            } else {
                format!("{}", x as i64)
            }
        };
        let show = |v: &[f64]| -> String {
            let idx: Vec<usize> = if bad.is_empty() {
                (0..v.len().min(6)).collect()
            } else {
                bad.iter().copied().take(6).collect()
            };
            idx.iter()
                .map(|&i| format!("[{i}] {}", fmt(v[i])))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push(Comparison {
            output: name.clone(),
            expected: show(&ev),
            actual: show(&av),
            max_abs: Some(max_abs),
            wrong: Some((bad.len(), ev.len())),
        });
    }
    out
}

/// The title of the report: the library, the op, what goes wrong and its trigger.
fn title(meta: &Meta, f: &Finding, op: Option<&str>, facts: &[String]) -> String {
    let lib = if meta.library.is_empty() {
        meta.backends[0].clone()
    } else {
        meta.library.clone()
    };
    let what = match (meta.kind, f.symptom_class()) {
        _ if f.gap.is_some() => {
            let g = f.gap.clone().unwrap_or_default();
            let ops: Vec<&str> = meta.ops_seen.keys().map(String::as_str).collect();
            return format!(
                "{lib}: no support for element type {g} ({}), which ONNX allows",
                if ops.is_empty() {
                    op.unwrap_or("?").to_string()
                } else {
                    ops.join(", ")
                }
            );
        }
        (Kind::Crash, _) => match key_phrase(&f.message) {
            Some(k) => format!("fails: {k}"),
            None => "fails on a valid model".into(),
        },
        (Kind::Inconsistency, "shape") => "gives an output of the wrong shape".into(),
        (Kind::Inconsistency, _) => "gives wrong values".into(),
        (Kind::Nan, _) => "gives NaN/Inf where the result is finite".into(),
        (Kind::Hang, _) => "does not finish".into(),
        (Kind::Slow, _) => "is far slower than other libraries".into(),
        (Kind::Memory, _) => "uses far more memory than other libraries".into(),
        (Kind::Flaky, _) => "gives different results on identical runs".into(),
    };
    let layer = match meta.layer {
        Some(Layer::Optimizer) => " with graph optimizations",
        _ => "",
    };
    let mut t = match op {
        Some(op) => format!("{lib}: {op}{layer} {what}"),
        None => format!("{lib}{layer} {what}"),
    };
    let facts: Vec<&String> = facts.iter().take(4).collect();
    if !facts.is_empty() {
        t.push_str(&format!(
            " ({})",
            facts
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    t
}

/// The spec clauses at stake, in our words.
fn spec_points(meta: &Meta, f: &Finding, model: &Model, op: Option<&str>) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(op) = op {
        let opset = model.default_opset();
        v.push(format!(
            "{op}, as defined at opset {opset}: https://onnx.ai/onnx/operators/onnx__{op}.html"
        ));
        if let (Some(g), Some(spec)) = (
            &f.gap,
            mutagraph_ir::registry::Registry::global().get("", op),
        ) && let Some(allowed) = spec.input_allowed_at(0, opset)
        {
            v.push(format!(
                "Its first input may be any of {}: {g} is among them.",
                allowed
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    v.push(
        "The model is valid by ONNX's rules: it passes onnx.checker with full, strict shape \
         inference."
            .into(),
    );
    if f.kind.is_numeric() {
        v.push(
            "The expected values follow the operator's definition, computed in float64 and \
             again in the model's own float types (function bodies step by step); the result is \
             outside both, beyond the tolerance of the narrowest float type involved."
                .into(),
        );
    }
    let others: Vec<&String> = f
        .witnesses
        .iter()
        .filter(|w| !catalog::is_reference(w))
        .collect();
    if !f.kind.is_numeric() && meta.kind != Kind::Slow {
        if others.is_empty() {
            v.push(
                "No other library's unoptimized build could run this model here; the spec \
                 clauses above make it runnable, and mutagraph's interpreter of ONNX's \
                 definitions runs it."
                    .into(),
            );
        } else {
            v.push(format!(
                "Other implementations run it without error: {}.",
                others
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    if meta.layer == Some(Layer::Optimizer) {
        let clean: Vec<&str> = meta.reproduce.clean.iter().map(String::as_str).collect();
        v.push(format!(
            "With graph optimizations off ({}) the same model gives the expected result: \
             an optimization pass changes what the model computes.",
            clean.join(", ")
        ));
    }
    v
}

/// Writes `repro/` (a cargo project calling burn's tensor API the way the interpreter ran the
/// blamed node `node`) when the op is one the generator covers; returns its `main.rs`.
#[cfg(feature = "burn")]
#[allow(clippy::too_many_arguments)]
fn burn_project(
    dir: &Path,
    model: &Model,
    node: Option<mutagraph_ir::graph::NodeId>,
    inputs: &NamedValues,
    expected: Option<&NamedValues>,
    rp: &Reproduce,
    title: &str,
    symptom: &str,
) -> Result<Option<String>> {
    use mutagraph_backends::burn::repro::{Expect, project};
    // A model of several nodes (the minimizer keeps what the bug needs upstream): the blamed
    // node alone, fed the values the reference computes for it.
    let alone;
    let (model, inputs, expected) = match (model.graph.node_count(), node) {
        (n, Some(id)) if n > 1 => {
            let Some(a) = mutagraph_oracles::localize::node_alone(model, id, inputs) else {
                return Ok(None);
            };
            alone = a;
            (&alone.0, &alone.1, Some(&alone.2))
        }
        _ => (model, inputs, expected),
    };
    let Some((name, want)) = expected
        .and_then(|e| e.first())
        .and_then(|(n, v)| Some((n.clone(), v.tensor()?.clone())))
    else {
        return Ok(None);
    };
    let tolerance = rp
        .tolerances
        .get(&name)
        .copied()
        .unwrap_or(rp.default_tolerance);
    let Some(p) = project(
        model,
        inputs,
        &Expect {
            expected: &want,
            tolerance,
            symptom,
            title,
        },
    ) else {
        return Ok(None);
    };
    let src = dir.join("repro").join("src");
    std::fs::create_dir_all(&src).with_context(|| format!("creating {}", src.display()))?;
    w(
        &dir.join("repro").join("Cargo.toml"),
        p.cargo_toml.as_bytes(),
    )?;
    w(&src.join("main.rs"), p.main_rs.as_bytes())?;
    Ok(Some(p.main_rs))
}

#[cfg(not(feature = "burn"))]
#[allow(clippy::too_many_arguments)]
fn burn_project(
    _: &Path,
    _: &Model,
    _: Option<mutagraph_ir::graph::NodeId>,
    _: &NamedValues,
    _: Option<&NamedValues>,
    _: &Reproduce,
    _: &str,
    _: &str,
) -> Result<Option<String>> {
    Ok(None)
}

/// Renders `repro.py`, `snippet.py`, `repro/` (burn) and `REPORT.md` from the bundle's files:
/// the minimized model and its values once minimized, else the original.
pub fn render_docs(dir: &Path, meta: &Meta) -> Result<()> {
    let minimized = dir.join("minimized.onnx").exists();
    let p = if minimized { "minimized_" } else { "" };
    let model_file = if minimized {
        "minimized.onnx"
    } else {
        "original.onnx"
    };
    let bytes = std::fs::read(dir.join(model_file))
        .with_context(|| format!("reading {}", dir.join(model_file).display()))?;
    let mut model =
        Model::from_bytes(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    mutagraph_ir::infer::infer_model(&mut model, Default::default());
    let inputs = npz_values(&dir.join(format!("{p}inputs.npz"))).unwrap_or_default();
    let expected = npz_values(&dir.join(format!("{p}expected.npz")));
    let native = npz_values(&dir.join(format!("{p}expected_native.npz")));
    let actual = npz_values(&dir.join(format!("{p}actual.npz")));
    let has = |n: &str| dir.join(n).exists();
    let rp = &meta.reproduce;
    let faulty = meta.backends[0].clone();
    let finding = if minimized {
        meta.minimized_finding.as_ref().unwrap_or(&meta.finding)
    } else {
        &meta.finding
    };
    let loc_value = finding.location.as_ref().map(|l| l.value.clone());
    let node = focus(&model, loc_value.as_deref());
    let op = meta
        .minimized
        .as_ref()
        .and_then(|m| m.op_type.clone())
        .or(meta.op_type.clone())
        .or_else(|| node.map(|n| n.op_type.clone()));
    let facts = node
        .map(|n| trigger_facts(&model, n, &inputs))
        .unwrap_or_default();
    let title = title(meta, finding, op.as_deref(), &facts);
    let repro = ReproSpec {
        title: title.clone(),
        kind: meta.kind.name().into(),
        symptom: finding.symptom_class().into(),
        library: rp.library.clone(),
        showing: rp.showing.clone(),
        clean: rp.clean.clone(),
        model_file: model_file.into(),
        inputs_npz: format!("{p}inputs.npz"),
        expected_npz: has(&format!("{p}expected.npz")).then(|| format!("{p}expected.npz")),
        expected_native_npz: has(&format!("{p}expected_native.npz"))
            .then(|| format!("{p}expected_native.npz")),
        tolerances: rp
            .tolerances
            .iter()
            .map(|(n, (r, a))| (n.clone(), *r, *a))
            .collect(),
        default_tolerance: rp.default_tolerance,
        expect_error: rp.expect_error.clone(),
        slow_seconds: rp.slow_seconds,
    };
    w(&dir.join("repro.py"), render_repro_py(&repro).as_bytes())?;
    let api = match rp.library.as_str() {
        "onnxruntime" => Some(Api::OnnxRuntime {
            optimized: rp.showing.iter().all(|b| catalog::is_optimized(b)),
        }),
        "tract" => Some(Api::Tract),
        _ => None,
    };
    let snippet = api.and_then(|api| {
        python_snippet(
            &model,
            model_file,
            &inputs,
            &format!("{p}inputs.npz"),
            expected.as_ref(),
            api,
        )
    });
    if let Some(s) = &snippet {
        w(&dir.join("snippet.py"), s.as_bytes())?;
    }
    let burn_main = if rp.library == "burn" {
        burn_project(
            dir,
            &model,
            node.map(|n| n.id),
            &inputs,
            expected.as_ref(),
            rp,
            &title,
            finding.symptom_class(),
        )?
    } else {
        None
    };

    let mut facts_lines = vec![(
        "Library".to_string(),
        format!(
            "{} {}",
            meta.library,
            meta.backend_versions
                .get(&faulty)
                .cloned()
                .unwrap_or_default()
        ),
    )];
    let mut shown: Vec<String> = Vec::new();
    for (n, s) in &finding.variants {
        shown.push(format!("{n}: {}", if *s { "shows it" } else { "correct" }));
    }
    if !shown.is_empty() {
        facts_lines.push(("Configurations".into(), shown.join("; ")));
    }
    if let Some(op) = &op {
        facts_lines.push(("Operator".into(), op.clone()));
    }
    if let Some(s) = meta.stage {
        facts_lines.push(("Fails at".into(), s.to_string()));
    }
    if !meta.trigger.is_empty() {
        facts_lines.push(("Needs".into(), meta.trigger.join(", ")));
    }
    if !meta.aliases.is_empty() {
        facts_lines.push((
            "Also seen as".into(),
            format!(
                "{} other signature{} with the same root cause (their bundles are in merged/)",
                meta.aliases.len(),
                if meta.aliases.len() == 1 { "" } else { "s" }
            ),
        ));
    }
    let summary = {
        let what = match meta.kind {
            Kind::Crash => format!(
                "{} fails on a valid model{} where other implementations run it.",
                meta.library,
                op.as_ref()
                    .map(|o| format!(" at its {o} node"))
                    .unwrap_or_default()
            ),
            Kind::Nan => format!(
                "{} returns NaN or infinite values where ONNX's definition gives finite ones.",
                meta.library
            ),
            Kind::Inconsistency if finding.symptom_class() == "shape" => format!(
                "{} returns an output whose shape differs from the one ONNX's definition gives.",
                meta.library
            ),
            Kind::Inconsistency => format!(
                "{} returns values that differ from ONNX's definition beyond rounding.",
                meta.library
            ),
            _ => format!("{}: {}", meta.library, finding.message),
        };
        let trig = if facts.is_empty() {
            String::new()
        } else {
            format!(" It shows with {}.", facts.join(", "))
        };
        let needs = match meta.trigger.len() {
            0 => String::new(),
            1 => format!(
                " The attribute {} is what it needs: without it, {} is right.",
                meta.trigger[0], meta.library
            ),
            _ => format!(
                " It needs each of {}: without any one of them, {} is right.",
                meta.trigger
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                meta.library
            ),
        };
        format!("{what}{trig}{needs}")
    };
    let others = {
        let runs = if meta.minimized_runs.is_empty() {
            &meta.runs
        } else {
            &meta.minimized_runs
        };
        runs.iter()
            .filter(|r| !meta.backends.contains(&r.backend) && !catalog::is_reference(&r.backend))
            .map(|r| BackendStatus {
                name: r.backend.clone(),
                version: r.version.clone(),
                status: match r.status.as_str() {
                    "ok" => "runs it".to_string(),
                    s => format!("{s}: {}", r.detail.chars().take(200).collect::<String>()),
                },
            })
            .collect()
    };
    let mut steps = Vec::new();
    match rp.library.as_str() {
        "onnxruntime" => steps.push((
            "With ONNX Runtime's Python package".to_string(),
            "pip install onnxruntime numpy\npython repro.py".to_string(),
        )),
        "tract" => steps.push((
            "With tract's Python package (the same version)".to_string(),
            format!(
                "pip install tract=={} numpy onnx\npython repro.py",
                meta.backend_versions
                    .get(&faulty)
                    .cloned()
                    .unwrap_or_default()
            ),
        )),
        "burn" => steps.push((
            "With burn's tensor API (a cargo project in repro/)".to_string(),
            "cd repro && cargo run --release".to_string(),
        )),
        _ => {}
    }
    steps.push((
        "With mutagraph (every backend, the same verdict as the campaign)".into(),
        "mutagraph recheck .".to_string(),
    ));
    let env = &meta.environment;
    let mut environment = vec![("OS".to_string(), env.os.clone())];
    if !env.cpu.is_empty() {
        environment.push(("CPU".into(), env.cpu.clone()));
    }
    if let Some(py) = &env.python {
        environment.push(("Python".into(), py.clone()));
    }
    for (k, v) in &env.packages {
        environment.push((k.clone(), v.clone()));
    }
    for (b, v) in &meta.backend_versions {
        if meta.backends.contains(b) {
            environment.push((format!("backend {b}"), v.clone()));
        }
    }
    if rp.library == "onnxruntime" {
        environment.push(("Execution provider".into(), "CPUExecutionProvider".into()));
    }
    let comparisons = match (&expected, &actual) {
        (Some(e), Some(a)) if meta.kind.is_numeric() => comparisons(e, native.as_ref(), a, rp),
        _ => Vec::new(),
    };
    let snippet_block = snippet
        .map(|s| ("python".to_string(), s))
        .or(burn_main.map(|m| ("rust".to_string(), m)));
    let report = ReportSpec {
        title,
        summary,
        facts: facts_lines,
        spec: spec_points(meta, finding, &model, op.as_deref()),
        snippet: snippet_block,
        model: describe_model(&model, model_file),
        values: shown_values(&model, &inputs),
        comparisons,
        error: (meta.kind == Kind::Crash).then(|| finding.message.clone()),
        steps,
        environment,
        others,
        provenance: Some(Provenance {
            seed: meta.seed.clone(),
            iteration: meta.iteration,
            operators: meta.operators.clone(),
            hits: meta.hits,
            first_seen: format!(
                "{:.1} s (iteration {})",
                meta.first_seen.elapsed_s, meta.first_seen.iteration
            ),
            last_seen: format!(
                "{:.1} s (iteration {})",
                meta.last_seen.elapsed_s, meta.last_seen.iteration
            ),
            variants: meta
                .variants_seen
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
            ops: meta.ops_seen.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        }),
        minimization: meta.minimized.as_ref().map(|m| Minimization {
            nodes_before: m.nodes_before,
            nodes_after: m.nodes_after,
        }),
    };
    w(&dir.join("REPORT.md"), render_report_md(&report).as_bytes())
}
