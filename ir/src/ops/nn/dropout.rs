//! Dropout.

use super::{F8, concat, flag};
use crate::attr::AttrKind;
use crate::dtype::DType;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::ValueType;

fn dropout(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let mut out = vec![ValueType::Tensor(x.clone())];
    if ctx.n_outputs() > 1 {
        let dt = if ctx.opset >= 10 {
            DType::Bool
        } else {
            x.dtype
        };
        out.push(tensor(dt, x.shape.clone()));
    }
    Ok(out)
}

/// Registers Dropout.
pub(super) fn register(r: &mut Registry) {
    let ratio_t = concat(&[FLOAT, F8]);
    r.add(
        OpSpec::new("Dropout", &[1, 6, 7, 10, 12, 13, 22], Category::Misc)
            .attr(flag("is_test").versions(1, Some(7)))
            .attr(
                AttrSpec::of("consumed_inputs", AttrKind::Ints)
                    .no_buckets()
                    .versions(1, Some(6)),
            )
            .attr(
                AttrSpec::float("ratio", 0.5)
                    .frange(0.0, 1.0)
                    .float_buckets(&[
                        (0.0, 1e-6),
                        (1e-6, 0.5),
                        (0.5, 0.5 + 1e-6),
                        (0.5 + 1e-6, 1.0 + 1e-6),
                    ])
                    .versions(1, Some(12)),
            )
            .attr(
                AttrSpec::of("seed", AttrKind::Int)
                    .no_buckets()
                    .versions(12, None),
            )
            .input("data", "T")
            .opt_input("ratio", "T1")
            .opt_input("training_mode", "T2")
            .output("output", "T")
            .opt_output("mask", "T2")
            .types("T", &ratio_t)
            .types("T1", &ratio_t)
            .types("T2", &concat(&[&[DType::Bool], &ratio_t]))
            .infer(dropout)
            .requires(|c| {
                if let Some(r) = c.const_f64s(1)
                    && r.iter().any(|v| !(0.0..1.0).contains(v))
                {
                    return Err(rule!("ratio {r:?} is outside [0, 1)"));
                }
                Ok(())
            }),
    );
}
