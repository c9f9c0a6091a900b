//! Shape and indexing ops (reshapes, transposes, slicing, padding, gathers, scatters,
//! resizes, ...) and the quantization ops. Index constants are generated in range and, for
//! scatters, without duplicates, so every build is deterministic.
//!
//! One file per op or small group of ops:
//!
//! | ops | file |
//! | --- | --- |
//! | `Reshape`, `Flatten` | `reshape.rs` |
//! | `Transpose` | `transpose.rs` |
//! | `Squeeze`, `Unsqueeze` | `squeeze.rs` |
//! | `Expand` | `expand.rs` |
//! | `Tile` | `tile.rs` |
//! | `Slice` | `slice.rs` |
//! | `Pad`, `CenterCropPad` | `pad.rs` |
//! | `Concat` | `concat.rs` |
//! | `Split` | `split.rs` |
//! | `Gather`, `GatherElements`, `GatherND` | `gather.rs` |
//! | `ScatterElements`, `Scatter`, `ScatterND` | `scatter.rs` |
//! | `DepthToSpace`, `SpaceToDepth` | `depth_space.rs` |
//! | `Shape`, `Size` | `shape_size.rs` |
//! | `Resize`, `Upsample` | `resize.rs` |
//! | `Compress` | `compress.rs` |
//! | `OneHot` | `one_hot.rs` |
//! | `EyeLike` | `eye_like.rs` |
//! | `ReverseSequence` | `reverse_sequence.rs` |
//! | `QuantizeLinear`, `DequantizeLinear`, `DynamicQuantizeLinear` | `quantize.rs` |
use super::util::*;
use super::{GEN_DTYPES, MAX_RANK, Recipe};
use crate::site::Site;

mod compress;
mod concat;
mod depth_space;
mod expand;
mod eye_like;
mod gather;
mod one_hot;
mod pad;
mod quantize;
mod reshape;
mod resize;
mod reverse_sequence;
mod scatter;
mod shape_size;
mod slice;
mod split;
mod squeeze;
mod tile;
mod transpose;

/// The element count an op of this family may grow its input to.
const LIMIT: i64 = 1 << 16;

fn axes_const(site: &mut Site<'_>, axes: &[i64]) -> String {
    site.constant_i64s("axes", &[axes.len() as i64], axes)
}

/// Registers the family, in the builtin order.
pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    let all = Dt::Only(GEN_DTYPES);
    list.push(R::boxed(
        "Reshape",
        all,
        ANY_RANK,
        reshape::reshape_outs,
        reshape::reshape,
    ));
    list.push(R::boxed("Flatten", all, RANK1, rank2, reshape::flatten));
    list.push(R::boxed(
        "Transpose",
        all,
        ANY_RANK,
        same,
        transpose::transpose,
    ));
    list.push(R::boxed(
        "Squeeze",
        all,
        (0, MAX_RANK - 1),
        same_dtype_le,
        squeeze::squeeze,
    ));
    list.push(R::boxed(
        "Unsqueeze",
        all,
        (0, MAX_RANK - 2),
        squeeze::unsqueeze_outs,
        squeeze::unsqueeze,
    ));
    list.push(R::boxed(
        "Expand",
        all,
        (0, MAX_RANK - 1),
        expand::expand_outs,
        expand::expand,
    ));
    list.push(R::boxed("Tile", all, RANK1, same, tile::tile));
    list.push(R::boxed("Slice", all, RANK1, same, slice::slice));
    list.push(R::boxed("Pad", all, RANK1, same, pad::pad));
    list.push(R::boxed("Concat", all, RANK1, same, concat::concat));
    list.push(R::boxed("Split", all, RANK1, same, split::split));
    list.push(R::boxed(
        "Gather",
        all,
        RANK1,
        gather::gather_outs,
        gather::gather,
    ));
    list.push(R::boxed(
        "GatherElements",
        all,
        RANK1,
        same,
        gather::gather_elements,
    ));
    list.push(R::boxed(
        "GatherND",
        all,
        RANK1,
        same_dtype_le,
        gather::gather_nd,
    ));
    list.push(R::boxed(
        "ScatterElements",
        all,
        RANK1,
        same,
        scatter::scatter_elements,
    ));
    list.push(R::boxed(
        "Scatter",
        all,
        RANK1,
        same,
        scatter::scatter_elements,
    ));
    list.push(R::boxed("ScatterND", all, RANK1, same, scatter::scatter_nd));
    list.push(R::boxed(
        "DepthToSpace",
        all,
        (4, 4),
        same,
        depth_space::depth_to_space,
    ));
    list.push(R::boxed(
        "SpaceToDepth",
        all,
        (4, 4),
        same,
        depth_space::space_to_depth,
    ));
    list.push(R::boxed(
        "Shape",
        all,
        ANY_RANK,
        shape_size::i64_rank1,
        shape_size::shape_op,
    ));
    list.push(R::boxed(
        "Size",
        all,
        ANY_RANK,
        shape_size::i64_scalar_out,
        shape_size::size,
    ));
    list.push(R::boxed("Resize", all, RANK1, same, resize::resize));
    list.push(R::boxed("Upsample", all, RANK1, same, resize::resize));
    list.push(R::boxed(
        "Compress",
        all,
        RANK1,
        compress::compress_outs,
        compress::compress,
    ));
    list.push(R::boxed(
        "OneHot",
        Dt::Reg,
        (1, MAX_RANK - 1),
        one_hot::one_hot_outs,
        one_hot::one_hot,
    ));
    list.push(R::boxed(
        "EyeLike",
        Dt::Reg,
        (2, 2),
        eye_like::eye_outs,
        eye_like::eye_like,
    ));
    list.push(R::boxed(
        "ReverseSequence",
        all,
        (2, MAX_RANK),
        same,
        reverse_sequence::reverse_sequence,
    ));
    list.push(R::boxed(
        "CenterCropPad",
        all,
        RANK1,
        same,
        pad::center_crop_pad,
    ));
    list.push(R::boxed(
        "QuantizeLinear",
        Dt::Reg,
        ANY_RANK,
        quantize::quant_outs,
        quantize::quantize,
    ));
    list.push(R::boxed(
        "DequantizeLinear",
        Dt::Reg,
        ANY_RANK,
        quantize::f32_same,
        quantize::quantize,
    ));
    list.push(R::boxed(
        "DynamicQuantizeLinear",
        Dt::Reg,
        ANY_RANK,
        quantize::u8_same,
        quantize::dyn_quant,
    ));
}
