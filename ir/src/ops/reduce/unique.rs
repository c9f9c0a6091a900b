//! Unique.

use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType::{self, I64};
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// Types of Unique (no bf16, but strings, bool and complex).
const UNIQUE_T: &[DType] = CLASSIC;

fn unique_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let axis = match (ctx.int_opt("axis"), x.rank()) {
        (Some(a), Some(r)) => Some(Some(norm_axis(a, r)?)),
        (Some(_), None) => None,
        (None, _) => Some(None),
    };
    let (y, n_in) = match axis {
        // Flattened: one unique element per entry.
        Some(None) => (
            Some(vec![Dim::Unknown]),
            x.shape
                .as_ref()
                .map(|s| dims_product(s).map(Dim::Known).unwrap_or(Dim::Unknown))
                .unwrap_or(Dim::Unknown),
        ),
        Some(Some(a)) => {
            let s = x.shape.clone().unwrap_or_default();
            let n = s[a].clone();
            let mut y = s;
            y[a] = Dim::Unknown;
            (Some(y), n)
        }
        None => (None, Dim::Unknown),
    };
    Ok(vec![
        tensor(x.dtype, y),
        tensor(I64, Some(vec![Dim::Unknown])),
        tensor(I64, Some(vec![n_in])),
        tensor(I64, Some(vec![Dim::Unknown])),
    ])
}

/// Registers Unique.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Unique", &[11], Category::Index)
            .traits(Traits::DISCRETE)
            .input("X", "T")
            .output("Y", "T")
            .opt_output("indices", "tensor(int64)")
            .opt_output("inverse_indices", "tensor(int64)")
            .opt_output("counts", "tensor(int64)")
            .attr(AttrSpec::of("axis", AttrKind::Int).int_buckets(AXIS_BUCKETS))
            .attr(
                AttrSpec::int("sorted", 1)
                    .one_of_ints(&[0, 1])
                    .int_buckets(&[(1, 1)]),
            )
            .types("T", UNIQUE_T)
            .types("tensor(int64)", &[I64])
            .infer(unique_infer),
    );
}
