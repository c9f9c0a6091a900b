//! Constant and ConstantOfShape.

use super::fold::{Vals, build, load};
use super::{ALL26, I64_ONLY, out, static_len, unknown_dims};
use crate::attr::{AttrKind, AttrLookup, AttrValue};
use crate::dtype::DType::{
    self, BF16, Bool, F4E2M1, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F16, F32, F64, I2,
    I4, I8, I16, I32, I64, U2, U4, U8, U16, U32, U64,
};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::tensor::{Tensor, TensorExt};
use crate::types::{TensorType, ValueType};

/// ConstantOfShape values: numbers and bool, small floats included.
const COS_VALUES: &[DType] = &[
    F32, U8, I8, U16, I16, I32, I64, Bool, F16, F64, U32, U64, BF16, F8E4M3FN, F8E4M3FNUZ, F8E5M2,
    F8E5M2FNUZ, U4, I4, F4E2M1, F8E8M0, U2, I2,
];

/// A TENSOR attribute (the inherent `InferCtx::tensor` reads inputs).
fn attr_tensor<'a>(ctx: &'a InferCtx, name: &str) -> Option<&'a Tensor> {
    AttrLookup::tensor(ctx, name)
}

/// The value held by a Constant node.
fn constant_value(ctx: &InferCtx) -> Option<Tensor> {
    if let Some(t) = attr_tensor(ctx, "value") {
        return Some(t.clone());
    }
    if let Some(v) = ctx.int_opt("value_int") {
        return Some(i64_tensor(&[], vec![v]));
    }
    if let Some(v) = ctx.ints("value_ints") {
        return Some(i64_vec(v.to_vec()));
    }
    if let Some(AttrValue::Float(f)) = ctx.attr("value_float") {
        return Some(f64_tensor(F32, &[], &[*f as f64]));
    }
    if let Some(v) = ctx.floats("value_floats") {
        return Some(f64_tensor(
            F32,
            &[v.len() as i64],
            &v.iter().map(|&f| f as f64).collect::<Vec<_>>(),
        ));
    }
    None
}

fn infer_constant(ctx: &InferCtx) -> Infer {
    const NAMES: [&str; 8] = [
        "value",
        "sparse_value",
        "value_int",
        "value_ints",
        "value_float",
        "value_floats",
        "value_string",
        "value_strings",
    ];
    let given: Vec<&str> = NAMES
        .iter()
        .copied()
        .filter(|n| ctx.attr(n).is_some())
        .collect();
    if given.len() != 1 {
        return Err(rule!(
            "Constant needs exactly one value attribute, found {}: {given:?}",
            given.len()
        ));
    }
    let t = match ctx.attr(given[0]) {
        Some(AttrValue::Tensor(t)) => t.tensor_type(),
        Some(AttrValue::SparseTensor(sp)) => {
            let dt = sp.values.as_ref().map_or(DType::Other(0), |v| v.dtype());
            TensorType::fixed(dt, &sp.dims)
        }
        Some(AttrValue::Int(_)) => TensorType::fixed(I64, &[]),
        Some(AttrValue::Ints(v)) => TensorType::fixed(I64, &[v.len() as i64]),
        Some(AttrValue::Float(_)) => TensorType::fixed(F32, &[]),
        Some(AttrValue::Floats(v)) => TensorType::fixed(F32, &[v.len() as i64]),
        Some(AttrValue::String(_)) => TensorType::fixed(DType::String, &[]),
        Some(AttrValue::Strings(v)) => TensorType::fixed(DType::String, &[v.len() as i64]),
        Some(other) => {
            return Err(rule!(
                "Constant attribute '{}' has kind {}",
                given[0],
                other.kind().name()
            ));
        }
        None => unreachable!(),
    };
    Ok(vec![ValueType::Tensor(t)])
}

fn fold_constant(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let t = constant_value(ctx)?;
    (!t.is_external() && t.num_elements() <= 4096).then(|| vec![t])
}

fn infer_constant_of_shape(ctx: &InferCtx) -> Infer {
    let dt = attr_tensor(ctx, "value").map_or(F32, |t| t.dtype());
    if let Some(t) = attr_tensor(ctx, "value")
        && t.num_elements() != 1
    {
        return Err(rule!(
            "ConstantOfShape value must hold one element, found {}",
            t.num_elements()
        ));
    }
    match ctx.const_i64s(0) {
        Some(v) => {
            if let Some(d) = v.iter().find(|d| **d < 0) {
                return Err(rule!("ConstantOfShape dim {d} is negative"));
            }
            Ok(vec![fixed(dt, &v)])
        }
        None => out(
            dt,
            static_len(ctx, 0)
                .filter(|_| ctx.tensor(0).ok().and_then(|t| t.rank()) == Some(1))
                .map(unknown_dims),
        ),
    }
}

fn fold_constant_of_shape(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let dims = ctx.const_i64s(0)?;
    let n = dims
        .iter()
        .try_fold(1i64, |a, &d| if d < 0 { None } else { a.checked_mul(d) })?;
    if n > 4096 {
        return None;
    }
    let (dt, vals) = match attr_tensor(ctx, "value") {
        Some(t) => (t.dtype(), load(t)?),
        None => (F32, Vals::F(vec![0.0])),
    };
    if vals.len() != 1 {
        return None;
    }
    Some(vec![build(dt, &dims, &vals, &vec![0; n as usize])])
}

/// Registers ConstantOfShape.
pub(super) fn register_constant_of_shape(r: &mut Registry) {
    r.add(
        OpSpec::new("ConstantOfShape", &[9, 20, 21, 23, 24, 25], Category::Misc)
            .input("input", "T1")
            .output("output", "T2")
            .attr(AttrSpec::of("value", AttrKind::Tensor).no_buckets())
            .types("T1", I64_ONLY)
            .types("T2", COS_VALUES)
            .infer(infer_constant_of_shape)
            .fold(fold_constant_of_shape),
    );
}

/// Registers Constant.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new(
            "Constant",
            &[1, 9, 11, 12, 13, 19, 21, 23, 24, 25],
            Category::Misc,
        )
        .output("output", "T")
        .attr(
            AttrSpec::of("value", AttrKind::Tensor)
                .required()
                .no_buckets()
                .versions(1, Some(11)),
        )
        .attr(
            AttrSpec::of("value", AttrKind::Tensor)
                .no_buckets()
                .versions(11, None),
        )
        .attr(
            AttrSpec::of("sparse_value", AttrKind::SparseTensor)
                .no_buckets()
                .versions(11, None),
        )
        .attr(
            AttrSpec::of("value_int", AttrKind::Int)
                .no_buckets()
                .versions(12, None),
        )
        .attr(
            AttrSpec::of("value_ints", AttrKind::Ints)
                .no_buckets()
                .versions(12, None),
        )
        .attr(
            AttrSpec::of("value_float", AttrKind::Float)
                .no_buckets()
                .versions(12, None),
        )
        .attr(
            AttrSpec::of("value_floats", AttrKind::Floats)
                .no_buckets()
                .versions(12, None),
        )
        .attr(
            AttrSpec::of("value_string", AttrKind::String)
                .no_buckets()
                .versions(12, None),
        )
        .attr(
            AttrSpec::of("value_strings", AttrKind::Strings)
                .no_buckets()
                .versions(12, None),
        )
        .types("T", ALL26)
        .infer(infer_constant)
        .fold(fold_constant),
    );
}
