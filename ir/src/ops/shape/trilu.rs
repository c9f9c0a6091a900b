//! Trilu.

use super::{CLASSIC16, I64_ONLY, I64T, out};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};

fn infer_trilu(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    if let Some(r) = x.rank()
        && r < 2
    {
        return Err(rule!("Trilu needs rank 2 or more, found {r}"));
    }
    out(x.dtype, x.shape)
}

/// Registers Trilu.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Trilu", &[14], Category::Shape)
            .input("input", "T")
            .opt_input("k", I64T)
            .output("output", "T")
            .attr(AttrSpec::int("upper", 1).one_of_ints(&[0, 1]))
            .types("T", CLASSIC16)
            .types(I64T, I64_ONLY)
            .infer(infer_trilu),
    );
}
