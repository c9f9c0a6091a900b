//! The window functions: HannWindow, HammingWindow and BlackmanWindow.

use super::const_scalar;
use crate::dtype::DType::F32;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn window_infer(ctx: &InferCtx) -> Infer {
    let dt = dtype_attr(ctx, "output_datatype", F32);
    let n = match const_scalar(ctx, 0) {
        Some(n) if n >= 0 => Dim::Known(n),
        Some(n) => return Err(rule!("window size {n} is negative")),
        None => Dim::Unknown,
    };
    Ok(vec![tensor(dt, Some(vec![n]))])
}

/// Registers HannWindow, HammingWindow and BlackmanWindow.
pub(super) fn register(r: &mut Registry) {
    for name in ["HannWindow", "HammingWindow", "BlackmanWindow"] {
        r.add(
            OpSpec::new(name, &[17], Category::Misc)
                .input("size", "T1")
                .output("output", "T2")
                .attr(AttrSpec::int("output_datatype", 1).one_of_ints(&dtype_codes(NUMERIC)))
                .attr(AttrSpec::int("periodic", 1).one_of_ints(&[0, 1]))
                .types("T1", INDEX)
                .types("T2", NUMERIC)
                .infer(window_infer),
        );
    }
}
