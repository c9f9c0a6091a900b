//! Normalizations written out over the last axis: LayerNorm (mean, centred, squared, mean,
//! epsilon, root, divide, scale, shift), the same after a residual Add (SkipLayerNorm), and
//! RMSNorm (no centring, no shift).
use super::*;

/// `ReduceMean` over the last axis, keeping it (axes an attribute before opset 18, an input
/// from it).
fn mean_last(site: &mut Site<'_>, x: &str) -> Result<String, BuildError> {
    if site.opset() >= 18 {
        let axes = site.constant_i64s("axes", &[1], &[-1]);
        site.op1("ReduceMean", &[x, &axes], vec![])
    } else {
        site.op1("ReduceMean", &[x], vec![("axes", ais(&[-1]))])
    }
}

/// `x / sqrt(mean(v) + eps)` pieces: the root of `mean(sq) + eps`.
fn root_of_mean(
    site: &mut Site<'_>,
    sq: &str,
    dt: DType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let v = mean_last(site, sq)?;
    let eps = k.pick(&[1e-5, 1e-6, 1e-12, 1e-3]);
    let eps = scalar(site, "eps", dt, eps);
    let ve = site.op1("Add", &[&v, &eps], vec![])?;
    site.op1("Sqrt", &[&ve], vec![])
}

fn layer_norm_of(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let dt = t.dtype;
    let h = dims(t).last().copied().unwrap_or(1);
    let mu = mean_last(site, x)?;
    let d = site.op1("Sub", &[x, &mu], vec![])?;
    let two = scalar(site, "two", dt, 2.0);
    let p = site.op1("Pow", &[&d, &two], vec![])?;
    let sd = root_of_mean(site, &p, dt, k)?;
    let n = site.op1("Div", &[&d, &sd], vec![])?;
    let gamma = site.random_constant("gamma", dt, &[h], 0.5, 1.5, k.rng);
    let ng = site.op1("Mul", &[&n, &gamma], vec![])?;
    let beta = site.random_constant("beta", dt, &[h], -0.5, 0.5, k.rng);
    site.op1("Add", &[&ng, &beta], vec![])
}

fn layer_norm(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    layer_norm_of(site, x, t, k)
}

/// `LayerNorm(x (+ bias) + skip)`: the residual a transformer block adds before its norm.
fn skip_layer_norm(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let d = dims(t);
    let h = d.last().copied().unwrap_or(1);
    let mut s = x.to_string();
    if k.chance(0.4) {
        let b = site.random_constant("bias", t.dtype, &[h], -0.5, 0.5, k.rng);
        s = site.op1("Add", &[&s, &b], vec![])?;
    }
    let skip = site.random_constant("skip", t.dtype, &d, -1.0, 1.0, k.rng);
    let s = site.op1("Add", &[&s, &skip], vec![])?;
    layer_norm_of(site, &s, t, k)
}

fn rms_norm(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let dt = t.dtype;
    let h = dims(t).last().copied().unwrap_or(1);
    let two = scalar(site, "two", dt, 2.0);
    let p = site.op1("Pow", &[x, &two], vec![])?;
    let sd = root_of_mean(site, &p, dt, k)?;
    let n = site.op1("Div", &[x, &sd], vec![])?;
    let gamma = site.random_constant("gamma", dt, &[h], 0.5, 1.5, k.rng);
    site.op1("Mul", &[&n, &gamma], vec![])
}

pub(super) fn register(v: &mut Vec<Pattern>) {
    v.push(Pattern {
        name: "LayerNorm",
        rewrites: &["LayerNormFusionL1", "LayerNormFusionL2"],
        dtypes: F32_F64,
        ranks: RANK2,
        build: layer_norm,
    });
    v.push(Pattern {
        name: "SkipLayerNorm",
        rewrites: &[
            "LayerNormFusionL1",
            "SkipLayerNormFusion",
            "BiasSkipLayerNormFusion",
        ],
        dtypes: F32,
        ranks: (3, 3),
        build: skip_layer_norm,
    });
    v.push(Pattern {
        name: "RmsNorm",
        rewrites: &["SimplifiedLayerNormFusion"],
        dtypes: F32_F64,
        ranks: RANK2,
        build: rms_norm,
    });
}
