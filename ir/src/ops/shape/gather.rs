//! Gather, GatherElements and GatherND, and the range checks of constant indices that the
//! scatters share.

use super::fold::{build, each_index, flat, load, strides};
use super::{CLASSIC16, I64_ONLY, I64T, IND, axis, axis_of, out};
use crate::attr::AttrLookup;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::tensor::{Tensor, TensorExt};
use crate::types::Dim;

fn infer_gather(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let idx = ctx.tensor(1)?;
    let (Some(s), Some(q)) = (x.shape, idx.shape) else {
        return out(x.dtype, None);
    };
    let axis = axis_of(ctx.int("axis", 0), s.len())?;
    if s.is_empty() {
        return Err(rule!("Gather needs data of rank 1 or more"));
    }
    let mut res = s[..axis].to_vec();
    res.extend(q);
    res.extend_from_slice(&s[axis + 1..]);
    out(x.dtype, Some(res))
}

fn fold_gather(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let idx = ctx.const_tensor(1)?;
    let vals = load(t)?;
    let iv = idx.to_i64s().ok()?;
    let r = t.dims.len();
    let axis = axis_of(ctx.int("axis", 0), r).ok()?;
    let q = idx.dims.len();
    let mut od = t.dims[..axis].to_vec();
    od.extend_from_slice(&idx.dims);
    od.extend_from_slice(&t.dims[axis + 1..]);
    let st = strides(&t.dims);
    let ist = strides(&idx.dims);
    let d = t.dims[axis];
    let picks = each_index(&od, |m| {
        let mut i = iv[flat(&m[axis..axis + q], &ist)];
        if i < 0 {
            i += d;
        }
        if !(0..d).contains(&i) {
            return None;
        }
        let mut src = m[..axis].to_vec();
        src.push(i);
        src.extend_from_slice(&m[axis + q..]);
        Some(flat(&src, &st))
    })?;
    Some(vec![build(t.dtype(), &od, &vals, &picks)])
}

fn infer_gather_elements(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let idx = ctx.tensor(1)?;
    if let (Some(a), Some(b)) = (&x.shape, &idx.shape) {
        if a.len() != b.len() {
            return Err(rule!(
                "GatherElements data has rank {} but indices rank {}",
                a.len(),
                b.len()
            ));
        }
        axis_of(ctx.int("axis", 0), a.len())?;
    }
    out(x.dtype, idx.shape)
}

fn infer_gather_nd(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let idx = ctx.tensor(1)?;
    let b = ctx.int("batch_dims", 0).max(0) as usize;
    let (Some(s), Some(q)) = (x.shape, idx.shape) else {
        return out(x.dtype, None);
    };
    let Some(last) = q.last() else {
        return Err(rule!("GatherND indices must have rank 1 or more"));
    };
    let Dim::Known(k) = last else {
        return out(x.dtype, None);
    };
    if *k < 0 {
        return Err(rule!("GatherND index depth {k} is negative"));
    }
    let k = *k as usize;
    if b + k > s.len() {
        return Err(rule!(
            "GatherND: batch_dims {b} + index depth {k} exceed the data rank {}",
            s.len()
        ));
    }
    if b >= q.len() {
        return Err(rule!(
            "GatherND: batch_dims {b} needs indices of rank above {b}, found {}",
            q.len()
        ));
    }
    for i in 0..b {
        if let (Dim::Known(p), Dim::Known(r)) = (&s[i], &q[i])
            && p != r
        {
            return Err(rule!(
                "GatherND: batch dimension {i} is {p} in the data and {r} in the indices"
            ));
        }
    }
    let mut res = q[..q.len() - 1].to_vec();
    res.extend_from_slice(&s[b + k..]);
    out(x.dtype, Some(res))
}

// Index ranges: constant indices must address existing elements (out-of-range indices are an
// error for Gather*, Scatter*; a mutation that changes the data's shape must not make them so).

/// Checks constant `indices` (input 1) against data (input 0) dimension `axis`.
pub(super) fn indices_along_axis(ctx: &InferCtx) -> Result<(), InferError> {
    let (Some(d), Some(idx)) = (ctx.tensor(0)?.shape, ctx.const_i64s(1)) else {
        return Ok(());
    };
    if d.is_empty() {
        return Ok(());
    }
    let axis = axis_of(ctx.int("axis", 0), d.len())?;
    let Dim::Known(n) = d[axis] else {
        return Ok(());
    };
    match idx.iter().find(|&&i| i < -n || i >= n) {
        Some(i) => Err(rule!(
            "index {i} is out of range for axis {axis} of length {n}"
        )),
        None => Ok(()),
    }
}

/// Checks constant index tuples (input 1, last dimension = tuple length) of GatherND /
/// ScatterND against the data dimensions after `batch_dims`.
pub(super) fn indices_tuples(ctx: &InferCtx) -> Result<(), InferError> {
    let (Some(d), Some(q), Some(idx)) = (
        ctx.tensor(0)?.shape,
        ctx.tensor(1)?.shape,
        ctx.const_i64s(1),
    ) else {
        return Ok(());
    };
    let Some(Dim::Known(k)) = q.last().cloned() else {
        return Ok(());
    };
    let b = ctx.int("batch_dims", 0).max(0) as usize;
    if k <= 0 || b + k as usize > d.len() {
        return Ok(()); // the shape check reports it
    }
    for (p, &i) in idx.iter().enumerate() {
        let j = b + p % k as usize;
        if let Dim::Known(n) = d[j]
            && (i < -n || i >= n)
        {
            return Err(rule!(
                "index {i} is out of range for dimension {j} of length {n}"
            ));
        }
    }
    Ok(())
}

/// Registers Gather, GatherElements and GatherND.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Gather", &[1, 11, 13], Category::Index)
            .traits(Traits::RESHAPING)
            .input("data", "T")
            .input("indices", "Tind")
            .output("output", "T")
            .attr(axis("axis", 0))
            .types("T", CLASSIC16)
            .types("Tind", IND)
            .requires(indices_along_axis)
            .infer(infer_gather)
            .fold(fold_gather),
    );
    r.add(
        OpSpec::new("GatherElements", &[11, 13], Category::Index)
            .input("data", "T")
            .input("indices", "Tind")
            .output("output", "T")
            .attr(axis("axis", 0))
            .types("T", CLASSIC16)
            .types("Tind", IND)
            .requires(indices_along_axis)
            .infer(infer_gather_elements),
    );
    r.add(
        OpSpec::new("GatherND", &[11, 12, 13], Category::Index)
            .input("data", "T")
            .input("indices", I64T)
            .output("output", "T")
            .attr(
                AttrSpec::int("batch_dims", 0)
                    .range(0, i64::MAX)
                    .int_buckets(&[(0, 0), (1, 1), (2, i64::MAX)])
                    .versions(12, None),
            )
            .types("T", CLASSIC16)
            .types(I64T, I64_ONLY)
            .requires(indices_tuples)
            .infer(infer_gather_nd),
    );
}
