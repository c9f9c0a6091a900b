//! MatMul and its quantized forms, MatMulInteger and QLinearMatMul.

use super::{F8, GEMM_T, Q8, concat, shape_of};
use crate::dtype::DType;
use crate::ops::common::*;
use crate::registry::{Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

/// numpy matmul shape of `a` times `b`.
pub(crate) fn matmul_shape(
    a: Option<Vec<Dim>>,
    b: Option<Vec<Dim>>,
) -> Result<Option<Vec<Dim>>, InferError> {
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(None);
    };
    if a.is_empty() || b.is_empty() {
        return Err(rule!(
            "MatMul inputs must have rank 1 or more, found a scalar"
        ));
    }
    let (a1, b1) = (a.len() == 1, b.len() == 1);
    let a = if a1 {
        vec![Dim::Known(1), a[0].clone()]
    } else {
        a
    };
    let b = if b1 {
        vec![b[0].clone(), Dim::Known(1)]
    } else {
        b
    };
    let (ka, kb) = (&a[a.len() - 1], &b[b.len() - 2]);
    if let (Dim::Known(x), Dim::Known(y)) = (ka, kb)
        && x != y
    {
        return Err(rule!("MatMul inner dims differ: {x} vs {y}"));
    }
    let batch = broadcast_shapes(&[
        Some(a[..a.len() - 2].to_vec()),
        Some(b[..b.len() - 2].to_vec()),
    ])?
    .unwrap_or_default();
    let mut out = batch;
    if !a1 {
        out.push(a[a.len() - 2].clone());
    }
    if !b1 {
        out.push(b[b.len() - 1].clone());
    }
    Ok(Some(out))
}

fn matmul_to(ctx: &InferCtx, a: usize, b: usize, dt: DType) -> Infer {
    Ok(vec![tensor(
        dt,
        matmul_shape(shape_of(ctx, a), shape_of(ctx, b))?,
    )])
}

/// Registers MatMul, MatMulInteger and QLinearMatMul.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("MatMul", &[1, 9, 13], Category::Linear)
            .input("A", "T")
            .input("B", "T")
            .output("Y", "T")
            .types("T", GEMM_T)
            .infer(|c| matmul_to(c, 0, 1, c.dtype(0))),
    );
    r.add(
        OpSpec::new("MatMulInteger", &[10], Category::Linear)
            .input("A", "T1")
            .input("B", "T2")
            .opt_input("a_zero_point", "T1")
            .opt_input("b_zero_point", "T2")
            .output("Y", "T3")
            .types("T1", Q8)
            .types("T2", Q8)
            .types("T3", &[DType::I32])
            .infer(|c| matmul_to(c, 0, 1, DType::I32)),
    );
    let q = concat(&[Q8, F8]);
    r.add(
        OpSpec::new("QLinearMatMul", &[10, 21], Category::Linear)
            .input("a", "T1")
            .input("a_scale", "TS")
            .input("a_zero_point", "T1")
            .input("b", "T2")
            .input("b_scale", "TS")
            .input("b_zero_point", "T2")
            .input("y_scale", "TS")
            .input("y_zero_point", "T3")
            .output("y", "T3")
            .types("TS", &[DType::F32, DType::F16, DType::BF16])
            .types("T1", &q)
            .types("T2", &q)
            .types("T3", &q)
            .infer(|c| matmul_to(c, 0, 3, c.dtype(7))),
    );
}
