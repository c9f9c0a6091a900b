//! Bug bundles: one directory per finding signature under `findings/`.
//!
//! `original.onnx`, `inputs.npz` + `inputs/input_<i>.pb`, `outputs/<backend>/output_<i>.pb`,
//! `expected.npz` (the reference), `actual.npz` (the faulty backend), `meta.json`, `repro.py`,
//! `REPORT.md`; after minimization also `minimized.onnx` with `minimized_inputs.npz`,
//! `minimized_expected.npz`, `minimized_actual.npz` and `minimized_inputs/`, and `repro.py` /
//! `REPORT.md` then use the minimized model. Every file is written atomically; `meta.json`
//! last.
use crate::campaign::minimizer::{Done, MinimizedInfo};
use crate::findings::SigEntry;
use anyhow::{Context, Result};
use mutagraph_backends::backend::Stage;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::value::NamedValues;
use mutagraph_ir::Model;
use mutagraph_ir::model::write_atomic;
use mutagraph_mutators::mutation::Record;
use mutagraph_oracles::bundle::{
    BackendStatus, Comparison, LocalizedOp, Minimization, ModelDescription, NodeLine, Provenance,
    ReportSpec, ReproSpec, ValueLine, render_report_md, render_repro_py,
};
use mutagraph_oracles::localize::Localization;
use mutagraph_oracles::{Finding, Kind, MutantRuns};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

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

/// `meta.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Meta {
    /// Directory name.
    pub id: String,
    /// Dedup signature.
    pub signature: String,
    /// Kind.
    pub kind: Kind,
    /// Faulty backends.
    pub backends: Vec<String>,
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
    pub first_seen: crate::findings::Seen,
    /// Last seen.
    pub last_seen: crate::findings::Seen,
    /// The finding.
    pub finding: Finding,
    /// Localization on the original model.
    pub localization: Option<Localization>,
    /// Minimization.
    pub minimized: Option<MinimizedInfo>,
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
    /// Campaign configuration.
    pub config: serde_json::Value,
    /// Triage note (filled by hand).
    pub triage: Option<String>,
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

fn write_npz(path: &Path, values: &NamedValues) -> Result<()> {
    let arrays: Vec<(String, mutagraph_backends::value::HostTensor)> = values
        .iter()
        .filter_map(|(n, v)| Some((n.clone(), v.tensor()?.clone())))
        .collect();
    mutagraph_oracles::bundle::write_npz(path, &arrays)?;
    Ok(())
}

fn w(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// Writes inputs and every backend's outputs: `<prefix>inputs.npz`, `<prefix>inputs/`,
/// `<prefix>expected.npz`, `<prefix>actual.npz`, `<prefix>outputs/<backend>/`.
fn write_values(
    dir: &Path,
    prefix: &str,
    inputs: &NamedValues,
    runs: &MutantRuns,
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

/// A new bundle.
pub fn write_new(dir: &Path, f: &Found) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    w(&dir.join("original.onnx"), f.model)?;
    let faulty = f.finding.backends[0].as_str();
    write_values(dir, "", f.inputs, f.runs, faulty)?;
    let meta = Meta {
        id: f.entry.id.clone(),
        signature: f.signature.to_string(),
        kind: f.finding.kind,
        backends: f.finding.backends.clone(),
        stage: f.finding.stage,
        symptom: f.finding.symptom.clone(),
        op_type: f.finding.op_type().map(String::from),
        message: f.finding.message.clone(),
        hits: f.entry.hits,
        first_seen: f.entry.first_seen.clone(),
        last_seen: f.entry.last_seen.clone(),
        finding: f.finding.clone(),
        localization: f.localization.cloned(),
        minimized: None,
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
        config: f.config.clone(),
        triage: None,
    };
    render_docs(dir, &meta, f.model, f.runs, false, f.tolerance)?;
    write_json(&dir.join("meta.json"), &meta)
}

/// Reads a bundle's `meta.json`.
pub fn read_meta(dir: &Path) -> Result<Meta> {
    let p = dir.join("meta.json");
    let text = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
    serde_json::from_slice(&text).with_context(|| format!("parsing {}", p.display()))
}

/// Updates hit count and last-seen time.
pub fn update_hits(dir: &Path, e: &SigEntry) -> Result<()> {
    let mut meta = read_meta(dir)?;
    meta.hits = e.hits;
    meta.last_seen = e.last_seen.clone();
    write_json(&dir.join("meta.json"), &meta)
}

/// Files a minimization result.
pub fn write_minimized(dir: &Path, d: &Done) -> Result<()> {
    let mut meta = read_meta(dir)?;
    w(&dir.join("minimized.onnx"), &d.model)?;
    write_values(dir, "minimized_", &d.inputs, &d.runs, &meta.backends[0])?;
    meta.minimized = Some(d.info.clone());
    let tol = Tolerance::by_name(&meta.tolerance).unwrap_or(Tolerance::APPROXIMATE);
    render_docs(dir, &meta, &d.model, &d.runs, true, tol)?;
    write_json(&dir.join("meta.json"), &meta)
}

/// The model as the report lists it: inputs, one line per node, outputs.
pub fn describe_model(bytes: &[u8], file: &str) -> ModelDescription {
    let Ok(mut m) = Model::from_bytes(bytes) else {
        return ModelDescription {
            file: file.into(),
            opset: "?".into(),
            ..Default::default()
        };
    };
    mutagraph_ir::infer::infer_model(&mut m, Default::default());
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

fn first_values(v: &mutagraph_backends::value::Value) -> String {
    match v.tensor().and_then(|t| t.to_f64s()) {
        Some(x) => {
            let head: Vec<String> = x.iter().take(6).map(|f| format!("{f:.6}")).collect();
            format!(
                "[{}{}]",
                head.join(", "),
                if x.len() > 6 { ", …" } else { "" }
            )
        }
        None => v.describe(),
    }
}

/// Renders `repro.py` and `REPORT.md` for the original or the minimized model.
fn render_docs(
    dir: &Path,
    meta: &Meta,
    model: &[u8],
    runs: &MutantRuns,
    minimized: bool,
    tol: Tolerance,
) -> Result<()> {
    let p = if minimized { "minimized_" } else { "" };
    let model_file = if minimized {
        "minimized.onnx"
    } else {
        "original.onnx"
    };
    let faulty = meta.backends[0].clone();
    let what = match meta.kind {
        Kind::Crash => "fails on a valid model",
        Kind::Nan => "outputs NaN/Inf where the result is finite",
        Kind::Inconsistency => "computes a wrong result",
        Kind::Hang => "does not finish",
        Kind::Slow => "is much slower than other runtimes",
        Kind::Memory => "uses far more memory than other runtimes",
        Kind::Flaky => "gives different results on identical runs",
    };
    let op = meta
        .minimized
        .as_ref()
        .and_then(|m| m.op_type.clone())
        .or(meta.op_type.clone());
    let title = match &op {
        Some(op) => format!("{faulty}: {op} {what}"),
        None => format!("{faulty} {what}"),
    };
    let has = |n: &str| dir.join(n).exists();
    let repro = ReproSpec {
        title: title.clone(),
        kind: meta.kind.name().into(),
        faulty: meta.backends.clone(),
        model_file: model_file.into(),
        inputs_npz: format!("{p}inputs.npz"),
        expected_npz: has(&format!("{p}expected.npz")).then(|| format!("{p}expected.npz")),
        faulty_npz: has(&format!("{p}actual.npz")).then(|| format!("{p}actual.npz")),
        rtol: tol.rtol,
        atol: tol.atol,
    };
    w(&dir.join("repro.py"), render_repro_py(&repro).as_bytes())?;
    let mut comparisons = Vec::new();
    if let (Some(want), Some(got)) = (
        runs.reference_outputs(),
        runs.runs
            .iter()
            .find(|r| r.backend == faulty)
            .and_then(|r| r.outcome.outputs()),
    ) {
        for (n, wv) in want {
            if let Some((_, gv)) = got.iter().find(|(g, _)| g == n) {
                let m = mutagraph_backends::compare::compare(
                    wv,
                    gv,
                    mutagraph_backends::compare::CompareOptions {
                        tolerance: tol,
                        check_dtype: false,
                    },
                )
                .metrics;
                comparisons.push(Comparison {
                    output: n.clone(),
                    expected: first_values(wv),
                    actual: first_values(gv),
                    max_abs: Some(m.max_abs),
                    max_rel: Some(m.max_rel),
                });
            }
        }
    }
    let mut steps = vec![(
        "With onnxruntime and numpy only".to_string(),
        "pip install onnxruntime numpy\npython repro.py".to_string(),
    )];
    if faulty.starts_with("tract") {
        steps.push((
            "With tract's command line (`cargo install tract`)".into(),
            format!(
                "tract {model_file} {}run --input-from-npz {p}inputs.npz --assert-output-bundle {p}expected.npz",
                if faulty == "tract-opt" { "-O " } else { "" }
            ),
        ));
    }
    steps.push((
        "With mutagraph (any backend)".into(),
        format!("mutagraph run {model_file} --inputs {p}inputs --backends reference,{faulty}"),
    ));
    let loc = meta.localization.as_ref().and_then(|l| {
        let loc = l.location.as_ref()?;
        let r = l
            .max_r
            .as_ref()
            .map(|(v, r)| format!(" The largest change rate R (How-Far Eq. 2) is {r:.3e} at `{v}`."))
            .unwrap_or_default();
        Some(format!(
            "In the original model the first node whose output diverges from the reference is a `{}` (output `{}`{}); its inputs agree.{r}",
            loc.op_type,
            loc.value,
            if loc.attrs.is_empty() {
                String::new()
            } else {
                format!(", {}", loc.attrs)
            }
        ))
    });
    let report = ReportSpec {
        title,
        faulty: faulty.clone(),
        faulty_version: meta
            .backend_versions
            .get(&faulty)
            .cloned()
            .unwrap_or_default(),
        others: runs
            .runs
            .iter()
            .filter(|r| r.backend != faulty)
            .map(|r| BackendStatus {
                name: r.backend.clone(),
                version: r.version.clone(),
                status: match r.outcome.status() {
                    "ok" => "ok".to_string(),
                    s => format!("{s}: {}", r.outcome.detail()),
                },
            })
            .collect(),
        platform: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        kind: meta.kind.name().into(),
        stage: meta.stage.map(|s| s.to_string()),
        summary: format!(
            "{} ({}). {}{}",
            meta.message,
            meta.symptom,
            if meta.kind.is_numeric() {
                "The expected values come from an f64 reference interpreter."
            } else {
                "Other runtimes run the same model and inputs without this failure."
            },
            loc.map(|l| format!(" {l}")).unwrap_or_default()
        ),
        localized: meta
            .localization
            .as_ref()
            .and_then(|l| l.location.as_ref())
            .map(|l| LocalizedOp {
                op_type: l.op_type.clone(),
                node_output: l.value.clone(),
                attributes: l.attrs.clone(),
            }),
        model: describe_model(model, model_file),
        comparisons,
        error: (meta.kind == Kind::Crash).then(|| meta.message.clone()),
        steps,
        provenance: Some(Provenance {
            seed: meta.seed.clone(),
            iteration: meta.iteration,
            operators: meta.operators.clone(),
            hits: meta.hits,
            first_seen: format!("{:.1} s", meta.first_seen.elapsed_s),
            last_seen: format!("{:.1} s", meta.last_seen.elapsed_s),
        }),
        minimization: meta.minimized.as_ref().map(|m| Minimization {
            nodes_before: m.nodes_before,
            nodes_after: m.nodes_after,
        }),
    };
    w(&dir.join("REPORT.md"), render_report_md(&report).as_bytes())
}
