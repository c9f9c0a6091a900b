//! Softmax, LogSoftmax and Hardmax.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

#[derive(Clone, Copy, PartialEq)]
pub(super) enum SoftKind {
    Softmax,
    LogSoftmax,
    Hardmax,
}

/// Softmax-like op over groups `(outer, len, inner)`.
pub(super) fn softmax_groups(
    v: &[f64],
    outer: usize,
    len: usize,
    inner: usize,
    kind: SoftKind,
) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * len + k) * inner + i;
            let mut m = f64::NEG_INFINITY;
            let mut arg = 0;
            for k in 0..len {
                if v[at(k)] > m {
                    m = v[at(k)];
                    arg = k;
                }
            }
            match kind {
                SoftKind::Hardmax => {
                    if len > 0 {
                        out[at(arg)] = 1.0;
                    }
                }
                _ => {
                    let s: f64 = (0..len).map(|k| (v[at(k)] - m).exp()).sum();
                    for k in 0..len {
                        out[at(k)] = if kind == SoftKind::Softmax {
                            (v[at(k)] - m).exp() / s
                        } else {
                            v[at(k)] - m - s.ln()
                        };
                    }
                }
            }
        }
    }
    out
}

/// The (outer, len, inner) groups Softmax / LogSoftmax / Hardmax run over: before opset 13 the
/// input coerced to 2-D at `axis` (default 1), from 13 along `axis` (default -1).
pub fn softmax_groups_of(cx: &Cx, n: &Node, t: &T) -> R<(usize, usize, usize)> {
    let r = t.rank();
    Ok(if cx.opset < 13 {
        let a = n.int("axis", 1);
        let a = if a < 0 { a + r as i64 } else { a };
        if a < 0 || a as usize > r {
            return Err(err(format!("axis {a} for rank {r}")));
        }
        let a = a as usize;
        (numel(&t.shape[..a]), numel(&t.shape[a..]), 1)
    } else {
        let a = norm_axis(n.int("axis", -1), r)?;
        split_at_axis(&t.shape, a)
    })
}

/// Softmax / LogSoftmax / Hardmax: before opset 13 the input is coerced to 2-D at `axis`
/// (default 1) and the op runs over the whole second dimension; from 13 it runs along `axis`
/// (default -1).
fn softmax_like(cx: &Cx, n: &Node, ins: &[Option<&V>], kind: SoftKind) -> Out {
    let t = inp(ins, 0)?;
    let v = t.fs()?;
    let (outer, len, inner) = softmax_groups_of(cx, n, t)?;
    one(T::f(
        t.dt,
        t.shape.clone(),
        softmax_groups(v, outer, len, inner, kind),
    ))
}

pub(super) fn op_softmax(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    softmax_like(cx, n, ins, SoftKind::Softmax)
}

pub(super) fn op_log_softmax(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    softmax_like(cx, n, ins, SoftKind::LogSoftmax)
}

pub(super) fn op_hardmax(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    softmax_like(cx, n, ins, SoftKind::Hardmax)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_axis_semantics_change_at_13() {
        // x of shape [2, 2]: [[0, ln 3], [0, 0]]
        let x = [0.0, 3f64.ln(), 0.0, 0.0];
        // opset >= 13, axis -1: per row.
        let per_row = softmax_groups(&x, 2, 2, 1, SoftKind::Softmax);
        assert!((per_row[0] - 0.25).abs() < 1e-12 && (per_row[1] - 0.75).abs() < 1e-12);
        assert!((per_row[2] - 0.5).abs() < 1e-12);
        // opset < 13, axis 0: the whole tensor is one group (coerced to [1, 4]).
        let whole = softmax_groups(&x, 1, 4, 1, SoftKind::Softmax);
        assert!((whole[1] - 3.0 / 6.0).abs() < 1e-12);
        assert!((whole[0] - 1.0 / 6.0).abs() < 1e-12);
    }
}
