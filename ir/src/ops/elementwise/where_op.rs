//! Where.

use super::fold::fold_elementwise;
use super::requires::requires_ew;
use crate::dtype::DType::{self, *};
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{Category, OpSpec, Registry, Traits};

/// Where: any non-low-precision type.
const WHERE: &[DType] = &[
    I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BF16, Bool, String, C64, C128,
];

/// Registers Where.
pub(super) fn register(r: &mut Registry) {
    use Category::Elementwise as E;
    r.add(
        OpSpec::new("Where", &[9, 16], E)
            .traits(Traits::DISCRETE | Traits::NAN_UNSPECIFIED)
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
}
