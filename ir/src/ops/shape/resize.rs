//! Resize and its predecessor Upsample.

use super::{CLASSIC15, CLASSIC16, I64_ONLY, I64T, axes_of, out, unknown_dims};
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType::{self, F16, F32, F64};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// Resize roi.
const ROI_T: &[DType] = &[F32, F16, F64];

/// `floor(d * scale)` as ONNX computes it (in single precision).
fn scaled(d: &Dim, scale: f64) -> Dim {
    match d {
        Dim::Known(v) => Dim::Known(((*v as f32) * scale as f32).floor() as i64),
        other if scale == 1.0 => other.clone(),
        _ => Dim::Unknown,
    }
}

fn infer_resize(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    let r = s.len();
    let (scales_at, sizes_at) = if ctx.opset < 11 {
        (1, usize::MAX)
    } else {
        (2, 3)
    };
    let axes: Vec<usize> = match ctx.ints("axes") {
        Some(a) => axes_of(a, r)?,
        None => (0..r).collect(),
    };
    let scales = ctx.const_f64s(scales_at).filter(|v| !v.is_empty());
    let sizes = ctx.const_i64s(sizes_at).filter(|v| !v.is_empty());
    let mut res = s.clone();
    if let Some(sizes) = sizes {
        if sizes.len() != axes.len() {
            return Err(rule!(
                "Resize sizes {sizes:?} has {} values for {} axes",
                sizes.len(),
                axes.len()
            ));
        }
        let policy = ctx.string("keep_aspect_ratio_policy", "stretch");
        if policy == "stretch" {
            for (k, &a) in axes.iter().enumerate() {
                res[a] = Dim::Known(sizes[k]);
            }
        } else {
            let dims: Option<Vec<i64>> = axes.iter().map(|&a| s[a].value()).collect();
            let Some(dims) = dims else {
                for &a in &axes {
                    res[a] = Dim::Unknown;
                }
                return out(x.dtype, Some(res));
            };
            let ratios = dims.iter().zip(&sizes).map(|(&d, &z)| z as f32 / d as f32);
            let scale = if policy == "not_larger" {
                ratios.fold(f32::INFINITY, f32::min)
            } else {
                ratios.fold(f32::NEG_INFINITY, f32::max)
            };
            for (k, &a) in axes.iter().enumerate() {
                res[a] = Dim::Known((scale * dims[k] as f32).round() as i64);
            }
        }
        return out(x.dtype, Some(res));
    }
    if let Some(scales) = scales {
        if scales.len() != axes.len() {
            return Err(rule!(
                "Resize scales {scales:?} has {} values for {} axes",
                scales.len(),
                axes.len()
            ));
        }
        if let Some(v) = scales.iter().find(|v| **v <= 0.0) {
            return Err(rule!("Resize scale {v} is not positive"));
        }
        for (k, &a) in axes.iter().enumerate() {
            res[a] = scaled(&s[a], scales[k]);
        }
        return out(x.dtype, Some(res));
    }
    for &a in &axes {
        res[a] = Dim::Unknown;
    }
    out(x.dtype, Some(res))
}

fn infer_upsample(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    let scales: Option<Vec<f64>> = if ctx.opset < 7 {
        if s.len() != 4 {
            return Err(rule!(
                "Upsample-1 needs a 4-D input, found rank {}",
                s.len()
            ));
        }
        Some(vec![
            1.0,
            1.0,
            ctx.float("height_scale", 1.0) as f64,
            ctx.float("width_scale", 1.0) as f64,
        ])
    } else if ctx.opset < 9 {
        ctx.floats("scales")
            .map(|v| v.iter().map(|&f| f as f64).collect())
    } else {
        ctx.const_f64s(1)
    };
    match scales {
        Some(sc) => {
            if sc.len() != s.len() {
                return Err(rule!(
                    "Upsample scales {sc:?} has {} values for rank {}",
                    sc.len(),
                    s.len()
                ));
            }
            out(
                x.dtype,
                Some(s.iter().zip(&sc).map(|(d, &k)| scaled(d, k)).collect()),
            )
        }
        None => out(x.dtype, Some(unknown_dims(s.len()))),
    }
}

/// Registers Resize and Upsample.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Resize", &[10, 11, 13, 18, 19], Category::Shape)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED | Traits::RESHAPING)
            .input("X", "T1")
            .opt_input("roi", "T2")
            .opt_input("scales", "tensor(float)")
            .opt_input("sizes", I64T)
            .output("Y", "T1")
            .attr(AttrSpec::string("mode", "nearest").one_of(&["nearest", "linear", "cubic"]))
            .attr(
                AttrSpec::string("coordinate_transformation_mode", "half_pixel")
                    .one_of(&[
                        "half_pixel",
                        "align_corners",
                        "asymmetric",
                        "pytorch_half_pixel",
                        "tf_crop_and_resize",
                        "half_pixel_symmetric",
                        "tf_half_pixel_for_nn",
                    ])
                    .versions(11, None),
            )
            .attr(
                AttrSpec::float("cubic_coeff_a", -0.75)
                    .float_buckets(&[
                        (f64::NEG_INFINITY, -0.75),
                        (-0.75, -0.7),
                        (-0.7, f64::INFINITY),
                    ])
                    .versions(11, None),
            )
            .attr(
                AttrSpec::int("exclude_outside", 0)
                    .one_of_ints(&[0, 1])
                    .versions(11, None),
            )
            .attr(AttrSpec::float("extrapolation_value", 0.0).versions(11, None))
            .attr(
                AttrSpec::string("nearest_mode", "round_prefer_floor")
                    .one_of(&["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
                    .versions(11, None),
            )
            .attr(
                AttrSpec::int("antialias", 0)
                    .one_of_ints(&[0, 1])
                    .versions(18, None),
            )
            .attr(AttrSpec::of("axes", AttrKind::Ints).versions(18, None))
            .attr(
                AttrSpec::string("keep_aspect_ratio_policy", "stretch")
                    .one_of(&["stretch", "not_larger", "not_smaller"])
                    .versions(18, None),
            )
            .types("T1", CLASSIC16)
            .types("T2", ROI_T)
            .types("tensor(float)", &[F32])
            .types(I64T, I64_ONLY)
            .infer(infer_resize),
    );
    r.add(
        OpSpec::new("Upsample", &[1, 7, 9], Category::Shape)
            .removed_at(10)
            .input("X", "T")
            .input_from("scales", "tensor(float)", 9)
            .output("Y", "T")
            .attr(AttrSpec::string("mode", "nearest").one_of(&["nearest", "linear", "bilinear"]))
            .attr(
                AttrSpec::of("height_scale", AttrKind::Float)
                    .required()
                    .versions(1, Some(7)),
            )
            .attr(
                AttrSpec::of("width_scale", AttrKind::Float)
                    .required()
                    .versions(1, Some(7)),
            )
            .attr(
                AttrSpec::of("scales", AttrKind::Floats)
                    .required()
                    .versions(7, Some(9)),
            )
            .types("T", CLASSIC15)
            .types("tensor(float)", &[F32])
            .infer(infer_upsample),
    );
}
