//! The unary math ops without attributes (Abs, Acos, ..., Tanh, Not, BitwiseNot; the
//! activations among them are in `activation.rs`), IsNaN and IsInf.

use super::fold::fold_elementwise;
use super::requires::requires_ew;
use super::{FLT, consumed};
use crate::dtype::DType::{self, *};
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, OpSpec, Registry, Traits};

/// Floats and the 8-bit floats (IsNaN, IsInf from opset 20).
const FLT_F8: &[DType] = &[
    F16, F32, F64, BF16, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ,
];

/// A unary op: name, versions, dtypes, X/Y port names (else input/output), legacy
/// `consumed_inputs`, category, traits.
pub(super) type UnaryRow = (
    &'static str,
    &'static [i64],
    &'static [DType],
    bool,
    bool,
    Category,
    Traits,
);

/// Adds the unary ops of `rows`, whose output has the input's type.
pub(super) fn add_unary(r: &mut Registry, rows: &[UnaryRow]) {
    for &(name, versions, dts, xy, legacy, cat, traits) in rows {
        let (i, o) = if xy { ("X", "Y") } else { ("input", "output") };
        let mut s = OpSpec::new(name, versions, cat)
            .traits(traits)
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
}

/// Registers the unary math ops.
pub(super) fn register(r: &mut Registry) {
    use Category::{Elementwise as E, Logic as L};
    // Unary ops whose output has the input's type: (name, versions, dtypes, X/Y ports, legacy
    // `consumed_inputs` in opset 1, category, traits).
    #[rustfmt::skip]
    let unary_ops: &[UnaryRow] = &[
        ("Abs", &[1, 6, 13], NUMERIC, true, true, E, Traits::NONE),
        ("Acos", &[7, 22], FLT, false, false, E, Traits::NONE),
        ("Acosh", &[9, 22], FLT, false, false, E, Traits::NONE),
        ("Asin", &[7, 22], FLT, false, false, E, Traits::NONE),
        ("Asinh", &[9, 22], FLT, false, false, E, Traits::NONE),
        ("Atan", &[7, 22], FLT, false, false, E, Traits::NONE),
        ("Atanh", &[9, 22], FLT, false, false, E, Traits::NONE),
        ("Ceil", &[1, 6, 13], FLT, true, true, E, Traits::DISCRETE),
        ("Cos", &[7, 22], FLT, false, false, E, Traits::NONE),
        ("Cosh", &[9, 22], FLT, false, false, E, Traits::NONE),
        ("Erf", &[9, 13], NUMERIC, false, false, E, Traits::NONE),
        ("Exp", &[1, 6, 13], FLT, false, true, E, Traits::NONE),
        ("Floor", &[1, 6, 13], FLT, true, true, E, Traits::DISCRETE),
        ("Log", &[1, 6, 13], FLT, false, true, E, Traits::NONE),
        ("Neg", &[1, 6, 13], SIGNED_NUMERIC, true, true, E, Traits::NONE),
        ("Reciprocal", &[1, 6, 13], FLT, true, true, E, Traits::NONE),
        ("Round", &[11, 22], FLT, true, false, E, Traits::DISCRETE),
        ("Sign", &[9, 13], NUMERIC, false, false, E, Traits::DISCRETE | Traits::NAN_UNSPECIFIED),
        ("Sin", &[7, 22], FLT, false, false, E, Traits::NONE),
        ("Sinh", &[9, 22], FLT, false, false, E, Traits::NONE),
        ("Sqrt", &[1, 6, 13], FLT, true, true, E, Traits::NONE),
        ("Tan", &[7, 22], FLT, false, false, E, Traits::NONE),
        ("Tanh", &[1, 6, 13], FLT, false, true, E, Traits::ACTIVATION),
        ("Not", &[1], BOOL, true, false, L, Traits::NONE),
        ("BitwiseNot", &[18], INT, true, false, E, Traits::NONE),
    ];
    add_unary(r, unary_ops);
}

/// Registers IsNaN and IsInf.
pub(super) fn register_is_nan_inf(r: &mut Registry) {
    use Category::Logic as L;
    r.add(
        OpSpec::new("IsNaN", &[9, 13, 20], L)
            .traits(Traits::DISCRETE)
            .input("X", "T1")
            .output("Y", "T2")
            .types("T1", FLT_F8)
            .types("T2", BOOL)
            .infer(|c| unary_to(c, Bool))
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("IsInf", &[10, 20], L)
            .traits(Traits::DISCRETE)
            .input("X", "T1")
            .output("Y", "T2")
            .attr(AttrSpec::int("detect_negative", 1).one_of_ints(&[0, 1]))
            .attr(AttrSpec::int("detect_positive", 1).one_of_ints(&[0, 1]))
            .types("T1", FLT_F8)
            .types("T2", BOOL)
            .infer(|c| unary_to(c, Bool))
            .requires(requires_ew),
    );
}
