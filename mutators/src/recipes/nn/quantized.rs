//! The quantized products `ConvInteger`, `QLinearConv` and `QLinearMatMul` (8-bit inputs,
//! scalar scales and zero points).
use super::window::window;
use super::{group_of, per_group};
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

/// The scalar scale (f32) and zero point (of `dt`) of operand `name` (`{name}_scale`,
/// `{name}_zero_point`).
pub(crate) fn scale_zero(
    site: &mut Site<'_>,
    name: &str,
    scale: f64,
    dt: DType,
    zero: f64,
) -> (String, String) {
    let s = site.constant_f64s(&format!("{name}_scale"), DType::F32, &[], &[scale]);
    let z = site.constant_f64s(&format!("{name}_zero_point"), dt, &[], &[zero]);
    (s, z)
}

/// `ConvInteger` / `QLinearConv` on an 8-bit input: weights of the input's dtype, scalar zero
/// points and scales.
pub(super) fn qconv(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let c = d[1];
    let group = group_of(rng, c);
    let m = group * per_group(rng, group);
    let w = window(rng, &d[2..], true);
    let mut wshape = vec![m, c / group];
    wshape.extend(&w.kernel);
    let dt = t.dtype;
    let wn = site.random_constant("w", dt, &wshape, 0.0, 8.0, rng);
    let mut a = Attrs::new();
    w.attrs(rng, &mut a, false, true);
    int_attr(rng, &mut a, "group", group, 1, 0.3);
    let zp = |site: &mut Site<'_>, h: &str| site.constant_f64s(h, dt, &[], &[2.0]);
    if op == "ConvInteger" {
        if chance(rng, 0.5) {
            let xz = zp(site, "x_zero_point");
            let wz = zp(site, "w_zero_point");
            return site.op1(op, &[x, &wn, &xz, &wz], a);
        }
        return site.op1(op, &[x, &wn], a);
    }
    let (xs, xz) = scale_zero(site, "x", 0.05, dt, 2.0);
    let (ws, wz) = scale_zero(site, "w", 0.02, dt, 2.0);
    let (ys, yz) = scale_zero(site, "y", 0.1, dt, 2.0);
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
) -> Result<String, BuildError> {
    let d = dims(t);
    let k = d[d.len() - 1];
    let n = between(rng, 1, 8);
    let dt = t.dtype;
    let b = site.random_constant("b", dt, &[k, n], 0.0, 8.0, rng);
    let (as_, az) = scale_zero(site, "a", 0.05, dt, 1.0);
    let (bs, bz) = scale_zero(site, "b", 0.05, dt, 1.0);
    let (ys, yz) = scale_zero(site, "y", 0.2, dt, 1.0);
    site.op1(op, &[x, &as_, &az, &b, &bs, &bz, &ys, &yz], vec![])
}
