//! Shape and Size.

use super::{ALL26, I64_ONLY, out};
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType::I64;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::tensor::Tensor;
use crate::types::Dim;

/// The `[start, end)` range of Shape over a rank-`r` input.
fn shape_range(ctx: &InferCtx, r: usize) -> (usize, usize) {
    let r = r as i64;
    let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
    let start = clampi(ctx.int("start", 0));
    let end = ctx.int_opt("end").map_or(r as usize, clampi);
    (start, end.max(start))
}

fn infer_shape(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    match x.rank() {
        Some(r) => {
            let (a, b) = shape_range(ctx, r);
            Ok(vec![fixed(I64, &[(b - a) as i64])])
        }
        None => out(I64, Some(vec![Dim::Unknown])),
    }
}

fn fold_shape(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let s = ctx.tensor(0).ok()?.shape?;
    let (a, b) = shape_range(ctx, s.len());
    let v: Option<Vec<i64>> = s[a..b].iter().map(Dim::value).collect();
    Some(vec![i64_vec(v?)])
}

fn infer_size(_ctx: &InferCtx) -> Infer {
    Ok(vec![fixed(I64, &[])])
}

fn fold_size(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let n = ctx.tensor(0).ok()?.num_elements()?;
    Some(vec![i64_tensor(&[], vec![n])])
}

/// Registers Shape and Size.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Shape", &[1, 13, 15, 19, 21, 23, 24, 25], Category::Shape)
            .input("data", "T")
            .output("shape", "T1")
            .attr(
                AttrSpec::int("start", 0)
                    .int_buckets(AXIS_BUCKETS)
                    .versions(15, None),
            )
            .attr(
                AttrSpec::of("end", AttrKind::Int)
                    .int_buckets(AXIS_BUCKETS)
                    .versions(15, None),
            )
            .types("T", ALL26)
            .types("T1", I64_ONLY)
            .infer(infer_shape)
            .fold(fold_shape),
    );
    r.add(
        OpSpec::new("Size", &[1, 13, 19, 21, 23, 24, 25], Category::Shape)
            .input("data", "T")
            .output("size", "T1")
            .types("T", ALL26)
            .types("T1", I64_ONLY)
            .infer(infer_size)
            .fold(fold_size),
    );
}
