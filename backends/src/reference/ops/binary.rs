//! Element-wise arithmetic of two or more inputs, broadcast: Add, Sub, Mul, Div, Mod, Pow,
//! PRelu, Max, Min, Sum, Mean.
use super::unary::map_f;
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

/// Broadcasts `a` and `b` and returns (shape, index into a, index into b).
pub fn bcast2(a: &T, b: &T) -> R<(Vec<usize>, Vec<usize>, Vec<usize>)> {
    let out = bcast_shapes(&[&a.shape, &b.shape])?;
    check_size(&out)?;
    let ia = bcast_index(&a.shape, &out);
    let ib = bcast_index(&b.shape, &out);
    Ok((out, ia, ib))
}

/// Numeric binary op of two tensors of the same kind; the result keeps `a`'s type.
pub(super) fn arith(
    a: &T,
    b: &T,
    ff: impl Fn(f64, f64) -> f64,
    fi: impl Fn(i64, i64) -> R<i64>,
) -> R<T> {
    let (shape, ia, ib) = bcast2(a, b)?;
    match (&a.buf, &b.buf) {
        (Buf::F(x), Buf::F(y)) => Ok(T::f(
            a.dt,
            shape,
            ia.iter().zip(&ib).map(|(&i, &j)| ff(x[i], y[j])).collect(),
        )),
        (Buf::I(x), Buf::I(y)) => {
            let mut out = Vec::with_capacity(ia.len());
            for (&i, &j) in ia.iter().zip(&ib) {
                out.push(wrap_dt(a.dt, fi(x[i], y[j])?));
            }
            Ok(T::i(a.dt, shape, out))
        }
        _ => Err(err(format!("operands of types {} and {}", a.dt, b.dt))),
    }
}

pub(super) fn op_add(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(arith(
        inp(ins, 0)?,
        inp(ins, 1)?,
        |x, y| x + y,
        |x, y| Ok(x.wrapping_add(y)),
    )?)
}

pub(super) fn op_sub(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(arith(
        inp(ins, 0)?,
        inp(ins, 1)?,
        |x, y| x - y,
        |x, y| Ok(x.wrapping_sub(y)),
    )?)
}

pub(super) fn op_mul(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(arith(
        inp(ins, 0)?,
        inp(ins, 1)?,
        |x, y| x * y,
        |x, y| Ok(x.wrapping_mul(y)),
    )?)
}

/// Integer division truncating toward zero (u64 compared as unsigned).
pub fn int_div(dt: DType, x: i64, y: i64) -> R<i64> {
    if y == 0 {
        return Err(err("integer division by zero"));
    }
    if dt == DType::U64 {
        return Ok(((x as u64) / (y as u64)) as i64);
    }
    Ok(x.wrapping_div(y))
}

pub(super) fn op_div(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    let dt = a.dt;
    one(arith(
        a,
        inp(ins, 1)?,
        |x, y| x / y,
        |x, y| int_div(dt, x, y),
    )?)
}

/// Integer modulo: `fmod` false takes the divisor's sign (Python), true the dividend's (C).
pub fn int_mod(dt: DType, x: i64, y: i64, fmod: bool) -> R<i64> {
    if y == 0 {
        return Err(err("integer modulo by zero"));
    }
    if dt == DType::U64 {
        return Ok(((x as u64) % (y as u64)) as i64);
    }
    let r = x.wrapping_rem(y);
    if !fmod && r != 0 && ((r < 0) != (y < 0)) {
        Ok(r + y)
    } else {
        Ok(r)
    }
}

/// Float modulo with the same sign rules as [`int_mod`].
pub fn float_mod(x: f64, y: f64, fmod: bool) -> f64 {
    let r = x % y;
    if !fmod && r != 0.0 && ((r < 0.0) != (y < 0.0)) {
        r + y
    } else {
        r
    }
}

pub(super) fn op_mod(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let fmod = n.int("fmod", 0) != 0;
    let a = inp(ins, 0)?;
    let dt = a.dt;
    one(arith(
        a,
        inp(ins, 1)?,
        |x, y| float_mod(x, y, fmod),
        |x, y| int_mod(dt, x, y, fmod),
    )?)
}

pub(super) fn op_pow(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    let b = inp(ins, 1)?;
    let (shape, ia, ib) = bcast2(a, b)?;
    match &a.buf {
        Buf::F(x) => {
            let y = b.floats()?;
            one(T::f(
                a.dt,
                shape,
                ia.iter().zip(&ib).map(|(&i, &j)| x[i].powf(y[j])).collect(),
            ))
        }
        Buf::I(x) => {
            let out: Vec<i64> = match &b.buf {
                Buf::I(y) => ia
                    .iter()
                    .zip(&ib)
                    .map(|(&i, &j)| {
                        if y[j] >= 0 {
                            wrap_dt(a.dt, x[i].wrapping_pow(y[j].min(u32::MAX as i64) as u32))
                        } else {
                            f2i(a.dt, (x[i] as f64).powf(y[j] as f64))
                        }
                    })
                    .collect(),
                _ => {
                    let y = b.floats()?;
                    ia.iter()
                        .zip(&ib)
                        .map(|(&i, &j)| f2i(a.dt, (x[i] as f64).powf(y[j])))
                        .collect()
                }
            };
            one(T::i(a.dt, shape, out))
        }
        _ => Err(err(format!("Pow of {}", a.dt))),
    }
}

pub(super) fn op_prelu(cx: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    let mut b = inp(ins, 1)?.clone();
    // Before opset 7 a 1-D slope of C values applies per channel (axis 1).
    if cx.opset < 7 && b.rank() == 1 && a.rank() > 2 && b.shape[0] == a.shape[1] && b.shape[0] != 1
    {
        let mut s = vec![b.shape[0]];
        s.extend(vec![1; a.rank() - 2]);
        b = b.reshaped(s)?;
    }
    one(arith(
        a,
        &b,
        |x, s| if x < 0.0 { s * x } else { x },
        |x, s| Ok(if x < 0 { x.wrapping_mul(s) } else { x }),
    )?)
}

fn variadic(ins: &[Option<&V>], f: impl Fn(&T, &T) -> R<T>) -> R<T> {
    let mut acc = inp(ins, 0)?.clone();
    for i in 1..ins.len() {
        acc = f(&acc, inp(ins, i)?)?;
    }
    Ok(acc)
}

fn fmax(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.max(y)
    }
}

fn fmin(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.min(y)
    }
}

pub(super) fn op_max(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let u = inp(ins, 0)?.dt == DType::U64;
    one(variadic(ins, |a, b| {
        arith(a, b, fmax, |x, y| {
            Ok(if u {
                (x as u64).max(y as u64) as i64
            } else {
                x.max(y)
            })
        })
    })?)
}

pub(super) fn op_min(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let u = inp(ins, 0)?.dt == DType::U64;
    one(variadic(ins, |a, b| {
        arith(a, b, fmin, |x, y| {
            Ok(if u {
                (x as u64).min(y as u64) as i64
            } else {
                x.min(y)
            })
        })
    })?)
}

pub(super) fn op_sum(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(variadic(ins, |a, b| {
        arith(a, b, |x, y| x + y, |x, y| Ok(x.wrapping_add(y)))
    })?)
}

pub(super) fn op_mean(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let s = variadic(ins, |a, b| {
        arith(a, b, |x, y| x + y, |x, y| Ok(x.wrapping_add(y)))
    })?;
    let n = ins.len() as f64;
    one(map_f(&s, |x| x / n)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mod_sign_rules() {
        // Python-style (fmod=0): the sign of the divisor.
        assert_eq!(int_mod(DType::I32, -7, 3, false).unwrap(), 2);
        assert_eq!(int_mod(DType::I32, 7, -3, false).unwrap(), -2);
        // C-style (fmod=1): the sign of the dividend.
        assert_eq!(int_mod(DType::I32, -7, 3, true).unwrap(), -1);
        assert_eq!(int_mod(DType::I32, 7, -3, true).unwrap(), 1);
        assert_eq!(float_mod(-7.5, 2.0, true), -1.5);
        assert_eq!(float_mod(-7.5, 2.0, false), 0.5);
        assert!(int_mod(DType::I32, 1, 0, false).is_err());
    }

    #[test]
    fn integer_division_truncates() {
        assert_eq!(int_div(DType::I32, -7, 2).unwrap(), -3);
        assert_eq!(int_div(DType::I32, 7, -2).unwrap(), -3);
        assert!(int_div(DType::I64, 7, 0).is_err());
    }

    #[test]
    fn broadcast_add() {
        let a = T::f(DType::F32, vec![2, 1], vec![1.0, 2.0]);
        let b = T::f(DType::F32, vec![3], vec![10.0, 20.0, 30.0]);
        let c = arith(&a, &b, |x, y| x + y, |x, y| Ok(x + y)).unwrap();
        assert_eq!(c.shape, vec![2, 3]);
        assert_eq!(c.fs().unwrap(), &[11.0, 21.0, 31.0, 12.0, 22.0, 32.0]);
    }

    #[test]
    fn uint8_wraps() {
        let a = T::i(DType::U8, vec![1], vec![250]);
        let b = T::i(DType::U8, vec![1], vec![10]);
        let c = arith(&a, &b, |x, y| x + y, |x, y| Ok(x.wrapping_add(y))).unwrap();
        assert_eq!(c.is().unwrap(), &[4]);
    }
}
