//! Concat.

use super::fold::{Vals, build, each_index, flat, load, strides};
use super::{CLASSIC16, axis, axis_of, out, unknown_dims};
use crate::attr::AttrLookup;
use crate::dtype::DType::{self};
use crate::ops::common::*;
use crate::registry::{Category, InferCtx, OpSpec, Registry, Traits};
use crate::tensor::{Tensor, TensorExt};
use crate::types::Dim;

/// Two descriptions of one dim: known beats symbolic beats unknown; two different known sizes
/// are a contradiction.
fn merge_dim(a: &Dim, b: &Dim, what: &str) -> Result<Dim, InferError> {
    Ok(match (a, b) {
        (Dim::Known(x), Dim::Known(y)) if x != y => {
            return Err(rule!("{what}: dims {x} and {y} differ"));
        }
        (Dim::Known(_), _) => a.clone(),
        (_, Dim::Known(_)) => b.clone(),
        (Dim::Param(_), _) => a.clone(),
        _ => b.clone(),
    })
}

fn infer_concat(ctx: &InferCtx) -> Infer {
    let n = ctx.n_inputs();
    if n == 0 {
        return Err(rule!("Concat needs at least one input"));
    }
    let mut shapes = Vec::new();
    let mut dtype = DType::Other(0);
    for i in 0..n {
        let t = ctx.tensor(i)?;
        if !dtype.is_known() {
            dtype = t.dtype;
        }
        shapes.push(t.shape);
    }
    let Some(rank) = shapes.iter().flatten().map(|s| s.len()).next() else {
        return out(dtype, None);
    };
    let axis = axis_of(ctx.int("axis", 1), rank)?;
    let mut res: Vec<Dim> = unknown_dims(rank);
    let mut sum = Some(0i64);
    for s in &shapes {
        let Some(s) = s else {
            sum = None;
            continue;
        };
        if s.len() != rank {
            return Err(rule!("Concat inputs have ranks {rank} and {}", s.len()));
        }
        for k in 0..rank {
            if k == axis {
                sum = match (sum, &s[k]) {
                    (Some(a), Dim::Known(b)) => Some(a.saturating_add(*b)),
                    _ => None,
                };
            } else {
                res[k] = merge_dim(&res[k], &s[k], &format!("Concat axis {k}"))?;
            }
        }
    }
    res[axis] = match sum {
        Some(v) => Dim::Known(v),
        None if shapes.len() == 1 => shapes[0].as_ref().map_or(Dim::Unknown, |s| s[axis].clone()),
        None => Dim::Unknown,
    };
    out(dtype, Some(res))
}

fn fold_concat(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let ts: Vec<&Tensor> = (0..ctx.n_inputs())
        .map(|i| ctx.const_tensor(i))
        .collect::<Option<_>>()?;
    let dtype = ts.first()?.dtype();
    let rank = ts[0].dims.len();
    if rank == 0
        || ts
            .iter()
            .any(|t| t.dims.len() != rank || t.dtype() != dtype)
    {
        return None;
    }
    let axis = axis_of(ctx.int("axis", 1), rank).ok()?;
    // One value list with every input appended, and the offset of each input in it.
    let mut all = Vec::new();
    let mut offsets = Vec::new();
    let mut is_int = None;
    for t in &ts {
        let v = load(t)?;
        offsets.push(all.len());
        match v {
            Vals::I(v) if is_int != Some(false) => {
                is_int = Some(true);
                all.extend(v.into_iter().map(|x| x as f64));
            }
            Vals::F(v) if is_int != Some(true) => {
                is_int = Some(false);
                all.extend(v);
            }
            _ => return None,
        }
    }
    let mut od = ts[0].dims.clone();
    od[axis] = ts.iter().map(|t| t.dims[axis]).sum();
    let picks = each_index(&od, |m| {
        let mut along = m[axis];
        for (k, t) in ts.iter().enumerate() {
            if along < t.dims[axis] {
                let mut src = m.to_vec();
                src[axis] = along;
                return Some(offsets[k] + flat(&src, &strides(&t.dims)));
            }
            along -= t.dims[axis];
        }
        None
    })?;
    let vals = if is_int == Some(true) {
        // Exact for int64: reload without going through f64.
        let mut iv = Vec::new();
        for t in &ts {
            match load(t)? {
                Vals::I(v) => iv.extend(v),
                Vals::F(_) => return None,
            }
        }
        Vals::I(iv)
    } else {
        Vals::F(all)
    };
    Some(vec![build(dtype, &od, &vals, &picks)])
}

/// Registers Concat.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Concat", &[1, 4, 11, 13], Category::Shape)
            .traits(Traits::RESHAPING)
            .var_input("inputs", "T", 1)
            .output("concat_result", "T")
            .attr(axis("axis", 1).no_buckets().versions(1, Some(4)))
            .attr(axis("axis", 1).required().versions(4, None))
            .types("T", CLASSIC16)
            .infer(infer_concat)
            .fold(fold_concat),
    );
}
