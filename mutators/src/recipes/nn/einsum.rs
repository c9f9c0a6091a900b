//! `Einsum`: a permutation, a sum over axes, or a contraction of the last axis with a
//! constant matrix.
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn einsum(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let letters: Vec<char> = "abcde".chars().take(r).collect();
    let lhs: String = letters.iter().collect();
    match below(rng, 3) {
        0 => {
            // A permutation of the axes.
            let mut perm = letters.clone();
            for i in (1..perm.len()).rev() {
                let j = below(rng, i + 1);
                perm.swap(i, j);
            }
            let rhs: String = perm.iter().collect();
            site.op1(op, &[x], vec![("equation", astr(&format!("{lhs}->{rhs}")))])
        }
        1 => {
            // Sums out some axes.
            let nk = below(rng, r + 1);
            let keep = subset(rng, r, nk);
            let rhs: String = keep.iter().map(|&i| letters[i]).collect();
            site.op1(op, &[x], vec![("equation", astr(&format!("{lhs}->{rhs}")))])
        }
        _ => {
            // Contracts the last axis with a constant matrix.
            let n = between(rng, 1, 6);
            let w = konst(site, "w", t.dtype, &[d[r - 1], n], -1.0, 1.0, rng);
            let last = letters[r - 1];
            let rhs: String = letters[..r - 1]
                .iter()
                .chain(std::iter::once(&'z'))
                .collect();
            let eq = format!("{lhs},{last}z->{rhs}");
            site.op1(op, &[x, &w], vec![("equation", astr(&eq))])
        }
    }
}
