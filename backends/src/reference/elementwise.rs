//! Element-wise ops: unary math, activations, binary arithmetic with broadcasting, comparisons,
//! logic and bitwise ops, Cast / CastLike, Where, Clip.
use super::tensor::*;
use super::{Cx, OpFn, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use std::collections::BTreeMap;

type Out = R<Vec<V>>;

/// Applies `f` to every element of a float tensor.
pub fn map_f(t: &T, f: impl Fn(f64) -> f64) -> R<T> {
    let v = t.fs()?;
    Ok(T::f(
        t.dt,
        t.shape.clone(),
        v.iter().map(|&x| f(x)).collect(),
    ))
}

macro_rules! unary_float {
    ($($name:ident => $f:expr),* $(,)?) => {
        $(
            #[allow(non_snake_case)]
            fn $name(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
                let f: fn(f64) -> f64 = $f;
                one(map_f(inp(ins, 0)?, f)?)
            }
        )*
        fn register_unary(t: &mut BTreeMap<&'static str, OpFn>) {
            $( t.insert(stringify!($name), $name as OpFn); )*
        }
    };
}

unary_float! {
    Reciprocal => |x| 1.0 / x,
    Sqrt => f64::sqrt,
    Exp => f64::exp,
    Log => f64::ln,
    Ceil => f64::ceil,
    Floor => f64::floor,
    Round => f64::round_ties_even,
    Sin => f64::sin,
    Cos => f64::cos,
    Tan => f64::tan,
    Asin => f64::asin,
    Acos => f64::acos,
    Atan => f64::atan,
    Sinh => f64::sinh,
    Cosh => f64::cosh,
    Tanh => f64::tanh,
    Asinh => f64::asinh,
    Acosh => f64::acosh,
    Atanh => f64::atanh,
    Erf => erf,
    Sigmoid => sigmoid,
    Softplus => softplus,
    Softsign => |x| x / (1.0 + x.abs()),
    Mish => |x| x * softplus(x).tanh(),
    HardSwish => |x| x * (x / 6.0 + 0.5).clamp(0.0, 1.0),
}

/// The logistic function.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// `ln(1 + e^x)`, computed without overflow.
pub fn softplus(x: f64) -> f64 {
    if x > 30.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// The error function (power series near zero, continued fraction of erfc beyond).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let a = x.abs();
    let r = if a < 3.0 {
        // erf(a) = 2/sqrt(pi) * sum_n (-1)^n a^(2n+1) / (n! (2n+1))
        let mut term = a; // a^(2n+1) (-1)^n / n!
        let mut sum = a;
        let a2 = a * a;
        for k in 1..200 {
            let n = k as f64;
            term *= -a2 / n;
            let add = term / (2.0 * n + 1.0);
            sum += add;
            if add.abs() <= 1e-17 * sum.abs() {
                break;
            }
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else if a > 27.0 {
        1.0
    } else {
        // erfc(a) = exp(-a^2)/sqrt(pi) * 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))
        let mut f = a;
        for k in (1..80).rev() {
            f = a + (k as f64 / 2.0) / f;
        }
        1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / f
    };
    if x < 0.0 { -r } else { r }
}

fn alpha(node: &Node, d: f32) -> f64 {
    node.float("alpha", d) as f64
}

fn op_abs(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    one(match &t.buf {
        Buf::I(v) => T::i(
            t.dt,
            t.shape.clone(),
            v.iter().map(|&x| wrap_dt(t.dt, x.wrapping_abs())).collect(),
        ),
        _ => map_f(t, f64::abs)?,
    })
}

fn op_neg(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    one(match &t.buf {
        Buf::I(v) => T::i(
            t.dt,
            t.shape.clone(),
            v.iter().map(|&x| wrap_dt(t.dt, x.wrapping_neg())).collect(),
        ),
        _ => map_f(t, |x| -x)?,
    })
}

fn op_sign(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    one(match &t.buf {
        Buf::I(v) => T::i(
            t.dt,
            t.shape.clone(),
            v.iter()
                .map(|&x| {
                    if t.dt == DType::U64 {
                        (x != 0) as i64
                    } else {
                        x.signum()
                    }
                })
                .collect(),
        ),
        _ => map_f(t, |x| {
            if x.is_nan() {
                x
            } else if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }
        })?,
    })
}

fn op_relu(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    one(match &t.buf {
        Buf::I(v) => T::i(t.dt, t.shape.clone(), v.iter().map(|&x| x.max(0)).collect()),
        _ => map_f(t, |x| if x < 0.0 { 0.0 } else { x })?,
    })
}

fn op_leaky_relu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 0.01);
    one(map_f(inp(ins, 0)?, |x| if x < 0.0 { a * x } else { x })?)
}

fn op_elu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 1.0);
    one(map_f(inp(ins, 0)?, |x| {
        if x < 0.0 { a * (x.exp() - 1.0) } else { x }
    })?)
}

fn op_selu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 1.673_263_2);
    let g = n.float("gamma", 1.050_701) as f64;
    one(map_f(inp(ins, 0)?, |x| {
        if x <= 0.0 {
            g * (a * x.exp() - a)
        } else {
            g * x
        }
    })?)
}

fn op_celu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 1.0);
    one(map_f(inp(ins, 0)?, |x| {
        x.max(0.0) + (a * ((x / a).exp() - 1.0)).min(0.0)
    })?)
}

fn op_hard_sigmoid(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 0.2);
    let b = n.float("beta", 0.5) as f64;
    one(map_f(inp(ins, 0)?, |x| (a * x + b).clamp(0.0, 1.0))?)
}

fn op_thresholded_relu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 1.0);
    one(map_f(inp(ins, 0)?, |x| if x > a { x } else { 0.0 })?)
}

fn op_shrink(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let bias = n.float("bias", 0.0) as f64;
    let l = n.float("lambd", 0.5) as f64;
    let t = inp(ins, 0)?;
    let f = |x: f64| {
        if x < -l {
            x + bias
        } else if x > l {
            x - bias
        } else {
            0.0
        }
    };
    one(match &t.buf {
        Buf::I(v) => T::from_f64s(
            t.dt,
            t.shape.clone(),
            v.iter().map(|&x| f(x as f64)).collect(),
        )?,
        _ => map_f(t, f)?,
    })
}

fn op_gelu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let approx = n.string("approximate", "none");
    let t = inp(ins, 0)?;
    match approx.as_str() {
        "none" => one(map_f(t, |x| {
            0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2))
        })?),
        "tanh" => one(map_f(t, |x| {
            let c = (2.0 / std::f64::consts::PI).sqrt();
            0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())
        })?),
        a => Err(unsup(format!("Gelu approximate={a}"))),
    }
}

fn op_isnan(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    one(T::b(
        t.shape.clone(),
        t.fs()?.iter().map(|x| x.is_nan()).collect(),
    ))
}

fn op_isinf(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let neg = n.int("detect_negative", 1) != 0;
    let pos = n.int("detect_positive", 1) != 0;
    one(T::b(
        t.shape.clone(),
        t.fs()?
            .iter()
            .map(|&x| (x == f64::INFINITY && pos) || (x == f64::NEG_INFINITY && neg))
            .collect(),
    ))
}

fn op_not(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    one(T::b(t.shape.clone(), t.bs()?.iter().map(|x| !x).collect()))
}

fn op_bitwise_not(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    one(T::i(
        t.dt,
        t.shape.clone(),
        t.is()?.iter().map(|&x| wrap_dt(t.dt, !x)).collect(),
    ))
}

// ---------------------------------------------------------------------------------------------
// Binary ops.

/// Broadcasts `a` and `b` and returns (shape, index into a, index into b).
pub fn bcast2(a: &T, b: &T) -> R<(Vec<usize>, Vec<usize>, Vec<usize>)> {
    let out = bcast_shapes(&[&a.shape, &b.shape])?;
    check_size(&out)?;
    let ia = bcast_index(&a.shape, &out);
    let ib = bcast_index(&b.shape, &out);
    Ok((out, ia, ib))
}

/// Numeric binary op of two tensors of the same kind; the result keeps `a`'s type.
fn arith(a: &T, b: &T, ff: impl Fn(f64, f64) -> f64, fi: impl Fn(i64, i64) -> R<i64>) -> R<T> {
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

fn op_add(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(arith(
        inp(ins, 0)?,
        inp(ins, 1)?,
        |x, y| x + y,
        |x, y| Ok(x.wrapping_add(y)),
    )?)
}

fn op_sub(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(arith(
        inp(ins, 0)?,
        inp(ins, 1)?,
        |x, y| x - y,
        |x, y| Ok(x.wrapping_sub(y)),
    )?)
}

fn op_mul(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_div(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_mod(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_pow(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_prelu(cx: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_max(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_min(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_sum(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(variadic(ins, |a, b| {
        arith(a, b, |x, y| x + y, |x, y| Ok(x.wrapping_add(y)))
    })?)
}

fn op_mean(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let s = variadic(ins, |a, b| {
        arith(a, b, |x, y| x + y, |x, y| Ok(x.wrapping_add(y)))
    })?;
    let n = ins.len() as f64;
    one(map_f(&s, |x| x / n)?)
}

// Comparisons.

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

fn op_equal(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(compare(inp(ins, 0)?, inp(ins, 1)?, |o| o.is_eq(), true)?)
}
fn op_less(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(compare(inp(ins, 0)?, inp(ins, 1)?, |o| o.is_lt(), false)?)
}
fn op_less_eq(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(compare(inp(ins, 0)?, inp(ins, 1)?, |o| o.is_le(), false)?)
}
fn op_greater(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(compare(inp(ins, 0)?, inp(ins, 1)?, |o| o.is_gt(), false)?)
}
fn op_greater_eq(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_and(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    logic(ins, |x, y| x && y)
}
fn op_or(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    logic(ins, |x, y| x || y)
}
fn op_xor(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_bitwise_and(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    bitwise(ins, |x, y| x & y)
}
fn op_bitwise_or(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    bitwise(ins, |x, y| x | y)
}
fn op_bitwise_xor(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    bitwise(ins, |x, y| x ^ y)
}

fn op_bitshift(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_where(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_clip(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let (lo, hi) = if cx.opset < 11 {
        (
            n.float("min", f32::NEG_INFINITY) as f64,
            n.float("max", f32::INFINITY) as f64,
        )
    } else {
        (
            match opt(ins, 1)? {
                Some(m) => m.scalar_f()?,
                None => f64::NEG_INFINITY,
            },
            match opt(ins, 2)? {
                Some(m) => m.scalar_f()?,
                None => f64::INFINITY,
            },
        )
    };
    one(match &t.buf {
        Buf::I(v) => {
            let lo = opt(ins, 1)?
                .map(|m| m.scalar_i())
                .transpose()?
                .unwrap_or(i64::MIN);
            let hi = opt(ins, 2)?
                .map(|m| m.scalar_i())
                .transpose()?
                .unwrap_or(i64::MAX);
            T::i(
                t.dt,
                t.shape.clone(),
                v.iter().map(|&x| x.max(lo).min(hi)).collect(),
            )
        }
        _ => map_f(t, |x| if x.is_nan() { x } else { x.max(lo).min(hi) })?,
    })
}

// ---------------------------------------------------------------------------------------------
// Cast.

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

fn op_cast(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let to = DType::from_code(n.int("to", 0) as i32);
    one(cast(inp(ins, 0)?, to)?)
}

fn op_cast_like(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(cast(inp(ins, 0)?, inp(ins, 1)?.dt)?)
}

pub(super) fn register(t: &mut BTreeMap<&'static str, OpFn>) {
    register_unary(t);
    let ops: &[(&'static str, OpFn)] = &[
        ("Abs", op_abs),
        ("Neg", op_neg),
        ("Sign", op_sign),
        ("Relu", op_relu),
        ("LeakyRelu", op_leaky_relu),
        ("Elu", op_elu),
        ("Selu", op_selu),
        ("Celu", op_celu),
        ("HardSigmoid", op_hard_sigmoid),
        ("ThresholdedRelu", op_thresholded_relu),
        ("Shrink", op_shrink),
        ("Gelu", op_gelu),
        ("IsNaN", op_isnan),
        ("IsInf", op_isinf),
        ("Not", op_not),
        ("BitwiseNot", op_bitwise_not),
        ("Add", op_add),
        ("Sub", op_sub),
        ("Mul", op_mul),
        ("Div", op_div),
        ("Mod", op_mod),
        ("Pow", op_pow),
        ("PRelu", op_prelu),
        ("Max", op_max),
        ("Min", op_min),
        ("Sum", op_sum),
        ("Mean", op_mean),
        ("Equal", op_equal),
        ("Less", op_less),
        ("LessOrEqual", op_less_eq),
        ("Greater", op_greater),
        ("GreaterOrEqual", op_greater_eq),
        ("And", op_and),
        ("Or", op_or),
        ("Xor", op_xor),
        ("BitwiseAnd", op_bitwise_and),
        ("BitwiseOr", op_bitwise_or),
        ("BitwiseXor", op_bitwise_xor),
        ("BitShift", op_bitshift),
        ("Where", op_where),
        ("Clip", op_clip),
        ("Cast", op_cast),
        ("CastLike", op_cast_like),
    ];
    for (k, f) in ops {
        t.insert(k, *f);
    }
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

    #[test]
    fn erf_values() {
        assert_eq!(erf(0.0), 0.0);
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-14);
        assert!((erf(-1.0) + 0.842_700_792_949_714_9).abs() < 1e-14);
        assert!((erf(3.5) - 0.999_999_256_901_627_7).abs() < 1e-14);
    }
}
