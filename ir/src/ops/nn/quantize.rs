//! Quantization: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear.

use super::{MAX, concat, shape_of};
use crate::attr::AttrLookup;
use crate::dtype::DType;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

fn quantize(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let dt = if ctx.has_input(2) {
        ctx.dtype(2)
    } else {
        match ctx.int("output_dtype", 0) {
            0 => DType::U8,
            c => DType::from_code(c as i32),
        }
    };
    Ok(vec![tensor(dt, x.shape)])
}

fn dequantize(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let dt = if ctx.opset < 19 {
        DType::F32
    } else {
        match ctx.int("output_dtype", 0) {
            0 => ctx.dtype(1),
            c => DType::from_code(c as i32),
        }
    };
    Ok(vec![tensor(dt, x.shape)])
}

fn quant_check(ctx: &InferCtx) -> Result<(), InferError> {
    let Some(xs) = shape_of(ctx, 0) else {
        return Ok(());
    };
    let Some(ss) = shape_of(ctx, 1) else {
        return Ok(());
    };
    if ss.is_empty() || ss.len() == 1 && ss[0] == Dim::Known(1) {
        return Ok(());
    }
    let axis = norm_axis(ctx.int("axis", 1), xs.len())?;
    let block = ctx.int("block_size", 0);
    if block == 0 {
        if ss.len() != 1 {
            return Err(rule!("per-axis scale must be 1-D, found rank {}", ss.len()));
        }
        if let (Some(a), Some(b)) = (xs[axis].value(), ss[0].value())
            && a != b
        {
            return Err(rule!("scale has {b} values but axis {axis} has {a}"));
        }
    } else if ss.len() != xs.len() {
        return Err(rule!(
            "blocked scale must have rank {}, found {}",
            xs.len(),
            ss.len()
        ));
    }
    Ok(())
}

fn dyn_quantize(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    Ok(vec![
        tensor(DType::U8, x.shape),
        fixed(DType::F32, &[]),
        fixed(DType::U8, &[]),
    ])
}

/// `axis` of QuantizeLinear and DequantizeLinear (from opset 13).
fn axis_attr() -> AttrSpec {
    AttrSpec::int("axis", 1)
        .int_buckets(AXIS_BUCKETS)
        .versions(13, None)
}

/// `block_size` of QuantizeLinear and DequantizeLinear (from opset 21).
fn block_size_attr() -> AttrSpec {
    AttrSpec::int("block_size", 0)
        .range(0, MAX)
        .int_buckets(&[(0, 0), (1, 16), (17, MAX)])
        .versions(21, None)
}

/// Registers QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear.
pub(super) fn register(r: &mut Registry) {
    let q_out = [
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::F8E4M3FN,
        DType::F8E4M3FNUZ,
        DType::F8E5M2,
        DType::F8E5M2FNUZ,
        DType::U4,
        DType::I4,
        DType::F4E2M1,
        DType::U2,
        DType::I2,
    ];
    let sat = saturate_attr();
    r.add(
        OpSpec::new(
            "QuantizeLinear",
            &[10, 13, 19, 21, 23, 24, 25],
            Category::Quantize,
        )
        .traits(Traits::NAN_UNSPECIFIED)
        .attr(axis_attr())
        .attr(sat)
        .attr(block_size_attr())
        .attr(
            AttrSpec::int("output_dtype", 0)
                .no_buckets()
                .versions(21, None),
        )
        .attr(
            AttrSpec::int("precision", 0)
                .no_buckets()
                .versions(23, None),
        )
        .input("x", "T1")
        .input("y_scale", "T2")
        .opt_input("y_zero_point", "T3")
        .output("y", "T3")
        .types("T1", &[DType::F32, DType::F16, DType::BF16, DType::I32])
        .types(
            "T2",
            &[
                DType::F32,
                DType::F16,
                DType::BF16,
                DType::I32,
                DType::F8E8M0,
            ],
        )
        .types("T3", &q_out)
        .infer(quantize)
        .requires(quant_check),
    );
    let dq_in = concat(&[&[DType::I32], &q_out]);
    r.add(
        OpSpec::new(
            "DequantizeLinear",
            &[10, 13, 19, 21, 23, 24, 25],
            Category::Quantize,
        )
        .attr(axis_attr())
        .attr(block_size_attr())
        .attr(
            AttrSpec::int("output_dtype", 0)
                .no_buckets()
                .versions(23, None),
        )
        .input("x", "T1")
        .input("x_scale", "T2")
        .opt_input("x_zero_point", "T1")
        .output("y", "T3")
        .types("T1", &dq_in)
        .types("T2", &[DType::F32, DType::F16, DType::BF16, DType::F8E8M0])
        .types("T3", &[DType::F32, DType::F16, DType::BF16])
        .infer(dequantize)
        .requires(quant_check),
    );
    r.add(
        OpSpec::new("DynamicQuantizeLinear", &[11], Category::Quantize)
            .traits(Traits::NAN_UNSPECIFIED)
            .input("x", "T1")
            .output("y", "T2")
            .output("y_scale", "TF")
            .output("y_zero_point", "T2")
            .types("T1", &[DType::F32])
            .types("T2", &[DType::U8])
            .types("TF", &[DType::F32])
            .infer(dyn_quantize),
    );
}
