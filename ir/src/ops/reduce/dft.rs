//! DFT.

use super::const_scalar;
use crate::attr::AttrLookup;
use crate::dtype::DType::I64;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn dft_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = &x.shape else {
        return Ok(vec![tensor(x.dtype, None)]);
    };
    let r = s.len();
    if r < 2 {
        return Err(rule!(
            "DFT input needs rank >= 2 (signal and a complex dim), found rank {r}"
        ));
    }
    if let Dim::Known(c) = s[r - 1]
        && c != 1
        && c != 2
    {
        return Err(rule!(
            "DFT input's last dim must be 1 (real) or 2 (complex), found {c}"
        ));
    }
    // Axis: attribute before opset 20, optional input (default -2) from 20 on.
    let axis = if ctx.opset >= 20 {
        if ctx.has_input(2) {
            const_scalar(ctx, 2)
        } else {
            Some(-2)
        }
    } else {
        Some(ctx.int("axis", 1))
    };
    let mut out = s.clone();
    out[r - 1] = Dim::Known(2);
    let Some(axis) = axis else {
        // The transformed axis is not known: every signal dim may change.
        for d in out.iter_mut().take(r - 1) {
            *d = Dim::Unknown;
        }
        if ctx.int("onesided", 0) != 0 && ctx.int("inverse", 0) != 0 {
            out[r - 1] = Dim::Known(1);
        }
        return Ok(vec![tensor(x.dtype, Some(out))]);
    };
    // Negative axes count over the whole rank; the last (complex) dim is not a signal axis.
    let a = norm_axis(axis, r)?;
    if a == r - 1 {
        return Err(rule!(
            "DFT axis {axis} names the complex dim of rank-{r} input"
        ));
    }
    let given = if ctx.has_input(1) {
        match const_scalar(ctx, 1) {
            Some(n) if n > 0 => Some(Dim::Known(n)),
            Some(n) => return Err(rule!("DFT dft_length = {n} must be positive")),
            None => Some(Dim::Unknown),
        }
    } else {
        None
    };
    let onesided = ctx.int("onesided", 0) != 0;
    let inverse = ctx.int("inverse", 0) != 0;
    let last = s[r - 1].value();
    match (onesided, inverse) {
        (true, false) => {
            // Forward one-sided: real input, floor(n/2)+1 bins.
            if last == Some(2) {
                return Err(rule!(
                    "one-sided DFT needs real input (last dim 1), found 2"
                ));
            }
            let n = given.unwrap_or_else(|| s[a].clone());
            out[a] = n
                .value()
                .map(|n| Dim::Known(n / 2 + 1))
                .unwrap_or(Dim::Unknown);
        }
        (true, true) => {
            // Inverse one-sided: half-spectrum in, real signal of 2(n-1) samples out.
            if last == Some(1) {
                return Err(rule!(
                    "inverse one-sided DFT needs complex input (last dim 2), found 1"
                ));
            }
            out[r - 1] = Dim::Known(1);
            out[a] = given.unwrap_or_else(|| {
                s[a].value()
                    .map(|n| Dim::Known(2 * (n - 1)))
                    .unwrap_or(Dim::Unknown)
            });
        }
        _ => out[a] = given.unwrap_or_else(|| s[a].clone()),
    }
    Ok(vec![tensor(x.dtype, Some(out))])
}

/// Registers DFT.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("DFT", &[17, 20], Category::Misc)
            .input("input", "T1")
            .opt_input("dft_length", "T2")
            .opt_input("axis", "tensor(int64)")
            .output("output", "T1")
            .attr(
                AttrSpec::int("axis", 1)
                    .int_buckets(AXIS_BUCKETS)
                    .versions(17, Some(20)),
            )
            .attr(AttrSpec::int("inverse", 0).one_of_ints(&[0, 1]))
            .attr(AttrSpec::int("onesided", 0).one_of_ints(&[0, 1]))
            .types("T1", FLOAT)
            .types("T2", INDEX)
            .types("tensor(int64)", &[I64])
            .infer(dft_infer),
    );
}
