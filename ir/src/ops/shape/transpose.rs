//! Transpose.

use super::fold::{build, each_index, flat, load, strides};
use super::{ALL26, out, unknown_dims};
use crate::attr::{AttrKind, AttrLookup};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::tensor::{Tensor, TensorExt};

fn perm_of(ctx: &InferCtx, rank: usize) -> Result<Vec<usize>, InferError> {
    match ctx.ints("perm") {
        Some(p) => {
            if p.len() != rank {
                return Err(rule!(
                    "perm {p:?} has {} entries for an input of rank {rank}",
                    p.len()
                ));
            }
            norm_axes(p, rank)
        }
        None => Ok((0..rank).rev().collect()),
    }
}

fn infer_transpose(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, ctx.ints("perm").map(|p| unknown_dims(p.len())));
    };
    let perm = perm_of(ctx, s.len())?;
    out(x.dtype, Some(perm.iter().map(|&p| s[p].clone()).collect()))
}

fn fold_transpose(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let vals = load(t)?;
    let perm = perm_of(ctx, t.dims.len()).ok()?;
    let od: Vec<i64> = perm.iter().map(|&p| t.dims[p]).collect();
    let st = strides(&t.dims);
    let picks = each_index(&od, |m| {
        let mut src = vec![0i64; m.len()];
        for (k, &p) in perm.iter().enumerate() {
            src[p] = m[k];
        }
        Some(flat(&src, &st))
    })?;
    Some(vec![build(t.dtype(), &od, &vals, &picks)])
}

/// Registers Transpose.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Transpose", &[1, 13, 21, 23, 24, 25], Category::Shape)
            .traits(Traits::RESHAPING)
            .input("data", "T")
            .output("transposed", "T")
            .attr(AttrSpec::of("perm", AttrKind::Ints))
            .types("T", ALL26)
            .infer(infer_transpose)
            .fold(fold_transpose),
    );
}
