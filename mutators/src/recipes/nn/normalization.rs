//! Normalizations with learned parameters: `BatchNormalization`, `InstanceNormalization`,
//! `LayerNormalization`, `GroupNormalization`, and `LRN`.
use super::divisors;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::attr::AttrValue;
use crate::ir::registry::Registry;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

fn eps(rng: &mut SplitMix64, a: &mut Attrs) {
    float_of(rng, a, "epsilon", &[1e-8, 1e-5, 1e-3, 0.05]);
}

pub(super) fn batch_norm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let c = dims(t)[1];
    let dt = t.dtype;
    let s = site.random_constant("scale", dt, &[c], 0.5, 1.5, rng);
    let b = site.random_constant("bias", dt, &[c], -0.5, 0.5, rng);
    let m = site.random_constant("mean", dt, &[c], -0.5, 0.5, rng);
    let v = site.random_constant("var", dt, &[c], 0.5, 1.5, rng);
    let mut a = Attrs::new();
    eps(rng, &mut a);
    float_of(rng, &mut a, "momentum", &[0.3, 0.7, 0.92, 0.99]);
    if site.opset() >= 14 {
        maybe(rng, &mut a, 0.3, "training_mode", ai(0));
    }
    if site.opset() < 7 {
        flag(rng, &mut a, "is_test");
    }
    if site.opset() < 9 {
        // Per-channel statistics either way (the inputs are [C]).
        maybe_int(rng, &mut a, 0.6, "spatial", &[1]);
        if chance(rng, 0.3) && dims(t).len() == 2 {
            a.push(("spatial", ai(0)));
        }
    }
    site.op1(op, &[x, &s, &b, &m, &v], a)
}

pub(super) fn instance_norm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let c = dims(t)[1];
    let s = site.random_constant("scale", t.dtype, &[c], 0.5, 1.5, rng);
    let b = site.random_constant("bias", t.dtype, &[c], -0.5, 0.5, rng);
    let mut a = Attrs::new();
    eps(rng, &mut a);
    site.op1(op, &[x, &s, &b], a)
}

pub(super) fn layer_norm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let (d, ax, from) = dims_and_axis(t, rng);
    let mut a = Attrs::new();
    int_attr(rng, &mut a, "axis", ax, -1, 0.5);
    eps(rng, &mut a);
    maybe_int(rng, &mut a, 0.4, "stash_type", &[1, 10, 11, 16]);
    let shape = d[from..].to_vec();
    let s = site.random_constant("scale", t.dtype, &shape, 0.5, 1.5, rng);
    // Mean and InvStdDev take the stash type, which the opset may not allow as an output
    // type: ask for them only when it does.
    let stash = match a
        .iter()
        .find(|(k, _)| *k == "stash_type")
        .map(|(_, v)| v.clone())
    {
        Some(AttrValue::Int(c)) => DType::from_code(c as i32),
        _ => DType::F32,
    };
    let stat_ok = Registry::global()
        .by_key(op)
        .and_then(|spec| spec.output_allowed_at(1, site.opset()))
        .is_none_or(|allowed| allowed.contains(&stash));
    let n_out = if stat_ok { 1 + below(rng, 3) } else { 1 };
    let outs = if chance(rng, 0.5) {
        let b = site.random_constant("bias", t.dtype, &shape, -0.5, 0.5, rng);
        site.op(op, &[x, &s, &b], a, n_out)?
    } else {
        site.op(op, &[x, &s], a, n_out)?
    };
    Ok(outs[0].clone())
}

pub(super) fn group_norm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let c = dims(t)[1];
    let cands = match below(rng, 4) {
        0 => vec![1],
        1 => divisors(c, 2, 4),
        2 => divisors(c, 5, 32),
        _ => divisors(c, 33, c),
    };
    let g = if cands.is_empty() {
        1
    } else {
        pick(rng, &cands)
    };
    let len = if site.opset() >= 21 { c } else { g };
    let s = site.random_constant("scale", t.dtype, &[len], 0.5, 1.5, rng);
    let b = site.random_constant("bias", t.dtype, &[len], -0.5, 0.5, rng);
    let mut a = vec![("num_groups", ai(g))];
    eps(rng, &mut a);
    if site.opset() >= 21 {
        maybe(rng, &mut a, 0.3, "stash_type", ai(1));
    }
    site.op1(op, &[x, &s, &b], a)
}

pub(super) fn lrn(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let mut a = vec![("size", ai(pick(rng, &[1, 2, 3, 5, 7])))];
    float_of(rng, &mut a, "alpha", &[1e-6, 1e-4, 0.01, 1.5]);
    float_of(rng, &mut a, "beta", &[0.3, 0.75, 1.5]);
    float_of(rng, &mut a, "bias", &[0.5, 1.0, 2.0]);
    site.op1(op, &[x], a)
}
