//! `Shape` (with `start` / `end` from opset 15) and the output rules of `Shape` and `Size`
//! (whose builder is the plain one of `util.rs`).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn shape_op(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = t.rank().unwrap_or(0) as i64;
    let mut a = Attrs::new();
    if site.opset() >= 15 {
        let pick_bound = |rng: &mut SplitMix64| match below(rng, 4) {
            0 => -1 - between(rng, 0, r.max(1) - 1),
            1 => 0,
            2 => 1,
            _ => between(rng, 2, r.max(2) + 1),
        };
        if chance(rng, 0.6) {
            a.push(("start", ai(pick_bound(rng))));
        }
        if chance(rng, 0.6) {
            a.push(("end", ai(pick_bound(rng))));
        }
    }
    site.op1(op, &[x], a)
}

pub(super) fn i64_rank1(_: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(DType::I64, 1)]
}

pub(super) fn i64_scalar_out(_: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(DType::I64, 0)]
}
