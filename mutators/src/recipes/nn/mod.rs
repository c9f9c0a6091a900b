//! Neural-network layers: convolutions, pooling, normalizations, matrix products, `Det`,
//! `Einsum` and the recurrent layers. Weights are sized from `x`'s shape, kernels and output
//! channels are kept small so that outputs stay within the element limit.
//!
//! One file per op or small group of ops:
//!
//! | ops | file |
//! | --- | --- |
//! | `Conv`, `ConvTranspose` | `conv.rs` |
//! | `MaxPool`, `AveragePool`, `LpPool`, `GlobalAveragePool`, `GlobalMaxPool`, `GlobalLpPool`, `MaxUnpool` | `pool.rs` |
//! | `BatchNormalization`, `InstanceNormalization`, `LayerNormalization`, `GroupNormalization`, `LRN` | `normalization.rs` |
//! | `MatMul`, `MatMulInteger`, `Gemm` | `matmul.rs` |
//! | `Det` | `det.rs` |
//! | `Einsum` | `einsum.rs` |
//! | `LSTM`, `GRU`, `RNN` | `rnn.rs` |
//! | `RoiAlign`, `MaxRoiPool` | `roi.rs` |
//! | `GridSample`, `AffineGrid` | `grid.rs` |
//! | `ConvInteger`, `QLinearConv`, `QLinearMatMul` | `quantized.rs` |
//! | `DeformConv` | `deform_conv.rs` |
//! | `Col2Im` | `col2im.rs` |
//!
//! `window.rs` draws the spatial window (kernel, strides, dilations, pads) of the convolutions
//! and pools.
use super::util::*;
use super::{MAX_RANK, Recipe};
use crate::builder::SplitMix64;
use crate::ir::DType;
use crate::site::Site;

mod col2im;
mod conv;
mod deform_conv;
mod det;
mod einsum;
mod grid;
mod matmul;
mod normalization;
mod pool;
mod quantized;
mod rnn;
mod roi;
mod window;

pub(super) use conv::conv_with;
pub(super) use matmul::gemm_with;
pub(super) use quantized::scale_zero;

use col2im::col2im;
use conv::conv;
use deform_conv::deform_conv;
use det::{det, det_outs};
use einsum::einsum;
use grid::{affine_grid, grid_sample};
use matmul::{gemm, matmul, matmul_int_outs, matmul_outs};
use normalization::{batch_norm, group_norm, instance_norm, layer_norm, lrn};
use pool::{global_pool, max_unpool, pool};
use quantized::{i32_same, qconv, qlinear_matmul};
use rnn::rnn;
use roi::roi;

/// Ranks of an input with a batch, a channel and 1 to 3 spatial axes.
const SPATIAL: (usize, usize) = (3, 5);
/// The element count an op of this family may grow its input to.
const LIMIT: i64 = 1 << 16;

/// Divisors of `c` in `lo..=hi`.
fn divisors(c: i64, lo: i64, hi: i64) -> Vec<i64> {
    (lo.max(1)..=hi.min(c)).filter(|g| c % g == 0).collect()
}

/// A group count for `c` channels over the buckets 1 / 2..=4 / 5+ (at most 16).
fn group_of(rng: &mut SplitMix64, c: i64) -> i64 {
    let b = below(rng, 3);
    let cands = match b {
        0 => vec![1],
        1 => divisors(c, 2, 4),
        _ => divisors(c, 5, 16),
    };
    if cands.is_empty() {
        1
    } else {
        pick(rng, &cands)
    }
}

/// Output channels per group: 1 over many groups, else 1 or 2.
fn per_group(rng: &mut SplitMix64, group: i64) -> i64 {
    if group > 4 { 1 } else { between(rng, 1, 2) }
}

/// A weight constant of `shape`, uniform in `±1/sqrt(fan_in)`.
fn weight(
    site: &mut Site<'_>,
    dt: DType,
    shape: &[i64],
    fan_in: i64,
    rng: &mut SplitMix64,
) -> String {
    let b = 1.0 / (fan_in.max(1) as f64).sqrt();
    site.random_constant("w", dt, shape, -b, b, rng)
}

/// The family's recipes, one row per op (op type, dtypes and ranks read, output rule,
/// builder), in the builtin order.
#[rustfmt::skip]
const ROWS: &[Row] = &[
    ("Conv",                  Dt::Reg,          SPATIAL,       same,            conv),
    ("ConvTranspose",         Dt::Reg,          SPATIAL,       same,            conv),
    ("MaxPool",               Dt::Reg,          SPATIAL,       same,            pool),
    ("AveragePool",           Dt::Reg,          SPATIAL,       same,            pool),
    ("LpPool",                Dt::Reg,          SPATIAL,       same,            pool),
    ("GlobalAveragePool",     Dt::Reg,          SPATIAL,       same,            global_pool),
    ("GlobalMaxPool",         Dt::Reg,          SPATIAL,       same,            global_pool),
    ("GlobalLpPool",          Dt::Reg,          SPATIAL,       same,            global_pool),
    ("MaxUnpool",             Dt::Reg,          SPATIAL,       same,            max_unpool),
    ("BatchNormalization",    Dt::Reg,          (2, MAX_RANK), same,            batch_norm),
    ("InstanceNormalization", Dt::Reg,          SPATIAL,       same,            instance_norm),
    ("LayerNormalization",    Dt::Reg,          RANK1,         same,            layer_norm),
    ("GroupNormalization",    Dt::Reg,          SPATIAL,       same,            group_norm),
    ("LRN",                   Dt::Reg,          SPATIAL,       same,            lrn),
    ("MatMul",                Dt::Reg,          RANK1,         matmul_outs,     matmul),
    ("MatMulInteger",         Dt::Reg,          RANK1,         matmul_int_outs, matmul),
    ("Gemm",                  Dt::Reg,          (2, 2),        same,            gemm),
    ("Det",                   Dt::Reg,          (2, MAX_RANK), det_outs,        det),
    ("Einsum",                Dt::Reg,          (1, 5),        same_dtype_le,   einsum),
    ("LSTM",                  Dt::Reg,          (3, 3),        rank4,           rnn),
    ("GRU",                   Dt::Reg,          (3, 3),        rank4,           rnn),
    ("RNN",                   Dt::Reg,          (3, 3),        rank4,           rnn),
    ("RoiAlign",              Dt::Reg,          (4, 4),        rank4,           roi),
    ("MaxRoiPool",            Dt::Reg,          (4, 4),        rank4,           roi),
    ("GridSample",            Dt::Reg,          (4, 4),        rank4,           grid_sample),
    ("ConvInteger",           Dt::Reg,          SPATIAL,       i32_same,        qconv),
    ("QLinearConv",           Dt::Reg,          SPATIAL,       same,            qconv),
    ("QLinearMatMul",         Dt::Reg,          (2, MAX_RANK), same,            qlinear_matmul),
    ("DeformConv",            Dt::Reg,          (4, 4),        rank4,           deform_conv),
    ("AffineGrid",            Dt::Reg,          (3, 3),        rank4,           affine_grid),
    // Col2Im exists from opset 18, so the zoo's opset cannot narrow its all-types constraint:
    // the recipe keeps to floats, where it sums overlapping blocks.
    ("Col2Im",                Dt::Only(FLOATS), (3, 3),        rank4,           col2im),
];

/// Registers the family, in the builtin order.
pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    push_rows(list, ROWS);
}
