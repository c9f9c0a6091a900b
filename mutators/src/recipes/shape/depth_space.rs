//! `DepthToSpace` and `SpaceToDepth` (the input tiled or cropped to fit the block size).
use super::LIMIT;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn depth_to_space(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let b = pick(rng, &[1, 2, 2, 3, 4]);
    let mut v = x.to_string();
    if d[1] % (b * b) != 0 {
        // Repeats the channels b*b times so that they divide.
        if d.iter().product::<i64>() * b * b > LIMIT {
            return Err(BuildError::not_applicable(
                "DepthToSpace: input too large to tile",
            ));
        }
        let reps = site.constant_i64s("repeats", &[4], &[1, b * b, 1, 1]);
        v = site.op1("Tile", &[x, &reps], vec![])?;
    }
    let mut a = vec![("blocksize", ai(b))];
    if site.opset() >= 11 {
        maybe_str(rng, &mut a, 0.7, "mode", &["DCR", "CRD"]);
    }
    site.op1(op, &[&v], a)
}

pub(super) fn space_to_depth(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let m = d[2].min(d[3]);
    let cands: Vec<i64> = [1, 2, 3, 4].into_iter().filter(|&b| b <= m).collect();
    if cands.is_empty() {
        return Err(BuildError::not_applicable(format!(
            "{op}: a spatial dimension is empty"
        )));
    }
    let b = pick(rng, &cands);
    let mut v = x.to_string();
    let (h, w) = (d[2] / b * b, d[3] / b * b);
    if h != d[2] || w != d[3] {
        v = crop(site, x, [2, 3], [h, w])?;
    }
    site.op1(op, &[&v], vec![("blocksize", ai(b))])
}
