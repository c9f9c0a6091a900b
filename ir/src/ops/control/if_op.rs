//! If.

use super::IF_LOOP_VERSIONS;
use super::merge::{body_outputs, merge_types};
use crate::attr::AttrKind;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::ValueType;

fn if_infer(ctx: &InferCtx) -> Infer {
    let n = ctx.n_outputs();
    let then = body_outputs(ctx, "then_branch", 0);
    let els = body_outputs(ctx, "else_branch", 0);
    if let (Some(t), Some(e)) = (
        ctx.subgraph_def("then_branch"),
        ctx.subgraph_def("else_branch"),
    ) {
        if t.outputs.len() != e.outputs.len() {
            return Err(rule!(
                "If branches have {} and {} outputs",
                t.outputs.len(),
                e.outputs.len()
            ));
        }
        if t.outputs.len() != n {
            return Err(rule!(
                "If has {n} outputs but its branches have {}",
                t.outputs.len()
            ));
        }
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let a = then.get(i).cloned().unwrap_or(ValueType::Unknown);
        let b = els.get(i).cloned().unwrap_or(ValueType::Unknown);
        out.push(merge_types(&a, &b).map_err(|e| rule!("If output {i}: branch {e}"))?);
    }
    Ok(out)
}

/// Registers If.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("If", IF_LOOP_VERSIONS, Category::ControlFlow)
            .input("cond", "B")
            .var_output("outputs", "", 1)
            .attr(AttrSpec::of("then_branch", AttrKind::Graph).required())
            .attr(AttrSpec::of("else_branch", AttrKind::Graph).required())
            .types("B", BOOL)
            .infer(if_infer),
    );
}
