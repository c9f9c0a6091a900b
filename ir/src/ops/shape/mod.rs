//! Op specs of the shape family: reshaping, slicing, gathering and scattering, padding, resizing,
//! and the small constant-producing ops (Shape, Size, Constant, Range, ...). One file per op or
//! pair of ops:
//!
//! * `reshape.rs`: Reshape.
//! * `transpose.rs`: Transpose.
//! * `flatten.rs`: Flatten.
//! * `squeeze.rs`: Squeeze, Unsqueeze.
//! * `concat.rs`: Concat.
//! * `split.rs`: Split.
//! * `slice.rs`: Slice.
//! * `gather.rs`: Gather, GatherElements, GatherND.
//! * `scatter.rs`: Scatter, ScatterElements, ScatterND.
//! * `pad.rs`: Pad.
//! * `tile.rs`: Tile.
//! * `expand.rs`: Expand.
//! * `resize.rs`: Resize, Upsample.
//! * `depth_to_space.rs`: DepthToSpace, SpaceToDepth.
//! * `shape_size.rs`: Shape, Size.
//! * `constant.rs`: Constant, ConstantOfShape.
//! * `range.rs`: Range.
//! * `non_zero.rs`: NonZero.
//! * `compress.rs`: Compress.
//! * `one_hot.rs`: OneHot.
//! * `eye_like.rs`: EyeLike.
//! * `trilu.rs`: Trilu.
//! * `reverse_sequence.rs`: ReverseSequence.
//! * `center_crop_pad.rs`: CenterCropPad.
//!
//! Most of these ops also get a constant folder (`fold.rs` holds the machinery), so that shape
//! computations such as `Shape → Gather → Unsqueeze → Concat → Reshape` turn into static shapes
//! downstream.
mod center_crop_pad;
mod compress;
mod concat;
mod constant;
mod depth_to_space;
mod expand;
mod eye_like;
mod flatten;
mod fold;
mod gather;
mod non_zero;
mod one_hot;
mod pad;
mod range;
mod reshape;
mod resize;
mod reverse_sequence;
mod scatter;
mod shape_size;
mod slice;
mod split;
mod squeeze;
#[cfg(test)]
mod tests;
mod tile;
mod transpose;
mod trilu;

use crate::attr::AttrLookup;
use crate::dtype::DType::{self, I32, I64};
use crate::ops::common::*;
use crate::registry::{AttrSpec, InferCtx, Registry};
use crate::types::Dim;

// ---------------------------------------------------------------------------------------------
// dtype sets (unions over the versions of each op)
/// Every element type (Reshape, Transpose, Shape, ... in their newest versions).
const ALL26: &[DType] = crate::dtype::ALL;
/// The 16 classic types: numbers, bool, string, complex, bfloat16.
const CLASSIC16: &[DType] = crate::dtype::sets::CLASSIC_BF16;
/// The classic types without bfloat16.
const CLASSIC15: &[DType] = crate::dtype::sets::CLASSIC;
/// Index types.
const IND: &[DType] = &[I32, I64];
/// int64 only.
const I64_ONLY: &[DType] = &[I64];

/// The fixed int64 type variable used by shape-like inputs.
const I64T: &str = "tensor(int64)";

// ---------------------------------------------------------------------------------------------
// small helpers

/// A list argument that may come from an attribute (old opsets) or an input (new opsets).
#[derive(Clone, Debug, PartialEq)]
enum Arg {
    /// Neither attribute nor input is given.
    Absent,
    /// Given, but not a known constant.
    Unknown,
    /// Known values.
    Known(Vec<i64>),
}

/// Reads a list from attribute `attr` or, failing that, from input slot `input`.
fn list_arg(ctx: &InferCtx, attr: &str, input: usize) -> Arg {
    if let Some(v) = ctx.ints(attr) {
        return Arg::Known(v.to_vec());
    }
    if !ctx.has_input(input) {
        return Arg::Absent;
    }
    match ctx.const_i64s(input) {
        Some(v) => Arg::Known(v),
        None => Arg::Unknown,
    }
}

/// `s` with the dims at `axes` unknown (the others kept).
fn unknown_at(s: &[Dim], axes: &[usize]) -> Vec<Dim> {
    s.iter()
        .enumerate()
        .map(|(i, d)| {
            if axes.contains(&i) {
                Dim::Unknown
            } else {
                d.clone()
            }
        })
        .collect()
}

/// Dims that are not known become `Unknown` (a fresh shape of rank `n`).
fn unknown_dims(n: usize) -> Vec<Dim> {
    vec![Dim::Unknown; n]
}

/// The static length of a 1-D input (number of elements of a shape-like tensor).
fn static_len(ctx: &InferCtx, i: usize) -> Option<usize> {
    let t = ctx.tensor(i).ok()?;
    match t.shape.as_deref() {
        Some([Dim::Known(n)]) if *n >= 0 => Some(*n as usize),
        Some([]) => Some(1),
        _ => None,
    }
}

/// `d * k` for a dim and a known factor.
fn dim_mul(d: &Dim, k: i64) -> Dim {
    match d {
        Dim::Known(v) => Dim::Known(v.saturating_mul(k)),
        other if k == 1 => other.clone(),
        _ => Dim::Unknown,
    }
}

/// An axis of a rank-`rank` tensor; a scalar has none.
fn axis_of(axis: i64, rank: usize) -> Result<usize, InferError> {
    if rank == 0 {
        return Err(InferError::AxisOfScalar(axis));
    }
    norm_axis(axis, rank)
}

/// Axes of a rank-`rank` tensor; a scalar has none.
fn axes_of(axes: &[i64], rank: usize) -> Result<Vec<usize>, InferError> {
    if rank == 0 && !axes.is_empty() {
        return Err(InferError::AxesOfScalar(axes.to_vec()));
    }
    norm_axes(axes, rank)
}

fn out(dtype: DType, shape: Option<Vec<Dim>>) -> Infer {
    Ok(vec![tensor(dtype, shape)])
}

/// An `axis` attribute with the buckets of an axis.
fn axis(name: &'static str, default: i64) -> AttrSpec {
    AttrSpec::int(name, default).int_buckets(AXIS_BUCKETS)
}

/// Registers this family.
pub fn register(r: &mut Registry) {
    reshape::register(r);
    transpose::register(r);
    flatten::register(r);
    squeeze::register(r);
    concat::register(r);
    split::register(r);
    slice::register(r);
    gather::register(r);
    scatter::register(r);
    pad::register(r);
    tile::register(r);
    expand::register(r);
    resize::register(r);
    depth_to_space::register(r);
    shape_size::register(r);
    constant::register_constant_of_shape(r);
    range::register(r);
    constant::register(r);
    non_zero::register(r);
    compress::register(r);
    one_hot::register(r);
    eye_like::register(r);
    trilu::register(r);
    reverse_sequence::register(r);
    center_crop_pad::register(r);
}
