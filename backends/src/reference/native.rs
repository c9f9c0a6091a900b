//! The reference in native precision (`reference-native`): ops as the ONNX spec composes them,
//! each step rounded to the element type.
//!
//! Where the spec gives an op a function body (Softplus is `Log(Add(Exp(X), 1))`, LogSoftmax
//! subtracts the max, exponentiates, sums and takes the log, MeanVarianceNormalization takes
//! `E[X²] - E[X]²`, LayerNormalization computes its statistics in `stash_type`), an
//! implementation that follows the body in f32 overflows, underflows and cancels exactly where
//! the body does. The f64 reference does not, so on its own it would blame such an
//! implementation for results the spec itself produces. This module evaluates those bodies by
//! calling the reference's own kernels step by step, rounding every step to the element type
//! (the interpreter then rounds every op's result the same way, see [`super::Cx::native`]).
//! Ops without a body whose plain evaluation in the element type overflows where f64 does not
//! (LpPool, GlobalLpPool, LpNormalization: sums of powers) are composed the same way.
//!
//! Together the two references bound what a correct library may return: the triage accepts a
//! result within tolerance of either, or between them.
use super::tensor::{R, T, err, next_index, norm_axis, numel, strides};
use super::{Cx, OpTable, V, inp, opt, table};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

/// The reference's op table with the native compositions of this module in place of the
/// kernels they replace.
pub fn table_native() -> OpTable {
    let mut t = table().clone();
    let ops: [(&'static str, super::OpFn); 20] = [
        ("ReduceSum", reduce_sum),
        ("BatchNormalization", batch_norm),
        ("InstanceNormalization", instance_norm),
        ("Softplus", softplus),
        ("Mish", mish),
        ("Celu", celu),
        ("HardSwish", hard_swish),
        ("Softmax", softmax),
        ("LogSoftmax", log_softmax),
        ("ReduceLogSumExp", reduce_log_sum_exp),
        ("ReduceLogSum", reduce_log_sum),
        ("ReduceSumSquare", reduce_sum_square),
        ("ReduceL2", reduce_l2),
        ("ReduceL1", reduce_l1),
        ("MeanVarianceNormalization", mvn),
        ("LayerNormalization", layer_norm),
        ("LpNormalization", lp_normalization),
        ("LpPool", lp_pool),
        ("GlobalLpPool", global_lp_pool),
        ("ReduceMean", reduce_mean),
    ];
    t.extend(ops);
    t
}

/// Calls the reference's kernels one step of a body at a time, rounding each result.
struct Body<'a> {
    cx: Cx<'a>,
}

impl<'a> Body<'a> {
    /// Steps are taken at opset 18 (axes of reductions as inputs, Softmax over one axis),
    /// with the native table (a sum inside a body accumulates in the element type too).
    fn new(cx: &'a Cx<'a>) -> Body<'a> {
        Body {
            cx: Cx {
                opset: 18,
                scope: cx.scope,
                ops: cx.ops,
                native: true,
            },
        }
    }

    fn call(&self, op: &str, ins: &[&V], attrs: Vec<(&str, AttrValue)>) -> R<V> {
        let names: Vec<String> = (0..ins.len()).map(|i| format!("i{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut node = Node::new(op, &refs, &["y"]);
        for (k, v) in attrs {
            node = node.with_attr(k, v);
        }
        let f = self
            .cx
            .ops
            .get(op)
            .ok_or_else(|| err(format!("native body: no kernel {op}")))?;
        let args: Vec<Option<&V>> = ins.iter().map(|v| Some(*v)).collect();
        let mut out = f(&self.cx, &node, &args)?;
        if out.is_empty() {
            return Err(err(format!("native body: {op} gave no output")));
        }
        let mut y = out.swap_remove(0);
        super::round_to_type(&mut y);
        Ok(y)
    }

    fn un(&self, op: &str, x: &V) -> R<V> {
        self.call(op, &[x], vec![])
    }

    fn bin(&self, op: &str, a: &V, b: &V) -> R<V> {
        self.call(op, &[a, b], vec![])
    }

    /// `op` over `axes` (`None`: every axis) with `keepdims`.
    fn reduce(&self, op: &str, x: &V, axes: Option<&[i64]>, keepdims: bool) -> R<V> {
        let attrs = vec![("keepdims", AttrValue::Int(keepdims as i64))];
        match axes {
            Some(a) => {
                let a = V::T(T::vec_i64(a.to_vec()));
                self.call(op, &[x, &a], attrs)
            }
            None => self.call(op, &[x], attrs),
        }
    }
}

/// A scalar of `x`'s element type.
fn scalar_like(x: &T, v: f64) -> V {
    V::T(T::f(x.dt, vec![], vec![v]))
}

fn t(v: &V) -> R<&T> {
    match v {
        V::T(t) => Ok(t),
        _ => Err(err("native body: expected a tensor")),
    }
}

fn float_input<'v>(ins: &[Option<&'v V>]) -> R<Option<&'v T>> {
    let x = inp(ins, 0)?;
    Ok(x.dt.is_float().then_some(x))
}

/// The plain kernel of `n`'s op (for element types the body does not cover).
fn plain(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let f = table()
        .get(n.op_type.as_str())
        .ok_or_else(|| err(format!("no kernel {}", n.op_type)))?;
    f(cx, n, ins)
}

/// Reduction axes of `n` (attribute before opset 18 / input from 18; ReduceSum from 13), as
/// given, and whether an empty list means "none" (`noop_with_empty_axes`).
fn reduce_axes(cx: &Cx, n: &Node, ins: &[Option<&V>], since: i64) -> R<Option<Vec<i64>>> {
    let axes = super::ops::attr_or_input(cx, n, ins, "axes", 1, since)?;
    match axes {
        Some(a) if a.is_empty() => Ok(if n.int("noop_with_empty_axes", 0) != 0 {
            Some(Vec::new())
        } else {
            None
        }),
        other => Ok(other),
    }
}

fn keepdims(n: &Node) -> bool {
    n.int("keepdims", 1) != 0
}

fn softplus(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    let b = Body::new(cx);
    let e = b.un("Exp", &V::T(x.clone()))?;
    let s = b.bin("Add", &e, &scalar_like(x, 1.0))?;
    Ok(vec![b.un("Log", &s)?])
}

fn mish(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    let b = Body::new(cx);
    let xv = V::T(x.clone());
    let sp = softplus(cx, n, ins)?.remove(0);
    let th = b.un("Tanh", &sp)?;
    Ok(vec![b.bin("Mul", &xv, &th)?])
}

fn celu(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    let alpha = n.float("alpha", 1.0) as f64;
    let b = Body::new(cx);
    let a = scalar_like(x, alpha);
    let xa = b.bin("Div", &V::T(x.clone()), &a)?;
    let elu = b.call("Elu", &[&xa], vec![("alpha", AttrValue::Float(1.0))])?;
    Ok(vec![b.bin("Mul", &a, &elu)?])
}

fn hard_swish(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    let b = Body::new(cx);
    let xv = V::T(x.clone());
    let hs = b.call(
        "HardSigmoid",
        &[&xv],
        vec![
            ("alpha", AttrValue::Float(1.0 / 6.0)),
            ("beta", AttrValue::Float(0.5)),
        ],
    )?;
    Ok(vec![b.bin("Mul", &xv, &hs)?])
}

/// Softmax / LogSoftmax from opset 13: over one axis, the max subtracted first.
fn soft(cx: &Cx, n: &Node, ins: &[Option<&V>], log: bool) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    if cx.opset < 13 {
        return plain(cx, n, ins);
    }
    let axis = norm_axis(n.int("axis", -1), x.rank())? as i64;
    let b = Body::new(cx);
    let xv = V::T(x.clone());
    let max = b.reduce("ReduceMax", &xv, Some(&[axis]), true)?;
    let sub = b.bin("Sub", &xv, &max)?;
    let exp = b.un("Exp", &sub)?;
    let sum = b.reduce("ReduceSum", &exp, Some(&[axis]), true)?;
    Ok(vec![if log {
        let l = b.un("Log", &sum)?;
        b.bin("Sub", &sub, &l)?
    } else {
        b.bin("Div", &exp, &sum)?
    }])
}

fn softmax(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    soft(cx, n, ins, false)
}

fn log_softmax(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    soft(cx, n, ins, true)
}

/// A reduction whose body is `post(ReduceSum(pre(X)))`; `None` steps are skipped.
fn sum_body(
    cx: &Cx,
    n: &Node,
    ins: &[Option<&V>],
    pre: Option<&str>,
    post: Option<&str>,
) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    let axes = reduce_axes(cx, n, ins, 18)?;
    if axes.as_ref().is_some_and(|a| a.is_empty()) {
        return plain(cx, n, ins);
    }
    let b = Body::new(cx);
    let xv = V::T(x.clone());
    let a = match pre {
        Some("Square") => b.bin("Mul", &xv, &xv)?,
        Some(op) => b.un(op, &xv)?,
        None => xv,
    };
    let s = b.reduce("ReduceSum", &a, axes.as_deref(), keepdims(n))?;
    Ok(vec![match post {
        Some(op) => b.un(op, &s)?,
        None => s,
    }])
}

fn reduce_log_sum_exp(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    sum_body(cx, n, ins, Some("Exp"), Some("Log"))
}

fn reduce_log_sum(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    sum_body(cx, n, ins, None, Some("Log"))
}

fn reduce_sum_square(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    sum_body(cx, n, ins, Some("Square"), None)
}

fn reduce_l2(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    sum_body(cx, n, ins, Some("Square"), Some("Sqrt"))
}

fn reduce_l1(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    sum_body(cx, n, ins, Some("Abs"), None)
}

/// Rounds `x` to element type `dt` (f32, f16, bf16; f64 as it is).
fn round_to(dt: DType, x: f64) -> f64 {
    match dt {
        DType::F32 => x as f32 as f64,
        DType::F16 => half::f16::from_f64(x).to_f64(),
        DType::BF16 => half::bf16::from_f64(x).to_f64(),
        _ => x,
    }
}

/// The sum over `axes` accumulated one element at a time in the element type, in row-major
/// order, as a plain loop in f32 sums: rounding after every addition (an f64 sum rounded once
/// is the other bound of the envelope).
fn sequential_sum(x: &T, axes: &[usize], keep: bool) -> R<T> {
    let v = x.fs()?;
    let rank = x.rank();
    let out_full: Vec<usize> = (0..rank)
        .map(|d| if axes.contains(&d) { 1 } else { x.shape[d] })
        .collect();
    let ost = strides(&out_full);
    let mut acc = vec![0.0f64; numel(&out_full)];
    let mut idx = vec![0usize; rank];
    for &e in v {
        let o: usize = (0..rank)
            .map(|d| {
                if axes.contains(&d) {
                    0
                } else {
                    idx[d] * ost[d]
                }
            })
            .sum();
        acc[o] = round_to(x.dt, acc[o] + e);
        next_index(&mut idx, |d| x.shape[d]);
    }
    let shape = if keep {
        out_full
    } else {
        (0..rank)
            .filter(|d| !axes.contains(d))
            .map(|d| x.shape[d])
            .collect()
    };
    Ok(T::f(x.dt, shape, acc))
}

/// The per-channel value of a 1-D parameter (`None`: `default`).
fn per_channel(p: Option<&T>, c: usize, default: f64) -> R<f64> {
    match p {
        Some(t) => {
            let v = t.fs()?;
            v.get(c)
                .or_else(|| v.first())
                .copied()
                .ok_or_else(|| err("empty per-channel parameter"))
        }
        None => Ok(default),
    }
}

/// BatchNormalization in inference mode, `(X - mean) / sqrt(var + epsilon) * scale + B`,
/// every step rounded to the element type (no function body: this is how a plain kernel
/// computes it).
fn batch_norm(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    if n.outputs.iter().skip(1).any(|o| !o.is_empty()) || n.int("training_mode", 0) != 0 {
        return plain(cx, n, ins);
    }
    let (scale, b, mean, var) = (opt(ins, 1)?, opt(ins, 2)?, opt(ins, 3)?, opt(ins, 4)?);
    let eps = n.float("epsilon", 1e-5) as f64;
    let dt = x.dt;
    let r = |v: f64| round_to(dt, v);
    let c_n = if x.rank() >= 2 { x.shape[1] } else { 1 };
    let inner: usize = x.shape.iter().skip(2).product();
    let mut y = Vec::with_capacity(x.fs()?.len());
    for (i, &v) in x.fs()?.iter().enumerate() {
        let c = (i / inner.max(1)) % c_n.max(1);
        let den = r(r(per_channel(var, c, 1.0)? + r(eps)).sqrt());
        let d = r(v - per_channel(mean, c, 0.0)?);
        let s = r(r(d / den) * per_channel(scale, c, 1.0)?);
        y.push(r(s + per_channel(b, c, 0.0)?));
    }
    Ok(vec![V::T(T::f(dt, x.shape.clone(), y))])
}

/// InstanceNormalization, the mean and the variance of each (N, C) slice summed one element at
/// a time in the element type.
fn instance_norm(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    if x.rank() < 2 {
        return plain(cx, n, ins);
    }
    let (scale, b) = (opt(ins, 1)?, opt(ins, 2)?);
    let eps = n.float("epsilon", 1e-5) as f64;
    let dt = x.dt;
    let r = |v: f64| round_to(dt, v);
    let c_n = x.shape[1];
    let inner: usize = x.shape.iter().skip(2).product();
    let v = x.fs()?;
    let mut y = vec![0.0; v.len()];
    if inner == 0 {
        return Ok(vec![V::T(T::f(dt, x.shape.clone(), y))]);
    }
    for (slice, chunk) in v.chunks(inner).enumerate() {
        let c = slice % c_n.max(1);
        let mean = r(chunk.iter().fold(0.0, |a, &e| r(a + e)) / inner as f64);
        let var = r(chunk.iter().fold(0.0, |a, &e| {
            let d = r(e - mean);
            r(a + r(d * d))
        }) / inner as f64);
        let den = r(r(var + r(eps)).sqrt());
        for (k, &e) in chunk.iter().enumerate() {
            let s = r(r(r(e - mean) / den) * per_channel(scale, c, 1.0)?);
            y[slice * inner + k] = r(s + per_channel(b, c, 0.0)?);
        }
    }
    Ok(vec![V::T(T::f(dt, x.shape.clone(), y))])
}

/// ReduceSum accumulated in the element type ([`sequential_sum`]).
fn reduce_sum(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    let axes = reduce_axes(cx, n, ins, 13)?;
    let rank = x.rank();
    let axes: Vec<usize> = match axes {
        Some(a) if a.is_empty() => return plain(cx, n, ins),
        Some(a) => a
            .iter()
            .map(|&v| norm_axis(v, rank))
            .collect::<R<Vec<_>>>()?,
        None => (0..rank).collect(),
    };
    Ok(vec![V::T(sequential_sum(x, &axes, keepdims(n))?)])
}

/// ReduceMean as a sum divided by the count, both in the element type (a sum of large values
/// overflows before the division brings it back).
fn reduce_mean(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    let axes = reduce_axes(cx, n, ins, 18)?;
    if axes.as_ref().is_some_and(|a| a.is_empty()) {
        return plain(cx, n, ins);
    }
    let rank = x.rank();
    let count: usize = match &axes {
        None => x.shape.iter().product(),
        Some(a) => {
            let mut c = 1;
            for &ax in a {
                c *= x.shape[norm_axis(ax, rank)?];
            }
            c
        }
    };
    let b = Body::new(cx);
    let s = b.reduce("ReduceSum", &V::T(x.clone()), axes.as_deref(), keepdims(n))?;
    Ok(vec![b.bin("Div", &s, &scalar_like(x, count as f64))?])
}

/// MeanVarianceNormalization's body: `(X - E[X]) / (sqrt(E[X²] - E[X]²) + 1e-9)`.
fn mvn(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    let axes: Vec<i64> = n.ints("axes").map_or_else(|| vec![0, 2, 3], |a| a.to_vec());
    let b = Body::new(cx);
    let xv = V::T(x.clone());
    let two = scalar_like(x, 2.0);
    let mean = b.reduce("ReduceMean", &xv, Some(&axes), true)?;
    let mean_sq = b.bin("Pow", &mean, &two)?;
    let sq = b.bin("Pow", &xv, &two)?;
    let e_sq = b.reduce("ReduceMean", &sq, Some(&axes), true)?;
    let var = b.bin("Sub", &e_sq, &mean_sq)?;
    let std = b.un("Sqrt", &var)?;
    let dev = b.bin("Sub", &xv, &mean)?;
    let denom = b.bin("Add", &std, &scalar_like(x, 1e-9))?;
    Ok(vec![b.bin("Div", &dev, &denom)?])
}

/// LayerNormalization's body: statistics in `stash_type`, the normalized value cast back, then
/// scale and bias in the input's type.
fn layer_norm(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    let rank = x.rank();
    let axis = norm_axis(n.int("axis", -1), rank)?;
    let stash = match n.int("stash_type", 1) {
        1 => DType::F32,
        c => DType::from_code(c as i32),
    };
    if !stash.is_float() {
        return plain(cx, n, ins);
    }
    let eps = n.float("epsilon", 1e-5) as f64;
    let b = Body::new(cx);
    let cast =
        |v: &V, to: DType| b.call("Cast", &[v], vec![("to", AttrValue::Int(to.code() as i64))]);
    let xs = cast(&V::T(x.clone()), stash)?;
    let axes: Vec<i64> = (axis as i64..rank as i64).collect();
    let xs_t = t(&xs)?.clone();
    let mean = b.reduce("ReduceMean", &xs, Some(&axes), true)?;
    let d = b.bin("Sub", &xs, &mean)?;
    let dd = b.bin("Mul", &d, &d)?;
    let var = b.reduce("ReduceMean", &dd, Some(&axes), true)?;
    let var_eps = b.bin("Add", &var, &scalar_like(&xs_t, eps))?;
    let std = b.un("Sqrt", &var_eps)?;
    let inv = b.un("Reciprocal", &std)?;
    let normalized = b.bin("Mul", &d, &inv)?;
    let back = cast(&normalized, x.dt)?;
    let scaled = b.bin("Mul", &back, &V::T(inp(ins, 1)?.clone()))?;
    let y = match opt(ins, 2)? {
        Some(bias) => b.bin("Add", &scaled, &V::T(bias.clone()))?,
        None => scaled,
    };
    Ok(vec![y, mean, inv])
}

/// `x / ||x||_p` along `axis`, the norm summed in the element type.
fn lp_normalization(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    let p = n.int("p", 2);
    let axis = norm_axis(n.int("axis", -1), x.rank())? as i64;
    let b = Body::new(cx);
    let xv = V::T(x.clone());
    let norm = match p {
        1 => {
            let a = b.un("Abs", &xv)?;
            b.reduce("ReduceSum", &a, Some(&[axis]), true)?
        }
        2 => {
            let sq = b.bin("Mul", &xv, &xv)?;
            let s = b.reduce("ReduceSum", &sq, Some(&[axis]), true)?;
            b.un("Sqrt", &s)?
        }
        _ => return plain(cx, n, ins),
    };
    Ok(vec![b.bin("Div", &xv, &norm)?])
}

/// `(Σ |x|^p)^(1/p)` over each window: the powers pooled (as an average times the window
/// size, padding counting as zeros) in the element type.
fn lp_pool(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    let p = n.int("p", 2) as f64;
    let Some(kernel) = n.ints("kernel_shape") else {
        return plain(cx, n, ins);
    };
    let k: i64 = kernel.iter().product();
    let b = Body::new(cx);
    let a = b.un("Abs", &V::T(x.clone()))?;
    let pw = b.bin("Pow", &a, &scalar_like(x, p))?;
    let mut attrs: Vec<(&str, AttrValue)> = vec![("count_include_pad", AttrValue::Int(1))];
    for name in [
        "kernel_shape",
        "strides",
        "pads",
        "dilations",
        "auto_pad",
        "ceil_mode",
    ] {
        if let Some(a) = n.attributes.iter().find(|a| a.name == name) {
            attrs.push((name, a.value.clone()));
        }
    }
    let avg = b.call("AveragePool", &[&pw], attrs)?;
    let sum = b.bin("Mul", &avg, &scalar_like(x, k as f64))?;
    Ok(vec![b.bin("Pow", &sum, &scalar_like(x, 1.0 / p))?])
}

fn global_lp_pool(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let Some(x) = float_input(ins)? else {
        return plain(cx, n, ins);
    };
    if x.rank() < 2 {
        return plain(cx, n, ins);
    }
    let p = n.int("p", 2) as f64;
    let axes: Vec<i64> = (2..x.rank() as i64).collect();
    let b = Body::new(cx);
    let a = b.un("Abs", &V::T(x.clone()))?;
    let pw = b.bin("Pow", &a, &scalar_like(x, p))?;
    let s = if axes.is_empty() {
        pw
    } else {
        b.reduce("ReduceSum", &pw, Some(&axes), true)?
    };
    Ok(vec![b.bin("Pow", &s, &scalar_like(x, 1.0 / p))?])
}

#[cfg(test)]
mod tests {
    use crate::backend::Backend;
    use crate::reference::Reference;
    use crate::value::{Data, HostTensor, Value};

    fn run(native: bool, text: &str, x: Vec<f32>) -> Vec<f64> {
        let m = mutagraph_ir::text::parse_model(text).unwrap();
        let mut r = if native {
            Reference::new_native()
        } else {
            Reference::new()
        };
        let n = x.len();
        let mut p = r.prepare(&m.to_bytes()).unwrap();
        let out = p
            .run(&vec![(
                "x".into(),
                Value::Tensor(HostTensor::new(vec![n], Data::F32(x))),
            )])
            .unwrap();
        out[0].1.tensor().unwrap().to_f64s().unwrap()
    }

    const HEAD: &str = "<ir_version: 8, opset_import: [\"\" : 18]>\n";

    #[test]
    fn the_function_body_overflows_in_f32_where_f64_does_not() {
        let g = format!("{HEAD}g (float[2] x) => (float[2] y) {{ y = Softplus (x) }}");
        assert_eq!(run(false, &g, vec![100.0, 0.0])[0], 100.0);
        let native = run(true, &g, vec![100.0, 0.0]);
        assert!(native[0].is_infinite(), "{native:?}");
        assert!((native[1] - 2f64.ln()).abs() < 1e-6);
    }

    #[test]
    fn sums_accumulate_in_the_element_type() {
        // 2^24 + 1 + 1 ... : in f32 each +1 is lost, in f64 they add up.
        let g = format!(
            "{HEAD}g (float[5] x) => (float[1] y) {{ y = ReduceSum <keepdims: int = 1> (x) }}"
        );
        let x = vec![16_777_216.0, 1.0, 1.0, 1.0, 1.0];
        assert_eq!(run(false, &g, x.clone())[0], 16_777_220.0);
        assert_eq!(run(true, &g, x)[0], 16_777_216.0);
    }

    #[test]
    fn mvn_takes_the_variance_as_the_body_does() {
        // E[x^2] - E[x]^2 of nearly constant large values cancels in f32.
        let g = format!(
            "{HEAD}g (float[4] x) => (float[4] y) {{ y = MeanVarianceNormalization <axes: ints = [0]> (x) }}"
        );
        let x = vec![3000.0, 3000.001, 2999.999, 3000.0];
        let exact = run(false, &g, x.clone());
        let native = run(true, &g, x);
        assert!(exact.iter().all(|v| v.is_finite()), "{exact:?}");
        assert!(
            native
                .iter()
                .zip(&exact)
                .any(|(n, e)| !n.is_finite() || (n - e).abs() > 0.1),
            "{native:?} vs {exact:?}"
        );
    }
}
