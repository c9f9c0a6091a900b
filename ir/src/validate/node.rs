//! The checks of one node: ONNX defines its op at the imported opset, and the node agrees with
//! the op's spec (arity, required inputs, attributes).

use super::Diagnostics;
use crate::attr::AttrLookup;
use crate::graph::Node;
use crate::onnx_ops::{self, OpStatus};
use crate::registry::OpSpec;

/// An op of an ONNX domain must be one ONNX defines at the imported version of that domain
/// (`onnx.checker`'s "No Op registered for X with domain_version of V"). Returns whether it
/// reported on the op's version (an error, or ORT's schema), so that [`check_node`] does not
/// check the spec's first opset again.
///
/// One of ONNX Runtime's own schemas in the default domain (`onnx_ops::ort_default`:
/// LayerNormalization before 17, SimplifiedLayerNormalization) is a warning naming the node:
/// ORT runs such models, which its transformer optimizer writes, though `onnx.checker` refuses
/// them.
///
/// An op whose schema is deprecated at that version is a warning: `onnx.checker` refuses it
/// ("Op registered for X is deprecated"), but our own mutators still build such ops (Scatter,
/// Upsample at opset 17, GroupNormalization at 18) and their models must stay valid until they
/// stop.
pub(super) fn check_op_exists(n: &Node, version: i64, path: &str, d: &mut Diagnostics) -> bool {
    let domain = match n.domain() {
        "" => "the default domain".to_string(),
        dom => format!("domain '{dom}'"),
    };
    let what = match onnx_ops::status(n.domain(), &n.op_type, version) {
        OpStatus::Defined(_) => return false,
        OpStatus::Deprecated(since) => {
            d.warnings.push(format!(
                "{path}: node {}: {} is deprecated at version {version} of {domain} (its schema \
                 of version {since}); onnx.checker refuses it",
                n.label(),
                n.op_type
            ));
            return false;
        }
        OpStatus::OrtSchema(s) => {
            let w = onnx_ops::ort_default::warning(s, &n.label(), version);
            d.warnings.push(format!("{path}: {w}"));
            return true;
        }
        OpStatus::Unknown => format!(
            "op type '{}' is not an operator of {domain} (ONNX defines no such op)",
            n.op_type
        ),
        OpStatus::NotYet(since) => format!(
            "{} exists in {domain} from version {since} on, but the model imports version \
             {version}",
            n.op_type
        ),
    };
    d.errors.push(format!("{path}: node {}: {what}", n.label()));
    true
}

pub(super) fn check_node(
    n: &Node,
    spec: &OpSpec,
    opset: i64,
    check_since: bool,
    path: &str,
    d: &mut Diagnostics,
) {
    // Spelled out only for an error: formatting it for every node was a tenth of validating.
    let who = || format!("{path}: node {}", n.label());
    if check_since && opset < spec.since() {
        d.errors.push(format!(
            "{}: {} needs opset {} but the model imports {opset}",
            who(),
            spec.op_type,
            spec.since()
        ));
    }
    let count = |v: &[String]| v.len() - v.iter().rev().take_while(|s| s.is_empty()).count();
    let (lo, hi) = spec.input_arity();
    let ni = count(&n.inputs);
    if ni < lo || hi.is_some_and(|h| ni > h) {
        d.errors.push(format!(
            "{}: takes {} inputs, found {ni}",
            who(),
            arity_text(lo, hi)
        ));
    }
    for (slot, p) in spec.inputs.iter().enumerate() {
        if matches!(p.kind, crate::registry::PortKind::Variadic { .. }) {
            break;
        }
        let empty = n.inputs.get(slot).is_none_or(|s| s.is_empty());
        // A required input that is empty; an absent one past the end is the arity's error,
        // except for an input only required from this opset on.
        if empty
            && p.required_at(opset)
            && (slot < n.inputs.len() || p.kind == crate::registry::PortKind::Optional)
        {
            d.errors.push(format!(
                "{}: required input '{}' (slot {slot}) is {}",
                who(),
                p.name,
                if slot < n.inputs.len() {
                    "empty"
                } else {
                    "absent"
                }
            ));
        }
    }
    let (lo, hi) = spec.output_arity();
    let no = count(&n.outputs);
    if no < lo.min(1) || hi.is_some_and(|h| no > h) {
        d.errors.push(format!(
            "{}: has {} outputs, found {no}",
            who(),
            arity_text(lo, hi)
        ));
    }
    for a in &n.attributes {
        match spec.attr_spec_at(&a.name, opset) {
            None => d
                .errors
                .push(format!("{}: unknown attribute '{}'", who(), a.name)),
            Some(s) => {
                if a.ref_attr_name.is_none()
                    && let Err(e) = s.check(&a.value)
                {
                    d.errors.push(format!("{}: {e}", who()));
                }
            }
        }
    }
    for s in &spec.attrs {
        if s.required && s.exists_at(opset) && n.attr(s.name).is_none() {
            d.errors.push(format!(
                "{}: required attribute '{}' is missing",
                who(),
                s.name
            ));
        }
    }
}

fn arity_text(lo: usize, hi: Option<usize>) -> String {
    match hi {
        Some(h) if h == lo => format!("{lo}"),
        Some(h) => format!("{lo} to {h}"),
        None => format!("at least {lo}"),
    }
}
