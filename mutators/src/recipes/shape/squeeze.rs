//! `Squeeze` (making a size-1 axis first when there is none) and `Unsqueeze`; axes as an
//! attribute before opset 13, as an input from it.
use super::axes_const;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::MAX_RANK;
use crate::recipes::util::*;
use crate::site::Site;

/// `op` (`Squeeze` or `Unsqueeze`) over `axes` of `x`: an attribute before opset 13, an
/// input from it.
fn with_axes(site: &mut Site<'_>, op: &str, x: &str, axes: &[i64]) -> Result<String, BuildError> {
    if site.opset() >= 13 {
        let c = axes_const(site, axes);
        site.op1(op, &[x, &c], vec![])
    } else {
        site.op1(op, &[x], vec![("axes", ais(axes))])
    }
}

pub(super) fn squeeze(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let mut d = dims(t);
    let mut v = x.to_string();
    let ones: Vec<usize> = (0..d.len()).filter(|&i| d[i] == 1).collect();
    let ones = if ones.is_empty() {
        // Makes a size-1 axis to squeeze.
        let at = below(rng, d.len() + 1);
        v = with_axes(site, "Unsqueeze", x, &[at as i64])?;
        d.insert(at, 1);
        vec![at]
    } else {
        ones
    };
    let r = d.len() as i64;
    let k = 1 + below(rng, ones.len());
    let axes: Vec<i64> = subset(rng, ones.len(), k)
        .into_iter()
        .map(|i| {
            let a = ones[i] as i64;
            if chance(rng, 0.3) { a - r } else { a }
        })
        .collect();
    if chance(rng, 0.25) {
        return site.op1(op, &[&v], vec![]);
    }
    with_axes(site, op, &v, &axes)
}

pub(super) fn unsqueeze(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = t.rank().unwrap_or(0);
    let k = 1 + below(rng, (MAX_RANK - 1 - r).clamp(1, 2));
    let out_r = r + k;
    let axes: Vec<i64> = subset(rng, out_r, k)
        .into_iter()
        .map(|a| {
            if chance(rng, 0.3) {
                a as i64 - out_r as i64
            } else {
                a as i64
            }
        })
        .collect();
    with_axes(site, op, x, &axes)
}

pub(super) fn unsqueeze_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r + 1), (d, r + 2)]
        .into_iter()
        .filter(|&(_, k)| k < MAX_RANK)
        .collect()
}
