//! Integer arithmetic and conversions: results outside the type's range, real-valued results
//! of integer inputs, float values with no integer value, shifts by the width, negative
//! powers.
use super::{Seen, slot};
use mutagraph_backends::value::HostTensor;
use mutagraph_ir::DType;
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::graph::Node;

fn int_range(d: DType) -> Option<(f64, f64)> {
    let bits = d.bits()? as i32;
    Some(if d.is_signed_int() {
        (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1) - 1.0)
    } else {
        (0.0, 2f64.powi(bits) - 1.0)
    })
}

/// Largest magnitude among the elements of an integer tensor, as f64.
fn max_abs_int(t: &HostTensor) -> Option<f64> {
    t.dtype.is_int().then_some(())?;
    Some(t.to_f64s()?.iter().fold(0.0f64, |a, &b| a.max(b.abs())))
}

pub(super) fn real_reduction_of_integers(node: &Node, seen: &Seen) -> Option<String> {
    (matches!(
        node.op_type.as_str(),
        "ReduceLogSumExp" | "ReduceLogSum" | "ReduceL2" | "ReduceMean"
    ) && slot(node, seen, 0).is_some_and(|t| t.dtype.is_int()))
    .then(|| {
        format!(
            "{} of {}",
            node.op_type,
            slot(node, seen, 0).expect("checked").dtype
        )
    })
}

pub(super) fn shrink_integer_fraction(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Shrink" || slot(node, seen, 0).is_none_or(|t| t.dtype.is_float()) {
        return None;
    }
    let frac = |name: &str, default: f32| node.attributes.float(name, default).fract() != 0.0;
    (frac("bias", 0.0) || frac("lambd", 0.5))
        .then(|| "Shrink of integers with a fractional bias or lambd".into())
}

pub(super) fn cast_out_of_range(node: &Node, seen: &Seen) -> Option<String> {
    let to = match node.op_type.as_str() {
        "Cast" => match node.attributes.iter().find(|a| a.name == "to")?.value {
            AttrValue::Int(c) => DType::from_code(c as i32),
            _ => return None,
        },
        "CastLike" => slot(node, seen, 1)?.dtype,
        _ => return None,
    };
    let x = slot(node, seen, 0)?;
    if !(x.dtype.is_float() && to.is_int()) {
        return None;
    }
    let (lo, hi) = int_range(to)?;
    x.to_f64s()?
        .iter()
        .any(|v| !v.is_finite() || v.trunc() < lo || v.trunc() > hi)
        .then(|| format!("Cast of {} values outside the range of {to}", x.dtype))
}

pub(super) fn onehot_index_not_integer(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "OneHot" {
        return None;
    }
    let lim = 2f64.powi(63);
    for (i, what) in [(0, "indices"), (1, "depth")] {
        let Some(t) = slot(node, seen, i).filter(|t| t.dtype.is_float()) else {
            continue;
        };
        if t.to_f64s()?
            .iter()
            .any(|v| !v.is_finite() || v.abs() >= lim)
        {
            return Some(format!("OneHot {what} of {} with no int64 value", t.dtype));
        }
    }
    None
}

pub(super) fn integer_overflow(node: &Node, seen: &Seen) -> Option<String> {
    let x = slot(node, seen, 0)?;
    if !x.dtype.is_int() {
        return None;
    }
    let (lo, hi) = int_range(x.dtype)?;
    let a = max_abs_int(x)?;
    let b = slot(node, seen, 1).and_then(max_abs_int).unwrap_or(0.0);
    let n = x.num_elements() as f64;
    let worst = match node.op_type.as_str() {
        "Add" | "Sub" => a + b,
        "Mul" => a * b,
        // The minimum of a signed type has no positive counterpart.
        "Neg" | "Abs" => {
            if x.to_f64s()?.contains(&lo) && lo < 0.0 {
                hi + 1.0
            } else {
                a
            }
        }
        "Pow" => a.powf(b),
        "ReduceSum" | "CumSum" => a * n,
        "ReduceSumSquare" => a * a * n,
        "ReduceProd" => x
            .to_f64s()?
            .iter()
            .filter(|v| v.abs() > 1.0)
            .map(|v| v.abs())
            .product(),
        "MatMul" | "Gemm" => {
            let k = *x.shape.last()? as f64;
            a * b * k
        }
        _ => return None,
    };
    (worst > hi).then(|| {
        format!(
            "{} of {} values may exceed the type's range ({worst:.3e})",
            node.op_type, x.dtype
        )
    })
}

pub(super) fn bitshift_width(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "BitShift" {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let bits = x.dtype.bits()? as i64;
    slot(node, seen, 1)?
        .to_i64s()?
        .iter()
        .any(|&s| s >= bits || s < 0)
        .then(|| format!("shift by {bits} bits or more"))
}

pub(super) fn pow_integer_negative_exponent(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Pow" || !slot(node, seen, 0)?.dtype.is_int() {
        return None;
    }
    let e = slot(node, seen, 1)?;
    let neg = if e.dtype.is_int() {
        e.to_i64s()?.iter().any(|&v| v < 0)
    } else {
        e.to_f64s()?.iter().any(|&v| v < 0.0)
    };
    neg.then(|| "integer base with a negative exponent".into())
}
