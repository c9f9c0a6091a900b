//! Edge cases that campaigns ran into, each written as a small ONNX text model and run on the
//! reference interpreter and on burn-ndarray (our interpreter over burn's tensor API): empty
//! tensors, out-of-range one-hot indices, indices smaller than the data, exclusive sums over
//! NaN, zero norms, narrow integer casts, constant slices under MeanVarianceNormalization.
#![cfg(feature = "burn")]
use mutagraph_backends::catalog::{Config, create};
use mutagraph_backends::value::{HostTensor, NamedValues, Value};
use mutagraph_ir::DType;
use mutagraph_ir::text::parse_model;

fn run(backend: &str, src: &str, inputs: &[(&str, DType, Vec<usize>, Vec<f64>)]) -> Vec<Value> {
    let model = parse_model(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut b = create(backend, &Config::default()).unwrap();
    let mut p = b
        .prepare(&model.to_bytes())
        .unwrap_or_else(|e| panic!("{backend}: {e}"));
    let feed: NamedValues = inputs
        .iter()
        .map(|(n, d, s, v)| {
            (
                n.to_string(),
                Value::Tensor(HostTensor::from_f64s(*d, s.clone(), v).unwrap()),
            )
        })
        .collect();
    p.run(&feed)
        .unwrap_or_else(|e| panic!("{backend}: {e}"))
        .into_iter()
        .map(|(_, v)| v)
        .collect()
}

fn values(v: &Value) -> (Vec<usize>, Vec<f64>) {
    let t = v.tensor().unwrap();
    (t.shape.clone(), t.to_f64s().unwrap())
}

/// Runs on both and checks that burn gives `want` (shape, values; NaN compared as NaN).
fn check(src: &str, inputs: &[(&str, DType, Vec<usize>, Vec<f64>)], want: (Vec<usize>, Vec<f64>)) {
    for backend in ["reference", "burn-ndarray"] {
        let out = run(backend, src, inputs);
        let (shape, got) = values(&out[0]);
        assert_eq!(shape, want.0, "{backend}: shape\n{src}");
        assert_eq!(got.len(), want.1.len(), "{backend}\n{src}");
        for (g, w) in got.iter().zip(&want.1) {
            assert!(
                (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 1e-5 * w.abs().max(1.0),
                "{backend}: got {got:?}, want {:?}\n{src}",
                want.1
            );
        }
    }
}

const F: DType = DType::F32;

#[test]
fn resize_of_an_empty_tensor_is_empty() {
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 0, 2] x) => (float[1, 0, 4] y)
<float[3] scales = {1, 1, 2}>
{ y = Resize <mode: string = "nearest"> (x, "", scales) }"#;
    check(
        src,
        &[("x", F, vec![1, 0, 2], vec![])],
        (vec![1, 0, 4], vec![]),
    );
}

#[test]
fn resize_nearest_sends_an_exact_tie_the_way_its_mode_says() {
    // 15 to 22 by sizes, asymmetric: x_original = 11 / (22 / 15) = 7.5 exactly in the text's
    // arithmetic (7.500000000000001 dividing by the f64 ratio), and round_prefer_floor takes
    // pixel 7 there.
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 1, 15] x) => (float[1, 1, 1, 22] y)
<int64[4] sizes = {1, 1, 1, 22}>
{ y = Resize <mode: string = "nearest", coordinate_transformation_mode: string = "asymmetric", nearest_mode: string = "round_prefer_floor"> (x, "", "", sizes) }"#;
    let want = [
        0, 1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8, 9, 10, 10, 11, 12, 12, 13, 14, 14,
    ];
    check(
        src,
        &[("x", F, vec![1, 1, 1, 15], (0..15).map(f64::from).collect())],
        (
            vec![1, 1, 1, 22],
            want.iter().map(|&i| f64::from(i)).collect(),
        ),
    );
}

#[test]
fn expand_and_where_to_an_empty_shape() {
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 0, 1] x) => (float[2, 0, 3] y)
<int64[3] shape = {2, 0, 3}>
{ y = Expand (x, shape) }"#;
    check(
        src,
        &[("x", F, vec![1, 0, 1], vec![])],
        (vec![2, 0, 3], vec![]),
    );
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[0] x) => (float[0] y)
<bool[0] c = {}, float one = {1}>
{ y = Where (c, x, one) }"#;
    check(src, &[("x", F, vec![0], vec![])], (vec![0], vec![]));
    // Operands whose ones meet another operand's sizes and zeros: every one of them made
    // empty at the whole broadcast shape (slicing an operand kept its ones, and burn's
    // mask_where could not broadcast them).
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[0, 5, 5] x, float[1, 0, 1, 1] z) => (float[1, 0, 5, 5] y)
<bool[1] c = {1}>
{ y = Where (c, x, z) }"#;
    check(
        src,
        &[
            ("x", F, vec![0, 5, 5], vec![]),
            ("z", F, vec![1, 0, 1, 1], vec![]),
        ],
        (vec![1, 0, 5, 5], vec![]),
    );
}

#[test]
fn one_hot_indices_out_of_range_give_off_values_and_empty_indices_an_empty_result() {
    // ONNX: an index outside [-depth, depth - 1] makes a row of off values; a float index is
    // truncated first (-0.5 -> 0).
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[4] i) => (float[4, 3] y)
<float[1] depth = {3}, float[2] vals = {-1, 5}>
{ y = OneHot <axis: int = -1> (i, depth, vals) }"#;
    check(
        src,
        &[("i", F, vec![4], vec![7.0, -1.0, -0.5, 1e30])],
        (
            vec![4, 3],
            vec![
                -1.0, -1.0, -1.0, // 7: out of range
                -1.0, -1.0, 5.0, // -1: the last class
                5.0, -1.0, -1.0, // -0.5: truncated to 0
                -1.0, -1.0, -1.0, // 1e30: out of range
            ],
        ),
    );
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (int64[0] i) => (int64[3, 0] y)
<int64 depth = {3}, int64[2] vals = {0, 1}>
{ y = OneHot <axis: int = 0> (i, depth, vals) }"#;
    check(
        src,
        &[("i", DType::I64, vec![0], vec![])],
        (vec![3, 0], vec![]),
    );
}

#[test]
fn gather_elements_with_indices_smaller_than_the_data() {
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] x) => (float[1, 2] y)
<int64[1, 2] idx = {1, 0}>
{ y = GatherElements <axis: int = 0> (x, idx) }"#;
    check(
        src,
        &[("x", F, vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])],
        (vec![1, 2], vec![4.0, 2.0]),
    );
}

#[test]
fn exclusive_cumsum_does_not_subtract() {
    // The element itself never enters its exclusive sum: a NaN or Inf stays out of it.
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y)
<int64 axis = {0}>
{ y = CumSum <exclusive: int = 1> (x, axis) }"#;
    check(
        src,
        &[("x", F, vec![4], vec![f64::INFINITY, 1.0, 2.0, 3.0])],
        (
            vec![4],
            vec![0.0, f64::INFINITY, f64::INFINITY, f64::INFINITY],
        ),
    );
    check(
        src,
        &[("x", F, vec![4], vec![1.0, 2.0, 3.0, f64::NAN])],
        (vec![4], vec![0.0, 1.0, 3.0, 6.0]),
    );
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1] x) => (float[1] y)
<int64 axis = {0}>
{ y = CumSum <exclusive: int = 1, reverse: int = 1> (x, axis) }"#;
    check(
        src,
        &[("x", F, vec![1], vec![f64::NAN])],
        (vec![1], vec![0.0]),
    );
}

#[test]
fn lp_normalization_of_a_zero_slice_stays_zero() {
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 2] x) => (float[2, 2] y)
{ y = LpNormalization <axis: int = -1, p: int = 2> (x) }"#;
    check(
        src,
        &[("x", F, vec![2, 2], vec![0.0, 0.0, 3.0, 4.0])],
        (vec![2, 2], vec![0.0, 0.0, 0.6, 0.8]),
    );
}

#[test]
fn a_narrow_integer_cast_stores_what_the_type_holds() {
    // -1.0 -> uint8 is implementation-defined in ONNX; whatever is stored, the next op sees the
    // stored value (here the two's-complement wrap, as the reference does), not -1.
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[3] x) => (float[3] y)
{
   u = Cast <to: int = 2> (x)
   y = Cast <to: int = 1> (u)
}"#;
    check(
        src,
        &[("x", F, vec![3], vec![-1.0, 256.0, 7.0])],
        (vec![3], vec![255.0, 0.0, 7.0]),
    );
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (int32[2] x) => (float[2] y)
{
   u = Cast <to: int = 3> (x)
   y = Cast <to: int = 1> (u)
}"#;
    check(
        src,
        &[("x", DType::I32, vec![2], vec![200.0, -129.0])],
        (vec![2], vec![-56.0, 127.0]),
    );
    // 32-bit targets wrap too where burn's integers are 64-bit (NdArray).
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1] x) => (float[1] y)
{
   u = Cast <to: int = 12> (x)
   y = Cast <to: int = 1> (u)
}"#;
    check(
        src,
        &[("x", F, vec![1], vec![-1.0])],
        (vec![1], vec![4294967295.0]),
    );
}

#[test]
fn mean_variance_normalization_of_a_constant_slice_is_zero() {
    // ONNX's function body: (X - mean) / (sqrt(var) + 1e-9); a constant slice has var = 0.
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3] x) => (float[1, 3] y)
{ y = MeanVarianceNormalization <axes: ints = [1]> (x) }"#;
    check(
        src,
        &[("x", F, vec![1, 3], vec![0.1, 0.1, 0.1])],
        (vec![1, 3], vec![0.0, 0.0, 0.0]),
    );
    // The epsilon is added to the standard deviation, not to the variance: with sd = 2^-14
    // (exact in f32) the first gives 0.99998, the second 0.888.
    let (a, b) = (1.0, 1.0 + 2f64.powi(-13));
    let sd = 2f64.powi(-14);
    let m = (a + b) / 2.0;
    check(
        src.replace("float[1, 3]", "float[1, 2]").as_str(),
        &[("x", F, vec![1, 2], vec![a, b])],
        (
            vec![1, 2],
            vec![(a - m) / (sd + 1e-9), (b - m) / (sd + 1e-9)],
        ),
    );
}

#[test]
fn reference_resize_with_a_non_finite_region_does_not_panic() {
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1] x) => (float[2, 4] y)
<float[4] roi = {-inf, 0.1, 0.9, -inf}, int64[2] sizes = {2, 4}>
{ y = Resize <mode: string = "cubic", coordinate_transformation_mode: string = "tf_crop_and_resize"> (x, roi, "", sizes) }"#;
    let out = run("reference", src, &[("x", F, vec![1, 1], vec![0.5])]);
    let (shape, v) = values(&out[0]);
    assert_eq!(shape, [2, 4]);
    assert!(v.iter().any(|x| x.is_nan()), "{v:?}");
}

#[test]
fn reference_grid_sample_clamps_only_outside_the_border_range() {
    // x = 3.5 on a row of 4 (align_corners = 0) is inside [-0.5, 3.5]: not clamped; the bicubic
    // taps 2, 3, 4, 5 are clamped one by one to 2, 3, 3, 3 with weights (a = -0.75, t = 0.5)
    // -0.09375, 0.59375, 0.59375, -0.09375: 3.09375 (ONNX Runtime and tract agree).
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 1, 4] x) => (float[1, 1, 1, 1] y)
<float[1, 1, 1, 2] grid = {1, 1}>
{ y = GridSample <mode: string = "bicubic", padding_mode: string = "border"> (x, grid) }"#;
    let out = run(
        "reference",
        src,
        &[("x", F, vec![1, 1, 1, 4], vec![0.0, 1.0, 2.0, 3.0])],
    );
    let (_, v) = values(&out[0]);
    assert!((v[0] - 3.09375).abs() < 1e-6, "{v:?}");
}

#[test]
fn scatter_elements_with_indices_smaller_than_the_data() {
    // Indices [1, 2] on data [3, 3], axis 1: only row 0 is written; rows 1 and 2 stay.
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[3, 3] x) => (float[3, 3] y)
<int64[1, 2] idx = {2, 0}, float[1, 2] upd = {10, 20}>
{ y = ScatterElements <axis: int = 1> (x, idx, upd) }"#;
    let x: Vec<f64> = (1..=9).map(f64::from).collect();
    check(
        src,
        &[("x", F, vec![3, 3], x.clone())],
        (
            vec![3, 3],
            vec![20.0, 2.0, 10.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        ),
    );
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[3, 3] x) => (float[3, 3] y)
<int64[2, 1] idx = {1, 1}, float[2, 1] upd = {10, 20}>
{ y = ScatterElements <axis: int = 0, reduction: string = "add"> (x, idx, upd) }"#;
    check(
        src,
        &[("x", F, vec![3, 3], x)],
        (
            vec![3, 3],
            vec![1.0, 2.0, 3.0, 34.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        ),
    );
}

#[test]
fn global_pooling_of_a_rank_two_input_keeps_it() {
    // No spatial axis to pool over: Max and Average give the input, Lp its absolute value.
    for (op, want) in [
        ("GlobalMaxPool", vec![-1.5, 2.0, 0.0, -3.0]),
        ("GlobalAveragePool", vec![-1.5, 2.0, 0.0, -3.0]),
        ("GlobalLpPool", vec![1.5, 2.0, 0.0, 3.0]),
    ] {
        let src = format!(
            r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 2] x) => (float[2, 2] y)
{{ y = {op} (x) }}"#
        );
        let out = run(
            "reference",
            &src,
            &[("x", F, vec![2, 2], vec![-1.5, 2.0, 0.0, -3.0])],
        );
        assert_eq!(values(&out[0]), (vec![2, 2], want), "{op}");
    }
}

#[test]
fn narrow_integer_arithmetic_wraps_at_every_op() {
    // u8: 3 - 5 wraps to 254 before the Cast, as uint8 arithmetic does (burn holds it in i64,
    // where it would stay -2).
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (uint8[2] a, uint8[2] b) => (float[2] y) {
   d = Sub (a, b)
   y = Cast <to: int = 1> (d)
}"#;
    let u8s = DType::U8;
    check(
        src,
        &[
            ("a", u8s, vec![2], vec![3.0, 9.0]),
            ("b", u8s, vec![2], vec![5.0, 1.0]),
        ],
        (vec![2], vec![254.0, 8.0]),
    );
    // int8: 100 + 100 wraps to -56.
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (int8[1] a) => (float[1] y) {
   d = Add (a, a)
   y = Cast <to: int = 1> (d)
}"#;
    check(
        src,
        &[("a", DType::I8, vec![1], vec![100.0])],
        (vec![1], vec![-56.0]),
    );
}

/// u64 values above i64::MAX order as unsigned in the reference's integer reductions:
/// ReduceMin of 0 and u64::MAX is 0, ReduceMax is u64::MAX (held as i64 bits, a signed
/// comparison gave the opposite).
#[test]
fn unsigned_64_bit_reductions_order_as_unsigned() {
    let feed = |vals: Vec<u64>| -> NamedValues {
        let n = vals.len();
        let t = HostTensor::new(vec![1, n], mutagraph_backends::value::Data::U64(vals));
        vec![("x".to_string(), Value::Tensor(t))]
    };
    for (op, want) in [("ReduceMin", 0u64), ("ReduceMax", u64::MAX)] {
        let src = format!(
            "<ir_version: 8, opset_import: [\"\" : 13]>\n\
             g (uint64[1, 3] x) => (uint64[1] y) {{ y = {op} <axes = [1], keepdims = 0> (x) }}"
        );
        let model = parse_model(&src).unwrap();
        let mut b = create("reference", &Config::default()).unwrap();
        let mut p = b.prepare(&model.to_bytes()).unwrap();
        let out = p.run(&feed(vec![0, u64::MAX, 5])).unwrap();
        let got = match &out[0].1.tensor().unwrap().data {
            mutagraph_backends::value::Data::U64(v) => v.clone(),
            d => panic!("{op}: {d:?}"),
        };
        assert_eq!(got, vec![want], "{op}");
    }
}

#[test]
fn instance_normalization_over_no_channels_is_empty() {
    // Its per-channel scale and bias are reshaped to [1, 0, 1]: burn reads a 0 in a reshape
    // target as "keep this dimension", so the interpreter makes empty results afresh.
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 0, 2] x, float[0] s, float[0] b) => (float[1, 0, 2] y)
{
  y = InstanceNormalization (x, s, b)
}"#;
    check(
        src,
        &[
            ("x", F, vec![1, 0, 2], vec![]),
            ("s", F, vec![0], vec![]),
            ("b", F, vec![0], vec![]),
        ],
        (vec![1, 0, 2], vec![]),
    );
}

#[test]
fn a_cubic_resize_of_bytes_saturates_where_it_overshoots() {
    // Cubic weights are negative at the edges of a step: 0, 255 interpolated overshoots below 0
    // and above 255. A byte holds neither: the result saturates (tract and ONNX's reference
    // implementation do), it does not wrap 256 to 0.
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (uint8[1, 4] x) => (uint8[1, 8] y)
<float[2] scales = {1, 2}>
{ y = Resize <mode: string = "cubic"> (x, "", scales) }"#;
    let out = run(
        "reference",
        src,
        &[("x", DType::U8, vec![1, 4], vec![0.0, 0.0, 255.0, 255.0])],
    );
    let (shape, v) = values(&out[0]);
    assert_eq!(shape, vec![1, 8]);
    assert!(v.iter().all(|x| (0.0..=255.0).contains(x)), "{v:?}");
    // Monotone around the step: the overshoots are clamped, not folded over.
    assert_eq!((v[0], v[7]), (0.0, 255.0), "{v:?}");
    assert!(v[2] <= v[3] && v[3] <= v[4] && v[4] <= v[5], "{v:?}");
}

/// A MatMul of empty vectors: burn reads a 0 in a reshape target as "keep this axis", so the
/// interpreter's own reshape of the second operand to [.., 0, 1] asked for one element of
/// none and panicked, filed as burn's MatMul crash (round 9 zoo, `crash-burn-matmul-38cdc8d6`).
/// The operands are made empty afresh: what burn does next is burn's own.
#[test]
fn matmul_of_empty_vectors_is_not_stopped_by_the_interpreters_reshape() {
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
               g (float[0] a, float[0] b) => (float y) { y = MatMul (a, b) }";
    let ins = [("a", F, vec![0], vec![]), ("b", F, vec![0], vec![])];
    let reference = run("reference", src, &ins);
    assert_eq!(values(&reference[0]), (vec![], vec![0.0]));
    let burn = std::panic::catch_unwind(|| run("burn-ndarray", src, &ins));
    let why = match burn {
        Ok(out) => format!("{:?}", values(&out[0])),
        Err(p) => p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    };
    assert!(!why.contains("Reshape"), "{why}");
}

/// A Conv over no channels: the interpreter's own reshape of the rank-6 input to burn's
/// [N, C, H, W] read the 0 as "keep this axis" and panicked, filed as burn's Conv crash (round
/// 12, `crash-burn-conv-38cdc8d6`). Every reshape of the adapter's own now makes an empty
/// tensor afresh; the result is the empty [1, 0, 1, 1] ONNX defines.
#[test]
fn conv_over_no_channels_is_not_stopped_by_the_interpreters_reshape() {
    let src = r#"<ir_version: 8, opset_import: ["" : 16]>
g (float[1, 0, 1, 1] x, float[0, 0, 3, 3] w) => (float[1, 0, 1, 1] y)
{ y = Conv <pads: ints = [1, 1, 1, 1], kernel_shape: ints = [3, 3]> (x, w) }"#;
    let ins = [
        ("x", F, vec![1, 0, 1, 1], vec![]),
        ("w", F, vec![0, 0, 3, 3], vec![]),
    ];
    check(src, &ins, (vec![1, 0, 1, 1], vec![]));
}
