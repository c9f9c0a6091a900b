//! Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
use super::{Cx, Outs, Res, need_float, opt, req};
use crate::burn::tensor::{R, ReshapeExact, Val, bax, pad, reshaped, run_err};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

/// NegativeLogLikelihoodLoss over log-probabilities `x` ([N, C, d...]), shared with
/// SoftmaxCrossEntropyLoss.
fn nll<B: BurnBackend>(
    a: &[mutagraph_ir::attr::Attribute],
    x: Tensor<B, R>,
    xshape: &[usize],
    dtype: DType,
    target: &Val<B>,
    weight: Option<&Val<B>>,
    dev: &B::Device,
) -> Res<Val<B>> {
    let r = xshape.len();
    if r < 2 || target.rank() != r - 1 {
        return Err(run_err("loss: input and target ranks do not fit"));
    }
    let c = xshape[1];
    let mut tshape = vec![xshape[0]];
    tshape.extend_from_slice(&xshape[2..]);
    if target.shape != tshape {
        return Err(run_err("loss: target shape does not fit the input"));
    }
    let ignore = a.int_opt("ignore_index");
    let tv = target.host_i64();
    for &t in &tv {
        if Some(t) != ignore && (t < 0 || t >= c as i64) {
            return Err(run_err(format!("loss: target {t} out of range")));
        }
    }
    let keep: Vec<bool> = tv.iter().map(|&t| Some(t) != ignore).collect();
    let clean: Vec<i64> = tv
        .iter()
        .zip(&keep)
        .map(|(&t, &k)| if k { t } else { 0 })
        .collect();
    let n = clean.len();
    let mut gshape = tshape.clone();
    gshape.insert(1, 1);
    let ti = Tensor::<B, R, burn::tensor::Int>::from_data(
        burn::tensor::TensorData::new(clean.clone(), pad(&gshape)),
        dev,
    );
    let picked = x.gather(bax(r, 1), ti).neg();
    let mask = Tensor::<B, R>::from_data(
        burn::tensor::TensorData::new(
            keep.iter()
                .map(|&k| if k { 1.0f32 } else { 0.0 })
                .collect::<Vec<_>>(),
            pad(&gshape),
        ),
        dev,
    );
    let w = match weight {
        Some(w) => {
            if w.numel() != c {
                return Err(run_err("loss: weight size differs from classes"));
            }
            let w1: Tensor<B, 1> = w.f().reshape_exact([c]);
            let idx = Tensor::<B, 1, burn::tensor::Int>::from_data(
                burn::tensor::TensorData::new(clean, [n]),
                dev,
            );
            reshaped(w1.select(0, idx), &gshape).mul(mask)
        }
        None => mask,
    };
    let loss = picked.mul(w.clone());
    let red = a.string("reduction", "mean");
    Ok(match red.as_str() {
        "none" => Val::float(reshaped(loss, &tshape), tshape, dtype),
        "sum" => Val::float(reshaped(loss.sum(), &[]), vec![], dtype),
        _ => Val::float(
            loss.sum().div(w.sum()).reshape_exact(pad(&[])),
            vec![],
            dtype,
        ),
    })
}

pub(super) fn loss<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let t = need_float(x, op)?;
    let target = req(ins, 1, op)?;
    let weight = opt(ins, 2);
    if op == "NegativeLogLikelihoodLoss" {
        let l = nll(a, t, &x.shape, x.dtype, target, weight, cx.dev)?;
        return Ok(vec![Some(l)]);
    }
    if x.rank() < 2 {
        return Err(run_err("SoftmaxCrossEntropyLoss: rank below 2"));
    }
    let lp = burn::tensor::activation::log_softmax(t, bax(x.rank(), 1));
    let l = nll(a, lp.clone(), &x.shape, x.dtype, target, weight, cx.dev)?;
    let mut out = vec![Some(l)];
    if node.outputs.len() > 1 {
        out.push(Some(Val::float(lp, x.shape.clone(), x.dtype)));
    }
    Ok(out)
}

// The ops of this file, found from their names (see `super::find`).
table! {
    // losses
    "NegativeLogLikelihoodLoss" | "SoftmaxCrossEntropyLoss" => loss,
}
