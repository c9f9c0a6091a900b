//! `DeformConv` (offsets and masks sized from the output, grouped offsets).
use super::window::window;
use super::{group_of, per_group, weight};
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn deform_conv(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let (n, c, h, w) = (d[0], d[1], d[2], d[3]);
    let group = group_of(rng, c);
    let og = group_of(rng, c);
    let m = group * per_group(rng, group);
    let mut win = window(rng, &[h, w], true);
    win.auto_pad = None;
    let mut a = Attrs::new();
    win.attrs(rng, &mut a, false, true);
    let pads = win.pads.clone().unwrap_or(vec![0; 4]);
    let out: Vec<i64> = (0..2)
        .map(|i| {
            let eff = (win.kernel[i] - 1) * win.dilations[i] + 1;
            (d[2 + i] + pads[i] + pads[i + 2] - eff) / win.strides[i] + 1
        })
        .collect();
    int_attr(rng, &mut a, "group", group, 1, 0.3);
    int_attr(rng, &mut a, "offset_group", og, 1, 0.3);
    let kk = win.kernel[0] * win.kernel[1];
    let wn = weight(
        site,
        t.dtype,
        &[m, c / group, win.kernel[0], win.kernel[1]],
        c / group * kk,
        rng,
    );
    let off = site.random_constant(
        "offset",
        t.dtype,
        &[n, 2 * og * kk, out[0], out[1]],
        -1.0,
        1.0,
        rng,
    );
    let mut ins = vec![x.to_string(), wn, off];
    if chance(rng, 0.5) {
        ins.push(site.random_constant("bias", t.dtype, &[m], -0.5, 0.5, rng));
        if chance(rng, 0.5) {
            ins.push(site.random_constant(
                "mask",
                t.dtype,
                &[n, og * kk, out[0], out[1]],
                0.0,
                1.0,
                rng,
            ));
        }
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    site.op1(op, &refs, a)
}
