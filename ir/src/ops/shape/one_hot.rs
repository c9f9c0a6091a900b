//! OneHot.

use super::{CLASSIC15, axis, axis_of, out};
use crate::attr::AttrLookup;
use crate::dtype::DType::{self, F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64};
use crate::ops::common::*;
use crate::registry::{Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// OneHot indices / depth.
const ONEHOT_IDX: &[DType] = &[F32, U8, I8, U16, I16, I32, I64, F16, F64, U32, U64];

fn infer_one_hot(ctx: &InferCtx) -> Infer {
    let idx = ctx.tensor(0)?;
    let vals = ctx.tensor(2)?;
    let Some(s) = idx.shape else {
        return out(vals.dtype, None);
    };
    let r = s.len() + 1;
    let axis = axis_of(ctx.int("axis", -1), r)?;
    let depth = match ctx.const_f64s(1).as_deref() {
        Some([d]) => {
            if *d < 1.0 {
                return Err(rule!("OneHot depth {d} must be at least 1"));
            }
            Dim::Known(*d as i64)
        }
        _ => Dim::Unknown,
    };
    let mut res = s;
    res.insert(axis, depth);
    out(vals.dtype, Some(res))
}

/// Registers OneHot.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("OneHot", &[9, 11], Category::Index)
            .traits(Traits::DISCRETE)
            .input("indices", "T1")
            .input("depth", "T2")
            .input("values", "T3")
            .output("output", "T3")
            .attr(axis("axis", -1))
            .types("T1", ONEHOT_IDX)
            .types("T2", ONEHOT_IDX)
            .types("T3", CLASSIC15)
            .infer(infer_one_hot)
            .requires(
                |c| match c.inputs.first().and_then(|t| t.as_ref()?.tensor()?.rank()) {
                    Some(0) => Err(rule!("OneHot indices must have rank 1 or more")),
                    _ => Ok(()),
                },
            ),
    );
}
