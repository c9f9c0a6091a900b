//! The binary broadcasting ops: Add, Sub, Mul, Div, And, Or, Xor, Equal, Greater, Less,
//! GreaterOrEqual, LessOrEqual, BitwiseAnd, BitwiseOr, BitwiseXor, Pow, Mod and BitShift, with
//! the broadcasting rules of the opsets before 7.

use super::consumed;
use super::fold::fold_elementwise;
use super::requires::requires_ew;
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType::{self, *};
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// Unsigned integers (BitShift).
const UINT: &[DType] = &[U8, U16, U32, U64];
/// Base of Pow.
const POW_BASE: &[DType] = &[F16, F32, F64, BF16, I32, I64];
/// Equal (strings from opset 19).
const EQUAL: &[DType] = &[
    I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BF16, Bool, String,
];

/// A binary op: name, versions, dtypes of A and B, bool output, category, traits.
type BinaryRow = (
    &'static str,
    &'static [i64],
    &'static [DType],
    bool,
    Category,
    Traits,
);

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
            return Err(rule!(
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
            return Err(rule!(
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
                return Err(rule!(
                    "B dim {k} = {x} does not match A dim {} = {y}",
                    start + k
                ));
            }
        }
        return Ok(vec![tensor(out_dt, a.shape)]);
    }
    if sa.len() != sb.len() {
        return Err(rule!(
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

/// Registers the binary ops.
pub(super) fn register(r: &mut Registry) {
    use Category::{Elementwise as E, Logic as L};
    // Binary broadcasting ops: (name, versions, dtypes of A/B, bool output, category, traits).
    #[rustfmt::skip]
    let binary_ops: &[BinaryRow] = &[
        ("Add", &[1, 6, 7, 13, 14], NUMERIC, false, E, Traits::NONE),
        ("Sub", &[1, 6, 7, 13, 14], NUMERIC, false, E, Traits::NONE),
        ("Mul", &[1, 6, 7, 13, 14], NUMERIC, false, E, Traits::NONE),
        ("Div", &[1, 6, 7, 13, 14], NUMERIC, false, E, Traits::NONE),
        ("And", &[1, 7], BOOL, true, L, Traits::NONE),
        ("Or", &[1, 7], BOOL, true, L, Traits::NONE),
        ("Xor", &[1, 7], BOOL, true, L, Traits::NONE),
        ("Equal", &[1, 7, 11, 13, 19], EQUAL, true, L, Traits::DISCRETE | Traits::NAN_UNSPECIFIED),
        ("Greater", &[1, 7, 9, 13], NUMERIC, true, L, Traits::DISCRETE | Traits::NAN_UNSPECIFIED),
        ("Less", &[1, 7, 9, 13], NUMERIC, true, L, Traits::DISCRETE | Traits::NAN_UNSPECIFIED),
        ("GreaterOrEqual", &[12, 16], NUMERIC, true, L, Traits::DISCRETE | Traits::NAN_UNSPECIFIED),
        ("LessOrEqual", &[12, 16], NUMERIC, true, L, Traits::DISCRETE | Traits::NAN_UNSPECIFIED),
        ("BitwiseAnd", &[18], INT, false, E, Traits::NONE),
        ("BitwiseOr", &[18], INT, false, E, Traits::NONE),
        ("BitwiseXor", &[18], INT, false, E, Traits::NONE),
    ];
    for &(name, versions, dts, to_bool, cat, traits) in binary_ops {
        let mut s = OpSpec::new(name, versions, cat)
            .traits(traits)
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
            .traits(Traits::DISCRETE)
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
}
