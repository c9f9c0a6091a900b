//! The unary math ops without attributes (Abs, Acos, ..., Tanh, Not, BitwiseNot; the
//! activations among them are in `activation.rs`), IsNaN and IsInf.

use super::fold::fold_elementwise;
use super::requires::requires_ew;
use super::{FLT, consumed};
use crate::dtype::DType::{self, *};
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, OpSpec, Registry};

/// Floats and the 8-bit floats (IsNaN, IsInf from opset 20).
const FLT_F8: &[DType] = &[
    F16, F32, F64, BF16, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ,
];

/// A unary op: name, versions, dtypes, X/Y port names (else input/output), legacy
/// `consumed_inputs`, category.
pub(super) type UnaryRow = (
    &'static str,
    &'static [i64],
    &'static [DType],
    bool,
    bool,
    Category,
);

/// Adds the unary ops of `rows`, whose output has the input's type.
pub(super) fn add_unary(r: &mut Registry, rows: &[UnaryRow]) {
    for &(name, versions, dts, xy, legacy, cat) in rows {
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
}

/// Registers the unary math ops.
pub(super) fn register(r: &mut Registry) {
    use Category::{Elementwise as E, Logic as L};
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
    ];
    add_unary(r, unary_ops);
}

/// Registers IsNaN and IsInf.
pub(super) fn register_is_nan_inf(r: &mut Registry) {
    use Category::Logic as L;
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
}
