//! One model on every backend of the set: its inputs chosen as the campaign's admission
//! chooses a seed's, each backend run [`Options::repeat`] times in its worker, every pair of
//! backends that both ran compared, and each library that disagrees with the reference
//! localized to its first diverging node.
use super::Options;
use crate::campaign::admission::choose;
use mutagraph_backends::compare::{CompareOptions, Comparison, Tolerance, compare_named};
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Outcome, Pool, PoolError, RunReport};
use mutagraph_ir::Model;
use mutagraph_oracles::Kind;
use mutagraph_oracles::envelope::Precision;
use mutagraph_oracles::localize::{Exposed, Localization, Verdict, localize_with};
use serde::{Deserialize, Serialize};

/// What one model did on the backends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelRow {
    /// The model's name (a zoo name or a path).
    pub model: String,
    /// Nodes of its main graph.
    pub nodes: usize,
    /// The op types of its main graph, sorted.
    pub ops: Vec<String>,
    /// Its inputs, `name: f32[1, 3, 8, 8]`.
    pub inputs: Vec<String>,
    /// How the sizes of its dynamic input dims were chosen, one line per symbol or input.
    pub sizes: Vec<String>,
    /// One entry per backend, in the order of the set.
    pub runs: Vec<BackendRun>,
    /// Every pair of backends that both ran it (the earlier backend of the set first).
    pub pairs: Vec<PairResult>,
    /// Where each library that disagrees with the reference first diverges.
    pub blame: Vec<Blame>,
}

/// One backend's runs of one model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackendRun {
    /// The backend.
    pub backend: String,
    /// `ok`, `unsupported`, `error`, `crash`, `timeout` or `oom`: how its first run ended.
    pub status: String,
    /// Where an error or an unsupported feature showed: `load`, `compile` or `run`.
    pub stage: Option<String>,
    /// The failure in one line (empty when ok); a later run that failed is noted here too.
    pub detail: String,
    /// Its outputs, `name: f32[1, 10]` (when ok).
    pub outputs: Vec<String>,
    /// NaN and infinite elements in its outputs.
    pub nonfinite: usize,
    /// Time of `prepare` in the first run, ms.
    pub prepare_ms: f64,
    /// The median of the runs' `run` times, ms (when ok).
    pub run_ms: Option<f64>,
    /// Each run's `run` time, ms.
    pub runs_ms: Vec<f64>,
    /// Peak resident memory of the worker over the runs, bytes.
    pub peak_rss: u64,
}

impl BackendRun {
    /// Whether the backend produced outputs.
    pub fn ran(&self) -> bool {
        self.status == "ok"
    }
}

/// Two backends' outputs on one model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairResult {
    /// The backend earlier in the set.
    pub a: String,
    /// The other.
    pub b: String,
    /// Whether every output agrees within the tolerance.
    pub agree: bool,
    /// The first disagreement, in words.
    pub reason: Option<String>,
    /// Largest absolute difference.
    pub max_abs: f64,
    /// Largest relative difference.
    pub max_rel: f64,
}

/// Localization of a library's disagreement with the reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Blame {
    /// The library's backend.
    pub backend: String,
    /// `localized`, `unstable` (rounding amplified by the node), `undefined` (values ONNX
    /// leaves open), `not-reproduced` (no node diverges with every value exposed), `failed`.
    pub verdict: String,
    /// The op type of the first diverging node.
    pub op: Option<String>,
    /// The value it produces.
    pub value: Option<String>,
    /// Why, for `undefined` and `failed`.
    pub detail: Option<String>,
}

impl Blame {
    /// `Softmax 'y3' (localized)`, or why nothing was found (`failed: ...`).
    pub fn describe(&self) -> String {
        match (&self.op, &self.value) {
            (Some(op), Some(v)) => format!("{op} '{v}' ({})", self.verdict),
            (Some(op), None) => format!("{op} ({})", self.verdict),
            _ => match &self.detail {
                Some(d) => format!("{}: {d}", self.verdict),
                None => self.verdict.clone(),
            },
        }
    }

    /// Whether the disagreement is attributed to an op (the node was found and is to blame).
    pub fn attributed(&self) -> Option<&str> {
        (self.verdict == "localized")
            .then_some(self.op.as_deref())
            .flatten()
    }
}

/// Runs `model` (read, validated and typed) on the set; `Err` only when a worker cannot be
/// started, `Ok(Err(reason))` when the model is refused (no inputs can be made for it).
pub fn measure(
    pool: &mut Pool,
    opts: &Options,
    name: &str,
    model: &Model,
) -> Result<Result<ModelRow, String>, PoolError> {
    let bytes = model.to_bytes();
    let reference = opts.reference();
    let (inputs, sizes, probe) = match choose_inputs(pool, opts, model, &bytes)? {
        Ok(x) => x,
        Err(why) => return Ok(Err(why)),
    };
    let mut runs = Vec::new();
    let mut outputs: Vec<Option<NamedValues>> = Vec::new();
    let mut probe = probe;
    for (i, b) in opts.backends.iter().enumerate() {
        let first = match probe.take().filter(|_| Some(i) == reference) {
            Some(r) => r,
            None => pool.run(b, &bytes, &inputs)?,
        };
        let (run, out) = repeat(pool, b, &bytes, &inputs, first, opts.repeat)?;
        runs.push(run);
        outputs.push(out);
    }
    let mut pairs = Vec::new();
    for i in 0..opts.backends.len() {
        for j in i + 1..opts.backends.len() {
            if let (Some(x), Some(y)) = (&outputs[i], &outputs[j]) {
                pairs.push(pair(opts, i, j, x, y));
            }
        }
    }
    let blame = match reference {
        Some(r) if opts.localize => localize_all(pool, opts, model, &inputs, r, &pairs)?,
        _ => Vec::new(),
    };
    Ok(Ok(ModelRow {
        model: name.to_string(),
        nodes: model.graph.node_count(),
        ops: mutagraph_mutators::zoo::op_types(model),
        inputs: inputs
            .iter()
            .map(|(n, v)| format!("{n}: {}", v.describe()))
            .collect(),
        sizes,
        runs,
        pairs,
        blame,
    }))
}

/// The inputs, as admission chooses a seed's: the sizes solved from the graph (or
/// `--free-dim`), then, should the reference not run the model there, every size of
/// [`crate::campaign::admission::SIZES`] in turn; `--input-shape` / `--input-value` kept in
/// every case. With a reference in the set, its run at the chosen inputs is returned too (it
/// is its first run). When the reference runs it at none of them, the first inputs are used
/// (the libraries may run what the reference does not).
type Chosen = (NamedValues, Vec<String>, Option<RunReport>);

fn choose_inputs(
    pool: &mut Pool,
    opts: &Options,
    model: &Model,
    bytes: &[u8],
) -> Result<Result<Chosen, String>, PoolError> {
    let mut failed: Option<PoolError> = None;
    let choice = match opts.reference() {
        Some(r) => {
            let mut run_ref = |inputs: &NamedValues| {
                pool.run(&opts.backends[r], bytes, inputs).map_err(|e| {
                    let why = e.to_string();
                    failed = Some(e);
                    why
                })
            };
            choose(
                model,
                opts.sizing,
                &opts.fixed,
                opts.seed,
                Some(&mut run_ref),
            )
        }
        None => choose(model, opts.sizing, &opts.fixed, opts.seed, None),
    };
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(choice.map(|c| {
        let mut sizes = c.chosen.why;
        if let Some(r) = c.chosen.float_range {
            sizes.push(format!("float inputs drawn from [{}, {})", r.0, r.1));
        }
        if let Some(why) = c.refused {
            sizes.push(format!(
                "the reference runs it at none of the inputs tried: {why}"
            ));
        }
        (c.inputs, sizes, c.reference)
    }))
}

/// `first` and `n - 1` more runs of the same model (cached in the worker: `run` time only),
/// while they succeed.
fn repeat(
    pool: &mut Pool,
    backend: &str,
    bytes: &[u8],
    inputs: &NamedValues,
    first: RunReport,
    n: usize,
) -> Result<(BackendRun, Option<NamedValues>), PoolError> {
    let outcome = &first.outcome;
    let stage = match outcome {
        Outcome::Unsupported { stage, .. } | Outcome::Error { stage, .. } => {
            Some(stage.to_string())
        }
        _ => None,
    };
    let out = outcome.outputs().cloned();
    let mut run = BackendRun {
        backend: backend.to_string(),
        status: outcome.status().to_string(),
        stage,
        detail: outcome.detail(),
        outputs: Vec::new(),
        nonfinite: 0,
        prepare_ms: first.prepare_ms,
        run_ms: None,
        runs_ms: vec![first.run_ms],
        peak_rss: first.peak_rss,
    };
    let Some(values) = &out else {
        return Ok((run, None));
    };
    for (name, v) in values {
        run.outputs.push(format!("{name}: {}", v.describe()));
        run.nonfinite += v
            .tensors()
            .iter()
            .map(|t| {
                let (nan, inf) = t.nan_inf_counts();
                nan + inf
            })
            .sum::<usize>();
    }
    for k in 1..n {
        let r = pool.run(backend, bytes, inputs)?;
        run.peak_rss = run.peak_rss.max(r.peak_rss);
        if r.outcome.outputs().is_none() {
            run.detail = format!("run {} of {n}: {}", k + 1, r.outcome.detail());
            break;
        }
        run.runs_ms.push(r.run_ms);
    }
    run.run_ms = super::stats::median(&run.runs_ms);
    Ok((run, out))
}

/// Compares backends `i` and `j` (`i` < `j`). With the reference in the pair its outputs are
/// the expected ones (the tolerance is relative to them); between two libraries both ways must
/// agree, so that the verdict does not depend on the order of the set.
fn pair(opts: &Options, i: usize, j: usize, x: &NamedValues, y: &NamedValues) -> PairResult {
    let o = CompareOptions {
        tolerance: opts.tolerance,
        check_dtype: false,
    };
    let r = opts.reference();
    let c: Comparison = if r == Some(i) {
        compare_named(x, y, o)
    } else if r == Some(j) {
        compare_named(y, x, o)
    } else {
        let c = compare_named(x, y, o);
        if c.ok { compare_named(y, x, o) } else { c }
    };
    PairResult {
        a: opts.backends[i].clone(),
        b: opts.backends[j].clone(),
        agree: c.ok,
        reason: c.reason,
        max_abs: c.metrics.max_abs,
        max_rel: c.metrics.max_rel,
    }
}

/// Localizes each library that disagrees with the reference (backend `r`): the model with
/// every node output exposed runs on the reference, the native-precision reference and the
/// library, and the campaign's localization names the first node outside the envelope.
fn localize_all(
    pool: &mut Pool,
    opts: &Options,
    model: &Model,
    inputs: &NamedValues,
    r: usize,
    pairs: &[PairResult],
) -> Result<Vec<Blame>, PoolError> {
    let reference = &opts.backends[r];
    let suspects: Vec<&str> = pairs
        .iter()
        .filter(|p| !p.agree && (&p.a == reference || &p.b == reference))
        .map(|p| if &p.a == reference { &p.b } else { &p.a }.as_str())
        .filter(|b| !mutagraph_backends::catalog::is_reference(b))
        .collect();
    localize_suspects(pool, reference, opts.tolerance, model, inputs, &suspects)
}

/// Localizes each of the `suspects` (backends that disagree with `reference` on `model`): the
/// model with every node output exposed runs on the reference, the native-precision reference
/// and the suspect, and the campaign's localization names the first node outside the envelope.
pub fn localize_suspects(
    pool: &mut Pool,
    reference: &str,
    tolerance: Tolerance,
    model: &Model,
    inputs: &NamedValues,
    suspects: &[&str],
) -> Result<Vec<Blame>, PoolError> {
    if suspects.is_empty() {
        return Ok(Vec::new());
    }
    let failed = |backend: &str, why: String| Blame {
        backend: backend.to_string(),
        verdict: "failed".into(),
        op: None,
        value: None,
        detail: Some(why),
    };
    let exposed = match mutagraph_ir::slice::expose_all(model) {
        Ok((m, _)) => m.to_bytes(),
        Err(e) => {
            let why = format!("the model with every value exposed cannot be built: {e}");
            return Ok(suspects.iter().map(|b| failed(b, why.clone())).collect());
        }
    };
    let run = |pool: &mut Pool, b: &str| -> Result<Result<NamedValues, String>, PoolError> {
        let rep = pool.run(b, &exposed, inputs)?;
        Ok(match rep.outcome {
            Outcome::Ok(o) => Ok(o),
            o => Err(format!("{b} on the exposed model: {}", o.detail())),
        })
    };
    let want = run(pool, reference)?;
    let native = run(pool, "reference-native")?.ok();
    let precision = Precision::of(model, tolerance);
    let mut out = Vec::new();
    for &b in suspects {
        let got = run(pool, b)?;
        let (w, g) = match (&want, got) {
            (Ok(w), Ok(g)) => (w, g),
            (Err(e), _) => {
                out.push(failed(b, e.clone()));
                continue;
            }
            (_, Err(e)) => {
                out.push(failed(b, e));
                continue;
            }
        };
        let ex = Exposed {
            reference: w,
            native: native.as_ref(),
            backend: &g,
        };
        let l = localize_with(model, Kind::Inconsistency, inputs, &ex, &precision, pool);
        out.push(blame(b, l));
    }
    Ok(out)
}

fn blame(backend: &str, l: Localization) -> Blame {
    let (verdict, detail) = match l.verdict {
        Verdict::Localized => ("localized", None),
        Verdict::Unstable => ("unstable", None),
        Verdict::Undefined(why) => ("undefined", Some(why)),
        Verdict::NotReproduced => ("not-reproduced", None),
        Verdict::Failed(why) => ("failed", Some(why)),
    };
    Blame {
        backend: backend.to_string(),
        verdict: verdict.into(),
        op: l.location.as_ref().map(|x| x.op_type.clone()),
        value: l.location.map(|x| x.value),
        detail,
    }
}
