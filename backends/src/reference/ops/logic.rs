//! Comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual), And, Or, Xor, the bitwise
//! ops (BitwiseAnd, BitwiseOr, BitwiseXor, BitShift, BitwiseNot) and Where.
use super::binary::{arith, bcast2};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

fn compare(a: &T, b: &T, f: impl Fn(std::cmp::Ordering) -> bool, eq_only: bool) -> R<T> {
    use std::cmp::Ordering;
    let (shape, ia, ib) = bcast2(a, b)?;
    let u = a.dt == DType::U64;
    let cmp_f = |x: f64, y: f64| x.partial_cmp(&y);
    let out: Vec<bool> = match (&a.buf, &b.buf) {
        (Buf::F(x), Buf::F(y)) => ia
            .iter()
            .zip(&ib)
            .map(|(&i, &j)| cmp_f(x[i], y[j]).is_some_and(&f))
            .collect(),
        (Buf::I(x), Buf::I(y)) => ia
            .iter()
            .zip(&ib)
            .map(|(&i, &j)| {
                f(if u {
                    (x[i] as u64).cmp(&(y[j] as u64))
                } else {
                    x[i].cmp(&y[j])
                })
            })
            .collect(),
        (Buf::B(x), Buf::B(y)) => ia
            .iter()
            .zip(&ib)
            .map(|(&i, &j)| f(x[i].cmp(&y[j])))
            .collect(),
        (Buf::S(x), Buf::S(y)) if eq_only => ia
            .iter()
            .zip(&ib)
            .map(|(&i, &j)| {
                f(if x[i] == y[j] {
                    Ordering::Equal
                } else {
                    Ordering::Less
                })
            })
            .collect(),
        _ => return Err(err(format!("comparison of {} and {}", a.dt, b.dt))),
    };
    Ok(T::b(shape, out))
}

pub(super) fn op_equal(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(compare(inp(ins, 0)?, inp(ins, 1)?, |o| o.is_eq(), true)?)
}

pub(super) fn op_less(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(compare(inp(ins, 0)?, inp(ins, 1)?, |o| o.is_lt(), false)?)
}

pub(super) fn op_less_eq(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(compare(inp(ins, 0)?, inp(ins, 1)?, |o| o.is_le(), false)?)
}

pub(super) fn op_greater(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(compare(inp(ins, 0)?, inp(ins, 1)?, |o| o.is_gt(), false)?)
}

pub(super) fn op_greater_eq(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(compare(inp(ins, 0)?, inp(ins, 1)?, |o| o.is_ge(), false)?)
}

fn logic(ins: &[Option<&V>], f: impl Fn(bool, bool) -> bool) -> Out {
    let a = inp(ins, 0)?;
    let b = inp(ins, 1)?;
    let (shape, ia, ib) = bcast2(a, b)?;
    let (x, y) = (a.bs()?, b.bs()?);
    one(T::b(
        shape,
        ia.iter().zip(&ib).map(|(&i, &j)| f(x[i], y[j])).collect(),
    ))
}

pub(super) fn op_and(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    logic(ins, |x, y| x && y)
}

pub(super) fn op_or(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    logic(ins, |x, y| x || y)
}

pub(super) fn op_xor(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    logic(ins, |x, y| x != y)
}

fn bitwise(ins: &[Option<&V>], f: impl Fn(i64, i64) -> i64) -> Out {
    let a = inp(ins, 0)?;
    let b = inp(ins, 1)?;
    if a.dt != b.dt {
        return Err(err(format!("operands of types {} and {}", a.dt, b.dt)));
    }
    a.is()?;
    one(arith(a, b, |_, _| 0.0, |x, y| Ok(f(x, y)))?)
}

pub(super) fn op_bitwise_and(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    bitwise(ins, |x, y| x & y)
}

pub(super) fn op_bitwise_or(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    bitwise(ins, |x, y| x | y)
}

pub(super) fn op_bitwise_xor(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    bitwise(ins, |x, y| x ^ y)
}

pub(super) fn op_bitshift(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let left = match n.string("direction", "").as_str() {
        "LEFT" => true,
        "RIGHT" => false,
        d => return Err(err(format!("BitShift direction '{d}'"))),
    };
    let a = inp(ins, 0)?;
    let bits = a.dt.bits().unwrap_or(64) as u64;
    bitwise(ins, |x, y| {
        let y = y as u64;
        if y >= bits {
            0
        } else if left {
            ((x as u64) << y) as i64
        } else {
            ((x as u64) >> y) as i64
        }
    })
}

pub(super) fn op_bitwise_not(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    one(T::i(
        t.dt,
        t.shape.clone(),
        t.is()?.iter().map(|&x| wrap_dt(t.dt, !x)).collect(),
    ))
}

pub(super) fn op_where(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let c = inp(ins, 0)?;
    let x = inp(ins, 1)?;
    let y = inp(ins, 2)?;
    let shape = bcast_shapes(&[&c.shape, &x.shape, &y.shape])?;
    check_size(&shape)?;
    let ic = bcast_index(&c.shape, &shape);
    let ix = bcast_index(&x.shape, &shape);
    let iy = bcast_index(&y.shape, &shape);
    let cv = c.bs()?;
    let mut buf = x.buf.zeros_like(ic.len());
    for k in 0..ic.len() {
        if cv[ic[k]] {
            buf.set_from(k, &x.buf, ix[k])?;
        } else {
            buf.set_from(k, &y.buf, iy[k])?;
        }
    }
    one(x.with(shape, buf))
}
