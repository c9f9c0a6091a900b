//! Identity.

use super::requires::requires_ew;
use crate::dtype::sets::*;
use crate::registry::{Category, OpSpec, Registry};

/// Registers Identity.
pub(super) fn register(r: &mut Registry) {
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
}
