//! Tests of the input-shape solver.
use super::*;
use crate::text::parse_model;

/// A 7×7 strided conv and a 3×3 pool over dynamic H, W: H, W ≥ 11 are valid, but an image's
/// spatial dims are at least [`IMAGE_FLOOR`]; the batch stays 1; the weight's fixed shape is
/// kept.
const CONV: &str = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
    g (float[batch,3,H,W] x, float[4,3,7,7] w) => (float[batch,4,?,?] y) {\n\
      c = Conv <strides = [2, 2]> (x, w)\n\
      y = MaxPool <kernel_shape = [3, 3]> (c)\n\
    }";

#[test]
fn sizes_are_the_floor_when_every_node_accepts_it() {
    let m = parse_model(CONV).unwrap();
    let p = solve(&m, &Fixed::default()).unwrap();
    assert!(p.valid, "{p}");
    assert_eq!(p.shapes["x"], vec![1, 3, 64, 64], "{p}");
    assert_eq!(p.shapes["w"], vec![4, 3, 7, 7]);
    assert_eq!(p.symbols["batch"], 1);
    let h = p.why.iter().find(|w| w.starts_with("H = 64")).unwrap();
    assert!(h.contains("spatial"), "{h}");
}

#[test]
fn sizes_are_the_smallest_valid_above_the_floor() {
    // The pool's 40×40 window needs the conv's output at 40 or more: H ≥ 85, so 96.
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
        g (float[batch,3,H,W] x, float[4,3,7,7] w) => (float[batch,4,?,?] y) {\n\
          c = Conv <strides = [2, 2]> (x, w)\n\
          y = MaxPool <kernel_shape = [40, 40]> (c)\n\
        }";
    let p = solve(&parse_model(src).unwrap(), &Fixed::default()).unwrap();
    assert_eq!(p.shapes["x"], vec![1, 3, 96, 96], "{p}");
    // Why 96: at 64 the pool's window no longer fits.
    let h = p.why.iter().find(|w| w.starts_with("H = 96")).unwrap();
    assert!(h.contains("at 64") && h.contains("MaxPool"), "{h}");
}

#[test]
fn floors_follow_what_a_dim_is() {
    let f = |dims: &[Dim], axis: usize, name: Option<&str>| {
        floor_of(dims, axis, DType::F32, name, &[]).size
    };
    let k = |n: i64| Dim::Known(n);
    let p = |s: &str| Dim::Param(s.into());
    // An OCR line: height 48 given, width at least the image floor.
    let ocr = [p("b"), k(3), k(48), p("w")];
    assert_eq!(f(&ocr, 3, Some("w")), IMAGE_FLOOR);
    // A taller known side raises the other's floor.
    let tall = [k(1), k(3), k(320), Dim::Unknown];
    assert_eq!(f(&tall, 3, None), 320);
    // Batches and the leading dim of a batched input: 1; sequences: SEQUENCE_FLOOR.
    assert_eq!(f(&ocr, 0, Some("batch_size")), 1);
    assert_eq!(f(&[Dim::Unknown, k(16), k(64)], 0, None), 1);
    assert_eq!(f(&[Dim::Unknown, k(3)], 0, None), 1);
    assert_eq!(f(&[Dim::Unknown], 0, None), SEQUENCE_FLOOR);
    assert_eq!(f(&[k(1), p("seq")], 1, Some("seq")), SEQUENCE_FLOOR);
    // Sizes the metadata names are hints of image dims.
    let h = floor_of(&ocr, 3, DType::F32, Some("w"), &[320, 640]);
    assert_eq!(h.hint, Some(640));
}

#[test]
fn sizes_the_metadata_names_are_tried_first() {
    let mut m = parse_model(CONV).unwrap();
    m.metadata_props.push(pb::StringStringEntryProto {
        key: Some("imgsz".into()),
        value: Some("[320, 256]".into()),
    });
    assert_eq!(metadata_sizes(&m), vec![320, 256]);
    let p = solve(&m, &Fixed::default()).unwrap();
    assert_eq!(p.shapes["x"], vec![1, 3, 320, 256], "{p}");
    assert!(p.why.iter().any(|w| w.contains("metadata")), "{p}");
}

#[test]
fn a_given_shape_binds_its_symbols_everywhere() {
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
        g (float[N,S] a, float[N,S] b) => (float[N,S] y) { y = Add (a, b) }";
    let m = parse_model(src).unwrap();
    let fixed = Fixed {
        shapes: [("a".to_string(), vec![2, 5])].into(),
        ..Fixed::default()
    };
    let p = solve(&m, &fixed).unwrap();
    assert_eq!(p.shapes["b"], vec![2, 5], "{p}");
    // A rank or a known dim the model contradicts, or an unknown input, is an error
    // naming the input.
    let bad = |name: &str, shape: Vec<usize>| {
        let f = Fixed {
            shapes: [(name.to_string(), shape)].into(),
            ..Fixed::default()
        };
        solve(&parse_model(CONV).unwrap(), &f)
            .unwrap_err()
            .to_string()
    };
    let e = bad("x", vec![1, 3, 8]);
    assert!(e.contains("input 'x'") && e.contains("4 dims"), "{e}");
    let e = bad("x", vec![1, 4, 8, 8]);
    assert!(e.contains("dim 1 is 3"), "{e}");
    let e = bad("z", vec![1]);
    assert!(
        e.contains("no input named 'z'") && e.contains("x, w"),
        "{e}"
    );
}

#[test]
fn selectors_take_the_constant_they_are_compared_with() {
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
        g (int64 sr, int64[K] ids) => (bool c, float[K,2] e) {\n\
          k = Constant <value = int64 {16000}> ()\n\
          c = Equal (sr, k)\n\
          t = Constant <value = float[5,2] {1,2,3,4,5,6,7,8,9,10}> ()\n\
          e = Gather (t, ids)\n\
        }";
    let m = parse_model(src).unwrap();
    let p = solve(&m, &Fixed::default()).unwrap();
    assert_eq!(p.values.get("sr"), Some(&16000.0), "{p}");
    assert_eq!(p.ranges.get("ids"), Some(&(0, 5)), "{p}");
    // A given value wins.
    let f = Fixed {
        values: [("sr".to_string(), 8000.0)].into(),
        ..Fixed::default()
    };
    assert_eq!(solve(&m, &f).unwrap().values["sr"], 8000.0);
}

#[test]
fn no_size_fits_is_said_with_the_node() {
    // A reshape to a fixed 7 elements: no candidate size of S gives 7 · 1 ... except 7,
    // which is not a candidate.
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
        g (float[S] x) => (float[7] y) {\n\
          s = Constant <value = int64[1] {7}> ()\n\
          y = Reshape (x, s)\n\
        }";
    let m = parse_model(src).unwrap();
    let p = solve(&m, &Fixed::default()).unwrap();
    assert!(!p.valid);
    assert!(p.why.iter().any(|w| w.contains("Reshape")), "{p}");
}

#[test]
fn concretized_models_have_static_shapes_everywhere() {
    let m = parse_model(CONV).unwrap();
    let p = solve(&m, &Fixed::default()).unwrap();
    let c = concretize(&m, &p.shapes);
    assert_eq!(c.graph.value_type("y").to_string(), "f32[1,4,27,27]");
    assert_eq!(c.graph.value_type("x").to_string(), "f32[1,3,64,64]");
    // The original keeps its symbols.
    assert!(
        !m.graph.real_inputs()[0]
            .r#type
            .as_ref()
            .unwrap()
            .eq(c.graph.real_inputs()[0].r#type.as_ref().unwrap())
    );
}

#[test]
fn concretized_models_declare_their_symbols_everywhere() {
    // A declared intermediate type that names an input's symbol takes its size too.
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
        g (float[1,seq] x) => (float[1,seq] y) <float[1,seq] r> {\n\
          r = Relu (x)\n\
          y = Neg (r)\n\
        }";
    let m = parse_model(src).unwrap();
    let c = concretize(&m, &[("x".to_string(), vec![1, 16])].into());
    let declared =
        |v: &pb::ValueInfoProto| ValueType::from_proto(v.r#type.as_ref().unwrap()).to_string();
    assert_eq!(declared(&c.graph.outputs[0]), "f32[1,16]");
    assert_eq!(declared(&c.graph.value_info[0]), "f32[1,16]");
}

#[test]
fn lowering_symbols_one_by_one_has_a_budget() {
    // A's pool needs 40: every symbol starts at 48, then each of the 150 others could go
    // down to its floor, one inference each: the search stops after MAX_LOWERING_TRIALS.
    let n = MAX_LOWERING_TRIALS + 50;
    let others: Vec<String> = (0..n).map(|i| format!(", float[B{i}] b{i}")).collect();
    let src = format!(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[1,1,A] a{}) => (float[1,1,?] y) {{\n\
           y = MaxPool <kernel_shape = [40]> (a)\n\
         }}",
        others.concat()
    );
    let m = parse_model(&src).unwrap();
    let p = solve(&m, &Fixed::default()).unwrap();
    assert!(p.valid, "{p}");
    assert_eq!(p.symbols["A"], 48);
    // A tries 16, 24 and 32 (all too small), then each B one size.
    let lowered = (0..n)
        .filter(|i| p.symbols[&format!("B{i}")] == SEQUENCE_FLOOR)
        .count();
    assert_eq!(lowered, MAX_LOWERING_TRIALS - 3, "{p}");
    let kept = p.why.iter().filter(|w| w.contains("stops after")).count();
    assert_eq!(kept, n - lowered, "{p}");
}

#[test]
fn shapes_and_values_parse() {
    assert_eq!(
        parse_shape("x:1x3x320x320").unwrap(),
        ("x".into(), vec![1, 3, 320, 320])
    );
    assert_eq!(parse_shape("a:b:2,3").unwrap(), ("a:b".into(), vec![2, 3]));
    assert_eq!(parse_shape("sr:").unwrap(), ("sr".into(), vec![]));
    // Polygraphy's form.
    assert_eq!(
        parse_shape("x:[1,3,64,64]").unwrap(),
        ("x".into(), vec![1, 3, 64, 64])
    );
    assert_eq!(parse_shape("sr:[]").unwrap(), ("sr".into(), vec![]));
    assert!(parse_shape("x:[1,3").is_err());
    assert!(parse_shape("x").unwrap_err().to_string().contains("NAME:"));
    assert!(
        parse_shape("x:1xq")
            .unwrap_err()
            .to_string()
            .contains("'q'")
    );
    assert_eq!(parse_value("sr=16000").unwrap(), ("sr".into(), 16000.0));
    assert!(
        parse_value("sr=abc")
            .unwrap_err()
            .to_string()
            .contains("not a number")
    );
}
