//! `Det` (the input cropped to square matrices of at most 4x4).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn det(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    _rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let s = d[r - 1].min(d[r - 2]).min(4);
    let mut v = x.to_string();
    if d[r - 1] != s || d[r - 2] != s {
        v = crop(site, x, [r as i64 - 2, r as i64 - 1], [s, s])?;
    }
    site.op1(op, &[&v], vec![])
}

pub(super) fn det_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r - 2)]
}
