//! Tile.

use super::fold::{build, each_index, flat, load, strides};
use super::{CLASSIC16, I64_ONLY, axis_of, dim_mul, out, unknown_dims};
use crate::ops::common::*;
use crate::registry::{Category, InferCtx, OpSpec, Registry, Traits};
use crate::tensor::{Tensor, TensorExt};

fn infer_tile(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    if ctx.opset < 6 {
        // Old form: a scalar count of tiles along one axis.
        let (Some(t), Some(a)) = (ctx.const_i64s(1), ctx.const_i64s(2)) else {
            return out(x.dtype, Some(unknown_dims(s.len())));
        };
        let (Some(&t), Some(&a)) = (t.first(), a.first()) else {
            return Err(rule!("Tile tiles/axis are empty"));
        };
        let a = axis_of(a, s.len())?;
        let mut res = s;
        res[a] = dim_mul(&res[a], t);
        return out(x.dtype, Some(res));
    }
    match ctx.const_i64s(1) {
        Some(rep) => {
            if rep.len() != s.len() {
                return Err(rule!(
                    "Tile repeats {rep:?} has {} values for an input of rank {}",
                    rep.len(),
                    s.len()
                ));
            }
            if let Some(v) = rep.iter().find(|v| **v < 0) {
                return Err(rule!("Tile repeat {v} is negative"));
            }
            out(
                x.dtype,
                Some(s.iter().zip(&rep).map(|(d, &k)| dim_mul(d, k)).collect()),
            )
        }
        None => out(x.dtype, Some(unknown_dims(s.len()))),
    }
}

fn fold_tile(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    if ctx.opset < 6 {
        return None;
    }
    let t = ctx.const_tensor(0)?;
    let rep = ctx.const_i64s(1)?;
    if rep.len() != t.dims.len() || rep.iter().any(|r| *r < 0) {
        return None;
    }
    let vals = load(t)?;
    let od: Vec<i64> = t.dims.iter().zip(&rep).map(|(d, r)| d * r).collect();
    let st = strides(&t.dims);
    let picks = each_index(&od, |m| {
        let src: Vec<i64> = m.iter().zip(&t.dims).map(|(i, d)| i % d).collect();
        Some(flat(&src, &st))
    })?;
    Some(vec![build(t.dtype(), &od, &vals, &picks)])
}

/// Registers Tile.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Tile", &[1, 6, 13], Category::Shape)
            .traits(Traits::RESHAPING)
            .input("input", "T")
            .input("repeats", "T1")
            .opt_input("axis", "T1")
            .output("output", "T")
            .types("T", CLASSIC16)
            .types("T1", I64_ONLY)
            .infer(infer_tile)
            .fold(fold_tile),
    );
}
