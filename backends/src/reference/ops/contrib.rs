//! ONNX Runtime's `com.microsoft` ops (see `mutagraph_ir::ops::contrib` for which and why):
//! the GELU family, the skip normalizations, the fused linear ops, the quantized ones and
//! DynamicQuantizeLSTM, each from its documented definition, in f64.
use super::conv::op_conv;
use super::linalg::{matmul, op_gemm};
use super::quantize::{dynamic_quantize, qrange};
use super::recurrent::{Quantized, recurrent};
use super::reshape::transpose;
use super::unary::{erf, map_f, sigmoid, softplus};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

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
fn skip_norm(n: &Node, ins: &[Option<&V>], rms: bool) -> Out {
    let x = inp(ins, 0)?;
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
    for r in 0..rows {
        let s = &mut sum[r * h..][..h];
        for (i, v) in s.iter_mut().enumerate() {
            let p = r * h + i;
            *v = xv[p] + skip[p] + bias.as_ref().map_or(0.0, |b| b[i]);
        }
        let mean = if rms {
            0.0
        } else {
            s.iter().sum::<f64>() / h as f64
        };
        let var = s.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / h as f64;
        let inv = 1.0 / (var + eps).sqrt();
        for i in 0..h {
            y[r * h + i] = (s[i] - mean) * inv * gamma[i] + beta.as_ref().map_or(0.0, |b| b[i]);
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

pub(super) fn op_skip_layer_norm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    skip_norm(n, ins, false)
}

pub(super) fn op_skip_simplified_layer_norm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    skip_norm(n, ins, true)
}

/// The activation a fused op names, with its parameters.
fn activation(name: &str, p: [f64; 3]) -> R<Box<dyn Fn(f64) -> f64>> {
    let [a, b, g] = p;
    Ok(match name {
        "" | "Identity" => Box::new(|x| x),
        "Relu" => Box::new(|x: f64| x.max(0.0)),
        "Tanh" => Box::new(f64::tanh),
        "Sigmoid" => Box::new(sigmoid),
        "Softsign" => Box::new(|x: f64| x / (1.0 + x.abs())),
        "Softplus" => Box::new(softplus),
        "LeakyRelu" => Box::new(move |x: f64| if x < 0.0 { a * x } else { x }),
        "Elu" => Box::new(move |x: f64| if x < 0.0 { a * (x.exp() - 1.0) } else { x }),
        "ThresholdedRelu" => Box::new(move |x: f64| if x > a { x } else { 0.0 }),
        "HardSigmoid" => Box::new(move |x: f64| (a * x + b).clamp(0.0, 1.0)),
        "Selu" => Box::new(move |x: f64| g * if x <= 0.0 { a * (x.exp() - 1.0) } else { x }),
        "Clip" => Box::new(move |x: f64| x.max(a).min(b)),
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

    fn assert_close(got: &[Vec<f64>], want: [&[f64]; 3]) {
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
}
