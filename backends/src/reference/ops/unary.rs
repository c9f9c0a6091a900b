//! Element-wise ops of one input: the float math functions, Abs, Neg, Sign, the activations,
//! IsNaN, IsInf, Not, and Clip.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

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
            pub(super) fn $name(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
                let f: fn(f64) -> f64 = $f;
                one(map_f(inp(ins, 0)?, f)?)
            }
        )*
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

pub(super) fn op_abs(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_neg(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_sign(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_relu(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    one(match &t.buf {
        Buf::I(v) => T::i(t.dt, t.shape.clone(), v.iter().map(|&x| x.max(0)).collect()),
        _ => map_f(t, |x| if x < 0.0 { 0.0 } else { x })?,
    })
}

pub(super) fn op_leaky_relu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 0.01);
    one(map_f(inp(ins, 0)?, |x| if x < 0.0 { a * x } else { x })?)
}

pub(super) fn op_elu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 1.0);
    one(map_f(inp(ins, 0)?, |x| {
        if x < 0.0 { a * (x.exp() - 1.0) } else { x }
    })?)
}

pub(super) fn op_selu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_celu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 1.0);
    one(map_f(inp(ins, 0)?, |x| {
        x.max(0.0) + (a * ((x / a).exp() - 1.0)).min(0.0)
    })?)
}

pub(super) fn op_hard_sigmoid(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 0.2);
    let b = n.float("beta", 0.5) as f64;
    one(map_f(inp(ins, 0)?, |x| (a * x + b).clamp(0.0, 1.0))?)
}

pub(super) fn op_thresholded_relu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 1.0);
    one(map_f(inp(ins, 0)?, |x| if x > a { x } else { 0.0 })?)
}

/// Swish (opset 24): `x * sigmoid(alpha * x)`.
pub(super) fn op_swish(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = alpha(n, 1.0);
    one(map_f(inp(ins, 0)?, |x| x * sigmoid(a * x))?)
}

pub(super) fn op_shrink(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_gelu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_isnan(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    one(T::b(
        t.shape.clone(),
        t.fs()?.iter().map(|x| x.is_nan()).collect(),
    ))
}

pub(super) fn op_isinf(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_not(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    one(T::b(t.shape.clone(), t.bs()?.iter().map(|x| !x).collect()))
}

pub(super) fn op_clip(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_values() {
        assert_eq!(erf(0.0), 0.0);
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-14);
        assert!((erf(-1.0) + 0.842_700_792_949_714_9).abs() < 1e-14);
        assert!((erf(3.5) - 0.999_999_256_901_627_7).abs() < 1e-14);
    }
}
