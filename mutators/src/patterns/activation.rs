//! GELU written out (erf form, both orders; the two tanh forms of FastGelu; with a bias),
//! QuickGelu (`x * sigmoid(alpha x)`) and SiLU.
use super::*;

/// `0.5 * x * (1 + erf(x / sqrt 2))`; `half_first`: `(0.5 * x) * (1 + erf(..))`.
fn gelu_erf_of(
    site: &mut Site<'_>,
    x: &str,
    dt: DType,
    k: &mut Knobs<'_>,
    half_first: bool,
) -> Result<String, BuildError> {
    let r2 = scalar(
        site,
        "sqrt2",
        dt,
        k.exact("the divisor", std::f64::consts::SQRT_2),
    );
    let one = scalar(site, "one", dt, k.exact("the one added", 1.0));
    let half = scalar(site, "half", dt, k.exact("the half", 0.5));
    let d = site.op1("Div", &[x, &r2], vec![])?;
    let e = site.op1("Erf", &[&d], vec![])?;
    let a = site.op1("Add", &[&e, &one], vec![])?;
    if half_first {
        let h = site.op1("Mul", &[x, &half], vec![])?;
        site.op1("Mul", &[&h, &a], vec![])
    } else {
        let m = site.op1("Mul", &[x, &a], vec![])?;
        site.op1("Mul", &[&m, &half], vec![])
    }
}

fn gelu_erf(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let half_first = k.chance(0.5);
    gelu_erf_of(site, x, t.dtype, k, half_first)
}

/// `x + b` with `b` a vector of the last axis.
fn biased(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let h = dims(t).last().copied().unwrap_or(1);
    let b = site.random_constant("bias", t.dtype, &[h], -0.5, 0.5, k.rng);
    site.op1("Add", &[x, &b], vec![])
}

fn bias_gelu(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let xb = biased(site, x, t, k)?;
    gelu_erf_of(site, &xb, t.dtype, k, false)
}

/// FastGelu's tanh form: `0.5 x (1 + tanh(0.7978845834732056 (x + 0.044715 x^3)))` with a
/// `Pow`, or `0.5 x (1 + tanh(0.7978845834732056 x (1 + 0.044715 x^2)))`.
fn fast_gelu_of(
    site: &mut Site<'_>,
    x: &str,
    dt: DType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let c = k.exact("sqrt(2/pi)", 0.7978845834732056);
    let c = scalar(site, "sqrt_2_pi", dt, c);
    let cube = k.exact("the cubic coefficient", 0.044715);
    let cube = scalar(site, "coef", dt, cube);
    let one = scalar(site, "one", dt, k.exact("the one added", 1.0));
    let half = scalar(site, "half", dt, k.exact("the half", 0.5));
    let inner = if k.chance(0.5) {
        let three = scalar(site, "three", dt, 3.0);
        let p = site.op1("Pow", &[x, &three], vec![])?;
        let m1 = site.op1("Mul", &[&p, &cube], vec![])?;
        let s = site.op1("Add", &[x, &m1], vec![])?;
        site.op1("Mul", &[&s, &c], vec![])?
    } else {
        let m1 = site.op1("Mul", &[x, &cube], vec![])?;
        let m2 = site.op1("Mul", &[&m1, x], vec![])?;
        let a1 = site.op1("Add", &[&m2, &one], vec![])?;
        let m4 = site.op1("Mul", &[x, &c], vec![])?;
        site.op1("Mul", &[&m4, &a1], vec![])?
    };
    let th = site.op1("Tanh", &[&inner], vec![])?;
    let a = site.op1("Add", &[&th, &one], vec![])?;
    let h = site.op1("Mul", &[x, &half], vec![])?;
    site.op1("Mul", &[&h, &a], vec![])
}

fn fast_gelu(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let x = if k.chance(0.3) {
        biased(site, x, t, k)?
    } else {
        x.to_string()
    };
    fast_gelu_of(site, &x, t.dtype, k)
}

fn quick_gelu(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let s = if k.chance(0.3) {
        site.op1("Sigmoid", &[x], vec![])?
    } else {
        let alpha = k.pick(&[1.702, 1.0, -0.5, 3.0]);
        let a = scalar(site, "alpha", t.dtype, alpha);
        let ax = site.op1("Mul", &[x, &a], vec![])?;
        site.op1("Sigmoid", &[&ax], vec![])?
    };
    site.op1("Mul", &[x, &s], vec![])
}

pub(super) fn register(v: &mut Vec<Pattern>) {
    v.push(Pattern {
        name: "GeluErf",
        rewrites: &["GeluFusionL2"],
        dtypes: F32,
        ranks: ANY,
        build: gelu_erf,
    });
    v.push(Pattern {
        name: "BiasGelu",
        rewrites: &["GeluFusionL2", "BiasGeluFusion"],
        dtypes: F32,
        ranks: RANK1,
        build: bias_gelu,
    });
    v.push(Pattern {
        name: "FastGelu",
        rewrites: &["FastGeluFusion", "BiasGeluFusion"],
        dtypes: F32,
        ranks: RANK1,
        build: fast_gelu,
    });
    v.push(Pattern {
        name: "QuickGelu",
        rewrites: &["QuickGeluFusion"],
        dtypes: F32,
        ranks: ANY,
        build: quick_gelu,
    });
}
