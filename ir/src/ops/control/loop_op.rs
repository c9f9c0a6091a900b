//! Loop.

use super::IF_LOOP_VERSIONS;
use super::merge::{body_outputs, insert_dim, loop_carried};
use crate::attr::AttrKind;
use crate::dtype::DType::I64;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

pub(super) fn loop_infer(ctx: &InferCtx) -> Infer {
    let n_carried = ctx.n_inputs().saturating_sub(2);
    let n_out = ctx.n_outputs();
    if let Some(body) = ctx.subgraph_def("body") {
        let (bi, bo) = (body.inputs.len(), body.outputs.len());
        if bi != n_carried + 2 {
            return Err(rule!(
                "Loop body takes {bi} inputs, expected 2 + {n_carried} loop-carried"
            ));
        }
        if bo < n_carried + 1 {
            return Err(rule!(
                "Loop body has {bo} outputs, expected at least 1 + {n_carried}"
            ));
        }
        if n_out != bo - 1 {
            return Err(rule!(
                "Loop has {n_out} outputs, its body gives {} (besides cond)",
                bo - 1
            ));
        }
    }
    let body = body_outputs(ctx, "body", n_out + 1);
    // Iterations: exactly M when M is constant and there is no condition input.
    let iters = match (ctx.has_input(1), ctx.const_i64s(0)) {
        (false, Some(m)) if m.len() == 1 => Dim::Known(m[0].max(0)),
        _ => Dim::Unknown,
    };
    let mut out = Vec::with_capacity(n_out);
    for i in 0..n_out {
        let b = &body[i + 1];
        if i < n_carried {
            let init = ctx.input_type(i + 2);
            out.push(loop_carried(&init, b).map_err(|e| rule!("Loop-carried value {i}: {e}"))?);
        } else {
            out.push(insert_dim(b, 0, iters.clone())?);
        }
    }
    Ok(out)
}

/// Registers Loop.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Loop", IF_LOOP_VERSIONS, Category::ControlFlow)
            .opt_input("M", "I")
            .opt_input("cond", "B")
            .var_input("v_initial", "", 0)
            .var_output("v_final_and_scan_outputs", "", 1)
            .attr(AttrSpec::of("body", AttrKind::Graph).required())
            .types("I", &[I64])
            .types("B", BOOL)
            .infer(loop_infer),
    );
}
