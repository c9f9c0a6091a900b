//! Reductions and ops along one axis: Reduce*, ArgMax/ArgMin, Softmax / LogSoftmax / Hardmax,
//! CumSum, TopK, and the two classification losses.
use super::shape::{attr_or_input, norm_axes};
use super::tensor::*;
use super::{Cx, OpFn, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use std::collections::BTreeMap;

type Out = R<Vec<V>>;

#[derive(Clone, Copy, PartialEq)]
enum Red {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    L1,
    L2,
    LogSum,
    LogSumExp,
    SumSquare,
}

/// For each input element, the flat index of its output element (reducing `axes`), and the
/// output shape with the reduced axes kept as 1.
fn reduce_plan(shape: &[usize], axes: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let mut kept = shape.to_vec();
    for &a in axes {
        kept[a] = 1;
    }
    let ost = strides(&kept);
    let s: Vec<isize> = (0..shape.len())
        .map(|d| {
            if axes.contains(&d) {
                0
            } else {
                ost[d] as isize
            }
        })
        .collect();
    (kept, strided_index(shape, &s, 0))
}

fn reduce(cx: &Cx, n: &Node, ins: &[Option<&V>], red: Red) -> Out {
    let t = inp(ins, 0)?;
    let since = if matches!(red, Red::Sum) { 13 } else { 18 };
    let axes = attr_or_input(cx, n, ins, "axes", 1, since)?.unwrap_or_default();
    let keepdims = n.int("keepdims", 1) != 0;
    if axes.is_empty() && n.int("noop_with_empty_axes", 0) != 0 {
        return one(t.clone());
    }
    let axes: Vec<usize> = if axes.is_empty() {
        (0..t.rank()).collect()
    } else {
        norm_axes(&axes, t.rank())?
    };
    let (kept, map) = reduce_plan(&t.shape, &axes);
    let on = numel(&kept);
    let count = axes.iter().map(|&a| t.shape[a]).product::<usize>();
    let out_shape: Vec<usize> = if keepdims {
        kept
    } else {
        (0..t.rank())
            .filter(|d| !axes.contains(d))
            .map(|d| t.shape[d])
            .collect()
    };
    if let Buf::I(v) = &t.buf
        && matches!(
            red,
            Red::Sum | Red::Prod | Red::Max | Red::Min | Red::L1 | Red::SumSquare
        )
    {
        let init = match red {
            Red::Prod => 1,
            Red::Max => {
                if t.dt == DType::U64 {
                    0
                } else {
                    wrap_dt(t.dt, i64::MIN).min(int_min(t.dt))
                }
            }
            Red::Min => int_max(t.dt),
            _ => 0,
        };
        let mut acc = vec![init; on];
        for (i, &o) in map.iter().enumerate() {
            let x = v[i];
            acc[o] = match red {
                Red::Sum => acc[o].wrapping_add(x),
                Red::Prod => acc[o].wrapping_mul(x),
                Red::Max => acc[o].max(x),
                Red::Min => acc[o].min(x),
                Red::L1 => acc[o].wrapping_add(x.wrapping_abs()),
                _ => acc[o].wrapping_add(x.wrapping_mul(x)),
            };
        }
        return one(T::from_i64s(t.dt, out_shape, acc)?);
    }
    let v = t.floats()?;
    let init = match red {
        Red::Prod => 1.0,
        Red::Max => f64::NEG_INFINITY,
        Red::Min => f64::INFINITY,
        _ => 0.0,
    };
    // LogSumExp: subtract the per-output maximum for stability.
    let mut mx = vec![f64::NEG_INFINITY; on];
    if red == Red::LogSumExp {
        for (i, &o) in map.iter().enumerate() {
            mx[o] = mx[o].max(v[i]);
        }
        for m in mx.iter_mut() {
            if !m.is_finite() {
                *m = 0.0;
            }
        }
    }
    let mut acc = vec![init; on];
    for (i, &o) in map.iter().enumerate() {
        let x = v[i];
        acc[o] = match red {
            Red::Sum | Red::Mean | Red::LogSum => acc[o] + x,
            Red::Prod => acc[o] * x,
            Red::Max => {
                if x.is_nan() || acc[o].is_nan() {
                    f64::NAN
                } else {
                    acc[o].max(x)
                }
            }
            Red::Min => {
                if x.is_nan() || acc[o].is_nan() {
                    f64::NAN
                } else {
                    acc[o].min(x)
                }
            }
            Red::L1 => acc[o] + x.abs(),
            Red::L2 | Red::SumSquare => acc[o] + x * x,
            Red::LogSumExp => acc[o] + (x - mx[o]).exp(),
        };
    }
    for (o, a) in acc.iter_mut().enumerate() {
        *a = match red {
            Red::Mean => *a / count as f64,
            Red::L2 => a.sqrt(),
            Red::LogSum => a.ln(),
            Red::LogSumExp => a.ln() + mx[o],
            _ => *a,
        };
    }
    one(T::from_f64s(t.dt, out_shape, acc)?)
}

fn int_min(dt: DType) -> i64 {
    match dt {
        DType::I8 => i8::MIN as i64,
        DType::I16 => i16::MIN as i64,
        DType::I32 => i32::MIN as i64,
        DType::I64 => i64::MIN,
        _ => 0,
    }
}

fn int_max(dt: DType) -> i64 {
    match dt {
        DType::I8 => i8::MAX as i64,
        DType::I16 => i16::MAX as i64,
        DType::I32 => i32::MAX as i64,
        DType::U8 => u8::MAX as i64,
        DType::U16 => u16::MAX as i64,
        DType::U32 => u32::MAX as i64,
        DType::U64 => -1,
        _ => i64::MAX,
    }
}

macro_rules! reducers {
    ($($name:ident => $red:expr),* $(,)?) => {
        $(
            #[allow(non_snake_case)]
            fn $name(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
                reduce(cx, n, ins, $red)
            }
        )*
        fn register_reducers(t: &mut BTreeMap<&'static str, OpFn>) {
            $( t.insert(stringify!($name), $name as OpFn); )*
        }
    };
}

reducers! {
    ReduceSum => Red::Sum,
    ReduceMean => Red::Mean,
    ReduceMax => Red::Max,
    ReduceMin => Red::Min,
    ReduceProd => Red::Prod,
    ReduceL1 => Red::L1,
    ReduceL2 => Red::L2,
    ReduceLogSum => Red::LogSum,
    ReduceLogSumExp => Red::LogSumExp,
    ReduceSumSquare => Red::SumSquare,
}

fn arg_extreme(n: &Node, ins: &[Option<&V>], max: bool) -> Out {
    let t = inp(ins, 0)?;
    let axis = norm_axis(n.int("axis", 0), t.rank())?;
    let keep = n.int("keepdims", 1) != 0;
    let last = n.int("select_last_index", 0) != 0;
    let v = t.floats()?;
    let (outer, len, inner) = split_at_axis(&t.shape, axis);
    if len == 0 {
        // ONNX does not say what the index of the largest of no elements is.
        return Err(unsup("ArgMax/ArgMin over an empty axis"));
    }
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let mut best = 0usize;
            for k in 1..len {
                let x = v[(o * len + k) * inner + i];
                let b = v[(o * len + best) * inner + i];
                let better = if max { x > b } else { x < b };
                if better || (last && x == b) {
                    best = k;
                }
            }
            out.push(best as i64);
        }
    }
    let mut shape = t.shape.clone();
    if keep {
        shape[axis] = 1;
    } else {
        shape.remove(axis);
    }
    one(T::i(DType::I64, shape, out))
}

fn op_argmax(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    arg_extreme(n, ins, true)
}

fn op_argmin(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    arg_extreme(n, ins, false)
}

#[derive(Clone, Copy, PartialEq)]
enum SoftKind {
    Softmax,
    LogSoftmax,
    Hardmax,
}

/// Softmax-like op over groups `(outer, len, inner)`.
fn softmax_groups(v: &[f64], outer: usize, len: usize, inner: usize, kind: SoftKind) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * len + k) * inner + i;
            let mut m = f64::NEG_INFINITY;
            let mut arg = 0;
            for k in 0..len {
                if v[at(k)] > m {
                    m = v[at(k)];
                    arg = k;
                }
            }
            match kind {
                SoftKind::Hardmax => {
                    if len > 0 {
                        out[at(arg)] = 1.0;
                    }
                }
                _ => {
                    let s: f64 = (0..len).map(|k| (v[at(k)] - m).exp()).sum();
                    for k in 0..len {
                        out[at(k)] = if kind == SoftKind::Softmax {
                            (v[at(k)] - m).exp() / s
                        } else {
                            v[at(k)] - m - s.ln()
                        };
                    }
                }
            }
        }
    }
    out
}

/// Softmax / LogSoftmax / Hardmax: before opset 13 the input is coerced to 2-D at `axis`
/// (default 1) and the op runs over the whole second dimension; from 13 it runs along `axis`
/// (default -1).
fn softmax_like(cx: &Cx, n: &Node, ins: &[Option<&V>], kind: SoftKind) -> Out {
    let t = inp(ins, 0)?;
    let v = t.fs()?;
    let r = t.rank();
    let (outer, len, inner) = if cx.opset < 13 {
        let a = n.int("axis", 1);
        let a = if a < 0 { a + r as i64 } else { a };
        if a < 0 || a as usize > r {
            return Err(err(format!("axis {a} for rank {r}")));
        }
        let a = a as usize;
        (numel(&t.shape[..a]), numel(&t.shape[a..]), 1)
    } else {
        let a = norm_axis(n.int("axis", -1), r)?;
        split_at_axis(&t.shape, a)
    };
    one(T::f(
        t.dt,
        t.shape.clone(),
        softmax_groups(v, outer, len, inner, kind),
    ))
}

fn op_softmax(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    softmax_like(cx, n, ins, SoftKind::Softmax)
}
fn op_log_softmax(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    softmax_like(cx, n, ins, SoftKind::LogSoftmax)
}
fn op_hardmax(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    softmax_like(cx, n, ins, SoftKind::Hardmax)
}

fn op_cumsum(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let axis = norm_axis(inp(ins, 1)?.scalar_i()?, t.rank())?;
    let excl = n.int("exclusive", 0) != 0;
    let rev = n.int("reverse", 0) != 0;
    let (outer, len, inner) = split_at_axis(&t.shape, axis);
    let order: Vec<usize> = if rev {
        (0..len).rev().collect()
    } else {
        (0..len).collect()
    };
    let mut out = t.clone();
    match (&t.buf, &mut out.buf) {
        (Buf::F(v), Buf::F(o)) => {
            for a in 0..outer {
                for i in 0..inner {
                    let mut s = 0.0;
                    for &k in &order {
                        let p = (a * len + k) * inner + i;
                        if excl {
                            o[p] = s;
                            s += v[p];
                        } else {
                            s += v[p];
                            o[p] = s;
                        }
                    }
                }
            }
        }
        (Buf::I(v), Buf::I(o)) => {
            for a in 0..outer {
                for i in 0..inner {
                    let mut s = 0i64;
                    for &k in &order {
                        let p = (a * len + k) * inner + i;
                        if excl {
                            o[p] = wrap_dt(t.dt, s);
                            s = s.wrapping_add(v[p]);
                        } else {
                            s = s.wrapping_add(v[p]);
                            o[p] = wrap_dt(t.dt, s);
                        }
                    }
                }
            }
        }
        _ => return Err(err(format!("CumSum of {}", t.dt))),
    }
    one(out)
}

fn op_topk(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let k = if cx.opset < 10 {
        n.int("k", -1)
    } else {
        inp(ins, 1)?.scalar_i()?
    };
    let axis = norm_axis(n.int("axis", -1), t.rank())?;
    let largest = n.int("largest", 1) != 0;
    let (outer, len, inner) = split_at_axis(&t.shape, axis);
    if k < 0 || k as usize > len {
        return Err(err(format!("TopK k={k} for axis of {len}")));
    }
    let k = k as usize;
    let v = t.floats()?;
    let mut idx_out = Vec::with_capacity(outer * k * inner);
    let mut pos = vec![0usize; outer * k * inner];
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| (o * len + j) * inner + i;
            let mut order: Vec<usize> = (0..len).collect();
            order.sort_by(|&a, &b| {
                let (x, y) = (v[at(a)], v[at(b)]);
                // A total order (NaN above everything, -0 equal to +0), so sorting never panics.
                let c = if largest {
                    nan_last(y, x)
                } else {
                    nan_last(x, y)
                };
                c.then(a.cmp(&b))
            });
            for (j, &src) in order.iter().take(k).enumerate() {
                pos[(o * k + j) * inner + i] = at(src);
            }
        }
    }
    for &p in &pos {
        idx_out.push(((p / inner) % len) as i64);
    }
    let mut shape = t.shape.clone();
    shape[axis] = k;
    Ok(vec![
        V::T(t.take(shape.clone(), &pos)),
        V::T(T::i(DType::I64, shape, idx_out)),
    ])
}

/// Negative log-likelihood of `logp` (N, C, d...) at `target` (N, d...).
fn nll(
    logp: &[f64],
    shape: &[usize],
    target: &[i64],
    weight: Option<&[f64]>,
    ignore: Option<i64>,
    reduction: &str,
) -> R<(Vec<usize>, Vec<f64>)> {
    if shape.len() < 2 {
        return Err(err("loss input needs rank >= 2"));
    }
    let (nb, c) = (shape[0], shape[1]);
    let inner = numel(&shape[2..]);
    if target.len() != nb * inner {
        return Err(err("loss target shape"));
    }
    let mut loss = vec![0.0; nb * inner];
    let mut wsum = 0.0;
    for b in 0..nb {
        for i in 0..inner {
            let t = target[b * inner + i];
            if Some(t) == ignore {
                continue;
            }
            if t < 0 || t as usize >= c {
                return Err(err(format!("target {t} out of range for {c} classes")));
            }
            let w = weight.map(|w| w[t as usize]).unwrap_or(1.0);
            loss[b * inner + i] = -logp[(b * c + t as usize) * inner + i] * w;
            wsum += w;
        }
    }
    match reduction {
        "none" => {
            let mut s = vec![nb];
            s.extend(&shape[2..]);
            Ok((s, loss))
        }
        "sum" => Ok((vec![], vec![loss.iter().sum()])),
        "mean" => Ok((vec![], vec![loss.iter().sum::<f64>() / wsum])),
        r => Err(unsup(format!("reduction {r}"))),
    }
}

fn op_nll_loss(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let target = inp(ins, 1)?.ints()?;
    let w = opt(ins, 2)?.map(|w| w.floats()).transpose()?;
    let (shape, v) = nll(
        x.fs()?,
        &x.shape,
        &target,
        w.as_deref(),
        n.int_opt("ignore_index"),
        &n.string("reduction", "mean"),
    )?;
    one(T::f(x.dt, shape, v))
}

fn op_sce_loss(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    if x.rank() < 2 {
        return Err(err("SoftmaxCrossEntropyLoss needs rank >= 2"));
    }
    let target = inp(ins, 1)?.ints()?;
    let w = opt(ins, 2)?.map(|w| w.floats()).transpose()?;
    let (nb, c) = (x.shape[0], x.shape[1]);
    let inner = numel(&x.shape[2..]);
    let logp = softmax_groups(x.fs()?, nb, c, inner, SoftKind::LogSoftmax);
    let (shape, v) = nll(
        &logp,
        &x.shape,
        &target,
        w.as_deref(),
        n.int_opt("ignore_index"),
        &n.string("reduction", "mean"),
    )?;
    Ok(vec![
        V::T(T::f(x.dt, shape, v)),
        V::T(T::f(x.dt, x.shape.clone(), logp)),
    ])
}

pub(super) fn register(t: &mut BTreeMap<&'static str, OpFn>) {
    register_reducers(t);
    let ops: &[(&'static str, OpFn)] = &[
        ("ArgMax", op_argmax),
        ("ArgMin", op_argmin),
        ("Softmax", op_softmax),
        ("LogSoftmax", op_log_softmax),
        ("Hardmax", op_hardmax),
        ("CumSum", op_cumsum),
        ("TopK", op_topk),
        ("NegativeLogLikelihoodLoss", op_nll_loss),
        ("SoftmaxCrossEntropyLoss", op_sce_loss),
    ];
    for (k, f) in ops {
        t.insert(k, *f);
    }
}

/// Compares floats with NaN greater than every number and equal to NaN: a total order.
pub(super) fn nan_last(x: f64, y: f64) -> std::cmp::Ordering {
    x.partial_cmp(&y)
        .unwrap_or_else(|| x.is_nan().cmp(&y.is_nan()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_axis_semantics_change_at_13() {
        // x of shape [2, 2]: [[0, ln 3], [0, 0]]
        let x = [0.0, 3f64.ln(), 0.0, 0.0];
        // opset >= 13, axis -1: per row.
        let per_row = softmax_groups(&x, 2, 2, 1, SoftKind::Softmax);
        assert!((per_row[0] - 0.25).abs() < 1e-12 && (per_row[1] - 0.75).abs() < 1e-12);
        assert!((per_row[2] - 0.5).abs() < 1e-12);
        // opset < 13, axis 0: the whole tensor is one group (coerced to [1, 4]).
        let whole = softmax_groups(&x, 1, 4, 1, SoftKind::Softmax);
        assert!((whole[1] - 3.0 / 6.0).abs() < 1e-12);
        assert!((whole[0] - 1.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn reduce_plan_maps_to_outputs() {
        // [2, 3] reduced over axis 1 -> outputs 0, 0, 0, 1, 1, 1
        let (kept, map) = reduce_plan(&[2, 3], &[1]);
        assert_eq!(kept, vec![2, 1]);
        assert_eq!(map, vec![0, 0, 0, 1, 1, 1]);
    }
}
