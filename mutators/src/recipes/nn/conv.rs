//! `Conv` and `ConvTranspose` (grouped, every padding style, `output_padding` or
//! `output_shape` for the transpose).
use super::window::window;
use super::{LIMIT, group_of, per_group, weight};
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::ops::auto_pad::{effective_kernel, is_same};
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn conv(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    conv_with(op, site, x, t, rng, Attrs::new())
}

/// [`conv`] with `extra` attributes on the node (a fused convolution's activation).
pub(crate) fn conv_with(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
    extra: Attrs,
) -> Result<String, BuildError> {
    let d = dims(t);
    let (n, c) = (d[0], d[1]);
    let spatial = &d[2..];
    let group = group_of(rng, c);
    let per = per_group(rng, group);
    let m = group * per;
    let mut w = window(rng, spatial, true);
    let transpose = op == "ConvTranspose";
    if transpose && chance(rng, 0.3) {
        let same = w.auto_pad.is_some_and(is_same);
        for i in 0..w.strides.len() {
            // Under SAME the stride stays within the window (see `window`).
            let eff = effective_kernel(w.kernel[i], w.dilations[i]);
            w.strides[i] = if same { eff.min(2) } else { 2 };
        }
    }
    let sp: i64 = spatial.iter().product();
    if transpose {
        let grow: i64 = w.strides.iter().product::<i64>().max(1) * 2;
        if n * m * sp * grow > LIMIT {
            w.strides.iter_mut().for_each(|s| *s = 1);
        }
    }
    let cin = c / group;
    let wshape: Vec<i64> = if transpose {
        [vec![c, per], w.kernel.clone()].concat()
    } else {
        [vec![m, cin], w.kernel.clone()].concat()
    };
    let ksz: i64 = w.kernel.iter().product();
    let wn = weight(site, t.dtype, &wshape, cin * ksz, rng);
    let mut a = extra;
    w.attrs(rng, &mut a, false, true);
    int_attr(rng, &mut a, "group", group, 1, 0.3);
    if transpose && w.auto_pad.is_none() {
        // Output padding below the stride, or an explicit output shape.
        match below(rng, 3) {
            0 if w.strides.iter().any(|&s| s > 1) => {
                let op_: Vec<i64> = w.strides.iter().map(|&s| between(rng, 0, s - 1)).collect();
                a.push(("output_padding", ais(&op_)));
            }
            1 if w.pads.is_none() => {
                let os: Vec<i64> = spatial
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| w.strides[i] * (s - 1) + (w.kernel[i] - 1) * w.dilations[i] + 1)
                    .collect();
                a.push(("output_shape", ais(&os)));
            }
            _ => {}
        }
    }
    let out_c = if transpose { per * group } else { m };
    if chance(rng, 0.5) {
        let b = site.random_constant("bias", t.dtype, &[out_c], -0.5, 0.5, rng);
        site.op1(op, &[x, &wn, &b], a)
    } else {
        site.op1(op, &[x, &wn], a)
    }
}
