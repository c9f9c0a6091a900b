//! `GridSample` (a constant grid) and `AffineGrid` (`x` adapted to the `theta` matrices).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn grid_sample(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let (ho, wo) = (between(rng, 1, 6), between(rng, 1, 6));
    let gd = if t.dtype.is_float() {
        t.dtype
    } else {
        DType::F32
    };
    let g = site.random_constant("grid", gd, &[d[0], ho, wo, 2], -1.1, 1.1, rng);
    let mut a = Attrs::new();
    let modes: &[&str] = if site.opset() >= 20 {
        &["linear", "nearest", "cubic"]
    } else {
        &["bilinear", "nearest", "bicubic"]
    };
    maybe_str(rng, &mut a, 0.8, "mode", modes);
    maybe_str(
        rng,
        &mut a,
        0.8,
        "padding_mode",
        &["zeros", "border", "reflection"],
    );
    flag(rng, &mut a, "align_corners");
    site.op1(op, &[x, &g], a)
}

pub(super) fn affine_grid(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let nb = d[0].clamp(1, 4);
    let theta = site.adapt(x, &TensorType::fixed(t.dtype, &[nb, 2, 3]))?;
    let size = site.constant_i64s(
        "size",
        &[4],
        &[nb, 1, between(rng, 1, 6), between(rng, 1, 6)],
    );
    let mut a = Attrs::new();
    flag(rng, &mut a, "align_corners");
    site.op1(op, &[&theta, &size], a)
}
