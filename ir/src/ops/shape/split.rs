//! Split.

use super::{Arg, CLASSIC16, axis, axis_of, list_arg};
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType::{F16, F32, F64, I64};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

fn infer_split(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let n = ctx.n_outputs();
    let split = list_arg(ctx, "split", 1);
    let Some(s) = x.shape.clone() else {
        return Ok(vec![tensor(x.dtype, None); n]);
    };
    let axis = axis_of(ctx.int("axis", 0), s.len())?;
    let with = |d: Dim| {
        let mut t = s.clone();
        t[axis] = d;
        tensor(x.dtype, Some(t))
    };
    match split {
        Arg::Known(parts) => {
            if parts.len() != n {
                return Err(rule!(
                    "split {parts:?} has {} parts for {n} outputs",
                    parts.len()
                ));
            }
            if let Dim::Known(d) = s[axis] {
                let total: i64 = parts.iter().sum();
                if total != d {
                    return Err(rule!(
                        "split {parts:?} sums to {total}, but axis {axis} has size {d}"
                    ));
                }
            }
            Ok(parts.into_iter().map(|p| with(Dim::Known(p))).collect())
        }
        Arg::Unknown => Ok(vec![with(Dim::Unknown); n]),
        Arg::Absent => {
            let Dim::Known(d) = s[axis] else {
                return Ok(vec![with(Dim::Unknown); n]);
            };
            if let Some(k) = ctx.int_opt("num_outputs") {
                if k != n as i64 {
                    return Err(rule!("num_outputs is {k} but the node has {n} outputs"));
                }
                let chunk = (d + k - 1) / k.max(1);
                return Ok((0..k)
                    .map(|i| with(Dim::Known((d - chunk * i).clamp(0, chunk))))
                    .collect());
            }
            if n == 0 || d % n as i64 != 0 {
                return Err(rule!(
                    "axis {axis} of size {d} cannot be split evenly into {n} outputs"
                ));
            }
            Ok(vec![with(Dim::Known(d / n as i64)); n])
        }
    }
}

/// Registers Split.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Split", &[1, 2, 11, 13, 18], Category::Shape)
            .traits(Traits::RESHAPING)
            .input("input", "T")
            .opt_input("split", "Tsplit")
            .var_output("outputs", "T", 1)
            .attr(axis("axis", 0))
            .attr(AttrSpec::of("split", AttrKind::Ints).versions(1, Some(13)))
            .attr(
                AttrSpec::of("num_outputs", AttrKind::Int)
                    .range(1, i64::MAX)
                    .int_buckets(&[(1, 1), (2, 2), (3, 4), (5, i64::MAX)])
                    .versions(18, None),
            )
            .types("T", CLASSIC16)
            .types("Tsplit", &[I64, F16, F32, F64])
            .infer(infer_split),
    );
}
