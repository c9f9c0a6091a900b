//! `Transpose` (a random permutation, or the default reversal).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn transpose(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = t.rank().unwrap_or(0);
    let mut a = Attrs::new();
    if chance(rng, 0.8) {
        let perm: Vec<i64> = subset(rng, r, r).into_iter().map(|v| v as i64).collect();
        let mut perm = perm;
        for i in (1..perm.len()).rev() {
            let j = below(rng, i + 1);
            perm.swap(i, j);
        }
        a.push(("perm", ais(&perm)));
    }
    site.op1(op, &[x], a)
}
