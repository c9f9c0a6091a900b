//! The normalizations: BatchNormalization, InstanceNormalization, LayerNormalization,
//! GroupNormalization, LRN, LpNormalization and MeanVarianceNormalization; and
//! SimplifiedLayerNormalization, ONNX Runtime's own RMS normalization in the default domain
//! (`onnx_ops::ort_default`), which shares LayerNormalization's transfer and checks.

use super::{MAX, flag, ints_default, known, shape_of};
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::{Dim, ValueType};

const EPS_BUCKETS: &[(f64, f64)] = &[
    (0.0, 1e-7),
    (1e-7, 1e-4),
    (1e-4, 1e-2),
    (1e-2, f64::INFINITY),
];

fn batch_norm(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let c = x
        .shape
        .as_ref()
        .and_then(|s| s.get(1).cloned())
        .unwrap_or(Dim::Unknown);
    let stat = |i: usize| -> ValueType {
        let dt = if ctx.has_input(i) {
            ctx.dtype(i)
        } else {
            x.dtype
        };
        let shape = shape_of(ctx, i).unwrap_or_else(|| vec![c.clone()]);
        tensor(dt, Some(shape))
    };
    let mut out = vec![ValueType::Tensor(x.clone())];
    for k in 1..ctx.n_outputs() {
        out.push(match k {
            1 => stat(3),
            2 => stat(4),
            // saved mean / var of old opsets: per channel, input type
            _ => tensor(x.dtype, Some(vec![c.clone()])),
        });
    }
    Ok(out)
}

fn channel_params_check(ctx: &InferCtx, params: &[usize]) -> Result<(), InferError> {
    let Some(c) = shape_of(ctx, 0).and_then(|s| known(s.get(1))) else {
        return Ok(());
    };
    for &i in params {
        if let Some(s) = shape_of(ctx, i)
            && s.len() == 1
            && s[0].value().is_some_and(|v| v != c)
        {
            return Err(rule!(
                "input {i} has {} values, expected one per channel ({c})",
                s[0]
            ));
        }
    }
    Ok(())
}

/// The first normalized axis of LayerNormalization and SimplifiedLayerNormalization.
fn first_axis() -> AttrSpec {
    AttrSpec::int("axis", -1).int_buckets(&[(i64::MIN, -2), (-1, -1), (0, 0), (1, MAX)])
}

/// LayerNormalization and SimplifiedLayerNormalization: `Y` is `X`'s type; each statistic
/// (`Mean`, `InvStdDev`; `inv_std_var`) is in `stash_type`, of `X`'s shape with the normalized
/// axes of size 1.
fn layer_norm(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let u = DType::from_code(ctx.int("stash_type", 1) as i32);
    let stat = match &x.shape {
        Some(s) => {
            let a = norm_axis(ctx.int("axis", -1), s.len())?;
            Some(
                s.iter()
                    .enumerate()
                    .map(|(i, d)| if i < a { d.clone() } else { Dim::Known(1) })
                    .collect(),
            )
        }
        None => None,
    };
    let mut out = vec![ValueType::Tensor(x.clone())];
    for _ in 1..ctx.n_outputs().min(3) {
        out.push(tensor(u, stat.clone()));
    }
    Ok(out)
}

fn group_norm_check(ctx: &InferCtx) -> Result<(), InferError> {
    let g = ctx.int("num_groups", 1);
    if g < 1 {
        return Err(rule!("num_groups {g} is not positive"));
    }
    if let Some(c) = shape_of(ctx, 0).and_then(|s| known(s.get(1))) {
        if c % g != 0 {
            return Err(rule!("num_groups {g} does not divide the {c} channels"));
        }
        if ctx.opset >= 21 {
            return channel_params_check(ctx, &[1, 2]);
        }
    }
    Ok(())
}

/// Registers the normalizations.
pub(super) fn register(r: &mut Registry) {
    let eps = || AttrSpec::float("epsilon", 1e-5).float_buckets(EPS_BUCKETS);
    r.add(
        OpSpec::new("BatchNormalization", &[1, 6, 7, 9, 14, 15], Category::Norm)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .attr(eps())
            .attr(AttrSpec::float("momentum", 0.9).float_buckets(&[
                (f64::NEG_INFINITY, 0.5),
                (0.5, 0.9),
                (0.9, 0.95),
                (0.95, f64::INFINITY),
            ]))
            .attr(
                AttrSpec::of("consumed_inputs", AttrKind::Ints)
                    .required()
                    .no_buckets()
                    .versions(1, Some(6)),
            )
            .attr(flag("is_test").versions(1, Some(7)))
            .attr(flag("spatial").versions(1, Some(9)))
            .attr(flag("training_mode").versions(14, None))
            .input("X", "T")
            .input("scale", "T1")
            .input("B", "T1")
            .input("input_mean", "T2")
            .input("input_var", "T2")
            .output("Y", "T")
            .opt_output("running_mean", "T2")
            .opt_output("running_var", "T2")
            .opt_output("saved_mean", "T")
            .opt_output("saved_var", "T")
            .types("T", FLOAT)
            .types("T1", FLOAT)
            .types("T2", FLOAT)
            .infer(batch_norm)
            .requires(batch_norm_check),
    );
    r.add(
        OpSpec::new("InstanceNormalization", &[1, 6, 22], Category::Norm)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .attr(eps())
            .attr(
                AttrSpec::of("consumed_inputs", AttrKind::Ints)
                    .no_buckets()
                    .versions(1, Some(6)),
            )
            .input("input", "T")
            .input("scale", "T")
            .input("B", "T")
            .output("output", "T")
            .types("T", FLOAT)
            .infer(unary)
            .requires(|c| {
                if shape_of(c, 0).is_some_and(|s| s.len() < 3) {
                    return Err(rule!(
                        "InstanceNormalization input must have rank 3 or more"
                    ));
                }
                channel_params_check(c, &[1, 2])
            }),
    );
    r.add(
        OpSpec::new("LayerNormalization", &[17], Category::Norm)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .attr(first_axis())
            .attr(eps())
            .attr(AttrSpec::int("stash_type", 1).one_of_ints(&[1, 10, 11, 16]))
            .input("X", "T")
            .input("Scale", "T")
            .opt_input("B", "T")
            .output("Y", "T")
            .opt_output("Mean", "U")
            .opt_output("InvStdDev", "U")
            .types("T", FLOAT)
            .types("U", &[DType::F32, DType::BF16])
            .infer(layer_norm)
            .requires(layer_norm_check),
    );
    // ONNX Runtime's schema (`onnx_ops::ort_default`): LayerNormalization without the mean
    // and the bias; its one statistic, `inv_std_var`, is in `stash_type` (float or double by
    // the schema; ORT's CPU kernels register float only, for every T).
    r.add(
        OpSpec::new("SimplifiedLayerNormalization", &[1], Category::Norm)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .attr(first_axis())
            .attr(eps())
            .attr(AttrSpec::int("stash_type", 1).one_of_ints(&[1, 11]))
            .input("X", "T")
            .input("scale", "T")
            .output("Y", "T")
            .opt_output("inv_std_var", "U")
            .types("T", FLOAT)
            .types("U", &[DType::F32, DType::F64])
            .infer(layer_norm)
            .requires(layer_norm_check),
    );
    r.add(
        OpSpec::new("GroupNormalization", &[18, 21], Category::Norm)
            .traits(Traits::INF_UNSPECIFIED)
            .attr(eps())
            .attr(
                AttrSpec::of("num_groups", AttrKind::Int)
                    .required()
                    .range(1, MAX)
                    .int_buckets(&[(1, 1), (2, 4), (5, 32), (33, MAX)]),
            )
            .attr(
                AttrSpec::int("stash_type", 1)
                    .one_of_ints(&[1, 10, 11, 16])
                    .versions(21, None),
            )
            .input("X", "T")
            .input("scale", "T")
            .input("bias", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(unary)
            .requires(group_norm_check),
    );
    r.add(
        OpSpec::new("LRN", &[1, 13], Category::Norm)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .attr(AttrSpec::float("alpha", 1e-4).float_buckets(&[
                (f64::NEG_INFINITY, 1e-5),
                (1e-5, 1e-3),
                (1e-3, 1.0),
                (1.0, f64::INFINITY),
            ]))
            .attr(AttrSpec::float("beta", 0.75).float_buckets(&[
                (f64::NEG_INFINITY, 0.5),
                (0.5, 1.0),
                (1.0, f64::INFINITY),
            ]))
            .attr(AttrSpec::float("bias", 1.0).float_buckets(&[
                (f64::NEG_INFINITY, 1.0),
                (1.0, 1.0 + 1e-6),
                (1.0 + 1e-6, f64::INFINITY),
            ]))
            .attr(
                AttrSpec::of("size", AttrKind::Int)
                    .required()
                    .range(1, MAX)
                    .int_buckets(&[(1, 1), (2, 2), (3, 5), (6, MAX)]),
            )
            .input("X", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(unary)
            .requires(|c| match shape_of(c, 0) {
                Some(s) if s.len() < 2 => Err(rule!(
                    "LRN input must have rank 2 or more, found {}",
                    s.len()
                )),
                _ => Ok(()),
            }),
    );
    r.add(
        OpSpec::new("LpNormalization", &[1, 22], Category::Norm)
            .traits(Traits::INF_UNSPECIFIED)
            .attr(AttrSpec::int("axis", -1).int_buckets(&[
                (i64::MIN, -2),
                (-1, -1),
                (0, 0),
                (1, MAX),
            ]))
            .attr(AttrSpec::int("p", 2).one_of_ints(&[1, 2]))
            .input("input", "T")
            .output("output", "T")
            .types("T", FLOAT)
            .infer(unary)
            .requires(|c| {
                if let Some(s) = shape_of(c, 0) {
                    norm_axis(c.int("axis", -1), s.len())?;
                }
                Ok(())
            }),
    );
    r.add(
        OpSpec::new("MeanVarianceNormalization", &[9, 13], Category::Norm)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .attr(ints_default("axes", &[0, 2, 3]).non_empty())
            .input("X", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(unary)
            .ambiguous(|c| {
                if c.ints("axes").is_none() {
                    return Err(rule!(
                        "axes left to its default: ONNX's checker fails on it (the function \
                         body reads the absent attribute)"
                    ));
                }
                // The function body's constants (the exponent, the epsilon) are float: on
                // any other element type its Pow or Add binds two types, and ONNX's checker
                // refuses the model (ORT too, with the checker's words).
                match c.dtype(0) {
                    DType::F32 | DType::Other(_) => Ok(()),
                    d => Err(rule!(
                        "element type {d}: ONNX's checker fails on the function body, whose \
                         constants are float"
                    )),
                }
            })
            .requires(|c| {
                if let Some(s) = shape_of(c, 0) {
                    norm_axes(c.ints("axes").unwrap_or(&[0, 2, 3]), s.len())?;
                }
                Ok(())
            }),
    );
}

/// BatchNormalization: rank 2 or more, per-channel parameters, and (from opset 14) the
/// outputs `training_mode` asks for.
fn batch_norm_check(c: &InferCtx) -> Result<(), InferError> {
    if shape_of(c, 0).is_some_and(|s| s.len() < 2) {
        return Err(rule!("BatchNormalization input must have rank 2 or more"));
    }
    if c.opset >= 9 || c.int("spatial", 1) == 1 {
        channel_params_check(c, &[1, 2, 3, 4])?;
    }
    if c.opset >= 14 {
        // Training mode outputs the running statistics; inference mode only Y.
        let outs = c.node.outputs.iter().filter(|o| !o.is_empty()).count();
        match (c.int("training_mode", 0), outs) {
            (0, n) if n > 1 => {
                return Err(rule!(
                    "BatchNormalization with training_mode 0 has 1 output, not {n}"
                ));
            }
            (1, 1) => {
                return Err(rule!(
                    "BatchNormalization with training_mode 1 outputs \
                     running_mean and running_var too"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// LayerNormalization (and SimplifiedLayerNormalization's `scale`): `Scale` and `B` broadcast
/// to the normalized shape (the axes from `axis` on).
fn layer_norm_check(c: &InferCtx) -> Result<(), InferError> {
    let Some(x) = shape_of(c, 0) else {
        return Ok(());
    };
    let a = norm_axis(c.int("axis", -1), x.len())?;
    for i in [1, 2] {
        if let Some(s) = shape_of(c, i) {
            broadcast_shapes(&[Some(x[a..].to_vec()), Some(s.clone())]).and_then(|b| {
                if b == Some(x[a..].to_vec()) {
                    Ok(())
                } else {
                    Err(rule!(
                        "input {i} does not broadcast to the normalized shape"
                    ))
                }
            })?;
        }
    }
    Ok(())
}
