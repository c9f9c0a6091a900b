//! ONNX Runtime's `com.microsoft` ops (see `mutagraph_ir::ops::contrib` for which and why):
//! the GELU family, the skip normalizations, the fused linear ops, the quantized ones,
//! DynamicQuantizeLSTM, RotaryEmbedding, MatMulNBits and MultiHeadAttention, each from its
//! documented definition, in f64.
use super::conv::op_conv;
use super::linalg::{matmul, op_gemm};
use super::quantize::{dynamic_quantize, qrange};
use super::recurrent::{Quantized, recurrent};
use super::reshape::transpose;
use super::softmax::{SoftKind, softmax_groups};
use super::unary::{erf, map_f, sigmoid, softplus};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use mutagraph_ir::ops::contrib::attention::{Heads, attention_scale, causal_masked, mha_geometry};
use mutagraph_ir::ops::contrib::nbits::nbits_layout;
use mutagraph_ir::ops::contrib::rotary::{Rope, rope_geometry, rope_positions};

type Out = R<Vec<V>>;

fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2))
}

/// `x + bias` over the last axis, `bias` absent or a vector of it.
fn plus_bias(x: &T, bias: Option<&T>) -> R<T> {
    let Some(b) = bias else {
        return Ok(x.clone());
    };
    let bv = expand_to(b, &x.shape)?.floats()?;
    let xv = x.fs()?;
    Ok(T::f(
        x.dt,
        x.shape.clone(),
        xv.iter().zip(&bv).map(|(a, b)| a + b).collect(),
    ))
}

pub(super) fn op_fast_gelu(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let x = plus_bias(inp(ins, 0)?, opt(ins, 1)?)?;
    let c = (2.0 / std::f64::consts::PI).sqrt();
    one(map_f(&x, |v| {
        0.5 * v * (1.0 + (c * (v + 0.044715 * v * v * v)).tanh())
    })?)
}

pub(super) fn op_bias_gelu(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let x = plus_bias(inp(ins, 0)?, Some(inp(ins, 1)?))?;
    one(map_f(&x, gelu)?)
}

pub(super) fn op_quick_gelu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let alpha = n.float("alpha", 1.702) as f64;
    one(map_f(inp(ins, 0)?, |v| v * sigmoid(alpha * v))?)
}

/// SkipLayerNormalization (`rms` false) and SkipSimplifiedLayerNormalization (`rms` true):
/// outputs, mean, inverse standard deviation and the sum, over the last axis.
fn skip_norm(cx: &Cx, n: &Node, ins: &[Option<&V>], rms: bool) -> Out {
    let x = inp(ins, 0)?;
    // The native reference rounds every step to the element type, sums included (an f32
    // variance of inputs near 1e19 overflows, as in ONNX Runtime's kernel; round 13).
    let r = |v: f64| if cx.native { round_dt(x.dt, v) } else { v };
    let sum_of = |it: &mut dyn Iterator<Item = f64>| it.fold(0.0, |a, v| r(a + v));
    let skip = expand_to(inp(ins, 1)?, &x.shape)?.floats()?;
    let h = *x.shape.last().ok_or_else(|| err("input is a scalar"))?;
    let vector = |i: usize| -> R<Option<Vec<f64>>> {
        match opt(ins, i)? {
            Some(t) if t.len() == h => Ok(Some(t.floats()?)),
            Some(t) => Err(err(format!(
                "input {i} of shape {:?} for hidden {h}",
                t.shape
            ))),
            None => Ok(None),
        }
    };
    let gamma = vector(2)?.ok_or_else(|| err("missing gamma"))?;
    let (beta, bias) = if rms {
        (None, vector(3)?)
    } else {
        (vector(3)?, vector(4)?)
    };
    let eps = n.float("epsilon", 1e-12) as f64;
    let xv = x.fs()?;
    let mut sum = vec![0.0; xv.len()];
    let mut y = vec![0.0; xv.len()];
    let rows = xv.len() / h.max(1);
    let (mut means, mut invs) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
    for row in 0..rows {
        let s = &mut sum[row * h..][..h];
        for (i, v) in s.iter_mut().enumerate() {
            let p = row * h + i;
            *v = r(r(xv[p] + skip[p]) + bias.as_ref().map_or(0.0, |b| b[i]));
        }
        let mean = if rms {
            0.0
        } else {
            r(sum_of(&mut s.iter().copied()) / h as f64)
        };
        let var = r(sum_of(&mut s.iter().map(|v| r(r(v - mean) * r(v - mean)))) / h as f64);
        let inv = r(1.0 / r(r(var + eps).sqrt()));
        for i in 0..h {
            let scaled = r(r(r(s[i] - mean) * inv) * gamma[i]);
            y[row * h + i] = r(scaled + beta.as_ref().map_or(0.0, |b| b[i]));
        }
        means.push(mean);
        invs.push(inv);
    }
    let mut stat = x.shape.clone();
    *stat.last_mut().unwrap() = 1;
    Ok(vec![
        V::T(T::f(x.dt, x.shape.clone(), y)),
        V::T(T::f(DType::F32, stat.clone(), means)),
        V::T(T::f(DType::F32, stat, invs)),
        V::T(T::f(x.dt, x.shape.clone(), sum)),
    ])
}

pub(super) fn op_skip_layer_norm(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    skip_norm(cx, n, ins, false)
}

pub(super) fn op_skip_simplified_layer_norm(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    skip_norm(cx, n, ins, true)
}

/// The activation a fused op names, with its parameters.
fn activation(name: &str, p: [f64; 3]) -> R<Box<dyn Fn(f64) -> f64>> {
    let [a, b, g] = p;
    Ok(match name {
        "" | "Identity" => Box::new(|x| x),
        // NaN stays NaN, as in Relu itself (`f64::max` would make it 0).
        "Relu" => Box::new(|x: f64| if x < 0.0 { 0.0 } else { x }),
        "Tanh" => Box::new(f64::tanh),
        "Sigmoid" => Box::new(sigmoid),
        "Softsign" => Box::new(|x: f64| x / (1.0 + x.abs())),
        "Softplus" => Box::new(softplus),
        "LeakyRelu" => Box::new(move |x: f64| if x < 0.0 { a * x } else { x }),
        "Elu" => Box::new(move |x: f64| if x < 0.0 { a * (x.exp() - 1.0) } else { x }),
        "ThresholdedRelu" => Box::new(move |x: f64| if x > a { x } else { 0.0 }),
        "HardSigmoid" => Box::new(move |x: f64| (a * x + b).clamp(0.0, 1.0)),
        "Selu" => Box::new(move |x: f64| g * if x <= 0.0 { a * (x.exp() - 1.0) } else { x }),
        "Clip" => Box::new(move |x: f64| if x.is_nan() { x } else { x.max(a).min(b) }),
        other => return Err(unsup(format!("fused activation {other}"))),
    })
}

fn activated(y: V, f: impl Fn(f64) -> f64) -> Out {
    match y {
        V::T(t) => one(map_f(&t, f)?),
        _ => Err(err("a fused op made a non-tensor")),
    }
}

pub(super) fn op_fused_conv(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let params = n.floats("activation_params").unwrap_or(&[]);
    let p = |i: usize| params.get(i).map_or(0.0, |&v| v as f64);
    let f = activation(&n.string("activation", ""), [p(0), p(1), 0.0])?;
    let mut y = op_conv(cx, n, &ins[..ins.len().min(3)])?.remove(0);
    if let (Some(z), V::T(t)) = (opt(ins, 3)?, &mut y) {
        let zv = expand_to(z, &t.shape)?.floats()?;
        *t = T::f(
            t.dt,
            t.shape.clone(),
            t.fs()?.iter().zip(&zv).map(|(a, b)| a + b).collect(),
        );
    }
    activated(y, f)
}

pub(super) fn op_fused_gemm(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let p = |k: &str| match n.attr(k) {
        Some(AttrValue::Float(v)) => *v as f64,
        _ => 0.0,
    };
    let f = activation(
        &n.string("activation", ""),
        [
            p("activation_alpha"),
            p("activation_beta"),
            p("activation_gamma"),
        ],
    )?;
    activated(op_gemm(cx, n, ins)?.remove(0), f)
}

/// FusedMatMul's operand: the first axis moved before the last two, then those swapped.
fn fused_operand(t: &T, trans_batch: bool, trans: bool) -> R<T> {
    let r = t.rank();
    let mut perm: Vec<usize> = (0..r).collect();
    if trans_batch && r >= 3 {
        let first = perm.remove(0);
        perm.insert(r - 2, first);
    }
    if trans && r >= 2 {
        perm.swap(r - 2, r - 1);
    }
    transpose(t, &perm)
}

pub(super) fn op_fused_matmul(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let flag = |k: &str| n.int(k, 0) != 0;
    let a = fused_operand(inp(ins, 0)?, flag("transBatchA"), flag("transA"))?;
    let b = fused_operand(inp(ins, 1)?, flag("transBatchB"), flag("transB"))?;
    let alpha = n.float("alpha", 1.0) as f64;
    let (s, v) = matmul(a.fs()?, &a.shape, b.fs()?, &b.shape)?;
    one(T::f(a.dt, s, v.into_iter().map(|x| alpha * x).collect()))
}

/// A per-tensor quantization parameter: input `i`'s one value, or `default` when absent.
fn param(ins: &[Option<&V>], i: usize, default: f64) -> R<f64> {
    match opt(ins, i)? {
        Some(t) if t.len() == 1 => Ok(t.floats()?[0]),
        Some(t) => Err(err(format!(
            "input {i} of shape {:?} is not per-tensor",
            t.shape
        ))),
        None => Ok(default),
    }
}

fn quantize(dt: DType, v: f64, zp: f64) -> R<f64> {
    let (lo, hi) = qrange(dt)?;
    Ok((v.round_ties_even() + zp).clamp(lo, hi))
}

/// QLinearAdd (`mul` false) and QLinearMul (`mul` true), numpy broadcasting.
fn qlinear_binary(ins: &[Option<&V>], mul: bool) -> Out {
    let (a, b) = (inp(ins, 0)?, inp(ins, 3)?);
    let (sa, za) = (param(ins, 1, 1.0)?, param(ins, 2, 0.0)?);
    let (sb, zb) = (param(ins, 4, 1.0)?, param(ins, 5, 0.0)?);
    let (sc, zc) = (param(ins, 6, 1.0)?, param(ins, 7, 0.0)?);
    let shape = bcast_shapes(&[&a.shape, &b.shape])?;
    let av = expand_to(a, &shape)?.floats()?;
    let bv = expand_to(b, &shape)?.floats()?;
    let out = av
        .iter()
        .zip(&bv)
        .map(|(&x, &y)| {
            let v = if mul {
                (x - za) * (y - zb) * (sa * sb) / sc
            } else {
                (sa * (x - za) + sb * (y - zb)) / sc
            };
            quantize(a.dt, v, zc)
        })
        .collect::<R<Vec<f64>>>()?;
    one(T::from_f64s(a.dt, shape, out)?)
}

pub(super) fn op_qlinear_add(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    qlinear_binary(ins, false)
}

pub(super) fn op_qlinear_mul(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    qlinear_binary(ins, true)
}

/// Dequantize, `f`, quantize (QLinearSigmoid, QLinearLeakyRelu).
fn qlinear_unary(ins: &[Option<&V>], f: impl Fn(f64) -> f64) -> Out {
    let x = inp(ins, 0)?;
    let (sx, zx) = (param(ins, 1, 1.0)?, param(ins, 2, 0.0)?);
    let (sy, zy) = (param(ins, 3, 1.0)?, param(ins, 4, 0.0)?);
    let out = x
        .floats()?
        .iter()
        .map(|&q| quantize(x.dt, f(sx * (q - zx)) / sy, zy))
        .collect::<R<Vec<f64>>>()?;
    one(T::from_f64s(x.dt, x.shape.clone(), out)?)
}

pub(super) fn op_qlinear_sigmoid(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    qlinear_unary(ins, sigmoid)
}

pub(super) fn op_qlinear_leaky_relu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let alpha = n.float("alpha", 0.01) as f64;
    qlinear_unary(ins, move |x| if x < 0.0 { alpha * x } else { x })
}

/// Input `i`: one value, or one per column of a `cols`-column operand; `default` when absent.
fn per_column(ins: &[Option<&V>], i: usize, cols: usize, default: f64) -> R<Vec<f64>> {
    match opt(ins, i)? {
        None => Ok(vec![default; cols]),
        Some(t) if t.len() == 1 => Ok(vec![t.floats()?[0]; cols]),
        Some(t) if t.len() == cols => t.floats(),
        Some(t) => Err(err(format!(
            "input {i} of shape {:?} for {cols} columns",
            t.shape
        ))),
    }
}

/// `(a - za) x (b - zb)` with B's parameters per column, times `sa * sb`, plus `bias`.
fn scaled_matmul(
    a: &[f64],
    ash: &[usize],
    b: &T,
    sa: f64,
    ins: &[Option<&V>],
    slots: [usize; 3],
) -> Out {
    let cols = b.shape.last().copied().unwrap_or(1);
    let sb = per_column(ins, slots[0], cols, 1.0)?;
    let zb = per_column(ins, slots[1], cols, 0.0)?;
    let bias = per_column(ins, slots[2], cols, 0.0)?;
    let bv: Vec<f64> = b
        .floats()?
        .iter()
        .enumerate()
        .map(|(i, &v)| v - zb[i % cols])
        .collect();
    let (s, v) = matmul(a, ash, &bv, &b.shape)?;
    let m = s.last().copied().unwrap_or(1);
    // A 1-D B leaves no column axis: its one column's parameters apply.
    let col = |i: usize| if b.rank() == 1 { 0 } else { i % m };
    let out = v
        .iter()
        .enumerate()
        .map(|(i, &x)| x * sa * sb[col(i)] + bias[col(i)])
        .collect();
    one(T::f(DType::F32, s, out))
}

pub(super) fn op_matmul_integer_to_float(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    let (sa, za) = (param(ins, 2, 1.0)?, param(ins, 4, 0.0)?);
    let av: Vec<f64> = a.floats()?.iter().map(|&v| v - za).collect();
    scaled_matmul(&av, &a.shape, inp(ins, 1)?, sa, ins, [3, 5, 6])
}

pub(super) fn op_dynamic_quantize_matmul(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    // A quantized as DynamicQuantizeLinear does, centred on its zero point: the integers
    // the product multiplies.
    let (q, scale, zp) = dynamic_quantize(a.fs()?, DType::F32);
    let aq: Vec<f64> = q.iter().map(|x| x - zp).collect();
    scaled_matmul(&aq, &a.shape, inp(ins, 1)?, scale, ins, [2, 3, 4])
}

/// DynamicQuantizeLSTM's W or R (`[directions, k, 4 * hidden]`, 8-bit) dequantized with its
/// scale and zero point (one per direction, or one per column) into LSTM's layout
/// `[directions, 4 * hidden, k]`.
fn lstm_weight(w: &T, scale: &T, zero: &T) -> R<V> {
    let &[dirs, k, n] = w.shape.as_slice() else {
        return Err(err(format!("weight of shape {:?} is not 3-D", w.shape)));
    };
    let param = |t: &T| -> R<Vec<f64>> {
        match t.floats()? {
            v if v.len() == dirs => Ok(v.iter().flat_map(|&x| vec![x; n]).collect()),
            v if v.len() == dirs * n => Ok(v),
            _ => Err(err(format!(
                "parameter of shape {:?} for {dirs} x {n}",
                t.shape
            ))),
        }
    };
    let (s, z, wv) = (param(scale)?, param(zero)?, w.floats()?);
    let mut out = vec![0.0; dirs * n * k];
    for d in 0..dirs {
        for i in 0..k {
            for j in 0..n {
                let c = d * n + j;
                out[c * k + i] = (wv[(d * k + i) * n + j] - z[c]) * s[c];
            }
        }
    }
    Ok(V::T(T::f(DType::F32, vec![dirs, n, k], out)))
}

pub(super) fn op_dynamic_quantize_lstm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let w = lstm_weight(inp(ins, 1)?, inp(ins, 8)?, inp(ins, 9)?)?;
    let r = lstm_weight(inp(ins, 2)?, inp(ins, 10)?, inp(ins, 11)?)?;
    let mut lstm: Vec<Option<&V>> = ins.iter().take(8).copied().collect();
    lstm[1] = Some(&w);
    lstm[2] = Some(&r);
    let y_output = n.outputs.first().is_some_and(|y| !y.is_empty());
    recurrent(n, &lstm, Some(Quantized { y_output }))
}

/// One head's first `2 * c.len()` values of `x` rotated into `y` by the angles of cosines `c`
/// and sines `s`: the pairs `(i, i + R/2)`, or `(2i, 2i + 1)` when `interleaved`.
fn rotate(x: &[f64], y: &mut [f64], c: &[f64], s: &[f64], interleaved: bool) {
    let half = c.len();
    for i in 0..half {
        let (a, b) = if interleaved {
            (2 * i, 2 * i + 1)
        } else {
            (i, i + half)
        };
        y[a] = x[a] * c[i] - x[b] * s[i];
        y[b] = x[b] * c[i] + x[a] * s[i];
    }
}

/// Where head `h` of token `t` of row `b` starts in the input.
fn head_offset(g: &Rope, b: i64, t: i64, h: i64) -> usize {
    let token = if g.four_d {
        (b * g.heads + h) * g.seq + t
    } else {
        (b * g.seq + t) * g.heads + h
    };
    (token * g.head) as usize
}

/// RotaryEmbedding (`mutagraph_ir::ops::contrib::rotary`): the first R/2 values of the caches'
/// row at the token's position rotate each head's first R values; `scale` is not applied
/// (ONNX Runtime's kernel ignores it).
pub(super) fn op_rotary_embedding(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let (x, ids, cos) = (inp(ins, 0)?, inp(ins, 1)?, inp(ins, 2)?);
    let dims = |t: &T| t.shape.iter().map(|&d| d as i64).collect::<Vec<_>>();
    let (heads, rot) = (n.int("num_heads", 0), n.int("rotary_embedding_dim", 0));
    let g = rope_geometry(&dims(x), &dims(cos), heads, rot).map_err(err)?;
    let pos = rope_positions(&g, &ids.ints()?, ids.rank()).map_err(err)?;
    let (cv, sv) = (cos.floats()?, inp(ins, 3)?.floats()?);
    if sv.len() != cv.len() {
        return Err(err("cos_cache and sin_cache differ in shape"));
    }
    let (cols, half) = (cos.shape[1], g.rotary as usize / 2);
    let interleaved = n.int("interleaved", 0) == 1;
    let xv = x.fs()?;
    let mut y = xv.to_vec();
    for b in 0..g.batch {
        for t in 0..g.seq {
            let row = pos[(b * g.seq + t) as usize] as usize * cols;
            let (c, s) = (&cv[row..row + half], &sv[row..row + half]);
            for h in 0..g.heads {
                let at = head_offset(&g, b, t, h);
                rotate(&xv[at..], &mut y[at..], c, s, interleaved);
            }
        }
    }
    one(T::f(x.dt, x.shape.clone(), y))
}

/// The `bits`-wide value at position `i` of `bytes`, low bits first.
fn unpack(bytes: &[f64], i: usize, bits: usize) -> f64 {
    let byte = bytes[i * bits / 8] as u8;
    ((byte >> (i * bits % 8)) & ((1u16 << bits) - 1) as u8) as f64
}

/// MatMulNBits' zero point of each (column, block) of `cols` columns of `blocks` blocks:
/// the `bits`-wide fields of uint8 rows of `packed` bytes, values of A's type as given, or
/// `2^(bits - 1)` when absent.
fn nbits_zero_points(
    zp: Option<&T>,
    cols: usize,
    blocks: usize,
    packed: usize,
    bits: usize,
) -> R<Vec<f64>> {
    let Some(t) = zp else {
        return Ok(vec![(1 << (bits - 1)) as f64; cols * blocks]);
    };
    let (v, is_packed) = (t.floats()?, t.dt == DType::U8);
    if v.len() != cols * if is_packed { packed } else { blocks } {
        return Err(err(format!("zero_points of shape {:?}", t.shape)));
    }
    if !is_packed {
        return Ok(v);
    }
    let field = |i: usize| unpack(&v[i / blocks * packed..], i % blocks, bits);
    Ok((0..cols * blocks).map(field).collect())
}

/// MatMulNBits' weight dequantized as `(K, N)`: column `n`, row `k` is `(q - zero point) *
/// scale` of block `k / block_size` (or `g_idx[k]`) of B's row `n`.
fn nbits_weight(n: &Node, ins: &[Option<&V>], k: usize, cols: usize) -> R<Vec<f64>> {
    let (bits, block) = (n.int("bits", 4) as usize, n.int("block_size", 16) as usize);
    let (blocks, blob, packed) = nbits_layout(k as i64, block as i64, bits as i64);
    let (blocks, blob, packed) = (blocks as usize, blob as usize, packed as usize);
    let (b, scales) = (inp(ins, 1)?.floats()?, inp(ins, 2)?.floats()?);
    let zp = nbits_zero_points(opt(ins, 3)?, cols, blocks, packed, bits)?;
    let group = match opt(ins, 4)? {
        Some(g) => g.ints()?,
        None => (0..k as i64).map(|r| r / block as i64).collect(),
    };
    let bad_group = group.len() < k || group.iter().any(|&g| g < 0 || g as usize >= blocks);
    if bad_group || b.len() != cols * blocks * blob || scales.len() != cols * blocks {
        return Err(err(format!(
            "B, scales or g_idx do not hold {cols} x {blocks} blocks"
        )));
    }
    let mut w = vec![0.0; k * cols];
    for c in 0..cols {
        for (r, slot) in w.iter_mut().skip(c).step_by(cols).enumerate() {
            let g = c * blocks + group[r] as usize;
            let q = unpack(&b[(c * blocks + r / block) * blob..], r % block, bits);
            *slot = (q - zp[g]) * scales[g];
        }
    }
    Ok(w)
}

pub(super) fn op_matmul_nbits(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    let (k, cols) = (n.int("K", 0) as usize, n.int("N", 0) as usize);
    let w = nbits_weight(n, ins, k, cols)?;
    let (s, mut v) = matmul(a.fs()?, &a.shape, &w, &[k, cols])?;
    if let Some(bias) = opt(ins, 5)? {
        let bv = bias.floats()?;
        v.iter_mut()
            .enumerate()
            .for_each(|(i, y)| *y += bv[i % cols]);
    }
    one(T::f(a.dt, s, v))
}

/// `v`, read as `(batch, rows, heads * size)`, split in heads: `(batch, heads, rows, size)`,
/// or `(batch, heads, size, rows)` when `rows_last` (the keys, transposed for the product).
fn split_heads(v: Vec<f64>, [b, rows, heads, size]: [usize; 4], rows_last: bool) -> R<T> {
    let t = T::f(DType::F64, vec![b, rows, heads, size], v);
    transpose(
        &t,
        if rows_last {
            &[0, 2, 3, 1]
        } else {
            &[0, 2, 1, 3]
        },
    )
}

/// The causal mask of a head's `(seq, keys)` scores, added: -inf where a key is hidden.
fn mask_causal(scores: &mut [f64], seq: usize, keys: usize) {
    for (r, row) in scores
        .chunks_mut(seq * keys)
        .flat_map(|h| h.chunks_mut(keys).enumerate())
    {
        for (j, s) in row.iter_mut().enumerate() {
            if causal_masked(r, j, seq) {
                *s = f64::NEG_INFINITY;
            }
        }
    }
}

/// Attention of `g`'s heads over `q`, `k`, `v` (their values, 3-D, the heads side by side):
/// softmax(scale * Q K^T + attention_bias, causal mask) V, the heads joined again as
/// `(batch, sequence, heads * v_head)`.
fn attend(n: &Node, g: &Heads, [q, k, v]: [Vec<f64>; 3], bias: Option<&T>) -> R<Vec<f64>> {
    let [b, s, l, h, d, dv] =
        [g.batch, g.seq, g.kv_seq, g.heads, g.head, g.v_head].map(|x| x as usize);
    let q = split_heads(q, [b, s, h, d], false)?;
    let k = split_heads(k, [b, l, h, d], true)?;
    let v = split_heads(v, [b, l, h, dv], false)?;
    let (shape, mut scores) = matmul(q.fs()?, &q.shape, k.fs()?, &k.shape)?;
    let scale = attention_scale(n.float("scale", 0.0), g.head);
    scores.iter_mut().for_each(|x| *x *= scale);
    if let Some(t) = bias {
        let add = expand_to(t, &shape)?.floats()?;
        scores.iter_mut().zip(add).for_each(|(x, a)| *x += a);
    }
    if n.int("unidirectional", 0) == 1 {
        mask_causal(&mut scores, s, l);
    }
    let p = softmax_groups(&scores, b * h * s, l, 1, SoftKind::Softmax);
    let (oshape, o) = matmul(&p, &shape, v.fs()?, &v.shape)?;
    transpose(&T::f(DType::F64, oshape, o), &[0, 2, 1, 3])?.floats()
}

/// Input `i`'s values plus `bias[at..at + width]` along the last axis (of `width`).
fn biased(ins: &[Option<&V>], i: usize, bias: Option<&[f64]>, at: usize) -> R<Vec<f64>> {
    let t = inp(ins, i)?;
    let mut v = t.floats()?;
    if let Some(b) = bias {
        let width = *t.shape.last().unwrap_or(&1);
        let part = b.get(at..at + width).ok_or_else(|| err("bias too short"))?;
        v.iter_mut()
            .zip(part.iter().cycle())
            .for_each(|(x, c)| *x += c);
    }
    Ok(v)
}

/// MultiHeadAttention (`mutagraph_ir::ops::contrib::attention`): separate 3-D query, key and
/// value, each plus its third of `bias`, attended head by head.
pub(super) fn op_multi_head_attention(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let dims =
        |i: usize| -> R<Vec<i64>> { Ok(inp(ins, i)?.shape.iter().map(|&d| d as i64).collect()) };
    let g = mha_geometry(&dims(0)?, &dims(1)?, &dims(2)?, n.int("num_heads", 0)).map_err(err)?;
    let bias = opt(ins, 3)?.map(T::floats).transpose()?;
    let d = (g.heads * g.head) as usize;
    let b = bias.as_deref();
    let qkv = [
        biased(ins, 0, b, 0)?,
        biased(ins, 1, b, d)?,
        biased(ins, 2, b, 2 * d)?,
    ];
    let y = attend(n, &g, qkv, opt(ins, 5)?)?;
    let shape = vec![
        g.batch as usize,
        g.seq as usize,
        (g.heads * g.v_head) as usize,
    ];
    one(T::f(inp(ins, 0)?.dt, shape, y))
}

#[cfg(test)]
mod tests {
    use crate::backend::Backend;
    use crate::reference::Reference;
    use crate::value::{Data, HostTensor, Value};

    /// DynamicQuantizeLSTM's outputs (Y, Y_h, Y_c) on x, for `direction` and the weights
    /// `consts` (a text initializer list).
    fn dq_lstm(direction: &str, dirs: usize, consts: &str) -> Vec<Vec<f64>> {
        let text = format!(
            "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
             g (float[3, 1, 2] x) => (float[3, {dirs}, 1, 2] y, float[{dirs}, 1, 2] yh, \
             float[{dirs}, 1, 2] yc)\n{consts}\n\
             {{ y, yh, yc = com.microsoft.DynamicQuantizeLSTM \
             <hidden_size = 2, direction = \"{direction}\"> \
             (x, w, r, b, \"\", \"\", \"\", \"\", ws, z, rs, z) }}"
        );
        let model = mutagraph_ir::text::parse_model(&text).unwrap().to_bytes();
        let x = [0.5, -1.0, 1.5, 0.25, -0.75, 2.0].to_vec();
        let x = Value::Tensor(HostTensor::new(vec![3, 1, 2], Data::F32(x)));
        let mut p = Reference::new_f64().prepare(&model).unwrap();
        let out = p.run(&vec![("x".to_string(), x)]).unwrap();
        out.iter()
            .map(|(_, v)| v.tensor().unwrap().to_f64s().unwrap())
            .collect()
    }

    /// A NaN reaching a fused activation stays NaN, as through the op itself (round 13: a
    /// FusedConv whose sum was inf + -inf, NaN in ONNX Runtime, was 0 in the reference: its
    /// Relu was `f64::max`, and the bundle was filed as ONNX Runtime's NaN).
    #[test]
    fn a_nan_stays_nan_through_a_fused_activation() {
        for (act, params) in [("Relu", ""), ("Clip", ", activation_params = [-1.0, 1.0]")] {
            let text = format!(
                "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
                 g (float[1, 1, 1, 3] x) => (float[1, 1, 1, 3] y) <float[1, 1, 1, 1] w = {{1.0}}>\n\
                 {{ y = com.microsoft.FusedConv <activation = \"{act}\"{params}> (x, w) }}"
            );
            let model = mutagraph_ir::text::parse_model(&text).unwrap().to_bytes();
            let x = Value::Tensor(HostTensor::new(
                vec![1, 1, 1, 3],
                Data::F32(vec![f32::NAN, -2.0, 0.5]),
            ));
            let mut p = Reference::new_f64().prepare(&model).unwrap();
            let out = p.run(&vec![("x".to_string(), x)]).unwrap();
            let y = out[0].1.tensor().unwrap().to_f64s().unwrap();
            assert!(y[0].is_nan(), "{act}: {y:?}");
            assert!(y[1] == 0.0 || y[1] == -1.0, "{act}: {y:?}");
            assert_eq!(y[2], 0.5, "{act}: {y:?}");
        }
    }

    /// The native reference computes SkipLayerNormalization step by step in f32: a variance
    /// of inputs near 1e19 overflows and the result is 0 where the f64 one normalizes (round
    /// 13: ONNX Runtime's zeros were filed against the f64 values alone).
    #[test]
    fn native_skip_layer_norm_overflows_in_f32_as_the_kernel_does() {
        let text = "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
             g (float[1, 4] x, float[1, 4] s) => (float[1, 4] y) <float[4] g = {1, 1, 1, 1}>\n\
             { y = com.microsoft.SkipLayerNormalization (x, s, g) }";
        let model = mutagraph_ir::text::parse_model(text).unwrap().to_bytes();
        let f = |v: Vec<f32>| Value::Tensor(HostTensor::new(vec![1, 4], Data::F32(v)));
        let inputs = vec![
            ("x".to_string(), f(vec![3e19, -3e19, 1e19, -1e19])),
            ("s".to_string(), f(vec![0.0; 4])),
        ];
        let run = |mut r: Reference| {
            let mut p = r.prepare(&model).unwrap();
            let out = p.run(&inputs).unwrap();
            out[0].1.tensor().unwrap().to_f64s().unwrap()
        };
        let exact = run(Reference::new_f64());
        assert!((exact[0] - 1.3416).abs() < 1e-3, "{exact:?}");
        assert_eq!(run(Reference::new_native()), vec![0.0; 4]);
    }

    fn assert_close<const N: usize>(got: &[Vec<f64>], want: [&[f64]; N]) {
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g.len(), w.len());
            for (a, b) in g.iter().zip(w) {
                assert!((a - b).abs() < 1e-6, "{g:?} vs ONNX Runtime's {w:?}");
            }
        }
    }

    /// The values ONNX Runtime 1.31.1 computes (CPU, no graph optimizations, one thread):
    /// /tmp/contrib/verify_DynamicQuantizeLSTM.py, "fixed cases" (the reference matches them
    /// to 3e-7; the float LSTM of the dequantized weights differs by 1.3e-3 here).
    #[test]
    fn dynamic_quantize_lstm_is_onnx_runtimes() {
        let fwd = "<int8[1, 2, 8] w = {-127, -90, -53, -16, 21, 58, 95, -123, -86, -49, -12, 25, \
         62, 99, -119, -82}, int8[1, 2, 8] r = {-127, -74, -21, 32, 85, -117, -64, -11, \
         42, 95, -107, -54, -1, 52, 105, -97}, float[1] ws = {0.01}, float[1] rs = \
         {0.02}, int8[1] z = {0}, float[1, 16] b = {-0.4, -0.35, -0.3, -0.25, -0.2, \
         -0.15, -0.1, -0.05, 0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35}>";
        assert_close(
            &dq_lstm("forward", 1, fwd),
            [
                &[
                    0.17060392,
                    0.08009451,
                    0.072194874,
                    0.008288894,
                    0.027207235,
                    -0.07840457,
                ],
                &[0.027207235, -0.07840457],
                &[0.057003647, -0.12391868],
            ],
        );
        // uint8, per-column scales, both directions.
        let bidir = "<uint8[2, 2, 8] w = {1, 38, 75, 112, 149, 186, 223, 5, 42, 79, 116, 153, 190, \
         227, 9, 46, 83, 120, 157, 194, 231, 13, 50, 87, 124, 161, 198, 235, 17, 54, 91, \
         128}, uint8[2, 2, 8] r = {1, 54, 107, 160, 213, 11, 64, 117, 170, 223, 21, 74, \
         127, 180, 233, 31, 84, 137, 190, 243, 41, 94, 147, 200, 253, 51, 104, 157, 210, \
         8, 61, 114}, float[2, 8] ws = {0.005, 0.0064285714, 0.007857143, 0.009285714, \
         0.010714285, 0.012142857, 0.013571428, 0.015, 0.005, 0.0064285714, 0.007857143, \
         0.009285714, 0.010714285, 0.012142857, 0.013571428, 0.015}, float[2, 8] rs = \
         {0.03, 0.027142856, 0.024285713, 0.02142857, 0.018571427, 0.015714286, \
         0.012857143, 0.01, 0.03, 0.027142856, 0.024285713, 0.02142857, 0.018571427, \
         0.015714286, 0.012857143, 0.01}, uint8[2, 8] z = {128, 128, 128, 128, 128, 128, \
         128, 128, 128, 128, 128, 128, 128, 128, 128, 128}, float[2, 16] b = {-0.4, \
         -0.35, -0.3, -0.25, -0.2, -0.15, -0.1, -0.05, 0.0, 0.05, 0.1, 0.15, 0.2, 0.25, \
         0.3, 0.35, 0.4, 0.45000002, 0.5, 0.55, 0.6, 0.65000004, 0.7, 0.75, 0.8, 0.85, \
         0.90000004, 0.95, 1.0, 1.0500001, 1.1, 1.15}>";
        let y = [
            0.1689446,
            0.093426384,
            0.64041644,
            0.61471266,
            0.08978919,
            -0.009209177,
            0.33812243,
            0.47730538,
            0.034697868,
            -0.14525357,
            0.56658775,
            0.65335906,
        ];
        assert_close(
            &dq_lstm("bidirectional", 2, bidir),
            [
                &y,
                &[0.034697868, -0.14525357, 0.64041644, 0.61471266],
                &[0.07304251, -0.23333378, 1.2023414, 0.87317437],
            ],
        );
    }

    /// RotaryEmbedding's output on `x` (of `shape`, the values `x0 + step * i`) with positions
    /// `pos` (a text initializer) and the attributes `attrs`, caches of three positions.
    fn rope(shape: &str, x0: f32, step: f32, pos: &str, attrs: &str) -> Vec<f64> {
        let text = format!(
            "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
             g (float[{shape}] x) => (float[{shape}] y)\n\
             <{pos}, float[3, 2] c = {{1, 1, 0.5, 0.9, -0.25, 0.75}}, \
             float[3, 2] s = {{0, 0, 0.8, 0.1, 0.9, 0.6}}>\n\
             {{ y = com.microsoft.RotaryEmbedding <{attrs}> (x, p, c, s) }}"
        );
        let model = mutagraph_ir::text::parse_model(&text).unwrap().to_bytes();
        let x: Vec<f32> = (0..16).map(|i| x0 + step * i as f32).collect();
        let dims = shape.split(", ").map(|d| d.parse().unwrap()).collect();
        let x = Value::Tensor(HostTensor::new(dims, Data::F32(x)));
        let mut p = Reference::new_f64().prepare(&model).unwrap();
        let out = p.run(&vec![("x".to_string(), x)]).unwrap();
        out[0].1.tensor().unwrap().to_f64s().unwrap()
    }

    /// The values ONNX Runtime 1.31.1 computes (CPU, no graph optimizations):
    /// /tmp/contrib/verify_RotaryEmbedding.py, "fixed cases" (the reference matches them to
    /// 1.8e-7): a partial rotation (R = 4 of a head of 8) with a position per token, then a
    /// 4-D input rotated in interleaved pairs from one start position.
    #[test]
    fn rotary_embedding_is_onnx_runtimes() {
        let partial = rope(
            "1, 2, 8",
            -1.5,
            0.25,
            "int64[1, 2] p = {2, 0}",
            "num_heads = 1, rotary_embedding_dim = 4",
        );
        let want = [
            1.275, -0.4875, -1.1, -1.3125, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75,
            2.0, 2.25,
        ];
        assert_close(&[partial], [&want]);
        let four = rope(
            "1, 2, 2, 4",
            2.0,
            -0.5,
            "int64[1] p = {1}",
            "interleaved = 1",
        );
        let want = [
            -0.2, 2.35, 0.85, 0.55, 0.45, 0.125, 0.15, -1.725, 1.0, -2.85, -2.35, -3.45, 5.05,
            -2.475, -0.45, -7.125,
        ];
        assert_close(&[four], [&want]);
    }

    /// MatMulNBits of A (of `shape`, the values `a0 + step * i`) by N = `n` columns of K
    /// values packed by `attrs` into B of `b` bytes (`(37 i + 11) mod 256`, as the verify
    /// script's), scales `0.01 (1 + i mod 5)`, the initializers `extra` and the inputs after
    /// A, B and scales `rest`.
    fn nbits(
        shape: &[usize],
        a0: f32,
        step: f32,
        b: [usize; 3],
        attrs: &str,
        extra: &str,
        rest: &str,
    ) -> Vec<f64> {
        let list = |v: Vec<String>| v.join(", ");
        let bytes = list(
            (0..b.iter().product())
                .map(|i: usize| ((37 * i + 11) % 256).to_string())
                .collect(),
        );
        let scales = list(
            (0..b[0] * b[1])
                .map(|i| format!("{}", 0.01 * (1 + i % 5) as f32))
                .collect(),
        );
        let dims = |d: &[usize]| list(d.iter().map(usize::to_string).collect());
        let mut y = shape.to_vec();
        *y.last_mut().unwrap() = b[0];
        if shape.len() == 1 {
            y = vec![b[0]];
        }
        let text = format!(
            "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
             g (float[{}] a) => (float[{}] y)\n\
             <uint8[{}] b = {{{bytes}}}, float[{}, {}] s = {{{scales}}}{extra}>\n\
             {{ y = com.microsoft.MatMulNBits <N = {}, {attrs}> (a, b, s{rest}) }}",
            dims(shape),
            dims(&y),
            dims(&b),
            b[0],
            b[1],
            b[0]
        );
        let model = mutagraph_ir::text::parse_model(&text).unwrap().to_bytes();
        let n: usize = shape.iter().product();
        let a: Vec<f32> = (0..n).map(|i| a0 + step * i as f32).collect();
        let a = Value::Tensor(HostTensor::new(shape.to_vec(), Data::F32(a)));
        let mut p = Reference::new_f64().prepare(&model).unwrap();
        let out = p.run(&vec![("a".to_string(), a)]).unwrap();
        out[0].1.tensor().unwrap().to_f64s().unwrap()
    }

    /// The values ONNX Runtime 1.31.1 computes (CPU, no graph optimizations):
    /// /tmp/contrib/verify_MatMulNBits.py, "fixed cases" (the reference matches them to
    /// 5.4e-7): 4 bits with a partial last block, packed zero points and a bias; 2 bits with
    /// float zero points and a 1-D A; 8 bits with the default zero point.
    #[test]
    fn matmul_nbits_is_onnx_runtimes() {
        let four = nbits(
            &[2, 20],
            -2.0,
            0.125,
            [3, 2, 8],
            "K = 20, block_size = 16",
            ", uint8[3] z = {65, 167, 13}, float[3] c = {-0.25, 0.25, 0.75}",
            ", z, \"\", c",
        );
        let want = [-1.1375, -0.1775, 4.8800006, 1.5625001, -0.22749996, -3.395];
        assert_close(&[four], [&want]);
        let two = nbits(
            &[32],
            1.0,
            -0.0625,
            [2, 2, 4],
            "K = 32, block_size = 16, bits = 2",
            ", float[2, 2] z = {0.5, 1.25, 2.0, 2.75}",
            ", z",
        );
        assert_close(&[two], [&[0.01812499, 0.296875]]);
        let eight = nbits(
            &[1, 16],
            -1.5,
            0.25,
            [2, 1, 16],
            "K = 16, block_size = 16, bits = 8",
            "",
            "",
        );
        assert_close(&[eight], [&[1.3999997, -2.96]]);
    }

    /// MultiHeadAttention's output on the query `q` (of `shape`, the values `q0 + step * i`)
    /// with the initializers `consts`, the inputs after the query `rest` and `attrs`.
    fn mha(
        shape: [usize; 3],
        q0: f32,
        step: f32,
        consts: &str,
        rest: &str,
        attrs: &str,
    ) -> Vec<f64> {
        let [b, s, _] = shape;
        let text = format!(
            "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
             g (float[{b}, {s}, {}] q) => (float[{b}, {s}, dv] y)\n{consts}\n\
             {{ y = com.microsoft.MultiHeadAttention <{attrs}> (q, {rest}) }}",
            shape[2]
        );
        let model = mutagraph_ir::text::parse_model(&text).unwrap().to_bytes();
        let n: usize = shape.iter().product();
        let q: Vec<f32> = (0..n).map(|i| q0 + step * i as f32).collect();
        let q = Value::Tensor(HostTensor::new(shape.to_vec(), Data::F32(q)));
        let mut p = Reference::new_f64().prepare(&model).unwrap();
        let out = p.run(&vec![("q".to_string(), q)]).unwrap();
        out[0].1.tensor().unwrap().to_f64s().unwrap()
    }

    /// The values ONNX Runtime 1.31.1 computes (CPU, no graph optimizations):
    /// /tmp/contrib/verify_MultiHeadAttention.py, "fixed cases" (the reference matches them to
    /// 2.7e-8): two heads with a bias and an attention bias broadcast over the batch, three
    /// keys for two queries; then a causal mask with a scale, three queries (the last one sees
    /// every key) and two (the last one sees the key after it too: ORT's mask).
    #[test]
    fn multi_head_attention_is_onnx_runtimes() {
        let consts = "<float[1, 3, 4] k = {-1, 0.5, -0.5, 1, 0, -1, 0.5, -0.5, 1, 0, -1, 0.5}, \
             float[1, 3, 2] v = {-0.5, 0, 0.5, 1, -0.5, 0}, float[10] b = {-0.5, -0.4, -0.3, \
             -0.2, -0.1, 0, 0.1, 0.2, 0.3, 0.4}, float[1, 2, 2, 3] ab = {1, 0.8, 0.6, 0.4, \
             0.2, 0, -0.2, -0.4, -0.6, -0.8, -1, -1.2}>";
        let y = mha(
            [1, 2, 4],
            -1.0,
            0.25,
            consts,
            "k, v, b, \"\", ab",
            "num_heads = 2",
        );
        let want = [
            0.2613712251186371,
            0.6684057712554932,
            0.1332641839981079,
            0.6579173803329468,
        ];
        assert_close(&[y], [&want]);
        let consts = "<float[1, 3, 3] k = {1, 0.75, 0.5, 0.25, 0, -0.25, -0.5, -0.75, -1}, \
             float[1, 3, 1] v = {0, 1, 2}>";
        let causal = "num_heads = 1, unidirectional = 1, scale = 0.5";
        let y = mha([1, 3, 3], -2.0, 0.5, consts, "k, v", causal);
        assert_close(&[y], [&[0.0, 0.5, 0.20785577595233917]]);
        let y = mha([1, 2, 3], -2.0, 0.5, consts, "k, v", causal);
        assert_close(&[y], [&[0.0, 1.0]]);
    }
}
