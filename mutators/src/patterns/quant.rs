//! Quantized groups ONNX Runtime fuses: a dynamically quantized MatMul written out
//! (DynamicQuantizeLinear, MatMulInteger, Cast, the scales multiplied: DynamicQuantizeMatMul)
//! and QDQ groups (QuantizeLinear / DequantizeLinear around an Add, a Mul or a Sigmoid: the
//! QLinear ops).
use super::*;

fn dynamic_matmul(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let h = dims(t)[1];
    let q = site.op("DynamicQuantizeLinear", &[x], vec![], 3)?;
    let b = site.random_constant("b", DType::I8, &[h, h], -20.0, 20.0, k.rng);
    let bz = site.constant_f64s("b_zero_point", DType::I8, &[], &[0.0]);
    let mi = site.op1("MatMulInteger", &[&q[0], &b, &q[2], &bz], vec![])?;
    let c = site.op1("Cast", &[&mi], vec![("to", ai(DType::F32.code() as i64))])?;
    let bs = scalar(site, "b_scale", DType::F32, k.pick(&[0.01, 0.05]));
    let s = site.op1("Mul", &[&q[1], &bs], vec![])?;
    site.op1("Mul", &[&c, &s], vec![])
}

/// `DequantizeLinear(QuantizeLinear(v))` with a uint8 scale and zero point.
fn qdq(site: &mut Site<'_>, v: &str, k: &mut Knobs<'_>) -> Result<String, BuildError> {
    let s = scalar(site, "scale", DType::F32, k.pick(&[0.01, 0.02, 0.1]));
    let z = site.constant_f64s(
        "zero_point",
        DType::U8,
        &[],
        &[k.pick(&[0.0, 128.0, 100.0])],
    );
    let q = site.op1("QuantizeLinear", &[v, &s, &z], vec![])?;
    site.op1("DequantizeLinear", &[&q, &s, &z], vec![])
}

fn qdq_group(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let dx = qdq(site, x, k)?;
    let y = match k.pick(&["Add", "Mul", "Sigmoid", "LeakyRelu"]) {
        op @ ("Add" | "Mul") => {
            let w = site.random_constant("w", DType::F32, &dims(t), -1.0, 1.0, k.rng);
            let dw = qdq(site, &w, k)?;
            site.op1(op, &[&dx, &dw], vec![])?
        }
        "LeakyRelu" => site.op1("LeakyRelu", &[&dx], vec![("alpha", af(0.1))])?,
        op => site.op1(op, &[&dx], vec![])?,
    };
    qdq(site, &y, k)
}

pub(super) fn register(v: &mut Vec<Pattern>) {
    v.push(Pattern {
        name: "DynamicQuantizeMatMul",
        rewrites: &["MatMulIntegerToFloatFusion", "DynamicQuantizeMatMulFusion"],
        dtypes: F32,
        ranks: (2, 2),
        build: dynamic_matmul,
    });
    v.push(Pattern {
        name: "QdqGroup",
        rewrites: &["QDQSelectorActionTransformer"],
        dtypes: F32,
        ranks: ANY,
        build: qdq_group,
    });
}
