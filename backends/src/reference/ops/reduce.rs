//! Reductions and ops along one axis: Reduce*, ArgMax / ArgMin, CumSum, TopK.
use super::{attr_or_input, norm_axes};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

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
pub(super) fn reduce_plan(shape: &[usize], axes: &[usize]) -> (Vec<usize>, Vec<usize>) {
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
        // u64 values are held as their bits in i64: they order as unsigned.
        let unsigned = t.dt == DType::U64;
        let (max, min) = if unsigned {
            (
                (|a: i64, b: i64| (a as u64).max(b as u64) as i64) as fn(i64, i64) -> i64,
                (|a: i64, b: i64| (a as u64).min(b as u64) as i64) as fn(i64, i64) -> i64,
            )
        } else {
            (
                i64::max as fn(i64, i64) -> i64,
                i64::min as fn(i64, i64) -> i64,
            )
        };
        for (i, &o) in map.iter().enumerate() {
            let x = v[i];
            acc[o] = match red {
                Red::Sum => acc[o].wrapping_add(x),
                Red::Prod => acc[o].wrapping_mul(x),
                Red::Max => max(acc[o], x),
                Red::Min => min(acc[o], x),
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
            pub(super) fn $name(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
                reduce(cx, n, ins, $red)
            }
        )*
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

pub(super) fn op_argmax(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    arg_extreme(n, ins, true)
}

pub(super) fn op_argmin(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    arg_extreme(n, ins, false)
}

pub(super) fn op_cumsum(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_topk(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

/// Compares floats with NaN greater than every number and equal to NaN: a total order.
pub(super) fn nan_last(x: f64, y: f64) -> std::cmp::Ordering {
    x.partial_cmp(&y)
        .unwrap_or_else(|| x.is_nan().cmp(&y.is_nan()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_plan_maps_to_outputs() {
        // [2, 3] reduced over axis 1 -> outputs 0, 0, 0, 1, 1, 1
        let (kept, map) = reduce_plan(&[2, 3], &[1]);
        assert_eq!(kept, vec![2, 1]);
        assert_eq!(map, vec![0, 0, 0, 1, 1, 1]);
    }
}
