//! The ops of the reference interpreter, one file per op or small family of ops (laid out like
//! `burn/ops/`), and [`OPS`]: the one table from op key to kernel.
use crate::reference::tensor::*;
use crate::reference::{Cx, OpFn, V, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

mod binary;
mod cast;
mod col2im;
mod constant;
mod contrib;
mod control;
mod conv;
mod dropout;
mod gather;
mod geometry;
mod grid;
mod linalg;
mod logic;
mod loss;
mod nms;
mod norm;
mod optimizer;
mod pad;
mod pool;
mod quantize;
mod recurrent;
mod reduce;
pub(super) mod reshape;
mod resize;
mod roi;
mod scatter;
mod sequence;
mod slice;
mod softmax;
mod spectral;
mod string;
mod tfidf;
mod unary;
mod window;

pub use geometry::{Geo, geometry};
pub use reshape::transpose;
#[cfg(feature = "burn")]
pub(crate) use resize::unscale_by;
pub use softmax::softmax_groups_of;

/// Every op of the reference: op key (`Op`, or `domain::Op` outside the default domain) ->
/// kernel. The interpreter's [`table`](crate::reference::table) is built from this list alone.
pub static OPS: &[(&str, OpFn)] = &[
    ("Conv", conv::op_conv),
    ("ConvInteger", conv::op_conv_integer),
    ("ConvTranspose", conv::op_conv_transpose),
    ("MaxPool", pool::op_max_pool),
    ("AveragePool", pool::op_avg_pool),
    ("LpPool", pool::op_lp_pool),
    ("GlobalMaxPool", pool::op_global_max_pool),
    ("GlobalAveragePool", pool::op_global_avg_pool),
    ("GlobalLpPool", pool::op_global_lp_pool),
    ("BatchNormalization", norm::op_batch_norm),
    ("InstanceNormalization", norm::op_instance_norm),
    ("LayerNormalization", norm::op_layer_norm),
    (
        "SimplifiedLayerNormalization",
        norm::op_simplified_layer_norm,
    ),
    ("GroupNormalization", norm::op_group_norm),
    ("LRN", norm::op_lrn),
    ("MeanVarianceNormalization", norm::op_mvn),
    ("Dropout", dropout::op_dropout),
    ("NonMaxSuppression", nms::op_nms),
    ("GridSample", grid::op_grid_sample),
    ("MaxUnpool", pool::op_max_unpool),
    ("HannWindow", window::op_hann),
    ("HammingWindow", window::op_hamming),
    ("BlackmanWindow", window::op_blackman),
    ("DFT", spectral::op_dft),
    ("STFT", spectral::op_stft),
    ("StringNormalizer", string::op_string_normalizer),
    ("LpNormalization", norm::op_lp_normalization),
    ("ai.onnx.preview.training::Adagrad", optimizer::op_adagrad),
    ("ai.onnx.preview.training::Momentum", optimizer::op_momentum),
    ("ai.onnx.preview.training::Adam", optimizer::op_adam),
    ("TfIdfVectorizer", tfidf::op_tfidf),
    ("RoiAlign", roi::op_roi_align),
    ("MaxRoiPool", roi::op_max_roi_pool),
    ("MelWeightMatrix", spectral::op_mel_weight_matrix),
    ("CenterCropPad", pad::op_center_crop_pad),
    ("Col2Im", col2im::op_col2im),
    ("AffineGrid", grid::op_affine_grid),
    ("StringConcat", string::op_string_concat),
    ("StringSplit", string::op_string_split),
    ("ReduceSum", reduce::ReduceSum),
    ("ReduceMean", reduce::ReduceMean),
    ("ReduceMax", reduce::ReduceMax),
    ("ReduceMin", reduce::ReduceMin),
    ("ReduceProd", reduce::ReduceProd),
    ("ReduceL1", reduce::ReduceL1),
    ("ReduceL2", reduce::ReduceL2),
    ("ReduceLogSum", reduce::ReduceLogSum),
    ("ReduceLogSumExp", reduce::ReduceLogSumExp),
    ("ReduceSumSquare", reduce::ReduceSumSquare),
    ("ArgMax", reduce::op_argmax),
    ("ArgMin", reduce::op_argmin),
    ("Softmax", softmax::op_softmax),
    ("LogSoftmax", softmax::op_log_softmax),
    ("Hardmax", softmax::op_hardmax),
    ("CumSum", reduce::op_cumsum),
    ("TopK", reduce::op_topk),
    ("NegativeLogLikelihoodLoss", loss::op_nll_loss),
    ("SoftmaxCrossEntropyLoss", loss::op_sce_loss),
    ("MatMul", linalg::op_matmul),
    ("MatMulInteger", linalg::op_matmul_integer),
    ("Gemm", linalg::op_gemm),
    ("Det", linalg::op_det),
    ("Einsum", linalg::op_einsum),
    ("QuantizeLinear", quantize::op_quantize),
    ("DequantizeLinear", quantize::op_dequantize),
    ("DynamicQuantizeLinear", quantize::op_dynamic_quantize),
    ("QLinearMatMul", quantize::op_qlinear_matmul),
    ("QLinearConv", quantize::op_qlinear_conv),
    ("If", control::op_if),
    ("Loop", control::op_loop),
    ("Scan", control::op_scan),
    ("SequenceEmpty", sequence::op_sequence_empty),
    ("SequenceConstruct", sequence::op_sequence_construct),
    ("SequenceInsert", sequence::op_sequence_insert),
    ("SequenceAt", sequence::op_sequence_at),
    ("SequenceErase", sequence::op_sequence_erase),
    ("SequenceLength", sequence::op_sequence_length),
    ("SplitToSequence", sequence::op_split_to_sequence),
    ("ConcatFromSequence", sequence::op_concat_from_sequence),
    ("SequenceMap", sequence::op_sequence_map),
    ("Optional", sequence::op_optional),
    ("OptionalHasElement", sequence::op_optional_has_element),
    ("OptionalGetElement", sequence::op_optional_get_element),
    ("RNN", recurrent::op_recurrent),
    ("GRU", recurrent::op_recurrent),
    ("LSTM", recurrent::op_recurrent),
    ("Resize", resize::op_resize),
    ("Upsample", resize::op_upsample),
    ("Reciprocal", unary::Reciprocal),
    ("Sqrt", unary::Sqrt),
    ("Exp", unary::Exp),
    ("Log", unary::Log),
    ("Ceil", unary::Ceil),
    ("Floor", unary::Floor),
    ("Round", unary::Round),
    ("Sin", unary::Sin),
    ("Cos", unary::Cos),
    ("Tan", unary::Tan),
    ("Asin", unary::Asin),
    ("Acos", unary::Acos),
    ("Atan", unary::Atan),
    ("Sinh", unary::Sinh),
    ("Cosh", unary::Cosh),
    ("Tanh", unary::Tanh),
    ("Asinh", unary::Asinh),
    ("Acosh", unary::Acosh),
    ("Atanh", unary::Atanh),
    ("Erf", unary::Erf),
    ("Sigmoid", unary::Sigmoid),
    ("Softplus", unary::Softplus),
    ("Softsign", unary::Softsign),
    ("Mish", unary::Mish),
    ("HardSwish", unary::HardSwish),
    ("Abs", unary::op_abs),
    ("Neg", unary::op_neg),
    ("Sign", unary::op_sign),
    ("Relu", unary::op_relu),
    ("LeakyRelu", unary::op_leaky_relu),
    ("Elu", unary::op_elu),
    ("Selu", unary::op_selu),
    ("Celu", unary::op_celu),
    ("HardSigmoid", unary::op_hard_sigmoid),
    ("ThresholdedRelu", unary::op_thresholded_relu),
    ("Shrink", unary::op_shrink),
    ("Swish", unary::op_swish),
    ("Gelu", unary::op_gelu),
    ("IsNaN", unary::op_isnan),
    ("IsInf", unary::op_isinf),
    ("Not", unary::op_not),
    ("Clip", unary::op_clip),
    ("Add", binary::op_add),
    ("Sub", binary::op_sub),
    ("Mul", binary::op_mul),
    ("Div", binary::op_div),
    ("Mod", binary::op_mod),
    ("Pow", binary::op_pow),
    ("PRelu", binary::op_prelu),
    ("Max", binary::op_max),
    ("Min", binary::op_min),
    ("Sum", binary::op_sum),
    ("Mean", binary::op_mean),
    ("Equal", logic::op_equal),
    ("Less", logic::op_less),
    ("LessOrEqual", logic::op_less_eq),
    ("Greater", logic::op_greater),
    ("GreaterOrEqual", logic::op_greater_eq),
    ("And", logic::op_and),
    ("Or", logic::op_or),
    ("Xor", logic::op_xor),
    ("BitwiseAnd", logic::op_bitwise_and),
    ("BitwiseOr", logic::op_bitwise_or),
    ("BitwiseXor", logic::op_bitwise_xor),
    ("BitShift", logic::op_bitshift),
    ("BitwiseNot", logic::op_bitwise_not),
    ("Where", logic::op_where),
    ("Cast", cast::op_cast),
    ("CastLike", cast::op_cast_like),
    ("Identity", reshape::op_identity),
    ("Reshape", reshape::op_reshape),
    ("Flatten", reshape::op_flatten),
    ("Squeeze", reshape::op_squeeze),
    ("Unsqueeze", reshape::op_unsqueeze),
    ("Transpose", reshape::op_transpose),
    ("Expand", reshape::op_expand),
    ("Tile", reshape::op_tile),
    ("DepthToSpace", reshape::op_depth_to_space),
    ("SpaceToDepth", reshape::op_space_to_depth),
    ("Shape", reshape::op_shape),
    ("Size", reshape::op_size),
    ("Slice", slice::op_slice),
    ("Split", slice::op_split),
    ("Concat", slice::op_concat),
    ("ReverseSequence", slice::op_reverse_sequence),
    ("Gather", gather::op_gather),
    ("GatherElements", gather::op_gather_elements),
    ("GatherND", gather::op_gather_nd),
    ("Compress", gather::op_compress),
    ("NonZero", gather::op_nonzero),
    ("Unique", gather::op_unique),
    ("ScatterElements", scatter::op_scatter_elements),
    ("Scatter", scatter::op_scatter_elements),
    ("ScatterND", scatter::op_scatter_nd),
    ("OneHot", scatter::op_one_hot),
    ("Pad", pad::op_pad),
    ("ConstantOfShape", constant::op_constant_of_shape),
    ("Constant", constant::op_constant),
    ("Range", constant::op_range),
    ("EyeLike", constant::op_eye_like),
    ("Trilu", constant::op_trilu),
    // ONNX Runtime's com.microsoft ops.
    ("com.microsoft::Gelu", unary::op_gelu),
    ("com.microsoft::FastGelu", contrib::op_fast_gelu),
    ("com.microsoft::BiasGelu", contrib::op_bias_gelu),
    ("com.microsoft::QuickGelu", contrib::op_quick_gelu),
    (
        "com.microsoft::SkipLayerNormalization",
        contrib::op_skip_layer_norm,
    ),
    (
        "com.microsoft::SkipSimplifiedLayerNormalization",
        contrib::op_skip_simplified_layer_norm,
    ),
    ("com.microsoft::FusedConv", contrib::op_fused_conv),
    ("com.microsoft::FusedGemm", contrib::op_fused_gemm),
    ("com.microsoft::FusedMatMul", contrib::op_fused_matmul),
    ("com.microsoft::QLinearAdd", contrib::op_qlinear_add),
    ("com.microsoft::QLinearMul", contrib::op_qlinear_mul),
    ("com.microsoft::QLinearSigmoid", contrib::op_qlinear_sigmoid),
    (
        "com.microsoft::QLinearLeakyRelu",
        contrib::op_qlinear_leaky_relu,
    ),
    (
        "com.microsoft::MatMulIntegerToFloat",
        contrib::op_matmul_integer_to_float,
    ),
    (
        "com.microsoft::DynamicQuantizeMatMul",
        contrib::op_dynamic_quantize_matmul,
    ),
    (
        "com.microsoft::DynamicQuantizeLSTM",
        contrib::op_dynamic_quantize_lstm,
    ),
    (
        "com.microsoft::RotaryEmbedding",
        contrib::op_rotary_embedding,
    ),
    ("com.microsoft::MatMulNBits", contrib::op_matmul_nbits),
    (
        "com.microsoft::MultiHeadAttention",
        contrib::op_multi_head_attention,
    ),
];

/// Ints from attribute `attr` when the opset is below `since`, else from input `i` (None when
/// absent either way).
pub fn attr_or_input(
    cx: &Cx,
    n: &Node,
    ins: &[Option<&V>],
    attr: &str,
    i: usize,
    since: i64,
) -> R<Option<Vec<i64>>> {
    if cx.opset < since {
        Ok(n.ints(attr).map(|v| v.to_vec()))
    } else {
        Ok(match opt(ins, i)? {
            Some(t) => Some(t.ints()?),
            None => None,
        })
    }
}

/// Normalized, deduplicated-checked axes.
pub fn norm_axes(axes: &[i64], rank: usize) -> R<Vec<usize>> {
    let mut out = Vec::new();
    for &a in axes {
        let a = norm_axis(a, rank)?;
        if out.contains(&a) {
            return Err(err(format!("axis {a} repeated in {axes:?}")));
        }
        out.push(a);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_op_key_is_listed_once() {
        let mut keys: Vec<&str> = super::OPS.iter().map(|(k, _)| *k).collect();
        let n = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), n, "an op key is listed twice in OPS");
        assert_eq!(n, 208);
    }
}
