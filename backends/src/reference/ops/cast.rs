//! Cast and CastLike.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

fn parse_float(s: &[u8]) -> f64 {
    let s = String::from_utf8_lossy(s);
    let t = s.trim();
    match t.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        "nan" | "+nan" | "-nan" => f64::NAN,
        _ => t.parse::<f64>().unwrap_or(f64::NAN),
    }
}

/// Converts `t` to element type `to`.
pub fn cast(t: &T, to: DType) -> R<T> {
    let tk = kind(to)?;
    let shape = t.shape.clone();
    Ok(match (&t.buf, tk) {
        (Buf::F(v), _) => match tk {
            Kind::Str => return Err(unsup("Cast from floats to strings")),
            _ => T::from_f64s(to, shape, v.clone())?,
        },
        (Buf::I(v), Kind::Float) => T::f(
            to,
            shape,
            v.iter().map(|&x| round_dt(to, i2f(t.dt, x))).collect(),
        ),
        (Buf::I(v), Kind::Int) => T::i(to, shape, v.iter().map(|&x| wrap_dt(to, x)).collect()),
        (Buf::I(v), Kind::Bool) => T::b(shape, v.iter().map(|&x| x != 0).collect()),
        (Buf::I(v), Kind::Str) => T {
            dt: DType::String,
            shape,
            buf: Buf::S(
                v.iter()
                    .map(|&x| {
                        if t.dt == DType::U64 {
                            (x as u64).to_string().into_bytes()
                        } else {
                            x.to_string().into_bytes()
                        }
                    })
                    .collect(),
            ),
        },
        (Buf::B(v), Kind::Str) => T {
            dt: DType::String,
            shape,
            buf: Buf::S(
                v.iter()
                    .map(|&x| {
                        if x {
                            b"True".to_vec()
                        } else {
                            b"False".to_vec()
                        }
                    })
                    .collect(),
            ),
        },
        (Buf::B(v), _) => T::from_i64s(to, shape, v.iter().map(|&x| x as i64).collect())?,
        (Buf::S(v), Kind::Str) => t.with(shape, Buf::S(v.clone())),
        (Buf::S(v), Kind::Int) => {
            let mut out = Vec::with_capacity(v.len());
            for s in v {
                let st = String::from_utf8_lossy(s);
                let x = match st.trim().parse::<i64>() {
                    Ok(x) => x,
                    Err(_) => parse_float(s) as i64,
                };
                out.push(wrap_dt(to, x));
            }
            T::i(to, shape, out)
        }
        (Buf::S(v), Kind::Float) => T::f(
            to,
            shape,
            v.iter().map(|s| round_dt(to, parse_float(s))).collect(),
        ),
        (Buf::S(_), Kind::Bool) => return Err(unsup("Cast from strings to bool")),
    })
}

pub(super) fn op_cast(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let to = DType::from_code(n.int("to", 0) as i32);
    one(cast(inp(ins, 0)?, to)?)
}

pub(super) fn op_cast_like(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(cast(inp(ins, 0)?, inp(ins, 1)?.dt)?)
}
