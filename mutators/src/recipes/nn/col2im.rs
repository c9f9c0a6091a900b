//! `Col2Im` (`x` adapted to the columns of a small image).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn col2im(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let nb = d[0].clamp(1, 3);
    let c = between(rng, 1, 2);
    let block = [between(rng, 1, 2), between(rng, 1, 2)];
    let image = [between(rng, 2, 5), between(rng, 2, 5)];
    let mut a = Attrs::new();
    let strides = [pick(rng, &[1, 1, 2]), pick(rng, &[1, 1, 2])];
    let dil = [pick(rng, &[1, 1, 2]), pick(rng, &[1, 1, 2])];
    let pads = match below(rng, 3) {
        0 => [0, 0, 0, 0],
        1 => {
            let p = between(rng, 1, 2);
            [p, p, p, p]
        }
        _ => [below(rng, 2) as i64, 0, below(rng, 2) as i64, 1],
    };
    let mut l = 1;
    for i in 0..2 {
        let eff = (block[i] - 1) * dil[i] + 1;
        let span = image[i] + pads[i] + pads[i + 2] - eff;
        if span < 0 {
            return Err(BuildError::not_applicable(
                "Col2Im: block larger than the image",
            ));
        }
        l *= span / strides[i] + 1;
    }
    // Defaults stated or left out. (An empty list is not a valid way to state them: ONNX
    // shape inference wants one value per spatial axis.)
    let state = |rng: &mut SplitMix64, a: &mut Attrs, name: &'static str, v: &[i64], dflt: bool| {
        if !dflt || chance(rng, 0.5) {
            a.push((name, ais(v)));
        }
    };
    state(rng, &mut a, "strides", &strides, strides == [1, 1]);
    state(rng, &mut a, "dilations", &dil, dil == [1, 1]);
    state(rng, &mut a, "pads", &pads, pads == [0, 0, 0, 0]);
    let cols = site.adapt(
        x,
        &TensorType::fixed(t.dtype, &[nb, c * block[0] * block[1], l]),
    )?;
    let im = site.constant_i64s("image_shape", &[2], &image);
    let bl = site.constant_i64s("block_shape", &[2], &block);
    site.op1(op, &[&cols, &im, &bl], a)
}
