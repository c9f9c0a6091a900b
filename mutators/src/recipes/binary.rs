//! Binary elementwise, comparison and logical ops, the variadic `Sum`/`Mean`/`Max`/`Min`,
//! `PRelu` and `Where`: `x` meets a generated constant whose shape broadcasts to `x`'s (same
//! shape, scalar, trailing dims, size-1 dims, `[1]`), so the output keeps `x`'s shape.
use super::Recipe;
use super::util::*;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::site::Site;

/// The other operand of `op` for an `x` of `t`: values that keep the op defined (no zero
/// divisors, small exponents and shift amounts).
fn operand(op: &str, site: &mut Site<'_>, t: &TensorType, rng: &mut SplitMix64) -> String {
    let d = dims(t);
    let shape = bshape(rng, &d);
    let dt = t.dtype;
    match op {
        "Div" | "Mod" => {
            if dt.is_int() {
                konst(site, "divisor", dt, &shape, 1.0, 5.0, rng)
            } else {
                konst(site, "divisor", dt, &shape, 0.5, 3.0, rng)
            }
        }
        "Pow" => konst(site, "exponent", dt, &shape, 0.0, 3.0, rng),
        "BitShift" => konst(site, "shift", dt, &shape, 0.0, 4.0, rng),
        _ => konst(site, "operand", dt, &shape, -3.0, 3.0, rng),
    }
}

fn binary(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    if site.opset() < 7 && LEGACY.contains(&op) {
        return legacy(op, site, x, t, rng);
    }
    let c = operand(op, site, t, rng);
    let mut a = Attrs::new();
    match op {
        "Mod" => {
            if t.dtype.is_float() {
                a.push(("fmod", ai(1)));
            } else {
                flag(rng, &mut a, "fmod");
            }
        }
        "BitShift" => a.push(("direction", astr(pick(rng, &["LEFT", "RIGHT"])))),
        _ => {}
    }
    // The constant goes first sometimes, where `x` as divisor cannot be zero-trouble.
    let swap = !matches!(op, "Div" | "Mod" | "Pow" | "BitShift" | "PRelu") && chance(rng, 0.3);
    if swap {
        site.op1(op, &[&c, x], a)
    } else {
        site.op1(op, &[x, &c], a)
    }
}

/// The ops that broadcast only on request (`broadcast`, `axis`) before opset 7.
const LEGACY: &[&str] = &[
    "Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less",
];

/// Before opset 7: B is the same shape as `x`, or (with `broadcast=1`) a contiguous run of
/// `x`'s dims starting at `axis` (trailing when `axis` is left out), or a scalar.
fn legacy(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let mut a = Attrs::new();
    let shape: Vec<i64> = if r == 0 || chance(rng, 0.25) {
        maybe(rng, &mut a, 0.7, "broadcast", ai(0));
        d.clone()
    } else {
        a.push(("broadcast", ai(1)));
        let start = match below(rng, 4) {
            0 => 0,
            1 => 1.min(r - 1),
            2 => r - 1,
            _ => below(rng, r),
        };
        let len = 1 + below(rng, r - start);
        let trailing = start + len == r;
        if !trailing || chance(rng, 0.6) {
            let ax = if chance(rng, 0.3) {
                start as i64 - r as i64
            } else {
                start as i64
            };
            a.push(("axis", ai(ax)));
        }
        d[start..start + len].to_vec()
    };
    let (lo, hi) = match op {
        "Div" => (1.0, 4.0),
        "Pow" => (0.0, 3.0),
        _ => (-3.0, 3.0),
    };
    let c = konst(site, "operand", t.dtype, &shape, lo, hi, rng);
    site.op1(op, &[x, &c], a)
}

fn variadic(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let n = below(rng, 3);
    let mut ins = vec![x.to_string()];
    for _ in 0..n {
        let c = operand(op, site, t, rng);
        ins.insert(below(rng, ins.len() + 1), c);
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    site.op1(op, &refs, vec![])
}

fn where_(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let cs = bshape(rng, &d);
    let cond = konst(site, "cond", DType::Bool, &cs, 0.0, 2.0, rng);
    let other = operand(op, site, t, rng);
    if chance(rng, 0.5) {
        site.op1(op, &[&cond, x, &other], vec![])
    } else {
        site.op1(op, &[&cond, &other, x], vec![])
    }
}

pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    let arithmetic = &[
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Pow",
        "Mod",
        "BitShift",
        "BitwiseAnd",
        "BitwiseOr",
        "BitwiseXor",
        "PRelu",
    ];
    push_each(list, arithmetic, Dt::Reg, ANY_RANK, same, binary);
    let logic = &["And", "Or", "Xor"];
    push_each(list, logic, Dt::Reg, ANY_RANK, same, binary);
    let comparisons = &["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"];
    push_each(list, comparisons, Dt::Reg, ANY_RANK, bool_same, binary);
    let variadics = &["Sum", "Mean", "Max", "Min"];
    push_each(list, variadics, Dt::Reg, ANY_RANK, same, variadic);
    list.push(R::boxed("Where", Dt::RegAt(1), ANY_RANK, same, where_));
}
