//! Scatter, ScatterElements and ScatterND.

use super::gather::{indices_along_axis, indices_tuples};
use super::{CLASSIC15, CLASSIC16, I64_ONLY, I64T, IND, axis, axis_of, out};
use crate::attr::AttrLookup;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn infer_scatter(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let idx = ctx.tensor(1)?;
    let upd = ctx.tensor(2)?;
    if let (Some(a), Some(b)) = (&idx.shape, &upd.shape)
        && a.len() != b.len()
    {
        return Err(rule!(
            "indices rank {} differs from updates rank {}",
            a.len(),
            b.len()
        ));
    }
    if let Some(s) = &x.shape {
        if let Some(a) = &idx.shape
            && a.len() != s.len()
        {
            return Err(rule!(
                "indices rank {} differs from data rank {}",
                a.len(),
                s.len()
            ));
        }
        axis_of(ctx.int("axis", 0), s.len())?;
    }
    out(x.dtype, x.shape)
}

/// Constant index tuples must be in range, and `updates` must have the shape
/// `indices.shape[:-1] + data.shape[indices.shape[-1]:]`.
fn scatter_nd_requires(ctx: &InferCtx) -> Result<(), InferError> {
    indices_tuples(ctx)?;
    let (Some(d), Some(i), Some(u)) = (
        ctx.tensor(0)?.shape,
        ctx.tensor(1)?.shape,
        ctx.tensor(2)?.shape,
    ) else {
        return Ok(());
    };
    let Some(Dim::Known(k)) = i.last().cloned() else {
        return Ok(());
    };
    let k = k as usize;
    if i.is_empty() || k > d.len() {
        return Err(rule!(
            "indices' last dimension {k} exceeds the data rank {}",
            d.len()
        ));
    }
    let want: Vec<Dim> = i[..i.len() - 1].iter().chain(&d[k..]).cloned().collect();
    let known = |v: &[Dim]| v.iter().all(|x| matches!(x, Dim::Known(_)));
    if known(&want) && known(&u) && want != u {
        return Err(rule!(
            "updates have shape {u:?}, expected {want:?} (indices' leading dims + data's trailing dims)"
        ));
    }
    Ok(())
}

fn infer_scatter_nd(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    out(x.dtype, x.shape)
}

/// Registers Scatter, ScatterElements and ScatterND.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Scatter", &[9], Category::Index)
            .removed_at(11)
            .input("data", "T")
            .input("indices", "Tind")
            .input("updates", "T")
            .output("output", "T")
            .attr(axis("axis", 0))
            .types("T", CLASSIC15)
            .types("Tind", IND)
            .requires(indices_along_axis)
            .infer(infer_scatter),
    );
    r.add(
        OpSpec::new("ScatterElements", &[11, 13, 16, 18], Category::Index)
            .input("data", "T")
            .input("indices", "Tind")
            .input("updates", "T")
            .output("output", "T")
            .attr(axis("axis", 0))
            .attr(reduction(16, Some(18), &["none", "add", "mul"]))
            .attr(reduction(18, None, &["none", "add", "mul", "max", "min"]))
            .types("T", CLASSIC16)
            .types("Tind", IND)
            .requires(indices_along_axis)
            .infer(infer_scatter),
    );
    r.add(
        OpSpec::new("ScatterND", &[11, 13, 16, 18], Category::Index)
            .input("data", "T")
            .input("indices", I64T)
            .input("updates", "T")
            .output("output", "T")
            .attr(reduction(16, Some(18), &["none", "add", "mul"]))
            .attr(reduction(18, None, &["none", "add", "mul", "max", "min"]))
            .types("T", CLASSIC16)
            .types(I64T, I64_ONLY)
            .infer(infer_scatter_nd)
            .requires(scatter_nd_requires),
    );
}

/// The `reduction` of ScatterElements and ScatterND: opset 16 brought none, add and mul, opset
/// 18 max and min (a model with `reduction="min"` at opset 17 is invalid).
fn reduction(since: i64, until: Option<i64>, legal: &[&'static str]) -> AttrSpec {
    AttrSpec::string("reduction", "none")
        .one_of(legal)
        .versions(since, until)
}
