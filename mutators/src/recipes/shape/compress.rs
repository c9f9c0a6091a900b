//! `Compress` (along an axis or over the flattened input).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn compress(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let with_axis = chance(rng, 0.7);
    let ax = if with_axis { axis(rng, r) } else { 0 };
    let len = if with_axis {
        d[axis_index(ax, r)]
    } else {
        d.iter().product::<i64>().min(16)
    };
    let k = between(rng, 1, len.max(1));
    let mut c: Vec<f64> = (0..k).map(|_| below(rng, 2) as f64).collect();
    c[0] = 1.0;
    let cond = site.constant_f64s("condition", DType::Bool, &[k], &c);
    if with_axis {
        site.op1(op, &[x, &cond], vec![("axis", ai(ax))])
    } else {
        site.op1(op, &[x, &cond], vec![])
    }
}

pub(super) fn compress_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r), (d, 1)]
}
