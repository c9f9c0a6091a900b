//! CumSum.

use super::REDUCE_T;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};

fn cumsum_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    if let (Some(r), Some(a)) = (x.rank(), ctx.const_i64s(1))
        && let Some(&a) = a.first()
    {
        norm_axis(a, r)?;
    }
    Ok(vec![tensor(x.dtype, x.shape)])
}

/// Registers CumSum.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("CumSum", &[11, 14], Category::Reduce)
            .input("x", "T")
            .input("axis", "T2")
            .output("y", "T")
            .attr(AttrSpec::int("exclusive", 0).one_of_ints(&[0, 1]))
            .attr(AttrSpec::int("reverse", 0).one_of_ints(&[0, 1]))
            .types("T", REDUCE_T)
            .types("T2", INDEX)
            .infer(cumsum_infer)
            .ambiguous(|c| vector_for_scalar(c, "CumSum", &[1])),
    );
}
