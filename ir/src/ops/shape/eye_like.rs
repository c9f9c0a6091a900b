//! EyeLike.

use super::{out, unknown_dims};
use crate::attr::AttrKind;
use crate::dtype::DType::{self, BF16, Bool, F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};

/// EyeLike types.
const EYE_T: &[DType] = &[
    F32, U8, I8, U16, I16, I32, I64, Bool, F16, F64, U32, U64, BF16,
];

fn infer_eye_like(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let dt = dtype_attr(ctx, "dtype", x.dtype);
    if let Some(r) = x.rank()
        && r != 2
    {
        return Err(rule!("EyeLike needs a 2-D input, found rank {r}"));
    }
    out(dt, Some(x.shape.unwrap_or_else(|| unknown_dims(2))))
}

/// Registers EyeLike.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("EyeLike", &[9, 22], Category::Misc)
            .input("input", "T1")
            .output("output", "T2")
            .attr(
                AttrSpec::of("dtype", AttrKind::Int)
                    .one_of_ints(&[1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16]),
            )
            .attr(AttrSpec::int("k", 0).int_buckets(&[
                (i64::MIN, -1),
                (0, 0),
                (1, 1),
                (2, i64::MAX),
            ]))
            .types("T1", EYE_T)
            .types("T2", EYE_T)
            .infer(infer_eye_like),
    );
}
