//! Constant folding of the integer-friendly elementwise ops (shape arithmetic) over broadcast
//! inputs.

use crate::attr::AttrLookup;
use crate::dtype::DType::{self, *};
use crate::ops::common::*;
use crate::registry::InferCtx;
use crate::tensor::{Tensor, TensorExt};

/// Computes in i64 for integer/bool dtypes, in f64 for the decodable floats.
fn int_like(d: DType) -> Option<bool> {
    if d.is_int() || d == Bool {
        Some(true)
    } else if matches!(d, F16 | F32 | F64 | BF16) {
        Some(false)
    } else {
        None
    }
}

/// Constant folding of the integer-friendly elementwise ops (shape arithmetic), by op type.
pub(super) fn fold_elementwise(c: &InferCtx) -> Option<Vec<Tensor>> {
    let op = c.node.op_type.as_str();
    let fmod = c.int("fmod", 0) != 0;
    let b = |x: bool| Some(x as i64);
    let fi = |v: &[i64]| -> Option<i64> {
        match op {
            "Abs" => v[0].checked_abs(),
            "Neg" => v[0].checked_neg(),
            "Not" => b(v[0] == 0),
            "Add" => Some(v[0].wrapping_add(v[1])),
            "Sub" => Some(v[0].wrapping_sub(v[1])),
            "Mul" => Some(v[0].wrapping_mul(v[1])),
            "Div" => v[0].checked_div(v[1]),
            "Mod" => {
                let r = v[0].checked_rem(v[1])?;
                // Without fmod the result takes the divisor's sign.
                Some(if !fmod && r != 0 && (r < 0) != (v[1] < 0) {
                    r + v[1]
                } else {
                    r
                })
            }
            "And" => b(v[0] != 0 && v[1] != 0),
            "Or" => b(v[0] != 0 || v[1] != 0),
            "Equal" => b(v[0] == v[1]),
            "Less" => b(v[0] < v[1]),
            "LessOrEqual" => b(v[0] <= v[1]),
            "Greater" => b(v[0] > v[1]),
            "GreaterOrEqual" => b(v[0] >= v[1]),
            "Sum" => v.iter().try_fold(0i64, |a, x| a.checked_add(*x)),
            "Max" => v.iter().copied().max(),
            "Min" => v.iter().copied().min(),
            "Where" => Some(if v[0] != 0 { v[1] } else { v[2] }),
            _ => None,
        }
    };
    let bf = |x: bool| Some(x as i64 as f64);
    let ff = |v: &[f64]| -> Option<f64> {
        match op {
            "Abs" => Some(v[0].abs()),
            "Neg" => Some(-v[0]),
            "Add" => Some(v[0] + v[1]),
            "Sub" => Some(v[0] - v[1]),
            "Mul" => Some(v[0] * v[1]),
            "Div" => Some(v[0] / v[1]),
            "Mod" => {
                let r = v[0] % v[1];
                Some(if !fmod && r != 0.0 && (r < 0.0) != (v[1] < 0.0) {
                    r + v[1]
                } else {
                    r
                })
            }
            "Equal" => bf(v[0] == v[1]),
            "Less" => bf(v[0] < v[1]),
            "LessOrEqual" => bf(v[0] <= v[1]),
            "Greater" => bf(v[0] > v[1]),
            "GreaterOrEqual" => bf(v[0] >= v[1]),
            "Sum" => Some(v.iter().sum()),
            "Max" => v.iter().copied().reduce(f64::max),
            "Min" => v.iter().copied().reduce(f64::min),
            "Where" => Some(if v[0] != 0.0 { v[1] } else { v[2] }),
            _ => None,
        }
    };
    let slots: Vec<usize> = (0..c.n_inputs()).filter(|i| c.has_input(*i)).collect();
    let to_bool = matches!(
        op,
        "Not" | "And" | "Or" | "Equal" | "Less" | "LessOrEqual" | "Greater" | "GreaterOrEqual"
    );
    let mode = if op == "Where" {
        c.dtype(1)
    } else {
        c.dtype(0)
    };
    let out = if to_bool { Bool } else { mode };
    fold_typed(c, &slots, mode, out, &fi, &ff)
}

/// Folds with the arithmetic chosen by `mode` (i64 or f64) and the result stored as `out`.
pub(super) fn fold_typed(
    ctx: &InferCtx,
    slots: &[usize],
    mode: DType,
    out: DType,
    fi: &dyn Fn(&[i64]) -> Option<i64>,
    ff: &dyn Fn(&[f64]) -> Option<f64>,
) -> Option<Vec<Tensor>> {
    let ints = int_like(mode)?;
    int_like(out)?;
    let ts: Vec<&Tensor> = slots
        .iter()
        .map(|&i| ctx.const_tensor(i))
        .collect::<Option<_>>()?;
    let dims: Vec<&[i64]> = ts.iter().map(|t| t.dims.as_slice()).collect();
    let t = if ints {
        let vals: Vec<Vec<i64>> = ts.iter().map(|t| t.to_i64s().ok()).collect::<Option<_>>()?;
        let (shape, res) = bcast_eval(&dims, &vals, fi)?;
        if out == I64 {
            i64_tensor(&shape, res)
        } else {
            f64_tensor(
                out,
                &shape,
                &res.iter()
                    .map(|v| wrap_int(out, *v) as f64)
                    .collect::<Vec<_>>(),
            )
        }
    } else {
        let vals: Vec<Vec<f64>> = ts.iter().map(|t| t.to_f64s().ok()).collect::<Option<_>>()?;
        let (shape, res) = bcast_eval(&dims, &vals, ff)?;
        if out == I64 {
            i64_tensor(&shape, res.iter().map(|v| *v as i64).collect())
        } else {
            f64_tensor(out, &shape, &res)
        }
    };
    Some(vec![t])
}

/// Two's-complement wrap of an integer result into a narrower integer dtype.
fn wrap_int(d: DType, v: i64) -> i64 {
    match d {
        I8 => v as i8 as i64,
        U8 => v as u8 as i64,
        I16 => v as i16 as i64,
        U16 => v as u16 as i64,
        I32 => v as i32 as i64,
        U32 => v as u32 as i64,
        _ => v,
    }
}

/// Evaluates `f` over the numpy broadcast of the inputs; `None` when the shapes clash, the
/// result is large or `f` fails.
fn bcast_eval<T: Copy, U>(
    dims: &[&[i64]],
    vals: &[Vec<T>],
    f: &dyn Fn(&[T]) -> Option<U>,
) -> Option<(Vec<i64>, Vec<U>)> {
    let rank = dims.iter().map(|d| d.len()).max().unwrap_or(0);
    let mut shape = vec![1i64; rank];
    for d in dims {
        for (k, &x) in d.iter().enumerate() {
            let o = &mut shape[rank - d.len() + k];
            if *o == 1 {
                *o = x;
            } else if x != 1 && x != *o {
                return None;
            }
        }
    }
    // Declared dims may be anything: the products are checked.
    let count = |d: &[i64]| d.iter().try_fold(1i64, |a, &x| a.checked_mul(x));
    let n = count(&shape)?;
    if !(0..=4096).contains(&n) {
        return None;
    }
    // Per input, the stride of each output axis (0 where the input is broadcast).
    let strides: Vec<Vec<i64>> = dims
        .iter()
        .map(|d| {
            let mut st = vec![0i64; rank];
            let mut acc = 1;
            for k in (0..d.len()).rev() {
                if d[k] != 1 {
                    st[rank - d.len() + k] = acc;
                }
                acc = acc.saturating_mul(d[k]);
            }
            st
        })
        .collect();
    for (v, d) in vals.iter().zip(dims) {
        if Some(v.len() as i64) != count(d) {
            return None;
        }
    }
    let mut idx = vec![0i64; rank];
    let mut out = Vec::with_capacity(n as usize);
    let mut args = Vec::with_capacity(vals.len());
    for _ in 0..n {
        args.clear();
        for (v, st) in vals.iter().zip(&strides) {
            let off: i64 = idx.iter().zip(st).map(|(i, s)| i * s).sum();
            args.push(v[off as usize]);
        }
        out.push(f(&args)?);
        for k in (0..rank).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Some((shape, out))
}
