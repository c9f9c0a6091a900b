//! NonMaxSuppression.

use crate::dtype::DType::{F32, I64};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn nms_infer(ctx: &InferCtx) -> Infer {
    let b = ctx.tensor(0)?;
    let s = ctx.tensor(1)?;
    if let Some(r) = b.rank()
        && r != 3
    {
        return Err(rule!("NonMaxSuppression boxes must be 3-D, found rank {r}"));
    }
    if let Some(r) = s.rank()
        && r != 3
    {
        return Err(rule!(
            "NonMaxSuppression scores must be 3-D, found rank {r}"
        ));
    }
    Ok(vec![tensor(I64, Some(vec![Dim::Unknown, Dim::Known(3)]))])
}

/// Registers NonMaxSuppression.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("NonMaxSuppression", &[10, 11], Category::Misc)
            .input("boxes", "tensor(float)")
            .input("scores", "tensor(float)")
            .opt_input("max_output_boxes_per_class", "tensor(int64)")
            .opt_input("iou_threshold", "tensor(float)")
            .opt_input("score_threshold", "tensor(float)")
            .output("selected_indices", "tensor(int64)")
            .attr(AttrSpec::int("center_point_box", 0).one_of_ints(&[0, 1]))
            .types("tensor(float)", &[F32])
            .types("tensor(int64)", &[I64])
            .infer(nms_infer),
    );
}
