//! `QuantizeLinear`, `DequantizeLinear` (per-tensor, per-axis from opset 13, blocked from 21)
//! and `DynamicQuantizeLinear`.
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn quantize(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let mut a = Attrs::new();
    // Per-axis scale sometimes (opset 13+), else a scalar.
    let per_axis = site.opset() >= 13 && r >= 1 && chance(rng, 0.4);
    let (sshape, ax) = if per_axis {
        let ax = axis(rng, r);
        (vec![d[axis_index(ax, r)]], Some(ax))
    } else {
        (vec![], None)
    };
    if let Some(ax) = ax {
        int_attr(rng, &mut a, "axis", ax, 1, 0.5);
    }
    // Blocked scales (opset 21+): one scale per block of `block_size` along the axis.
    let mut sshape = sshape;
    if site.opset() >= 21 && r >= 1 && chance(rng, 0.3) {
        let ax = axis(rng, r);
        let i = axis_index(ax, r);
        let b = pick(rng, &[2, 3, 17]);
        sshape = d.clone();
        sshape[i] = (d[i] + b - 1) / b;
        a.retain(|(k, _)| *k != "axis");
        a.push(("axis", ai(ax)));
        a.push(("block_size", ai(b)));
    } else if site.opset() >= 21 && chance(rng, 0.2) {
        a.push(("block_size", ai(0)));
    }
    let n: i64 = sshape.iter().product();
    let sd = if op == "QuantizeLinear" && site.opset() >= 19 {
        t.dtype
    } else {
        DType::F32
    };
    let scale: Vec<f64> = (0..n).map(|_| rng.range(0.01, 0.2)).collect();
    let sc = site.constant_f64s("scale", sd, &sshape, &scale);
    let zd = if op == "QuantizeLinear" {
        pick(rng, &[DType::U8, DType::I8])
    } else {
        t.dtype
    };
    if op == "QuantizeLinear" && site.opset() >= 19 {
        flag(rng, &mut a, "saturate");
    }
    if chance(rng, 0.3) || (op == "DequantizeLinear" && zd == DType::I32) {
        return site.op1(op, &[x, &sc], a);
    }
    let zp = site.random_constant("zero_point", zd, &sshape, 0.0, 10.0, rng);
    site.op1(op, &[x, &sc, &zp], a)
}

pub(super) fn quant_outs(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::U8, r), (DType::I8, r)]
}

pub(super) fn f32_same(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::F32, r)]
}

pub(super) fn dyn_quant(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    _rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    Ok(site.op(op, &[x], vec![], 3)?.remove(0))
}

pub(super) fn u8_same(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::U8, r)]
}
