//! Localization (LEMON / Muffin style): the model is re-run with every intermediate value
//! exposed as an output ([`mutagraph_ir::slice::expose_all`]) on the faulty
//! backend and the reference; the first node (in topological order) whose output diverges is
//! blamed. Before blaming it, the reference re-computes that node alone on the *backend's*
//! input values: when it then reproduces the backend's output, the divergence is rounding of
//! the inputs amplified by the op (a Floor at an edge, a comparison of near-equal values), not
//! a bug of the op, and the finding is `unstable` (a false positive the campaign drops).
//!
//! The change rate R of the How-Far study (Eq. 1-2) is computed for every node:
//! `R = |D - D_pre| / (D_pre + 1e-7)` with `D` the mean absolute difference of the node's
//! output and `D_pre` the largest `D` among its inputs.
mod cancellation;
pub(crate) use cancellation::unit_of;

use crate::checks::mean_abs_diff;
use crate::envelope::{Precision, inside, new_nonfinite};
use crate::finding::{Kind, Location};
use mutagraph_backends::backend::{Backend, BackendError};
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::reference::Reference;
use mutagraph_backends::value::{HostTensor, NamedValues};
use mutagraph_backends::worker::{Outcome, Pool, PoolError};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::{Node, NodeId};
use mutagraph_ir::model::Model;
use mutagraph_ir::registry::{Registry, Traits};
use mutagraph_ir::slice::{expose_all, extract};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// How-Far's threshold on the change rate R.
pub const R_THRESHOLD: f64 = 1e3;

/// The attributes that switch an op's algorithm (as opposed to its geometry or flags such as
/// `keepdims`): they are part of a localized finding's signature. Kept short on purpose: one
/// bug reached through two flag values is still one report.
pub const KEY_ATTRS: &[&str] = &[
    "mode",
    "direction",
    "coordinate_transformation_mode",
    "nearest_mode",
    "layout",
    "to",
];

/// What localization concluded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The first diverging node was found and is to blame.
    Localized,
    /// The first diverging node, run by the reference on the backend's inputs, gives the
    /// backend's output: amplified rounding, not a bug.
    Unstable,
    /// The blamed node was given values for which ONNX does not pin its result down (NaN
    /// reaching an op whose NaN handling is unspecified, a float-to-integer Cast of values
    /// outside the target's range): backends may differ without a bug. The reason says which.
    Undefined(String),
    /// With every intermediate exposed, the outputs agree (the exposed model runs differently,
    /// e.g. without fusion).
    NotReproduced,
    /// The exposed model could not be built or run.
    Failed(String),
}

/// One node output compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValueDiff {
    /// The value.
    pub value: String,
    /// Its producer's op type.
    pub op_type: String,
    /// Mean absolute difference to the reference (How-Far's D).
    pub d: Option<f64>,
    /// How-Far's change rate R.
    pub r: Option<f64>,
    /// Beyond the tolerance (or new NaN/Inf, for NaN findings).
    pub diverges: bool,
}

/// The result of localization.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Localization {
    /// The verdict.
    pub verdict: Verdict,
    /// The blamed node (also set for `unstable`, naming the node that amplified rounding).
    pub location: Option<Location>,
    /// Node outputs in topological order up to and including the first divergence.
    pub values: Vec<ValueDiff>,
    /// The value with the largest change rate, and R.
    pub max_r: Option<(String, f64)>,
}

/// The key attributes of a node, `name=value` comma-separated, in [`KEY_ATTRS`] order; an
/// attribute written with its default value is left out (it is the same node as one without).
pub fn key_attrs(node: &Node) -> String {
    let spec = mutagraph_ir::registry::Registry::global().for_node(node);
    let mut parts = Vec::new();
    for k in KEY_ATTRS {
        if let Some(a) = node.attributes.iter().find(|a| a.name == *k) {
            let default = spec
                .and_then(|s| s.attrs.iter().find(|d| d.name == *k))
                .and_then(|d| d.default.as_ref());
            if default == Some(&a.value) {
                continue;
            }
            parts.push(format!("{k}={}", a.value.short()));
        }
    }
    parts.join(",")
}

/// Whether `got` diverges from the envelope of `want` (f64 reference) and `native` for a `kind`
/// finding. Outside NaN findings a NaN/Inf that only `got` holds counts too.
pub(crate) fn diverges(
    kind: Kind,
    want: &NamedValues,
    native: Option<&NamedValues>,
    got: &NamedValues,
    precision: &Precision,
) -> bool {
    match kind {
        Kind::Nan => new_nonfinite(want, native, got).0 > 0,
        _ => {
            inside(want, native, got, precision).is_err() || new_nonfinite(want, native, got).0 > 0
        }
    }
}

fn pick(values: &NamedValues, name: &str) -> Option<NamedValues> {
    values
        .iter()
        .find(|(n, _)| n == name)
        .map(|(n, v)| vec![(n.clone(), v.clone())])
}

/// How localization runs the reference on the small models it builds (every node output
/// exposed, one node alone, nudged inputs). In a campaign that is a worker of the triage's pool
/// ([`Pool`]), as every other execution: a hang or a crash there is a failed run, never a
/// stalled campaign. [`InProcess`] runs it in this process.
pub trait ReferenceRunner {
    /// The reference's outputs on `model` (`native`: in the model's own element types, as
    /// `reference-native`; else `reference`).
    fn run_reference(
        &mut self,
        model: &Model,
        inputs: &NamedValues,
        native: bool,
    ) -> Result<NamedValues, ReferenceError>;
}

impl ReferenceRunner for Pool {
    fn run_reference(
        &mut self,
        model: &Model,
        inputs: &NamedValues,
        native: bool,
    ) -> Result<NamedValues, ReferenceError> {
        let backend = if native {
            "reference-native"
        } else {
            "reference"
        };
        let r = self.run(backend, &model.to_bytes(), inputs)?;
        match r.outcome {
            Outcome::Ok(o) => Ok(o),
            outcome => Err(ReferenceError::Failed { backend, outcome }),
        }
    }
}

/// Another backend standing in for the reference (the unoptimized level of a library, where
/// the reference lacks an op of the model), run in the pool; it has no native mode.
pub struct StandIn<'p> {
    /// The pool.
    pub pool: &'p mut Pool,
    /// The backend, as the catalog names it.
    pub backend: &'static str,
}

impl ReferenceRunner for StandIn<'_> {
    fn run_reference(
        &mut self,
        model: &Model,
        inputs: &NamedValues,
        _native: bool,
    ) -> Result<NamedValues, ReferenceError> {
        let r = self.pool.run(self.backend, &model.to_bytes(), inputs)?;
        match r.outcome {
            Outcome::Ok(o) => Ok(o),
            outcome => Err(ReferenceError::Failed {
                backend: self.backend,
                outcome,
            }),
        }
    }
}

/// The reference in this process: for models it has already run to completion in a worker
/// (a minimized bundle's documents) and for tests.
pub struct InProcess;

impl ReferenceRunner for InProcess {
    fn run_reference(
        &mut self,
        model: &Model,
        inputs: &NamedValues,
        native: bool,
    ) -> Result<NamedValues, ReferenceError> {
        run_reference_in(model, inputs, native)
    }
}

/// Runs the reference interpreter in this process (it is ours and pure Rust; a panic is
/// caught and reported as an error).
pub fn run_reference(model: &Model, inputs: &NamedValues) -> Result<NamedValues, ReferenceError> {
    run_reference_in(model, inputs, false)
}

/// [`run_reference`] in native precision when `native` (`reference-native`).
pub fn run_reference_in(
    model: &Model,
    inputs: &NamedValues,
    native: bool,
) -> Result<NamedValues, ReferenceError> {
    let bytes = model.to_bytes();
    let inputs = inputs.clone();
    std::panic::catch_unwind(move || {
        let mut r = if native {
            Reference::new_native()
        } else {
            Reference::new()
        };
        let mut p = r.prepare(&bytes)?;
        Ok(p.run(&inputs)?)
    })
    .unwrap_or(Err(ReferenceError::Panicked))
}

/// Why the reference gave no outputs ([`ReferenceRunner::run_reference`]).
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// The worker pool could not run it.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// It ran in a worker and failed (an error, a crash, a timeout).
    #[error("{backend}: {}", .outcome.detail())]
    Failed {
        /// `reference` or `reference-native`.
        backend: &'static str,
        /// What the worker reported.
        outcome: Outcome,
    },
    /// It ran in this process and refused or failed the model.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// It panicked in this process.
    #[error("the reference interpreter panicked")]
    Panicked,
}

/// Localizes a `kind` finding of a backend. `model` is the mutant, `inputs` its graph inputs,
/// `reference` and `backend` the outputs of the model of [`expose_all`] (every node output) on
/// the reference and on the backend; one flat tolerance, no native bound.
///
/// [`expose_all`]: mutagraph_ir::slice::expose_all
pub fn localize(
    model: &Model,
    kind: Kind,
    inputs: &NamedValues,
    reference: &NamedValues,
    backend: &NamedValues,
    tolerance: Tolerance,
) -> Localization {
    localize_with(
        model,
        kind,
        inputs,
        &Exposed {
            reference,
            native: None,
            backend,
        },
        &Precision::flat(tolerance),
        &mut InProcess,
    )
}

/// Every node output of the mutant as computed by each side.
#[derive(Clone, Copy)]
pub struct Exposed<'a> {
    /// The f64 reference.
    pub reference: &'a NamedValues,
    /// The native-precision reference, when it ran: with the f64 one it bounds the envelope.
    pub native: Option<&'a NamedValues>,
    /// The blamed backend.
    pub backend: &'a NamedValues,
}

/// [`localize`] against the envelope of the two references, each value with the tolerance of
/// its narrowest float type ([`Precision`]).
pub fn localize_with(
    model: &Model,
    kind: Kind,
    inputs: &NamedValues,
    ex: &Exposed,
    precision: &Precision,
    runner: &mut dyn ReferenceRunner,
) -> Localization {
    let (reference, backend) = (ex.reference, ex.backend);
    let fail = |m: String| Localization {
        verdict: Verdict::Failed(m),
        location: None,
        values: Vec::new(),
        max_r: None,
    };
    let order = match model.graph.topo_order() {
        Ok(o) => o,
        Err(e) => return fail(e.to_string()),
    };
    let mut d_of: HashMap<String, f64> = HashMap::new();
    let mut values = Vec::new();
    // Every value compared, in order, with the node making it.
    let mut made_by: Vec<NodeId> = Vec::new();
    for &id in &order {
        let node = model.graph.node(id).expect("listed by topo_order");
        let d_pre = node
            .present_inputs()
            .filter_map(|i| d_of.get(i))
            .fold(0.0f64, |a, &b| a.max(b));
        for o in node.outputs.iter().filter(|o| !o.is_empty()) {
            let (Some(w), Some(h)) = (pick(reference, o), pick(backend, o)) else {
                continue;
            };
            let nat = ex.native.and_then(|n| pick(n, o));
            let d = mean_abs_diff(&w, &h);
            let r = d.map(|d| (d - d_pre).abs() / (d_pre + 1e-7));
            if let Some(d) = d {
                d_of.insert(o.clone(), d);
            }
            let div = diverges(kind, &w, nat.as_ref(), &h, precision);
            values.push(ValueDiff {
                value: o.clone(),
                op_type: node.key(),
                d,
                r,
                diverges: div,
            });
            made_by.push(id);
        }
    }
    let at = origin(model, &values);
    // the values up to the origin's, as far as they were compared
    if let Some(at) = at {
        let last = made_by
            .iter()
            .rposition(|n| *n == made_by[at])
            .unwrap_or(at);
        values.truncate(last + 1);
    }
    let max_r = values
        .iter()
        .filter_map(|v| Some((v.value.clone(), v.r.filter(|r| !r.is_nan())?)))
        .fold(None, |m: Option<(String, f64)>, (v, r)| match m {
            Some((_, best)) if best >= r => m,
            _ => Some((v, r)),
        });
    let Some(at) = at else {
        return Localization {
            verdict: Verdict::NotReproduced,
            location: None,
            values,
            max_r,
        };
    };
    let id = made_by[at];
    let node = model.graph.node(id).expect("found above");
    let location = Location::of(node);
    let verdict = match extract(model, &[id]) {
        Ok(single) => check_blamed(node, &single, kind, inputs, ex, precision, runner),
        Err(_) => Verdict::Localized,
    };
    Localization {
        verdict,
        location: Some(location),
        values,
        max_r,
    }
}

/// The index in `values` (in the model's order) of the first diverging value from which a
/// chain of diverging values reaches a diverging graph output: a divergence its consumers
/// erase (tract's ReduceMin giving the largest float for an all-infinite slice, a value a
/// later node no longer depends on) is not what the output shows; else the first diverging
/// value.
fn origin(model: &Model, values: &[ValueDiff]) -> Option<usize> {
    let first = values.iter().position(|v| v.diverges)?;
    let diverging: HashSet<&str> = values
        .iter()
        .filter(|v| v.diverges)
        .map(|v| v.value.as_str())
        .collect();
    let g = &model.graph;
    let mut reach: Vec<&str> = g
        .outputs
        .iter()
        .filter_map(|o| o.name.as_deref())
        .filter(|o| diverging.contains(o))
        .collect();
    let mut reached: HashSet<&str> = reach.iter().copied().collect();
    while let Some(v) = reach.pop() {
        let Some(n) = g.producer(v).and_then(|id| g.node(id)) else {
            continue;
        };
        for i in n.present_inputs() {
            if let Some(&i) = diverging.get(i)
                && reached.insert(i)
            {
                reach.push(i);
            }
        }
    }
    Some(
        values
            .iter()
            .position(|v| reached.contains(v.value.as_str()))
            .unwrap_or(first),
    )
}

/// Node `id` of `model` alone, as the reference sees it: the one-node model, the values of its
/// inputs (graph inputs from `inputs`, the others computed by the reference) and the
/// reference's values of its outputs. `None` when the reference cannot run the model.
pub fn node_alone(
    model: &Model,
    id: NodeId,
    inputs: &NamedValues,
    runner: &mut dyn ReferenceRunner,
) -> Option<(Model, NamedValues, NamedValues)> {
    let single = extract(model, &[id]).ok()?;
    let (exposed, _) = expose_all(model).ok()?;
    let values = runner.run_reference(&exposed, inputs, false).ok()?;
    let find = |n: &str| {
        values
            .iter()
            .chain(inputs.iter())
            .find(|(k, _)| k == n)
            .map(|(_, v)| (n.to_string(), v.clone()))
    };
    let feed: NamedValues = single
        .graph
        .real_inputs()
        .iter()
        .filter_map(|vi| find(vi.name.as_deref()?))
        .collect();
    let outs: NamedValues = single
        .graph
        .outputs
        .iter()
        .filter_map(|o| find(o.name.as_deref()?))
        .collect();
    (feed.len() == single.graph.real_inputs().len()).then_some((single, feed, outs))
}

/// The checks a blamed node must pass before it is blamed: the values that reached it are not
/// in a case ONNX leaves open, not at the edge of the f32 range, and the references, re-run on
/// the node alone with the backend's own input values, neither reproduce the backend's output
/// (rounding amplified) nor move as far when those inputs are nudged (ill-conditioned).
fn check_blamed(
    node: &Node,
    single: &Model,
    kind: Kind,
    inputs: &NamedValues,
    ex: &Exposed,
    precision: &Precision,
    runner: &mut dyn ReferenceRunner,
) -> Verdict {
    let backend = ex.backend;
    let feed: NamedValues = single
        .graph
        .real_inputs()
        .iter()
        .filter_map(|vi| {
            let n = vi.name.clone()?;
            pick(backend, &n)
                .or_else(|| pick(inputs, &n))
                .and_then(|v| v.into_iter().next())
        })
        .collect();
    let seen: Vec<(String, HostTensor)> = feed
        .iter()
        .filter_map(|(n, v)| Some((n.clone(), v.tensor()?.clone())))
        .chain(
            single
                .graph
                .initializers
                .iter()
                .filter_map(|(n, t)| Some((n.clone(), HostTensor::from_proto(t).ok()?))),
        )
        .collect();
    let outs = |side: &NamedValues| -> NamedValues {
        node.outputs
            .iter()
            .filter_map(|o| pick(side, o))
            .flatten()
            .collect()
    };
    // A wrongly shaped output is judged only by the entries that leave shapes open.
    let shape_of = |side: &NamedValues| -> Vec<Option<Vec<usize>>> {
        outs(side)
            .iter()
            .map(|(_, v)| v.tensor().map(|t| t.shape.clone()))
            .collect()
    };
    let wrong_shape = shape_of(ex.reference) != shape_of(backend);
    if let Some(hit) = crate::undefined::classify_for(node, &seen, wrong_shape) {
        return Verdict::Undefined(hit.describe());
    }
    if near_float_limit(node, &seen) {
        // An intermediate overflows the element type where f64 does not.
        return Verdict::Unstable;
    }
    // A normalization folded into x·s + (B − mean·s) rounds at the size of |x|·s.
    if let Some(bound) = cancellation::normalization_rounding(node, &seen)
        && cancellation::max_abs_diff(&outs(ex.reference), &outs(backend))
            .is_some_and(|d| d <= bound)
    {
        return Verdict::Unstable;
    }
    // A comparison that flips only where its operands tie within rounding.
    if cancellation::comparison_at_tie(node, &seen, &outs(ex.reference), &outs(backend)) {
        return Verdict::Unstable;
    }
    if reduced_precision(node).is_some() {
        let wide = Precision::flat(widest(precision.base, Tolerance::VERY_APPROXIMATE));
        let native = ex.native.map(outs);
        if !diverges(
            kind,
            &outs(ex.reference),
            native.as_ref(),
            &outs(backend),
            &wide,
        ) {
            return Verdict::Unstable;
        }
    }
    if feed.len() != single.graph.real_inputs().len() {
        return Verdict::Localized;
    }
    let Ok(again) = runner.run_reference(single, &feed, false) else {
        return Verdict::Localized;
    };
    let again_native = runner.run_reference(single, &feed, true).ok();
    // The references' output on the backend's inputs, compared with the backend's output: the
    // same means the inputs, i.e. rounding upstream, made the difference.
    let mine: NamedValues = again
        .iter()
        .filter(|(n, _)| pick(backend, n).is_some())
        .cloned()
        .collect();
    let theirs: NamedValues = mine
        .iter()
        .filter_map(|(n, _)| pick(backend, n))
        .flatten()
        .collect();
    if !mine.is_empty() && !diverges(kind, &mine, again_native.as_ref(), &theirs, precision) {
        return Verdict::Unstable;
    }
    if ill_conditioned(node, single, &feed, &again, kind, precision, false, runner) {
        return Verdict::Unstable;
    }
    // Ill-conditioned in the element type: the spec's own evaluation in f32 (its function
    // body, step by step) moves as far when the inputs move by a few rounding steps.
    if let Some(base) = &again_native
        && ill_conditioned(node, single, &feed, base, kind, precision, true, runner)
    {
        return Verdict::Unstable;
    }
    Verdict::Localized
}

/// Moves every element of a float tensor by about four rounding steps of its type (relative
/// 2^-21 for f32, 2^-9 for f16, 2^-6 for bf16, 2^-50 for f64), up or down by a fixed pattern;
/// other tensors are returned as they are.
fn nudge(t: &HostTensor, salt: usize) -> HostTensor {
    use mutagraph_ir::DType;
    let step = match t.dtype {
        DType::F32 => 2f64.powi(-21),
        DType::F16 => 2f64.powi(-9),
        DType::BF16 => 2f64.powi(-6),
        DType::F64 => 2f64.powi(-50),
        _ => return t.clone(),
    };
    let Some(v) = t.to_f64s() else {
        return t.clone();
    };
    let moved: Vec<f64> = v
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let h = (i + salt).wrapping_mul(0x9E37_79B9) >> 7;
            let s = if h.is_multiple_of(2) { 1.0 } else { -1.0 };
            x * (1.0 + s * step)
        })
        .collect();
    HostTensor::from_f64s(t.dtype, t.shape.clone(), &moved).unwrap_or_else(|_| t.clone())
}

/// Whether `node` is ill-conditioned at the inputs it was fed: the reference (in native
/// precision when `native`), run on the single-node model `single` with every float input and
/// weight nudged by a few rounding steps of its type, moves from its own output `base` beyond
/// the tolerance. A backend computing in f32 can
/// then land anywhere in that range (Det of a near-singular matrix, Tan near a pole,
/// requantization at a rounding tie).
#[allow(clippy::too_many_arguments)]
fn ill_conditioned(
    node: &Node,
    single: &Model,
    feed: &NamedValues,
    base: &NamedValues,
    kind: Kind,
    precision: &Precision,
    native: bool,
    runner: &mut dyn ReferenceRunner,
) -> bool {
    if Registry::global().node_has(node, Traits::DISCRETE) {
        return false;
    }
    nudged_outputs(single, feed, base, native, runner)
        .is_some_and(|out| diverges(kind, base, None, &out, precision))
}

/// How far a whole model's outputs move at its inputs: the largest difference between the
/// reference's outputs `base` and those of the model with every float input and weight nudged
/// ([`nudge`]; infinite when it turns a finite output NaN or infinite); `None` when the nudged
/// model did not run. An optimizer's finding that exposing
/// the intermediates undoes is not pinned on a node, and an error within a few such moves is
/// the model's conditioning, not the optimizer (a Tan fed 3e-4 from its pole after a fused
/// Conv moves by 1 % when its input moves by four roundings).
pub fn model_sensitivity(
    model: &Model,
    inputs: &NamedValues,
    base: &NamedValues,
    runner: &mut dyn ReferenceRunner,
) -> Option<f64> {
    let out = nudged_outputs(model, inputs, base, false, runner)?;
    movement(base, &out)
}

/// How far `moved` is from `base` (the values of the same names): the largest difference, or
/// infinite where a finite value became NaN or infinite (a nudge of a few roundings took the
/// model over a singularity, the log of a sum that cancels to zero, where any result is
/// rounding).
fn movement(base: &NamedValues, moved: &NamedValues) -> Option<f64> {
    if new_nonfinite(base, None, moved).0 > 0 {
        return Some(f64::INFINITY);
    }
    cancellation::max_abs_diff(base, moved)
}

/// The ops that quantize their input with a scale drawn from its own range (ONNX's
/// DynamicQuantizeLinear, ONNX Runtime's DynamicQuantizeMatMul and DynamicQuantizeLSTM, by op
/// key): a rounding that moves the input's extreme values moves the scale, and with it the step
/// of every element.
const DYNAMIC_QUANTIZERS: &[&str] = &[
    "DynamicQuantizeLinear",
    "com.microsoft::DynamicQuantizeMatMul",
    "com.microsoft::DynamicQuantizeLSTM",
];

/// The step ops among `nodes` of `model` that a reordering of the arithmetic before them may
/// make jump where the result is otherwise right: a Round, Floor or Ceil whose input, in the
/// reference's run, holds a value within `moves` times its movement under a nudge
/// ([`model_sensitivity`] of that input) of one of its steps (a Round after a Reciprocal of
/// values near zero that ONNX Runtime folds with a BatchNormalization); a dynamic quantizer
/// ([`DYNAMIC_QUANTIZERS`]) whose input moves at all under the nudge (its scale moves, and the
/// elements near a step cross it: a DynamicQuantizeLSTM after a MatMul that ONNX Runtime fuses
/// with its Add). Their op types; `None` when the reference did not run.
pub fn steps_within_reach(
    model: &Model,
    nodes: &[mutagraph_ir::graph::NodeId],
    inputs: &NamedValues,
    moves: f64,
    runner: &mut dyn ReferenceRunner,
) -> Option<Vec<String>> {
    let steps: Vec<(&str, String)> = nodes
        .iter()
        .filter_map(|id| model.graph.node(*id))
        .filter(|n| {
            matches!(n.op_type.as_str(), "Round" | "Floor" | "Ceil")
                || DYNAMIC_QUANTIZERS.contains(&n.key().as_str())
        })
        .filter_map(|n| Some((n.op_type.as_str(), n.inputs.first()?.clone())))
        .collect();
    if steps.is_empty() {
        return Some(Vec::new());
    }
    let (exposed, _) = mutagraph_ir::slice::expose_all(model).ok()?;
    let base: NamedValues = runner
        .run_reference(&exposed, inputs, false)
        .ok()?
        .into_iter()
        .filter(|(n, _)| steps.iter().any(|(_, i)| i == n))
        .collect();
    let nudged = nudged_outputs(&exposed, inputs, &base, false, runner)?;
    let mut near = Vec::new();
    for (op, input) in steps {
        let one = |vals: &NamedValues| -> NamedValues {
            vals.iter().filter(|(n, _)| *n == input).cloned().collect()
        };
        let here = one(&base);
        let Some(xs) = here.first().and_then(|(_, v)| v.tensor()?.to_f64s()) else {
            continue;
        };
        let Some(moved) = movement(&here, &one(&nudged)) else {
            continue;
        };
        if !matches!(op, "Round" | "Floor" | "Ceil") {
            if moved > 0.0 {
                near.push(op.to_string());
            }
            continue;
        }
        let to_step = |x: f64| match op {
            // Round's steps are at the halves, Floor's and Ceil's at the integers.
            "Round" => (x - x.floor() - 0.5).abs(),
            _ => (x - x.round()).abs(),
        };
        if xs
            .iter()
            .any(|&x| x.is_finite() && to_step(x) <= moves * moved)
        {
            near.push(op.to_string());
        }
    }
    Some(near)
}

/// The reference's outputs of `single` (those `base` holds) with every float input of `feed`
/// and every weight nudged ([`nudge`]); `None` when it did not run.
fn nudged_outputs(
    single: &Model,
    feed: &NamedValues,
    base: &NamedValues,
    native: bool,
    runner: &mut dyn ReferenceRunner,
) -> Option<NamedValues> {
    let mut model = single.clone();
    for (k, (name, t)) in model.graph.initializers.iter_mut().enumerate() {
        if let Ok(h) = HostTensor::from_proto(t) {
            *t = nudge(&h, 7919 * (k + 1)).to_proto(name);
        }
    }
    let moved: NamedValues = feed
        .iter()
        .enumerate()
        .map(|(k, (n, v))| match v.tensor() {
            Some(t) => (
                n.clone(),
                mutagraph_backends::value::Value::Tensor(nudge(t, 104_729 * (k + 1))),
            ),
            None => (n.clone(), v.clone()),
        })
        .collect();
    let out: NamedValues = runner
        .run_reference(&model, &moved, native)
        .ok()?
        .into_iter()
        .filter(|(n, _)| base.iter().any(|(b, _)| b == n))
        .collect();
    (!out.is_empty()).then_some(out)
}

/// Whether a float input of `node` holds a finite value within a factor 2^10 of the largest
/// finite value of its type (f32, bf16): sums, products and squares of such values overflow in
/// that type, so an Inf (or the NaN an Inf makes) where the f64 reference stays finite is the
/// type's range, not the op. f16 is left out: its range is small enough that kernels are
/// expected to widen.
pub fn near_float_limit(node: &Node, seen: &[(String, HostTensor)]) -> bool {
    use mutagraph_ir::DType;
    node.present_inputs().any(|i| {
        let Some((_, t)) = seen.iter().find(|(n, _)| n == i) else {
            return false;
        };
        let max = match t.dtype {
            DType::F32 | DType::BF16 => f32::MAX as f64,
            _ => return false,
        };
        let Some(v) = t.to_f64s() else {
            return false;
        };
        let finite = v.iter().copied().filter(|x| x.is_finite());
        match node.op_type.as_str() {
            // Products and sums of squares over the whole input overflow long before any one
            // element is near the limit.
            // Taken in some order, the factors above 1 multiply up first (and a zero among
            // the others then makes NaN of the Inf).
            "ReduceProd" => {
                finite
                    .filter(|x| x.abs() > 1.0)
                    .map(|x| x.abs().log2())
                    .sum::<f64>()
                    >= max.log2() - 10.0
            }
            // Sums of squares (or of p-th powers) overflow when the values squared do.
            "ReduceSumSquare"
            | "ReduceL2"
            | "LRN"
            | "LpNormalization"
            | "LpPool"
            | "GlobalLpPool"
            | "MeanVarianceNormalization"
            | "LayerNormalization"
            | "InstanceNormalization"
            | "GroupNormalization"
            | "RMSNormalization" => {
                let p = node.attributes.int("p", 2).max(2) as i32;
                finite.map(|x| x.abs().powi(p)).sum::<f64>() >= max / 1024.0
            }
            _ => finite.map(f64::abs).fold(0.0, f64::max) >= max / 1024.0,
        }
    })
}

/// The wider of two tolerances.
fn widest(a: Tolerance, b: Tolerance) -> Tolerance {
    if b.rtol > a.rtol { b } else { a }
}

/// The element type an op is asked to compute in when it is narrower than its inputs'
/// (LayerNormalization's `stash_type` = f16 / bf16): its outputs are compared with
/// `very-approximate` (statistics accumulated in 16 bits over a whole axis drift by 1e-2).
pub fn reduced_precision(node: &Node) -> Option<mutagraph_ir::DType> {
    use mutagraph_ir::DType;
    if node.op_type != "LayerNormalization" {
        return None;
    }
    let d = DType::from_code(node.attributes.int_opt("stash_type")? as i32);
    matches!(d, DType::F16 | DType::BF16).then_some(d)
}
