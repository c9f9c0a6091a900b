//! Element-wise ops of two or more inputs, broadcast: Add, Sub, Mul, Div, Pow, Mod, the
//! comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual), And, Or, Xor, the bitwise
//! ops (BitwiseAnd, BitwiseOr, BitwiseXor, BitShift, BitwiseNot), Max, Min, Sum, Mean, Where.
use super::{Cx, Outs, Res, bshape, fval, one, req};
use crate::burn::tensor::{Class, K, Val, each, pad, run_err, run_unsup};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

macro_rules! cmp {
    ($op:expr, $p:expr, $q:expr) => {
        match $op {
            "Equal" => $p.equal($q),
            "Less" => $p.lower($q),
            "LessOrEqual" => $p.lower_equal($q),
            "Greater" => $p.greater($q),
            _ => $p.greater_equal($q),
        }
    };
}

fn expand_to<B: BurnBackend>(v: &Val<B>, shape: &[usize]) -> K<B> {
    if v.shape == shape {
        return v.k.clone();
    }
    let p = pad(shape);
    if shape.contains(&0) {
        // burn's expand refuses a zero size: the empty result is made at the target's shape
        // (a slice of the input would keep its ones where the target has other sizes).
        return each!(v.k.clone(), |t| Tensor::empty(p, &t.device()));
    }
    each!(v.k.clone(), |t| t.expand(p))
}

/// Add, Sub, Mul, Div.
pub(super) fn arith_op<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    let y = req(ins, 1, op)?;
    one(arith(op, x, y)?)
}

fn arith<B: BurnBackend>(op: &str, x: &Val<B>, y: &Val<B>) -> Res<Val<B>> {
    let shape = bshape(&x.shape, &y.shape)?;
    macro_rules! bin {
        ($p:expr, $q:expr) => {
            match op {
                "Add" => $p.add($q),
                "Sub" => $p.sub($q),
                "Mul" => $p.mul($q),
                _ => $p.div($q),
            }
        };
    }
    let k = match (&x.k, &y.k) {
        (K::F(p), K::F(q)) => K::F(bin!(p.clone(), q.clone())),
        (K::I(p), K::I(q)) => {
            if op == "Div" && y.host_i64().contains(&0) {
                return Err(run_err("integer division by zero"));
            }
            K::I(bin!(p.clone(), q.clone()))
        }
        _ => return Err(run_unsup(format!("{op} on {} and {}", x.dtype, y.dtype))),
    };
    Ok(Val::new(k, shape, x.dtype))
}

/// Pow.
pub(super) fn pow<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    let y = req(ins, 1, op)?;
    let shape = bshape(&x.shape, &y.shape)?;
    let p = x.f().powf(y.f());
    one(match x.class() {
        Class::Float => fval(p, x, shape),
        _ => Val::new(K::I(p.round().int()), shape, x.dtype),
    })
}

/// Mod.
pub(super) fn modulo<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let y = req(ins, 1, op)?;
    let shape = bshape(&x.shape, &y.shape)?;
    let fmod = a.int("fmod", 0) != 0;
    let k = match (&x.k, &y.k) {
        (K::F(p), K::F(q)) => {
            if fmod {
                K::F(p.clone().fmod(q.clone()))
            } else {
                K::F(p.clone().remainder(q.clone()))
            }
        }
        (K::I(p), K::I(q)) => {
            if fmod {
                let quot = p.clone().div(q.clone());
                K::I(p.clone().sub(quot.mul(q.clone())))
            } else {
                K::I(p.clone().remainder(q.clone()))
            }
        }
        _ => return Err(run_unsup("Mod on mixed or bool inputs")),
    };
    one(Val::new(k, shape, x.dtype))
}

/// Equal, Less, LessOrEqual, Greater, GreaterOrEqual.
pub(super) fn compare<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    let y = req(ins, 1, op)?;
    let shape = bshape(&x.shape, &y.shape)?;
    let t = match (&x.k, &y.k) {
        (K::F(p), K::F(q)) => cmp!(op, p.clone(), q.clone()),
        (K::I(p), K::I(q)) => cmp!(op, p.clone(), q.clone()),
        (K::B(p), K::B(q)) if op == "Equal" => p.clone().equal(q.clone()),
        _ => return Err(run_unsup(format!("{op} on these types"))),
    };
    one(Val::new(K::B(t), shape, DType::Bool))
}

/// And, Or, Xor.
pub(super) fn logic<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    let y = req(ins, 1, op)?;
    let shape = bshape(&x.shape, &y.shape)?;
    let (p, q) = (x.b(), y.b());
    let t = match op {
        "And" => p.bool_and(q),
        "Or" => p.bool_or(q),
        _ => p.bool_xor(q),
    };
    one(Val::new(K::B(t), shape, DType::Bool))
}

/// BitwiseAnd, BitwiseOr, BitwiseXor, BitShift.
pub(super) fn bitwise<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let y = req(ins, 1, op)?;
    let shape = bshape(&x.shape, &y.shape)?;
    let (p, q) = match (&x.k, &y.k) {
        (K::I(p), K::I(q)) => (p.clone(), q.clone()),
        _ => return Err(run_unsup(format!("{op} on non-integers"))),
    };
    let t = match op {
        "BitwiseAnd" => p.bitwise_and(q),
        "BitwiseOr" => p.bitwise_or(q),
        "BitwiseXor" => p.bitwise_xor(q),
        _ => {
            if a.string("direction", "") == "LEFT" {
                p.bitwise_left_shift(q)
            } else {
                p.bitwise_right_shift(q)
            }
        }
    };
    one(Val::new(K::I(t), shape, x.dtype))
}

/// BitwiseNot.
pub(super) fn bitwise_not<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    match &x.k {
        K::I(t) => one(Val::new(
            K::I(t.clone().bitwise_not()),
            x.shape.clone(),
            x.dtype,
        )),
        _ => Err(run_unsup("BitwiseNot on non-integers")),
    }
}

/// Max, Min, Sum, Mean (any number of inputs).
pub(super) fn variadic<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let first = req(ins, 0, op)?;
    let mut acc = first.clone();
    for v in ins.iter().skip(1) {
        let v = v
            .as_ref()
            .ok_or_else(|| run_err(format!("{op}: missing input")))?;
        let shape = bshape(&acc.shape, &v.shape)?;
        let k = match (&acc.k, &v.k) {
            (K::F(p), K::F(q)) => K::F(match op {
                "Max" => p.clone().max_pair(q.clone()),
                "Min" => p.clone().min_pair(q.clone()),
                _ => p.clone().add(q.clone()),
            }),
            (K::I(p), K::I(q)) => K::I(match op {
                "Max" => p.clone().max_pair(q.clone()),
                "Min" => p.clone().min_pair(q.clone()),
                _ => p.clone().add(q.clone()),
            }),
            _ => return Err(run_unsup(format!("{op} on these types"))),
        };
        acc = Val::new(k, shape, acc.dtype);
    }
    if op == "Mean" && ins.len() > 1 {
        let n = ins.len() as f64;
        acc.k = match acc.k {
            K::F(t) => K::F(t.div_scalar(n)),
            K::I(t) => K::I(t.div_scalar(n as i64)),
            k => k,
        };
    }
    if acc.shape != first.shape || ins.len() == 1 {
        // make sure the result is a tensor of its own shape (burn broadcasts lazily)
        let s = acc.shape.clone();
        acc.k = expand_to(&acc, &s);
    }
    one(acc)
}

/// Where.
pub(super) fn where_op<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let c = req(ins, 0, op)?;
    let x = req(ins, 1, op)?;
    let y = req(ins, 2, op)?;
    let shape = bshape(&bshape(&c.shape, &x.shape)?, &y.shape)?;
    let cb = match expand_to(c, &shape) {
        K::B(t) => t,
        _ => return Err(run_err("Where: condition is not bool")),
    };
    let k = match (expand_to(x, &shape), expand_to(y, &shape)) {
        (K::F(p), K::F(q)) => K::F(q.mask_where(cb, p)),
        (K::I(p), K::I(q)) => K::I(q.mask_where(cb, p)),
        (K::B(p), K::B(q)) => K::B(q.mask_where(cb, p)),
        _ => return Err(run_err("Where: X and Y differ in type")),
    };
    one(Val::new(k, shape, x.dtype))
}

// The ops of this file, found from their names (see `super::find`).
table! {
    // element-wise, two or more inputs
    "Add" | "Sub" | "Mul" | "Div" => arith_op,
    "Pow" => pow,
    "Mod" => modulo,
    "Equal" | "Less" | "LessOrEqual" | "Greater" | "GreaterOrEqual" => compare,
    "And" | "Or" | "Xor" => logic,
    "BitwiseAnd" | "BitwiseOr" | "BitwiseXor" | "BitShift" => bitwise,
    "BitwiseNot" => bitwise_not,
    "Max" | "Min" | "Sum" | "Mean" => variadic,
    "Where" => where_op,
}
