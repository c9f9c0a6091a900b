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
                *s += f64::NEG_INFINITY;
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
#[path = "contrib_tests.rs"]
mod tests;
