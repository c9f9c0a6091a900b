//! The catalogue of what ONNX leaves open: each entry applies to the values of its open case
//! and not to a neighbouring defined case.
use mutagraph_backends::value::{Data, HostTensor};
use mutagraph_ir::attr::AttrValue;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use mutagraph_oracles::undefined::{CATALOGUE, classify};
use std::collections::BTreeSet;

fn f32s(shape: &[usize], v: &[f32]) -> HostTensor {
    HostTensor::new(shape.to_vec(), Data::F32(v.to_vec()))
}

fn i64s(shape: &[usize], v: &[i64]) -> HostTensor {
    HostTensor::new(shape.to_vec(), Data::I64(v.to_vec()))
}

fn i32s(shape: &[usize], v: &[i32]) -> HostTensor {
    HostTensor::new(shape.to_vec(), Data::I32(v.to_vec()))
}

fn seen(v: Vec<(&str, HostTensor)>) -> Vec<(String, HostTensor)> {
    v.into_iter().map(|(n, t)| (n.to_string(), t)).collect()
}

fn s(v: &str) -> AttrValue {
    AttrValue::String(v.as_bytes().to_vec())
}

/// The id of the entry `node` falls under with these values.
fn hit(node: &Node, values: Vec<(&str, HostTensor)>) -> Option<&'static str> {
    classify(node, &seen(values)).map(|h| h.entry.id)
}

/// Every entry checked by the tests below (the last test asserts none is left out).
const TESTED: &[&str] = &[
    "onnx-inconsistent",
    "nan-unspecified",
    "inf-evaluation-order",
    "nonfinite-weights-padding",
    "gemm-zero-scale",
    "real-reduction-of-integers",
    "shrink-integer-fraction",
    "resize-align-corners-to-one",
    "resize-fractional-length",
    "lrn-half-square-sum-overflow",
    "squeeze-empty-axes",
    "reduce-mean-empty-set",
    "mvn-zero-variance",
    "resize-crop-without-roi",
    "cast-out-of-range",
    "onehot-index-not-integer",
    "resize-empty-axis",
    "pad-reflect-beyond-axis",
    "clip-default-bound-infinite",
    "same-pad-negative",
    "quantize-nonfinite",
    "dynamicquantize-zero-range",
    "gridsample-cubic-border",
    "scatter-reduction-nan",
    "scatter-duplicate-indices",
    "maxunpool-duplicate-indices",
    "integer-overflow",
    "bitshift-width",
    "pow-integer-negative-exponent",
    "recurrent-zero-length",
    "hardsigmoid-zero-alpha-infinite",
    "convtranspose-output-padding-stride-or-dilation",
    "split-num-outputs-beyond-chunks",
    "resize-pytorch-half-pixel-to-one",
    "global-pool-without-spatial-axes",
];

#[test]
fn a_mean_over_an_empty_axis_is_undefined() {
    // ONNX Runtime gives 0, numpy and onnx.reference NaN: the text says "undefined".
    let by_attr =
        Node::new("ReduceMean", &["x"], &["y"]).with_attr("axes", AttrValue::Ints(vec![-1]));
    let empty = f32s(&[2, 0], &[]);
    assert_eq!(
        hit(&by_attr, vec![("x", empty.clone())]),
        Some("reduce-mean-empty-set")
    );
    let by_input = Node::new("ReduceMean", &["x", "axes"], &["y"]);
    assert_eq!(
        hit(
            &by_input,
            vec![("x", empty.clone()), ("axes", i64s(&[1], &[0]))]
        ),
        None,
        "axis 0 has two elements"
    );
    assert_eq!(
        hit(&by_input, vec![("x", empty), ("axes", i64s(&[1], &[1]))]),
        Some("reduce-mean-empty-set")
    );
    // ReduceSum over an empty set is defined: 0.
    let sum = Node::new("ReduceSum", &["x"], &["y"]);
    assert_eq!(hit(&sum, vec![("x", f32s(&[2, 0], &[]))]), None);
}

#[test]
fn pools_where_onnx_disagrees_with_itself() {
    let pool = |pads: Vec<i64>, ceil: i64| {
        Node::new("MaxPool", &["x"], &["y"])
            .with_attr("kernel_shape", AttrValue::Ints(vec![2]))
            .with_attr("strides", AttrValue::Ints(vec![2]))
            .with_attr("pads", AttrValue::Ints(pads))
            .with_attr("ceil_mode", AttrValue::Int(ceil))
    };
    // 3 inputs, pads 1+1, ceil: ONNX's shape inference counts 3 windows, its reference 2.
    let x = f32s(&[1, 1, 3], &[1.0, 2.0, 3.0]);
    assert_eq!(
        hit(&pool(vec![1, 1], 1), vec![("x", x.clone())]),
        Some("onnx-inconsistent")
    );
    // 4 inputs: all count 3.
    let x4 = f32s(&[1, 1, 4], &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(hit(&pool(vec![1, 1], 1), vec![("x", x4)]), None);
    // A dilated window over padding only: a max of no element.
    let dilated = Node::new("MaxPool", &["x"], &["y"])
        .with_attr("kernel_shape", AttrValue::Ints(vec![2]))
        .with_attr("dilations", AttrValue::Ints(vec![2]))
        .with_attr("pads", AttrValue::Ints(vec![1, 1]));
    let one = f32s(&[1, 1, 1], &[0.5]);
    assert_eq!(hit(&dilated, vec![("x", one)]), Some("onnx-inconsistent"));
    assert_eq!(hit(&pool(vec![0, 0], 0), vec![("x", x)]), None);
}

#[test]
fn nan_into_a_selecting_op() {
    let relu = Node::new("Relu", &["x"], &["y"]);
    assert_eq!(
        hit(&relu, vec![("x", f32s(&[2], &[f32::NAN, 1.0]))]),
        Some("nan-unspecified")
    );
    assert_eq!(hit(&relu, vec![("x", f32s(&[2], &[0.5, 1.0]))]), None);
    // Exp propagates NaN as IEEE says: defined.
    let exp = Node::new("Exp", &["x"], &["y"]);
    assert_eq!(hit(&exp, vec![("x", f32s(&[1], &[f32::NAN]))]), None);
}

#[test]
fn inf_into_an_order_dependent_op() {
    let sm = Node::new("Softmax", &["x"], &["y"]);
    assert_eq!(
        hit(&sm, vec![("x", f32s(&[2], &[f32::INFINITY, 1.0]))]),
        Some("inf-evaluation-order")
    );
    assert_eq!(hit(&sm, vec![("x", f32s(&[2], &[3.0, 1.0]))]), None);
}

#[test]
fn nonfinite_conv_weights() {
    let conv = Node::new("Conv", &["x", "w"], &["y"]);
    let x = f32s(&[1, 1, 2, 2], &[1.0; 4]);
    assert_eq!(
        hit(
            &conv,
            vec![("x", x.clone()), ("w", f32s(&[1, 1, 1, 1], &[f32::NAN]))]
        ),
        Some("nonfinite-weights-padding")
    );
    assert_eq!(
        hit(&conv, vec![("x", x), ("w", f32s(&[1, 1, 1, 1], &[2.0]))]),
        None
    );
}

#[test]
fn gemm_operand_scaled_by_zero() {
    let gemm = Node::new("Gemm", &["a", "b", "c"], &["y"]).with_attr("beta", AttrValue::Float(0.0));
    let ok = f32s(&[1, 1], &[1.0]);
    assert_eq!(
        hit(
            &gemm,
            vec![
                ("a", ok.clone()),
                ("b", ok.clone()),
                ("c", f32s(&[1, 1], &[f32::NAN]))
            ]
        ),
        Some("gemm-zero-scale")
    );
    assert_eq!(
        hit(&gemm, vec![("a", ok.clone()), ("b", ok.clone()), ("c", ok)]),
        None
    );
}

#[test]
fn real_valued_reduction_of_integers() {
    let r = Node::new("ReduceMean", &["x"], &["y"]);
    assert_eq!(
        hit(&r, vec![("x", i64s(&[3], &[1, 2, 2]))]),
        Some("real-reduction-of-integers")
    );
    assert_eq!(hit(&r, vec![("x", f32s(&[3], &[1.0, 2.0, 2.0]))]), None);
}

#[test]
fn shrink_of_integers_with_a_fraction() {
    let sh = Node::new("Shrink", &["x"], &["y"]).with_attr("bias", AttrValue::Float(0.5));
    assert_eq!(
        hit(&sh, vec![("x", i64s(&[1], &[3]))]),
        Some("shrink-integer-fraction")
    );
    let whole = Node::new("Shrink", &["x"], &["y"])
        .with_attr("bias", AttrValue::Float(1.0))
        .with_attr("lambd", AttrValue::Float(2.0));
    assert_eq!(hit(&whole, vec![("x", i64s(&[1], &[3]))]), None);
}

#[test]
fn resize_align_corners_to_length_one() {
    let r = Node::new("Resize", &["x", "", "", "sizes"], &["y"])
        .with_attr("coordinate_transformation_mode", s("align_corners"));
    let x = f32s(&[1, 4], &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(
        hit(&r, vec![("x", x.clone()), ("sizes", i64s(&[2], &[1, 1]))]),
        Some("resize-align-corners-to-one")
    );
    assert_eq!(
        hit(&r, vec![("x", x), ("sizes", i64s(&[2], &[1, 2]))]),
        None
    );
}

#[test]
fn resize_align_corners_to_a_fractional_length() {
    // 61 scaled by 1.5 is 91.5: the output has 91 elements; ONNX Runtime maps with 91,
    // onnx.reference (and tract) with 91.5.
    let r = Node::new("Resize", &["x", "", "scales"], &["y"])
        .with_attr("coordinate_transformation_mode", s("align_corners"))
        .with_attr("mode", s("linear"));
    let x = f32s(&[1, 61], &[0.5; 61]);
    let scales = |v: &[f32]| f32s(&[2], v);
    assert_eq!(
        hit(&r, vec![("x", x.clone()), ("scales", scales(&[1.0, 1.5]))]),
        Some("resize-fractional-length")
    );
    // tf_crop_and_resize divides the same way, down to an output of one element (the
    // middle of the region by the floored reading, an end of it by the other).
    let crop = Node::new("Resize", &["x", "roi", "scales"], &["y"])
        .with_attr("coordinate_transformation_mode", s("tf_crop_and_resize"))
        .with_attr("mode", s("linear"));
    let roi = f32s(&[4], &[0.0, 0.2, 1.0, 0.9]);
    assert_eq!(
        hit(
            &crop,
            vec![
                ("x", f32s(&[1, 3], &[0.5; 3])),
                ("roi", roi),
                ("scales", scales(&[1.0, 0.5]))
            ]
        ),
        Some("resize-fractional-length")
    );
    // An integer product (61 * 2) is read the same both ways.
    assert_eq!(
        hit(&r, vec![("x", x.clone()), ("scales", scales(&[1.0, 2.0]))]),
        None
    );
    // Another coordinate mode has no such division.
    let asym = Node::new("Resize", &["x", "", "scales"], &["y"])
        .with_attr("coordinate_transformation_mode", s("asymmetric"));
    assert_eq!(
        hit(&asym, vec![("x", x), ("scales", scales(&[1.0, 1.5]))]),
        None
    );
}

#[test]
fn lrn_whose_float16_square_sum_overflows() {
    let lrn = Node::new("LRN", &["x"], &["y"]).with_attr("size", AttrValue::Int(3));
    let half = |v: &[f64]| HostTensor::from_f64s(DType::F16, vec![1, 3, 1, 1], v).unwrap();
    // 200^2 * 2 = 80 000 > 65 504 (channels 0 and 1 share a window); each square fits.
    assert_eq!(
        hit(&lrn, vec![("x", half(&[200.0, 200.0, 1.0]))]),
        Some("lrn-half-square-sum-overflow")
    );
    assert_eq!(hit(&lrn, vec![("x", half(&[100.0, 100.0, 100.0]))]), None);
    // In float32 the same sum is far from the type's range.
    let single = f32s(&[1, 3, 1, 1], &[200.0, 200.0, 1.0]);
    assert_eq!(hit(&lrn, vec![("x", single)]), None);
}

#[test]
fn squeeze_with_axes_given_but_empty() {
    let x = f32s(&[1, 2, 1], &[1.0, 2.0]);
    // Squeeze-11: the attribute.
    let by_attr = Node::new("Squeeze", &["x"], &["y"]).with_attr("axes", AttrValue::Ints(vec![]));
    assert_eq!(
        hit(&by_attr, vec![("x", x.clone())]),
        Some("squeeze-empty-axes")
    );
    let listed = Node::new("Squeeze", &["x"], &["y"]).with_attr("axes", AttrValue::Ints(vec![0]));
    assert_eq!(hit(&listed, vec![("x", x.clone())]), None);
    assert_eq!(
        hit(
            &Node::new("Squeeze", &["x"], &["y"]),
            vec![("x", x.clone())]
        ),
        None
    );
    // Squeeze-13: the input.
    let by_input = Node::new("Squeeze", &["x", "axes"], &["y"]);
    assert_eq!(
        hit(&by_input, vec![("x", x.clone()), ("axes", i64s(&[0], &[]))]),
        Some("squeeze-empty-axes")
    );
    assert_eq!(
        hit(&by_input, vec![("x", x), ("axes", i64s(&[1], &[2]))]),
        None
    );
}

#[test]
fn mean_variance_normalization_of_a_constant_slice() {
    // Axes [0, 2, 3] (given: left to its default the node is `onnx-inconsistent` already):
    // channel 1 holds 3, 3 (variance 0), channel 0 does not.
    let mvn = Node::new("MeanVarianceNormalization", &["x"], &["y"])
        .with_attr("axes", AttrValue::Ints(vec![0, 2, 3]));
    let x = f32s(&[1, 2, 1, 2], &[1.0, 2.0, 3.0, 3.0]);
    assert_eq!(hit(&mvn, vec![("x", x)]), Some("mvn-zero-variance"));
    let varied = f32s(&[1, 2, 1, 2], &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(hit(&mvn, vec![("x", varied.clone())]), None);
    // Over axis 1 the slices are (1, 3) and (2, 4): no constant one.
    let over_channels = Node::new("MeanVarianceNormalization", &["x"], &["y"])
        .with_attr("axes", AttrValue::Ints(vec![1]));
    assert_eq!(hit(&over_channels, vec![("x", varied)]), None);
}

#[test]
fn resize_crop_without_a_roi() {
    let r = Node::new("Resize", &["x", "", "", "sizes"], &["y"])
        .with_attr("coordinate_transformation_mode", s("tf_crop_and_resize"));
    let x = f32s(&[1, 4], &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(
        hit(&r, vec![("x", x.clone()), ("sizes", i64s(&[2], &[1, 2]))]),
        Some("resize-crop-without-roi")
    );
    let with_roi = Node::new("Resize", &["x", "roi", "", "sizes"], &["y"])
        .with_attr("coordinate_transformation_mode", s("tf_crop_and_resize"));
    assert_eq!(
        hit(
            &with_roi,
            vec![
                ("x", x),
                ("roi", f32s(&[4], &[0.0, 0.0, 1.0, 1.0])),
                ("sizes", i64s(&[2], &[1, 2]))
            ]
        ),
        None
    );
}

#[test]
fn onehot_index_without_an_integer_value() {
    let oh = Node::new("OneHot", &["i", "d", "v"], &["y"]);
    let depth = f32s(&[1], &[4.0]);
    let values = f32s(&[2], &[0.0, 1.0]);
    let case =
        |i: HostTensor, d: HostTensor| hit(&oh, vec![("i", i), ("d", d), ("v", values.clone())]);
    assert_eq!(
        case(f32s(&[2], &[f32::NAN, 1.0]), depth.clone()),
        Some("onehot-index-not-integer")
    );
    assert_eq!(
        case(f32s(&[1], &[1e30]), depth.clone()),
        Some("onehot-index-not-integer")
    );
    assert_eq!(
        case(f32s(&[1], &[1.0]), f32s(&[1], &[f32::INFINITY])),
        Some("onehot-index-not-integer")
    );
    // Fractions, negatives and indices out of [-depth, depth-1] are defined.
    assert_eq!(case(f32s(&[3], &[-0.5, 2.7, 9.0]), depth), None);
    assert_eq!(
        hit(
            &oh,
            vec![("i", i64s(&[1], &[i64::MAX])), ("d", i64s(&[1], &[4]))]
        ),
        None
    );
}

#[test]
fn resize_of_an_empty_axis() {
    let r = Node::new("Resize", &["x", "", "", "sizes"], &["y"]);
    let empty = f32s(&[1, 0], &[]);
    assert_eq!(
        hit(
            &r,
            vec![("x", empty.clone()), ("y", f32s(&[1, 2], &[0.0, 0.0]))]
        ),
        Some("resize-empty-axis")
    );
    // Empty to empty is defined (nothing to compute).
    assert_eq!(hit(&r, vec![("x", empty), ("y", f32s(&[1, 0], &[]))]), None);
    assert_eq!(
        hit(
            &r,
            vec![
                ("x", f32s(&[1, 1], &[1.0])),
                ("y", f32s(&[1, 2], &[1.0, 1.0]))
            ]
        ),
        None
    );
}

#[test]
fn float_to_int_cast_out_of_range() {
    let cast =
        Node::new("Cast", &["x"], &["y"]).with_attr("to", AttrValue::Int(DType::I8.code() as i64));
    assert_eq!(
        hit(&cast, vec![("x", f32s(&[2], &[300.0, 1.0]))]),
        Some("cast-out-of-range")
    );
    assert_eq!(
        hit(&cast, vec![("x", f32s(&[1], &[f32::NAN]))]),
        Some("cast-out-of-range")
    );
    assert_eq!(hit(&cast, vec![("x", f32s(&[2], &[127.9, -128.5]))]), None);
}

#[test]
fn reflect_pad_beyond_the_axis() {
    let pad = Node::new("Pad", &["x", "pads"], &["y"]).with_attr("mode", s("reflect"));
    let x = f32s(&[1, 3], &[1.0, 2.0, 3.0]);
    assert_eq!(
        hit(
            &pad,
            vec![("x", x.clone()), ("pads", i64s(&[4], &[0, 3, 0, 0]))]
        ),
        Some("pad-reflect-beyond-axis")
    );
    assert_eq!(
        hit(
            &pad,
            vec![("x", x.clone()), ("pads", i64s(&[4], &[0, 2, 0, 2]))]
        ),
        None
    );
    // Negative pads crop first or after: the crop leaves 1 element to mirror 2 times.
    assert_eq!(
        hit(
            &pad,
            vec![("x", x.clone()), ("pads", i64s(&[4], &[0, -2, 0, 2]))]
        ),
        Some("pad-reflect-beyond-axis")
    );
    // An axis cropped to nothing (ONNX Runtime: "zero effective input extent").
    let one = f32s(&[1, 1], &[1.0]);
    assert_eq!(
        hit(
            &pad,
            vec![("x", one.clone()), ("pads", i64s(&[4], &[0, 0, 0, -1]))]
        ),
        Some("pad-reflect-beyond-axis")
    );
    // A crop that leaves enough to mirror is defined.
    assert_eq!(
        hit(
            &pad,
            vec![("x", x.clone()), ("pads", i64s(&[4], &[0, -1, 0, 1]))]
        ),
        None
    );
    // Constant padding of any length is defined.
    let constant = Node::new("Pad", &["x", "pads"], &["y"]);
    assert_eq!(
        hit(
            &constant,
            vec![("x", x), ("pads", i64s(&[4], &[0, 9, 0, 9]))]
        ),
        None
    );
}

#[test]
fn same_padding_that_would_be_negative() {
    let pool = |stride: i64| {
        Node::new("MaxPool", &["x"], &["y"])
            .with_attr("auto_pad", s("SAME_UPPER"))
            .with_attr("kernel_shape", AttrValue::Ints(vec![1]))
            .with_attr("strides", AttrValue::Ints(vec![stride]))
    };
    let x = f32s(&[1, 1, 5], &[1.0; 5]);
    // ceil(5 / 3) = 2 windows of 1 starting 3 apart cover 4 positions: pad -1.
    assert_eq!(
        hit(&pool(3), vec![("x", x.clone())]),
        Some("same-pad-negative")
    );
    assert_eq!(hit(&pool(1), vec![("x", x)]), None);
}

#[test]
fn quantizing_zeros_only_dynamically() {
    let q = Node::new("DynamicQuantizeLinear", &["x"], &["y", "s", "z"]);
    assert_eq!(
        hit(&q, vec![("x", f32s(&[2], &[-0.0, 0.0]))]),
        Some("dynamicquantize-zero-range")
    );
    assert_eq!(hit(&q, vec![("x", f32s(&[2], &[0.0, 1.0]))]), None);
}

#[test]
fn quantizing_nan_or_infinity() {
    let q = Node::new("QuantizeLinear", &["x", "s"], &["y"]);
    let scale = f32s(&[], &[0.5]);
    assert_eq!(
        hit(
            &q,
            vec![
                ("x", f32s(&[2], &[f32::NEG_INFINITY, 1.0])),
                ("s", scale.clone())
            ]
        ),
        Some("quantize-nonfinite")
    );
    assert_eq!(
        hit(&q, vec![("x", f32s(&[2], &[-3.0, 1.0])), ("s", scale)]),
        None
    );
}

#[test]
fn bicubic_grid_sample_near_the_border() {
    let gs = Node::new("GridSample", &["x", "grid"], &["y"])
        .with_attr("mode", s("cubic"))
        .with_attr("padding_mode", s("border"));
    let x = f32s(&[1, 1, 8, 8], &[1.0; 64]);
    // (x, y) = (-1, 0): the left edge.
    assert_eq!(
        hit(
            &gs,
            vec![
                ("x", x.clone()),
                ("grid", f32s(&[1, 1, 1, 2], &[-1.0, 0.0]))
            ]
        ),
        Some("gridsample-cubic-border")
    );
    // The middle: all 4 taps inside on both axes.
    assert_eq!(
        hit(
            &gs,
            vec![("x", x.clone()), ("grid", f32s(&[1, 1, 1, 2], &[0.0, 0.0]))]
        ),
        None
    );
    // Zero padding is defined at the border.
    let zeros = Node::new("GridSample", &["x", "grid"], &["y"]).with_attr("mode", s("cubic"));
    assert_eq!(
        hit(
            &zeros,
            vec![("x", x), ("grid", f32s(&[1, 1, 1, 2], &[-1.0, 0.0]))]
        ),
        None
    );
}

#[test]
fn scatter_with_duplicate_indices() {
    let sc = Node::new("ScatterElements", &["d", "i", "u"], &["y"]);
    let d = f32s(&[4], &[0.0; 4]);
    let u = f32s(&[2], &[1.0, 2.0]);
    assert_eq!(
        hit(
            &sc,
            vec![
                ("d", d.clone()),
                ("i", i64s(&[2], &[1, 1])),
                ("u", u.clone())
            ]
        ),
        Some("scatter-duplicate-indices")
    );
    // -3 and 1 are the same element of a length-4 axis.
    assert_eq!(
        hit(
            &sc,
            vec![
                ("d", d.clone()),
                ("i", i64s(&[2], &[-3, 1])),
                ("u", u.clone())
            ]
        ),
        Some("scatter-duplicate-indices")
    );
    assert_eq!(
        hit(
            &sc,
            vec![
                ("d", d.clone()),
                ("i", i64s(&[2], &[0, 1])),
                ("u", u.clone())
            ]
        ),
        None
    );
    // A reduction makes duplicates well defined.
    let add =
        Node::new("ScatterElements", &["d", "i", "u"], &["y"]).with_attr("reduction", s("add"));
    assert_eq!(
        hit(
            &add,
            vec![("d", d.clone()), ("i", i64s(&[2], &[1, 1])), ("u", u)]
        ),
        None
    );
    let nd = Node::new("ScatterND", &["d", "i", "u"], &["y"]);
    assert_eq!(
        hit(
            &nd,
            vec![
                ("d", d),
                ("i", i64s(&[2, 1], &[2, 2])),
                ("u", f32s(&[2], &[1.0, 2.0]))
            ]
        ),
        Some("scatter-duplicate-indices")
    );
}

#[test]
fn a_nan_into_a_min_or_max_scatter() {
    // tract takes min(NaN, 1) as NaN, the reference as 1: the text's f is min, undefined on NaN.
    let reduce = |r: &str| {
        Node::new("ScatterElements", &["d", "i", "u"], &["y"]).with_attr("reduction", s(r))
    };
    let d = f32s(&[2], &[f32::NAN, 3.0]);
    let values = || {
        vec![
            ("d", d.clone()),
            ("i", i64s(&[2], &[0, 1])),
            ("u", f32s(&[2], &[1.0, 1.0])),
        ]
    };
    assert_eq!(hit(&reduce("min"), values()), Some("scatter-reduction-nan"));
    assert_eq!(hit(&reduce("max"), values()), Some("scatter-reduction-nan"));
    // A sum propagates the NaN by IEEE 754; numbers alone are defined.
    assert_eq!(hit(&reduce("add"), values()), None);
    let finite = vec![
        ("d", f32s(&[2], &[2.0, 3.0])),
        ("i", i64s(&[2], &[0, 1])),
        ("u", f32s(&[2], &[1.0, 1.0])),
    ];
    assert_eq!(hit(&reduce("min"), finite), None);
}

#[test]
fn max_unpool_with_duplicate_indices() {
    let mu = Node::new("MaxUnpool", &["x", "i"], &["y"]);
    let x = f32s(&[1, 1, 2], &[1.0, 2.0]);
    assert_eq!(
        hit(
            &mu,
            vec![("x", x.clone()), ("i", i64s(&[1, 1, 2], &[3, 3]))]
        ),
        Some("maxunpool-duplicate-indices")
    );
    assert_eq!(
        hit(&mu, vec![("x", x), ("i", i64s(&[1, 1, 2], &[0, 3]))]),
        None
    );
}

#[test]
fn integer_overflow() {
    let prod = Node::new("ReduceProd", &["x"], &["y"]);
    assert_eq!(
        hit(&prod, vec![("x", i32s(&[3], &[70_000, 70_000, 2]))]),
        Some("integer-overflow")
    );
    assert_eq!(hit(&prod, vec![("x", i32s(&[3], &[7, 70, 2]))]), None);
    let add = Node::new("Add", &["a", "b"], &["y"]);
    assert_eq!(
        hit(
            &add,
            vec![("a", i32s(&[1], &[i32::MAX])), ("b", i32s(&[1], &[1]))]
        ),
        Some("integer-overflow")
    );
    assert_eq!(
        hit(&add, vec![("a", i32s(&[1], &[5])), ("b", i32s(&[1], &[1]))]),
        None
    );
    // Floats overflow to infinity, as IEEE defines.
    assert_eq!(
        hit(
            &add,
            vec![
                ("a", f32s(&[1], &[f32::MAX])),
                ("b", f32s(&[1], &[f32::MAX]))
            ]
        ),
        None
    );
}

#[test]
fn bit_shift_by_the_width() {
    let bs = Node::new("BitShift", &["x", "n"], &["y"]).with_attr("direction", s("LEFT"));
    let x = HostTensor::new(vec![1], Data::U8(vec![1]));
    assert_eq!(
        hit(
            &bs,
            vec![
                ("x", x.clone()),
                ("n", HostTensor::new(vec![1], Data::U8(vec![8])))
            ]
        ),
        Some("bitshift-width")
    );
    assert_eq!(
        hit(
            &bs,
            vec![("x", x), ("n", HostTensor::new(vec![1], Data::U8(vec![7])))]
        ),
        None
    );
}

#[test]
fn integer_power_with_a_negative_exponent() {
    let pow = Node::new("Pow", &["x", "e"], &["y"]);
    assert_eq!(
        hit(
            &pow,
            vec![("x", i64s(&[1], &[2])), ("e", i64s(&[1], &[-1]))]
        ),
        Some("pow-integer-negative-exponent")
    );
    assert_eq!(
        hit(&pow, vec![("x", i64s(&[1], &[2])), ("e", i64s(&[1], &[3]))]),
        None
    );
}

#[test]
fn recurrent_sequence_of_length_zero() {
    let lstm = Node::new("LSTM", &["x", "w", "r", "b", "len"], &["y"]);
    let x = f32s(&[2, 2, 1], &[1.0; 4]);
    let w = f32s(&[1, 4, 1], &[0.1; 4]);
    let r = f32s(&[1, 4, 1], &[0.1; 4]);
    let b = f32s(&[1, 8], &[0.0; 8]);
    assert_eq!(
        hit(
            &lstm,
            vec![
                ("x", x.clone()),
                ("w", w.clone()),
                ("r", r.clone()),
                ("b", b.clone()),
                ("len", i32s(&[2], &[0, 2]))
            ]
        ),
        Some("recurrent-zero-length")
    );
    assert_eq!(
        hit(
            &lstm,
            vec![
                ("x", x),
                ("w", w),
                ("r", r),
                ("b", b),
                ("len", i32s(&[2], &[1, 2]))
            ]
        ),
        None
    );
}

#[test]
fn every_entry_is_tested_and_cites_its_clause() {
    let ids: BTreeSet<&str> = CATALOGUE.iter().map(|e| e.id).collect();
    let tested: BTreeSet<&str> = TESTED.iter().copied().collect();
    assert_eq!(ids, tested, "entries without a test (or tests of no entry)");
    for e in CATALOGUE {
        assert!(
            !e.spec.is_empty() && !e.open.is_empty() && !e.ops.names().is_empty(),
            "{}",
            e.id
        );
    }
}

#[test]
fn clip_of_infinity_without_a_bound() {
    let clip = Node::new("Clip", &["x", "", "hi"], &["y"]);
    let hi = f32s(&[], &[3.0]);
    assert_eq!(
        hit(
            &clip,
            vec![
                ("x", f32s(&[2], &[f32::NEG_INFINITY, 1.0])),
                ("hi", hi.clone())
            ]
        ),
        Some("clip-default-bound-infinite")
    );
    // +inf meets the given max: defined
    assert_eq!(
        hit(
            &clip,
            vec![("x", f32s(&[2], &[f32::INFINITY, 1.0])), ("hi", hi)]
        ),
        None
    );
}

#[test]
fn hard_sigmoid_without_slope_on_an_infinity() {
    let hs = |alpha: f32| {
        Node::new("HardSigmoid", &["x"], &["y"]).with_attr("alpha", AttrValue::Float(alpha))
    };
    let inf = f32s(&[2], &[f32::INFINITY, 1.0]);
    assert_eq!(
        hit(&hs(0.0), vec![("x", inf.clone())]),
        Some("hardsigmoid-zero-alpha-infinite")
    );
    // A slope makes the product infinite, which the clamps define; a finite input with alpha 0
    // gives beta.
    assert_eq!(hit(&hs(0.5), vec![("x", inf)]), None);
    assert_eq!(hit(&hs(0.0), vec![("x", f32s(&[1], &[3.0]))]), None);
}

#[test]
fn transposed_convolution_padding_between_stride_and_dilation() {
    let ct = |pad: i64, stride: i64, dilation: i64| {
        Node::new("ConvTranspose", &["x", "w"], &["y"])
            .with_attr("output_padding", AttrValue::Ints(vec![pad]))
            .with_attr("strides", AttrValue::Ints(vec![stride]))
            .with_attr("dilations", AttrValue::Ints(vec![dilation]))
    };
    let v = || {
        vec![
            ("x", f32s(&[1, 1, 2], &[1.0, 2.0])),
            ("w", f32s(&[1, 1, 2], &[1.0, 1.0])),
        ]
    };
    let open = Some("convtranspose-output-padding-stride-or-dilation");
    // Below the dilation only (ONNX Runtime refuses it), below the stride only.
    assert_eq!(hit(&ct(1, 1, 2), v()), open);
    assert_eq!(hit(&ct(1, 2, 1), v()), open);
    // Below both: valid by every reading.
    assert_eq!(hit(&ct(1, 2, 2), v()), None);
}

#[test]
fn split_into_more_parts_than_full_chunks() {
    let split = |k: i64| {
        let outs: Vec<String> = (0..k).map(|i| format!("y{i}")).collect();
        let outs: Vec<&str> = outs.iter().map(String::as_str).collect();
        Node::new("Split", &["x"], &outs).with_attr("num_outputs", AttrValue::Int(k))
    };
    let x = |n: usize| vec![("x", f32s(&[n], &vec![1.0; n]))];
    let open = Some("split-num-outputs-beyond-chunks");
    // Length 1 into 2 parts: one empty. Length 5 into 4: chunks 2, 2, 1, 0.
    assert_eq!(hit(&split(2), x(1)), open);
    assert_eq!(hit(&split(4), x(5)), open);
    // Length 5 into 3: 2, 2, 1, only the last smaller. Length 6 into 3: equal parts.
    assert_eq!(hit(&split(3), x(5)), None);
    assert_eq!(hit(&split(3), x(6)), None);
}

#[test]
fn resize_pytorch_half_pixel_to_length_one() {
    let r = Node::new("Resize", &["x", "", "", "sizes"], &["y"])
        .with_attr("coordinate_transformation_mode", s("pytorch_half_pixel"))
        .with_attr("mode", s("cubic"));
    let x = f32s(&[1, 1, 2, 3], &[0.6, 0.0, 0.0, 0.62, 0.56, 0.68]);
    // Round 6's tract bundle: the height 2 resized to 1 (the text: row 0; onnx.reference: -0.5).
    assert_eq!(
        hit(
            &r,
            vec![("x", x.clone()), ("sizes", i64s(&[4], &[1, 16, 1, 30]))]
        ),
        Some("resize-pytorch-half-pixel-to-one")
    );
    // Longer outputs, or an axis of length 1 kept at 1, are defined.
    assert_eq!(
        hit(&r, vec![("x", x), ("sizes", i64s(&[4], &[1, 16, 2, 30]))]),
        None
    );
}

#[test]
fn a_global_pool_without_a_spatial_axis_is_undefined() {
    // ONNX Runtime refuses GlobalMaxPool and GlobalLpPool of an N x C input, tract and the
    // reference keep it (round 9, two bundles); N x C x 1 pools one element.
    for op in ["GlobalMaxPool", "GlobalLpPool", "GlobalAveragePool"] {
        let node = Node::new(op, &["x"], &["y"]);
        let nc = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(
            hit(&node, vec![("x", nc)]),
            Some("global-pool-without-spatial-axes")
        );
        let ncl = f32s(&[2, 3, 1], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(hit(&node, vec![("x", ncl)]), None);
    }
}
