//! Ops that move elements around, one file per group: [`reshape`] (Identity, Reshape, Flatten,
//! Squeeze, Unsqueeze, Transpose, Expand, Tile, DepthToSpace, SpaceToDepth, Shape, Size),
//! [`slice`] (Slice, Split, Concat, ReverseSequence), [`gather`] (Gather, GatherElements,
//! GatherND, Compress, NonZero, Unique), [`scatter`] (ScatterElements, Scatter, ScatterND,
//! OneHot), [`pad`] (Pad) and [`constant`] (Constant, ConstantOfShape, Range, EyeLike, Trilu).
use super::tensor::*;
use super::{Cx, OpFn, V, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;
use std::collections::BTreeMap;

mod constant;
mod gather;
mod pad;
mod reshape;
mod scatter;
mod slice;

pub use reshape::transpose;
pub use slice::{concat, slice_axis};

/// Ints from attribute `attr` when the opset is below `since`, else from input `i` (None when
/// absent either way).
pub fn attr_or_input(
    cx: &Cx,
    n: &Node,
    ins: &[Option<&V>],
    attr: &str,
    i: usize,
    since: i64,
) -> R<Option<Vec<i64>>> {
    if cx.opset < since {
        Ok(n.ints(attr).map(|v| v.to_vec()))
    } else {
        Ok(match opt(ins, i)? {
            Some(t) => Some(t.ints()?),
            None => None,
        })
    }
}

/// Normalized, deduplicated-checked axes.
pub fn norm_axes(axes: &[i64], rank: usize) -> R<Vec<usize>> {
    let mut out = Vec::new();
    for &a in axes {
        let a = norm_axis(a, rank)?;
        if out.contains(&a) {
            return Err(err(format!("axis {a} repeated in {axes:?}")));
        }
        out.push(a);
    }
    Ok(out)
}

pub(super) fn register(t: &mut BTreeMap<&'static str, OpFn>) {
    reshape::register(t);
    slice::register(t);
    gather::register(t);
    scatter::register(t);
    pad::register(t);
    constant::register(t);
}
