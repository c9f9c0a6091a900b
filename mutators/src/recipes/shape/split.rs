//! `Split` (equal parts or explicit sizes; sizes as an attribute before opset 13, as an input
//! from it; `num_outputs` from 18).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn split(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let (d, ax, i) = dims_and_axis(t, rng);
    let n = d[i];
    if n < 1 {
        return Err(BuildError::not_applicable("Split of an empty dimension"));
    }
    let mut a = Attrs::new();
    int_attr(rng, &mut a, "axis", ax, 0, 0.5);
    let opset = site.opset();
    // Equal parts (a divisor of n), or explicit sizes.
    let equal = chance(rng, 0.5);
    if equal {
        let divs: Vec<i64> = (1..=n.min(5)).filter(|k| n % k == 0).collect();
        let k = pick(rng, &divs);
        if opset >= 18 {
            a.push(("num_outputs", ai(k)));
        }
        return Ok(site.op(op, &[x], a, k as usize)?.remove(0));
    }
    let k = between(rng, 1, n.min(4));
    let mut sizes = vec![1i64; k as usize];
    for _ in 0..(n - k) {
        let i = below(rng, k as usize);
        sizes[i] += 1;
    }
    if opset >= 13 {
        let c = site.constant_i64s("split", &[k], &sizes);
        Ok(site.op(op, &[x, &c], a, k as usize)?.remove(0))
    } else {
        a.push(("split", ais(&sizes)));
        Ok(site.op(op, &[x], a, k as usize)?.remove(0))
    }
}
