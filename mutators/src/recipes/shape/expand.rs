//! `Expand` (broadcasting a size-1 axis, or adding a leading one, within the element limit).
use super::LIMIT;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn expand(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let n: i64 = d.iter().product::<i64>().max(1);
    let mut shape: Vec<i64> = match below(rng, 3) {
        0 => d.iter().map(|&v| if v == 1 { 2 } else { v }).collect(),
        1 => d.iter().map(|&v| if v == 1 { 3 } else { 1 }).collect(),
        _ => d.clone(),
    };
    if d.len() < 4 && chance(rng, 0.5) {
        shape.insert(0, 2);
    }
    let grown: i64 = shape
        .iter()
        .rev()
        .zip(d.iter().rev().chain(std::iter::repeat(&1)))
        .map(|(&s, &v)| s.max(v))
        .product();
    if grown > LIMIT || grown > n * 8 {
        shape = d.clone();
    }
    let s = site.constant_i64s("shape", &[shape.len() as i64], &shape);
    site.op1(op, &[x, &s], vec![])
}

pub(super) fn expand_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r), (d, r + 1)]
}
