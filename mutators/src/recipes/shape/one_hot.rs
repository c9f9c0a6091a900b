//! `OneHot` (the index / depth / value dtypes ONNX Runtime implements where it can).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn one_hot(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = t.rank().unwrap_or(0) as i64;
    let depth = between(rng, 2, 4);
    // The (indices, depth, values) dtype combinations ONNX Runtime implements where x's dtype
    // allows, other ones otherwise.
    let (dd, vd) = match t.dtype {
        DType::F32 => (DType::F32, DType::F32),
        DType::I64 => (DType::I64, pick(rng, &[DType::I64, DType::F32])),
        DType::I32 => (DType::F32, pick(rng, &[DType::F32, DType::I32])),
        _ => (
            pick(rng, &[DType::I64, DType::F32]),
            pick(rng, &[DType::F32, DType::I64, DType::I32]),
        ),
    };
    let dc = if dd == DType::I64 {
        site.constant_i64s("depth", &[], &[depth])
    } else {
        site.constant_f64s("depth", dd, &[1], &[depth as f64])
    };
    let vals = site.constant_f64s("values", vd, &[2], &[0.0, 1.0]);
    let mut a = Attrs::new();
    if chance(rng, 0.7) {
        a.push(("axis", ai(between(rng, -r - 1, r))));
    }
    site.op1(op, &[x, &dc, &vals], a)
}

pub(super) fn one_hot_outs(_: DType, r: usize) -> Vec<(DType, usize)> {
    [DType::F32, DType::I64, DType::I32]
        .into_iter()
        .map(|d| (d, r + 1))
        .collect()
}
