//! `Reshape` (target shapes with `-1`, `0` and factorizations of the element count) and
//! `Flatten`.
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

/// A random factorization of `n` into `k` dims.
fn factor(rng: &mut SplitMix64, n: i64, k: usize) -> Vec<i64> {
    let mut out = vec![1; k];
    let mut rest = n;
    let mut p = 2;
    while rest > 1 {
        while rest % p != 0 {
            p += 1;
        }
        rest /= p;
        let i = below(rng, k);
        out[i] *= p;
    }
    out
}

pub(super) fn reshape(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let n: i64 = d.iter().product();
    let mut a = Attrs::new();
    let shape: Vec<i64> = match below(rng, 6) {
        0 => vec![-1],
        5 if n == 1 => {
            if chance(rng, 0.5) {
                vec![]
            } else {
                vec![1; 1 + below(rng, 3)]
            }
        }
        4 if !d.is_empty() => vec![0; d.len()],
        1 if !d.is_empty() => vec![0, -1],
        2 => {
            let k = 1 + below(rng, 5);
            let mut s = factor(rng, n, k);
            if chance(rng, 0.5) {
                let i = below(rng, k);
                s[i] = -1;
            }
            s
        }
        _ => {
            let k = 1 + below(rng, 5);
            factor(rng, n, k)
        }
    };
    if site.opset() < 5 {
        return site.op1(op, &[x], vec![("shape", ais(&shape))]);
    }
    if site.opset() >= 14 && !shape.contains(&0) {
        flag(rng, &mut a, "allowzero");
    } else if site.opset() >= 14 {
        maybe(rng, &mut a, 0.3, "allowzero", ai(0));
    }
    let s = site.constant_i64s("shape", &[shape.len() as i64], &shape);
    site.op1(op, &[x, &s], a)
}

pub(super) fn reshape_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    (0..=r.max(5)).map(|k| (d, k)).collect()
}

pub(super) fn flatten(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = t.rank().unwrap_or(1) as i64;
    let mut a = Attrs::new();
    if chance(rng, 0.8) {
        let ax = between(rng, 0, r);
        let ax = if chance(rng, 0.3) && ax > 0 {
            ax - r
        } else {
            ax
        };
        a.push(("axis", ai(ax)));
    }
    site.op1(op, &[x], a)
}
