//! Op specs of the reduce family: ReduceX, ArgMax/ArgMin, the Softmax family, TopK, CumSum,
//! Unique, NonMaxSuppression, Det and the signal ops (DFT, STFT, windows, MelWeightMatrix). One
//! file per op or group of ops:
//!
//! * `reduce_x.rs`: ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceMean, ReduceProd,
//!   ReduceSumSquare, ReduceSum, ReduceMax, ReduceMin.
//! * `arg_max.rs`: ArgMax, ArgMin.
//! * `softmax.rs`: Softmax, LogSoftmax, Hardmax.
//! * `top_k.rs`: TopK.
//! * `cum_sum.rs`: CumSum.
//! * `unique.rs`: Unique.
//! * `non_max_suppression.rs`: NonMaxSuppression.
//! * `det.rs`: Det.
//! * `dft.rs`: DFT.
//! * `stft.rs`: STFT.
//! * `window.rs`: HannWindow, HammingWindow, BlackmanWindow.
//! * `mel_weight_matrix.rs`: MelWeightMatrix.
mod arg_max;
mod cum_sum;
mod det;
mod dft;
mod mel_weight_matrix;
mod non_max_suppression;
mod reduce_x;
mod softmax;
mod stft;
#[cfg(test)]
mod tests;
mod top_k;
mod unique;
mod window;

use crate::dtype::DType::{self, BF16, F16, F32, F64, I32, I64, U32, U64};
use crate::registry::{InferCtx, Registry};

/// Types of ReduceSum, ReduceMean and most other reductions.
const REDUCE_T: &[DType] = &[F16, F32, F64, BF16, I32, I64, U32, U64];

/// A constant scalar (or 1-element) integer input.
fn const_scalar(ctx: &InferCtx, i: usize) -> Option<i64> {
    let v = ctx.const_i64s(i)?;
    if v.len() == 1 { Some(v[0]) } else { None }
}

/// Registers this family.
pub fn register(r: &mut Registry) {
    reduce_x::register(r);
    arg_max::register(r);
    softmax::register(r);
    top_k::register(r);
    cum_sum::register(r);
    unique::register(r);
    non_max_suppression::register(r);
    det::register(r);
    dft::register(r);
    stft::register(r);
    window::register(r);
    mel_weight_matrix::register(r);
}
