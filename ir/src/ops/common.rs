//! Helpers shared by the op specs: broadcasting, axes, output constructors.
use crate::attr::AttrLookup;
use crate::dtype::DType;
use crate::registry::{AttrSpec, InferCtx};
use crate::tensor::{self, Tensor, TensorExt};
use crate::types::{Dim, TensorType, ValueType};

pub use crate::registry::InferError;

/// Buckets of an `axis` attribute: negative, 0, 1, 2 or more.
pub const AXIS_BUCKETS: &[(i64, i64)] = &[(i64::MIN, -1), (0, 0), (1, 1), (2, i64::MAX)];

/// ONNX codes of a dtype set (legal values of `dtype`-style attributes).
pub fn dtype_codes(set: &[DType]) -> Vec<i64> {
    set.iter().map(|d| d.code() as i64).collect()
}

/// An [`InferError::Rule`] whose message is built as `format!` builds it:
/// `Err(rule!("pads {pads:?} make axis {a} negative"))`.
macro_rules! rule {
    ($($arg:tt)*) => {
        $crate::registry::InferError::Rule(format!($($arg)*))
    };
}
pub(crate) use rule;

/// Shorthand result of an inference function.
pub type Infer = Result<Vec<ValueType>, InferError>;

/// A tensor value type.
pub fn tensor(dtype: DType, shape: Option<Vec<Dim>>) -> ValueType {
    ValueType::Tensor(TensorType { dtype, shape })
}

/// A tensor value type of static shape.
pub fn fixed(dtype: DType, dims: &[i64]) -> ValueType {
    ValueType::Tensor(TensorType::fixed(dtype, dims))
}

/// Output 0 has the type of input `i`.
pub fn same_as_input(ctx: &InferCtx, i: usize) -> Infer {
    Ok(vec![ValueType::Tensor(ctx.tensor(i)?)])
}

/// Unary op whose output has the input's type (input 0).
pub fn unary(ctx: &InferCtx) -> Infer {
    same_as_input(ctx, 0)
}

/// Unary op whose output has the input's shape and dtype `dt`.
pub fn unary_to(ctx: &InferCtx, dt: DType) -> Infer {
    Ok(vec![tensor(dt, ctx.tensor(0)?.shape)])
}

/// Broadcasts two dims (multidirectional, numpy rules).
pub fn broadcast_dim(a: &Dim, b: &Dim) -> Result<Dim, InferError> {
    Ok(match (a, b) {
        (Dim::Known(1), x) | (x, Dim::Known(1)) => x.clone(),
        (Dim::Known(x), Dim::Known(y)) if x == y => Dim::Known(*x),
        (Dim::Known(x), Dim::Known(y)) => return Err(InferError::Broadcast(*x, *y)),
        (Dim::Known(x), _) | (_, Dim::Known(x)) => Dim::Known(*x),
        (Dim::Param(p), Dim::Param(q)) if p == q => Dim::Param(p.clone()),
        _ => Dim::Unknown,
    })
}

/// Multidirectional (numpy) broadcasting of two shapes of any dim type: the shorter is
/// padded with `one` in front, then `dim` broadcasts each pair of dims.
pub fn broadcast_with<D: Clone, E>(
    a: &[D],
    b: &[D],
    one: &D,
    dim: impl Fn(&D, &D) -> Result<D, E>,
) -> Result<Vec<D>, E> {
    let r = a.len().max(b.len());
    let at = |s: &[D], k: usize| -> D {
        if k + s.len() >= r {
            s[k + s.len() - r].clone()
        } else {
            one.clone()
        }
    };
    (0..r).map(|k| dim(&at(a, k), &at(b, k))).collect()
}

/// The numpy broadcast of two static shapes; `None` where they do not broadcast.
pub fn broadcast_dims(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    broadcast_with(a, b, &1, |&x, &y| match (x, y) {
        (1, d) | (d, 1) => Ok(d),
        (x, y) if x == y => Ok(x),
        _ => Err(()),
    })
    .ok()
}

/// Multidirectional broadcasting of shapes; `None` if any rank is unknown.
pub fn broadcast_shapes(shapes: &[Option<Vec<Dim>>]) -> Result<Option<Vec<Dim>>, InferError> {
    let mut out: Vec<Dim> = Vec::new();
    for s in shapes {
        let Some(s) = s else { return Ok(None) };
        out = broadcast_with(&out, s, &Dim::Known(1), broadcast_dim)?;
    }
    Ok(Some(out))
}

/// Broadcasting op over all present inputs; output dtype `dt` or that of input 0.
pub fn broadcast(ctx: &InferCtx, dt: Option<DType>) -> Infer {
    let mut shapes = Vec::new();
    for i in 0..ctx.n_inputs() {
        if ctx.has_input(i) {
            shapes.push(ctx.tensor(i)?.shape);
        }
    }
    let shape = broadcast_shapes(&shapes)?;
    Ok(vec![tensor(dt.unwrap_or(ctx.dtype(0)), shape)])
}

/// Normalizes a possibly negative axis against `rank`.
pub fn norm_axis(axis: i64, rank: usize) -> Result<usize, InferError> {
    let r = rank as i64;
    if axis < -r || axis >= r.max(1) && !(r == 0 && axis == 0) {
        return Err(InferError::AxisOutOfRange { axis, rank });
    }
    Ok(if axis < 0 {
        (axis + r) as usize
    } else {
        axis as usize
    })
}

/// Normalizes a list of axes; errors on duplicates or out of range.
pub fn norm_axes(axes: &[i64], rank: usize) -> Result<Vec<usize>, InferError> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = norm_axis(a, rank)?;
        if out.contains(&n) {
            return Err(InferError::RepeatedAxis(a));
        }
        out.push(n);
    }
    Ok(out)
}

/// Product of dims if all known.
pub fn dims_product(d: &[Dim]) -> Option<i64> {
    d.iter()
        .map(Dim::value)
        .try_fold(1i64, |a, b| b.map(|b| a.saturating_mul(b)))
}

/// The dtype named by a `to`-style INT attribute.
pub fn dtype_attr(ctx: &InferCtx, name: &str, default: DType) -> DType {
    ctx.int_opt(name)
        .map(|c| DType::from_code(c as i32))
        .unwrap_or(default)
}

/// An i64 tensor for constant folding.
pub fn i64_tensor(dims: &[i64], values: Vec<i64>) -> Tensor {
    tensor::from_i64s("", dims, &values)
}

/// A 1-D i64 constant for folding.
pub fn i64_vec(values: Vec<i64>) -> Tensor {
    let n = values.len() as i64;
    tensor::from_i64s("", &[n], &values)
}

/// A constant (folded) tensor of any numeric dtype from f64 values.
pub fn f64_tensor(dtype: DType, dims: &[i64], values: &[f64]) -> Tensor {
    tensor::from_f64s("", dtype, dims, values)
}

/// Dims of a constant tensor of known values as `Dim`s (for shape inputs): -1 or missing → Unknown.
pub fn const_dims(t: &Tensor) -> Option<Vec<Dim>> {
    Some(
        t.to_i64s()
            .ok()?
            .into_iter()
            .map(|v| if v >= 0 { Dim::Known(v) } else { Dim::Unknown })
            .collect(),
    )
}

/// `saturate` of Cast, CastLike and QuantizeLinear (from opset 19; ONNX's default is 1: an
/// 8-bit float target saturates).
pub fn saturate_attr() -> AttrSpec {
    AttrSpec::int("saturate", 1)
        .one_of_ints(&[0, 1])
        .versions(19, None)
}

/// For [`OpSpec::ambiguous`](crate::registry::OpSpec::ambiguous): inputs the operator text asks
/// to be scalars (0-D) given as one-element vectors. ONNX's checker and ONNX Runtime accept
/// them, tract refuses some (Range, CumSum's axis), so what such a model means is left open
/// (Clip's min and max too).
pub fn vector_for_scalar(ctx: &InferCtx, op: &str, inputs: &[usize]) -> Result<(), InferError> {
    for &i in inputs {
        if ctx.has_input(i) && ctx.tensor(i)?.rank() == Some(1) {
            return Err(InferError::Rule(format!(
                "{op} input {i} is a one-element vector where the operator asks for a scalar \
                 (onnx's checker and ONNX Runtime accept it, tract does not)"
            )));
        }
    }
    Ok(())
}
