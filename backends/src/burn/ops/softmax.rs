//! Softmax, LogSoftmax and Hardmax (before opset 13 over the input coerced to 2-D at `axis`).
use super::{Cx, Outs, Res, fval, need_float, norm_axis, one, req};
use crate::burn::tensor::Val;
use crate::burn::tensor::{R, bax, reshaped};
use burn::tensor::activation as act;
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::{Int, Tensor};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

/// Softmax, LogSoftmax, Hardmax.
pub(super) fn softmax<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let t = need_float(x, op)?;
    let r = x.rank();
    let legacy = cx.opset < 13;
    let axis = norm_axis(a.int("axis", if legacy { 1 } else { -1 }), r)?;
    let (t, dim, back) = if legacy {
        let outer: usize = x.shape[..axis].iter().product();
        let inner: usize = x.shape[axis..].iter().product();
        (reshaped(t, &[outer, inner]), R - 1, true)
    } else {
        (t, bax(r, axis), false)
    };
    let y = match op {
        "Softmax" => act::softmax(t, dim),
        "LogSoftmax" => act::log_softmax(t, dim),
        // an empty input has an empty output (argmax has nothing to pick from)
        _ if x.numel() == 0 => t.zeros_like(),
        _ => {
            let n = t.dims()[dim];
            let idx = t.clone().argmax(dim);
            let mut s = [1usize; R];
            s[dim] = n;
            let iota = Tensor::<B, 1, Int>::arange(0..n as i64, dev).reshape(s);
            let dims = t.dims();
            iota.expand(dims).equal(idx.expand(dims)).float()
        }
    };
    let y = if back { reshaped(y, &x.shape) } else { y };
    one(fval(y, x, x.shape.clone()))
}

// The ops of this file, found from their names (see `super::find`).
table! {
    // softmax family
    "Softmax" | "LogSoftmax" | "Hardmax" => softmax,
}
