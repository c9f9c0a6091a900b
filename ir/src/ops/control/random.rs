//! The random generators: RandomNormal, RandomUniform, their `Like` forms, Bernoulli and
//! Multinomial.

use super::SEQ_ELEM_BF16;
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType::{F32, I32};
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn random_infer(ctx: &InferCtx) -> Infer {
    let dt = dtype_attr(ctx, "dtype", F32);
    let Some(shape) = ctx.ints("shape") else {
        return Err(rule!("the shape attribute is missing"));
    };
    if let Some(d) = shape.iter().find(|d| **d < 0) {
        return Err(rule!("shape {shape:?} has negative dim {d}"));
    }
    Ok(vec![fixed(dt, shape)])
}

fn multinomial_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let dt = dtype_attr(ctx, "dtype", I32);
    let n = ctx.int("sample_size", 1);
    let shape = match &x.shape {
        Some(s) if s.len() == 2 => Some(vec![s[0].clone(), Dim::Known(n)]),
        Some(s) => {
            return Err(rule!(
                "Multinomial input must be [batch, classes], found rank {}",
                s.len()
            ));
        }
        None => Some(vec![Dim::Unknown, Dim::Known(n)]),
    };
    Ok(vec![tensor(dt, shape)])
}

/// The output has the input's shape and the dtype the `dtype` attribute names, else the
/// input's (RandomNormalLike, RandomUniformLike, Bernoulli).
fn like_input(ctx: &InferCtx) -> Infer {
    Ok(vec![tensor(
        dtype_attr(ctx, "dtype", ctx.dtype(0)),
        ctx.tensor(0)?.shape,
    )])
}

/// Registers the random generators.
pub(super) fn register(r: &mut Registry) {
    let float_codes = dtype_codes(FLOAT);
    for name in ["RandomNormal", "RandomUniform"] {
        let (a, b, da, db) = if name == "RandomNormal" {
            ("mean", "scale", 0.0, 1.0)
        } else {
            ("low", "high", 0.0, 1.0)
        };
        r.add(
            OpSpec::new(name, &[1, 22], Category::Random)
                .output("output", "T")
                .attr(AttrSpec::of("shape", AttrKind::Ints).required())
                .attr(AttrSpec::int("dtype", 1).one_of_ints(&float_codes))
                .attr(AttrSpec::float(a, da))
                .attr(AttrSpec::float(b, db))
                .attr(AttrSpec::of("seed", AttrKind::Float).no_buckets())
                .types("T", FLOAT)
                .infer(random_infer),
        );
        let like: &'static str = if name == "RandomNormal" {
            "RandomNormalLike"
        } else {
            "RandomUniformLike"
        };
        r.add(
            OpSpec::new(like, &[1, 22], Category::Random)
                .input("input", "T1")
                .output("output", "T2")
                .attr(AttrSpec::of("dtype", AttrKind::Int).one_of_ints(&float_codes))
                .attr(AttrSpec::float(a, da))
                .attr(AttrSpec::float(b, db))
                .attr(AttrSpec::of("seed", AttrKind::Float).no_buckets())
                .types("T1", SEQ_ELEM_BF16)
                .types("T2", FLOAT)
                .infer(like_input),
        );
    }
    r.add(
        OpSpec::new("Bernoulli", &[15, 22], Category::Random)
            .input("input", "T1")
            .output("output", "T2")
            .attr(
                AttrSpec::of("dtype", AttrKind::Int)
                    .one_of_ints(&dtype_codes(NUMERIC_BOOL))
                    .int_buckets(&[(1, 1), (11, 11), (9, 9), (7, 7), (10, 10)]),
            )
            .attr(AttrSpec::of("seed", AttrKind::Float).no_buckets())
            .types("T1", FLOAT)
            .types("T2", NUMERIC_BOOL)
            .infer(like_input),
    );
    r.add(
        OpSpec::new("Multinomial", &[7, 22], Category::Random)
            .input("input", "T1")
            .output("output", "T2")
            .attr(AttrSpec::int("dtype", 6).one_of_ints(&[6, 7]))
            .attr(
                AttrSpec::int("sample_size", 1)
                    .range(1, i64::MAX)
                    .int_buckets(&[(1, 1), (2, 4), (5, i64::MAX)]),
            )
            .attr(AttrSpec::of("seed", AttrKind::Float).no_buckets())
            .types("T1", FLOAT)
            .types("T2", INDEX)
            .infer(multinomial_infer),
    );
}
