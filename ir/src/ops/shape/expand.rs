//! Expand.

use super::fold::{build, each_index, flat, load, strides};
use super::{CLASSIC16, I64_ONLY, I64T, out, static_len, unknown_dims};
use crate::ops::common::*;
use crate::registry::{Category, InferCtx, OpSpec, Registry, Traits};
use crate::tensor::{Tensor, TensorExt};

fn infer_expand(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    match ctx.const_tensor(1) {
        Some(t) => {
            let target = const_dims(t).ok_or_else(|| rule!("Expand shape cannot be read"))?;
            // Dims of 1 in the target keep the input's dim; -1 or unreadable are unknown.
            let shape = broadcast_shapes(&[x.shape.clone(), Some(target)])?;
            out(x.dtype, shape)
        }
        None => match (static_len(ctx, 1), &x.shape) {
            (Some(n), Some(s)) => out(x.dtype, Some(unknown_dims(n.max(s.len())))),
            _ => out(x.dtype, None),
        },
    }
}

fn fold_expand(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let target = ctx.const_i64s(1)?;
    let vals = load(t)?;
    let r = t.dims.len().max(target.len());
    let pad = |v: &[i64]| -> Vec<i64> {
        let mut p = vec![1i64; r - v.len()];
        p.extend_from_slice(v);
        p
    };
    let (a, b) = (pad(&t.dims), pad(&target));
    let mut od = Vec::with_capacity(r);
    for k in 0..r {
        od.push(match (a[k], b[k]) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        });
    }
    let st = strides(&a);
    let picks = each_index(&od, |m| {
        let src: Vec<i64> = m
            .iter()
            .zip(&a)
            .map(|(&i, &d)| if d == 1 { 0 } else { i })
            .collect();
        Some(flat(&src, &st))
    })?;
    Some(vec![build(t.dtype(), &od, &vals, &picks)])
}

/// Registers Expand.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Expand", &[8, 13], Category::Shape)
            .traits(Traits::RESHAPING)
            .input("input", "T")
            .input("shape", I64T)
            .output("output", "T")
            .types("T", CLASSIC16)
            .types(I64T, I64_ONLY)
            .infer(infer_expand)
            .fold(fold_expand),
    );
}
