//! TopK.

use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType::I64;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// The k of a TopK node: the attribute before opset 10, the constant input after.
fn topk_k(ctx: &InferCtx) -> Option<i64> {
    if ctx.has_input(1) {
        ctx.const_i64s(1)
            .and_then(|v| if v.len() == 1 { Some(v[0]) } else { None })
    } else {
        ctx.int_opt("k")
    }
}

fn topk_requires(ctx: &InferCtx) -> Result<(), InferError> {
    if ctx.opset >= 10 && !ctx.has_input(1) {
        return Err(rule!("TopK at opset {} needs the K input", ctx.opset));
    }
    if let Some(k) = topk_k(ctx)
        && k < 0
    {
        return Err(rule!("TopK k = {k} is negative"));
    }
    Ok(())
}

fn topk_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    if ctx.has_input(1) {
        let kt = ctx.tensor(1)?;
        if let Some(r) = kt.rank()
            && r > 1
        {
            return Err(rule!(
                "TopK K must be a 1-element 1-D tensor, found rank {r}"
            ));
        }
    }
    let k = topk_k(ctx);
    let shape = match &x.shape {
        None => None,
        Some(s) if s.is_empty() => return Err(rule!("TopK input must have rank 1 or more")),
        Some(s) => {
            let a = norm_axis(ctx.int("axis", -1), s.len())?;
            let mut s = s.clone();
            if let (Some(k), Dim::Known(n)) = (k, &s[a])
                && k > *n
            {
                return Err(rule!("TopK k = {k} exceeds axis {a} of size {n}"));
            }
            s[a] = match k {
                Some(k) if k >= 0 => Dim::Known(k),
                _ => Dim::Unknown,
            };
            Some(s)
        }
    };
    Ok(vec![tensor(x.dtype, shape.clone()), tensor(I64, shape)])
}

/// Registers TopK.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("TopK", &[1, 10, 11, 24], Category::Reduce)
            .traits(Traits::DISCRETE | Traits::NAN_UNSPECIFIED)
            .input("X", "T")
            .input_from("K", "tensor(int64)", 10)
            .output("Values", "T")
            .output("Indices", "I")
            .attr(AttrSpec::int("axis", -1).int_buckets(AXIS_BUCKETS))
            .attr(
                AttrSpec::of("k", AttrKind::Int)
                    .required()
                    .versions(1, Some(10))
                    .int_buckets(&[(i64::MIN, 0), (1, 1), (2, 4), (5, i64::MAX)]),
            )
            .attr(
                AttrSpec::int("largest", 1)
                    .one_of_ints(&[0, 1])
                    .versions(11, None),
            )
            .attr(
                // sorted = 0 leaves the order of the results open: mutants never ask for it
                // (no bucket), so that results can be compared element by element.
                AttrSpec::int("sorted", 1)
                    .one_of_ints(&[0, 1])
                    .int_buckets(&[(1, 1)])
                    .versions(11, None),
            )
            .types("T", NUMERIC)
            .types("tensor(int64)", &[I64])
            .types("I", &[I64])
            .requires(topk_requires)
            .infer(topk_infer),
    );
}
