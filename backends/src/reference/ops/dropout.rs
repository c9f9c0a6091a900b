//! Dropout (inference).
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

pub(super) fn op_dropout(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let training = if cx.opset >= 12 {
        match opt(ins, 2)? {
            Some(t) => t.scalar_i()? != 0,
            None => false,
        }
    } else {
        cx.opset < 7 && n.int("is_test", 0) == 0
    };
    let ratio = if cx.opset >= 12 {
        match opt(ins, 1)? {
            Some(t) => t.scalar_f()?,
            None => 0.5,
        }
    } else {
        n.float("ratio", 0.5) as f64
    };
    if training && ratio != 0.0 {
        return Err(unsup("Dropout in training mode (random)"));
    }
    let mask = if cx.opset >= 10 {
        T::b(x.shape.clone(), vec![true; x.len()])
    } else {
        T::from_f64s(x.dt, x.shape.clone(), vec![1.0; x.len()])?
    };
    Ok(vec![V::T(x.clone()), V::T(mask)])
}
