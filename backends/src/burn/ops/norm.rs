//! Normalizations: BatchNormalization (inference), InstanceNormalization, LayerNormalization,
//! LpNormalization, MeanVarianceNormalization.
use super::{Cx, Outs, Res, bshape, ints_attr, need_float, norm_axis, opt, req};
use crate::burn::tensor::{R, Val, bax, reshaped, run_err};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

pub(super) fn norm<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let t = need_float(x, op)?;
    let r = x.rank();
    // a per-channel parameter [C] as a tensor broadcasting over [N, C, ...]
    let chan = |v: &Val<B>| -> Res<Tensor<B, R>> {
        if r < 2 || v.numel() != x.shape[1] {
            return Err(run_err(format!(
                "{op}: parameter does not match the channels"
            )));
        }
        let mut s = vec![1usize; r];
        s[1] = x.shape[1];
        Ok(reshaped(v.f(), &s))
    };
    match op {
        "BatchNormalization" => {
            let eps = a.float("epsilon", 1e-5) as f64;
            let scale = chan(req(ins, 1, op)?)?;
            let bias = chan(req(ins, 2, op)?)?;
            let mean = chan(req(ins, 3, op)?)?;
            let var = chan(req(ins, 4, op)?)?;
            let y = t
                .sub(mean)
                .div(var.add_scalar(eps).sqrt())
                .mul(scale)
                .add(bias);
            Ok(vec![Some(Val::float(y, x.shape.clone(), x.dtype))])
        }
        "InstanceNormalization" => {
            let eps = a.float("epsilon", 1e-5) as f64;
            let scale = chan(req(ins, 1, op)?)?;
            let bias = chan(req(ins, 2, op)?)?;
            if r < 3 {
                return Err(run_err("InstanceNormalization: rank below 3"));
            }
            let axes: Vec<usize> = (2..r).map(|i| bax(r, i)).collect();
            let y = standardize(t, &axes, eps).mul(scale).add(bias);
            Ok(vec![Some(Val::float(y, x.shape.clone(), x.dtype))])
        }
        "MeanVarianceNormalization" => {
            let axes = ints_attr(a, "axes").unwrap_or_else(|| vec![0, 2, 3]);
            let mut dims = Vec::new();
            for ax in axes {
                dims.push(bax(r, norm_axis(ax, r)?));
            }
            // ONNX's function body adds its epsilon to the standard deviation, not to the
            // variance: (X - mean) / (sqrt(var) + 1e-9).
            let mut mean = t.clone();
            for &d in &dims {
                mean = mean.mean_dim(d);
            }
            let c = t.sub(mean);
            let mut var = c.clone().mul(c.clone());
            for &d in &dims {
                var = var.mean_dim(d);
            }
            let y = c.div(var.sqrt().add_scalar(1e-9));
            Ok(vec![Some(Val::float(y, x.shape.clone(), x.dtype))])
        }
        "LpNormalization" => {
            let axis = norm_axis(a.int("axis", -1), r)?;
            let d = bax(r, axis);
            let p = a.int("p", 2);
            let nrm = if p == 1 {
                t.clone().abs().sum_dim(d)
            } else {
                t.clone().mul(t.clone()).sum_dim(d).sqrt()
            };
            // A zero norm (all-zero slice) divides by one instead: the slice stays zero, as
            // the reference and ONNX Runtime give.
            let nrm = nrm.clone().add(nrm.equal_elem(0.0).float());
            let y = t.div(nrm);
            Ok(vec![Some(Val::float(y, x.shape.clone(), x.dtype))])
        }
        _ => {
            // LayerNormalization
            let axis = norm_axis(a.int("axis", -1), r)?;
            let eps = a.float("epsilon", 1e-5) as f64;
            let dims: Vec<usize> = (axis..r).map(|i| bax(r, i)).collect();
            let mut mean = t.clone();
            for &d in &dims {
                mean = mean.mean_dim(d);
            }
            let c = t.sub(mean.clone());
            let mut var = c.clone().mul(c.clone());
            for &d in &dims {
                var = var.mean_dim(d);
            }
            let inv = var.add_scalar(eps).sqrt().recip();
            let mut y = c.mul(inv.clone());
            let tail = &x.shape[axis..];
            let param = |v: &Val<B>| -> Res<Tensor<B, R>> {
                let s = bshape(tail, &v.shape)?;
                if s != tail {
                    return Err(run_err("LayerNormalization: parameter does not broadcast"));
                }
                Ok(v.f())
            };
            y = y.mul(param(req(ins, 1, op)?)?);
            if let Some(b) = opt(ins, 2) {
                y = y.add(param(b)?);
            }
            let mut stat_shape = x.shape[..axis].to_vec();
            stat_shape.extend(std::iter::repeat_n(1, r - axis));
            let mut out = vec![Some(Val::float(y, x.shape.clone(), x.dtype))];
            if node.outputs.len() > 1 {
                out.push(Some(Val::float(mean, stat_shape.clone(), x.dtype)));
            }
            if node.outputs.len() > 2 {
                out.push(Some(Val::float(inv, stat_shape, x.dtype)));
            }
            Ok(out)
        }
    }
}

fn standardize<B: BurnBackend>(t: Tensor<B, R>, dims: &[usize], eps: f64) -> Tensor<B, R> {
    let mut mean = t.clone();
    for &d in dims {
        mean = mean.mean_dim(d);
    }
    let c = t.sub(mean);
    let mut var = c.clone().mul(c.clone());
    for &d in dims {
        var = var.mean_dim(d);
    }
    c.div(var.add_scalar(eps).sqrt())
}

// The ops of this file, found from their names (see `super::find`).
table! {
    "BatchNormalization"
    | "InstanceNormalization"
    | "LayerNormalization"
    | "LpNormalization"
    | "MeanVarianceNormalization" => norm,
}
