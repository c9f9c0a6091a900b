//! `Slice` (in-range starts and ends, some counted from the end, negative steps from opset
//! 10; starts / ends / axes / steps as attributes before opset 10, as inputs from it).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn slice(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let k = 1 + below(rng, r);
    let axes = subset(rng, r, k);
    let (mut st, mut en, mut sp, mut ax) = (vec![], vec![], vec![], vec![]);
    for &i in &axes {
        let n = d[i];
        let step = if site.opset() < 10 {
            1
        } else {
            pick(rng, &[1, 1, 2, -1, -2])
        };
        let (s, e) = if step > 0 {
            let s = between(rng, 0, (n - 1).max(0));
            let e = between(rng, s + 1, n + 2);
            (s, e)
        } else {
            let s = between(rng, 0, (n - 1).max(0));
            (s, between(rng, -1 - n - 1, s - 1).max(-n - 2))
        };
        // Negative starts/ends (counted from the end) sometimes.
        let s = if step > 0 && chance(rng, 0.2) {
            s - n
        } else {
            s
        };
        let e = if e > n && chance(rng, 0.5) {
            i64::MAX
        } else {
            e
        };
        st.push(s);
        en.push(e);
        sp.push(step);
        ax.push(if chance(rng, 0.3) {
            i as i64 - r as i64
        } else {
            i as i64
        });
    }
    if site.opset() < 10 {
        let a = vec![("starts", ais(&st)), ("ends", ais(&en)), ("axes", ais(&ax))];
        return site.op1(op, &[x], a);
    }
    let i32_idx = chance(rng, 0.3);
    let c = |site: &mut Site<'_>, h: &str, v: &[i64]| {
        if i32_idx {
            let f: Vec<f64> = v
                .iter()
                .map(|&z| z.clamp(i32::MIN as i64, i32::MAX as i64) as f64)
                .collect();
            site.constant_f64s(h, DType::I32, &[v.len() as i64], &f)
        } else {
            site.constant_i64s(h, &[v.len() as i64], v)
        }
    };
    let sc = c(site, "starts", &st);
    let ec = c(site, "ends", &en);
    let all_axes = ax.len() == r && ax.iter().enumerate().all(|(i, &a)| a == i as i64);
    let unit = sp.iter().all(|&s| s == 1);
    if all_axes && unit && chance(rng, 0.5) {
        return site.op1(op, &[x, &sc, &ec], vec![]);
    }
    let ac = c(site, "axes", &ax);
    if unit && chance(rng, 0.5) {
        return site.op1(op, &[x, &sc, &ec, &ac], vec![]);
    }
    let pc = c(site, "steps", &sp);
    site.op1(op, &[x, &sc, &ec, &ac, &pc], vec![])
}
