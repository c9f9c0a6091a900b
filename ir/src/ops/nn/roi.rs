//! The pools over regions of interest: MaxRoiPool and RoiAlign.

use super::{MAX, known, shape_of};
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// A `spatial_scale` of zero or less maps every ROI to a point or mirrors it: ONNX gives the
/// scale no range, ONNX Runtime refuses it.
fn positive_spatial_scale(ctx: &InferCtx) -> Result<(), InferError> {
    let s = ctx.float("spatial_scale", 1.0);
    if s > 0.0 {
        Ok(())
    } else {
        Err(rule!("spatial_scale {s} is not positive"))
    }
}

fn max_roi_pool(ctx: &InferCtx) -> Infer {
    let xs = shape_of(ctx, 0);
    let rs = shape_of(ctx, 1);
    let ps = ctx
        .ints("pooled_shape")
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    if ps.len() != 2 {
        return Err(rule!("pooled_shape must have 2 values, found {}", ps.len()));
    }
    let r = rs
        .as_ref()
        .and_then(|s| s.first().cloned())
        .unwrap_or(Dim::Unknown);
    let c = xs
        .as_ref()
        .and_then(|s| s.get(1).cloned())
        .unwrap_or(Dim::Unknown);
    Ok(vec![tensor(
        ctx.dtype(0),
        Some(vec![r, c, Dim::Known(ps[0]), Dim::Known(ps[1])]),
    )])
}

fn roi_align(ctx: &InferCtx) -> Infer {
    let xs = shape_of(ctx, 0);
    let rs = shape_of(ctx, 1);
    let bs = shape_of(ctx, 2);
    if let Some(x) = &xs
        && x.len() != 4
    {
        return Err(rule!("RoiAlign input must have rank 4, found {}", x.len()));
    }
    let r = rs
        .as_ref()
        .and_then(|s| s.first().cloned())
        .filter(|d| *d != Dim::Unknown)
        .or_else(|| bs.as_ref().and_then(|s| s.first().cloned()))
        .unwrap_or(Dim::Unknown);
    let c = xs.as_ref().map_or(Dim::Unknown, |s| s[1].clone());
    let (h, w) = (ctx.int("output_height", 1), ctx.int("output_width", 1));
    Ok(vec![tensor(
        ctx.dtype(0),
        Some(vec![r, c, Dim::Known(h), Dim::Known(w)]),
    )])
}

/// Registers MaxRoiPool and RoiAlign.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("MaxRoiPool", &[1, 22], Category::Pool)
            .traits(Traits::NAN_UNSPECIFIED)
            .attr(
                AttrSpec::of("pooled_shape", AttrKind::Ints)
                    .required()
                    .range(1, MAX),
            )
            .attr(AttrSpec::float("spatial_scale", 1.0).float_buckets(&[
                (f64::MIN_POSITIVE, 0.1),
                (0.1, 1.0),
                (1.0, 1.0 + 1e-6),
                (1.0 + 1e-6, f64::INFINITY),
            ]))
            .input("X", "T")
            .input("rois", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(max_roi_pool)
            .ambiguous(positive_spatial_scale)
            .requires(|c| {
                max_roi_pool(c)?;
                if let Some(x) = shape_of(c, 0)
                    && x.len() != 4
                {
                    return Err(rule!("X must be 4-D (N, C, H, W), found rank {}", x.len()));
                }
                match shape_of(c, 1) {
                    Some(r) if r.len() != 2 || r[1].value().is_some_and(|v| v != 5) => {
                        Err(rule!("rois must be [num_rois, 5], found rank {}", r.len()))
                    }
                    _ => Ok(()),
                }
            }),
    );
    r.add(
        OpSpec::new("RoiAlign", &[10, 16, 22], Category::Pool)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .attr(AttrSpec::string("mode", "avg").one_of(&["avg", "max"]))
            .attr(
                AttrSpec::int("output_height", 1)
                    .range(1, MAX)
                    .int_buckets(&[(1, 1), (2, 7), (8, MAX)]),
            )
            .attr(
                AttrSpec::int("output_width", 1)
                    .range(1, MAX)
                    .int_buckets(&[(1, 1), (2, 7), (8, MAX)]),
            )
            .attr(
                AttrSpec::int("sampling_ratio", 0)
                    .range(0, MAX)
                    .int_buckets(&[(0, 0), (1, 1), (2, 4), (5, MAX)]),
            )
            .attr(AttrSpec::float("spatial_scale", 1.0).float_buckets(&[
                (f64::MIN_POSITIVE, 0.1),
                (0.1, 1.0),
                (1.0, 1.0 + 1e-6),
                (1.0 + 1e-6, f64::INFINITY),
            ]))
            .attr(
                AttrSpec::string("coordinate_transformation_mode", "half_pixel")
                    .one_of(&["half_pixel", "output_half_pixel"])
                    .versions(16, None),
            )
            .input("X", "T1")
            .input("rois", "T1")
            .input("batch_indices", "T2")
            .output("Y", "T1")
            .types("T1", FLOAT)
            .types("T2", &[DType::I64])
            .infer(roi_align)
            .ambiguous(positive_spatial_scale)
            .requires(|c| {
                roi_align(c)?;
                let r = shape_of(c, 1);
                if let Some(r) = &r
                    && (r.len() != 2 || r[1].value().is_some_and(|v| v != 4))
                {
                    return Err(rule!("rois must be [num_rois, 4], found {r:?}"));
                }
                if let (Some(r), Some(b)) = (r, shape_of(c, 2))
                    && let (Some(a), Some(b)) = (known(r.first()), known(b.first()))
                    && a != b
                {
                    return Err(rule!("{a} rois but {b} batch indices"));
                }
                Ok(())
            }),
    );
}
