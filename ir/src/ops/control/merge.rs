//! Type merging: the type two descriptions of one value agree on (If branches, sequence
//! elements, loop-carried values, scan outputs).
use crate::ops::common::*;
use crate::registry::InferCtx;
use crate::types::{Dim, TensorType, ValueType};

/// Merges two dims that describe the same value in different runs: equal facts stay.
fn merge_dim(a: &Dim, b: &Dim) -> Dim {
    if a == b { a.clone() } else { Dim::Unknown }
}

/// Merges two shapes: dimwise, or unknown rank when the ranks differ.
fn merge_shape(a: &Option<Vec<Dim>>, b: &Option<Vec<Dim>>) -> Option<Vec<Dim>> {
    match (a, b) {
        (Some(x), Some(y)) if x.len() == y.len() => {
            Some(x.iter().zip(y).map(|(d, e)| merge_dim(d, e)).collect())
        }
        _ => None,
    }
}

/// A type both `a` and `b` fit (If branches, sequence elements, loop-carried values).
/// An unknown side gives way to the other one; differing dtypes or kinds are an error.
pub(super) fn merge_types(a: &ValueType, b: &ValueType) -> Result<ValueType, InferError> {
    Ok(match (a, b) {
        (ValueType::Unknown, x) | (x, ValueType::Unknown) => x.clone(),
        (ValueType::Tensor(x), ValueType::Tensor(y)) => {
            let dtype = match (x.dtype.is_known(), y.dtype.is_known()) {
                (true, true) if x.dtype != y.dtype => {
                    return Err(InferError::ElemTypesDiffer(x.dtype, y.dtype));
                }
                (true, _) => x.dtype,
                _ => y.dtype,
            };
            ValueType::Tensor(TensorType {
                dtype,
                shape: merge_shape(&x.shape, &y.shape),
            })
        }
        (ValueType::Sequence(x), ValueType::Sequence(y)) => {
            ValueType::Sequence(Box::new(merge_types(x, y)?))
        }
        (ValueType::Optional(x), ValueType::Optional(y)) => {
            ValueType::Optional(Box::new(merge_types(x, y)?))
        }
        (x, y) if x == y => x.clone(),
        (x, y) => return Err(InferError::TypesDiffer(x.clone(), y.clone())),
    })
}

/// The type a value keeps across loop iterations, from its initial type and the body's output:
/// facts both agree on. When the body's type is unknown only the element type is kept.
pub(super) fn loop_carried(init: &ValueType, body: &ValueType) -> Result<ValueType, InferError> {
    match (init, body) {
        (_, ValueType::Unknown) => Ok(drop_shapes(init)),
        (ValueType::Unknown, _) => Ok(body.clone()),
        // An optional initial value the body unwraps (as ONNX does, the body's form wins).
        (ValueType::Optional(inner), b) if !matches!(b, ValueType::Optional(_)) => {
            loop_carried(inner, b)
        }
        _ => merge_types(init, body),
    }
}

/// The same type with every shape forgotten.
pub(super) fn drop_shapes(t: &ValueType) -> ValueType {
    match t {
        ValueType::Tensor(x) => tensor(x.dtype, None),
        ValueType::Sequence(e) => ValueType::Sequence(Box::new(drop_shapes(e))),
        ValueType::Optional(e) => ValueType::Optional(Box::new(drop_shapes(e))),
        other => other.clone(),
    }
}

/// Inserts `d` at `axis` (normalized against rank + 1) of a tensor type.
pub(super) fn insert_dim(t: &ValueType, axis: i64, d: Dim) -> Result<ValueType, InferError> {
    Ok(match t {
        ValueType::Tensor(x) => {
            let shape = match &x.shape {
                Some(s) => {
                    let a = norm_axis(axis, s.len() + 1)?;
                    let mut s = s.clone();
                    s.insert(a, d);
                    Some(s)
                }
                None => None,
            };
            tensor(x.dtype, shape)
        }
        ValueType::Unknown => ValueType::Unknown,
        other => return Err(rule!("a scan output must be a tensor, found {other}")),
    })
}

/// The body's output types (Unknown where the driver gave none).
pub(super) fn body_outputs(ctx: &InferCtx, attr: &str, n: usize) -> Vec<ValueType> {
    let mut v = ctx.subgraph(attr).cloned().unwrap_or_default();
    v.resize(n.max(v.len()), ValueType::Unknown);
    v
}
