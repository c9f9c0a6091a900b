//! Reshape.

use super::fold::fold_relabel;
use super::{ALL26, Arg, I64_ONLY, I64T, list_arg, out, static_len, unknown_dims};
use crate::attr::{AttrKind, AttrLookup};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// Output dims of Reshape given the target list.
pub(super) fn reshape_dims(
    input: Option<&[Dim]>,
    target: &[i64],
    allowzero: bool,
) -> Result<Vec<Dim>, InferError> {
    let mut outd = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (i, &t) in target.iter().enumerate() {
        match t {
            -1 => {
                if infer_at.is_some() {
                    return Err(rule!("shape {target:?} has more than one -1"));
                }
                infer_at = Some(i);
                outd.push(Dim::Unknown);
            }
            0 if !allowzero => match input {
                Some(s) if i < s.len() => outd.push(s[i].clone()),
                Some(s) => {
                    return Err(rule!(
                        "shape {target:?} copies dim {i} (0) but the input has rank {}",
                        s.len()
                    ));
                }
                None => outd.push(Dim::Unknown),
            },
            t if t < -1 => return Err(rule!("shape {target:?} has the invalid value {t}")),
            t => outd.push(Dim::Known(t)),
        }
    }
    if allowzero && infer_at.is_some() && target.contains(&0) {
        return Err(rule!(
            "shape {target:?}: allowzero forbids 0 together with -1"
        ));
    }
    let Some(input) = input else { return Ok(outd) };
    // Factor both sides into a known product and a list of symbols.
    let factor = |d: &[Dim]| -> Option<(i64, Vec<String>)> {
        let mut k = 1i64;
        let mut syms = Vec::new();
        for x in d {
            match x {
                Dim::Known(v) => k = k.saturating_mul(*v),
                Dim::Param(p) => syms.push(p.clone()),
                Dim::Unknown => return None,
            }
        }
        Some((k, syms))
    };
    let rest: Vec<Dim> = outd
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != infer_at)
        .map(|(_, d)| d.clone())
        .collect();
    if let (Some((ki, mut si)), Some((ko, so))) = (factor(input), factor(&rest)) {
        let mut all_found = true;
        for s in &so {
            match si.iter().position(|x| x == s) {
                Some(p) => {
                    si.remove(p);
                }
                None => all_found = false,
            }
        }
        match infer_at {
            Some(at) if all_found => {
                if si.is_empty() {
                    if ko == 0 {
                        if ki != 0 {
                            return Err(rule!("cannot reshape {ki} elements to {target:?}"));
                        }
                    } else if ki % ko != 0 {
                        return Err(rule!(
                            "cannot reshape {ki} elements: {ki} is not divisible by {ko} ({target:?})"
                        ));
                    } else {
                        outd[at] = Dim::Known(ki / ko);
                    }
                } else if si.len() == 1 && ki == ko && ko != 0 {
                    outd[at] = Dim::Param(si[0].clone());
                }
            }
            None if si.is_empty() && so.is_empty() && ki != ko => {
                return Err(rule!(
                    "cannot reshape {ki} elements to {target:?} ({ko} elements)"
                ));
            }
            _ => {}
        }
    }
    Ok(outd)
}

fn infer_reshape(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let target = if ctx.opset < 5 {
        list_arg(ctx, "shape", usize::MAX)
    } else {
        list_arg(ctx, "", 1)
    };
    let allowzero = ctx.int("allowzero", 0) != 0;
    match target {
        Arg::Known(t) => out(
            x.dtype,
            Some(reshape_dims(x.shape.as_deref(), &t, allowzero)?),
        ),
        _ => match (static_len(ctx, 1), x.num_elements()) {
            // A 1-D target can only mean "all elements in one row".
            (Some(1), Some(n)) => Ok(vec![fixed(x.dtype, &[n])]),
            (n, _) => out(x.dtype, n.map(unknown_dims)),
        },
    }
}

/// Registers Reshape.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new(
            "Reshape",
            &[1, 5, 13, 14, 19, 21, 23, 24, 25],
            Category::Shape,
        )
        .traits(Traits::RESHAPING)
        .input("data", "T")
        .opt_input("shape", I64T)
        .output("reshaped", "T")
        .attr(
            AttrSpec::of("consumed_inputs", AttrKind::Ints)
                .versions(1, Some(5))
                .no_buckets(),
        )
        .attr(AttrSpec::of("shape", AttrKind::Ints).versions(1, Some(5)))
        .attr(
            AttrSpec::int("allowzero", 0)
                .one_of_ints(&[0, 1])
                .versions(14, None),
        )
        .types("T", ALL26)
        .types(I64T, I64_ONLY)
        .infer(infer_reshape)
        .fold(|c| fold_relabel(c, infer_reshape)),
    );
}
