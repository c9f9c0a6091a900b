//! `ReverseSequence` (batch / time axes 0 and 1 either way round).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn reverse_sequence(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let batch_axis = below(rng, 2) as i64;
    let time_axis = 1 - batch_axis;
    let (b, s) = (d[batch_axis as usize], d[time_axis as usize]);
    let lens: Vec<i64> = (0..b).map(|_| between(rng, 1, s)).collect();
    let lc = site.constant_i64s("sequence_lens", &[b], &lens);
    let mut a = Attrs::new();
    if batch_axis != 1 || chance(rng, 0.5) {
        a.push(("batch_axis", ai(batch_axis)));
        a.push(("time_axis", ai(time_axis)));
    }
    site.op1(op, &[x, &lc], a)
}
