//! Op specs of ONNX Runtime's `com.microsoft` domain (its "contrib" ops): the ones that real
//! exported and ORT-optimized models carry and that ORT's CPU provider has a kernel for. Types
//! are those CPU kernels register (the schemas allow more; a type without a CPU kernel would
//! only make ORT refuse the model). One file per small family:
//!
//! | ops | file |
//! | --- | --- |
//! | `Gelu`, `FastGelu`, `BiasGelu`, `QuickGelu` | `activation.rs` |
//! | `SkipLayerNormalization`, `SkipSimplifiedLayerNormalization` | `norm.rs` |
//! | `FusedConv`, `FusedGemm`, `FusedMatMul`, `Inverse` | `linear.rs` |
//! | `QLinearAdd`, `QLinearMul`, `QLinearSigmoid`, `QLinearLeakyRelu`, `MatMulIntegerToFloat`, `DynamicQuantizeMatMul` | `quantized.rs` |
//! | `DynamicQuantizeLSTM` | `recurrent.rs` |
//! | `RotaryEmbedding` | `rotary.rs` |
//! | `MatMulNBits` | `nbits.rs` |
//! | `MultiHeadAttention` | `attention.rs` |
//!
//! [`definition`] gives, per op, what ORT's contrib-op documentation says of it (verbatim, as
//! bug reports quote it: the op's only specification) and the formula the reference computes.
mod activation;
pub mod attention;
pub mod linear;
pub mod nbits;
mod norm;
mod quantized;
mod recurrent;
pub mod rotary;

use crate::registry::Registry;

/// The domain.
pub const MS: &str = "com.microsoft";

/// Where ORT documents its contrib ops (an op's section is `#com.microsoft.<Op>`).
pub const DOCS: &str =
    "https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md";

/// What ORT's documentation (ContribOperators.md) says of each contrib op, verbatim (its
/// schema's doc string, or its first sentences), and the formula the reference computes, in
/// our words.
const DEFINITIONS: &[(&str, &str, &str)] = &[
    (
        "Gelu",
        "Gaussian Error Linear Unit. A high-performing neural network activation function.",
        "y = 0.5 * x * (1 + erf(x / sqrt(2)))",
    ),
    (
        "FastGelu",
        "GELU (Gaussian Error Linear Unit) approximation: Y=0.5*X*(1+tanh(0.797885*X+0.035677*X*X*X)) with an optional input of bias that will be added to X before GELU.",
        "x' = X + bias; Y = 0.5 * x' * (1 + tanh(sqrt(2/pi) * (x' + 0.044715 * x'^3)))",
    ),
    (
        "BiasGelu",
        "Bias Gelu. It's an extension of Gelu. It takes the sum of input A and bias input B as the input of Gelu activation.",
        "C = Gelu(A + B), B a vector of A's last axis",
    ),
    (
        "QuickGelu",
        "Compute x * Sigmoid(alpha * x).",
        "y = x * sigmoid(alpha * x), alpha 1.702 by default",
    ),
    (
        "SkipLayerNormalization",
        "Skip and Layer Normalization Fusion",
        "s = input + skip (+ bias); output = (s - mean(s)) / sqrt(var(s) + epsilon) * gamma (+ beta) over the last axis; input_skip_bias_sum = s",
    ),
    (
        "SkipSimplifiedLayerNormalization",
        "Skip and Root Mean Square Layer Normalization",
        "s = input + skip (+ bias); output = s / sqrt(mean(s^2) + epsilon) * gamma over the last axis; input_skip_bias_sum = s",
    ),
    (
        "FusedConv",
        "The fused convolution operator schema is the same as Conv besides it includes an attribute activation.",
        "Y = activation(Conv(X, W, B) + Z)",
    ),
    (
        "FusedGemm",
        "The FusedGemm operator schema is the same as Gemm besides it includes attributes activation and leaky_relu_alpha.",
        "Y = activation(alpha * A' B' + beta * C), its parameters from activation_alpha, activation_beta, activation_gamma",
    ),
    (
        "FusedMatMul",
        "Matrix product that behaves like numpy.matmul",
        "Y = alpha * matmul(A', B'): transA / transB swap an operand's last two axes, transBatchA / transBatchB move its first axis just before them",
    ),
    (
        "QLinearAdd",
        "Performs element-wise binary addition on 8 bit data types (with Numpy-style broadcasting support).",
        "C = (A_scale * (A - A_zero_point) + B_scale * (B - B_zero_point)) / C_scale + C_zero_point, rounded half to even and saturated",
    ),
    (
        "QLinearMul",
        "Performs element-wise binary multiplication on 8 bit data types (with Numpy-style broadcasting support).",
        "C = (A - A_zero_point) * (B - B_zero_point) * (A_scale * B_scale) / C_scale + C_zero_point, rounded half to even and saturated",
    ),
    (
        "QLinearSigmoid",
        "QLinearSigmoid takes quantized input data (Tensor), and quantize parameter for output, and produces one output data (Tensor<T>) where the function `f(x) = quantize(Sigmoid(dequantize(x)))`, is applied to the data tensor elementwise.",
        "Y = quantize(sigmoid(dequantize(X)))",
    ),
    (
        "QLinearLeakyRelu",
        "QLinearLeakyRelu takes quantized input data (Tensor), an argument alpha, and quantize parameter for output, and produces one output data (Tensor<T>) where the function `f(x) = quantize(alpha * dequantize(x)) for dequantize(x) < 0`, `f(x) = quantize(dequantize(x)) for dequantize(x) >= 0`, is applied to the data tensor elementwise.",
        "Y = quantize(leaky_relu(dequantize(X), alpha))",
    ),
    (
        "MatMulIntegerToFloat",
        "",
        "Y = (A - a_zero_point) x (B - b_zero_point) as integers, times a_scale * b_scale, plus bias (B's parameters per column)",
    ),
    (
        "DynamicQuantizeMatMul",
        "",
        "A quantized to uint8 as DynamicQuantizeLinear does, (A_q - zero point) x (B - b_zero_point), times A's scale * b_scale, plus bias",
    ),
    (
        "DynamicQuantizeLSTM",
        "",
        "LSTM (gates i o f c) with W = (W_q - W_zero_point) * W_scale and R likewise, W and R stored as [directions, input or hidden, 4 * hidden] (the transpose of LSTM's); the products read X, once, and H, at every step, quantized to uint8 as DynamicQuantizeLinear does (X over the steps the longest sequence reaches, H over the batch)",
    ),
    (
        "RotaryEmbedding",
        "RotaryEmbedding is the implementation of rotary positional embeddings (RoPE). The positions are represented as rotation matrices that are multiplied to query and key before the inner product of query and key is taken.",
        "per head of H values (H = 2 x the caches' columns, or hidden / num_heads when rotary_embedding_dim is set), c and s the caches' row at the token's position (position_ids[b, t], or position_ids + t) and R = rotary_embedding_dim (default H): y[i] = x[i] c[i] - x[i + R/2] s[i] and y[i + R/2] = x[i + R/2] c[i] + x[i] s[i] for i < R/2 (interleaved: the pairs x[2i], x[2i + 1]), y[i] = x[i] for i >= R; scale is not applied",
    ),
    (
        "MatMulNBits",
        "MatMulNBits performs a matrix multiplication where the right-hand-side matrix (weights) is quantized to N bits.",
        "Y = A x W^T + bias, W[n, k] = (q[n, k] - zero_points[n, b]) * scales[n, b] for block b = k / block_size, q the bits-wide values of B[n, b] read low bits first (zero points packed the same way when uint8, 2^(bits - 1) when absent)",
    ),
    (
        "MultiHeadAttention",
        "Multi-Head Self/Cross Attention. Bias from input projection is included.",
        "per head h of num_heads (Q = query + bias[:D], K = key + bias[D:2D], V = value + bias[2D:], each split in heads along its last axis): output_h = softmax(scale * Q_h K_h^T + attention_bias[b, h] + M) V_h, scale 1 / sqrt(D / num_heads) when unset or 0, M = -inf at key j > query i in every query row but the last when unidirectional (else 0), softmax over the keys; the heads concatenated",
    ),
];

/// What ORT's documentation says of the contrib op `op_type`, verbatim (`None` where it gives
/// no description), and the formula the reference computes (see [`DEFINITIONS`]).
pub fn definition(op_type: &str) -> Option<(Option<&'static str>, &'static str)> {
    DEFINITIONS
        .iter()
        .find(|(o, _, _)| *o == op_type)
        .map(|(_, doc, formula)| ((!doc.is_empty()).then_some(*doc), *formula))
}

/// Adds the domain's specs to `r`.
pub fn register(r: &mut Registry) {
    activation::register(r);
    norm::register(r);
    linear::register(r);
    quantized::register(r);
    recurrent::register(r);
    rotary::register(r);
    nbits::register(r);
    attention::register(r);
}
