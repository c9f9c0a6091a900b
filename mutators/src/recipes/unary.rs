//! Elementwise unary ops and activations (same shape out as in), softmax family, casts,
//! `Clip`, `Dropout`, `Trilu`, `CumSum` and the per-axis normalizations that keep the shape.
//! Attributes are drawn over their parameter buckets (and sometimes left out).
use super::Recipe;
use super::util::*;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::site::Site;

/// Activations and elementwise ops whose only parameters are attributes.
fn act(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    // Values picked one per bucket of each attribute's spec.
    const ELU5: &[f64] = &[-0.5, 0.0, 0.4, 1.0, 1.7];
    const SELU5: &[f64] = &[0.0, 0.6, 1.5, 3.0, 11.0];
    const SHRINK5: &[f64] = &[-0.5, 0.0, 0.4, 2.0, 11.0];
    let mut a = Attrs::new();
    let r = t.rank().unwrap_or(0);
    match op {
        "LeakyRelu" | "Elu" | "ThresholdedRelu" => float_of(rng, &mut a, "alpha", ELU5),
        "HardSigmoid" => {
            float_of(rng, &mut a, "alpha", ELU5);
            float_of(rng, &mut a, "beta", SHRINK5);
        }
        "Selu" => {
            float_of(rng, &mut a, "alpha", SELU5);
            float_of(rng, &mut a, "gamma", SELU5);
        }
        "Celu" => float_of(rng, &mut a, "alpha", &[0.5, 1.0, 2.0, 11.0]),
        "Shrink" => {
            float_of(rng, &mut a, "bias", SHRINK5);
            // A negative lambd makes the two branches overlap (ONNX does not order them).
            float_of(rng, &mut a, "lambd", &SHRINK5[1..]);
        }
        "Gelu" => maybe_str(rng, &mut a, 0.7, "approximate", &["none", "tanh"]),
        "Swish" => float_of(rng, &mut a, "alpha", ELU5),
        "Softmax" | "LogSoftmax" | "Hardmax" if r > 0 => maybe_axis(rng, &mut a, 0.8, r),
        "IsInf" => {
            flag(rng, &mut a, "detect_negative");
            flag(rng, &mut a, "detect_positive");
        }
        _ => {}
    }
    site.op1(op, &[x], a)
}

fn lp_norm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = t.rank().unwrap_or(1);
    let mut a = Attrs::new();
    maybe_axis(rng, &mut a, 0.8, r);
    maybe_int(rng, &mut a, 0.7, "p", &[1, 2]);
    site.op1(op, &[x], a)
}

fn mvn(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = t.rank().unwrap_or(1);
    let mut a = Attrs::new();
    // `axes` is always written: ONNX's checker fails on the default (its function body reads
    // an attribute that is absent).
    let axes: Vec<i64> = if r != 4 || chance(rng, 0.8) {
        let k = 1 + below(rng, r);
        subset(rng, r, k).into_iter().map(|v| v as i64).collect()
    } else {
        vec![0, 2, 3]
    };
    a.push(("axes", ais(&axes)));
    site.op1(op, &[x], a)
}

fn clip(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let (lo, hi) = if t.dtype.is_unsigned_int() {
        (between(rng, 0, 2) as f64, between(rng, 3, 6) as f64)
    } else if t.dtype.is_int() {
        (between(rng, -3, 0) as f64, between(rng, 1, 4) as f64)
    } else {
        (rng.range(-1.0, 0.0), rng.range(0.1, 2.0))
    };
    if site.opset() < 11 {
        let mut a = Attrs::new();
        // One value per bucket of the old attributes.
        float_of(rng, &mut a, "min", &[-1e31, -1.0, 0.0, lo.max(1e-3), 1e31]);
        float_of(rng, &mut a, "max", &[-1e31, -0.5, 0.0, hi, 1e31]);
        return site.op1(op, &[x], a);
    }
    let min = site.constant_f64s("clip_min", t.dtype, &[], &[lo]);
    let max = site.constant_f64s("clip_max", t.dtype, &[], &[hi]);
    match below(rng, 4) {
        0 => site.op1(op, &[x], vec![]),
        1 => site.op1(op, &[x, &min], vec![]),
        2 => site.op1(op, &[x, "", &max], vec![]),
        _ => site.op1(op, &[x, &min, &max], vec![]),
    }
}

fn dropout(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let ratio = pick(rng, &[0.0, 0.2, 0.5, 0.7]);
    if site.opset() < 12 {
        let mut a = Attrs::new();
        maybe(rng, &mut a, 0.7, "ratio", af(ratio));
        if site.opset() < 7 {
            flag(rng, &mut a, "is_test");
        }
        return site.op1(op, &[x], a);
    }
    let n_out = 1 + below(rng, 2);
    let outs = match below(rng, 3) {
        0 => site.op(op, &[x], vec![], n_out)?,
        1 => {
            let rc = site.constant_f64s("ratio", DType::F32, &[], &[ratio]);
            site.op(op, &[x, &rc], vec![], n_out)?
        }
        _ => {
            let rd = if t.dtype.is_float() {
                t.dtype
            } else {
                DType::F32
            };
            let rc = site.constant_f64s("ratio", rd, &[], &[ratio]);
            let tm = site.constant_f64s("training_mode", DType::Bool, &[], &[0.0]);
            site.op(op, &[x, &rc, &tm], vec![], n_out)?
        }
    };
    Ok(outs[0].clone())
}

fn cast(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let to = pick(rng, super::GEN_DTYPES);
    if op == "CastLike" {
        let like = site.constant_f64s("like", to, &[], &[0.0]);
        let mut a = Attrs::new();
        cast_flags(site, rng, &mut a);
        return site.op1(op, &[x, &like], a);
    }
    let mut a = vec![("to", ai(to.code() as i64))];
    cast_flags(site, rng, &mut a);
    site.op1(op, &[x], a)
}

/// `saturate` (opset 19+) and `round_mode` (24+): they only matter for 8-bit float targets
/// but are legal on any cast.
fn cast_flags(site: &Site<'_>, rng: &mut SplitMix64, a: &mut Attrs) {
    if site.opset() >= 19 {
        flag(rng, a, "saturate");
    }
    if site.opset() >= 24 {
        maybe_str(rng, a, 0.7, "round_mode", &["up", "down", "nearest"]);
    }
}

fn any_gen(_: DType, r: usize) -> Vec<(DType, usize)> {
    super::GEN_DTYPES.iter().map(|&d| (d, r)).collect()
}

fn trilu(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let mut a = Attrs::new();
    flag(rng, &mut a, "upper");
    if chance(rng, 0.5) {
        let k = site.constant_i64s("k", &[], &[between(rng, -2, 2)]);
        site.op1(op, &[x, &k], a)
    } else {
        site.op1(op, &[x], a)
    }
}

fn cumsum(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = t.rank().unwrap_or(1);
    let ax = axis(rng, r);
    let axis_c = if chance(rng, 0.5) {
        site.constant_i64s("axis", &[], &[ax])
    } else {
        site.constant_f64s("axis", DType::I32, &[], &[ax as f64])
    };
    let mut a = Attrs::new();
    flag(rng, &mut a, "exclusive");
    flag(rng, &mut a, "reverse");
    site.op1(op, &[x, &axis_c], a)
}

pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    let plain_ops = &[
        "Abs",
        "Acos",
        "Acosh",
        "Asin",
        "Asinh",
        "Atan",
        "Atanh",
        "Ceil",
        "Cos",
        "Cosh",
        "Exp",
        "Floor",
        "HardSwish",
        "Log",
        "Mish",
        "Neg",
        "Reciprocal",
        "Relu",
        "Round",
        "Sigmoid",
        "Sign",
        "Sin",
        "Sinh",
        "Softplus",
        "Softsign",
        "Sqrt",
        "Tan",
        "Tanh",
        "Identity",
        "Not",
        "BitwiseNot",
    ];
    push_each(list, plain_ops, Dt::Reg, ANY_RANK, same, plain);
    let activations = &[
        "LeakyRelu",
        "Elu",
        "ThresholdedRelu",
        "HardSigmoid",
        "Selu",
        "Celu",
        "Shrink",
        "Gelu",
        "Swish",
    ];
    push_each(list, activations, Dt::Reg, ANY_RANK, same, act);
    let softmaxes = &["Softmax", "LogSoftmax", "Hardmax"];
    push_each(list, softmaxes, Dt::Reg, RANK1, same, act);
    list.push(R::boxed("IsNaN", Dt::Reg, ANY_RANK, bool_same, plain));
    list.push(R::boxed("Erf", Dt::Reg, ANY_RANK, same, plain));
    list.push(R::boxed("IsInf", Dt::Reg, ANY_RANK, bool_same, act));
    list.push(R::boxed("LpNormalization", Dt::Reg, RANK1, same, lp_norm));
    // float only: on other types ONNX's checker refuses the function body (the registry's
    // ambiguity rule for the op)
    list.push(R::boxed(
        "MeanVarianceNormalization",
        Dt::Only(&[DType::F32]),
        RANK1,
        same,
        mvn,
    ));
    list.push(R::boxed("Clip", Dt::Reg, ANY_RANK, same, clip));
    list.push(R::boxed("Dropout", Dt::Reg, ANY_RANK, same, dropout));
    let casts = &["Cast", "CastLike"];
    push_each(list, casts, Dt::Reg, ANY_RANK, any_gen, cast);
    list.push(R::boxed(
        "Trilu",
        Dt::Reg,
        (2, super::MAX_RANK),
        same,
        trilu,
    ));
    list.push(R::boxed("CumSum", Dt::Reg, RANK1, same, cumsum));
}
