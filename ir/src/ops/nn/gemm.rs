//! Gemm.

use super::{GEMM_T, flag, shape_of};
use crate::attr::AttrLookup;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

pub(crate) fn gemm(ctx: &InferCtx) -> Infer {
    let (a, b) = (shape_of(ctx, 0), shape_of(ctx, 1));
    let dt = ctx.dtype(0);
    let pick =
        |s: &Option<Vec<Dim>>, trans: bool, what: &str| -> Result<Option<(Dim, Dim)>, InferError> {
            match s {
                None => Ok(None),
                Some(s) if s.len() != 2 => Err(rule!(
                    "Gemm input {what} must be 2-D, found rank {}",
                    s.len()
                )),
                Some(s) => Ok(Some(if trans {
                    (s[1].clone(), s[0].clone())
                } else {
                    (s[0].clone(), s[1].clone())
                })),
            }
        };
    let a = pick(&a, ctx.int("transA", 0) != 0, "A")?;
    let b = pick(&b, ctx.int("transB", 0) != 0, "B")?;
    if let (Some((_, Dim::Known(k1))), Some((Dim::Known(k2), _))) = (&a, &b)
        && k1 != k2
    {
        return Err(rule!(
            "Gemm inner dims differ: A gives K={k1}, B gives K={k2}"
        ));
    }
    let m = a.map_or(Dim::Unknown, |p| p.0);
    let n = b.map_or(Dim::Unknown, |p| p.1);
    Ok(vec![tensor(dt, Some(vec![m, n]))])
}

pub(crate) fn gemm_check(ctx: &InferCtx) -> Result<(), InferError> {
    let out = gemm(ctx)?;
    if ctx.has_input(2) {
        let y = out[0].tensor().and_then(|t| t.shape.clone());
        broadcast_shapes(&[y.clone(), shape_of(ctx, 2)]).and_then(|s| {
            if s == y || s.is_none() {
                Ok(())
            } else {
                Err(rule!("C does not broadcast to [M, N]"))
            }
        })?;
    }
    Ok(())
}

/// Registers Gemm.
pub(super) fn register(r: &mut Registry) {
    let scale_buckets: &[(f64, f64)] = &[
        (f64::NEG_INFINITY, 0.0),
        (0.0, 1.0),
        (1.0, 1.0 + 1e-6),
        (1.0 + 1e-6, f64::INFINITY),
    ];
    r.add(
        OpSpec::new("Gemm", &[1, 6, 7, 9, 11, 13], Category::Linear)
            .attr(AttrSpec::float("alpha", 1.0).float_buckets(scale_buckets))
            .attr(AttrSpec::float("beta", 1.0).float_buckets(scale_buckets))
            .attr(flag("transA"))
            .attr(flag("transB"))
            .attr(flag("broadcast").versions(1, Some(7)))
            .input("A", "T")
            .input("B", "T")
            .opt_input("C", "T")
            .output("Y", "T")
            .types("T", GEMM_T)
            .infer(gemm)
            .requires(gemm_check),
    );
}
