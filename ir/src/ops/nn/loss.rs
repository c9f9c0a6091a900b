//! The losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.

use super::{MAX, known, shape_of};
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};

fn nll_loss(ctx: &InferCtx) -> Infer {
    // input and weight share a dtype: take whichever is known
    let dt = if ctx.dtype(0).is_known() {
        ctx.dtype(0)
    } else {
        ctx.dtype(2)
    };
    let xs = shape_of(ctx, 0);
    let ts = shape_of(ctx, 1);
    if let (Some(x), Some(t)) = (&xs, &ts)
        && (x.len() < 2 || t.len() + 1 != x.len())
    {
        return Err(rule!(
            "loss input has rank {} and target rank {}; expected ranks r and r-1, r >= 2",
            x.len(),
            t.len()
        ));
    }
    let loss = if ctx.string("reduction", "mean") == "none" {
        match (&ts, &xs) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(x)) if x.len() >= 2 => Some(
                x.iter()
                    .enumerate()
                    .filter(|(i, _)| *i != 1)
                    .map(|(_, d)| d.clone())
                    .collect(),
            ),
            _ => None,
        }
    } else {
        Some(vec![])
    };
    let mut out = vec![tensor(dt, loss)];
    if ctx.n_outputs() > 1 {
        out.push(tensor(dt, xs));
    }
    Ok(out)
}

/// Registers NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
pub(super) fn register(r: &mut Registry) {
    let loss = |op: &'static str, versions: &[i64], names: [&'static str; 3]| {
        OpSpec::new(op, versions, Category::Misc)
            .attr(AttrSpec::of("ignore_index", AttrKind::Int).int_buckets(&[
                (i64::MIN, -1),
                (0, 0),
                (1, MAX),
            ]))
            .attr(AttrSpec::string("reduction", "mean").one_of(&["none", "sum", "mean"]))
            .input(names[0], "T")
            .input(names[1], "Tind")
            .opt_input(names[2], "T")
            .types("T", FLOAT)
            .types("Tind", INDEX)
            .infer(nll_loss)
            .requires(|c| {
                nll_loss(c)?;
                let x = shape_of(c, 0);
                if let (Some(x), Some(t)) = (&x, shape_of(c, 1)) {
                    for (i, (a, b)) in t
                        .iter()
                        .zip(
                            x.iter()
                                .enumerate()
                                .filter(|(j, _)| *j != 1)
                                .map(|(_, d)| d),
                        )
                        .enumerate()
                    {
                        if let (Some(a), Some(b)) = (a.value(), b.value())
                            && a != b
                        {
                            return Err(rule!("target axis {i} is {a}, input has {b}"));
                        }
                    }
                }
                if let (Some(x), Some(w)) = (x, shape_of(c, 2))
                    && (w.len() != 1
                        || w[0]
                            .value()
                            .zip(known(x.get(1)))
                            .is_some_and(|(a, b)| a != b))
                {
                    return Err(rule!("weight must have one value per class"));
                }
                Ok(())
            })
    };
    r.add(
        loss(
            "NegativeLogLikelihoodLoss",
            &[12, 13, 22],
            ["input", "target", "weight"],
        )
        .output("loss", "T"),
    );
    r.add(
        loss(
            "SoftmaxCrossEntropyLoss",
            &[12, 13],
            ["scores", "labels", "weights"],
        )
        .output("output", "T")
        .opt_output("log_prob", "T"),
    );
}
