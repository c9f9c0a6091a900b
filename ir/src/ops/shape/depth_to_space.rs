//! DepthToSpace and its inverse SpaceToDepth.

use super::{CLASSIC16, dim_mul, out, unknown_dims};
use crate::attr::{AttrKind, AttrLookup};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// Buckets of a block size.
const BLOCK_BUCKETS: &[(i64, i64)] = &[(i64::MIN, 1), (2, 2), (3, 3), (4, i64::MAX)];

/// `d / k` if exact.
fn dim_div(d: &Dim, k: i64, what: &str) -> Result<Dim, InferError> {
    match d {
        Dim::Known(v) if k > 0 && v % k != 0 => Err(rule!("{what} {v} is not divisible by {k}")),
        Dim::Known(v) if k > 0 => Ok(Dim::Known(v / k)),
        other if k == 1 => Ok(other.clone()),
        _ => Ok(Dim::Unknown),
    }
}

fn infer_depth_to_space(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let b = ctx.int("blocksize", 0);
    if b <= 0 {
        return Err(rule!("blocksize {b} must be positive"));
    }
    let Some(s) = x.shape else {
        return out(x.dtype, Some(unknown_dims(4)));
    };
    if s.len() != 4 {
        return Err(rule!(
            "DepthToSpace needs a 4-D input, found rank {}",
            s.len()
        ));
    }
    let c = dim_div(&s[1], b.saturating_mul(b), "channels")?;
    out(
        x.dtype,
        Some(vec![s[0].clone(), c, dim_mul(&s[2], b), dim_mul(&s[3], b)]),
    )
}

fn infer_space_to_depth(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let b = ctx.int("blocksize", 0);
    if b <= 0 {
        return Err(rule!("blocksize {b} must be positive"));
    }
    let Some(s) = x.shape else {
        return out(x.dtype, Some(unknown_dims(4)));
    };
    if s.len() != 4 {
        return Err(rule!(
            "SpaceToDepth needs a 4-D input, found rank {}",
            s.len()
        ));
    }
    let h = dim_div(&s[2], b, "height")?;
    let w = dim_div(&s[3], b, "width")?;
    out(
        x.dtype,
        Some(vec![
            s[0].clone(),
            dim_mul(&s[1], b.saturating_mul(b)),
            h,
            w,
        ]),
    )
}

/// Registers DepthToSpace and SpaceToDepth.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("DepthToSpace", &[1, 11, 13], Category::Shape)
            .traits(Traits::RESHAPING)
            .input("input", "T")
            .output("output", "T")
            .attr(
                AttrSpec::of("blocksize", AttrKind::Int)
                    .required()
                    .range(1, i64::MAX)
                    .int_buckets(BLOCK_BUCKETS),
            )
            .attr(
                AttrSpec::string("mode", "DCR")
                    .one_of(&["DCR", "CRD"])
                    .versions(11, None),
            )
            .types("T", CLASSIC16)
            .infer(infer_depth_to_space),
    );
    r.add(
        OpSpec::new("SpaceToDepth", &[1, 13], Category::Shape)
            .traits(Traits::RESHAPING)
            .input("input", "T")
            .output("output", "T")
            .attr(
                AttrSpec::of("blocksize", AttrKind::Int)
                    .required()
                    .range(1, i64::MAX)
                    .int_buckets(BLOCK_BUCKETS),
            )
            .types("T", CLASSIC16)
            .infer(infer_space_to_depth),
    );
}
