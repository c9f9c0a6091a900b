//! AffineGrid.

use super::{flag, known, shape_of};
use crate::dtype::DType;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn affine_grid(ctx: &InferCtx) -> Infer {
    let dt = ctx.dtype(0);
    if let Some(size) = ctx.const_i64s(1) {
        return match size.len() {
            4 => Ok(vec![fixed(dt, &[size[0], size[2], size[3], 2])]),
            5 => Ok(vec![fixed(dt, &[size[0], size[2], size[3], size[4], 3])]),
            n => Err(rule!("AffineGrid size has {n} values, expected 4 or 5")),
        };
    }
    let n = shape_of(ctx, 0)
        .and_then(|s| s.first().cloned())
        .unwrap_or(Dim::Unknown);
    Ok(vec![
        match shape_of(ctx, 1).and_then(|s| known(s.first())) {
            Some(4) => tensor(dt, Some(vec![n, Dim::Unknown, Dim::Unknown, Dim::Known(2)])),
            Some(5) => tensor(
                dt,
                Some(vec![
                    n,
                    Dim::Unknown,
                    Dim::Unknown,
                    Dim::Unknown,
                    Dim::Known(3),
                ]),
            ),
            _ => tensor(dt, None),
        },
    ])
}

/// Registers AffineGrid.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("AffineGrid", &[20], Category::Misc)
            .attr(flag("align_corners"))
            .input("theta", "T1")
            .input("size", "T2")
            .output("grid", "T1")
            .types("T1", FLOAT)
            .types("T2", &[DType::I64])
            .infer(affine_grid)
            .requires(|c| {
                affine_grid(c)?;
                if let (Some(t), Some(sz)) = (shape_of(c, 0), c.const_i64s(1)) {
                    let want = if sz.len() == 4 { [2, 3] } else { [3, 4] };
                    if t.len() != 3
                        || t[1].value().is_some_and(|v| v != want[0])
                        || t[2].value().is_some_and(|v| v != want[1])
                    {
                        return Err(rule!("theta must be [N, {}, {}]", want[0], want[1]));
                    }
                }
                Ok(())
            }),
    );
}
