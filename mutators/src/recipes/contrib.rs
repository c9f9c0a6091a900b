//! ONNX Runtime's `com.microsoft` ops (`mutagraph_ir::ops::contrib`): the GELU family, the
//! skip normalizations, the fused linear ops (built as their ONNX base op plus an activation),
//! the quantized ones, DynamicQuantizeLSTM, RotaryEmbedding, MatMulNBits and MultiHeadAttention.
//! Only ONNX Runtime
//! runs them, so a campaign keeps these recipes only when it tests ONNX Runtime (the campaign
//! drops a recipe no backend supports).
use super::Recipe;
use super::nn::{conv_with, gemm_with, scale_zero};
use super::util::*;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::attr::AttrValue;
use crate::ir::ops::contrib::linear::{CONV_ACTIVATIONS, GEMM_ACTIVATIONS};
use crate::ir::ops::contrib::nbits::nbits_layout;
use crate::ir::types::TensorType;
use crate::site::Site;

/// A vector as long as `x`'s last axis, in `x`'s dtype.
fn last_axis_vector(
    site: &mut Site<'_>,
    hint: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> String {
    let d = dims(t);
    let h = d.last().copied().unwrap_or(1);
    site.random_constant(hint, t.dtype, &[h], -1.0, 1.0, rng)
}

fn gelu(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let mut a = Attrs::new();
    match op.rsplit("::").next() {
        Some("FastGelu") if chance(rng, 0.5) => {
            let b = last_axis_vector(site, "bias", t, rng);
            return site.op1(op, &[x, &b], a);
        }
        Some("BiasGelu") => {
            let b = last_axis_vector(site, "bias", t, rng);
            return site.op1(op, &[x, &b], a);
        }
        Some("QuickGelu") => float_of(rng, &mut a, "alpha", &[-0.5, 0.5, 1.702, 3.0]),
        _ => {}
    }
    site.op1(op, &[x], a)
}

/// `input + skip (+ bias)`, normalized over the hidden axis; `skip` is the input's shape or
/// its last two axes (with a batch of 1 sometimes).
fn skip_norm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let rms = op.ends_with("SkipSimplifiedLayerNormalization");
    let sshape = match below(rng, 3) {
        0 => d.clone(),
        1 => d[r - 2..].to_vec(),
        _ if r == 3 => vec![1, d[1], d[2]],
        _ => d.clone(),
    };
    let skip = site.random_constant("skip", t.dtype, &sshape, -1.0, 1.0, rng);
    let gamma = last_axis_vector(site, "gamma", t, rng);
    let mut ins = vec![x.to_string(), skip, gamma];
    let extra = if rms { 1 } else { 2 };
    for k in 0..extra {
        // beta, then bias (the simplified form has no beta): present, or absent ("").
        let hint = if rms || k == 1 { "bias" } else { "beta" };
        ins.push(if chance(rng, 0.6) {
            last_axis_vector(site, hint, t, rng)
        } else {
            String::new()
        });
    }
    while ins.last().is_some_and(String::is_empty) {
        ins.pop();
    }
    let mut a = Attrs::new();
    float_of(rng, &mut a, "epsilon", &[1e-12, 1e-5, 1e-3, 0.1]);
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    // The simplified form's mean output is not defined: only the normalized value is read.
    let n_out = if rms { 1 } else { 1 + below(rng, 3) };
    Ok(site.op(op, &refs, a, n_out)?.remove(0))
}

/// An activation of `table` with the parameters it reads drawn.
fn activation<P: Copy>(rng: &mut SplitMix64, table: &[(&'static str, P)]) -> (&'static str, P) {
    table[below(rng, table.len())]
}

const PARAMS: &[f64] = &[-0.5, 0.1, 0.5, 1.5];

fn fused_conv(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let (name, n) = activation(rng, CONV_ACTIVATIONS);
    let mut a = vec![("activation", astr(name))];
    if n > 0 {
        let mut p: Vec<f64> = (0..n).map(|_| pick(rng, PARAMS)).collect();
        if name == "Clip" {
            p.sort_by(f64::total_cmp);
        }
        a.push((
            "activation_params",
            AttrValue::Floats(p.iter().map(|&v| v as f32).collect()),
        ));
    }
    conv_with(op, site, x, t, rng, a)
}

fn fused_gemm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let (name, reads) = activation(rng, GEMM_ACTIVATIONS);
    let mut a = vec![("activation", astr(name))];
    for &k in reads {
        a.push((k, af(pick(rng, PARAMS))));
    }
    gemm_with(op, site, x, t, rng, a)
}

/// `x` (as A, transposed on its last two axes sometimes) times a constant B, scaled.
fn fused_matmul(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let mut a = Attrs::new();
    let ta = r >= 2 && chance(rng, 0.4);
    let k = if ta { d[r - 2] } else { d[r - 1] };
    let n = between(rng, 1, 8);
    let tb = chance(rng, 0.5);
    if ta {
        a.push(("transA", ai(1)));
    }
    if tb {
        a.push(("transB", ai(1)));
    }
    float_of(rng, &mut a, "alpha", &[-0.5, 0.125, 1.0, 2.0]);
    let bshape = if tb { vec![n, k] } else { vec![k, n] };
    let b = konst(site, "b", t.dtype, &bshape, -1.0, 1.0, rng);
    site.op1(op, &[x, &b], a)
}

/// QLinearAdd / QLinearMul against a broadcastable constant, QLinearSigmoid /
/// QLinearLeakyRelu on `x`; per-tensor scales and zero points.
fn qlinear(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let dt = t.dtype;
    let mid = if dt == DType::U8 { 128.0 } else { 0.0 };
    let (xs, xz) = scale_zero(site, "x", pick(rng, &[0.01, 0.05, 0.2]), dt, mid);
    let (ys, yz) = scale_zero(site, "y", pick(rng, &[0.01, 0.05, 0.2]), dt, mid);
    let mut a = Attrs::new();
    if op.ends_with("QLinearAdd") || op.ends_with("QLinearMul") {
        let shape = bshape(rng, &dims(t));
        let b = konst(site, "b", dt, &shape, -100.0, 100.0, rng);
        let (bs, bz) = scale_zero(site, "b", pick(rng, &[0.01, 0.05, 0.2]), dt, mid);
        return site.op1(op, &[x, &xs, &xz, &b, &bs, &bz, &ys, &yz], a);
    }
    if op.ends_with("QLinearLeakyRelu") {
        float_of(rng, &mut a, "alpha", &[-0.5, 0.01, 0.3, 2.0]);
    }
    site.op1(op, &[x, &xs, &xz, &ys, &yz], a)
}

/// `x` times a constant 8-bit B, scaled to float: MatMulIntegerToFloat on an 8-bit `x`,
/// DynamicQuantizeMatMul on a float one; B's scale and zero point per tensor or per column.
fn int_matmul(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let k = d[d.len() - 1];
    let n = between(rng, 1, 8);
    // int8 A has a kernel only with int8 B.
    let bt = if t.dtype == DType::I8 || chance(rng, 0.5) {
        DType::I8
    } else {
        DType::U8
    };
    let b = konst(site, "b", bt, &[k, n], -20.0, 20.0, rng);
    let per_col = chance(rng, 0.5);
    let cols: &[i64] = if per_col { &[n] } else { &[] };
    let bs = site.random_constant("b_scale", DType::F32, cols, 0.001, 0.05, rng);
    let bz = konst(site, "b_zero_point", bt, cols, 0.0, 4.0, rng);
    let bias = site.random_constant("bias", DType::F32, &[n], -1.0, 1.0, rng);
    if t.dtype == DType::F32 {
        return site.op1(op, &[x, &b, &bs, &bz, &bias], vec![]);
    }
    let mid = if t.dtype == DType::U8 { 128.0 } else { 0.0 };
    let (as_, az) = scale_zero(site, "a", 0.02, t.dtype, mid);
    site.op1(op, &[x, &b, &as_, &bs, &az, &bz, &bias], vec![])
}

/// DynamicQuantizeLSTM's W or R of `shape` (`[directions, k, 4 * hidden]`), 8-bit, near
/// LSTM's usual weights once dequantized, with per-direction or per-column scales and one
/// zero point (the kernel refuses per-column ones that differ, or non-zero int8 ones).
fn lstm_weight(
    site: &mut Site<'_>,
    name: &str,
    dt: DType,
    shape: [i64; 3],
    rng: &mut SplitMix64,
) -> [String; 3] {
    let zero = if dt == DType::U8 {
        between(rng, 120, 136)
    } else {
        0
    } as f64;
    let w = konst(site, name, dt, &shape, zero - 100.0, zero + 100.0, rng);
    let per = if chance(rng, 0.5) {
        vec![shape[0], shape[2]]
    } else {
        vec![shape[0]]
    };
    let s = 0.01 / (shape[1] as f64).sqrt();
    let scale = site.random_constant(
        &format!("{name}_scale"),
        DType::F32,
        &per,
        0.5 * s,
        1.5 * s,
        rng,
    );
    let zeros = vec![zero; per.iter().product::<i64>() as usize];
    let zp = site.constant_f64s(&format!("{name}_zero_point"), dt, &per, &zeros);
    [w, scale, zp]
}

/// DynamicQuantizeLSTM on `x` read as `[time steps, batch, input]`, its batch folded into the
/// time steps (a batch of more than one row is left open: see the spec), 8-bit W and R with
/// their scales and zero points; bias, sequence length, initial states and peepholes
/// sometimes.
fn dq_lstm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let (seq, input) = (d[0] * d[1], d[2]);
    let x = site.adapt(x, &TensorType::fixed(t.dtype, &[seq, 1, input]))?;
    let h = between(rng, 1, 8);
    let dir = pick(rng, &["forward", "reverse", "bidirectional"]);
    let nd = if dir == "bidirectional" { 2 } else { 1 };
    let wt = pick(rng, &[DType::I8, DType::U8]);
    let [w, ws, wz] = lstm_weight(site, "w", wt, [nd, input, 4 * h], rng);
    let [r, rs, rz] = lstm_weight(site, "r", wt, [nd, h, 4 * h], rng);
    let mut a = vec![("hidden_size", AttrValue::Int(h))];
    if dir != "forward" || chance(rng, 0.5) {
        a.push(("direction", AttrValue::String(dir.as_bytes().to_vec())));
    }
    float_of(rng, &mut a, "clip", &[0.5, 3.0, 20.0]);
    let mut maybe = |p: f64, hint: &str, dt: DType, shape: &[i64], lo: f64, hi: f64| {
        if chance(rng, p) {
            konst(site, hint, dt, shape, lo, hi, rng)
        } else {
            String::new()
        }
    };
    let b = maybe(0.6, "b", t.dtype, &[nd, 8 * h], -0.3, 0.3);
    let lens = maybe(
        0.3,
        "sequence_lens",
        DType::I32,
        &[1],
        1.0,
        seq as f64 + 1.0,
    );
    let h0 = maybe(0.4, "initial_h", t.dtype, &[nd, 1, h], -0.5, 0.5);
    let c0 = maybe(0.4, "initial_c", t.dtype, &[nd, 1, h], -0.5, 0.5);
    let p = maybe(0.3, "p", t.dtype, &[nd, 3 * h], -0.5, 0.5);
    let ins = [&x, &w, &r, &b, &lens, &h0, &c0, &p, &ws, &wz, &rs, &rz];
    let refs: Vec<&str> = ins.iter().map(|s| s.as_str()).collect();
    Ok(site.op(op, &refs, a, 3)?.remove(0))
}

/// RoPE caches of `rows` positions and `half` columns in `dt` (cosines, then sines of
/// `p * base^(-i / half)`, as models compute them).
fn rope_caches(site: &mut Site<'_>, dt: DType, rows: i64, half: i64) -> [String; 2] {
    let angle = |k: usize| {
        let (p, i) = (k as i64 / half, k as i64 % half);
        p as f64 * 10000f64.powf(-(i as f64) / half as f64)
    };
    let n = (rows * half) as usize;
    let cos: Vec<f64> = (0..n).map(|k| angle(k).cos()).collect();
    let sin: Vec<f64> = (0..n).map(|k| angle(k).sin()).collect();
    [
        site.constant_f64s("cos_cache", dt, &[rows, half], &cos),
        site.constant_f64s("sin_cache", dt, &[rows, half], &sin),
    ]
}

/// Constant positions of `batch` rows of `seq` tokens, within `rows` cache positions: one
/// start position (shape (1)) or one per token, the two shapes ONNX Runtime's documentation
/// gives (a scalar is neither: round 14).
fn rope_positions(
    site: &mut Site<'_>,
    batch: i64,
    seq: i64,
    rows: i64,
    rng: &mut SplitMix64,
) -> String {
    if chance(rng, 0.5) {
        // (The draw that once chose a scalar stays: the stream the later draws read is
        // unchanged.)
        let _ = chance(rng, 0.5);
        return site.constant_i64s("position_ids", &[1], &[between(rng, 0, rows - seq)]);
    }
    let ids: Vec<i64> = (0..batch * seq)
        .map(|_| between(rng, 0, rows - 1))
        .collect();
    site.constant_i64s("position_ids", &[batch, seq], &ids)
}

/// RotaryEmbedding on `x` read as `(batch, sequence, hidden)` or `(batch, heads, sequence,
/// head)`, its last axis made even: heads of an even size dividing it, all of a head rotated
/// or its first `rotary_embedding_dim` values, caches a few positions longer than the
/// sequence, positions within them (ORT refuses others), `scale` left to its default (ORT's
/// kernel ignores it: see the spec).
fn rotary(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let mut d = dims(t);
    let r = d.len();
    d[r - 1] += d[r - 1] % 2;
    let x = site.adapt(x, &TensorType::fixed(t.dtype, &d))?;
    let (batch, seq) = (d[0], d[r - 2]);
    let head = if r == 4 {
        d[3]
    } else {
        let even: Vec<i64> = (1..=d[2] / 2)
            .map(|k| 2 * k)
            .filter(|h| d[2] % h == 0)
            .collect();
        pick(rng, &even)
    };
    let heads = if r == 4 { d[1] } else { d[2] / head };
    let mut a = Attrs::new();
    let mut rot = head;
    if head >= 4 && chance(rng, 0.4) {
        rot = 2 * between(rng, 1, head / 2 - 1);
        a.push(("rotary_embedding_dim", ai(rot)));
    }
    int_attr(
        rng,
        &mut a,
        "num_heads",
        heads,
        0,
        if rot < head { 1.0 } else { 0.3 },
    );
    flag(rng, &mut a, "interleaved");
    let rows = seq + between(rng, 0, 3);
    let [cos, sin] = rope_caches(site, t.dtype, rows, rot / 2);
    let pos = rope_positions(site, batch, seq, rows, rng);
    site.op1(op, &[&x, &pos, &cos, &sin], a)
}

/// MatMulNBits' zero points for `n` columns of `blocks` blocks: absent, packed uint8 (any
/// byte), or unpacked in A's type (not at 8 bits: the CPU kernel has none); either matrix
/// or flat.
fn nbits_zero_points(
    site: &mut Site<'_>,
    dt: DType,
    [n, blocks, packed]: [i64; 3],
    bits: i64,
    rng: &mut SplitMix64,
) -> String {
    let flat = chance(rng, 0.3);
    let shape = |cols: i64| if flat { vec![n * cols] } else { vec![n, cols] };
    match below(rng, 3) {
        0 => String::new(),
        1 if bits < 8 => {
            let top = ((1 << bits) - 1) as f64;
            site.random_constant("zero_points", dt, &shape(blocks), 0.0, top, rng)
        }
        _ => konst(
            site,
            "zero_points",
            DType::U8,
            &shape(packed),
            0.0,
            255.0,
            rng,
        ),
    }
}

/// `x` (its last axis as K) times a constant weight of N columns quantized to 2, 4 or 8 bits
/// by blocks (B any bytes: every bit pattern is a value), scales near 1 / sqrt(K) over the
/// quantized range, zero points sometimes, a bias sometimes; `accuracy_level` only among the
/// exact ones (4 quantizes A: see the spec).
fn matmul_nbits(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let k = *dims(t).last().unwrap_or(&1);
    let n = between(rng, 1, 8);
    let bits = pick(rng, &[2, 4, 4, 8]);
    let block = pick(rng, &[16, 16, 32, 64, 128, 256]);
    let (blocks, blob, packed) = nbits_layout(k, block, bits);
    let b = konst(site, "b", DType::U8, &[n, blocks, blob], 0.0, 255.0, rng);
    let s = 2.0 / ((1 << bits) as f64 * (k as f64).sqrt());
    let sshape = if chance(rng, 0.3) {
        vec![n * blocks]
    } else {
        vec![n, blocks]
    };
    let scales = site.random_constant("scales", t.dtype, &sshape, 0.5 * s, 1.5 * s, rng);
    let zp = nbits_zero_points(site, t.dtype, [n, blocks, packed], bits, rng);
    let bias = if chance(rng, 0.5) {
        site.random_constant("bias", t.dtype, &[n], -1.0, 1.0, rng)
    } else {
        String::new()
    };
    let mut a = vec![("K", ai(k)), ("N", ai(n)), ("block_size", ai(block))];
    int_attr(rng, &mut a, "bits", bits, 4, 0.5);
    maybe_int(rng, &mut a, 0.3, "accuracy_level", &[0, 1, 2, 3]);
    let mut ins = vec![x, &b, &scales, &zp, "", &bias];
    while ins.last().is_some_and(|s| s.is_empty()) {
        ins.pop();
    }
    site.op1(op, &ins, a)
}

/// An attention bias for `heads` heads of `[batch, seq, keys]`: the batch and the heads each
/// kept or broadcast (1), scores of a unit's size.
fn attention_bias(
    site: &mut Site<'_>,
    dt: DType,
    heads: i64,
    [b, s, l]: [i64; 3],
    rng: &mut SplitMix64,
) -> String {
    let mut one_or = |n: i64| if chance(rng, 0.5) { 1 } else { n };
    let shape = [one_or(b), one_or(heads), s, l];
    site.random_constant("attention_bias", dt, &shape, -1.0, 1.0, rng)
}

/// MultiHeadAttention with `x` `(batch, sequence, hidden)` as the query (its hidden size made
/// a multiple of the heads): keys the query itself or a constant of another length, values of
/// another head size, a bias and an attention bias sometimes; causal only with as many keys
/// as queries and `mask_filter_value` only without it, `scale` never 0 (the open cases: see
/// the spec).
fn multi_head_attention(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let mut d = dims(t);
    let heads = pick(rng, &[1, 2, 2, 4]);
    d[2] = (d[2] + heads - 1) / heads * heads;
    let x = site.adapt(x, &TensorType::fixed(t.dtype, &d))?;
    let (b, s, hidden) = (d[0], d[1], d[2]);
    let l = if chance(rng, 0.4) {
        s
    } else {
        between(rng, 1, 6)
    };
    let k = if l == s && chance(rng, 0.5) {
        x.clone()
    } else {
        site.random_constant("key", t.dtype, &[b, l, hidden], -1.0, 1.0, rng)
    };
    let dv = heads * between(rng, 1, 4);
    let v = site.random_constant("value", t.dtype, &[b, l, dv], -1.0, 1.0, rng);
    let bias = match chance(rng, 0.4) {
        true => site.random_constant("bias", t.dtype, &[2 * hidden + dv], -0.5, 0.5, rng),
        false => String::new(),
    };
    let ab = match chance(rng, 0.4) {
        true => attention_bias(site, t.dtype, heads, [b, s, l], rng),
        false => String::new(),
    };
    let mut a = vec![("num_heads", ai(heads))];
    float_of(rng, &mut a, "scale", &[0.25, 1.0, -0.5]);
    if l == s && chance(rng, 0.5) {
        a.push(("unidirectional", ai(1)));
    } else {
        float_of(rng, &mut a, "mask_filter_value", &[-1.0, -10000.0]);
    }
    let mut ins = vec![x.as_str(), &k, &v, &bias, "", &ab];
    while ins.last().is_some_and(|s| s.is_empty()) {
        ins.pop();
    }
    site.op1(op, &ins, a)
}

/// A float product of `x` (rank kept: B is a matrix).
fn f32_matmul(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::F32, r)]
}

const Q8: &[DType] = &[DType::U8, DType::I8];

/// The family's recipes (op key, dtypes and ranks read, output rule, builder).
#[rustfmt::skip]
const ROWS: &[Row] = &[
    ("com.microsoft::Gelu",                             Dt::Reg,           ANY_RANK, same,       gelu),
    ("com.microsoft::FastGelu",                         Dt::Reg,           RANK1,    same,       gelu),
    ("com.microsoft::BiasGelu",                         Dt::Reg,           RANK1,    same,       gelu),
    ("com.microsoft::QuickGelu",                        Dt::Reg,           ANY_RANK, same,       gelu),
    ("com.microsoft::SkipLayerNormalization",           Dt::Reg,           (2, 3),   same,       skip_norm),
    ("com.microsoft::SkipSimplifiedLayerNormalization", Dt::Reg,           (2, 3),   same,       skip_norm),
    ("com.microsoft::FusedConv",                        Dt::Reg,           (3, 5),   same,       fused_conv),
    ("com.microsoft::FusedGemm",                        Dt::Reg,           (2, 2),   same,       fused_gemm),
    ("com.microsoft::FusedMatMul",                      Dt::Reg,           RANK1,    same,       fused_matmul),
    ("com.microsoft::QLinearAdd",                       Dt::Only(Q8),      ANY_RANK, same,       qlinear),
    ("com.microsoft::QLinearMul",                       Dt::Only(Q8),      ANY_RANK, same,       qlinear),
    ("com.microsoft::QLinearSigmoid",                   Dt::Only(Q8),      ANY_RANK, same,       qlinear),
    ("com.microsoft::QLinearLeakyRelu",                 Dt::Only(Q8),      ANY_RANK, same,       qlinear),
    ("com.microsoft::MatMulIntegerToFloat",             Dt::Only(Q8),      RANK1,    f32_matmul, int_matmul),
    ("com.microsoft::DynamicQuantizeMatMul",            Dt::Reg,           RANK1,    f32_matmul, int_matmul),
    ("com.microsoft::DynamicQuantizeLSTM",              Dt::Reg,           (3, 3),   rank4,      dq_lstm),
    ("com.microsoft::RotaryEmbedding",                  Dt::Reg,           (3, 4),   same,       rotary),
    ("com.microsoft::MatMulNBits",                      Dt::Reg,           RANK1,    same,       matmul_nbits),
    ("com.microsoft::MultiHeadAttention",               Dt::Reg,           (3, 3),   same,       multi_head_attention),
];

/// Registers the family, in the builtin order.
pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    push_rows(list, ROWS);
}
