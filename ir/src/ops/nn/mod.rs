//! Op specs of the nn family: convolutions, pooling, normalization, matrix products, recurrent
//! layers, dropout, sampling, quantization and losses. One file per op or group of ops:
//!
//! * `conv.rs`: Conv, ConvInteger, QLinearConv, DeformConv.
//! * `conv_transpose.rs`: ConvTranspose.
//! * `pool.rs`: MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool,
//!   MaxUnpool.
//! * `roi.rs`: MaxRoiPool, RoiAlign.
//! * `norm.rs`: BatchNormalization, InstanceNormalization, LayerNormalization, GroupNormalization,
//!   LRN, LpNormalization, MeanVarianceNormalization.
//! * `gemm.rs`: Gemm.
//! * `matmul.rs`: MatMul, MatMulInteger, QLinearMatMul.
//! * `einsum.rs`: Einsum.
//! * `rnn.rs`: RNN, LSTM, GRU.
//! * `dropout.rs`: Dropout.
//! * `grid_sample.rs`: GridSample.
//! * `affine_grid.rs`: AffineGrid.
//! * `quantize.rs`: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.
//! * `loss.rs`: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
//! * `col2im.rs`: Col2Im.
//!
//! `window.rs` holds the window geometry the convolutions and pools share; the helpers below
//! are shared by the whole family.
mod affine_grid;
mod col2im;
mod conv;
mod conv_transpose;
mod dropout;
mod einsum;
mod gemm;
mod grid_sample;
mod loss;
mod matmul;
mod norm;
mod pool;
mod quantize;
mod rnn;
mod roi;
#[cfg(test)]
mod tests;
mod window;

pub(crate) use conv::{conv_attrs, conv_check, conv_infer};
pub(crate) use gemm::{gemm, gemm_check};
pub(crate) use matmul::matmul_shape;
pub(crate) use rnn::{activations_check, cell_attrs, expect_dims, rnn_infer};

use crate::attr::{AttrKind, AttrValue};
use crate::dtype::DType;
use crate::registry::{AttrSpec, InferCtx, Registry};
use crate::types::{Dim, ValueType};

const MAX: i64 = i64::MAX;
const Q8: &[DType] = &[DType::I8, DType::U8];
const F8: &[DType] = &[
    DType::F8E4M3FN,
    DType::F8E4M3FNUZ,
    DType::F8E5M2,
    DType::F8E5M2FNUZ,
];

/// Element types of Gemm and MatMul.
const GEMM_T: &[DType] = &[
    DType::F16,
    DType::F32,
    DType::F64,
    DType::U32,
    DType::U64,
    DType::I32,
    DType::I64,
    DType::BF16,
];

fn concat(parts: &[&[DType]]) -> Vec<DType> {
    let mut v: Vec<DType> = Vec::new();
    for p in parts {
        for d in *p {
            if !v.contains(d) {
                v.push(*d);
            }
        }
    }
    v
}

/// An INTS attribute with a default value.
fn ints_default(name: &'static str, v: &[i64]) -> AttrSpec {
    AttrSpec {
        default: Some(AttrValue::Ints(v.to_vec())),
        ..AttrSpec::of(name, AttrKind::Ints)
    }
}

/// A 0/1 flag attribute.
pub(crate) fn flag(name: &'static str) -> AttrSpec {
    AttrSpec::int(name, 0).one_of_ints(&[0, 1])
}

pub(crate) fn shape_of(ctx: &InferCtx, i: usize) -> Option<Vec<Dim>> {
    if !ctx.has_input(i) {
        return None;
    }
    ctx.tensor(i).ok().and_then(|t| t.shape)
}

/// [`shape_of`] without a copy.
fn shape_ref<'c>(ctx: &'c InferCtx<'_>, i: usize) -> Option<&'c [Dim]> {
    match ctx.inputs.get(i)?.as_deref()? {
        ValueType::Tensor(t) => t.shape.as_deref(),
        _ => None,
    }
}

fn known(d: Option<&Dim>) -> Option<i64> {
    d.and_then(Dim::value)
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1).div_euclid(b)
}

/// Registers this family (in the order of the ONNX families above: convolutions, pools,
/// normalizations, matrix products and recurrent layers, the rest).
pub fn register(r: &mut Registry) {
    conv::register(r);
    conv_transpose::register(r);
    conv::register_variants(r);
    pool::register(r);
    roi::register(r);
    norm::register(r);
    gemm::register(r);
    matmul::register(r);
    einsum::register(r);
    rnn::register(r);
    dropout::register(r);
    grid_sample::register(r);
    affine_grid::register(r);
    quantize::register(r);
    loss::register(r);
    col2im::register(r);
}
