//! Constant folding of small tensors (shape computations such as
//! `Shape → Gather → Unsqueeze → Concat → Reshape`): values decoded as integers or floats, and
//! rebuilt from the positions each output element takes them from.
use crate::dtype::DType::{self, BF16, Bool, F16, F32, F64, I64};
use crate::ops::common::*;
use crate::registry::InferCtx;
use crate::tensor::{Tensor, TensorExt};

/// Values of a small constant, as integers or floats.
#[derive(Clone, Debug)]
pub(super) enum Vals {
    I(Vec<i64>),
    F(Vec<f64>),
}

impl Vals {
    pub(super) fn len(&self) -> usize {
        match self {
            Vals::I(v) => v.len(),
            Vals::F(v) => v.len(),
        }
    }
}

/// Decodes a constant this module can fold (integers, bool and the common floats).
pub(super) fn load(t: &Tensor) -> Option<Vals> {
    let dt = t.dtype();
    let v = if dt == I64 || dt == Bool || (dt.is_int() && dt.bits()? >= 8) {
        Vals::I(t.to_i64s().ok()?)
    } else if matches!(dt, F16 | F32 | F64 | BF16) {
        Vals::F(t.to_f64s().ok()?)
    } else {
        return None;
    };
    (v.len() as i64 == t.num_elements()).then_some(v)
}

/// Builds a tensor of `dtype` and `dims` from `vals` picked at `picks`.
pub(super) fn build(dtype: DType, dims: &[i64], vals: &Vals, picks: &[usize]) -> Tensor {
    match vals {
        Vals::I(v) if dtype == I64 => i64_tensor(dims, picks.iter().map(|&i| v[i]).collect()),
        Vals::I(v) => f64_tensor(
            dtype,
            dims,
            &picks.iter().map(|&i| v[i] as f64).collect::<Vec<_>>(),
        ),
        Vals::F(v) => f64_tensor(
            dtype,
            dims,
            &picks.iter().map(|&i| v[i]).collect::<Vec<_>>(),
        ),
    }
}

/// Row-major strides.
pub(super) fn strides(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1].max(1);
    }
    s
}

/// Flat offset of a multi-index.
pub(super) fn flat(idx: &[i64], strides: &[i64]) -> usize {
    idx.iter().zip(strides).map(|(i, s)| i * s).sum::<i64>() as usize
}

/// Calls `f` with every multi-index of `dims` in row-major order; `None` when the tensor would
/// be too large to fold.
pub(super) fn each_index(
    dims: &[i64],
    mut f: impl FnMut(&[i64]) -> Option<usize>,
) -> Option<Vec<usize>> {
    let n: i64 = dims
        .iter()
        .try_fold(1i64, |a, &d| if d < 0 { None } else { a.checked_mul(d) })?;
    if n > 4096 {
        return None;
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut idx = vec![0i64; dims.len()];
    for _ in 0..n {
        out.push(f(&idx)?);
        for k in (0..dims.len()).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Some(out)
}

/// A copy of a constant with new dims (same data).
pub(super) fn with_dims(t: &Tensor, dims: Vec<i64>) -> Option<Tensor> {
    let n = dims
        .iter()
        .try_fold(1i64, |a, &d| if d < 0 { None } else { a.checked_mul(d) });
    if n != Some(t.num_elements()) {
        return None;
    }
    let mut c = t.clone();
    c.dims = dims;
    c.name = Some(String::new());
    Some(c)
}

/// Folds an op that only re-labels the dims of input 0 (Reshape, Squeeze, Unsqueeze, Flatten):
/// the static output shape comes from the op's own inference.
pub(super) fn fold_relabel(ctx: &InferCtx, infer: fn(&InferCtx) -> Infer) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let outs = infer(ctx).ok()?;
    let dims = outs.first()?.tensor()?.static_dims()?;
    Some(vec![with_dims(t, dims)?])
}
