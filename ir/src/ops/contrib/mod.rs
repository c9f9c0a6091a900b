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
//!
//! Each spec's [`definition`] is the sentence of ORT's contrib-op documentation that defines
//! the op, which bug reports quote (the op's only specification).
mod activation;
pub mod linear;
mod norm;
mod quantized;

use crate::registry::Registry;

/// The domain.
pub const MS: &str = "com.microsoft";

/// Where ORT documents its contrib ops (an op's section is `#com.microsoft.<Op>`).
pub const DOCS: &str =
    "https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md";

/// The defining text of each contrib op, as ORT's documentation (ContribOperators.md) states
/// it, or the formula its kernel implements where the page gives no definition (marked so).
const DEFINITIONS: &[(&str, &str)] = &[
    (
        "Gelu",
        "Gaussian Error Linear Unit: y = 0.5 * x * (1 + erf(x / sqrt(2))) (the docs name the function; the formula is GELU's).",
    ),
    (
        "FastGelu",
        "GELU (Gaussian Error Linear Unit) approximation: Y=0.5*X*(1+tanh(0.797885*X+0.035677*X*X*X)) with an optional input of bias that will be added to X before GELU.",
    ),
    (
        "BiasGelu",
        "It takes the sum of input A and bias input B as the input of Gelu activation.",
    ),
    ("QuickGelu", "Compute x * Sigmoid(alpha * x)."),
    (
        "SkipLayerNormalization",
        "Skip and Layer Normalization Fusion: LayerNormalization over the last axis of input + skip (+ bias), scaled by gamma and shifted by beta; input_skip_bias_sum is that sum.",
    ),
    (
        "SkipSimplifiedLayerNormalization",
        "Skip and Root Mean Square Layer Normalization: x / sqrt(mean(x^2) + epsilon) * gamma over the last axis of x = input + skip (+ bias).",
    ),
    (
        "FusedConv",
        "The fused convolution operator schema is the same as Conv besides it includes an attribute activation.",
    ),
    (
        "FusedGemm",
        "The FusedGemm operator schema is the same as Gemm besides it includes attributes activation and leaky_relu_alpha.",
    ),
    (
        "FusedMatMul",
        "Matrix product that behaves like numpy.matmul, scaled by alpha, with A and B transposed on their last two dimensions when transA / transB are set.",
    ),
    (
        "Inverse",
        "The inverse of every matrix of the batch (input: every matrix in the batch must be invertible).",
    ),
    (
        "QLinearAdd",
        "C = (A_scale * (A - A_zero_point) + B_scale * (B - B_zero_point))/C_scale + C_zero_point",
    ),
    (
        "QLinearMul",
        "C = ((A - A_zero_point) * (B - B_zero_point)) * (A_scale * B_scale)/C_scale + C_zero_point",
    ),
    (
        "QLinearSigmoid",
        "f(x) = quantize(Sigmoid(dequantize(x))), applied to the data tensor elementwise.",
    ),
    (
        "QLinearLeakyRelu",
        "f(x) = quantize(alpha * dequantize(x)) for dequantize(x) < 0, f(x) = quantize(dequantize(x)) for dequantize(x) >= 0.",
    ),
    (
        "MatMulIntegerToFloat",
        "(A - a_zero_point) * (B - b_zero_point) as integers, times a_scale * b_scale, plus bias (the docs give inputs only; this is the kernel's formula).",
    ),
    (
        "DynamicQuantizeMatMul",
        "A quantized to uint8 as DynamicQuantizeLinear does, multiplied by (B - b_zero_point), times the scales, plus bias (the docs give inputs only; this is the kernel's formula).",
    ),
];

/// The defining text of the contrib op `op_type` (see [`DEFINITIONS`]).
pub fn definition(op_type: &str) -> Option<&'static str> {
    DEFINITIONS
        .iter()
        .find(|(o, _)| *o == op_type)
        .map(|(_, d)| *d)
}

/// Adds the domain's specs to `r`.
pub fn register(r: &mut Registry) {
    activation::register(r);
    norm::register(r);
    linear::register(r);
    quantized::register(r);
}
