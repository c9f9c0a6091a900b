//! The quantized products `ConvInteger`, `QLinearConv` and `QLinearMatMul` (8-bit inputs,
//! scalar scales and zero points).
use super::group_of;
use super::window::window;
use crate::builder::SplitMix64;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

/// `ConvInteger` / `QLinearConv` on an 8-bit input: weights of the input's dtype, scalar zero
/// points and scales.
pub(super) fn qconv(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let c = d[1];
    let group = group_of(rng, c);
    let m = group * if group > 4 { 1 } else { between(rng, 1, 2) };
    let w = window(rng, &d[2..], true);
    let mut wshape = vec![m, c / group];
    wshape.extend(&w.kernel);
    let dt = t.dtype;
    let wn = site.random_constant("w", dt, &wshape, 0.0, 8.0, rng);
    let mut a = Attrs::new();
    w.attrs(rng, &mut a, false, true);
    if group != 1 || chance(rng, 0.3) {
        a.push(("group", ai(group)));
    }
    let zp = |site: &mut Site<'_>, h: &str| site.constant_f64s(h, dt, &[], &[2.0]);
    if op == "ConvInteger" {
        if chance(rng, 0.5) {
            let xz = zp(site, "x_zero_point");
            let wz = zp(site, "w_zero_point");
            return site.op1(op, &[x, &wn, &xz, &wz], a);
        }
        return site.op1(op, &[x, &wn], a);
    }
    let sc = |site: &mut Site<'_>, h: &str, v: f64| site.constant_f64s(h, DType::F32, &[], &[v]);
    let xs = sc(site, "x_scale", 0.05);
    let xz = zp(site, "x_zero_point");
    let ws = sc(site, "w_scale", 0.02);
    let wz = zp(site, "w_zero_point");
    let ys = sc(site, "y_scale", 0.1);
    let yz = zp(site, "y_zero_point");
    let mut ins = vec![x.to_string(), xs, xz, wn, ws, wz, ys, yz];
    if chance(rng, 0.5) {
        ins.push(site.random_constant("bias", DType::I32, &[m], -20.0, 20.0, rng));
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    site.op1(op, &refs, a)
}

pub(super) fn i32_same(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::I32, r)]
}

pub(super) fn qlinear_matmul(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let k = d[d.len() - 1];
    let n = between(rng, 1, 8);
    let dt = t.dtype;
    let b = site.random_constant("b", dt, &[k, n], 0.0, 8.0, rng);
    let sc = |site: &mut Site<'_>, h: &str, v: f64| site.constant_f64s(h, DType::F32, &[], &[v]);
    let zp = |site: &mut Site<'_>, h: &str| site.constant_f64s(h, dt, &[], &[1.0]);
    let as_ = sc(site, "a_scale", 0.05);
    let az = zp(site, "a_zero_point");
    let bs = sc(site, "b_scale", 0.05);
    let bz = zp(site, "b_zero_point");
    let ys = sc(site, "y_scale", 0.2);
    let yz = zp(site, "y_zero_point");
    site.op1(op, &[x, &as_, &az, &b, &bs, &bz, &ys, &yz], vec![])
}
