//! Slice.

use super::fold::{build, each_index, flat, load, strides};
use super::{Arg, CLASSIC16, IND, axes_of, list_arg, out, unknown_at, unknown_dims};
use crate::attr::AttrKind;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::tensor::{Tensor, TensorExt};
use crate::types::Dim;

/// Start and length of a slice along a dim of size `d` (ONNX clamping rules).
pub(super) fn slice_range(d: i64, start: i64, end: i64, step: i64) -> (i64, i64) {
    if d <= 0 || step == 0 {
        return (0, 0);
    }
    let norm = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
    // Lengths in 128-bit arithmetic: steps may be as large as i64 allows.
    let len = |from: i64, to: i64, step: i128| ((to as i128 - from as i128 - 1) / step + 1) as i64;
    if step > 0 {
        let s = norm(start).clamp(0, d);
        let e = norm(end).clamp(0, d);
        (s, if e > s { len(s, e, step as i128) } else { 0 })
    } else {
        let s = norm(start).clamp(0, d - 1);
        let e = norm(end).clamp(-1, d - 1);
        (s, if s > e { len(e, s, -(step as i128)) } else { 0 })
    }
}

/// Per-axis (axis, start, end, step) of a Slice node, when known.
type SliceParams = Vec<(usize, i64, i64, i64)>;

fn slice_params(ctx: &InferCtx, rank: usize) -> Result<Option<SliceParams>, InferError> {
    let (starts, ends, axes, steps) = if ctx.opset < 10 {
        (
            list_arg(ctx, "starts", usize::MAX),
            list_arg(ctx, "ends", usize::MAX),
            list_arg(ctx, "axes", usize::MAX),
            Arg::Absent,
        )
    } else {
        (
            list_arg(ctx, "", 1),
            list_arg(ctx, "", 2),
            list_arg(ctx, "", 3),
            list_arg(ctx, "", 4),
        )
    };
    let (Arg::Known(starts), Arg::Known(ends)) = (starts, ends) else {
        return Ok(None);
    };
    if starts.len() != ends.len() {
        return Err(rule!(
            "Slice starts {starts:?} and ends {ends:?} differ in length"
        ));
    }
    let axes = match axes {
        Arg::Known(a) => a,
        Arg::Absent => (0..starts.len() as i64).collect(),
        Arg::Unknown => return Ok(None),
    };
    let steps = match steps {
        Arg::Known(s) => s,
        Arg::Absent => vec![1; starts.len()],
        Arg::Unknown => return Ok(None),
    };
    if axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(rule!(
            "Slice has {} starts, {} axes and {} steps",
            starts.len(),
            axes.len(),
            steps.len()
        ));
    }
    if let Some(p) = steps.iter().position(|&s| s == 0) {
        return Err(rule!("Slice step {p} is 0"));
    }
    let axes = axes_of(&axes, rank)?;
    Ok(Some(
        (0..starts.len())
            .map(|k| (axes[k], starts[k], ends[k], steps[k]))
            .collect(),
    ))
}

fn infer_slice(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    match slice_params(ctx, s.len())? {
        Some(params) => {
            let mut res = s.clone();
            for (a, st, en, sp) in params {
                res[a] = match &s[a] {
                    Dim::Known(d) => Dim::Known(slice_range(*d, st, en, sp).1),
                    other if sp == 1 && st == 0 && en >= i32::MAX as i64 => other.clone(),
                    _ => Dim::Unknown,
                };
            }
            out(x.dtype, Some(res))
        }
        None => {
            // Axes known: only those dims become unknown.
            let axes = if ctx.opset < 10 {
                list_arg(ctx, "axes", usize::MAX)
            } else {
                list_arg(ctx, "", 3)
            };
            match axes {
                Arg::Known(a) => {
                    let a = axes_of(&a, s.len())?;
                    out(x.dtype, Some(unknown_at(&s, &a)))
                }
                _ => out(x.dtype, Some(unknown_dims(s.len()))),
            }
        }
    }
}

fn fold_slice(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let vals = load(t)?;
    let params = slice_params(ctx, t.dims.len()).ok()??;
    let mut start: Vec<i64> = vec![0; t.dims.len()];
    let mut step: Vec<i64> = vec![1; t.dims.len()];
    let mut od = t.dims.clone();
    for (a, s, e, p) in params {
        let (b, n) = slice_range(t.dims[a], s, e, p);
        start[a] = b;
        step[a] = p;
        od[a] = n;
    }
    let st = strides(&t.dims);
    let picks = each_index(&od, |m| {
        let src: Vec<i64> = m
            .iter()
            .enumerate()
            .map(|(k, &i)| start[k] + i * step[k])
            .collect();
        Some(flat(&src, &st))
    })?;
    Some(vec![build(t.dtype(), &od, &vals, &picks)])
}

/// Registers Slice.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Slice", &[1, 10, 11, 13], Category::Index)
            .traits(Traits::RESHAPING)
            .input("data", "T")
            .input_from("starts", "Tind", 10)
            .input_from("ends", "Tind", 10)
            .opt_input("axes", "Tind")
            .opt_input("steps", "Tind")
            .output("output", "T")
            .attr(
                AttrSpec::of("starts", AttrKind::Ints)
                    .required()
                    .versions(1, Some(10)),
            )
            .attr(
                AttrSpec::of("ends", AttrKind::Ints)
                    .required()
                    .versions(1, Some(10)),
            )
            .attr(AttrSpec::of("axes", AttrKind::Ints).versions(1, Some(10)))
            .types("T", CLASSIC16)
            .types("Tind", IND)
            .infer(infer_slice)
            .fold(fold_slice),
    );
}
