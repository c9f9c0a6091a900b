//! Pad.

use super::{ALL26, Arg, I64_ONLY, I64T, IND, axes_of, list_arg, out, unknown_at, unknown_dims};
use crate::attr::{AttrKind, AttrLookup};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

fn infer_pad(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    let r = s.len();
    if ctx.opset >= 11 && !ctx.has_input(1) {
        return Err(rule!(
            "Pad takes its pads as input 1 from opset 11, and it is absent"
        ));
    }
    let pads = if ctx.opset < 11 {
        match ctx.ints("pads").or(ctx.ints("paddings")) {
            Some(p) => Arg::Known(p.to_vec()),
            None => Arg::Absent,
        }
    } else {
        list_arg(ctx, "", 1)
    };
    let axes: Option<Vec<usize>> = match list_arg(ctx, "", 3) {
        Arg::Absent => Some((0..r).collect()),
        Arg::Known(a) => Some(axes_of(&a, r)?),
        Arg::Unknown => None,
    };
    match (pads, axes) {
        (Arg::Known(p), Some(axes)) => {
            let n = axes.len();
            if p.len() != 2 * n {
                return Err(rule!(
                    "pads has {} values, expected {} for {n} axes",
                    p.len(),
                    2 * n
                ));
            }
            let mode = ctx.string("mode", "constant");
            let mut res = s.clone();
            for (k, &a) in axes.iter().enumerate() {
                let add = p[k].saturating_add(p[k + n]);
                res[a] = match &s[a] {
                    Dim::Known(d) => {
                        if *d == 0 && (p[k] > 0 || p[k + n] > 0) && mode != "constant" {
                            return Err(rule!(
                                "{mode} padding of axis {a}, which is empty: there is no element \
                                 to repeat"
                            ));
                        }
                        if d.saturating_add(add) < 0 {
                            return Err(rule!("pads {:?} make axis {a} of size {d} negative", p));
                        }
                        Dim::Known(d.saturating_add(add))
                    }
                    other if add == 0 => other.clone(),
                    _ => Dim::Unknown,
                };
            }
            out(x.dtype, Some(res))
        }
        (_, Some(axes)) => out(x.dtype, Some(unknown_at(&s, &axes))),
        _ => out(x.dtype, Some(unknown_dims(r))),
    }
}

/// Registers Pad.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new(
            "Pad",
            &[1, 2, 11, 13, 18, 19, 21, 23, 24, 25],
            Category::Shape,
        )
        .traits(Traits::RESHAPING)
        .input("data", "T")
        .input_from("pads", I64T, 11)
        .opt_input("constant_value", "T")
        .opt_input("axes", "Tind")
        .output("output", "T")
        .attr(AttrSpec::string("mode", "constant").one_of(&["constant", "reflect", "edge", "wrap"]))
        .attr(
            AttrSpec::of("paddings", AttrKind::Ints)
                .required()
                .versions(1, Some(2)),
        )
        .attr(
            AttrSpec::of("pads", AttrKind::Ints)
                .required()
                .versions(2, Some(11)),
        )
        .attr(AttrSpec::float("value", 0.0).versions(1, Some(11)))
        .types("T", ALL26)
        .types(I64T, I64_ONLY)
        .types("Tind", IND)
        .infer(infer_pad),
    );
}
