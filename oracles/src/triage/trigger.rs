//! Which attributes of the blamed node a bug needs. Each attribute the node carries is
//! removed in turn (the op then uses its default, or goes without); where the library then
//! runs the model, still valid, and agrees with the reference, the attribute is part of the
//! trigger.
//! Run on minimized models (one or a few nodes), where each try costs one run per backend.
//!
//! The trigger names the root cause better than the node does: tract ignoring `clip` shows on
//! GRU, LSTM and RNN nodes with any direction, and one maintainer's fix covers them all
//! ([`Finding::root_signature`](crate::Finding::root_signature)).
use super::{Reproducer, Verdict};
use crate::finding::Finding;
use crate::minimize::candidate::without_attribute_keeping_function;
use mutagraph_backends::value::NamedValues;
use mutagraph_ir::Model;
use mutagraph_ir::attr::{AttrValue, Attribute};

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
    let (id, attrs) = (node.id, node.attributes.clone());
    let mut out = Vec::new();
    for a in &attrs {
        let Ok(candidate) = without_attribute_keeping_function(model, id, &a.name) else {
            continue;
        };
        let Some(check) = rep.check_with(&candidate, inputs.clone()) else {
            continue;
        };
        // Gone, with the library and the reference both running the model: not gone because
        // the attribute was needed to run at all (`hidden_size`).
        let ran = |b: &str| {
            check
                .runs
                .runs
                .iter()
                .any(|r| r.backend == b && r.outcome.outputs().is_some())
        };
        let reference_ran = check.runs.reference_outputs().is_some();
        // The node keeps its id; its output may be renamed (a layout removed leaves the
        // node's output to a Transpose).
        let at = candidate
            .graph
            .node(id)
            .and_then(|n| n.outputs.first().cloned())
            .unwrap_or_else(|| loc.value.clone());
        let still = check
            .all
            .iter()
            .any(|t| t.verdict == Verdict::Report && same_bug(&t.finding, f, &at));
        if !still && reference_ran && f.backends.iter().any(|b| ran(b)) {
            out.push(describe(a));
        }
    }
    out
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
