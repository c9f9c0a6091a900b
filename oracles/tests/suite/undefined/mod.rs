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
    assert_eq!(hit(&pool(vec![0, 0], 0), vec![("x", x.clone())]), None);
    // auto_pad VALID with ceil_mode, 5 inputs, window 2, stride 2: the text's VALID formula
    // gives 2 windows, its ceil_mode formula 3 (round 14: tract gave the first).
    let valid = |n: usize| {
        let node = Node::new("AveragePool", &["x"], &["y"])
            .with_attr("kernel_shape", AttrValue::Ints(vec![2]))
            .with_attr("strides", AttrValue::Ints(vec![2]))
            .with_attr("auto_pad", s("VALID"))
            .with_attr("ceil_mode", AttrValue::Int(1));
        let v: Vec<f32> = (0..n).map(|i| i as f32).collect();
        hit(&node, vec![("x", f32s(&[1, 1, n], &v))])
    };
    assert_eq!(valid(5), Some("onnx-inconsistent"));
    // 4 inputs: both give 2.
    assert_eq!(valid(4), None);
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

mod entries;
