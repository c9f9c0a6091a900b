//! The quantized ops of `com.microsoft`: QLinearAdd and QLinearMul (8-bit operands with
//! per-tensor scales and zero points, numpy broadcasting), QLinearSigmoid and
//! QLinearLeakyRelu (dequantize, the function, quantize), MatMulIntegerToFloat (an integer
//! matmul scaled to float) and DynamicQuantizeMatMul (a float A quantized on the fly).
use super::MS;
use crate::dtype::DType;
use crate::ops::common::*;
use crate::ops::nn::{matmul_shape, shape_of};
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};

const Q8: &[DType] = &[DType::U8, DType::I8];

/// Inputs `slots`, when present, hold one element (per-tensor quantization).
fn per_tensor(c: &InferCtx, slots: &[usize]) -> Result<(), InferError> {
    for &i in slots {
        if let Some(s) = shape_of(c, i)
            && dims_product(&s).is_some_and(|n| n != 1)
        {
            return Err(rule!(
                "input {i} must hold one element (a per-tensor quantization)"
            ));
        }
    }
    Ok(())
}

/// Inputs `slots`, when present, hold one element or one per column of B (input 1).
fn per_column(c: &InferCtx, slots: &[usize]) -> Result<(), InferError> {
    let n = shape_of(c, 1).and_then(|b| b.last().and_then(|d| d.value()));
    for &i in slots {
        if let Some(s) = shape_of(c, i) {
            let ok = match s.len() {
                0 => true,
                1 => s[0].value().is_none() || n.is_none() || s[0].value() == n,
                _ => false,
            };
            if !ok {
                return Err(rule!(
                    "input {i} must be a scalar or a vector of B's columns"
                ));
            }
        }
    }
    Ok(())
}

/// Only the operand type pairs ORT's CPU kernel has (uint8 x uint8, uint8 x int8, int8 x
/// int8).
fn kernel_pairs(c: &InferCtx) -> Result<(), InferError> {
    if c.dtype(0) == DType::I8 && c.dtype(1) == DType::U8 {
        return Err(rule!("int8 A with uint8 B has no kernel"));
    }
    Ok(())
}

fn elementwise(name: &'static str, binary: bool) -> OpSpec {
    let s = OpSpec::new(name, &[1], Category::Quantize).domain(MS);
    let s = if binary {
        s.input("A", "T")
            .input("A_scale", "F")
            .opt_input("A_zero_point", "T")
            .input("B", "T")
            .input("B_scale", "F")
            .opt_input("B_zero_point", "T")
            .input("C_scale", "F")
            .opt_input("C_zero_point", "T")
            .output("C", "T")
            .infer(|c| broadcast(c, Some(c.dtype(0))))
            .requires(|c| {
                broadcast(c, None)?;
                per_tensor(c, &[1, 2, 4, 5, 6, 7])
            })
    } else {
        s.input("X", "T")
            .input("X_scale", "F")
            .opt_input("X_zero_point", "T")
            .input("Y_scale", "F")
            .opt_input("Y_zero_point", "T")
            .output("Y", "T")
            .infer(unary)
            .requires(|c| per_tensor(c, &[1, 2, 3, 4]))
    };
    s.types("T", Q8).types("F", &[DType::F32])
}

pub(super) fn register(r: &mut Registry) {
    r.add(elementwise("QLinearAdd", true));
    r.add(elementwise("QLinearMul", true));
    r.add(elementwise("QLinearSigmoid", false));
    r.add(elementwise("QLinearLeakyRelu", false).attr(
        AttrSpec::float("alpha", 0.01).float_buckets(&[
            (f64::NEG_INFINITY, 0.0),
            (0.0, 1.0),
            (1.0, f64::INFINITY),
        ]),
    ));
    r.add(
        OpSpec::new("MatMulIntegerToFloat", &[1], Category::Quantize)
            .domain(MS)
            .input("A", "T1")
            .input("B", "T2")
            .input("a_scale", "T3")
            .input("b_scale", "T3")
            .opt_input("a_zero_point", "T1")
            .opt_input("b_zero_point", "T2")
            .opt_input("bias", "T3")
            .output("Y", "T3")
            .types("T1", Q8)
            .types("T2", Q8)
            .types("T3", &[DType::F32])
            .infer(|c| {
                Ok(vec![tensor(
                    DType::F32,
                    matmul_shape(shape_of(c, 0), shape_of(c, 1))?,
                )])
            })
            .requires(|c| {
                kernel_pairs(c)?;
                per_tensor(c, &[2, 4])?;
                per_column(c, &[3, 5, 6])
            }),
    );
    r.add(
        OpSpec::new("DynamicQuantizeMatMul", &[1], Category::Quantize)
            .domain(MS)
            // A's quantization to uint8 says nothing of NaN or infinities (its range, scale
            // and rounding are not defined on them).
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .input("A", "T1")
            .input("B", "T2")
            .input("b_scale", "T1")
            .opt_input("b_zero_point", "T2")
            .opt_input("bias", "T1")
            .output("Y", "T1")
            .types("T1", &[DType::F32])
            .types("T2", Q8)
            .infer(|c| {
                Ok(vec![tensor(
                    DType::F32,
                    matmul_shape(shape_of(c, 0), shape_of(c, 1))?,
                )])
            })
            .requires(|c| per_column(c, &[2, 3, 4])),
    );
}
