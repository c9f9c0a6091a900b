//! ArgMax and ArgMin.

use super::reduce_x::reduce_dims;
use crate::attr::AttrLookup;
use crate::dtype::DType::I64;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};

fn arg_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let keep = ctx.int("keepdims", 1) != 0;
    let shape = match &x.shape {
        None => None,
        Some(s) => {
            let a = norm_axis(ctx.int("axis", 0), s.len())?;
            Some(reduce_dims(s, &[a], keep))
        }
    };
    Ok(vec![tensor(I64, shape)])
}

/// Registers ArgMax and ArgMin.
pub(super) fn register(r: &mut Registry) {
    for name in ["ArgMax", "ArgMin"] {
        r.add(
            OpSpec::new(name, &[1, 11, 12, 13], Category::Reduce)
                .traits(Traits::DISCRETE | Traits::NAN_UNSPECIFIED)
                .input("data", "T")
                .output("reduced", "tensor(int64)")
                .attr(AttrSpec::int("axis", 0).int_buckets(AXIS_BUCKETS))
                .attr(AttrSpec::int("keepdims", 1).one_of_ints(&[0, 1]))
                .attr(
                    AttrSpec::int("select_last_index", 0)
                        .one_of_ints(&[0, 1])
                        .versions(12, None),
                )
                .types("T", NUMERIC)
                .types("tensor(int64)", &[I64])
                .infer(arg_infer),
        );
    }
}
