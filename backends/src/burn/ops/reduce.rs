//! Reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
//! ReduceLogSum, ReduceLogSumExp, ReduceSumSquare), ArgMax / ArgMin, TopK and CumSum.
use super::{Cx, Outs, Res, full, norm_axes, norm_axis, one, opt, req, scalar_i};
use crate::burn::tensor::{Class, K, R, Val, bax, run_err, run_unsup};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

/// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
/// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare.
pub(super) fn reduce_op<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let axes_from_input = if op == "ReduceSum" {
        cx.opset >= 13
    } else {
        cx.opset >= 18
    };
    let axes: Option<Vec<i64>> = if axes_from_input {
        opt(ins, 1).map(|v| v.host_i64())
    } else {
        a.ints("axes").map(|v| v.to_vec())
    };
    let keep = a.int("keepdims", 1) != 0;
    let noop = a.int("noop_with_empty_axes", 0) != 0;
    let axes = match axes {
        Some(v) if !v.is_empty() => norm_axes(&v, x.rank())?,
        _ if noop => return one(x.clone()),
        _ => (0..x.rank()).collect(),
    };
    one(reduce(op, x, &axes, keep, dev)?)
}

fn reduce<B: BurnBackend>(
    op: &str,
    x: &Val<B>,
    axes: &[usize],
    keep: bool,
    dev: &B::Device,
) -> Res<Val<B>> {
    let r = x.rank();
    let mut kshape = x.shape.clone();
    for &a in axes {
        kshape[a] = 1;
    }
    let out_shape: Vec<usize> = if keep {
        kshape.clone()
    } else {
        x.shape
            .iter()
            .enumerate()
            .filter(|(i, _)| !axes.contains(i))
            .map(|(_, &d)| d)
            .collect()
    };
    if x.numel() == 0 {
        let n: usize = kshape.iter().product();
        if n > 0 {
            let v = match op {
                "ReduceProd" => 1.0,
                "ReduceMax" | "ReduceLogSum" | "ReduceLogSumExp" => f64::NEG_INFINITY,
                "ReduceMin" => f64::INFINITY,
                "ReduceMean" => f64::NAN,
                _ => 0.0,
            };
            if x.class() == Class::Int && !v.is_finite() {
                let v = if v > 0.0 { i64::MAX } else { i64::MIN } as f64;
                return full(out_shape, v, x.dtype, dev);
            }
            return full(out_shape, v, x.dtype, dev);
        }
        return full(out_shape, 0.0, x.dtype, dev);
    }
    let dims: Vec<usize> = axes.iter().map(|&a| bax(r, a)).collect();
    let k = match &x.k {
        K::F(t) => {
            let mut t = t.clone();
            match op {
                "ReduceL1" => t = t.abs(),
                "ReduceL2" | "ReduceSumSquare" => t = t.clone().mul(t),
                "ReduceLogSumExp" => t = t.exp(),
                _ => {}
            }
            for &d in &dims {
                t = match op {
                    "ReduceMean" => t.mean_dim(d),
                    "ReduceMax" => t.max_dim(d),
                    "ReduceMin" => t.min_dim(d),
                    "ReduceProd" => t.prod_dim(d),
                    _ => t.sum_dim(d),
                };
            }
            match op {
                "ReduceL2" => t = t.sqrt(),
                "ReduceLogSum" | "ReduceLogSumExp" => t = t.log(),
                _ => {}
            }
            K::F(t)
        }
        K::I(t) => {
            let mut t = t.clone();
            match op {
                "ReduceL1" => t = t.abs(),
                "ReduceSumSquare" => t = t.clone().mul(t),
                "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" => {}
                _ => return Err(run_unsup(format!("{op} on integers"))),
            }
            for &d in &dims {
                t = match op {
                    "ReduceMean" => t.mean_dim(d),
                    "ReduceMax" => t.max_dim(d),
                    "ReduceMin" => t.min_dim(d),
                    "ReduceProd" => t.prod_dim(d),
                    _ => t.sum_dim(d),
                };
            }
            K::I(t)
        }
        K::B(_) => return Err(run_unsup(format!("{op} on bool"))),
    };
    Ok(Val::new(k, kshape, x.dtype).reshape(out_shape))
}

/// ArgMax, ArgMin.
pub(super) fn arg_max_min<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let axis = norm_axis(a.int("axis", 0), x.rank())?;
    let keep = a.int("keepdims", 1) != 0;
    let last = a.int("select_last_index", 0) != 0;
    let d = bax(x.rank(), axis);
    let n = x.shape[axis];
    if n == 0 {
        return Err(run_err(format!("{op} over an empty axis")));
    }
    let mut idx = match &x.k {
        K::F(t) => {
            let t = if last {
                t.clone().flip([d as isize])
            } else {
                t.clone()
            };
            if op == "ArgMax" {
                t.argmax(d)
            } else {
                t.argmin(d)
            }
        }
        K::I(t) => {
            let t = if last {
                t.clone().flip([d as isize])
            } else {
                t.clone()
            };
            if op == "ArgMax" {
                t.argmax(d)
            } else {
                t.argmin(d)
            }
        }
        K::B(_) => return Err(run_unsup(format!("{op} on bool"))),
    };
    if last {
        idx = idx.neg().add_scalar(n as i64 - 1);
    }
    let mut shape = x.shape.clone();
    shape[axis] = 1;
    let v = Val::new(K::I(idx), shape.clone(), DType::I64);
    if keep {
        one(v)
    } else {
        shape.remove(axis);
        one(v.reshape(shape))
    }
}

/// TopK.
pub(super) fn topk<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let k = if cx.opset < 10 {
        a.int("k", 0)
    } else {
        scalar_i(req(ins, 1, op)?)?
    };
    let axis = norm_axis(a.int("axis", -1), x.rank())?;
    let n = x.shape[axis];
    if k < 0 || k as usize > n {
        return Err(run_err(format!("TopK: k = {k} for axis of {n}")));
    }
    let k = k as usize;
    let largest = a.int("largest", 1) != 0;
    let d = bax(x.rank(), axis);
    let mut shape = x.shape.clone();
    shape[axis] = k;
    if k == 0 {
        return Ok(vec![
            Some(full(shape.clone(), 0.0, x.dtype, dev)?),
            Some(full(shape, 0.0, DType::I64, dev)?),
        ]);
    }
    let (vals, idx) = match &x.k {
        K::F(t) => {
            if largest {
                let (v, i) = t.clone().topk_with_indices(k, d);
                (K::F(v), i)
            } else {
                let (v, i) = t.clone().neg().topk_with_indices(k, d);
                (K::F(v.neg()), i)
            }
        }
        K::I(t) => {
            if largest {
                let (v, i) = t.clone().topk_with_indices(k, d);
                (K::I(v), i)
            } else {
                let (v, i) = t.clone().neg().topk_with_indices(k, d);
                (K::I(v.neg()), i)
            }
        }
        K::B(_) => return Err(run_unsup("TopK on bool")),
    };
    Ok(vec![
        Some(Val::new(vals, shape.clone(), x.dtype)),
        Some(Val::new(K::I(idx), shape, DType::I64)),
    ])
}

/// CumSum.
pub(super) fn cumsum<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let axis = norm_axis(scalar_i(req(ins, 1, op)?)?, x.rank())?;
    let d = bax(x.rank(), axis);
    let rev = a.int("reverse", 0) != 0;
    let excl = a.int("exclusive", 0) != 0;
    let k = match &x.k {
        K::F(t) => {
            let t = if rev {
                t.clone().flip([d as isize])
            } else {
                t.clone()
            };
            let c = if excl { exclusive(t, d) } else { t.cumsum(d) };
            K::F(if rev { c.flip([d as isize]) } else { c })
        }
        K::I(t) => {
            let t = if rev {
                t.clone().flip([d as isize])
            } else {
                t.clone()
            };
            let c = if excl { exclusive(t, d) } else { t.cumsum(d) };
            K::I(if rev { c.flip([d as isize]) } else { c })
        }
        K::B(_) => return Err(run_unsup("CumSum on bool")),
    };
    one(Val::new(k, x.shape.clone(), x.dtype))
}

/// Exclusive cumulative sum along burn axis `d`: the inclusive sum shifted by one, a zero
/// first (subtracting the element instead would turn a NaN or Inf element into NaN).
fn exclusive<B: BurnBackend, K>(t: Tensor<B, R, K>, d: usize) -> Tensor<B, R, K>
where
    K: burn::tensor::Numeric<B>,
    K::Elem: burn::tensor::Element,
{
    let n = t.dims()[d];
    if n <= 1 {
        return t.zeros_like();
    }
    let zero = t.clone().narrow(d, 0, 1).zeros_like();
    let inc = t.narrow(d, 0, n - 1).cumsum(d);
    Tensor::cat(vec![zero, inc], d)
}

// The ops of this file, found from their names (see `super::find`).
table! {
    // reductions
    "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1"
    | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => reduce_op,
    "ArgMax" | "ArgMin" => arg_max_min,
    "TopK" => topk,
    "CumSum" => cumsum,
}
