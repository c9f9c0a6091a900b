//! Flatten.

use super::fold::fold_relabel;
use super::{ALL26, axis, out, unknown_dims};
use crate::attr::AttrLookup;
use crate::ops::common::*;
use crate::registry::{Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// Product of dims, symbolic when exactly one factor is a parameter and the rest multiply to 1.
fn dims_prod_sym(d: &[Dim]) -> Dim {
    if let Some(p) = dims_product(d) {
        return Dim::Known(p);
    }
    let params: Vec<&Dim> = d.iter().filter(|x| !matches!(x, Dim::Known(_))).collect();
    let known: i64 = d.iter().filter_map(Dim::value).product();
    if params.len() == 1 && known == 1 && matches!(params[0], Dim::Param(_)) {
        return params[0].clone();
    }
    Dim::Unknown
}

fn infer_flatten(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let axis = ctx.int("axis", 1);
    let Some(s) = x.shape else {
        return out(x.dtype, Some(unknown_dims(2)));
    };
    let r = s.len() as i64;
    if axis < -r || axis > r {
        return Err(rule!("Flatten axis {axis} is out of range for rank {r}"));
    }
    let a = if axis < 0 { axis + r } else { axis } as usize;
    out(
        x.dtype,
        Some(vec![dims_prod_sym(&s[..a]), dims_prod_sym(&s[a..])]),
    )
}

/// Registers Flatten.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Flatten", &[1, 9, 11, 13, 21, 23, 24, 25], Category::Shape)
            .traits(Traits::RESHAPING)
            .input("input", "T")
            .output("output", "T")
            .attr(axis("axis", 1))
            .types("T", ALL26)
            .infer(infer_flatten)
            .fold(|c| fold_relabel(c, infer_flatten)),
    );
}
