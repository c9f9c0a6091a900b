//! `RoiAlign` and `MaxRoiPool` (boxes inside the image).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn roi(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let (n, hh, ww) = (d[0], d[2] as f64, d[3] as f64);
    let nr = between(rng, 1, 3);
    let mut boxes = Vec::new();
    let mut idx = Vec::new();
    for _ in 0..nr {
        let x1 = rng.range(0.0, ww / 2.0).floor();
        let y1 = rng.range(0.0, hh / 2.0).floor();
        let x2 = (x1 + rng.range(1.0, ww / 2.0 + 1.0)).floor().min(ww - 1.0);
        let y2 = (y1 + rng.range(1.0, hh / 2.0 + 1.0)).floor().min(hh - 1.0);
        let b = between(rng, 0, n - 1);
        if op == "MaxRoiPool" {
            boxes.extend([b as f64, x1, y1, x2, y2]);
        } else {
            boxes.extend([x1, y1, x2, y2]);
        }
        idx.push(b);
    }
    let mut a = Attrs::new();
    float_of(rng, &mut a, "spatial_scale", &[0.05, 0.5, 1.0, 1.5]);
    if op == "MaxRoiPool" {
        let ph = between(rng, 1, 3);
        let pw = between(rng, 1, 3);
        a.push(("pooled_shape", ais(&[ph, pw])));
        let rois = site.constant_f64s("rois", t.dtype, &[nr, 5], &boxes);
        return site.op1(op, &[x, &rois], a);
    }
    maybe_str(rng, &mut a, 0.7, "mode", &["avg", "max"]);
    maybe_int(rng, &mut a, 0.7, "output_height", &[1, 3, 8]);
    maybe_int(rng, &mut a, 0.7, "output_width", &[1, 3, 8]);
    maybe_int(rng, &mut a, 0.7, "sampling_ratio", &[0, 1, 2, 5]);
    if site.opset() >= 16 {
        maybe_str(
            rng,
            &mut a,
            0.7,
            "coordinate_transformation_mode",
            &["half_pixel", "output_half_pixel"],
        );
    }
    let rois = site.constant_f64s("rois", t.dtype, &[nr, 4], &boxes);
    let bi = site.constant_i64s("batch_indices", &[nr], &idx);
    site.op1(op, &[x, &rois, &bi], a)
}
