//! The preview training ops (domain `ai.onnx.preview.training`): Adagrad, Adam, Momentum and
//! Gradient.

use crate::attr::{AttrKind, AttrLookup, AttrValue};
use crate::dtype::DType::{F32, F64, I64};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::ValueType;

/// The training preview domain.
const TRAINING: &str = "ai.onnx.preview.training";

/// Optimizers: inputs R, T, then `groups` lists of n tensors (X first); outputs are the lists
/// named by `out_groups`, each of the type of that input list.
fn optimizer_infer(ctx: &InferCtx, groups: usize, out_groups: &[usize]) -> Infer {
    let rest = ctx.n_inputs().saturating_sub(2);
    if rest == 0 || !rest.is_multiple_of(groups) {
        return Err(rule!(
            "{} takes R, T and {groups} lists of equal length, found {rest} tensors",
            ctx.node.op_type
        ));
    }
    let n = rest / groups;
    let mut out = Vec::new();
    for g in out_groups {
        for i in 0..n {
            out.push(ValueType::Tensor(ctx.tensor(2 + g * n + i)?));
        }
    }
    if ctx.n_outputs() > out.len() {
        return Err(rule!(
            "{} gives {} outputs, found {}",
            ctx.node.op_type,
            out.len(),
            ctx.n_outputs()
        ));
    }
    Ok(out)
}

fn gradient_infer(ctx: &InferCtx) -> Infer {
    // One gradient per name in `xs`, shaped like the input fed for it.
    let xs = match ctx.attr("xs") {
        Some(AttrValue::Strings(v)) => v.len(),
        _ => 0,
    };
    if xs != ctx.n_outputs() {
        return Err(rule!(
            "Gradient has {} outputs for {xs} names in xs",
            ctx.n_outputs()
        ));
    }
    Ok((0..xs)
        .map(|i| match ctx.input_type(i) {
            ValueType::Tensor(t) => tensor(t.dtype, t.shape),
            _ => ValueType::Unknown,
        })
        .collect())
}

/// Registers the training ops.
pub(super) fn register(r: &mut Registry) {
    let f = &[F32, F64][..];
    r.add(
        OpSpec::new("Adagrad", &[1], Category::Misc)
            .domain(TRAINING)
            .input("R", "T1")
            .input("T", "T2")
            .var_input("inputs", "", 1)
            .var_output("outputs", "", 1)
            .attr(AttrSpec::float("decay_factor", 0.0))
            .attr(AttrSpec::float("epsilon", 1e-6))
            .attr(AttrSpec::float("norm_coefficient", 0.0))
            .types("T1", f)
            .types("T2", &[I64])
            .infer(|c| optimizer_infer(c, 3, &[0, 2])),
    );
    r.add(
        OpSpec::new("Adam", &[1], Category::Misc)
            .domain(TRAINING)
            .input("R", "T1")
            .input("T", "T2")
            .var_input("inputs", "", 1)
            .var_output("outputs", "", 1)
            .attr(AttrSpec::float("alpha", 0.9))
            .attr(AttrSpec::float("beta", 0.999))
            .attr(AttrSpec::float("epsilon", 1e-6))
            .attr(AttrSpec::float("norm_coefficient", 0.0))
            .attr(AttrSpec::float("norm_coefficient_post", 0.0))
            .types("T1", f)
            .types("T2", &[I64])
            .infer(|c| optimizer_infer(c, 4, &[0, 2, 3])),
    );
    r.add(
        OpSpec::new("Momentum", &[1], Category::Misc)
            .domain(TRAINING)
            .input("R", "T1")
            .input("T", "T2")
            .var_input("inputs", "", 1)
            .var_output("outputs", "", 1)
            .attr(AttrSpec::of("alpha", AttrKind::Float).required())
            .attr(AttrSpec::of("beta", AttrKind::Float).required())
            .attr(AttrSpec::of("norm_coefficient", AttrKind::Float).required())
            .attr(
                AttrSpec::of("mode", AttrKind::String)
                    .required()
                    .one_of(&["standard", "nesterov"]),
            )
            .types("T1", f)
            .types("T2", &[I64])
            .infer(|c| optimizer_infer(c, 3, &[0, 2])),
    );
    r.add(
        OpSpec::new("Gradient", &[1], Category::Misc)
            .domain(TRAINING)
            .var_input("Inputs", "", 1)
            .var_output("Outputs", "", 1)
            .attr(AttrSpec::of("xs", AttrKind::Strings).required())
            .attr(AttrSpec::of("y", AttrKind::String).required().no_buckets())
            .attr(AttrSpec::of("zs", AttrKind::Strings))
            .infer(gradient_infer),
    );
}
