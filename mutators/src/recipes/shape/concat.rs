//! `Concat` (`x` with itself and constants sized along the axis).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn concat(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let (d, ax, i) = dims_and_axis(t, rng);
    let mut ins = vec![x.to_string()];
    for _ in 0..below(rng, 3) {
        if chance(rng, 0.3) {
            ins.push(x.to_string());
        } else {
            let mut s = d.clone();
            s[i] = between(rng, 1, 3);
            let c = konst(site, "part", t.dtype, &s, -2.0, 2.0, rng);
            ins.insert(below(rng, ins.len() + 1), c);
        }
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    site.op1(op, &refs, vec![("axis", ai(ax))])
}
