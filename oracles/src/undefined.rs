//! What ONNX leaves open: the catalogue of inputs on which the spec does not pin an op's
//! result down, so that two correct implementations may differ (or one may refuse).
//!
//! Each [`Entry`] names the op(s), the clause of the operator's specification it rests on and
//! what that clause leaves open (both in our words), and a predicate over the node and the
//! values that reached it. The triage asks [`classify`] about the node it blamed (the first
//! diverging node of a numeric finding, the node a backend failed on for a crash); a hit makes
//! the finding `undefined`: counted, never filed. Every entry has a test in
//! `oracles/tests/suite/undefined.rs`.
use mutagraph_backends::value::HostTensor;
use mutagraph_ir::DType;
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::graph::Node;

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
    pub ops: &'static [&'static str],
    /// The clause of the specification, in our words.
    pub spec: &'static str,
    /// What it leaves open, in our words.
    pub open: &'static str,
    /// Whether the node, fed these values, is in the open case; `Some(detail)` when it is.
    pub applies: fn(&Node, &Seen) -> Option<String>,
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
        id: "nan-unspecified",
        affects: Affects::Values,
        ops: NAN_UNSPECIFIED,
        spec: "the definitions of these operators (max, min, clipping, thresholds, sorting, \
               normalization statistics) say nothing of NaN inputs",
        open: "whether a NaN input wins, loses or propagates is the implementation's choice",
        applies: nan_into_select,
    },
    Entry {
        id: "inf-evaluation-order",
        affects: Affects::Values,
        ops: INF_UNSPECIFIED,
        spec: "these operators are defined by formulas that sum or normalize over many \
               elements, without an order of evaluation",
        open: "an infinite input meets a zero or an opposite infinity in one order of \
               evaluation and not in another: Inf or NaN",
        applies: inf_into_order_dependent,
    },
    Entry {
        id: "nonfinite-weights-padding",
        affects: Affects::Values,
        ops: &["Conv", "ConvTranspose", "DeformConv", "QLinearConv"],
        spec: "convolution is defined over the zero-padded input; the spec does not say that \
               padded positions are multiplied by the weights",
        open: "a NaN or infinite weight over padding gives NaN where padding is multiplied \
               and a finite value where it is skipped",
        applies: nonfinite_conv_weights,
    },
    Entry {
        id: "clip-default-bound-infinite",
        affects: Affects::Values,
        ops: &["Clip"],
        spec: "Clip's absent min and max default to numeric_limits::lowest() and max() of the \
               element type",
        open: "by that text an infinite input is clipped to the finite extreme, while ONNX's \
               own reference leaves it infinite: ONNX disagrees with itself",
        applies: clip_default_bound_infinite,
    },
    Entry {
        id: "gemm-zero-scale",
        affects: Affects::Values,
        ops: &["Gemm"],
        spec: "Gemm computes alpha * A' * B' + beta * C",
        open: "whether an operand scaled by 0 is read at all (NaN * 0 is NaN) is open",
        applies: gemm_zero_scale,
    },
    Entry {
        id: "real-reduction-of-integers",
        affects: Affects::Values,
        ops: &["ReduceLogSumExp", "ReduceLogSum", "ReduceL2", "ReduceMean"],
        spec: "these reductions accept integer inputs and have a real-valued result",
        open: "how that result is rounded back to the integer type is not said",
        applies: real_reduction_of_integers,
    },
    Entry {
        id: "shrink-integer-fraction",
        affects: Affects::Values,
        ops: &["Shrink"],
        spec: "Shrink accepts integer inputs with float attributes bias and lambd",
        open: "how x - bias is rounded for a fractional bias (or compared with a fractional \
               lambd) is not said",
        applies: shrink_integer_fraction,
    },
    Entry {
        id: "resize-align-corners-to-one",
        affects: Affects::Values,
        ops: &["Resize"],
        spec: "align_corners maps x_resized to x_resized * (length_original - 1) / \
               (length_resized - 1)",
        open: "for an output length of 1 the formula divides by zero",
        applies: resize_align_corners_to_one,
    },
    Entry {
        id: "resize-crop-without-roi",
        affects: Affects::Everything,
        ops: &["Resize"],
        spec: "tf_crop_and_resize takes its crop box from the roi input",
        open: "without a roi (absent or empty) the crop box is not defined",
        applies: resize_crop_without_roi,
    },
    Entry {
        id: "cast-out-of-range",
        affects: Affects::Values,
        ops: &["Cast", "CastLike"],
        spec: "Cast from a floating-point type to an integer type",
        open: "values outside the target's range, NaN and infinities have no defined result",
        applies: cast_out_of_range,
    },
    Entry {
        id: "onehot-index-not-integer",
        affects: Affects::Everything,
        ops: &["OneHot"],
        spec: "OneHot casts indices and depth of a floating-point type to int64 before use",
        open: "NaN, infinities and values beyond int64 have no int64 value: the one-hot \
               position (or, for depth, the output's size) is left open",
        applies: onehot_index_not_integer,
    },
    Entry {
        id: "resize-empty-axis",
        affects: Affects::Everything,
        ops: &["Resize", "Upsample"],
        spec: "Resize computes each output element from the input elements around its \
               coordinate mapped back into the input axis",
        open: "an input axis of length 0 resized to a non-zero length has no element to \
               interpolate from (the coordinate formulas divide by, or scale with, the \
               input's length)",
        applies: resize_empty_axis,
    },
    Entry {
        id: "pad-reflect-beyond-axis",
        affects: Affects::Everything,
        ops: &["Pad"],
        spec: "Pad in reflect mode mirrors the axis about its first and last element",
        open: "a pad as long as the axis or longer (or any pad of an axis of length 1) needs \
               a reflection of the reflection, which the spec does not define; with negative \
               pads the spec does not say whether the crop comes before the reflection, and \
               an axis cropped to nothing has no element to mirror",
        applies: pad_reflect_beyond_axis,
    },
    Entry {
        id: "same-pad-negative",
        affects: Affects::Everything,
        ops: &[
            "Conv",
            "ConvTranspose",
            "ConvInteger",
            "QLinearConv",
            "MaxPool",
            "AveragePool",
            "LpPool",
        ],
        spec: "auto_pad SAME_UPPER / SAME_LOWER pad so that the output length is \
               ceil(input / stride)",
        open: "when the window is shorter than the stride the padding this needs is \
               negative, which the spec does not define (implementations clamp or refuse)",
        applies: same_pad_negative,
    },
    Entry {
        id: "quantize-nonfinite",
        affects: Affects::Values,
        ops: &["QuantizeLinear", "DynamicQuantizeLinear"],
        spec: "QuantizeLinear rounds x / y_scale + y_zero_point and saturates it to the \
               target's range",
        open: "NaN and infinities have no rounding and no saturation defined",
        applies: quantize_nonfinite,
    },
    Entry {
        id: "dynamicquantize-zero-range",
        affects: Affects::Values,
        ops: &["DynamicQuantizeLinear"],
        spec: "DynamicQuantizeLinear takes y_scale = (max(x) - min(x)) / 255 over a range that \
               includes 0, and the zero point qmin - min(x) / y_scale",
        open: "for an input of zeros only (or none) the scale is 0 and the zero point 0 / 0: \
               neither it nor x / y_scale has a value",
        applies: dynamicquantize_zero_range,
    },
    Entry {
        id: "gridsample-cubic-border",
        affects: Affects::Values,
        ops: &["GridSample"],
        spec: "GridSample's padding_mode says how a sample location outside the input is \
               handled",
        open: "bicubic interpolation reads 4 taps per axis around the location; whether \
               border / reflection padding applies to the location or to each tap is not \
               said, so the two readings differ near the border",
        applies: gridsample_cubic_border,
    },
    Entry {
        id: "scatter-duplicate-indices",
        affects: Affects::Values,
        ops: &["ScatterElements", "ScatterND", "Scatter"],
        spec: "with reduction 'none', each index receives its update",
        open: "when the indices hold duplicates the order of the updates, hence the result, \
               is not defined",
        applies: scatter_duplicate_indices,
    },
    Entry {
        id: "maxunpool-duplicate-indices",
        affects: Affects::Values,
        ops: &["MaxUnpool"],
        spec: "MaxUnpool writes each value at its index",
        open: "duplicate indices leave the written value to the order of the writes",
        applies: maxunpool_duplicate_indices,
    },
    Entry {
        id: "integer-overflow",
        affects: Affects::Values,
        ops: &[
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
        ],
        spec: "integer arithmetic in these operators is defined on the mathematical values",
        open: "a result outside the integer type's range may wrap, saturate or trap: the \
               spec does not say",
        applies: integer_overflow,
    },
    Entry {
        id: "bitshift-width",
        affects: Affects::Values,
        ops: &["BitShift"],
        spec: "BitShift shifts by the amount in the second input",
        open: "a shift by the type's width or more has no defined result",
        applies: bitshift_width,
    },
    Entry {
        id: "pow-integer-negative-exponent",
        affects: Affects::Values,
        ops: &["Pow"],
        spec: "Pow accepts integer bases and exponents",
        open: "an integer raised to a negative integer power has no integer result defined",
        applies: pow_integer_negative_exponent,
    },
    Entry {
        id: "recurrent-zero-length",
        affects: Affects::Values,
        ops: &["RNN", "GRU", "LSTM"],
        spec: "sequence_lens gives each batch entry's number of time steps",
        open: "a length of 0 leaves Y_h / Y_c (no step ran) and the padded outputs undefined",
        applies: recurrent_zero_length,
    },
    Entry {
        id: "onnx-inconsistent",
        affects: Affects::Everything,
        ops: &["MaxPool", "AveragePool", "LpPool"],
        spec: "the operator's definition, ONNX's shape inference and ONNX's reference \
               implementation",
        open: "they disagree with one another here (the op registry's ambiguity check names \
               the case: a ceil_mode window past the input, a window over padding only)",
        applies: registry_ambiguity,
    },
];

/// Ops whose handling of NaN inputs ONNX leaves open: they select or compare (max, min,
/// clipping, sorting, thresholds), so whether a NaN wins, loses or propagates is the
/// implementation's choice. Recurrent ops are listed because their gates clip and compare.
pub const NAN_UNSPECIFIED: &[&str] = &[
    "Relu",
    "LeakyRelu",
    "PRelu",
    "ThresholdedRelu",
    "Clip",
    "Max",
    "Min",
    "HardSigmoid",
    "HardSwish",
    "Shrink",
    "Celu",
    "Elu",
    "Selu",
    "Softplus",
    "Sigmoid",
    "MaxPool",
    "GlobalMaxPool",
    "MaxRoiPool",
    "ReduceMax",
    "ReduceMin",
    "ArgMax",
    "ArgMin",
    "TopK",
    "Hardmax",
    "Sign",
    "Where",
    "Less",
    "LessOrEqual",
    "Greater",
    "GreaterOrEqual",
    "Equal",
    "LSTM",
    "GRU",
    "RNN",
    "MeanVarianceNormalization",
    "LayerNormalization",
    "InstanceNormalization",
    "BatchNormalization",
    "Softmax",
    "LogSoftmax",
    "Resize",
    "QuantizeLinear",
    "DynamicQuantizeLinear",
    "RoiAlign",
    "GridSample",
    "LRN",
    "Det",
];

/// Ops whose result with an infinite input depends on the order of their arithmetic (an Inf
/// meets a zero or an opposite Inf in one evaluation order and not in another), which ONNX
/// does not fix.
pub const INF_UNSPECIFIED: &[&str] = &[
    "BatchNormalization",
    "InstanceNormalization",
    "LayerNormalization",
    "GroupNormalization",
    "MeanVarianceNormalization",
    "LpNormalization",
    "LRN",
    "Softmax",
    "LogSoftmax",
    "LSTM",
    "GRU",
    "RNN",
    "GridSample",
    "RoiAlign",
    "Resize",
    "ConvTranspose",
    "Einsum",
    "Det",
];

/// The op registry's own ambiguity check ([`mutagraph_ir::registry::OpSpec::ambiguous`])
/// on the node with the types of the values that reached it.
fn registry_ambiguity(node: &Node, seen: &Seen) -> Option<String> {
    use mutagraph_ir::registry::{InferCtx, Registry};
    use mutagraph_ir::types::{TensorType, ValueType};
    let spec = Registry::global().for_node(node)?;
    let check = spec.ambiguous?;
    let inputs: Vec<Option<ValueType>> = node
        .inputs
        .iter()
        .map(|i| {
            value(seen, i).map(|t| {
                ValueType::Tensor(TensorType::fixed(
                    t.dtype,
                    &t.shape.iter().map(|&d| d as i64).collect::<Vec<_>>(),
                ))
            })
        })
        .collect();
    let consts = vec![None; node.inputs.len()];
    let ctx = InferCtx::new(node, 22, inputs, consts);
    check(&ctx).err()
}

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

fn nan_inf(t: &HostTensor) -> (usize, usize) {
    if t.dtype.is_float() {
        t.nan_inf_counts()
    } else {
        (0, 0)
    }
}

fn clip_default_bound_infinite(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Clip" {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let v = x.to_f64s().filter(|_| x.dtype.is_float())?;
    // an attribute (Clip before opset 11) or an input gives the bound
    let absent = |slot_ix: usize, attr: &str| {
        node.inputs.get(slot_ix).is_none_or(|n| n.is_empty())
            && node.attributes.attr(attr).is_none()
    };
    if absent(1, "min") && v.contains(&f64::NEG_INFINITY) {
        return Some("-inf reaches a Clip without min".into());
    }
    if absent(2, "max") && v.contains(&f64::INFINITY) {
        return Some("+inf reaches a Clip without max".into());
    }
    None
}

fn nan_into_select(node: &Node, seen: &Seen) -> Option<String> {
    (NAN_UNSPECIFIED.contains(&node.op_type.as_str())
        && data_inputs(node, seen).iter().any(|t| nan_inf(t).0 > 0))
    .then(|| format!("NaN reaches {}", node.op_type))
}

fn inf_into_order_dependent(node: &Node, seen: &Seen) -> Option<String> {
    (INF_UNSPECIFIED.contains(&node.op_type.as_str())
        && data_inputs(node, seen).iter().any(|t| nan_inf(t).1 > 0))
    .then(|| format!("Inf reaches {}", node.op_type))
}

fn nonfinite(t: &HostTensor) -> bool {
    let (n, i) = nan_inf(t);
    n + i > 0
}

fn nonfinite_conv_weights(node: &Node, seen: &Seen) -> Option<String> {
    if !matches!(
        node.op_type.as_str(),
        "Conv" | "ConvTranspose" | "DeformConv" | "QLinearConv"
    ) {
        return None;
    }
    node.inputs
        .iter()
        .skip(1)
        .filter_map(|i| value(seen, i))
        .any(nonfinite)
        .then(|| format!("NaN/Inf in the weights of {}", node.op_type))
}

fn gemm_zero_scale(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Gemm" {
        return None;
    }
    let scale = |name: &str| node.attributes.float(name, 1.0);
    let bad = |i: usize| slot(node, seen, i).is_some_and(nonfinite);
    ((scale("alpha") == 0.0 && (bad(0) || bad(1))) || (scale("beta") == 0.0 && bad(2)))
        .then(|| "NaN/Inf in a Gemm operand scaled by 0".into())
}

fn real_reduction_of_integers(node: &Node, seen: &Seen) -> Option<String> {
    (matches!(
        node.op_type.as_str(),
        "ReduceLogSumExp" | "ReduceLogSum" | "ReduceL2" | "ReduceMean"
    ) && slot(node, seen, 0).is_some_and(|t| t.dtype.is_int()))
    .then(|| {
        format!(
            "{} of {}",
            node.op_type,
            slot(node, seen, 0).expect("checked").dtype
        )
    })
}

fn shrink_integer_fraction(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Shrink" || slot(node, seen, 0).is_none_or(|t| t.dtype.is_float()) {
        return None;
    }
    let frac = |name: &str, default: f32| node.attributes.float(name, default).fract() != 0.0;
    (frac("bias", 0.0) || frac("lambd", 0.5))
        .then(|| "Shrink of integers with a fractional bias or lambd".into())
}

/// Output lengths of a Resize from its `sizes` (slot 3) or `scales` (slot 2) input.
fn resize_out(node: &Node, seen: &Seen, dims: &[usize]) -> Option<Vec<f64>> {
    if let Some(sizes) = slot(node, seen, 3).filter(|t| t.num_elements() > 0) {
        return sizes.to_f64s();
    }
    let scales = slot(node, seen, 2).filter(|t| t.num_elements() > 0)?;
    let sc = scales.to_f64s()?;
    Some(
        dims.iter()
            .zip(&sc)
            .map(|(&d, &s)| (d as f64 * s).floor())
            .collect(),
    )
}

fn resize_align_corners_to_one(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Resize"
        || node
            .attributes
            .string("coordinate_transformation_mode", "half_pixel")
            != "align_corners"
    {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let out = resize_out(node, seen, &x.shape)?;
    x.shape
        .iter()
        .zip(&out)
        .any(|(&d, &o)| o == 1.0 && d != 1)
        .then(|| "align_corners to a length of 1".into())
}

fn resize_crop_without_roi(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Resize"
        || node
            .attributes
            .string("coordinate_transformation_mode", "half_pixel")
            != "tf_crop_and_resize"
    {
        return None;
    }
    let roi = node.inputs.get(1).filter(|n| !n.is_empty());
    let empty = match roi {
        None => true,
        Some(n) => value(seen, n).is_some_and(|t| t.num_elements() == 0),
    };
    empty.then(|| "tf_crop_and_resize without a roi".into())
}

fn onehot_index_not_integer(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "OneHot" {
        return None;
    }
    let lim = 2f64.powi(63);
    for (i, what) in [(0, "indices"), (1, "depth")] {
        let Some(t) = slot(node, seen, i).filter(|t| t.dtype.is_float()) else {
            continue;
        };
        if t.to_f64s()?
            .iter()
            .any(|v| !v.is_finite() || v.abs() >= lim)
        {
            return Some(format!("OneHot {what} of {} with no int64 value", t.dtype));
        }
    }
    None
}

fn resize_empty_axis(node: &Node, seen: &Seen) -> Option<String> {
    if !matches!(node.op_type.as_str(), "Resize" | "Upsample") {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let y = node.outputs.first().and_then(|o| value(seen, o))?;
    x.shape
        .iter()
        .zip(&y.shape)
        .position(|(&i, &o)| i == 0 && o > 0)
        .map(|axis| format!("axis {axis} of length 0 resized to {}", y.shape[axis]))
}

fn int_range(d: DType) -> Option<(f64, f64)> {
    let bits = d.bits()? as i32;
    Some(if d.is_signed_int() {
        (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1) - 1.0)
    } else {
        (0.0, 2f64.powi(bits) - 1.0)
    })
}

fn cast_out_of_range(node: &Node, seen: &Seen) -> Option<String> {
    let to = match node.op_type.as_str() {
        "Cast" => match node.attributes.iter().find(|a| a.name == "to")?.value {
            AttrValue::Int(c) => DType::from_code(c as i32),
            _ => return None,
        },
        "CastLike" => slot(node, seen, 1)?.dtype,
        _ => return None,
    };
    let x = slot(node, seen, 0)?;
    if !(x.dtype.is_float() && to.is_int()) {
        return None;
    }
    let (lo, hi) = int_range(to)?;
    x.to_f64s()?
        .iter()
        .any(|v| !v.is_finite() || v.trunc() < lo || v.trunc() > hi)
        .then(|| format!("Cast of {} values outside the range of {to}", x.dtype))
}

/// A node's pads, from the `pads` input (Pad from opset 11) or attribute.
fn pad_amounts(node: &Node, seen: &Seen) -> Option<Vec<i64>> {
    match slot(node, seen, 1) {
        Some(t) => t.to_i64s(),
        None => node.ints("pads").map(|p| p.to_vec()),
    }
}

fn pad_reflect_beyond_axis(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Pad" || node.attributes.string("mode", "constant") != "reflect" {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let pads = pad_amounts(node, seen)?;
    let rank = x.shape.len();
    // Pads name every axis, or those of the `axes` input (slot 3).
    let axes: Vec<usize> = match slot(node, seen, 3).and_then(|t| t.to_i64s()) {
        Some(a) => a
            .iter()
            .map(|&a| if a < 0 { a + rank as i64 } else { a } as usize)
            .collect(),
        None => (0..rank).collect(),
    };
    let n = axes.len();
    if pads.len() != 2 * n {
        return None;
    }
    for (k, &ax) in axes.iter().enumerate() {
        let len = *x.shape.get(ax)? as i64;
        let (b, e) = (pads[k], pads[k + n]);
        // what is left of the axis once negative pads crop it
        let kept = len + b.min(0) + e.min(0);
        if (b > 0 || e > 0) && (b >= kept || e >= kept || kept <= 1) {
            return Some(format!(
                "reflect pads ({b}, {e}) on an axis of length {len}"
            ));
        }
        if kept <= 0 && len > 0 {
            return Some(format!(
                "reflect pads ({b}, {e}) crop an axis of length {len} to nothing"
            ));
        }
    }
    None
}

fn same_pad_negative(node: &Node, seen: &Seen) -> Option<String> {
    let auto = node.attributes.string("auto_pad", "NOTSET");
    if auto != "SAME_UPPER" && auto != "SAME_LOWER" {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let spatial = x.shape.get(2..)?;
    let r = spatial.len();
    let kernel: Vec<i64> = match node.ints("kernel_shape") {
        Some(k) => k.to_vec(),
        None => {
            let w = match node.op_type.as_str() {
                "QLinearConv" => slot(node, seen, 3)?,
                _ => slot(node, seen, 1)?,
            };
            w.shape.get(2..)?.iter().map(|&d| d as i64).collect()
        }
    };
    if kernel.len() != r {
        return None;
    }
    let ints = |name: &str| -> Vec<i64> {
        node.ints(name)
            .filter(|v| v.len() == r)
            .map_or_else(|| vec![1; r], |v| v.to_vec())
    };
    let (strides, dil) = (ints("strides"), ints("dilations"));
    let transpose = node.op_type == "ConvTranspose";
    let out_pad = node
        .ints("output_padding")
        .filter(|v| v.len() == r)
        .map_or_else(|| vec![0; r], |v| v.to_vec());
    for d in 0..r {
        let i = spatial[d] as i64;
        let s = strides[d].max(1);
        let ek = (kernel[d] - 1) * dil[d] + 1;
        let total = if transpose {
            // Output i * s; pads = s * (i - 1) + output_padding + ek - i * s.
            s * (i - 1) + out_pad[d] + ek - i * s
        } else {
            let o = (i + s - 1) / s;
            (o - 1) * s + ek - i
        };
        if total < 0 {
            return Some(format!(
                "{auto} on an axis of length {i} with window {ek} and stride {s} needs a \
                 total pad of {total}"
            ));
        }
    }
    None
}

fn quantize_nonfinite(node: &Node, seen: &Seen) -> Option<String> {
    (matches!(
        node.op_type.as_str(),
        "QuantizeLinear" | "DynamicQuantizeLinear"
    ) && slot(node, seen, 0).is_some_and(nonfinite))
    .then(|| format!("NaN/Inf into {}", node.op_type))
}

fn dynamicquantize_zero_range(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "DynamicQuantizeLinear" {
        return None;
    }
    slot(node, seen, 0)?
        .to_f64s()?
        .iter()
        .all(|v| *v == 0.0)
        .then(|| "DynamicQuantizeLinear of zeros only: y_scale 0, zero point 0 / 0".into())
}

fn gridsample_cubic_border(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "GridSample" {
        return None;
    }
    let mode = node.attributes.string("mode", "linear");
    if mode != "cubic" && mode != "bicubic" {
        return None;
    }
    let padding = node.attributes.string("padding_mode", "zeros");
    if padding == "zeros" {
        return None;
    }
    let align = node.attributes.int("align_corners", 0) != 0;
    let x = slot(node, seen, 0)?;
    let grid = slot(node, seen, 1)?;
    let spatial = x.shape.get(2..)?;
    let r = spatial.len();
    let g = grid.to_f64s()?;
    if r == 0 || g.len() % r != 0 {
        return None;
    }
    for point in g.chunks(r) {
        // The grid lists x (width) first: its last spatial axis.
        for (k, &c) in point.iter().enumerate() {
            let size = spatial[r - 1 - k] as f64;
            let u = if align {
                (c + 1.0) / 2.0 * (size - 1.0)
            } else {
                ((c + 1.0) * size - 1.0) / 2.0
            };
            let first = u.floor() - 1.0;
            if !u.is_finite() || first < 0.0 || first + 3.0 > size - 1.0 {
                return Some(format!(
                    "bicubic taps around {u:.3} leave an axis of length {size} with \
                     padding_mode {padding}"
                ));
            }
        }
    }
    None
}

/// Flat positions written by ScatterND-like index tuples: `Some(true)` when two tuples are
/// equal.
fn has_duplicate_rows(idx: &[i64], width: usize) -> bool {
    if width == 0 {
        return idx.is_empty();
    }
    let mut rows: Vec<&[i64]> = idx.chunks(width).collect();
    rows.sort();
    rows.windows(2).any(|w| w[0] == w[1])
}

fn scatter_duplicate_indices(node: &Node, seen: &Seen) -> Option<String> {
    if !matches!(
        node.op_type.as_str(),
        "ScatterElements" | "ScatterND" | "Scatter"
    ) || node.attributes.string("reduction", "none") != "none"
    {
        return None;
    }
    let data = slot(node, seen, 0)?;
    let idx_t = slot(node, seen, 1)?;
    let idx = idx_t.to_i64s()?;
    let dup = if node.op_type == "ScatterND" {
        let width = *idx_t.shape.last()?;
        // Negative indices count from the end.
        let norm: Vec<i64> = idx
            .chunks(width.max(1))
            .flat_map(|row| {
                row.iter()
                    .enumerate()
                    .map(|(k, &i)| {
                        let d = data.shape.get(k).copied().unwrap_or(1) as i64;
                        if i < 0 { i + d } else { i }
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        has_duplicate_rows(&norm, width)
    } else {
        // ScatterElements: element (i0..ik) writes data[i0..idx..ik] along `axis`.
        let rank = idx_t.shape.len();
        let axis = node.attributes.int("axis", 0);
        let axis = if axis < 0 { axis + rank as i64 } else { axis } as usize;
        if axis >= rank {
            return None;
        }
        let dim = *data.shape.get(axis)? as i64;
        let mut coords: Vec<i64> = Vec::with_capacity(idx.len() * rank);
        let mut pos = vec![0usize; rank];
        for &i in &idx {
            for (d, &p) in pos.iter().enumerate() {
                coords.push(if d == axis {
                    if i < 0 { i + dim } else { i }
                } else {
                    p as i64
                });
            }
            for d in (0..rank).rev() {
                pos[d] += 1;
                if pos[d] < idx_t.shape[d] {
                    break;
                }
                pos[d] = 0;
            }
        }
        has_duplicate_rows(&coords, rank)
    };
    dup.then(|| {
        format!(
            "{} with duplicate indices and reduction 'none'",
            node.op_type
        )
    })
}

fn maxunpool_duplicate_indices(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "MaxUnpool" {
        return None;
    }
    let idx = slot(node, seen, 1)?.to_i64s()?;
    has_duplicate_rows(&idx, 1).then(|| "MaxUnpool with duplicate indices".into())
}

/// Largest magnitude among the elements of an integer tensor, as f64.
fn max_abs_int(t: &HostTensor) -> Option<f64> {
    t.dtype.is_int().then_some(())?;
    Some(t.to_f64s()?.iter().fold(0.0f64, |a, &b| a.max(b.abs())))
}

fn integer_overflow(node: &Node, seen: &Seen) -> Option<String> {
    let x = slot(node, seen, 0)?;
    if !x.dtype.is_int() {
        return None;
    }
    let (lo, hi) = int_range(x.dtype)?;
    let a = max_abs_int(x)?;
    let b = slot(node, seen, 1).and_then(max_abs_int).unwrap_or(0.0);
    let n = x.num_elements() as f64;
    let worst = match node.op_type.as_str() {
        "Add" | "Sub" => a + b,
        "Mul" => a * b,
        // The minimum of a signed type has no positive counterpart.
        "Neg" | "Abs" => {
            if x.to_f64s()?.contains(&lo) && lo < 0.0 {
                hi + 1.0
            } else {
                a
            }
        }
        "Pow" => a.powf(b),
        "ReduceSum" | "CumSum" => a * n,
        "ReduceSumSquare" => a * a * n,
        "ReduceProd" => x
            .to_f64s()?
            .iter()
            .filter(|v| v.abs() > 1.0)
            .map(|v| v.abs())
            .product(),
        "MatMul" | "Gemm" => {
            let k = *x.shape.last()? as f64;
            a * b * k
        }
        _ => return None,
    };
    (worst > hi).then(|| {
        format!(
            "{} of {} values may exceed the type's range ({worst:.3e})",
            node.op_type, x.dtype
        )
    })
}

fn bitshift_width(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "BitShift" {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let bits = x.dtype.bits()? as i64;
    slot(node, seen, 1)?
        .to_i64s()?
        .iter()
        .any(|&s| s >= bits || s < 0)
        .then(|| format!("shift by {bits} bits or more"))
}

fn pow_integer_negative_exponent(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Pow" || !slot(node, seen, 0)?.dtype.is_int() {
        return None;
    }
    let e = slot(node, seen, 1)?;
    let neg = if e.dtype.is_int() {
        e.to_i64s()?.iter().any(|&v| v < 0)
    } else {
        e.to_f64s()?.iter().any(|&v| v < 0.0)
    };
    neg.then(|| "integer base with a negative exponent".into())
}

fn recurrent_zero_length(node: &Node, seen: &Seen) -> Option<String> {
    if !matches!(node.op_type.as_str(), "RNN" | "GRU" | "LSTM") {
        return None;
    }
    slot(node, seen, 4)?
        .to_i64s()?
        .contains(&0)
        .then(|| "a sequence length of 0".into())
}
