//! Range.

use super::fold::{Vals, build};
use super::{out, static_len};
use crate::dtype::DType::{self, BF16, F16, F32, F64, I16, I32, I64};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::tensor::{Tensor, TensorExt};
use crate::types::Dim;

/// Range types.
const RANGE_T: &[DType] = &[F32, I16, I32, I64, F16, F64, BF16];

/// Elements of a Range, from scalar start, limit, delta.
fn range_len(start: f64, limit: f64, delta: f64) -> Option<i64> {
    if delta == 0.0 {
        return None;
    }
    Some(((limit - start) / delta).ceil().max(0.0) as i64)
}

fn infer_range(ctx: &InferCtx) -> Infer {
    let dt = ctx.dtype(0);
    for i in 0..3 {
        if let Some(r) = ctx.tensor(i)?.rank()
            && r != 0
            && !(r == 1 && static_len(ctx, i) == Some(1))
        {
            return Err(rule!("Range input {i} must be a scalar, found rank {r}"));
        }
    }
    let (Some(a), Some(b), Some(c)) = (ctx.const_f64s(0), ctx.const_f64s(1), ctx.const_f64s(2))
    else {
        return out(dt, Some(vec![Dim::Unknown]));
    };
    let (Some(&a), Some(&b), Some(&c)) = (a.first(), b.first(), c.first()) else {
        return Err(rule!("Range inputs are empty"));
    };
    let Some(n) = range_len(a, b, c) else {
        return Err(rule!("Range delta is 0"));
    };
    Ok(vec![fixed(dt, &[n])])
}

fn fold_range(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let dt = ctx.const_tensor(0)?.dtype();
    if dt.is_int() {
        let (a, b, c) = (
            *ctx.const_i64s(0)?.first()?,
            *ctx.const_i64s(1)?.first()?,
            *ctx.const_i64s(2)?.first()?,
        );
        let n = range_len(a as f64, b as f64, c as f64)?;
        if n > 4096 {
            return None;
        }
        let v: Vec<i64> = (0..n).map(|k| a + k * c).collect();
        Some(vec![build(
            dt,
            &[n],
            &Vals::I(v),
            &(0..n as usize).collect::<Vec<_>>(),
        )])
    } else {
        let (a, b, c) = (
            *ctx.const_f64s(0)?.first()?,
            *ctx.const_f64s(1)?.first()?,
            *ctx.const_f64s(2)?.first()?,
        );
        let n = range_len(a, b, c)?;
        if n > 4096 {
            return None;
        }
        let v: Vec<f64> = (0..n).map(|k| a + k as f64 * c).collect();
        Some(vec![f64_tensor(dt, &[n], &v)])
    }
}

/// Registers Range.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Range", &[11, 27], Category::Misc)
            .input("start", "T")
            .input("limit", "T")
            .input("delta", "T")
            .output("output", "T")
            .attr(
                AttrSpec::int("stash_type", 1)
                    .one_of_ints(&[1, 11, 16])
                    .versions(27, None),
            )
            .types("T", RANGE_T)
            .infer(infer_range)
            .ambiguous(|c| vector_for_scalar(c, "Range", &[0, 1, 2]))
            .fold(fold_range),
    );
}
