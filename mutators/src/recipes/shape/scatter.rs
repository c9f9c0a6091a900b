//! `ScatterElements`, `Scatter` (its old name) and `ScatterND`: indices without duplicates,
//! so that every build is deterministic.
use super::gather::indices;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

/// The `reduction` attribute (opset 16+; `max` and `min` from 18), or its default.
fn reduction(site: &Site<'_>, rng: &mut SplitMix64, a: &mut Attrs) {
    let red = if site.opset() >= 18 {
        pick(rng, &["none", "add", "mul", "max", "min"])
    } else {
        pick(rng, &["none", "add", "mul"])
    };
    maybe(rng, a, 0.8, "reduction", astr(red));
}

pub(super) fn scatter_elements(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let (d, ax, i) = dims_and_axis(t, rng);
    if d[i] == 0 {
        return Err(BuildError::not_applicable(format!(
            "{op} would index an empty axis"
        )));
    }
    // One index per position along the axis: no duplicates.
    let mut shape = d.clone();
    shape[i] = 1;
    let idx = indices(site, rng, d[i], &shape, true);
    let upd = konst(site, "updates", t.dtype, &shape, -2.0, 2.0, rng);
    let mut a = Attrs::new();
    int_attr(rng, &mut a, "axis", ax, 0, 0.5);
    if op == "ScatterElements" && site.opset() >= 16 {
        reduction(site, rng, &mut a);
    }
    site.op1(op, &[x, &idx, &upd], a)
}

pub(super) fn scatter_nd(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let k = between(rng, 1, r.min(2) as i64) as usize;
    // Distinct index tuples over the first k dims.
    let total: i64 = d[..k].iter().product();
    if total == 0 {
        return Err(BuildError::not_applicable(
            "ScatterND would index an empty dimension",
        ));
    }
    let m = between(rng, 1, total.min(4));
    let mut flat: Vec<i64> = (0..total).collect();
    for i in (1..flat.len()).rev() {
        let j = below(rng, i + 1);
        flat.swap(i, j);
    }
    let mut vals = Vec::new();
    for &f in flat.iter().take(m as usize) {
        let mut rest = f;
        let mut tuple = vec![0; k];
        for j in (0..k).rev() {
            tuple[j] = rest % d[j];
            rest /= d[j];
        }
        vals.extend(tuple);
    }
    let idx = site.constant_i64s("indices", &[m, k as i64], &vals);
    let ushape: Vec<i64> = std::iter::once(m).chain(d[k..].iter().copied()).collect();
    let upd = konst(site, "updates", t.dtype, &ushape, -2.0, 2.0, rng);
    let mut a = Attrs::new();
    if site.opset() >= 16 {
        reduction(site, rng, &mut a);
    }
    site.op1(op, &[x, &idx, &upd], a)
}
