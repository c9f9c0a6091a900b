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
use super::{MAX_RANK, Recipe};
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

use compress::{compress, compress_outs};
use concat::concat;
use depth_space::{depth_to_space, space_to_depth};
use expand::{expand, expand_outs};
use eye_like::{eye_like, eye_outs};
use gather::{gather, gather_elements, gather_nd, gather_outs};
use one_hot::{one_hot, one_hot_outs};
use pad::{center_crop_pad, pad};
use quantize::{dyn_quant, f32_same, quant_outs, quantize, u8_same};
use reshape::{flatten, reshape, reshape_outs};
use resize::resize;
use reverse_sequence::reverse_sequence;
use scatter::{scatter_elements, scatter_nd};
use shape_size::{i64_rank1, i64_scalar_out, shape_op};
use slice::slice;
use split::split;
use squeeze::{squeeze, unsqueeze, unsqueeze_outs};
use tile::tile;
use transpose::transpose;

/// The element count an op of this family may grow its input to.
const LIMIT: i64 = 1 << 16;
/// Every generated dtype.
const ALL: Dt = Dt::Reg;

/// An `axes` input constant.
fn axes_const(site: &mut Site<'_>, axes: &[i64]) -> String {
    site.constant_i64s("axes", &[axes.len() as i64], axes)
}

/// The family's recipes, one row per op (op type, dtypes and ranks read, output rule,
/// builder), in the builtin order.
#[rustfmt::skip]
const ROWS: &[Row] = &[
    ("Reshape",               ALL,     ANY_RANK,          reshape_outs,   reshape),
    ("Flatten",               ALL,     RANK1,             rank2,          flatten),
    ("Transpose",             ALL,     ANY_RANK,          same,           transpose),
    ("Squeeze",               ALL,     (0, MAX_RANK - 1), same_dtype_le,  squeeze),
    ("Unsqueeze",             ALL,     (0, MAX_RANK - 2), unsqueeze_outs, unsqueeze),
    ("Expand",                ALL,     (0, MAX_RANK - 1), expand_outs,    expand),
    ("Tile",                  ALL,     RANK1,             same,           tile),
    ("Slice",                 ALL,     RANK1,             same,           slice),
    ("Pad",                   ALL,     RANK1,             same,           pad),
    ("Concat",                ALL,     RANK1,             same,           concat),
    ("Split",                 ALL,     RANK1,             same,           split),
    ("Gather",                ALL,     RANK1,             gather_outs,    gather),
    ("GatherElements",        ALL,     RANK1,             same,           gather_elements),
    ("GatherND",              ALL,     RANK1,             same_dtype_le,  gather_nd),
    ("ScatterElements",       ALL,     RANK1,             same,           scatter_elements),
    ("Scatter",               ALL,     RANK1,             same,           scatter_elements),
    ("ScatterND",             ALL,     RANK1,             same,           scatter_nd),
    ("DepthToSpace",          ALL,     (4, 4),            same,           depth_to_space),
    ("SpaceToDepth",          ALL,     (4, 4),            same,           space_to_depth),
    ("Shape",                 ALL,     ANY_RANK,          i64_rank1,      shape_op),
    ("Size",                  ALL,     ANY_RANK,          i64_scalar_out, plain),
    ("Resize",                ALL,     RANK1,             same,           resize),
    ("Upsample",              ALL,     RANK1,             same,           resize),
    ("Compress",              ALL,     RANK1,             compress_outs,  compress),
    ("OneHot",                Dt::Reg, (1, MAX_RANK - 1), one_hot_outs,   one_hot),
    ("EyeLike",               Dt::Reg, (2, 2),            eye_outs,       eye_like),
    ("ReverseSequence",       ALL,     (2, MAX_RANK),     same,           reverse_sequence),
    ("CenterCropPad",         ALL,     RANK1,             same,           center_crop_pad),
    ("QuantizeLinear",        Dt::Reg, ANY_RANK,          quant_outs,     quantize),
    ("DequantizeLinear",      Dt::Reg, ANY_RANK,          f32_same,       quantize),
    ("DynamicQuantizeLinear", Dt::Reg, ANY_RANK,          u8_same,        dyn_quant),
];

/// Registers the family, in the builtin order.
pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    push_rows(list, ROWS);
}
