//! Compress.

use super::{CLASSIC15, axis_of, out};
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType::Bool;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

fn infer_compress(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let cond = ctx.const_f64s(1);
    if let Some(r) = ctx.tensor(1)?.rank()
        && r != 1
    {
        return Err(rule!("Compress condition must be 1-D, found rank {r}"));
    }
    let count = |limit: Option<i64>| -> Dim {
        match (&cond, limit) {
            (Some(c), Some(l)) => Dim::Known(
                c.iter()
                    .take(l.max(0) as usize)
                    .filter(|v| **v != 0.0)
                    .count() as i64,
            ),
            _ => Dim::Unknown,
        }
    };
    // The condition may be shorter than the axis (the rest is dropped), not longer.
    let too_long = |limit: Option<i64>| -> Result<(), InferError> {
        if let (Some(Dim::Known(n)), Some(l)) =
            (ctx.tensor(1)?.shape.and_then(|c| c.first().cloned()), limit)
            && n > l
        {
            return Err(rule!(
                "Compress condition has {n} entries for {l} slices or elements"
            ));
        }
        Ok(())
    };
    match ctx.int_opt("axis") {
        None => {
            too_long(x.num_elements())?;
            out(x.dtype, Some(vec![count(x.num_elements())]))
        }
        Some(a) => {
            let Some(s) = x.shape else {
                return out(x.dtype, None);
            };
            let a = axis_of(a, s.len())?;
            too_long(s[a].value())?;
            let mut res = s;
            res[a] = count(res[a].value());
            out(x.dtype, Some(res))
        }
    }
}

/// Registers Compress.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Compress", &[9, 11], Category::Index)
            .traits(Traits::DISCRETE)
            .input("input", "T")
            .input("condition", "T1")
            .output("output", "T")
            .attr(AttrSpec::of("axis", AttrKind::Int).int_buckets(AXIS_BUCKETS))
            .types("T", CLASSIC15)
            .types("T1", &[Bool])
            .infer(infer_compress),
    );
}
