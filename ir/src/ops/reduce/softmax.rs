//! The softmax family: Softmax, LogSoftmax and Hardmax.

use crate::attr::AttrLookup;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};

fn softmax_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    if let Some(r) = x.rank() {
        let default = if ctx.opset < 13 { 1 } else { -1 };
        let axis = ctx.int("axis", default);
        // Opset 1 flattens around the axis and does not check it.
        if ctx.opset >= 11 && (r > 0 || axis != 0 && axis != -1) {
            norm_axis(axis, r)?;
        }
    }
    Ok(vec![tensor(x.dtype, x.shape)])
}

/// Registers Softmax, LogSoftmax and Hardmax.
pub(super) fn register(r: &mut Registry) {
    let rows = [
        (
            "Softmax",
            Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED | Traits::ACTIVATION,
        ),
        (
            "LogSoftmax",
            Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED,
        ),
        ("Hardmax", Traits::DISCRETE | Traits::NAN_UNSPECIFIED),
    ];
    for (name, traits) in rows {
        r.add(
            OpSpec::new(name, &[1, 11, 13], Category::Softmax)
                .traits(traits)
                .input("input", "T")
                .output("output", "T")
                // The default is 1 before opset 13 and -1 from 13 on; `softmax_infer` knows.
                .attr(AttrSpec::int("axis", -1).int_buckets(AXIS_BUCKETS))
                .types("T", FLOAT)
                .infer(softmax_infer),
        );
    }
}
