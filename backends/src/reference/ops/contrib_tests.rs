//! The reference's ONNX Runtime contrib ops against values ONNX Runtime computes, and their
//! native-precision evaluation.
use crate::backend::Backend;
use crate::reference::Reference;
use crate::value::{Data, HostTensor, Value};

/// DynamicQuantizeLSTM's outputs (Y, Y_h, Y_c) on x, for `direction` and the weights
/// `consts` (a text initializer list).
fn dq_lstm(direction: &str, dirs: usize, consts: &str) -> Vec<Vec<f64>> {
    let text = format!(
        "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
         g (float[3, 1, 2] x) => (float[3, {dirs}, 1, 2] y, float[{dirs}, 1, 2] yh, \
         float[{dirs}, 1, 2] yc)\n{consts}\n\
         {{ y, yh, yc = com.microsoft.DynamicQuantizeLSTM \
         <hidden_size = 2, direction = \"{direction}\"> \
         (x, w, r, b, \"\", \"\", \"\", \"\", ws, z, rs, z) }}"
    );
    let model = mutagraph_ir::text::parse_model(&text).unwrap().to_bytes();
    let x = [0.5, -1.0, 1.5, 0.25, -0.75, 2.0].to_vec();
    let x = Value::Tensor(HostTensor::new(vec![3, 1, 2], Data::F32(x)));
    let mut p = Reference::new_f64().prepare(&model).unwrap();
    let out = p.run(&vec![("x".to_string(), x)]).unwrap();
    out.iter()
        .map(|(_, v)| v.tensor().unwrap().to_f64s().unwrap())
        .collect()
}

/// A NaN reaching a fused activation stays NaN, as through the op itself (round 13: a
/// FusedConv whose sum was inf + -inf, NaN in ONNX Runtime, was 0 in the reference: its
/// Relu was `f64::max`, and the bundle was filed as ONNX Runtime's NaN).
#[test]
fn a_nan_stays_nan_through_a_fused_activation() {
    for (act, params) in [("Relu", ""), ("Clip", ", activation_params = [-1.0, 1.0]")] {
        let text = format!(
            "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
             g (float[1, 1, 1, 3] x) => (float[1, 1, 1, 3] y) <float[1, 1, 1, 1] w = {{1.0}}>\n\
             {{ y = com.microsoft.FusedConv <activation = \"{act}\"{params}> (x, w) }}"
        );
        let model = mutagraph_ir::text::parse_model(&text).unwrap().to_bytes();
        let x = Value::Tensor(HostTensor::new(
            vec![1, 1, 1, 3],
            Data::F32(vec![f32::NAN, -2.0, 0.5]),
        ));
        let mut p = Reference::new_f64().prepare(&model).unwrap();
        let out = p.run(&vec![("x".to_string(), x)]).unwrap();
        let y = out[0].1.tensor().unwrap().to_f64s().unwrap();
        assert!(y[0].is_nan(), "{act}: {y:?}");
        assert!(y[1] == 0.0 || y[1] == -1.0, "{act}: {y:?}");
        assert_eq!(y[2], 0.5, "{act}: {y:?}");
    }
}

/// The native reference computes SkipLayerNormalization step by step in f32: a variance
/// of inputs near 1e19 overflows and the result is 0 where the f64 one normalizes (round
/// 13: ONNX Runtime's zeros were filed against the f64 values alone).
#[test]
fn native_skip_layer_norm_overflows_in_f32_as_the_kernel_does() {
    let text = "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
         g (float[1, 4] x, float[1, 4] s) => (float[1, 4] y) <float[4] g = {1, 1, 1, 1}>\n\
         { y = com.microsoft.SkipLayerNormalization (x, s, g) }";
    let model = mutagraph_ir::text::parse_model(text).unwrap().to_bytes();
    let f = |v: Vec<f32>| Value::Tensor(HostTensor::new(vec![1, 4], Data::F32(v)));
    let inputs = vec![
        ("x".to_string(), f(vec![3e19, -3e19, 1e19, -1e19])),
        ("s".to_string(), f(vec![0.0; 4])),
    ];
    let run = |mut r: Reference| {
        let mut p = r.prepare(&model).unwrap();
        let out = p.run(&inputs).unwrap();
        out[0].1.tensor().unwrap().to_f64s().unwrap()
    };
    let exact = run(Reference::new_f64());
    assert!((exact[0] - 1.3416).abs() < 1e-3, "{exact:?}");
    assert_eq!(run(Reference::new_native()), vec![0.0; 4]);
}

fn assert_close<const N: usize>(got: &[Vec<f64>], want: [&[f64]; N]) {
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.len(), w.len());
        for (a, b) in g.iter().zip(w) {
            assert!((a - b).abs() < 1e-6, "{g:?} vs ONNX Runtime's {w:?}");
        }
    }
}

/// The values ONNX Runtime 1.31.1 computes (CPU, no graph optimizations, one thread):
/// /tmp/contrib/verify_DynamicQuantizeLSTM.py, "fixed cases" (the reference matches them
/// to 3e-7; the float LSTM of the dequantized weights differs by 1.3e-3 here).
#[test]
fn dynamic_quantize_lstm_is_onnx_runtimes() {
    let fwd = "<int8[1, 2, 8] w = {-127, -90, -53, -16, 21, 58, 95, -123, -86, -49, -12, 25, \
     62, 99, -119, -82}, int8[1, 2, 8] r = {-127, -74, -21, 32, 85, -117, -64, -11, \
     42, 95, -107, -54, -1, 52, 105, -97}, float[1] ws = {0.01}, float[1] rs = \
     {0.02}, int8[1] z = {0}, float[1, 16] b = {-0.4, -0.35, -0.3, -0.25, -0.2, \
     -0.15, -0.1, -0.05, 0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35}>";
    assert_close(
        &dq_lstm("forward", 1, fwd),
        [
            &[
                0.17060392,
                0.08009451,
                0.072194874,
                0.008288894,
                0.027207235,
                -0.07840457,
            ],
            &[0.027207235, -0.07840457],
            &[0.057003647, -0.12391868],
        ],
    );
    // uint8, per-column scales, both directions.
    let bidir = "<uint8[2, 2, 8] w = {1, 38, 75, 112, 149, 186, 223, 5, 42, 79, 116, 153, 190, \
     227, 9, 46, 83, 120, 157, 194, 231, 13, 50, 87, 124, 161, 198, 235, 17, 54, 91, \
     128}, uint8[2, 2, 8] r = {1, 54, 107, 160, 213, 11, 64, 117, 170, 223, 21, 74, \
     127, 180, 233, 31, 84, 137, 190, 243, 41, 94, 147, 200, 253, 51, 104, 157, 210, \
     8, 61, 114}, float[2, 8] ws = {0.005, 0.0064285714, 0.007857143, 0.009285714, \
     0.010714285, 0.012142857, 0.013571428, 0.015, 0.005, 0.0064285714, 0.007857143, \
     0.009285714, 0.010714285, 0.012142857, 0.013571428, 0.015}, float[2, 8] rs = \
     {0.03, 0.027142856, 0.024285713, 0.02142857, 0.018571427, 0.015714286, \
     0.012857143, 0.01, 0.03, 0.027142856, 0.024285713, 0.02142857, 0.018571427, \
     0.015714286, 0.012857143, 0.01}, uint8[2, 8] z = {128, 128, 128, 128, 128, 128, \
     128, 128, 128, 128, 128, 128, 128, 128, 128, 128}, float[2, 16] b = {-0.4, \
     -0.35, -0.3, -0.25, -0.2, -0.15, -0.1, -0.05, 0.0, 0.05, 0.1, 0.15, 0.2, 0.25, \
     0.3, 0.35, 0.4, 0.45000002, 0.5, 0.55, 0.6, 0.65000004, 0.7, 0.75, 0.8, 0.85, \
     0.90000004, 0.95, 1.0, 1.0500001, 1.1, 1.15}>";
    let y = [
        0.1689446,
        0.093426384,
        0.64041644,
        0.61471266,
        0.08978919,
        -0.009209177,
        0.33812243,
        0.47730538,
        0.034697868,
        -0.14525357,
        0.56658775,
        0.65335906,
    ];
    assert_close(
        &dq_lstm("bidirectional", 2, bidir),
        [
            &y,
            &[0.034697868, -0.14525357, 0.64041644, 0.61471266],
            &[0.07304251, -0.23333378, 1.2023414, 0.87317437],
        ],
    );
}

/// RotaryEmbedding's output on `x` (of `shape`, the values `x0 + step * i`) with positions
/// `pos` (a text initializer) and the attributes `attrs`, caches of three positions.
fn rope(shape: &str, x0: f32, step: f32, pos: &str, attrs: &str) -> Vec<f64> {
    let text = format!(
        "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
         g (float[{shape}] x) => (float[{shape}] y)\n\
         <{pos}, float[3, 2] c = {{1, 1, 0.5, 0.9, -0.25, 0.75}}, \
         float[3, 2] s = {{0, 0, 0.8, 0.1, 0.9, 0.6}}>\n\
         {{ y = com.microsoft.RotaryEmbedding <{attrs}> (x, p, c, s) }}"
    );
    let model = mutagraph_ir::text::parse_model(&text).unwrap().to_bytes();
    let x: Vec<f32> = (0..16).map(|i| x0 + step * i as f32).collect();
    let dims = shape.split(", ").map(|d| d.parse().unwrap()).collect();
    let x = Value::Tensor(HostTensor::new(dims, Data::F32(x)));
    let mut p = Reference::new_f64().prepare(&model).unwrap();
    let out = p.run(&vec![("x".to_string(), x)]).unwrap();
    out[0].1.tensor().unwrap().to_f64s().unwrap()
}

/// The values ONNX Runtime 1.31.1 computes (CPU, no graph optimizations):
/// /tmp/contrib/verify_RotaryEmbedding.py, "fixed cases" (the reference matches them to
/// 1.8e-7): a partial rotation (R = 4 of a head of 8) with a position per token, then a
/// 4-D input rotated in interleaved pairs from one start position.
#[test]
fn rotary_embedding_is_onnx_runtimes() {
    let partial = rope(
        "1, 2, 8",
        -1.5,
        0.25,
        "int64[1, 2] p = {2, 0}",
        "num_heads = 1, rotary_embedding_dim = 4",
    );
    let want = [
        1.275, -0.4875, -1.1, -1.3125, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75,
        2.0, 2.25,
    ];
    assert_close(&[partial], [&want]);
    let four = rope(
        "1, 2, 2, 4",
        2.0,
        -0.5,
        "int64[1] p = {1}",
        "interleaved = 1",
    );
    let want = [
        -0.2, 2.35, 0.85, 0.55, 0.45, 0.125, 0.15, -1.725, 1.0, -2.85, -2.35, -3.45, 5.05, -2.475,
        -0.45, -7.125,
    ];
    assert_close(&[four], [&want]);
}

/// MatMulNBits of A (of `shape`, the values `a0 + step * i`) by N = `n` columns of K
/// values packed by `attrs` into B of `b` bytes (`(37 i + 11) mod 256`, as the verify
/// script's), scales `0.01 (1 + i mod 5)`, the initializers `extra` and the inputs after
/// A, B and scales `rest`.
fn nbits(
    shape: &[usize],
    a0: f32,
    step: f32,
    b: [usize; 3],
    attrs: &str,
    extra: &str,
    rest: &str,
) -> Vec<f64> {
    let list = |v: Vec<String>| v.join(", ");
    let bytes = list(
        (0..b.iter().product())
            .map(|i: usize| ((37 * i + 11) % 256).to_string())
            .collect(),
    );
    let scales = list(
        (0..b[0] * b[1])
            .map(|i| format!("{}", 0.01 * (1 + i % 5) as f32))
            .collect(),
    );
    let dims = |d: &[usize]| list(d.iter().map(usize::to_string).collect());
    let mut y = shape.to_vec();
    *y.last_mut().unwrap() = b[0];
    if shape.len() == 1 {
        y = vec![b[0]];
    }
    let text = format!(
        "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
         g (float[{}] a) => (float[{}] y)\n\
         <uint8[{}] b = {{{bytes}}}, float[{}, {}] s = {{{scales}}}{extra}>\n\
         {{ y = com.microsoft.MatMulNBits <N = {}, {attrs}> (a, b, s{rest}) }}",
        dims(shape),
        dims(&y),
        dims(&b),
        b[0],
        b[1],
        b[0]
    );
    let model = mutagraph_ir::text::parse_model(&text).unwrap().to_bytes();
    let n: usize = shape.iter().product();
    let a: Vec<f32> = (0..n).map(|i| a0 + step * i as f32).collect();
    let a = Value::Tensor(HostTensor::new(shape.to_vec(), Data::F32(a)));
    let mut p = Reference::new_f64().prepare(&model).unwrap();
    let out = p.run(&vec![("a".to_string(), a)]).unwrap();
    out[0].1.tensor().unwrap().to_f64s().unwrap()
}

/// The values ONNX Runtime 1.31.1 computes (CPU, no graph optimizations):
/// /tmp/contrib/verify_MatMulNBits.py, "fixed cases" (the reference matches them to
/// 5.4e-7): 4 bits with a partial last block, packed zero points and a bias; 2 bits with
/// float zero points and a 1-D A; 8 bits with the default zero point.
#[test]
fn matmul_nbits_is_onnx_runtimes() {
    let four = nbits(
        &[2, 20],
        -2.0,
        0.125,
        [3, 2, 8],
        "K = 20, block_size = 16",
        ", uint8[3] z = {65, 167, 13}, float[3] c = {-0.25, 0.25, 0.75}",
        ", z, \"\", c",
    );
    let want = [-1.1375, -0.1775, 4.8800006, 1.5625001, -0.22749996, -3.395];
    assert_close(&[four], [&want]);
    let two = nbits(
        &[32],
        1.0,
        -0.0625,
        [2, 2, 4],
        "K = 32, block_size = 16, bits = 2",
        ", float[2, 2] z = {0.5, 1.25, 2.0, 2.75}",
        ", z",
    );
    assert_close(&[two], [&[0.01812499, 0.296875]]);
    let eight = nbits(
        &[1, 16],
        -1.5,
        0.25,
        [2, 1, 16],
        "K = 16, block_size = 16, bits = 8",
        "",
        "",
    );
    assert_close(&[eight], [&[1.3999997, -2.96]]);
}

/// MultiHeadAttention's output on the query `q` (of `shape`, the values `q0 + step * i`)
/// with the initializers `consts`, the inputs after the query `rest` and `attrs`.
fn mha(shape: [usize; 3], q0: f32, step: f32, consts: &str, rest: &str, attrs: &str) -> Vec<f64> {
    let [b, s, _] = shape;
    let text = format!(
        "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
         g (float[{b}, {s}, {}] q) => (float[{b}, {s}, dv] y)\n{consts}\n\
         {{ y = com.microsoft.MultiHeadAttention <{attrs}> (q, {rest}) }}",
        shape[2]
    );
    let model = mutagraph_ir::text::parse_model(&text).unwrap().to_bytes();
    let n: usize = shape.iter().product();
    let q: Vec<f32> = (0..n).map(|i| q0 + step * i as f32).collect();
    let q = Value::Tensor(HostTensor::new(shape.to_vec(), Data::F32(q)));
    let mut p = Reference::new_f64().prepare(&model).unwrap();
    let out = p.run(&vec![("q".to_string(), q)]).unwrap();
    out[0].1.tensor().unwrap().to_f64s().unwrap()
}

/// The values ONNX Runtime 1.31.1 computes (CPU, no graph optimizations):
/// /tmp/contrib/verify_MultiHeadAttention.py, "fixed cases" (the reference matches them to
/// 2.7e-8): two heads with a bias and an attention bias broadcast over the batch, three
/// keys for two queries; then a causal mask with a scale, three queries (the last one sees
/// every key) and two (the last one sees the key after it too: ORT's mask).
#[test]
fn multi_head_attention_is_onnx_runtimes() {
    let consts = "<float[1, 3, 4] k = {-1, 0.5, -0.5, 1, 0, -1, 0.5, -0.5, 1, 0, -1, 0.5}, \
         float[1, 3, 2] v = {-0.5, 0, 0.5, 1, -0.5, 0}, float[10] b = {-0.5, -0.4, -0.3, \
         -0.2, -0.1, 0, 0.1, 0.2, 0.3, 0.4}, float[1, 2, 2, 3] ab = {1, 0.8, 0.6, 0.4, \
         0.2, 0, -0.2, -0.4, -0.6, -0.8, -1, -1.2}>";
    let y = mha(
        [1, 2, 4],
        -1.0,
        0.25,
        consts,
        "k, v, b, \"\", ab",
        "num_heads = 2",
    );
    let want = [
        0.2613712251186371,
        0.6684057712554932,
        0.1332641839981079,
        0.6579173803329468,
    ];
    assert_close(&[y], [&want]);
    let consts = "<float[1, 3, 3] k = {1, 0.75, 0.5, 0.25, 0, -0.25, -0.5, -0.75, -1}, \
         float[1, 3, 1] v = {0, 1, 2}>";
    let causal = "num_heads = 1, unidirectional = 1, scale = 0.5";
    let y = mha([1, 3, 3], -2.0, 0.5, consts, "k, v", causal);
    assert_close(&[y], [&[0.0, 0.5, 0.20785577595233917]]);
    let y = mha([1, 2, 3], -2.0, 0.5, consts, "k, v", causal);
    assert_close(&[y], [&[0.0, 1.0]]);
    // The mask is added (the documented `+ M`, as ONNX Runtime does): a NaN key the first
    // queries do not see still makes their rows NaN (round 14: the reference dropped it).
    let nan_key = "<float[1, 3, 3] k = {1, 0.75, 0.5, 0.25, 0, -0.25, nan, nan, nan}, \
         float[1, 3, 1] v = {0, 1, 2}>";
    let y = mha([1, 3, 3], -2.0, 0.5, nan_key, "k, v", causal);
    assert!(y.iter().all(|x| x.is_nan()), "{y:?}");
}
