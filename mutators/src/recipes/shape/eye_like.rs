//! `EyeLike` (every output dtype, diagonals `k` around 0).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn eye_like(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let mut a = Attrs::new();
    if chance(rng, 0.7) {
        a.push(("dtype", ai(pick(rng, &[1, 2, 3, 4, 5, 6, 7, 9, 10, 11]))));
    }
    maybe_int(rng, &mut a, 0.8, "k", &[-2, -1, 0, 1, 2]);
    site.op1(op, &[x], a)
}

pub(super) fn eye_outs(d: DType, _: usize) -> Vec<(DType, usize)> {
    let mut v: Vec<(DType, usize)> = [1, 2, 3, 4, 5, 6, 7, 9, 10, 11]
        .into_iter()
        .map(|c| (DType::from_code(c), 2))
        .collect();
    if !v.contains(&(d, 2)) {
        v.push((d, 2));
    }
    v
}
