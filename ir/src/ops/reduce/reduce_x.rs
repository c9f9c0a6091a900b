//! The ReduceX ops: ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceMean, ReduceProd,
//! ReduceSumSquare, ReduceSum, ReduceMax and ReduceMin.

use super::REDUCE_T;
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType::{self, BF16, Bool, F16, F32, F64, I8, I32, I64, U8, U32, U64};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::tensor::{Tensor, TensorExt};
use crate::types::Dim;

/// ReduceMax / ReduceMin also take small ints and bool.
const REDUCE_MINMAX_T: &[DType] = &[F16, F32, F64, BF16, I32, I64, U32, U64, I8, U8, Bool];

/// The reduction a ReduceX op computes (for folding constants).
#[derive(Clone, Copy)]
enum Red {
    Sum,
    Prod,
    Max,
    Min,
    Other,
}

/// Adds one ReduceX op. `axes_input` is the opset from which `axes` is an input.
fn reduce_op(
    r: &mut Registry,
    name: &'static str,
    versions: &[i64],
    axes_input: i64,
    t: &[DType],
    red: Red,
) {
    let mut spec = OpSpec::new(name, versions, Category::Reduce)
        .input("data", "T")
        .opt_input("axes", "tensor(int64)")
        .output("reduced", "T")
        .attr(AttrSpec::int("keepdims", 1).one_of_ints(&[0, 1]))
        .attr(
            AttrSpec::of("axes", AttrKind::Ints)
                .non_empty()
                .versions(1, Some(axes_input)),
        )
        .attr(
            AttrSpec::int("noop_with_empty_axes", 0)
                .one_of_ints(&[0, 1])
                .versions(axes_input, None),
        )
        .types("T", t)
        .types("tensor(int64)", &[I64]);
    if matches!(red, Red::Max | Red::Min) {
        // What a NaN does to a maximum or a minimum is left open.
        spec = spec.traits(Traits::NAN_UNSPECIFIED);
    }
    if matches!(
        name,
        "ReduceL1" | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare"
    ) {
        spec = spec.ambiguous(noop_through_a_body);
    }
    spec = match red {
        Red::Sum => spec.infer(reduce_infer).fold(|c| fold_reduce(c, Red::Sum)),
        Red::Prod => spec.infer(reduce_infer).fold(|c| fold_reduce(c, Red::Prod)),
        Red::Max => spec.infer(reduce_infer).fold(|c| fold_reduce(c, Red::Max)),
        Red::Min => spec.infer(reduce_infer).fold(|c| fold_reduce(c, Red::Min)),
        Red::Other => spec.infer(reduce_infer),
    };
    r.add(spec);
}

/// `noop_with_empty_axes=1` without axes on a reduction whose function body maps the
/// elements before or after summing (ReduceLogSum is Log of ReduceSum): the text says the
/// output is the input, the body still applies the map (log 0 = -inf where the text gives 0;
/// ONNX Runtime, tract and onnx.reference follow the body).
fn noop_through_a_body(c: &InferCtx) -> Result<(), crate::registry::InferError> {
    let noop = c.int("noop_with_empty_axes", 0) != 0;
    match reduce_axes(c) {
        Axes::Known(a) if noop && a.is_empty() => Err(rule!(
            "noop_with_empty_axes=1 without axes: the text says the output is the input, the \
             function body still maps the elements (a log, an exponential, an absolute value or \
             a square)"
        )),
        _ => Ok(()),
    }
}

/// What a ReduceX node reduces over.
enum Axes {
    /// These axes (as written, maybe negative); empty = all or none (see noop_with_empty_axes).
    Known(Vec<i64>),
    /// Given by a non-constant input; `Some(n)` when its length is known.
    Unknown(Option<i64>),
}

fn reduce_axes(ctx: &InferCtx) -> Axes {
    if let Some(a) = ctx.ints("axes") {
        return Axes::Known(a.to_vec());
    }
    if ctx.has_input(1) {
        return match ctx.const_i64s(1) {
            Some(v) => Axes::Known(v),
            None => {
                let n = ctx
                    .tensor(1)
                    .ok()
                    .and_then(|t| t.static_dims())
                    .and_then(|d| d.first().copied());
                if n == Some(0) {
                    Axes::Known(vec![])
                } else {
                    Axes::Unknown(n)
                }
            }
        };
    }
    Axes::Known(vec![])
}

/// The normalized axes a ReduceX node reduces over, given the rank; `None` = nothing reduced.
fn reduced_set(
    ctx: &InferCtx,
    axes: &[i64],
    rank: usize,
) -> Result<Option<Vec<usize>>, InferError> {
    if axes.is_empty() {
        if ctx.int("noop_with_empty_axes", 0) != 0 {
            return Ok(None);
        }
        return Ok(Some((0..rank).collect()));
    }
    norm_axes(axes, rank).map(Some)
}

/// Output shape of a reduction.
pub(super) fn reduce_dims(shape: &[Dim], set: &[usize], keep: bool) -> Vec<Dim> {
    let mut out = Vec::with_capacity(shape.len());
    for (i, d) in shape.iter().enumerate() {
        if set.contains(&i) {
            if keep {
                out.push(Dim::Known(1));
            }
        } else {
            out.push(d.clone());
        }
    }
    out
}

fn reduce_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let keep = ctx.int("keepdims", 1) != 0;
    let shape = match (reduce_axes(ctx), &x.shape) {
        (Axes::Known(a), Some(s)) => match reduced_set(ctx, &a, s.len())? {
            None => Some(s.clone()),
            Some(set) => Some(reduce_dims(s, &set, keep)),
        },
        (Axes::Known(a), None) => {
            // Rank unknown: only "reduce everything without keeping dims" is known.
            if a.is_empty() && !keep && ctx.int("noop_with_empty_axes", 0) == 0 {
                Some(vec![])
            } else {
                None
            }
        }
        (Axes::Unknown(n), Some(s)) => {
            if keep {
                Some(vec![Dim::Unknown; s.len()])
            } else {
                match n {
                    Some(n) if n as usize <= s.len() && n > 0 => {
                        Some(vec![Dim::Unknown; s.len() - n as usize])
                    }
                    _ => None,
                }
            }
        }
        (Axes::Unknown(_), None) => None,
    };
    Ok(vec![tensor(x.dtype, shape)])
}

/// Reduces a small constant integer tensor (shape arithmetic such as ReduceProd of a shape).
fn fold_reduce(ctx: &InferCtx, red: Red) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let dt = t.dtype();
    if !matches!(dt, I64 | I32) {
        return None;
    }
    let vals = t.to_i64s().ok()?;
    let dims: Vec<i64> = t.dims.clone();
    let Axes::Known(axes) = reduce_axes(ctx) else {
        return None;
    };
    let keep = ctx.int("keepdims", 1) != 0;
    let set = match reduced_set(ctx, &axes, dims.len()).ok()? {
        None => return Some(vec![t.clone()]),
        Some(s) => s,
    };
    if set.iter().any(|&a| dims[a] == 0) {
        return None;
    }
    // Strides of the output laid over the input's dims (reduced dims count as size 1).
    let kept: Vec<i64> = dims
        .iter()
        .enumerate()
        .map(|(i, &d)| if set.contains(&i) { 1 } else { d })
        .collect();
    let n_out: i64 = kept.iter().product();
    let mut acc: Vec<Option<i64>> = vec![None; n_out as usize];
    for (flat, &v) in vals.iter().enumerate() {
        let mut rem = flat as i64;
        let mut out_idx = 0i64;
        let mut stride = 1i64;
        for i in (0..dims.len()).rev() {
            let c = rem % dims[i];
            rem /= dims[i];
            if !set.contains(&i) {
                out_idx += c * stride;
            }
            stride *= kept[i];
        }
        let slot = &mut acc[out_idx as usize];
        *slot = Some(match (*slot, red) {
            (None, _) => v,
            (Some(a), Red::Sum) => a.wrapping_add(v),
            (Some(a), Red::Prod) => a.wrapping_mul(v),
            (Some(a), Red::Max) => a.max(v),
            (Some(a), Red::Min) => a.min(v),
            (Some(_), Red::Other) => return None,
        });
    }
    let out: Vec<i64> = acc.into_iter().collect::<Option<Vec<_>>>()?;
    let out_dims: Vec<i64> = dims
        .iter()
        .enumerate()
        .filter(|(i, _)| keep || !set.contains(i))
        .map(|(i, &d)| if set.contains(&i) { 1 } else { d })
        .collect();
    Some(vec![if dt == I64 {
        i64_tensor(&out_dims, out)
    } else {
        f64_tensor(
            dt,
            &out_dims,
            &out.iter().map(|&v| v as f64).collect::<Vec<_>>(),
        )
    }])
}

/// Registers the ReduceX ops.
pub(super) fn register(r: &mut Registry) {
    let v4 = &[1, 11, 13, 18];
    reduce_op(r, "ReduceL1", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceL2", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceLogSum", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceLogSumExp", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceMean", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceProd", v4, 18, REDUCE_T, Red::Prod);
    reduce_op(r, "ReduceSumSquare", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceSum", &[1, 11, 13], 13, REDUCE_T, Red::Sum);
    reduce_op(
        r,
        "ReduceMax",
        &[1, 11, 12, 13, 18, 20],
        18,
        REDUCE_MINMAX_T,
        Red::Max,
    );
    reduce_op(
        r,
        "ReduceMin",
        &[1, 11, 12, 13, 18, 20],
        18,
        REDUCE_MINMAX_T,
        Red::Min,
    );
}
