//! GridSample.

use super::{concat, flag, shape_of};
use crate::attr::{AttrLookup, AttrValue};
use crate::dtype::DType;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

fn grid_sample(ctx: &InferCtx) -> Infer {
    let xs = shape_of(ctx, 0);
    let gs = shape_of(ctx, 1);
    let dt = ctx.dtype(0);
    let rank = xs.as_ref().map(Vec::len).or(gs.as_ref().map(Vec::len));
    let Some(rank) = rank else {
        return Ok(vec![tensor(dt, None)]);
    };
    if rank < 3 {
        return Err(rule!(
            "GridSample input must have rank 3 or more, found {rank}"
        ));
    }
    if let (Some(x), Some(g)) = (&xs, &gs) {
        if x.len() != g.len() {
            return Err(rule!(
                "GridSample input has rank {} but grid has rank {}",
                x.len(),
                g.len()
            ));
        }
        if let Some(v) = g[rank - 1].value()
            && v != rank as i64 - 2
        {
            return Err(rule!("grid's last axis is {v}, expected {}", rank - 2));
        }
    }
    let n = match (&xs, &gs) {
        (Some(x), _) if x[0] != Dim::Unknown => x[0].clone(),
        (_, Some(g)) => g[0].clone(),
        _ => Dim::Unknown,
    };
    let c = xs.as_ref().map_or(Dim::Unknown, |x| x[1].clone());
    let sp = gs
        .as_ref()
        .map_or(vec![Dim::Unknown; rank - 2], |g| g[1..rank - 1].to_vec());
    Ok(vec![tensor(dt, Some([vec![n, c], sp].concat()))])
}

/// Registers GridSample.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("GridSample", &[16, 20, 22], Category::Misc)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .attr(flag("align_corners"))
            .attr(
                AttrSpec::string("mode", "linear")
                    .one_of(&["linear", "nearest", "cubic", "bilinear", "bicubic"]),
            )
            .attr(AttrSpec::string("padding_mode", "zeros").one_of(&[
                "zeros",
                "border",
                "reflection",
            ]))
            .input("X", "T1")
            .input("grid", "T2")
            .output("Y", "T1")
            .types(
                "T1",
                &concat(&[
                    NUMERIC,
                    &[DType::String, DType::Bool, DType::C64, DType::C128],
                ]),
            )
            .types("T2", FLOAT)
            .infer(grid_sample)
            .requires(|c| {
                let out = grid_sample(c)?;
                let rank = out[0].tensor().and_then(|t| t.rank());
                if c.opset < 20 && rank.is_some_and(|r| r != 4) {
                    return Err(rule!(
                        "GridSample before opset 20 takes 4-D input, found rank {}",
                        rank.unwrap_or(0)
                    ));
                }
                let Some(AttrValue::String(mode)) = c.attr("mode") else {
                    return Ok(());
                };
                let mode = String::from_utf8_lossy(mode);
                if c.opset >= 20 && ["bilinear", "bicubic"].contains(&mode.as_ref())
                    || c.opset < 20 && ["linear", "cubic"].contains(&mode.as_ref())
                {
                    return Err(rule!(
                        "GridSample mode '{mode}' does not exist at opset {}",
                        c.opset
                    ));
                }
                Ok(())
            }),
    );
}
