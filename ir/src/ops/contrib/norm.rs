//! The skip normalizations of `com.microsoft`: SkipLayerNormalization and its root-mean-square
//! form SkipSimplifiedLayerNormalization. Both normalize `input + skip (+ bias)` over the last
//! axis; `input` is (batch, sequence, hidden) or (tokens, hidden), `skip` has the same last two
//! axes (and a batch of 1 or the input's), `gamma`, `beta` and `bias` are vectors of hidden.
use super::MS;
use crate::dtype::DType;
use crate::ops::common::*;
use crate::ops::nn::shape_of;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::{Dim, ValueType};

fn skip_norm(c: &InferCtx) -> Infer {
    let x = c.tensor(0)?;
    let stat = x.shape.as_ref().map(|s| {
        let mut s = s.clone();
        if let Some(last) = s.last_mut() {
            *last = Dim::Known(1);
        }
        s
    });
    let mut out = vec![ValueType::Tensor(x.clone())];
    for k in 1..c.n_outputs() {
        out.push(match k {
            1 | 2 => tensor(DType::F32, stat.clone()),
            _ => ValueType::Tensor(x.clone()),
        });
    }
    Ok(out)
}

/// The shapes the CPU kernel takes (see the module documentation); `vectors` are the slots of
/// the per-hidden vectors.
fn skip_norm_check(c: &InferCtx, vectors: &[usize]) -> Result<(), InferError> {
    let Some(x) = shape_of(c, 0) else {
        return Ok(());
    };
    if !(2..=3).contains(&x.len()) {
        return Err(rule!("input must be 2-D or 3-D, found rank {}", x.len()));
    }
    if let Some(s) = shape_of(c, 1) {
        let tail = |v: &[Dim]| v[v.len() - 2..].to_vec();
        if !(2..=x.len()).contains(&s.len()) || tail(&s) != tail(&x) {
            return Err(rule!(
                "skip must have input's last two axes and no more axes than input"
            ));
        }
        if s.len() == 3 && s[0] != Dim::Known(1) && s[0] != x[0] {
            return Err(rule!("skip's batch must be 1 or input's"));
        }
    }
    let h = x.last().cloned();
    for &i in vectors {
        if let Some(v) = shape_of(c, i)
            && (v.len() != 1 || Some(&v[0]) != h.as_ref())
        {
            return Err(rule!(
                "input {i} must be a vector as long as the hidden axis"
            ));
        }
    }
    Ok(())
}

/// The root-mean-square form has no mean: its `mean` output is not defined (ORT's kernel
/// leaves zeros there).
fn no_mean(c: &InferCtx) -> Result<(), InferError> {
    match c.node.outputs.get(1) {
        Some(o) if !o.is_empty() => Err(rule!(
            "SkipSimplifiedLayerNormalization's mean output is not defined (it computes no mean)"
        )),
        _ => Ok(()),
    }
}

fn epsilon() -> AttrSpec {
    AttrSpec::float("epsilon", 1e-12).float_buckets(&[
        (0.0, 1e-7),
        (1e-7, 1e-4),
        (1e-4, 1e-2),
        (1e-2, f64::INFINITY),
    ])
}

pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("SkipLayerNormalization", &[1], Category::Norm)
            .domain(MS)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .attr(epsilon())
            .input("input", "T")
            .input("skip", "T")
            .input("gamma", "T")
            .opt_input("beta", "T")
            .opt_input("bias", "T")
            .output("output", "T")
            .opt_output("mean", "U")
            .opt_output("inv_std_var", "U")
            .opt_output("input_skip_bias_sum", "T")
            .types("T", &[DType::F32, DType::F16])
            .types("U", &[DType::F32])
            .infer(skip_norm)
            .requires(|c| skip_norm_check(c, &[2, 3, 4])),
    );
    r.add(
        OpSpec::new("SkipSimplifiedLayerNormalization", &[1], Category::Norm)
            .domain(MS)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .attr(epsilon())
            .input("input", "T")
            .input("skip", "T")
            .input("gamma", "T")
            .opt_input("bias", "T")
            .output("output", "T")
            .opt_output("mean", "U")
            .opt_output("inv_std_var", "U")
            .opt_output("input_skip_bias_sum", "T")
            .types("T", &[DType::F32, DType::F16])
            .types("U", &[DType::F32])
            .infer(skip_norm)
            .requires(|c| skip_norm_check(c, &[2, 3]))
            .ambiguous(no_mean),
    );
}
