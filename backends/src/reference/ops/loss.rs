//! The classification losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
use super::softmax::{SoftKind, softmax_groups};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

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

pub(super) fn op_nll_loss(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_sce_loss(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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
