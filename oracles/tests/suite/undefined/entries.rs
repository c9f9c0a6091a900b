//! The catalogue's entries, continued: casts, padding, quantization, sampling, scatters,
//! integer arithmetic, recurrence, clipping and the last geometry cases.
use super::*;

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
