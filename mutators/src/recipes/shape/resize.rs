//! `Resize` and `Upsample`: scales or sizes on the last two axes, every mode and coordinate
//! transformation of the opset, `roi` for `tf_crop_and_resize`, `axes` from opset 18.
use super::LIMIT;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn resize(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let opset = site.opset();
    let spatial_from = r.saturating_sub(2);
    let scales = draw_scales(rng, &d, spatial_from);
    let sizes: Vec<i64> = d
        .iter()
        .zip(&scales)
        .map(|(&v, &s)| ((v as f64 * s).floor() as i64).max(1))
        .collect();
    let linear_ok = r == 2 || r == 4;
    let mode = if linear_ok {
        pick(rng, &["nearest", "linear", "cubic"])
    } else {
        "nearest"
    };
    if op == "Upsample" {
        return upsample(op, site, x, rng, mode, &scales);
    }
    let mut a = Attrs::new();
    if mode != "nearest" || chance(rng, 0.5) {
        a.push(("mode", astr(mode)));
    }
    if opset >= 11 {
        resize_attrs(rng, &mut a, mode, opset);
    }
    let crop = a
        .iter()
        .any(|(k, v)| *k == "coordinate_transformation_mode" && *v == astr("tf_crop_and_resize"));
    if opset < 11 {
        let s = site.constant_f64s("scales", DType::F32, &[r as i64], &scales);
        return site.op1(op, &[x, &s], a);
    }
    let roi = roi_input(site, crop, r, spatial_from);
    if opset >= 18 && !crop && chance(rng, 0.4) {
        let spatial = &Spatial {
            from: spatial_from,
            scales: &scales,
            sizes: &sizes,
        };
        return resize_axes(op, site, x, rng, a, spatial);
    }
    if chance(rng, 0.5) {
        let s = site.constant_f64s("scales", DType::F32, &[r as i64], &scales);
        site.op1(op, &[x, &roi, &s], a)
    } else {
        let empty = if opset < 13 {
            site.constant_f64s("scales", DType::F32, &[0], &[])
        } else {
            String::new()
        };
        let s = site.constant_i64s("sizes", &[r as i64], &sizes);
        site.op1(op, &[x, &roi, &empty, &s], a)
    }
}

/// Scales on the axes from `spatial_from` on (outer ones stay 1), bounded by the element
/// limit.
fn draw_scales(rng: &mut SplitMix64, d: &[i64], spatial_from: usize) -> Vec<f64> {
    let n: i64 = d.iter().product();
    let mut scales: Vec<f64> = (0..d.len())
        .map(|i| {
            if i < spatial_from {
                1.0
            } else {
                pick(rng, &[0.5, 1.0, 2.0, 1.5])
            }
        })
        .collect();
    let grow: f64 = scales.iter().product();
    if n as f64 * grow > LIMIT as f64 {
        scales.iter_mut().for_each(|s| *s = s.min(1.0));
    }
    scales
}

/// `Upsample` (deprecated from opset 10): whole scales of at least 1, as attributes before
/// opset 9 (`height_scale` / `width_scale` before opset 7), else an input.
fn upsample(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    rng: &mut SplitMix64,
    mode: &'static str,
    scales: &[f64],
) -> Result<String, BuildError> {
    let (r, opset) = (scales.len(), site.opset());
    let mut a = Attrs::new();
    let mode = if mode == "cubic" { "linear" } else { mode };
    let up: Vec<f64> = scales.iter().map(|&s| s.max(1.0).round()).collect();
    if opset < 7 {
        if r != 4 {
            return Err(BuildError::not_applicable(
                "Upsample before opset 7 takes 4-D input",
            ));
        }
        let mode = if mode == "nearest" {
            "nearest"
        } else {
            "bilinear"
        };
        a.push(("mode", astr(mode)));
        a.push(("height_scale", af(up[2])));
        a.push(("width_scale", af(up[3])));
        return site.op1(op, &[x], a);
    }
    maybe(rng, &mut a, 0.8, "mode", astr(mode));
    if opset >= 9 {
        let s = site.constant_f64s("scales", DType::F32, &[r as i64], &up);
        return site.op1(op, &[x, &s], a);
    }
    let f: Vec<f32> = up.iter().map(|&v| v as f32).collect();
    a.push(("scales", crate::ir::attr::AttrValue::Floats(f)));
    site.op1(op, &[x], a)
}

/// The attributes of `Resize` from opset 11: the coordinate transformation, and what `mode`
/// and it take (cubic coefficient, nearest rounding, extrapolation value, antialias).
fn resize_attrs(rng: &mut SplitMix64, a: &mut Attrs, mode: &str, opset: i64) {
    let ctm = pick(
        rng,
        &[
            "half_pixel",
            "align_corners",
            "asymmetric",
            "pytorch_half_pixel",
            "tf_crop_and_resize",
        ],
    );
    let ctm = if mode == "nearest" && ctm == "tf_crop_and_resize" {
        "asymmetric"
    } else {
        ctm
    };
    maybe(rng, a, 0.8, "coordinate_transformation_mode", astr(ctm));
    if mode == "cubic" {
        float_of(rng, a, "cubic_coeff_a", &[-0.5, -0.75, -0.72, -0.9]);
        flag(rng, a, "exclude_outside");
    }
    if mode == "nearest" {
        maybe_str(
            rng,
            a,
            0.8,
            "nearest_mode",
            &["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"],
        );
    }
    if ctm == "tf_crop_and_resize" {
        float_of(rng, a, "extrapolation_value", &[-1.0, 0.0, 0.5, 2.0, 11.0]);
    }
    if opset >= 18 && mode != "nearest" {
        flag(rng, a, "antialias");
    }
}

/// The `roi` input (opset 11 on): a crop of the resized axes for `tf_crop_and_resize`, an
/// empty tensor before opset 13, else left out.
fn roi_input(site: &mut Site<'_>, crop: bool, r: usize, spatial_from: usize) -> String {
    if crop {
        let mut v = vec![0.0; r];
        v.extend(std::iter::repeat_n(1.0, r));
        for i in spatial_from..r {
            v[i] = 0.1;
            v[r + i] = 0.9;
        }
        site.constant_f64s("roi", DType::F32, &[2 * r as i64], &v)
    } else if site.opset() < 13 {
        site.constant_f64s("roi", DType::F32, &[0], &[])
    } else {
        String::new()
    }
}

/// The resized axes (from `from` on) and their scales and sizes.
struct Spatial<'a> {
    from: usize,
    scales: &'a [f64],
    sizes: &'a [i64],
}

/// `Resize` of some resized axes only, listed by `axes` (opset 18 on), by scales or sizes.
fn resize_axes(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    rng: &mut SplitMix64,
    mut a: Attrs,
    sp: &Spatial<'_>,
) -> Result<String, BuildError> {
    let n_sp = sp.scales.len() - sp.from;
    let k_sp = 1 + below(rng, n_sp);
    let pickd = subset(rng, n_sp, k_sp);
    let idx: Vec<usize> = pickd.iter().map(|&i| sp.from + i).collect();
    let ax: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
    a.push(("axes", ais(&ax)));
    let k = ax.len() as i64;
    if chance(rng, 0.5) {
        let sv: Vec<f64> = idx.iter().map(|&i| sp.scales[i]).collect();
        let sc = site.constant_f64s("scales", DType::F32, &[k], &sv);
        return site.op1(op, &[x, "", &sc], a);
    }
    maybe_str(
        rng,
        &mut a,
        0.8,
        "keep_aspect_ratio_policy",
        &["stretch", "not_larger", "not_smaller"],
    );
    let zv: Vec<i64> = idx.iter().map(|&i| sp.sizes[i]).collect();
    let sz = site.constant_i64s("sizes", &[k], &zv);
    site.op1(op, &[x, "", "", &sz], a)
}
