//! What ONNX leaves open: the catalogue of inputs on which the spec does not pin an op's
//! result down, so that two correct implementations may differ (or one may refuse).
//!
//! Each [`Entry`] names the op(s), the clause of the operator's specification it rests on and
//! what that clause leaves open (both in our words), and a predicate over the node and the
//! values that reached it. The triage asks [`classify`] about the node it blamed (the first
//! diverging node of a numeric finding, the node a backend failed on for a crash); a hit makes
//! the finding `undefined`: counted, never filed. Every entry has a test in
//! `oracles/tests/suite/undefined.rs`.
//!
//! The catalogue is one table, in the order entries are tried; their predicates live by the
//! kind of clause: `nonfinite` (NaN, infinities, zero scales), `integers` (integer arithmetic
//! and conversions), `geometry` (shapes, windows, coordinates) and `writes` (duplicate
//! indices).
mod geometry;
mod integers;
mod nonfinite;
mod writes;

use geometry::{
    convtranspose_output_padding_between, global_pool_without_spatial_axes,
    gridsample_cubic_border, pad_reflect_beyond_axis, recurrent_zero_length, reduce_mean_empty_set,
    registry_ambiguity, resize_align_corners_to_one, resize_crop_without_roi, resize_empty_axis,
    resize_fractional_length, resize_pytorch_half_pixel_to_one, same_pad_negative,
    split_num_outputs_beyond_chunks, squeeze_empty_axes,
};
use integers::{
    bitshift_width, cast_out_of_range, integer_overflow, onehot_index_not_integer,
    pow_integer_negative_exponent, real_reduction_of_integers, shrink_integer_fraction,
};
use mutagraph_backends::value::HostTensor;
use mutagraph_ir::graph::Node;
use mutagraph_ir::registry::{Registry, Traits};
use nonfinite::{
    clip_default_bound_infinite, dynamicquantize_zero_range, gemm_zero_scale,
    hardsigmoid_zero_alpha_infinite, inf_into_order_dependent, lrn_half_square_sum_overflow,
    mvn_zero_variance, nan_into_scatter_reduction, nan_into_select, nonfinite_conv_weights,
    quantize_nonfinite,
};
use writes::{maxunpool_duplicate_indices, scatter_duplicate_indices};

/// The values that reached a node, by value name (inputs and initializers).
pub type Seen = [(String, HostTensor)];

/// What an open case leaves open: the values of the result, or also its shape and whether a
/// library may refuse the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Affects {
    /// The values only (a wrong shape or a failure on such inputs is still a bug).
    Values,
    /// Values, shape, and whether the input is accepted at all.
    Everything,
}

/// One thing ONNX leaves open.
#[derive(Debug)]
pub struct Entry {
    /// Stable id (`pad-reflect-beyond-axis`).
    pub id: &'static str,
    /// What it leaves open.
    pub affects: Affects,
    /// The operators concerned (for the report; the predicate decides).
    pub ops: Ops,
    /// The clause of the specification, in our words.
    pub spec: &'static str,
    /// What it leaves open, in our words.
    pub open: &'static str,
    /// Whether the node, fed these values, is in the open case; `Some(detail)` when it is.
    pub applies: fn(&Node, &Seen) -> Option<String>,
}

/// The operators an [`Entry`] concerns.
#[derive(Clone, Copy, Debug)]
pub enum Ops {
    /// These.
    Listed(&'static [&'static str]),
    /// Every op of the registry with these traits (declared with each op's spec).
    With(Traits),
}

impl Ops {
    /// The op types, in the list's order or sorted by name.
    pub fn names(&self) -> Vec<&'static str> {
        match self {
            Ops::Listed(l) => l.to_vec(),
            Ops::With(t) => Registry::global().with_traits(*t),
        }
    }
}

/// A node found in an open case.
#[derive(Clone, Debug)]
pub struct Hit {
    /// The entry.
    pub entry: &'static Entry,
    /// What about these values puts the node there.
    pub detail: String,
}

impl Hit {
    /// One line: the entry's id, the detail, what is open.
    pub fn describe(&self) -> String {
        format!("{} ({}): {}", self.entry.id, self.detail, self.entry.open)
    }
}

/// The first catalogue entry the node falls under, if any.
pub fn classify(node: &Node, seen: &Seen) -> Option<Hit> {
    classify_for(node, seen, false)
}

/// [`classify`] for a symptom that is not about values (a wrong shape): only entries that
/// leave more than values open apply when `beyond_values`.
pub fn classify_for(node: &Node, seen: &Seen, beyond_values: bool) -> Option<Hit> {
    CATALOGUE
        .iter()
        .filter(|e| !beyond_values || e.affects == Affects::Everything)
        .find_map(|e| (e.applies)(node, seen).map(|detail| Hit { entry: e, detail }))
}

/// The catalogue.
pub static CATALOGUE: &[Entry] = &[
    Entry {
        id: "hardsigmoid-zero-alpha-infinite",
        affects: Affects::Values,
        ops: Ops::Listed(&["HardSigmoid"]),
        spec: "HardSigmoid computes max(0, min(1, alpha * x + beta))",
        open: "with alpha 0 an infinite x gives 0 * inf, NaN, before a max and a min that the \
               text does not define on NaN: beta clamped to [0, 1] (the product dropped as 0) \
               and NaN are both readings",
        applies: hardsigmoid_zero_alpha_infinite,
    },
    Entry {
        id: "nan-unspecified",
        affects: Affects::Values,
        ops: Ops::With(Traits::NAN_UNSPECIFIED),
        spec: "the definitions of these operators (max, min, clipping, thresholds, sorting, \
               normalization statistics) say nothing of NaN inputs",
        open: "whether a NaN input wins, loses or propagates is the implementation's choice",
        applies: nan_into_select,
    },
    Entry {
        id: "inf-evaluation-order",
        affects: Affects::Values,
        ops: Ops::With(Traits::INF_UNSPECIFIED),
        spec: "these operators are defined by formulas that sum or normalize over many \
               elements, without an order of evaluation",
        open: "an infinite input meets a zero or an opposite infinity in one order of \
               evaluation and not in another: Inf or NaN",
        applies: inf_into_order_dependent,
    },
    Entry {
        id: "nonfinite-weights-padding",
        affects: Affects::Values,
        ops: Ops::Listed(&["Conv", "ConvTranspose", "DeformConv", "QLinearConv"]),
        spec: "convolution is defined over the zero-padded input; the spec does not say that \
               padded positions are multiplied by the weights",
        open: "a NaN or infinite weight over padding gives NaN where padding is multiplied \
               and a finite value where it is skipped",
        applies: nonfinite_conv_weights,
    },
    Entry {
        id: "clip-default-bound-infinite",
        affects: Affects::Values,
        ops: Ops::Listed(&["Clip"]),
        spec: "Clip's absent min and max default to numeric_limits::lowest() and max() of the \
               element type",
        open: "by that text an infinite input is clipped to the finite extreme, while ONNX's \
               own reference leaves it infinite: ONNX disagrees with itself",
        applies: clip_default_bound_infinite,
    },
    Entry {
        id: "gemm-zero-scale",
        affects: Affects::Values,
        ops: Ops::Listed(&["Gemm"]),
        spec: "Gemm computes alpha * A' * B' + beta * C",
        open: "whether an operand scaled by 0 is read at all (NaN * 0 is NaN) is open",
        applies: gemm_zero_scale,
    },
    Entry {
        id: "real-reduction-of-integers",
        affects: Affects::Values,
        ops: Ops::Listed(&["ReduceLogSumExp", "ReduceLogSum", "ReduceL2", "ReduceMean"]),
        spec: "these reductions accept integer inputs and have a real-valued result",
        open: "how that result is rounded back to the integer type is not said",
        applies: real_reduction_of_integers,
    },
    Entry {
        id: "shrink-integer-fraction",
        affects: Affects::Values,
        ops: Ops::Listed(&["Shrink"]),
        spec: "Shrink accepts integer inputs with float attributes bias and lambd",
        open: "how x - bias is rounded for a fractional bias (or compared with a fractional \
               lambd) is not said",
        applies: shrink_integer_fraction,
    },
    Entry {
        id: "resize-align-corners-to-one",
        affects: Affects::Values,
        ops: Ops::Listed(&["Resize"]),
        spec: "align_corners maps x_resized to x_resized * (length_original - 1) / \
               (length_resized - 1)",
        open: "for an output length of 1 the formula divides by zero",
        applies: resize_align_corners_to_one,
    },
    Entry {
        id: "resize-pytorch-half-pixel-to-one",
        affects: Affects::Values,
        ops: Ops::Listed(&["Resize"]),
        spec: "pytorch_half_pixel maps x_resized to length_resized > 1 ? (x_resized + 0.5) / \
               scale - 0.5 : 0",
        open: "for an output length of 1 the text takes coordinate 0 and ONNX's reference \
               implementation -0.5 (tract follows it): ONNX disagrees with itself",
        applies: resize_pytorch_half_pixel_to_one,
    },
    Entry {
        id: "resize-fractional-length",
        affects: Affects::Values,
        ops: Ops::Listed(&["Resize"]),
        spec: "align_corners and tf_crop_and_resize map x_resized through \
               (length_original - 1) / (length_resized - 1); with scales, the output length \
               is floor(length_original * scale), and the text also calls length_resized \
               length_original * scale",
        open: "when length_original * scale is fractional, length_resized is the floored \
               output length by one reading (ONNX Runtime) and the unfloored product by the \
               other (ONNX's reference implementation, tract): different coordinates",
        applies: resize_fractional_length,
    },
    Entry {
        id: "reduce-mean-empty-set",
        affects: Affects::Values,
        ops: Ops::Listed(&["ReduceMean"]),
        spec: "ReduceMean: reduction over an empty set of values yields undefined",
        open: "the mean over an empty axis has no defined value (NaN, 0 or anything)",
        applies: reduce_mean_empty_set,
    },
    Entry {
        id: "squeeze-empty-axes",
        affects: Affects::Everything,
        ops: Ops::Listed(&["Squeeze"]),
        spec: "Squeeze removes the axes listed in axes; when axes is not provided, every axis \
               of length 1",
        open: "an axes list that is given but empty is neither: whether it removes nothing or \
               every axis of length 1 is not said",
        applies: squeeze_empty_axes,
    },
    Entry {
        id: "resize-crop-without-roi",
        affects: Affects::Everything,
        ops: Ops::Listed(&["Resize"]),
        spec: "tf_crop_and_resize takes its crop box from the roi input",
        open: "without a roi (absent or empty) the crop box is not defined",
        applies: resize_crop_without_roi,
    },
    Entry {
        id: "lrn-half-square-sum-overflow",
        affects: Affects::Values,
        ops: Ops::Listed(&["LRN"]),
        spec: "LRN divides x by (bias + alpha / size * square_sum) ^ beta, square_sum the sum \
               of squares over a window of channels",
        open: "in float16 the square sum can pass float16's largest value; the text does not \
               say in which precision it is accumulated, so an infinity (a result of 0) and \
               a finite result are both readings",
        applies: lrn_half_square_sum_overflow,
    },
    Entry {
        id: "mvn-zero-variance",
        affects: Affects::Values,
        ops: Ops::Listed(&["MeanVarianceNormalization"]),
        spec: "MeanVarianceNormalization computes (X - E[X]) / sqrt(E[(X - E[X])^2]); its \
               function body adds an epsilon of 1e-9 under the square root",
        open: "over a slice of equal values the text divides 0 by 0 while the function body \
               gives 0: the two definitions disagree",
        applies: mvn_zero_variance,
    },
    Entry {
        id: "cast-out-of-range",
        affects: Affects::Values,
        ops: Ops::Listed(&["Cast", "CastLike"]),
        spec: "Cast from a floating-point type to an integer type",
        open: "values outside the target's range, NaN and infinities have no defined result",
        applies: cast_out_of_range,
    },
    Entry {
        id: "onehot-index-not-integer",
        affects: Affects::Everything,
        ops: Ops::Listed(&["OneHot"]),
        spec: "OneHot casts indices and depth of a floating-point type to int64 before use",
        open: "NaN, infinities and values beyond int64 have no int64 value: the one-hot \
               position (or, for depth, the output's size) is left open",
        applies: onehot_index_not_integer,
    },
    Entry {
        id: "resize-empty-axis",
        affects: Affects::Everything,
        ops: Ops::Listed(&["Resize", "Upsample"]),
        spec: "Resize computes each output element from the input elements around its \
               coordinate mapped back into the input axis",
        open: "an input axis of length 0 resized to a non-zero length has no element to \
               interpolate from (the coordinate formulas divide by, or scale with, the \
               input's length)",
        applies: resize_empty_axis,
    },
    Entry {
        id: "global-pool-without-spatial-axes",
        affects: Affects::Everything,
        ops: Ops::Listed(&["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"]),
        spec: "the global pools pool \"across the values in the same channel\", \
               \"equivalent to MaxPool with kernel size equal to the spatial dimension\"; X is \
               (N x C x H x W), or (N x C x D1 x D2 ... Dn) in the non-image case",
        open: "an input of rank 2 or less has no spatial axis: whether the pool is the \
               identity, refused, or over nothing is not said (ONNX Runtime refuses it, tract \
               and the reference keep it, round 8 and 9 bundles)",
        applies: global_pool_without_spatial_axes,
    },
    Entry {
        id: "pad-reflect-beyond-axis",
        affects: Affects::Everything,
        ops: Ops::Listed(&["Pad"]),
        spec: "Pad in reflect mode mirrors the axis about its first and last element",
        open: "a pad as long as the axis or longer (or any pad of an axis of length 1) needs \
               a reflection of the reflection, which the spec does not define; with negative \
               pads the spec does not say whether the crop comes before the reflection, and \
               an axis cropped to nothing has no element to mirror",
        applies: pad_reflect_beyond_axis,
    },
    Entry {
        id: "convtranspose-output-padding-stride-or-dilation",
        affects: Affects::Everything,
        ops: Ops::Listed(&["ConvTranspose"]),
        spec: "ConvTranspose: each value of output_padding must be less than the \
               corresponding stride/dilation dimension",
        open: "\"stride/dilation\" is read as the stride (ONNX Runtime refuses a larger \
               value) or as the larger of the two (PyTorch, which exports such models): a \
               value between them is valid by one reading only (onnx/onnx#3187)",
        applies: convtranspose_output_padding_between,
    },
    Entry {
        id: "split-num-outputs-beyond-chunks",
        affects: Affects::Everything,
        ops: Ops::Listed(&["Split"]),
        spec: "Split with num_outputs splits into equal parts; if the tensor is not evenly \
               splittable, the last chunk will be smaller",
        open: "when parts of ceil(length / num_outputs) leave more than the last part short \
               (or a part empty: num_outputs above the length), no reading gives equal parts \
               with only the last smaller; whether such parts are empty, shorter, or the \
               split refused is open (onnx/onnx#5766)",
        applies: split_num_outputs_beyond_chunks,
    },
    Entry {
        id: "same-pad-negative",
        affects: Affects::Everything,
        ops: Ops::Listed(&[
            "Conv",
            "ConvTranspose",
            "ConvInteger",
            "QLinearConv",
            "MaxPool",
            "AveragePool",
            "LpPool",
        ]),
        spec: "auto_pad SAME_UPPER / SAME_LOWER pad so that the output length is \
               ceil(input / stride)",
        open: "when the window is shorter than the stride the padding this needs is \
               negative, which the spec does not define (implementations clamp or refuse)",
        applies: same_pad_negative,
    },
    Entry {
        id: "quantize-nonfinite",
        affects: Affects::Values,
        ops: Ops::Listed(&["QuantizeLinear", "DynamicQuantizeLinear"]),
        spec: "QuantizeLinear rounds x / y_scale + y_zero_point and saturates it to the \
               target's range",
        open: "NaN and infinities have no rounding and no saturation defined",
        applies: quantize_nonfinite,
    },
    Entry {
        id: "dynamicquantize-zero-range",
        affects: Affects::Values,
        ops: Ops::Listed(&["DynamicQuantizeLinear"]),
        spec: "DynamicQuantizeLinear takes y_scale = (max(x) - min(x)) / 255 over a range that \
               includes 0, and the zero point qmin - min(x) / y_scale",
        open: "for an input of zeros only (or none) the scale is 0 and the zero point 0 / 0: \
               neither it nor x / y_scale has a value",
        applies: dynamicquantize_zero_range,
    },
    Entry {
        id: "gridsample-cubic-border",
        affects: Affects::Values,
        ops: Ops::Listed(&["GridSample"]),
        spec: "GridSample's padding_mode says how a sample location outside the input is \
               handled",
        open: "bicubic interpolation reads 4 taps per axis around the location; whether \
               border / reflection padding applies to the location or to each tap is not \
               said, so the two readings differ near the border",
        applies: gridsample_cubic_border,
    },
    Entry {
        id: "scatter-reduction-nan",
        affects: Affects::Values,
        ops: Ops::Listed(&["ScatterElements", "ScatterND"]),
        spec: "with reduction 'max' or 'min', the written value is f(data, update) with f the \
               maximum or minimum",
        open: "the maximum or minimum of a NaN and a number is not defined: it may be the \
               NaN or the number",
        applies: nan_into_scatter_reduction,
    },
    Entry {
        id: "scatter-duplicate-indices",
        affects: Affects::Values,
        ops: Ops::Listed(&["ScatterElements", "ScatterND", "Scatter"]),
        spec: "with reduction 'none', each index receives its update",
        open: "when the indices hold duplicates the order of the updates, hence the result, \
               is not defined",
        applies: scatter_duplicate_indices,
    },
    Entry {
        id: "maxunpool-duplicate-indices",
        affects: Affects::Values,
        ops: Ops::Listed(&["MaxUnpool"]),
        spec: "MaxUnpool writes each value at its index",
        open: "duplicate indices leave the written value to the order of the writes",
        applies: maxunpool_duplicate_indices,
    },
    Entry {
        id: "integer-overflow",
        affects: Affects::Values,
        ops: Ops::Listed(&[
            "Add",
            "Sub",
            "Mul",
            "Neg",
            "Abs",
            "Pow",
            "ReduceProd",
            "ReduceSum",
            "ReduceSumSquare",
            "CumSum",
            "MatMul",
            "Gemm",
        ]),
        spec: "integer arithmetic in these operators is defined on the mathematical values",
        open: "a result outside the integer type's range may wrap, saturate or trap: the \
               spec does not say",
        applies: integer_overflow,
    },
    Entry {
        id: "bitshift-width",
        affects: Affects::Values,
        ops: Ops::Listed(&["BitShift"]),
        spec: "BitShift shifts by the amount in the second input",
        open: "a shift by the type's width or more has no defined result",
        applies: bitshift_width,
    },
    Entry {
        id: "pow-integer-negative-exponent",
        affects: Affects::Values,
        ops: Ops::Listed(&["Pow"]),
        spec: "Pow accepts integer bases and exponents",
        open: "an integer raised to a negative integer power has no integer result defined",
        applies: pow_integer_negative_exponent,
    },
    Entry {
        id: "recurrent-zero-length",
        affects: Affects::Values,
        ops: Ops::Listed(&["RNN", "GRU", "LSTM"]),
        spec: "sequence_lens gives each batch entry's number of time steps",
        open: "a length of 0 leaves Y_h / Y_c (no step ran) and the padded outputs undefined",
        applies: recurrent_zero_length,
    },
    Entry {
        id: "onnx-inconsistent",
        affects: Affects::Everything,
        ops: Ops::Listed(&["MaxPool", "AveragePool", "LpPool"]),
        spec: "the operator's definition, ONNX's shape inference and ONNX's reference \
               implementation",
        open: "they disagree with one another here (the op registry's ambiguity check names \
               the case: a ceil_mode window past the input, a window over padding only)",
        applies: registry_ambiguity,
    },
];

fn value<'s>(seen: &'s Seen, name: &str) -> Option<&'s HostTensor> {
    seen.iter().find(|(n, _)| n == name).map(|(_, t)| t)
}

/// The tensor in input slot `i` of `node`, if present and seen.
fn slot<'s>(node: &Node, seen: &'s Seen, i: usize) -> Option<&'s HostTensor> {
    let name = node.inputs.get(i).filter(|n| !n.is_empty())?;
    value(seen, name)
}

fn data_inputs<'s>(node: &Node, seen: &'s Seen) -> Vec<&'s HostTensor> {
    node.present_inputs()
        .filter_map(|n| value(seen, n))
        .collect()
}
