//! Elementwise ops: unary math, binary arithmetic, activations, comparison and logic, casts.
use super::common::*;
use crate::attr::{AttrKind, AttrLookup, AttrValue};
use crate::dtype::DType::{self, *};
use crate::dtype::sets::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::tensor::{Tensor, TensorExt};
use crate::types::Dim;

/// Floats of the pre-bf16 opsets plus bf16.
const FLT: &[DType] = FLOAT;
/// Floats and the 8-bit floats (IsNaN, IsInf from opset 20).
const FLT_F8: &[DType] = &[
    F16, F32, F64, BF16, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ,
];
/// Unsigned integers (BitShift).
const UINT: &[DType] = &[U8, U16, U32, U64];
/// Base of Pow.
const POW_BASE: &[DType] = &[F16, F32, F64, BF16, I32, I64];
/// PRelu.
const PRELU: &[DType] = &[F16, F32, F64, BF16, I32, I64, U32, U64];
/// Equal (strings from opset 19).
const EQUAL: &[DType] = &[
    I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BF16, Bool, String,
];
/// Where: any non-low-precision type.
const WHERE: &[DType] = &[
    I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BF16, Bool, String, C64, C128,
];
/// Cast / CastLike: every type but the complex ones (union over opsets).
const CAST: &[DType] = &[
    F32, U8, I8, U16, I16, I32, I64, String, Bool, F16, F64, U32, U64, BF16, F8E4M3FN, F8E4M3FNUZ,
    F8E5M2, F8E5M2FNUZ, U4, I4, F4E2M1, F8E8M0, U2, I2,
];

/// Alpha-like float buckets: negative / zero / (0,1) / one / above one.
const ALPHA_B: &[(f64, f64)] = &[
    (f64::NEG_INFINITY, 0.0),
    (0.0, 1e-12),
    (1e-12, 1.0),
    (1.0, 1.000001),
    (1.000001, f64::INFINITY),
];
/// Bounds of Clip (legacy attributes): unbounded below / negative / zero / positive / unbounded above.
const BOUND_B: &[(f64, f64)] = &[
    (f64::NEG_INFINITY, -1e30),
    (-1e30, 0.0),
    (0.0, 1e-12),
    (1e-12, 1e30),
    (1e30, f64::INFINITY),
];
/// Selu's constants: nonpositive / (0,1) / near the defaults / large / huge.
const SELU_B: &[(f64, f64)] = &[
    (f64::NEG_INFINITY, 1e-12),
    (1e-12, 1.0),
    (1.0, 2.0),
    (2.0, 10.0),
    (10.0, f64::INFINITY),
];
/// Celu alpha (0 is invalid): negative / (0,1) / one / (1,10) / large.
const CELU_B: &[(f64, f64)] = &[
    (1e-12, 1.0),
    (1.0, 1.000001),
    (1.000001, 10.0),
    (10.0, f64::INFINITY),
];
/// Offsets (HardSigmoid beta, Shrink bias): negative / zero / (0,1) / [1,10) / large.
const OFFSET_B: &[(f64, f64)] = &[
    (f64::NEG_INFINITY, 0.0),
    (0.0, 1e-12),
    (1e-12, 1.0),
    (1.0, 10.0),
    (10.0, f64::INFINITY),
];

/// A unary op: name, versions, dtypes, X/Y port names (else input/output), legacy
/// `consumed_inputs`, category.
type UnaryRow = (
    &'static str,
    &'static [i64],
    &'static [DType],
    bool,
    bool,
    Category,
);
/// A binary op: name, versions, dtypes of A and B, bool output, category.
type BinaryRow = (
    &'static str,
    &'static [i64],
    &'static [DType],
    bool,
    Category,
);

fn consumed() -> AttrSpec {
    AttrSpec::of("consumed_inputs", AttrKind::Ints)
        .versions(1, Some(6))
        .no_buckets()
}

fn alpha(default: f32) -> AttrSpec {
    AttrSpec::float("alpha", default).float_buckets(ALPHA_B)
}

/// Registers this family.
pub fn register(r: &mut Registry) {
    use Category::{Activation as A, Elementwise as E, Logic as L};
    // Unary ops whose output has the input's type: (name, versions, dtypes, X/Y ports, legacy
    // `consumed_inputs` in opset 1, category).
    #[rustfmt::skip]
    let unary_ops: &[UnaryRow] = &[
        ("Abs", &[1, 6, 13], NUMERIC, true, true, E),
        ("Acos", &[7, 22], FLT, false, false, E),
        ("Acosh", &[9, 22], FLT, false, false, E),
        ("Asin", &[7, 22], FLT, false, false, E),
        ("Asinh", &[9, 22], FLT, false, false, E),
        ("Atan", &[7, 22], FLT, false, false, E),
        ("Atanh", &[9, 22], FLT, false, false, E),
        ("Ceil", &[1, 6, 13], FLT, true, true, E),
        ("Cos", &[7, 22], FLT, false, false, E),
        ("Cosh", &[9, 22], FLT, false, false, E),
        ("Erf", &[9, 13], NUMERIC, false, false, E),
        ("Exp", &[1, 6, 13], FLT, false, true, E),
        ("Floor", &[1, 6, 13], FLT, true, true, E),
        ("Log", &[1, 6, 13], FLT, false, true, E),
        ("Neg", &[1, 6, 13], SIGNED_NUMERIC, true, true, E),
        ("Reciprocal", &[1, 6, 13], FLT, true, true, E),
        ("Round", &[11, 22], FLT, true, false, E),
        ("Sign", &[9, 13], NUMERIC, false, false, E),
        ("Sin", &[7, 22], FLT, false, false, E),
        ("Sinh", &[9, 22], FLT, false, false, E),
        ("Sqrt", &[1, 6, 13], FLT, true, true, E),
        ("Tan", &[7, 22], FLT, false, false, E),
        ("Tanh", &[1, 6, 13], FLT, false, true, E),
        ("Not", &[1], BOOL, true, false, L),
        ("BitwiseNot", &[18], INT, true, false, E),
        ("Relu", &[1, 6, 13, 14], SIGNED_NUMERIC, true, true, A),
        ("Sigmoid", &[1, 6, 13], FLT, true, true, A),
        ("HardSwish", &[14, 22], FLT, true, false, A),
        ("Softplus", &[1, 22], FLT, true, false, A),
        ("Softsign", &[1, 22], FLT, false, false, A),
        ("Mish", &[18, 22], FLT, true, false, A),
    ];
    for &(name, versions, dts, xy, legacy, cat) in unary_ops {
        let (i, o) = if xy { ("X", "Y") } else { ("input", "output") };
        let mut s = OpSpec::new(name, versions, cat)
            .input(i, "T")
            .output(o, "T")
            .types("T", dts);
        if legacy {
            s = s.attr(consumed());
        }
        s = s.infer(unary).requires(requires_ew);
        if matches!(name, "Abs" | "Neg" | "Not") {
            s = s.fold(fold_elementwise);
        }
        r.add(s);
    }
    r.add(
        OpSpec::new("IsNaN", &[9, 13, 20], L)
            .input("X", "T1")
            .output("Y", "T2")
            .types("T1", FLT_F8)
            .types("T2", BOOL)
            .infer(|c| unary_to(c, Bool))
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("IsInf", &[10, 20], L)
            .input("X", "T1")
            .output("Y", "T2")
            .attr(AttrSpec::int("detect_negative", 1).one_of_ints(&[0, 1]))
            .attr(AttrSpec::int("detect_positive", 1).one_of_ints(&[0, 1]))
            .types("T1", FLT_F8)
            .types("T2", BOOL)
            .infer(|c| unary_to(c, Bool))
            .requires(requires_ew),
    );

    // Binary broadcasting ops: (name, versions, dtypes of A/B, bool output, category).
    #[rustfmt::skip]
    let binary_ops: &[BinaryRow] = &[
        ("Add", &[1, 6, 7, 13, 14], NUMERIC, false, E),
        ("Sub", &[1, 6, 7, 13, 14], NUMERIC, false, E),
        ("Mul", &[1, 6, 7, 13, 14], NUMERIC, false, E),
        ("Div", &[1, 6, 7, 13, 14], NUMERIC, false, E),
        ("And", &[1, 7], BOOL, true, L),
        ("Or", &[1, 7], BOOL, true, L),
        ("Xor", &[1, 7], BOOL, true, L),
        ("Equal", &[1, 7, 11, 13, 19], EQUAL, true, L),
        ("Greater", &[1, 7, 9, 13], NUMERIC, true, L),
        ("Less", &[1, 7, 9, 13], NUMERIC, true, L),
        ("GreaterOrEqual", &[12, 16], NUMERIC, true, L),
        ("LessOrEqual", &[12, 16], NUMERIC, true, L),
        ("BitwiseAnd", &[18], INT, false, E),
        ("BitwiseOr", &[18], INT, false, E),
        ("BitwiseXor", &[18], INT, false, E),
    ];
    for &(name, versions, dts, to_bool, cat) in binary_ops {
        let mut s = OpSpec::new(name, versions, cat)
            .input("A", "T")
            .input("B", "T");
        if to_bool {
            s = s.output("C", "T1").types("T", dts).types("T1", BOOL);
            s = s
                .infer(|c| legacy_binary(c, Some(Bool)))
                .requires(requires_ew);
        } else {
            s = s
                .output("C", "T")
                .types("T", dts)
                .infer(|c| legacy_binary(c, None))
                .requires(requires_ew);
        }
        if versions[0] == 1 {
            s = s.attr(legacy_axis()).attr(legacy_broadcast());
            if matches!(name, "Add" | "Sub" | "Mul" | "Div") {
                s = s.attr(consumed());
            }
        }
        if matches!(name, "Add" | "Sub" | "Mul" | "Div" | "And" | "Or") || to_bool && name != "Xor"
        {
            s = s.fold(fold_elementwise);
        }
        r.add(s);
    }
    r.add(
        OpSpec::new("Pow", &[1, 7, 12, 13, 15], E)
            .input("X", "T")
            .input("Y", "T1")
            .output("Z", "T")
            .attr(legacy_axis())
            .attr(legacy_broadcast())
            .types("T", POW_BASE)
            .types("T1", NUMERIC)
            .infer(|c| legacy_binary(c, None))
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Mod", &[10, 13], E)
            .input("A", "T")
            .input("B", "T")
            .output("C", "T")
            .attr(AttrSpec::int("fmod", 0).one_of_ints(&[0, 1]))
            .types("T", NUMERIC)
            .infer(|c| broadcast(c, None))
            .requires(requires_ew)
            .fold(fold_elementwise),
    );
    r.add(
        OpSpec::new("BitShift", &[11], E)
            .input("X", "T")
            .input("Y", "T")
            .output("Z", "T")
            .attr(
                AttrSpec::of("direction", AttrKind::String)
                    .required()
                    .one_of(&["LEFT", "RIGHT"]),
            )
            .types("T", UINT)
            .infer(|c| broadcast(c, None))
            .requires(requires_ew),
    );

    // Variadic broadcasting ops.
    #[rustfmt::skip]
    let variadic: &[(&str, &[i64], &[DType], &str)] = &[
        ("Sum", &[1, 6, 8, 13], FLT, "sum"),
        ("Mean", &[1, 6, 8, 13], FLT, "mean"),
        ("Max", &[1, 6, 8, 12, 13], NUMERIC, "max"),
        ("Min", &[1, 6, 8, 12, 13], NUMERIC, "min"),
    ];
    for &(name, versions, dts, out) in variadic {
        let s = OpSpec::new(name, versions, E)
            .var_input("data_0", "T", 1)
            .output(out, "T")
            .attr(consumed())
            .types("T", dts)
            .infer(|c| broadcast(c, None))
            .requires(requires_ew);
        r.add(if name == "Mean" {
            s
        } else {
            s.fold(fold_elementwise)
        });
    }

    r.add(
        OpSpec::new("Where", &[9, 16], E)
            .input("condition", "B")
            .input("X", "T")
            .input("Y", "T")
            .output("output", "T")
            .types("B", BOOL)
            .types("T", WHERE)
            .infer(|c| {
                let dt = if c.dtype(1).is_known() {
                    c.dtype(1)
                } else {
                    c.dtype(2)
                };
                broadcast(c, Some(dt))
            })
            .requires(requires_ew)
            .fold(fold_elementwise),
    );
    r.add(
        OpSpec::new("Clip", &[1, 6, 11, 12, 13], E)
            .input("input", "T")
            .opt_input("min", "T")
            .opt_input("max", "T")
            .output("output", "T")
            .attr(consumed())
            .attr(
                AttrSpec::float("min", f32::MIN)
                    .versions(1, Some(11))
                    .float_buckets(BOUND_B),
            )
            .attr(
                AttrSpec::float("max", f32::MAX)
                    .versions(1, Some(11))
                    .float_buckets(BOUND_B),
            )
            .types("T", NUMERIC)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Cast", &[1, 6, 9, 13, 19, 21, 23, 24, 25], Category::Cast)
            .input("input", "T1")
            .output("output", "T2")
            .attr(
                AttrSpec::of("to", AttrKind::String)
                    .required()
                    .no_buckets()
                    .versions(1, Some(6)),
            )
            .attr(
                AttrSpec::of("to", AttrKind::Int)
                    .required()
                    .range(1, 26)
                    .int_buckets(&[(1, 1), (2, 7), (8, 9), (10, 16), (17, 26)])
                    .versions(6, None),
            )
            .attr(
                AttrSpec::int("saturate", 1)
                    .one_of_ints(&[0, 1])
                    .versions(19, None),
            )
            .attr(
                AttrSpec::string("round_mode", "up")
                    .one_of(&["up", "down", "nearest"])
                    .versions(24, None),
            )
            .types("T1", CAST)
            .types("T2", CAST)
            .infer(|c| unary_to(c, cast_target(c).unwrap_or(Other(0))))
            .requires(requires_ew)
            .fold(|c| {
                cast_target(c).and_then(|d| {
                    fold_typed(c, &[0], c.dtype(0), d, &|v| Some(v[0]), &|v| Some(v[0]))
                })
            }),
    );
    r.add(
        OpSpec::new("CastLike", &[15, 19, 21, 23, 24, 25], Category::Cast)
            .input("input", "T1")
            .input("target_type", "T2")
            .output("output", "T2")
            .attr(
                AttrSpec::int("saturate", 1)
                    .one_of_ints(&[0, 1])
                    .versions(19, None),
            )
            .attr(
                AttrSpec::string("round_mode", "up")
                    .one_of(&["up", "down", "nearest"])
                    .versions(24, None),
            )
            .types("T1", CAST)
            .types("T2", CAST)
            .infer(|c| unary_to(c, c.dtype(1)))
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new(
            "Identity",
            &[1, 13, 14, 16, 19, 21, 23, 24, 25],
            Category::Misc,
        )
        .input("input", "V")
        .output("output", "V")
        .types("V", ANY)
        .infer(|c| Ok(vec![c.input_type(0)]))
        .requires(requires_ew)
        .fold(|c| c.const_tensor(0).map(|t| vec![t.clone()])),
    );

    // Activations with attributes.
    r.add(
        OpSpec::new("LeakyRelu", &[1, 6, 16], A)
            .input("X", "T")
            .output("Y", "T")
            .attr(alpha(0.01))
            .attr(consumed())
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("PRelu", &[1, 6, 7, 9, 16], A)
            .input("X", "T")
            .input("slope", "T")
            .output("Y", "T")
            .attr(consumed())
            .types("T", PRELU)
            .infer(prelu)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Elu", &[1, 6, 22], A)
            .input("X", "T")
            .output("Y", "T")
            .attr(alpha(1.0))
            .attr(consumed())
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Selu", &[1, 6, 22], A)
            .input("X", "T")
            .output("Y", "T")
            .attr(AttrSpec::float("alpha", 1.6732632).float_buckets(SELU_B))
            .attr(AttrSpec::float("gamma", 1.050701).float_buckets(SELU_B))
            .attr(consumed())
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Celu", &[12], A)
            .input("X", "T")
            .output("Y", "T")
            .attr(AttrSpec::float("alpha", 1.0).float_buckets(CELU_B))
            .types("T", &[F32])
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Gelu", &[20], A)
            .input("X", "T")
            .output("Y", "T")
            .attr(AttrSpec::string("approximate", "none").one_of(&["none", "tanh"]))
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("HardSigmoid", &[1, 6, 22], A)
            .input("X", "T")
            .output("Y", "T")
            .attr(alpha(0.2))
            .attr(AttrSpec::float("beta", 0.5).float_buckets(OFFSET_B))
            .attr(consumed())
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("ThresholdedRelu", &[10, 22], A)
            .input("X", "T")
            .output("Y", "T")
            .attr(alpha(1.0))
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Shrink", &[9], A)
            .input("input", "T")
            .output("output", "T")
            .attr(AttrSpec::float("bias", 0.0).float_buckets(OFFSET_B))
            .attr(AttrSpec::float("lambd", 0.5).float_buckets(&OFFSET_B[1..]))
            .types("T", NUMERIC)
            .infer(unary)
            .requires(requires_ew),
    );
}

fn legacy_axis() -> AttrSpec {
    AttrSpec::of("axis", AttrKind::Int).versions(1, Some(7))
}

fn legacy_broadcast() -> AttrSpec {
    AttrSpec::int("broadcast", 0)
        .one_of_ints(&[0, 1])
        .versions(1, Some(7))
}

/// Binary op: numpy broadcasting from opset 7; before that, B is broadcast onto A only when
/// `broadcast`=1 (the output has A's shape), else both shapes must be equal.
fn legacy_binary(ctx: &InferCtx, dt: Option<DType>) -> Infer {
    let out_dt = dt.unwrap_or_else(|| {
        if ctx.dtype(0).is_known() {
            ctx.dtype(0)
        } else {
            ctx.dtype(1)
        }
    });
    if ctx.opset >= 7 {
        return broadcast(ctx, Some(out_dt));
    }
    let (a, b) = (ctx.tensor(0)?, ctx.tensor(1)?);
    let (Some(sa), Some(sb)) = (&a.shape, &b.shape) else {
        return Ok(vec![tensor(out_dt, a.shape)]);
    };
    if ctx.int("broadcast", 0) != 0 {
        if sb.len() > sa.len() {
            return Err(format!(
                "B of rank {} cannot be broadcast onto A of rank {}",
                sb.len(),
                sa.len()
            ));
        }
        let start = match ctx.int_opt("axis") {
            Some(ax) => norm_axis(ax, sa.len())?,
            None => sa.len() - sb.len(),
        };
        if start + sb.len() > sa.len() {
            return Err(format!(
                "B of rank {} at axis {start} overruns A of rank {}",
                sb.len(),
                sa.len()
            ));
        }
        for (k, d) in sb.iter().enumerate() {
            if let (Dim::Known(x), Dim::Known(y)) = (d, &sa[start + k])
                && x != y
                && *x != 1
            {
                return Err(format!(
                    "B dim {k} = {x} does not match A dim {} = {y}",
                    start + k
                ));
            }
        }
        return Ok(vec![tensor(out_dt, a.shape)]);
    }
    if sa.len() != sb.len() {
        return Err(format!(
            "without broadcast=1, A (rank {}) and B (rank {}) must have one shape",
            sa.len(),
            sb.len()
        ));
    }
    Ok(vec![tensor(
        out_dt,
        broadcast_shapes(&[a.shape.clone(), b.shape.clone()])?,
    )])
}

/// Validity rules beyond inference: dtypes that the op only accepts from some opset on, and
/// the op-specific constraints.
fn requires_ew(c: &InferCtx) -> Result<(), std::string::String> {
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
                return Err(format!(
                    "{op} takes {d} (slot {slot}) from opset {v}, model has {}",
                    c.opset
                ));
            }
            None => {
                return Err(format!(
                    "{op} does not take {d} (slot {slot}) at opset {}",
                    c.opset
                ));
            }
        }
        if op == "Erf" && d.is_int() && c.opset >= 13 {
            return Err(format!("Erf takes no {d} from opset 13"));
        }
    }
    match op {
        "Sum" | "Max" | "Min" | "Mean" => same_shapes_before_8(c),
        "Pow" if c.opset < 12 && c.dtype(1).is_known() && c.dtype(0) != c.dtype(1) => Err(format!(
            "Pow before opset 12 needs X and Y of one type, found {} and {}",
            c.dtype(0),
            c.dtype(1)
        )),
        "Mod" if c.int("fmod", 0) == 0 && c.dtype(0).is_float() => {
            Err(format!("Mod on {} needs fmod=1", c.dtype(0)))
        }
        "Celu" if c.float("alpha", 1.0) == 0.0 => {
            Err("Celu alpha must not be 0 (it divides x)".into())
        }
        "Clip" => {
            for (i, what) in [(1, "min"), (2, "max")] {
                if let Some(n) = c.input_type(i).tensor().and_then(|t| t.num_elements())
                    && n != 1
                {
                    return Err(format!("Clip {what} must be a scalar, found {n} elements"));
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

/// Before opset 8, the variadic ops take inputs of one shape.
fn same_shapes_before_8(ctx: &InferCtx) -> Result<(), std::string::String> {
    if ctx.opset >= 8 {
        return Ok(());
    }
    let shapes: Vec<Vec<Dim>> = (0..ctx.n_inputs())
        .filter_map(|i| ctx.tensor(i).ok().and_then(|t| t.shape))
        .collect();
    for s in shapes.iter().skip(1) {
        let s0 = &shapes[0];
        let differ = s.len() != s0.len()
            || s.iter()
                .zip(s0)
                .any(|(x, y)| matches!((x, y), (Dim::Known(a), Dim::Known(b)) if a != b));
        if differ {
            return Err(format!(
                "inputs of shapes {s0:?} and {s:?} differ (broadcasting needs opset 8)"
            ));
        }
    }
    Ok(())
}

/// PRelu: slope broadcasts onto X (unidirectionally from opset 7); the output has X's shape.
fn prelu(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let s = ctx.tensor(1)?;
    if ctx.opset >= 7
        && let (Some(sx), Some(ss)) = (&x.shape, &s.shape)
    {
        if ss.len() > sx.len() {
            return Err(format!(
                "slope of rank {} does not broadcast to X of rank {}",
                ss.len(),
                sx.len()
            ));
        }
        let off = sx.len() - ss.len();
        for (k, d) in ss.iter().enumerate() {
            if let (Dim::Known(a), Dim::Known(b)) = (d, &sx[off + k])
                && a != b
                && *a != 1
            {
                return Err(format!(
                    "slope dim {k} = {a} does not broadcast to X dim {} = {b}",
                    off + k
                ));
            }
        }
    }
    Ok(vec![tensor(x.dtype, x.shape)])
}

/// The target dtype of Cast (`to` is a dtype code; opset 1 spelled it as a name).
fn cast_target(ctx: &InferCtx) -> Option<DType> {
    match ctx.attr("to")? {
        AttrValue::Int(c) => Some(DType::from_code(*c as i32)),
        AttrValue::String(s) => {
            const NAMES: &[&str] = &[
                "FLOAT",
                "UINT8",
                "INT8",
                "UINT16",
                "INT16",
                "INT32",
                "INT64",
                "STRING",
                "BOOL",
                "FLOAT16",
                "DOUBLE",
                "UINT32",
                "UINT64",
                "COMPLEX64",
                "COMPLEX128",
                "BFLOAT16",
            ];
            let s = std::string::String::from_utf8_lossy(s).to_ascii_uppercase();
            NAMES
                .iter()
                .position(|n| *n == s)
                .map(|p| DType::from_code(p as i32 + 1))
        }
        _ => None,
    }
}

/// First opset of the low-precision dtypes in Cast, CastLike and Identity.
fn low_precision_since(d: DType) -> i64 {
    match d {
        BF16 => 13,
        F8E4M3FN | F8E4M3FNUZ | F8E5M2 | F8E5M2FNUZ => 19,
        U4 | I4 => 21,
        F4E2M1 => 23,
        F8E8M0 => 24,
        U2 | I2 => 25,
        _ => 1,
    }
}

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
fn fold_elementwise(c: &InferCtx) -> Option<Vec<Tensor>> {
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
fn fold_typed(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Node;
    use crate::tensor::from_i64s;
    use crate::types::{TensorType, ValueType};

    fn ctx<'a>(
        node: &'a Node,
        opset: i64,
        ins: Vec<ValueType>,
        consts: Vec<Option<Tensor>>,
    ) -> InferCtx<'a> {
        InferCtx::new(node, opset, ins.into_iter().map(Some).collect(), consts)
    }

    fn spec(op: &str) -> &'static OpSpec {
        Registry::global().get("", op).unwrap()
    }

    #[test]
    fn legacy_broadcast_keeps_shape_of_a() {
        let n = Node::new("Add", &["a", "b"], &["c"])
            .with_attr("broadcast", AttrValue::Int(1))
            .with_attr("axis", AttrValue::Int(1));
        let c = ctx(
            &n,
            6,
            vec![fixed(F32, &[2, 3, 4, 5]), fixed(F32, &[3, 4])],
            vec![None, None],
        );
        assert_eq!(
            (spec("Add").infer)(&c).unwrap(),
            vec![fixed(F32, &[2, 3, 4, 5])]
        );
        // Numpy rules would give [2,3,4,5] too for [5]; with axis=1 a [5] B clashes with dim 3.
        let c = ctx(
            &n,
            6,
            vec![fixed(F32, &[2, 3, 4, 5]), fixed(F32, &[5])],
            vec![None, None],
        );
        assert!((spec("Add").infer)(&c).is_err());
        // From opset 7 numpy broadcasting, symbolic dims kept.
        let n = Node::new("Add", &["a", "b"], &["c"]);
        let a = ValueType::Tensor(TensorType {
            dtype: F32,
            shape: Some(vec![Dim::Param("N".into()), Dim::Known(1)]),
        });
        let c = ctx(&n, 14, vec![a, fixed(F32, &[3])], vec![None, None]);
        let want = ValueType::Tensor(TensorType {
            dtype: F32,
            shape: Some(vec![Dim::Param("N".into()), Dim::Known(3)]),
        });
        assert_eq!((spec("Add").infer)(&c).unwrap(), vec![want]);
    }

    #[test]
    fn folds_broadcast_arithmetic_and_mod_sign() {
        let n = Node::new("Mul", &["a", "b"], &["c"]);
        let a = from_i64s("", &[2, 1], &[2, 3]);
        let b = from_i64s("", &[3], &[1, 10, 100]);
        let c = ctx(
            &n,
            14,
            vec![fixed(I64, &[2, 1]), fixed(I64, &[3])],
            vec![Some(a), Some(b)],
        );
        let out = (spec("Mul").fold.unwrap())(&c).unwrap();
        assert_eq!(out[0].dims, vec![2, 3]);
        assert_eq!(out[0].to_i64s().unwrap(), vec![2, 20, 200, 3, 30, 300]);
        // Mod follows the divisor's sign unless fmod=1.
        let a = from_i64s("", &[2], &[-7, 7]);
        let b = from_i64s("", &[1], &[3]);
        let n = Node::new("Mod", &["a", "b"], &["c"]);
        let c = ctx(
            &n,
            13,
            vec![fixed(I64, &[2]), fixed(I64, &[1])],
            vec![Some(a.clone()), Some(b.clone())],
        );
        assert_eq!(
            (spec("Mod").fold.unwrap())(&c).unwrap()[0]
                .to_i64s()
                .unwrap(),
            vec![2, 1]
        );
        let n = n.with_attr("fmod", AttrValue::Int(1));
        let c = ctx(
            &n,
            13,
            vec![fixed(I64, &[2]), fixed(I64, &[1])],
            vec![Some(a), Some(b)],
        );
        assert_eq!(
            (spec("Mod").fold.unwrap())(&c).unwrap()[0]
                .to_i64s()
                .unwrap(),
            vec![-1, 1]
        );
    }

    #[test]
    fn cast_and_where() {
        let n = Node::new("Cast", &["x"], &["y"]).with_attr("to", AttrValue::Int(1));
        let x = from_i64s("", &[2], &[4, -2]);
        let c = ctx(&n, 13, vec![fixed(I64, &[2])], vec![Some(x)]);
        assert_eq!((spec("Cast").infer)(&c).unwrap(), vec![fixed(F32, &[2])]);
        let out = (spec("Cast").fold.unwrap())(&c).unwrap();
        assert_eq!(out[0].dtype(), F32);
        assert_eq!(out[0].to_f64s().unwrap(), vec![4.0, -2.0]);
        let n = Node::new("Cast", &["x"], &["y"]).with_attr("to", AttrValue::Int(17));
        let c = ctx(&n, 13, vec![fixed(F32, &[2])], vec![None]);
        assert!((spec("Cast").requires.unwrap())(&c).is_err());
        // Where takes X's dtype, not the condition's.
        let n = Node::new("Where", &["c", "x", "y"], &["o"]);
        let c = ctx(
            &n,
            16,
            vec![fixed(Bool, &[2, 1]), fixed(I32, &[3]), fixed(I32, &[1])],
            vec![None, None, None],
        );
        assert_eq!(
            (spec("Where").infer)(&c).unwrap(),
            vec![fixed(I32, &[2, 3])]
        );
    }

    #[test]
    fn dtypes_follow_the_opset() {
        let n = Node::new("Add", &["a", "b"], &["c"]);
        let at = |op: &str, opset, d| {
            let n = Node {
                op_type: op.into(),
                ..n.clone()
            };
            let c = ctx(
                &n,
                opset,
                vec![fixed(d, &[2]), fixed(d, &[2])],
                vec![None, None],
            );
            (spec(op).requires.unwrap())(&c).is_ok()
        };
        assert!(!at("Add", 13, I8));
        assert!(at("Add", 14, I8));
        assert!(at("Add", 7, I64));
        assert!(!at("Acos", 13, BF16));
        assert!(at("Acos", 22, BF16));
        assert!(at("Erf", 9, I32));
        assert!(!at("Erf", 13, I32));
        assert!(!at("Equal", 9, F32));
        assert!(!at("Mod", 13, F32));
    }
}
