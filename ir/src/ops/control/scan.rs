//! Scan.

use super::merge::{body_outputs, insert_dim, merge_types};
use crate::attr::{AttrKind, AttrLookup};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::{Dim, ValueType};

fn scan_requires(ctx: &InferCtx) -> Result<(), InferError> {
    let m = ctx.int("num_scan_inputs", 0);
    let first = if ctx.opset < 9 { 1 } else { 0 };
    let total = ctx.n_inputs().saturating_sub(first) as i64;
    if m < 1 || m > total {
        return Err(rule!(
            "Scan num_scan_inputs = {m} but the node has {total} state and scan inputs"
        ));
    }
    Ok(())
}

pub(super) fn scan_infer(ctx: &InferCtx) -> Infer {
    let old = ctx.opset < 9;
    let first = usize::from(old);
    let m = ctx.int("num_scan_inputs", 0).max(0) as usize;
    let total = ctx.n_inputs().saturating_sub(first);
    if m > total || m == 0 {
        return Err(rule!(
            "Scan num_scan_inputs = {m} but the node has {total} state and scan inputs"
        ));
    }
    let n_state = total - m;
    let n_out = ctx.n_outputs();
    if n_out < n_state {
        return Err(rule!(
            "Scan has {n_out} outputs, fewer than its {n_state} state values"
        ));
    }
    let k = n_out - n_state;
    if let Some(body) = ctx.subgraph_def("body") {
        if body.inputs.len() != n_state + m {
            return Err(rule!(
                "Scan body takes {} inputs, expected {n_state} + {m}",
                body.inputs.len()
            ));
        }
        if body.outputs.len() != n_out {
            return Err(rule!(
                "Scan body has {} outputs, the node {n_out}",
                body.outputs.len()
            ));
        }
    }
    let body = body_outputs(ctx, "body", n_out);
    let in_axes = ctx
        .ints("scan_input_axes")
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    let out_axes = ctx
        .ints("scan_output_axes")
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    if !in_axes.is_empty() && in_axes.len() != m {
        return Err(rule!(
            "Scan scan_input_axes has {} entries for {m} scan inputs",
            in_axes.len()
        ));
    }
    if !out_axes.is_empty() && out_axes.len() != k {
        return Err(rule!(
            "Scan scan_output_axes has {} entries for {k} scan outputs",
            out_axes.len()
        ));
    }
    // Sequence length (and, before opset 9, the batch dim) from the scan inputs.
    let mut seq_len = Dim::Unknown;
    let mut batch = Dim::Unknown;
    for i in 0..m {
        let Ok(t) = ctx.tensor(first + n_state + i) else {
            continue;
        };
        let Some(s) = &t.shape else { continue };
        let d = if old {
            if s.len() < 2 {
                return Err(rule!(
                    "Scan input {i} needs rank >= 2 (batch, sequence), found {}",
                    s.len()
                ));
            }
            if batch == Dim::Unknown {
                batch = s[0].clone();
            }
            s[1].clone()
        } else {
            let a = norm_axis(in_axes.get(i).copied().unwrap_or(0), s.len())?;
            s[a].clone()
        };
        if seq_len == Dim::Unknown {
            seq_len = d;
        }
    }
    if old && batch == Dim::Unknown {
        for i in 0..n_state {
            if let Some(d) = ctx
                .tensor(first + i)
                .ok()
                .and_then(|t| t.shape)
                .and_then(|s| s.first().cloned())
            {
                batch = d;
                break;
            }
        }
    }
    let mut out = Vec::with_capacity(n_out);
    for (i, b) in body.iter().enumerate().take(n_out) {
        if i < n_state {
            let init = ctx.input_type(first + i);
            let t = if old {
                insert_dim(b, 0, batch.clone())?
            } else {
                b.clone()
            };
            let t = match t {
                ValueType::Unknown => init,
                t => merge_types(&init, &t).map_err(|e| rule!("Scan state {i}: {e}"))?,
            };
            out.push(t);
        } else if old {
            let t = insert_dim(b, 0, seq_len.clone())?;
            out.push(insert_dim(&t, 0, batch.clone())?);
        } else {
            let axis = out_axes.get(i - n_state).copied().unwrap_or(0);
            out.push(insert_dim(b, axis, seq_len.clone())?);
        }
    }
    Ok(out)
}

/// Registers Scan.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new(
            "Scan",
            &[8, 9, 11, 16, 19, 21, 23, 24, 25],
            Category::ControlFlow,
        )
        // Opset 8 only: an optional sequence_lens input precedes the variadic one. Later
        // opsets have a single variadic port; `scan_infer` looks at the opset.
        .var_input("initial_state_and_scan_inputs", "", 1)
        .var_output("final_state_and_scan_outputs", "", 1)
        .attr(AttrSpec::of("body", AttrKind::Graph).required())
        .attr(
            AttrSpec::of("num_scan_inputs", AttrKind::Int)
                .required()
                .range(1, i64::MAX)
                .int_buckets(&[(1, 1), (2, 2), (3, i64::MAX)]),
        )
        .attr(
            AttrSpec::of("directions", AttrKind::Ints)
                .one_of_ints(&[0, 1])
                .versions(8, Some(9)),
        )
        .attr(AttrSpec::of("scan_input_axes", AttrKind::Ints).versions(9, None))
        .attr(AttrSpec::of("scan_output_axes", AttrKind::Ints).versions(9, None))
        .attr(
            AttrSpec::of("scan_input_directions", AttrKind::Ints)
                .one_of_ints(&[0, 1])
                .versions(9, None),
        )
        .attr(
            AttrSpec::of("scan_output_directions", AttrKind::Ints)
                .one_of_ints(&[0, 1])
                .versions(9, None),
        )
        .requires(scan_requires)
        .infer(scan_infer),
    );
}
