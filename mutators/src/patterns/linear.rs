//! Matrix products and convolutions with what ONNX Runtime folds into them: MatMul + Add
//! (to Gemm), Gemm + activation (FusedGemm), MatMul and a scale (FusedMatMul's alpha),
//! transposed operands (FusedMatMul's trans flags), Conv + activation (FusedConv) and Conv +
//! BatchNormalization / Add / Mul (folded into the weights). Square weights keep `x`'s
//! shape.
use super::*;

/// A square weight of the last axis, uniform in `±1/sqrt(h)`.
fn square(site: &mut Site<'_>, t: &TensorType, h: i64, k: &mut Knobs<'_>) -> String {
    let b = 1.0 / (h.max(1) as f64).sqrt();
    site.random_constant("w", t.dtype, &[h, h], -b, b, k.rng)
}

fn matmul_add(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let h = dims(t).last().copied().unwrap_or(1);
    let w = square(site, t, h, k);
    let m = site.op1("MatMul", &[x, &w], vec![])?;
    let b = site.random_constant("bias", t.dtype, &[h], -0.5, 0.5, k.rng);
    let y = site.op1("Add", &[&m, &b], vec![])?;
    if t.rank() == Some(2) && k.chance(0.5) {
        return activation(site, &y, t, k);
    }
    Ok(y)
}

/// One of the activations FusedGemm / FusedConv take after `y`.
fn activation(
    site: &mut Site<'_>,
    y: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    match k.pick(&[
        "Relu",
        "Sigmoid",
        "Tanh",
        "LeakyRelu",
        "HardSigmoid",
        "Clip",
    ]) {
        "LeakyRelu" => site.op1(
            "LeakyRelu",
            &[y],
            vec![("alpha", af(k.pick(&[0.01, 0.2, -0.5])))],
        ),
        "HardSigmoid" => site.op1(
            "HardSigmoid",
            &[y],
            vec![("alpha", af(0.3)), ("beta", af(0.4))],
        ),
        "Clip" => {
            let lo = scalar(site, "min", t.dtype, k.pick(&[0.0, -0.5]));
            let hi = scalar(site, "max", t.dtype, k.pick(&[6.0, 0.5]));
            site.op1("Clip", &[y, &lo, &hi], vec![])
        }
        a => site.op1(a, &[y], vec![]),
    }
}

fn gemm_activation(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let h = dims(t)[1];
    let w = square(site, t, h, k);
    let b = site.random_constant("bias", t.dtype, &[h], -0.5, 0.5, k.rng);
    let mut a = vec![];
    if k.chance(0.3) {
        a.push(("alpha", af(k.pick(&[0.5, 2.0]))));
    }
    let g = site.op1("Gemm", &[x, &w, &b], a)?;
    activation(site, &g, t, k)
}

/// `MatMul` then `Mul` by a scalar (or `Div` by one), or a scaled operand.
fn matmul_scale(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let h = dims(t).last().copied().unwrap_or(1);
    let w = square(site, t, h, k);
    let s = k.pick(&[0.125, 0.5, 2.0, -1.0]);
    match k.pick(&[0, 1, 2]) {
        0 => {
            let m = site.op1("MatMul", &[x, &w], vec![])?;
            let c = scalar(site, "scale", t.dtype, s);
            site.op1("Mul", &[&m, &c], vec![])
        }
        1 => {
            let m = site.op1("MatMul", &[x, &w], vec![])?;
            let c = scalar(site, "divisor", t.dtype, 1.0 / s);
            site.op1("Div", &[&m, &c], vec![])
        }
        _ => {
            let c = scalar(site, "scale", t.dtype, s);
            let xs = site.op1("Mul", &[x, &c], vec![])?;
            site.op1("MatMul", &[&xs, &w], vec![])
        }
    }
}

/// `Transpose(x)` (its last two axes swapped) times a square weight, transposed back.
fn transpose_matmul(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let mut perm: Vec<i64> = (0..r as i64).collect();
    perm.swap(r - 2, r - 1);
    let xt = site.op1("Transpose", &[x], vec![("perm", ais(&perm))])?;
    let w = square(site, t, d[r - 2], k);
    let m = site.op1("MatMul", &[&xt, &w], vec![])?;
    site.op1("Transpose", &[&m], vec![("perm", ais(&perm))])
}

/// A 3x3 convolution keeping the channels and the spatial size.
fn same_conv(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
    bias: bool,
) -> Result<String, BuildError> {
    let c = dims(t)[1];
    let b = 1.0 / ((c * 9) as f64).sqrt();
    let w = site.random_constant("w", t.dtype, &[c, c, 3, 3], -b, b, k.rng);
    let attrs = vec![("pads", ais(&[1, 1, 1, 1])), ("kernel_shape", ais(&[3, 3]))];
    if bias {
        let bb = site.random_constant("bias", t.dtype, &[c], -0.5, 0.5, k.rng);
        site.op1("Conv", &[x, &w, &bb], attrs)
    } else {
        site.op1("Conv", &[x, &w], attrs)
    }
}

fn conv_activation(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let bias = k.chance(0.5);
    let c = same_conv(site, x, t, k, bias)?;
    activation(site, &c, t, k)
}

/// Conv, then what ORT folds into its weights: BatchNormalization, an Add of a per-channel
/// constant, or a Mul by one.
fn conv_fold(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let ch = dims(t)[1];
    let bias = k.chance(0.5);
    let y = same_conv(site, x, t, k, bias)?;
    let dt = t.dtype;
    match k.pick(&[0, 1, 2]) {
        0 => {
            let scale = site.random_constant("scale", dt, &[ch], 0.5, 1.5, k.rng);
            let bias = site.random_constant("bias", dt, &[ch], -0.5, 0.5, k.rng);
            let mean = site.random_constant("mean", dt, &[ch], -0.5, 0.5, k.rng);
            let var = site.random_constant("var", dt, &[ch], 0.5, 2.0, k.rng);
            let eps = af(k.pick(&[1e-5, 1e-3]));
            site.op1(
                "BatchNormalization",
                &[&y, &scale, &bias, &mean, &var],
                vec![("epsilon", eps)],
            )
        }
        1 => {
            let b = site.random_constant("add", dt, &[1, ch, 1, 1], -0.5, 0.5, k.rng);
            site.op1("Add", &[&y, &b], vec![])
        }
        _ => {
            let m = site.random_constant("mul", dt, &[ch, 1, 1], 0.5, 1.5, k.rng);
            site.op1("Mul", &[&y, &m], vec![])
        }
    }
}

pub(super) fn register(v: &mut Vec<Pattern>) {
    v.push(Pattern {
        name: "MatMulAdd",
        rewrites: &["MatMulAddFusion", "GemmActivationFusion"],
        dtypes: F32,
        ranks: (2, 3),
        build: matmul_add,
    });
    v.push(Pattern {
        name: "GemmActivation",
        rewrites: &["GemmActivationFusion"],
        dtypes: F32,
        ranks: (2, 2),
        build: gemm_activation,
    });
    v.push(Pattern {
        name: "MatMulScale",
        rewrites: &["MatMulScaleFusion"],
        dtypes: F32_F64,
        ranks: RANK2,
        build: matmul_scale,
    });
    v.push(Pattern {
        name: "TransposeMatMul",
        rewrites: &["MatmulTransposeFusion", "TransposeOptimizer"],
        dtypes: F32_F64,
        ranks: RANK2,
        build: transpose_matmul,
    });
    v.push(Pattern {
        name: "ConvActivation",
        rewrites: &["ConvActivationFusion", "NchwcTransformer"],
        dtypes: F32,
        ranks: (4, 4),
        build: conv_activation,
    });
    v.push(Pattern {
        name: "ConvFold",
        rewrites: &["Level1_RuleBasedTransformer"],
        dtypes: F32,
        ranks: (4, 4),
        build: conv_fold,
    });
}
