//! The validity rules of the family (`requires`): the dtypes each op takes only from some opset
//! on, and the op-specific constraints (Pow, Mod, Celu, Clip, the variadic ops before opset 8).

use super::cast::{cast_target, low_precision_since};
use super::variadic::same_shapes_before_8;
use crate::attr::AttrLookup;
use crate::dtype::DType::{self, *};
use crate::ops::common::{InferError, rule};
use crate::registry::InferCtx;

/// Validity rules beyond inference: dtypes that the op only accepts from some opset on, and
/// the op-specific constraints.
pub(super) fn requires_ew(c: &InferCtx) -> Result<(), InferError> {
    let op = c.node.op_type.as_str();
    let main = if op == "Where" { 1 } else { 0 };
    let mut checks = vec![(main, c.dtype(main))];
    match op {
        "Cast" => checks.extend(cast_target(c).map(|d| (1, d))),
        "CastLike" => checks.push((1, c.dtype(1))),
        _ => {}
    }
    for (slot, d) in checks {
        if !d.is_known() {
            continue;
        }
        match dtype_since(op, d) {
            Some(v) if v <= c.opset => {}
            Some(v) => {
                return Err(rule!(
                    "{op} takes {d} (slot {slot}) from opset {v}, model has {}",
                    c.opset
                ));
            }
            None => {
                return Err(rule!(
                    "{op} does not take {d} (slot {slot}) at opset {}",
                    c.opset
                ));
            }
        }
        if op == "Erf" && d.is_int() && c.opset >= 13 {
            return Err(rule!("Erf takes no {d} from opset 13"));
        }
    }
    match op {
        "Sum" | "Max" | "Min" | "Mean" => same_shapes_before_8(c),
        "Pow" if c.opset < 12 && c.dtype(1).is_known() && c.dtype(0) != c.dtype(1) => Err(rule!(
            "Pow before opset 12 needs X and Y of one type, found {} and {}",
            c.dtype(0),
            c.dtype(1)
        )),
        "Mod" if c.int("fmod", 0) == 0 && c.dtype(0).is_float() => {
            Err(rule!("Mod on {} needs fmod=1", c.dtype(0)))
        }
        "Celu" if c.float("alpha", 1.0) == 0.0 => {
            Err(rule!("Celu alpha must not be 0 (it divides x)"))
        }
        "Clip" => {
            for (i, what) in [(1, "min"), (2, "max")] {
                if let Some(n) = c.input_type(i).tensor().and_then(|t| t.num_elements())
                    && n != 1
                {
                    return Err(rule!("Clip {what} must be a scalar, found {n} elements"));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// First opset in which `op` accepts `d` for its main type variable, for the dtypes that came
/// later than the op itself (the type constraints list the union over opsets); `Some(1)` else.
fn dtype_since(op: &str, d: DType) -> Option<i64> {
    const BF16_22: &[&str] = &[
        "Acos",
        "Acosh",
        "Asin",
        "Asinh",
        "Atan",
        "Atanh",
        "Cos",
        "Cosh",
        "Sin",
        "Sinh",
        "Tan",
        "Round",
        "Elu",
        "Selu",
        "HardSigmoid",
        "HardSwish",
        "Softplus",
        "Softsign",
        "ThresholdedRelu",
        "Mish",
    ];
    let wide = matches!(d, I32 | I64 | U32 | U64);
    Some(match (op, d) {
        ("Cast" | "CastLike", C64 | C128) => return None,
        ("Cast" | "CastLike" | "Identity", _) => {
            low_precision_since(d).max(if op == "Cast" && d == String { 9 } else { 1 })
        }
        (_, BF16) if BF16_22.contains(&op) => 22,
        ("LeakyRelu" | "PRelu" | "GreaterOrEqual" | "LessOrEqual" | "Where", BF16) => 16,
        ("IsInf", BF16 | F16) => 20,
        ("IsNaN" | "IsInf", F8E4M3FN | F8E4M3FNUZ | F8E5M2 | F8E5M2FNUZ) => 20,
        (_, BF16) => 13,
        ("Abs" | "Neg", _) if d.is_int() => 6,
        ("Add" | "Sub" | "Mul" | "Div", _) if wide => 6,
        ("Add" | "Sub" | "Mul" | "Div", _) if d.is_int() => 14,
        ("Pow", I32 | I64) => 12,
        ("Equal", I32 | I64 | Bool) => 1,
        ("Equal", String) => 19,
        ("Equal", _) => 11,
        ("Greater" | "Less", _) if d.is_int() => 9,
        ("Max" | "Min" | "Clip", _) if d.is_int() => 12,
        ("Relu", _) if d.is_int() => 14,
        ("PRelu", _) if d.is_int() => 9,
        _ => 1,
    })
}
