//! Which attributes of the blamed node a bug needs. Each attribute the node carries is
//! removed in turn (the op then uses its default, or goes without); where the library then
//! runs the model, still valid, and agrees with the reference, the attribute is part of the
//! trigger; where it still shows the bug, the attribute stays removed for the next tries.
//! Run on minimized models (one or a few nodes), where each try costs one run per backend.
//!
//! The trigger names the root cause better than the node does: tract ignoring `clip` shows on
//! GRU, LSTM and RNN nodes with any direction, and one maintainer's fix covers them all
//! ([`Finding::root_signature`](crate::Finding::root_signature)).
use super::reproduce::Check;
use super::{Reproducer, Verdict};
use crate::finding::Finding;
use crate::minimize::candidate::{
    one_direction, with_attribute, without_attribute_keeping_function,
};
use mutagraph_backends::value::{HostTensor, NamedValues, Value};
use mutagraph_ir::Model;
use mutagraph_ir::attr::{AttrValue, Attribute};
use mutagraph_ir::registry::{Legal, Registry};

/// The trigger attributes of `f` on `model` (the finding as `rep` reports it on `inputs`), as
/// [`describe`] writes them, in the node's attribute order.
pub fn trigger_attributes(
    rep: &mut Reproducer,
    model: &Model,
    inputs: &NamedValues,
    f: &Finding,
) -> Vec<String> {
    let Some(loc) = &f.location else {
        return Vec::new();
    };
    let Some(node) = model
        .graph
        .nodes()
        .find(|n| n.outputs.first() == Some(&loc.value))
    else {
        return Vec::new();
    };
    let (id, attrs, op) = (node.id, node.attributes.clone(), node.op_type.clone());
    // An attribute whose removal keeps the bug is dropped before the next one is tried: a node
    // may carry two bugs (tract ignores both `clip` and `activations`), each hiding that the
    // other's attribute is needed when the node keeps both.
    let mut kept = model.clone();
    let mut out = Vec::new();
    for a in &attrs {
        if is_bidirectional(a) {
            match one_direction_needed(rep, &kept, id, inputs, f) {
                Direction::Both(t) => out.push(t),
                Direction::One(half, t) => {
                    kept = *half;
                    out.extend(t);
                }
                Direction::Unknown => {}
            }
            continue;
        }
        let Ok(candidate) = without_attribute_keeping_function(&kept, id, &a.name) else {
            continue;
        };
        match shows(rep, &candidate, id, inputs, f) {
            Some(true) => {
                kept = candidate;
                continue;
            }
            None => continue,
            Some(false) => {}
        }
        // A choice is the trigger only when no other legal value shows the bug either: the
        // default may happen to hide it on these values (nearest Resize over a roi that
        // linear interpolation reads).
        let others = alternatives(&kept, &op, a);
        let elsewhere = others.iter().any(|v| {
            with_attribute(&kept, id, &a.name, v.clone())
                .is_ok_and(|c| shows(rep, &c, id, inputs, f) == Some(true))
        });
        if !elsewhere {
            out.push(describe(a));
        }
    }
    out
}

/// What a bidirectional node's halves tell ([`one_direction_needed`]).
enum Direction {
    /// Neither half shows the bug alone: the trigger is both directions.
    Both(String),
    /// One half shows it: the model keeps that half (the trigger is `reverse` when only the
    /// reverse half shows it).
    One(Box<Model>, Option<String>),
    /// The halves could not be run or judged.
    Unknown,
}

fn is_bidirectional(a: &Attribute) -> bool {
    a.name == "direction" && matches!(&a.value, AttrValue::String(v) if v == b"bidirectional")
}

/// A bidirectional recurrent node run as each of its directions alone ([`one_direction`]):
/// removing `direction` alone leaves per-direction weights the forward node cannot read, so a
/// bug of the reverse pass (tract's) keyed on the whole op beside the `direction="reverse"`
/// bundles of the same fault.
fn one_direction_needed(
    rep: &mut Reproducer,
    model: &Model,
    id: mutagraph_ir::graph::NodeId,
    inputs: &NamedValues,
    f: &Finding,
) -> Direction {
    let mut half = |reverse| {
        let m = one_direction(model, id, reverse).ok()?;
        let shown = shows(rep, &m, id, inputs, f)?;
        Some((m, shown))
    };
    match (half(false), half(true)) {
        (Some((m, true)), _) => Direction::One(Box::new(m), None),
        (_, Some((m, true))) => Direction::One(
            Box::new(m),
            Some(describe(&Attribute::new(
                "direction",
                AttrValue::String(b"reverse".to_vec()),
            ))),
        ),
        (Some((_, false)), Some((_, false))) => Direction::Both(describe(&Attribute::new(
            "direction",
            AttrValue::String(b"bidirectional".to_vec()),
        ))),
        _ => Direction::Unknown,
    }
}

/// Whether `candidate` still shows `f` on node `id`: `None` when it tells nothing (it could not
/// be run, or the library or the reference did not run it: an attribute needed to run at all,
/// such as `hidden_size`, is no trigger).
fn shows(
    rep: &mut Reproducer,
    candidate: &Model,
    id: mutagraph_ir::graph::NodeId,
    inputs: &NamedValues,
    f: &Finding,
) -> Option<bool> {
    let check = rep.check_with(candidate, inputs.clone())?;
    let ran = |b: &str| {
        check
            .runs
            .runs
            .iter()
            .any(|r| r.backend == b && r.outcome.outputs().is_some())
    };
    if check.runs.reference_outputs().is_none() || !f.backends.iter().any(|b| ran(b)) {
        return None;
    }
    // The node keeps its id; its output may be renamed (a layout removed leaves the node's
    // output to a Transpose).
    let at = candidate.graph.node(id)?.outputs.first()?.clone();
    Some(
        check
            .all
            .iter()
            .any(|t| t.verdict == Verdict::Report && same_bug(&t.finding, f, &at)),
    )
}

/// The other legal values of a string attribute (neither its value nor the default, which
/// removing it tried), from the op's spec.
fn alternatives(model: &Model, op: &str, a: &Attribute) -> Vec<AttrValue> {
    let AttrValue::String(current) = &a.value else {
        return Vec::new();
    };
    let opset = model.opset("").unwrap_or(0);
    let Some(spec) = Registry::global()
        .get("", op)
        .and_then(|s| s.attr_spec_at(&a.name, opset))
    else {
        return Vec::new();
    };
    let Legal::Strings(values) = &spec.legal else {
        return Vec::new();
    };
    let default = match &spec.default {
        Some(AttrValue::String(d)) => d.as_slice(),
        _ => &[],
    };
    values
        .iter()
        .map(|v| v.as_bytes())
        .filter(|v| *v != current.as_slice() && *v != default)
        .map(|v| AttrValue::String(v.to_vec()))
        .collect()
}

/// The same bug for the trigger search: same kind and library, pinned on the blamed node's
/// output (`at`, as the candidate names it).
fn same_bug(g: &Finding, f: &Finding, at: &str) -> bool {
    g.kind == f.kind
        && g.library() == f.library()
        && g.location.as_ref().is_some_and(|l| l.value == at)
}

/// An attribute as a trigger: a choice (a string, or a 0/1 flag such as `layout`) with its
/// value, a quantity (`clip`, `size`, `kernel_shape`) by its name alone, since any value that
/// sets it shows the same bug.
pub fn describe(a: &Attribute) -> String {
    match &a.value {
        AttrValue::String(_) => format!("{}={}", a.name, a.value.short()),
        AttrValue::Int(v) if (0..=1).contains(v) => format!("{}={v}", a.name),
        _ => a.name.clone(),
    }
}

/// `check` (of `model` on its inputs, showing the finding) with each input's NaN and
/// infinities made 0 where the finding shows without them: a report names the special values
/// its node met, and those the bug does not need are noise a maintainer would chase (tract
/// failing on an f64 IsNaN titled "NaN in 'x'"). Inputs are tried one at a time; the finding
/// must keep its signature.
pub fn without_unneeded_nonfinite(rep: &mut Reproducer, model: &Model, check: Check) -> Check {
    let mut check = check;
    for k in 0..check.inputs.len() {
        let Some(t) = check.inputs[k].1.tensor() else {
            continue;
        };
        if !t.dtype.is_float() || t.nan_inf_counts() == (0, 0) {
            continue;
        }
        let Some(finite) = t.to_f64s().and_then(|v| {
            let v: Vec<f64> = v
                .iter()
                .map(|x| if x.is_finite() { *x } else { 0.0 })
                .collect();
            HostTensor::from_f64s(t.dtype, t.shape.clone(), &v).ok()
        }) else {
            continue;
        };
        let mut inputs = check.inputs.clone();
        inputs[k].1 = Value::Tensor(finite);
        if let Some(c) = rep.check_with(model, inputs)
            && c.found.is_some()
        {
            check = c;
        }
    }
    check
}
