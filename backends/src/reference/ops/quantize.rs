//! Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul,
//! QLinearConv.
use super::linalg::matmul;
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

/// The range of a quantized type.
pub(super) fn qrange(dt: DType) -> R<(f64, f64)> {
    Ok(match dt {
        DType::U8 => (0.0, 255.0),
        DType::I8 => (-128.0, 127.0),
        DType::U16 => (0.0, 65535.0),
        DType::I16 => (-32768.0, 32767.0),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        d => return Err(unsup(format!("quantization to {d}"))),
    })
}

/// Checks the lengths of per-tensor (1) or per-axis (`shape[axis]`) scale and zero point.
fn check_params(shape: &[usize], axis: usize, scales: usize, zeros: usize) -> R<()> {
    let want = if scales == 1 { 1 } else { shape[axis] };
    if scales != want || (zeros != 1 && zeros != scales) {
        return Err(err(format!(
            "{scales} scales and {zeros} zero points for shape {shape:?}, axis {axis}"
        )));
    }
    Ok(())
}

/// Per-element parameter index for per-axis quantization.
fn param_index(shape: &[usize], axis: usize, plen: usize, i: usize) -> usize {
    if plen == 1 {
        0
    } else {
        let (_, len, inner) = split_at_axis(shape, axis);
        (i / inner) % len
    }
}

pub(super) fn op_quantize(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let s = inp(ins, 1)?.floats()?;
    let zt = opt(ins, 2)?;
    let dt = zt.map(|z| z.dt).unwrap_or(DType::U8);
    let z = match zt {
        Some(z) => z.floats()?,
        None => vec![0.0],
    };
    if n.int_opt("block_size").is_some_and(|b| b != 0) {
        return Err(unsup("blocked quantization"));
    }
    let axis = if s.len() == 1 {
        0
    } else {
        norm_axis(n.int("axis", 1), x.rank())?
    };
    check_params(&x.shape, axis, s.len(), z.len())?;
    let (lo, hi) = qrange(dt)?;
    let xv = x.floats()?;
    let out = xv
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let k = param_index(&x.shape, axis, s.len(), i);
            let zk = if z.len() == 1 { z[0] } else { z[k] };
            // ONNX does not fix the precision of the quotient: ONNX Runtime and onnx.reference
            // round the f32 quotient, tract multiplies by the f32 reciprocal. The f64
            // reference rounds the exact quotient; the native one, where that lies within a
            // few of the input type's ulps of a .5 tie without being one, takes the other side
            // of the tie, so that the envelope between them holds either rounding there and
            // nowhere else (an exact tie rounds half to even in every precision).
            let exact = v / s[k];
            let q = if cx.native {
                other_side_near_tie(exact, x.dt).unwrap_or(round_dt(x.dt, exact).round_ties_even())
            } else {
                exact.round_ties_even()
            };
            (q + zk).clamp(lo, hi)
        })
        .collect();
    one(T::from_f64s(dt, x.shape.clone(), out)?)
}

/// Within this many units of the last place of the input's type of a .5 tie, a quantization
/// quotient may round to either side in a correct library (f32 division rounds once, a
/// reciprocal product twice, a fused requantization through a product of scales more).
const TIE_ULPS: f64 = 4.0;

/// The integer on the other side of the .5 tie from where `q` (exact) rounds, when `q` lies
/// within [`TIE_ULPS`] of `dt`'s units of the last place of the tie but is not on it.
fn other_side_near_tie(q: f64, dt: DType) -> Option<f64> {
    let tie = q.floor() + 0.5;
    let ulp = (round_dt(dt, q.abs()).max(f64::MIN_POSITIVE)
        * match dt {
            DType::F16 => 2f64.powi(-10),
            DType::BF16 => 2f64.powi(-7),
            DType::F32 => 2f64.powi(-23),
            _ => 2f64.powi(-52),
        })
    .max(f64::EPSILON * q.abs());
    let off = (q - tie).abs();
    (off > 0.0 && off <= TIE_ULPS * ulp).then(|| {
        if q.round_ties_even() == q.floor() {
            q.floor() + 1.0
        } else {
            q.floor()
        }
    })
}

pub(super) fn op_dequantize(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let st = inp(ins, 1)?;
    let s = st.floats()?;
    let z = match opt(ins, 2)? {
        Some(z) => z.floats()?,
        None => vec![0.0],
    };
    let axis = if s.len() == 1 {
        0
    } else {
        norm_axis(n.int("axis", 1), x.rank())?
    };
    check_params(&x.shape, axis, s.len(), z.len())?;
    let xv = x.floats()?;
    let out = xv
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let k = param_index(&x.shape, axis, s.len(), i);
            let zk = if z.len() == 1 { z[0] } else { z[k] };
            (v - zk) * s[k]
        })
        .collect();
    one(T::f(st.dt, x.shape.clone(), out))
}

/// DynamicQuantizeLinear's arithmetic on `v` (in the precision of `dt`): uint8 values, the
/// scale (the range widened to hold 0, over 255, in f32) and the zero point.
pub(super) fn dynamic_quantize(v: &[f64], dt: DType) -> (Vec<f64>, f64, f64) {
    let mx = v.iter().copied().fold(0.0f64, f64::max);
    let mn = v.iter().copied().fold(0.0f64, f64::min);
    let scale = round_dt(DType::F32, (mx - mn) / 255.0);
    if scale == 0.0 {
        return (vec![0.0; v.len()], scale, 0.0);
    }
    let zp = round_dt(dt, 0.0 - mn / scale)
        .round_ties_even()
        .clamp(0.0, 255.0);
    let q = v
        .iter()
        .map(|&a| (round_dt(dt, a / scale).round_ties_even() + zp).clamp(0.0, 255.0))
        .collect();
    (q, scale, zp)
}

/// `v` quantized by [`dynamic_quantize`] (in f32) and dequantized: `(q - zero point) * scale`,
/// what a product of dynamically quantized operands reads (ONNX Runtime's
/// DynamicQuantizeLSTM).
pub(super) fn fake_quantize(v: &[f64]) -> Vec<f64> {
    let (q, scale, zp) = dynamic_quantize(v, DType::F32);
    q.iter().map(|x| (x - zp) * scale).collect()
}

pub(super) fn op_dynamic_quantize(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let (y, scale, zp) = dynamic_quantize(x.fs()?, x.dt);
    Ok(vec![
        V::T(T::from_f64s(DType::U8, x.shape.clone(), y)?),
        V::T(T::f(DType::F32, vec![], vec![scale])),
        V::T(T::i(DType::U8, vec![], vec![zp as i64])),
    ])
}

pub(super) fn op_qlinear_matmul(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    let asc = inp(ins, 1)?.scalar_f()?;
    let azp = inp(ins, 2)?.scalar_f()?;
    let b = inp(ins, 3)?;
    let bsc = inp(ins, 4)?.floats()?;
    let bzp = inp(ins, 5)?.floats()?;
    let ysc = inp(ins, 6)?.scalar_f()?;
    let yz = inp(ins, 7)?;
    if bsc.len() != 1 || bzp.len() != 1 {
        return Err(unsup("QLinearMatMul per-column parameters"));
    }
    let av: Vec<f64> = a.floats()?.iter().map(|&x| x - azp).collect();
    let bv: Vec<f64> = b.floats()?.iter().map(|&x| x - bzp[0]).collect();
    let (s, v) = matmul(&av, &a.shape, &bv, &b.shape)?;
    let (lo, hi) = qrange(yz.dt)?;
    let zp = yz.scalar_f()?;
    let out = v
        .iter()
        .map(|&x| ((x * asc * bsc[0] / ysc).round_ties_even() + zp).clamp(lo, hi))
        .collect();
    one(T::from_f64s(yz.dt, s, out)?)
}

pub(super) fn op_qlinear_conv(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let xs = inp(ins, 1)?.scalar_f()?;
    let xz = inp(ins, 2)?.scalar_f()?;
    let w = inp(ins, 3)?;
    let ws = inp(ins, 4)?.floats()?;
    let wz = inp(ins, 5)?.floats()?;
    let ys = inp(ins, 6)?.scalar_f()?;
    let yz = inp(ins, 7)?;
    let bias = opt(ins, 8)?.map(|b| b.floats()).transpose()?;
    let m = w.shape.first().copied().unwrap_or(0);
    let per = numel(w.shape.get(1..).unwrap_or(&[]));
    let pick = |v: &[f64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    if (ws.len() != 1 && ws.len() != m) || (wz.len() != 1 && wz.len() != m) {
        return Err(err("QLinearConv weight parameters"));
    }
    let xv: Vec<f64> = x.floats()?.iter().map(|&a| a - xz).collect();
    let wv: Vec<f64> = w
        .floats()?
        .iter()
        .enumerate()
        .map(|(i, &a)| a - pick(&wz, i / per.max(1)))
        .collect();
    let (shape, acc) = super::conv::conv_core(n, &xv, &x.shape, &wv, &w.shape, None, true)?;
    let osz = numel(&shape[2..]);
    let (lo, hi) = qrange(yz.dt)?;
    let zp = yz.scalar_f()?;
    let out = acc
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            let oc = (i / osz.max(1)) % m.max(1);
            let a = a + bias.as_ref().map(|b| b[oc]).unwrap_or(0.0);
            ((a * xs * pick(&ws, oc) / ys).round_ties_even() + zp).clamp(lo, hi)
        })
        .collect();
    one(T::from_f64s(yz.dt, shape, out)?)
}
