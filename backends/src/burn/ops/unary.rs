//! Element-wise unary ops: Abs, Neg, Sign, Relu, the float math functions (Sqrt, Exp, Log, the
//! trigonometric and hyperbolic functions, Erf, Reciprocal, Floor, Ceil, Round, Sigmoid,
//! Softsign, Mish, HardSwish, Softplus), the parameterized activations (LeakyRelu, Elu, Celu,
//! ThresholdedRelu, Selu, HardSigmoid, Gelu, Shrink, Swish), PRelu, Not, IsNaN, IsInf, Clip, and
//! Dropout (inference only: the identity).
use super::{Cx, Outs, Res, bshape, fval, need_float, one, opt, req, scalar_f};
use crate::burn::tensor::{K, Val, mk_b, run_err, run_unsup};
use burn::tensor::activation as act;
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

/// Abs, Neg, Sign.
pub(super) fn abs_neg_sign<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    let k = match &x.k {
        K::F(t) => K::F(match op {
            "Abs" => t.clone().abs(),
            "Neg" => t.clone().neg(),
            _ => t.clone().sign(),
        }),
        K::I(t) => K::I(match op {
            "Abs" => t.clone().abs(),
            "Neg" => t.clone().neg(),
            _ => t.clone().sign(),
        }),
        K::B(_) => return Err(run_unsup(format!("{op} on bool"))),
    };
    one(Val::new(k, x.shape.clone(), x.dtype))
}

/// Relu.
pub(super) fn relu<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    let k = match &x.k {
        K::F(t) => K::F(act::relu(t.clone())),
        K::I(t) => K::I(t.clone().clamp_min(0)),
        K::B(_) => return Err(run_unsup("Relu on bool")),
    };
    one(Val::new(k, x.shape.clone(), x.dtype))
}

/// The float functions of one input: Sqrt, Exp, Log, Sin, ..., Softplus.
pub(super) fn float_math<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    let t = need_float(x, op)?;
    let y = match op {
        "Sqrt" => t.sqrt(),
        "Exp" => t.exp(),
        "Log" => t.log(),
        "Sin" => t.sin(),
        "Cos" => t.cos(),
        "Tan" => t.tan(),
        "Asin" => t.asin(),
        "Acos" => t.acos(),
        "Atan" => t.atan(),
        "Sinh" => t.sinh(),
        "Cosh" => t.cosh(),
        "Asinh" => t.asinh(),
        "Acosh" => t.acosh(),
        "Atanh" => t.atanh(),
        "Tanh" => act::tanh(t),
        "Erf" => t.erf(),
        "Reciprocal" => t.recip(),
        "Floor" => t.floor(),
        "Ceil" => t.ceil(),
        "Round" => t.round(),
        "Sigmoid" => act::sigmoid(t),
        "Softsign" => act::softsign(t),
        "Mish" => act::mish(t),
        "HardSwish" => act::hard_swish(t),
        _ => act::softplus(t, 1.0),
    };
    one(fval(y, x, x.shape.clone()))
}

/// LeakyRelu, Elu, Celu, ThresholdedRelu, Selu, HardSigmoid, Gelu, Shrink.
pub(super) fn activation<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let t = need_float(x, op)?;
    let y = match op {
        "LeakyRelu" => act::leaky_relu(t, a.float("alpha", 0.01) as f64),
        "Elu" => act::elu(t, a.float("alpha", 1.0) as f64),
        "Celu" => act::celu(t, a.float("alpha", 1.0) as f64),
        "ThresholdedRelu" => act::thresholded_relu(t, a.float("alpha", 1.0) as f64),
        "HardSigmoid" => {
            act::hard_sigmoid(t, a.float("alpha", 0.2) as f64, a.float("beta", 0.5) as f64)
        }
        "Shrink" => act::shrink(t, a.float("lambd", 0.5) as f64, a.float("bias", 0.0) as f64),
        "Swish" => {
            let alpha = a.float("alpha", 1.0) as f64;
            act::sigmoid(t.clone().mul_scalar(alpha)).mul(t)
        }
        "Gelu" => {
            if a.string("approximate", "none") == "tanh" {
                act::gelu_approximate(t)
            } else {
                act::gelu(t)
            }
        }
        _ => {
            let alpha = a.float("alpha", 1.673_263_2) as f64;
            let gamma = a.float("gamma", 1.050_701) as f64;
            if a.attr("alpha").is_none() && a.attr("gamma").is_none() {
                act::selu(t)
            } else {
                let pos = t.clone().greater_elem(0.0);
                let neg = t.clone().exp().sub_scalar(1.0).mul_scalar(alpha);
                neg.mask_where(pos, t).mul_scalar(gamma)
            }
        }
    };
    one(fval(y, x, x.shape.clone()))
}

/// PRelu.
pub(super) fn prelu<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    let s = req(ins, 1, op)?;
    let t = need_float(x, op)?;
    // Before opset 7 a 1-D slope of C values applies per channel (axis 1).
    let legacy = cx.opset < 7
        && s.rank() == 1
        && x.rank() > 2
        && s.shape[0] == x.shape[1]
        && s.shape[0] != 1;
    let shape = if legacy {
        x.shape.clone()
    } else {
        bshape(&x.shape, &s.shape)?
    };
    if shape != x.shape {
        return Err(run_err("PRelu: slope does not broadcast to X"));
    }
    // burn's `prelu` activation takes channels on its dim 1, which is not ONNX's
    // channel axis once tensors are padded to rank 6: use a masked multiply with the
    // slope broadcast in ONNX terms instead.
    let slope = if legacy {
        let mut sh = vec![s.shape[0]];
        sh.extend(vec![1; x.rank() - 2]);
        s.clone().reshape(sh)
    } else {
        s.clone()
    };
    let y = {
        let neg = t.clone().lower_elem(0.0);
        t.clone().mask_where(neg, t.mul(slope.f()))
    };
    one(fval(y, x, shape))
}

/// Not.
pub(super) fn not<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    one(Val::new(
        K::B(x.b().bool_not()),
        x.shape.clone(),
        DType::Bool,
    ))
}

/// IsNaN.
pub(super) fn is_nan<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    one(Val::new(
        K::B(need_float(x, op)?.is_nan()),
        x.shape.clone(),
        DType::Bool,
    ))
}

/// IsInf.
pub(super) fn is_inf<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let t = need_float(x, op)?;
    let pos = a.int("detect_positive", 1) != 0;
    let neg = a.int("detect_negative", 1) != 0;
    let y = match (pos, neg) {
        (true, true) => t.is_inf(),
        (true, false) => t.equal_elem(f64::INFINITY),
        (false, true) => t.equal_elem(f64::NEG_INFINITY),
        (false, false) => t.clone().is_nan().bool_and(t.is_nan().bool_not()),
    };
    one(Val::new(K::B(y), x.shape.clone(), DType::Bool))
}

/// Clip.
pub(super) fn clip<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let (lo, hi) = if cx.opset < 11 {
        (
            a.attr("min").map(|_| a.float("min", 0.0) as f64),
            a.attr("max").map(|_| a.float("max", 0.0) as f64),
        )
    } else {
        (
            opt(ins, 1).map(scalar_f).transpose()?,
            opt(ins, 2).map(scalar_f).transpose()?,
        )
    };
    let k = match &x.k {
        K::F(t) => {
            let mut t = t.clone();
            if let Some(l) = lo {
                t = t.clamp_min(l);
            }
            if let Some(h) = hi {
                t = t.clamp_max(h);
            }
            K::F(t)
        }
        K::I(t) => {
            let mut t = t.clone();
            if let Some(l) = lo {
                t = t.clamp_min(l as i64);
            }
            if let Some(h) = hi {
                t = t.clamp_max(h as i64);
            }
            K::I(t)
        }
        K::B(_) => return Err(run_unsup("Clip on bool")),
    };
    one(Val::new(k, x.shape.clone(), x.dtype))
}

/// Dropout (inference mode: the identity, and a mask of ones).
pub(super) fn dropout<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let training = opt(ins, 2)
        .map(|v| v.host_i64())
        .is_some_and(|v| v.first() == Some(&1));
    if training {
        return Err(run_unsup("Dropout in training mode"));
    }
    let mut out = vec![Some(x.clone())];
    if node.outputs.len() > 1 {
        out.push(Some(mk_b(vec![true; x.numel()], x.shape.clone(), dev)));
    }
    Ok(out)
}

// The ops of this file, found from their names (see `super::find`).
table! {
    // element-wise, one input
    "Abs" | "Neg" | "Sign" => abs_neg_sign,
    "Relu" => relu,
    "Sqrt" | "Exp" | "Log" | "Sin" | "Cos" | "Tan" | "Asin" | "Acos" | "Atan" | "Sinh"
    | "Cosh" | "Asinh" | "Acosh" | "Atanh" | "Tanh" | "Erf" | "Reciprocal" | "Floor"
    | "Ceil" | "Round" | "Sigmoid" | "Softsign" | "Mish" | "HardSwish"
    | "Softplus" => float_math,
    "LeakyRelu" | "Elu" | "Celu" | "ThresholdedRelu" | "Selu" | "HardSigmoid" | "Gelu"
    | "Shrink" | "Swish" => activation,
    "PRelu" => prelu,
    "Not" => not,
    "IsNaN" => is_nan,
    "IsInf" => is_inf,
    "Clip" => clip,
    "Dropout" => dropout,
}
