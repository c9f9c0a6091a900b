//! What a report says of the spec: where the op is defined (ONNX's page, or ONNX Runtime's
//! contrib-op documentation quoted), and the clauses at stake, in our words.
use super::*;

/// Where the op of key `op` is defined: ONNX's operator page, or for one of ONNX Runtime's
/// `com.microsoft` ops its contrib-op documentation with the defining sentence quoted, and what
/// the expected values rest on where onnx.reference has no kernel (a triage found "no other
/// library implements it" on ops tract runs).
fn spec_page(op: &str, opset: i64) -> String {
    use mutagraph_ir::ops::contrib;
    match mutagraph_ir::registry::split_key(op) {
        (contrib::MS, name) => {
            let (doc, formula) = contrib::definition(name).unwrap_or((None, "not given"));
            let doc = doc.map_or_else(
                || "The documentation lists its inputs and attributes only".to_string(),
                |d| format!("The documentation says: \"{d}\""),
            );
            format!(
                "{name} is one of ONNX Runtime's own com.microsoft ops ({}#com.microsoft.{name}). \
                 {doc}. mutagraph's reference computes {formula}. ONNX's own reference \
                 (onnx.reference) has no kernel for it: the expected values are mutagraph's \
                 reference's, in float64, checked against ONNX Runtime's unoptimized run; the \
                 runs below say which other libraries ran it (tract implements some of these \
                 ops).",
                contrib::DOCS,
            )
        }
        _ => format!(
            "{op}, as defined at opset {opset}: https://onnx.ai/onnx/operators/onnx__{op}.html"
        ),
    }
}

/// The spec clauses at stake, in our words.
pub(in crate::bundle) fn spec_points(
    meta: &Meta,
    f: &Finding,
    model: &Model,
    op: Option<&str>,
) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(op) = op {
        let opset = model.default_opset();
        // A model not pinned on one node names its ops in order ("Add, LayerNormalization"):
        // one page each, once.
        let mut pages: Vec<&str> = Vec::new();
        for one in op.split(", ").filter(|o| !o.is_empty()) {
            if !pages.contains(&one) {
                pages.push(one);
            }
        }
        for one in pages {
            v.push(spec_page(one, opset));
        }
        if let (Some(g), Some(spec)) = (
            &f.gap,
            mutagraph_ir::registry::Registry::global().by_key(op),
        ) && let Some(allowed) = spec.input_allowed_at(0, opset)
        {
            let allowed: Vec<String> = allowed.iter().map(|d| d.to_string()).collect();
            if allowed.contains(g) {
                v.push(format!(
                    "Its first input may be any of {}: {g} is among them.",
                    allowed.join(", ")
                ));
            } else if g == "tdim" {
                v.push(
                    "tdim is not an ONNX type: it is tract's own type for dimensions, which \
                     tract gives to int64 values it tracks as dimensions."
                        .into(),
                );
            }
        }
    }
    v.push(
        "The model is valid by ONNX's rules: it passes onnx.checker with full, strict shape \
         inference."
            .into(),
    );
    if let Some(g) = &f.ground {
        v.push(format!(
            "Judged without mutagraph's reference, which lacks an op of this model: the \
             expected values are {g}'s ({}), a weaker oracle than the operator's definition.",
            match catalog::library(g) {
                catalog::Library::OnnxRuntime => "ONNX Runtime with graph optimizations off",
                _ => "another implementation at its unoptimized level",
            }
        ));
    } else if f.kind.is_numeric() {
        v.push(
            "The expected values follow the operator's definition, computed in float64 and \
             again in the model's own float types (function bodies step by step); the result is \
             outside both, beyond the tolerance of the narrowest float type involved."
                .into(),
        );
    }
    let others = other_runners(f);
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
        let what = match (f.kind.is_numeric(), f.optimizer_pass()) {
            (true, _) if f.rewrite().is_some() => format!(
                "gives the expected result, and so does the optimized model without the pass {} \
                 alone: that pass changes what the model computes",
                f.rewrite().unwrap_or_default()
            ),
            (true, _) => "gives the expected result: an optimization pass changes what the \
                          model computes"
                .to_string(),
            (false, Some(pass)) => {
                format!("runs: the process dies in the optimization pass {pass}")
            }
            (false, None) => "runs: an optimization pass fails on it".to_string(),
        };
        v.push(format!(
            "With graph optimizations off ({}) the same model {what}.",
            clean.join(", ")
        ));
    }
    v
}

/// The libraries (not the reference) that ran the finding's model without the failure.
pub(super) fn other_runners(f: &Finding) -> Vec<&String> {
    f.witnesses
        .iter()
        .filter(|w| !catalog::is_reference(w))
        .collect()
}
