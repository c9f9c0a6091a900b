//! NonZero.

use super::{CLASSIC16, I64_ONLY, I64T, out};
use crate::dtype::DType::I64;
use crate::ops::common::*;
use crate::registry::{Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

fn infer_non_zero(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let count = ctx
        .const_f64s(0)
        .map(|v| Dim::Known(v.iter().filter(|x| **x != 0.0).count() as i64));
    match x.rank() {
        Some(r) => out(
            I64,
            Some(vec![Dim::Known(r as i64), count.unwrap_or(Dim::Unknown)]),
        ),
        None => out(I64, Some(vec![Dim::Unknown, Dim::Unknown])),
    }
}

/// Registers NonZero.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("NonZero", &[9, 13], Category::Index)
            .traits(Traits::DISCRETE)
            .input("X", "T")
            .output("Y", I64T)
            .types("T", CLASSIC16)
            .types(I64T, I64_ONLY)
            .infer(infer_non_zero),
    );
}
