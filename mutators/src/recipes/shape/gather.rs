//! `Gather`, `GatherElements` and `GatherND`, with in-range index constants (shared with the
//! scatters).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::MAX_RANK;
use crate::recipes::util::*;
use crate::site::Site;

/// In-range indices for an axis of size `n` (some negative), as i64 or i32.
pub(super) fn indices(
    site: &mut Site<'_>,
    rng: &mut SplitMix64,
    n: i64,
    shape: &[i64],
    i32_ok: bool,
) -> String {
    let count: i64 = shape.iter().product();
    let vals: Vec<i64> = (0..count)
        .map(|_| {
            let v = between(rng, 0, n - 1);
            if chance(rng, 0.2) { v - n } else { v }
        })
        .collect();
    if i32_ok && chance(rng, 0.3) {
        let f: Vec<f64> = vals.iter().map(|&v| v as f64).collect();
        site.constant_f64s("indices", DType::I32, shape, &f)
    } else {
        site.constant_i64s("indices", shape, &vals)
    }
}

pub(super) fn gather(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let (d, ax, i) = dims_and_axis(t, rng);
    let r = d.len();
    let n = d[i];
    if n == 0 {
        return Err(BuildError::not_applicable(
            "Gather would index an empty axis",
        ));
    }
    let q = below(rng, (MAX_RANK + 1 - r).min(3));
    let shape: Vec<i64> = (0..q).map(|_| between(rng, 1, 3)).collect();
    let idx = indices(site, rng, n, &shape, true);
    let mut a = Attrs::new();
    int_attr(rng, &mut a, "axis", ax, 0, 0.5);
    site.op1(op, &[x, &idx], a)
}

pub(super) fn gather_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    (0..3)
        .map(|q| r + q - 1)
        .filter(|&k| k <= MAX_RANK)
        .map(|k| (d, k))
        .collect()
}

pub(super) fn gather_elements(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let (d, ax, i) = dims_and_axis(t, rng);
    if d.contains(&0) {
        return Err(BuildError::not_applicable(
            "GatherElements would index an empty dimension",
        ));
    }
    let shape: Vec<i64> = d
        .iter()
        .enumerate()
        .map(|(j, &v)| {
            if j == i {
                between(rng, 1, 3)
            } else {
                between(rng, 1, v)
            }
        })
        .collect();
    let idx = indices(site, rng, d[i], &shape, true);
    let mut a = Attrs::new();
    int_attr(rng, &mut a, "axis", ax, 0, 0.5);
    site.op1(op, &[x, &idx], a)
}

pub(super) fn gather_nd(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let b = if site.opset() >= 12 && r >= 2 {
        pick(rng, &[0, 0, 1, 2]).min(r - 1)
    } else {
        0
    };
    let k = between(rng, 1, (r - b) as i64) as usize;
    if d[b..b + k].contains(&0) {
        return Err(BuildError::not_applicable(
            "GatherND would index an empty dimension",
        ));
    }
    let extra = between(rng, 1, 3);
    let mut shape: Vec<i64> = d[..b].to_vec();
    shape.push(extra);
    shape.push(k as i64);
    let count: i64 = shape.iter().product::<i64>() / k as i64;
    let mut vals = Vec::new();
    for _ in 0..count {
        for j in 0..k {
            vals.push(between(rng, 0, d[b + j] - 1));
        }
    }
    let idx = site.constant_i64s("indices", &shape, &vals);
    let mut a = Attrs::new();
    if site.opset() >= 12 && (b != 0 || chance(rng, 0.3)) {
        a.push(("batch_dims", ai(b as i64)));
    }
    site.op1(op, &[x, &idx], a)
}
