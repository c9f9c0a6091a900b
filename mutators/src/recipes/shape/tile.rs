//! `Tile` (repeats of 1 or 2 per axis, within the element limit).
use super::LIMIT;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn tile(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let n: i64 = d.iter().product();
    let mut reps: Vec<i64> = d.iter().map(|_| pick(rng, &[1, 1, 2])).collect();
    if n * reps.iter().product::<i64>() > LIMIT.min(n * 4) {
        reps = vec![1; d.len()];
        let i = below(rng, d.len());
        if n * 2 <= LIMIT {
            reps[i] = 2;
        }
    }
    let c = site.constant_i64s("repeats", &[reps.len() as i64], &reps);
    site.op1(op, &[x, &c], vec![])
}
