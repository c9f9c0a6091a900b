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

/// Registers the family, in the builtin order.
pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    list.push(R::boxed("Conv", Dt::Reg, SPATIAL, same, conv::conv));
    list.push(R::boxed(
        "ConvTranspose",
        Dt::Reg,
        SPATIAL,
        same,
        conv::conv,
    ));
    push_each(
        list,
        &["MaxPool", "AveragePool", "LpPool"],
        Dt::Reg,
        SPATIAL,
        same,
        pool::pool,
    );
    push_each(
        list,
        &["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"],
        Dt::Reg,
        SPATIAL,
        same,
        pool::global_pool,
    );
    list.push(R::boxed(
        "MaxUnpool",
        Dt::Reg,
        SPATIAL,
        same,
        pool::max_unpool,
    ));
    list.push(R::boxed(
        "BatchNormalization",
        Dt::Reg,
        (2, MAX_RANK),
        same,
        normalization::batch_norm,
    ));
    list.push(R::boxed(
        "InstanceNormalization",
        Dt::Reg,
        SPATIAL,
        same,
        normalization::instance_norm,
    ));
    list.push(R::boxed(
        "LayerNormalization",
        Dt::Reg,
        RANK1,
        same,
        normalization::layer_norm,
    ));
    list.push(R::boxed(
        "GroupNormalization",
        Dt::Reg,
        SPATIAL,
        same,
        normalization::group_norm,
    ));
    list.push(R::boxed("LRN", Dt::Reg, SPATIAL, same, normalization::lrn));
    list.push(R::boxed(
        "MatMul",
        Dt::Reg,
        RANK1,
        matmul::matmul_outs,
        matmul::matmul,
    ));
    list.push(R::boxed(
        "MatMulInteger",
        Dt::Reg,
        RANK1,
        matmul::matmul_int_outs,
        matmul::matmul,
    ));
    list.push(R::boxed("Gemm", Dt::Reg, (2, 2), same, matmul::gemm));
    list.push(R::boxed(
        "Det",
        Dt::Reg,
        (2, MAX_RANK),
        det::det_outs,
        det::det,
    ));
    list.push(R::boxed(
        "Einsum",
        Dt::Reg,
        (1, 5),
        same_dtype_le,
        einsum::einsum,
    ));
    push_each(
        list,
        &["LSTM", "GRU", "RNN"],
        Dt::Reg,
        (3, 3),
        rank4,
        rnn::rnn,
    );
    list.push(R::boxed("RoiAlign", Dt::Reg, (4, 4), rank4, roi::roi));
    list.push(R::boxed("MaxRoiPool", Dt::Reg, (4, 4), rank4, roi::roi));
    list.push(R::boxed(
        "GridSample",
        Dt::Reg,
        (4, 4),
        rank4,
        grid::grid_sample,
    ));
    list.push(R::boxed(
        "ConvInteger",
        Dt::Reg,
        SPATIAL,
        quantized::i32_same,
        quantized::qconv,
    ));
    list.push(R::boxed(
        "QLinearConv",
        Dt::Reg,
        SPATIAL,
        same,
        quantized::qconv,
    ));
    list.push(R::boxed(
        "QLinearMatMul",
        Dt::Reg,
        (2, MAX_RANK),
        same,
        quantized::qlinear_matmul,
    ));
    list.push(R::boxed(
        "DeformConv",
        Dt::Reg,
        (4, 4),
        rank4,
        deform_conv::deform_conv,
    ));
    list.push(R::boxed(
        "AffineGrid",
        Dt::Reg,
        (3, 3),
        rank4,
        grid::affine_grid,
    ));
    list.push(R::boxed(
        "Col2Im",
        Dt::Only(&[DType::F32, DType::F16, DType::F64]),
        (3, 3),
        rank4,
        col2im::col2im,
    ));
}
