//! Squeeze and Unsqueeze.

use super::fold::fold_relabel;
use super::{ALL26, Arg, I64_ONLY, I64T, axes_of, list_arg, out, static_len, unknown_dims};
use crate::attr::AttrKind;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

fn infer_squeeze(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let axes = list_arg(ctx, "axes", 1);
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    match axes {
        Arg::Known(a) => {
            let a = axes_of(&a, s.len())?;
            for &k in &a {
                if let Dim::Known(v) = s[k]
                    && v != 1
                {
                    return Err(rule!("Squeeze axis {k} has size {v}, not 1"));
                }
            }
            out(
                x.dtype,
                Some(
                    s.iter()
                        .enumerate()
                        .filter(|(i, _)| !a.contains(i))
                        .map(|(_, d)| d.clone())
                        .collect(),
                ),
            )
        }
        Arg::Absent => {
            if s.iter().any(|d| !matches!(d, Dim::Known(_))) {
                return out(x.dtype, None);
            }
            out(
                x.dtype,
                Some(s.into_iter().filter(|d| *d != Dim::Known(1)).collect()),
            )
        }
        Arg::Unknown => match static_len(ctx, 1) {
            // Only dims of size 1 may be removed: when the count of such dims equals the
            // number of axes and every other dim is known, the result is determined.
            Some(n)
                if n > 0
                    && s.iter().all(|d| matches!(d, Dim::Known(_)))
                    && s.iter().filter(|d| **d == Dim::Known(1)).count() == n =>
            {
                out(
                    x.dtype,
                    Some(s.into_iter().filter(|d| *d != Dim::Known(1)).collect()),
                )
            }
            Some(n) if n <= s.len() => out(x.dtype, Some(unknown_dims(s.len() - n))),
            _ => out(x.dtype, None),
        },
    }
}

fn infer_unsqueeze(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let axes = list_arg(ctx, "axes", 1);
    match (x.shape, axes) {
        (Some(s), Arg::Known(a)) => {
            let r = s.len() + a.len();
            let a = axes_of(&a, r)?;
            let mut it = s.into_iter();
            let shape = (0..r)
                .map(|k| {
                    if a.contains(&k) {
                        Dim::Known(1)
                    } else {
                        it.next().unwrap_or(Dim::Unknown)
                    }
                })
                .collect();
            out(x.dtype, Some(shape))
        }
        (Some(s), _) => out(
            x.dtype,
            static_len(ctx, 1).map(|n| unknown_dims(s.len() + n)),
        ),
        (None, _) => out(x.dtype, None),
    }
}

/// Registers Squeeze and Unsqueeze.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Squeeze", &[1, 11, 13, 21, 23, 24, 25], Category::Shape)
            .traits(Traits::RESHAPING)
            .input("data", "T")
            .opt_input("axes", I64T)
            .output("squeezed", "T")
            .attr(AttrSpec::of("axes", AttrKind::Ints).versions(1, Some(13)))
            .types("T", ALL26)
            .types(I64T, I64_ONLY)
            .infer(infer_squeeze)
            .fold(|c| fold_relabel(c, infer_squeeze)),
    );
    r.add(
        OpSpec::new("Unsqueeze", &[1, 11, 13, 21, 23, 24, 25], Category::Shape)
            .traits(Traits::RESHAPING)
            .input("data", "T")
            .input_from("axes", I64T, 13)
            .output("expanded", "T")
            .attr(
                AttrSpec::of("axes", AttrKind::Ints)
                    .required()
                    .versions(1, Some(13)),
            )
            .types("T", ALL26)
            .types(I64T, I64_ONLY)
            .infer(infer_unsqueeze)
            .fold(|c| fold_relabel(c, infer_unsqueeze)),
    );
}
