//! Pooling: MaxPool and AveragePool (1-D and 2-D, as burn offers them), GlobalAveragePool and
//! GlobalMaxPool.
use super::window::{arr, lift, list, window_pads};
use super::{Cx, Outs, Res, fval, ints_attr, need_float, one, req};
use crate::burn::tensor::{K, R, ReshapeExact, Val, bax, run_err, run_unsup};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::module::{avg_pool1d, avg_pool2d, max_pool1d, max_pool2d};
use burn::tensor::ops::PadMode;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

pub(super) fn pool<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let r = x.rank();
    let n = r.saturating_sub(2);
    if !(1..=2).contains(&n) {
        return Err(run_unsup(format!("{op} with {n} spatial dims")));
    }
    let kernel = list(node, "kernel_shape", n, 0)?;
    if ints_attr(a, "kernel_shape").is_none() || kernel.contains(&0) {
        return Err(run_err(format!("{op}: kernel_shape missing or zero")));
    }
    let strides = list(node, "strides", n, 1)?;
    let dils = list(node, "dilations", n, 1)?;
    if strides.contains(&0) || dils.contains(&0) {
        return Err(run_err(format!("{op}: zero stride or dilation")));
    }
    let ceil = a.int("ceil_mode", 0) != 0;
    let (pb, pe) = window_pads(node, &x.shape[2..], &kernel, &strides, &dils)?;
    for i in 0..n {
        if pb[i] >= kernel[i] || pe[i] >= kernel[i] {
            return Err(run_unsup(format!("{op}: pad not smaller than the kernel")));
        }
        let eff = (kernel[i] - 1) * dils[i] + 1;
        if x.shape[2 + i] + pb[i] + pe[i] < eff {
            return Err(run_err(format!(
                "{op}: kernel larger than the padded input"
            )));
        }
    }
    let is_int = !matches!(x.k, K::F(_));
    let xt = x.f();
    let symmetric = pb == pe;
    let max = op == "MaxPool";
    let include = a.int("count_include_pad", 0) != 0;
    let pad_with = |t: Tensor<B, R>, v: f32| {
        let mut p = vec![(0usize, 0usize); R];
        for i in 0..n {
            p[bax(r, 2 + i)] = (pb[i], pe[i]);
        }
        t.pad(p, PadMode::Constant(v))
    };
    let run = |t: Tensor<B, R>, shape: &[usize], padding: &[usize], include: bool| -> Val<B> {
        if n == 1 {
            let t3 = t.reshape_exact(arr::<3>(shape));
            let y = if max {
                max_pool1d(t3, kernel[0], strides[0], padding[0], dils[0], ceil)
            } else {
                avg_pool1d(t3, kernel[0], strides[0], padding[0], include, ceil)
            };
            lift(y, x.dtype)
        } else {
            let t4 = t.reshape_exact(arr::<4>(shape));
            let y = if max {
                max_pool2d(
                    t4,
                    arr(&kernel),
                    arr(&strides),
                    arr(padding),
                    arr(&dils),
                    ceil,
                )
            } else {
                avg_pool2d(t4, arr(&kernel), arr(&strides), arr(padding), include, ceil)
            };
            lift(y, x.dtype)
        }
    };
    let mut padded_shape = x.shape.clone();
    for i in 0..n {
        padded_shape[2 + i] += pb[i] + pe[i];
    }
    let zero = vec![0usize; n];
    let y = if symmetric {
        run(xt, &x.shape, &pb, include)
    } else if max {
        run(pad_with(xt, f32::NEG_INFINITY), &padded_shape, &zero, true)
    } else if include {
        run(pad_with(xt, 0.0), &padded_shape, &zero, true)
    } else {
        let num = run(pad_with(xt.clone(), 0.0), &padded_shape, &zero, true);
        let ones = xt.ones_like();
        let den = run(pad_with(ones, 0.0), &padded_shape, &zero, true);
        Val::float(num.f().div(den.f()), num.shape.clone(), x.dtype)
    };
    let _ = cx;
    let y = if is_int {
        Val::new(K::I(y.f().int()), y.shape.clone(), x.dtype)
    } else {
        y
    };
    Ok(vec![Some(y)])
}

/// GlobalAveragePool, GlobalMaxPool.
pub(super) fn global_pool<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    let t = need_float(x, op)?;
    if x.rank() < 3 {
        return Err(run_err(format!("{op}: input rank {} below 3", x.rank())));
    }
    let mut y = t;
    let mut shape = x.shape.clone();
    for (ax, s) in shape.iter_mut().enumerate().skip(2) {
        let d = bax(x.rank(), ax);
        y = if op == "GlobalAveragePool" {
            y.mean_dim(d)
        } else {
            y.max_dim(d)
        };
        *s = 1;
    }
    one(fval(y, x, shape))
}

// The ops of this file, found from their names (see `super::find`).
table! {
    "MaxPool" | "AveragePool" => pool,
    "GlobalAveragePool" | "GlobalMaxPool" => global_pool,
}
