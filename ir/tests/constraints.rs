//! Registry constraints that keep mutants valid: constant indices must address existing
//! elements, GatherND's batch dimensions must agree, and the parameter buckets the generators
//! draw from leave out values ONNX leaves ambiguous.
use mutagraph_ir::attr::AttrValue;
use mutagraph_ir::registry::{Buckets, Registry};
use mutagraph_ir::text::parse_model;
use mutagraph_ir::validate::validate;

fn valid(body: &str) -> Result<(), String> {
    let src = format!("<ir_version: 8, opset_import: [\"\" : 17]>\n{body}");
    let m = parse_model(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    validate(&m).map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn constant_indices_must_be_in_range() {
    let gather = |idx: &str| {
        valid(&format!(
            "g (float[2, 3] x) => (float[2, 2] y) <int64[2] i = {{{idx}}}> \
             {{ y = Gather <axis: int = 1> (x, i) }}"
        ))
    };
    assert!(gather("0, 2").is_ok());
    assert!(gather("-3, 2").is_ok());
    let e = gather("0, 3").unwrap_err();
    assert!(
        e.contains("index 3 is out of range for axis 1 of length 3"),
        "{e}"
    );
    assert!(gather("-4, 0").is_err());

    let elements = |idx: &str| {
        valid(&format!(
            "g (float[2, 3] x) => (float[1, 2] y) <int64[1, 2] i = {{{idx}}}> \
             {{ y = GatherElements <axis: int = 0> (x, i) }}"
        ))
    };
    assert!(elements("1, 0").is_ok());
    assert!(elements("2, 0").unwrap_err().contains("out of range"));

    let scatter = |idx: &str| {
        valid(&format!(
            "g (float[2, 3] x) => (float[2, 3] y) <int64[1, 2] i = {{{idx}}}, float[1, 2] u = {{1, 2}}> \
             {{ y = ScatterElements <axis: int = 1> (x, i, u) }}"
        ))
    };
    assert!(scatter("2, -3").is_ok());
    assert!(scatter("3, 0").unwrap_err().contains("out of range"));
}

#[test]
fn gather_nd_tuples_and_batch_dims() {
    let nd = |dims: &str, idx: &str, batch: i64, out: &str| {
        valid(&format!(
            "g (float[2, 3, 4] x) => (float{out} y) <int64{dims} i = {{{idx}}}> \
             {{ y = GatherND <batch_dims: int = {batch}> (x, i) }}"
        ))
    };
    // Tuples of length 2 address dims 0 and 1 (lengths 2 and 3).
    assert!(nd("[2, 2]", "1, 2, 0, 0", 0, "[2, 4]").is_ok());
    let e = nd("[2, 2]", "1, 3, 0, 0", 0, "[2, 4]").unwrap_err();
    assert!(e.contains("index 3 is out of range for dimension 1"), "{e}");
    assert!(nd("[2, 2]", "2, 0, 0, 0", 0, "[2, 4]").is_err());
    // batch_dims = 1: tuples address dims 1 and 2; the batch dimension must match the data's.
    assert!(nd("[2, 2]", "2, 3, 0, 1", 1, "[2]").is_ok());
    assert!(nd("[2, 2]", "3, 0, 0, 1", 1, "[2]").is_err());
    let e = nd("[3, 2]", "0, 0, 0, 0, 0, 0", 1, "[3]").unwrap_err();
    assert!(
        e.contains("batch dimension 0 is 2 in the data and 3 in the indices"),
        "{e}"
    );
}

#[test]
fn generators_never_draw_ambiguous_values() {
    let reg = Registry::global();
    let attr = |op: &str, name: &str| {
        reg.get("", op)
            .unwrap()
            .attrs
            .iter()
            .filter(|a| a.name == name)
            .map(|a| a.buckets.clone())
            .collect::<Vec<_>>()
    };
    // An empty `axes` attribute of a reduction: all axes (ONNX Runtime) or none (others).
    for op in [
        "ReduceMean",
        "ReduceSum",
        "ReduceMax",
        "ReduceL2",
        "ReduceLogSumExp",
    ] {
        let b = &attr(op, "axes")[0];
        assert!(matches!(b, Buckets::IntsNonEmpty), "{op}: {b:?}");
        assert_eq!(b.bucket_of(&AttrValue::Ints(vec![])), None);
        assert_eq!(b.bucket_of(&AttrValue::Ints(vec![1, 1])), Some(1));
        assert_eq!(b.labels(), ["all0", "all1", "uniform", "mixed"]);
    }
    let b = &attr("MeanVarianceNormalization", "axes")[0];
    assert_eq!(b.bucket_of(&AttrValue::Ints(vec![])), None);
    // Unordered results (sorted = 0) cannot be compared element by element.
    let b = &attr("TopK", "sorted")[0];
    assert_eq!(b.bucket_of(&AttrValue::Int(0)), None);
    assert_eq!(b.bucket_of(&AttrValue::Int(1)), Some(0));
    // Negative thresholds and epsilons: overlapping Shrink branches, rejected by ONNX Runtime.
    let neg = AttrValue::Float(-0.5);
    assert_eq!(attr("Shrink", "lambd")[0].bucket_of(&neg), None);
    assert_eq!(attr("Celu", "alpha")[0].bucket_of(&neg), None);
    assert_eq!(attr("LSTM", "clip")[0].bucket_of(&neg), None);
    assert_eq!(
        attr("LayerNormalization", "epsilon")[0].bucket_of(&neg),
        None
    );
    assert_eq!(
        attr("LayerNormalization", "epsilon")[0].bucket_of(&AttrValue::Float(0.0)),
        Some(0)
    );
    // They are still valid ONNX: validation accepts them.
    assert!(
        valid("g (float[2] x) => (float[2] y) { y = Shrink <lambd: float = -1.0> (x) }").is_ok()
    );
}

#[test]
fn conv_transpose_output_padding_and_padding_an_empty_axis() {
    // output_padding must stay below max(stride, dilation), also when kernel_shape is left
    // to the weights.
    let ct = |op: &str| {
        valid(&format!(
            "g (float[1, 2, 1, 1] x) => (float[1, 1, 2, 2] y) <float[2, 1, 1, 1] w = {{1, 1}}> \
             {{ y = ConvTranspose <strides: ints = [2, 2], output_padding: ints = {op}> (x, w) }}"
        ))
    };
    assert!(ct("[1, 1]").is_ok());
    let e = ct("[2, 1]").unwrap_err();
    assert!(e.contains("output_padding 2 must be smaller"), "{e}");
    // edge / reflect / wrap padding has nothing to repeat on an empty axis.
    let pad = |mode: &str| {
        valid(&format!(
            "g (float[0, 2] x) => (float[2, 2] y) <int64[4] p = {{1, 0, 1, 0}}> \
             {{ y = Pad <mode: string = \"{mode}\"> (x, p) }}"
        ))
    };
    assert!(pad("constant").is_ok());
    for mode in ["edge", "reflect", "wrap"] {
        let e = pad(mode).unwrap_err();
        assert!(e.contains("empty"), "{mode}: {e}");
    }
}

#[test]
fn compress_reverse_sequence_and_conv_transpose_bias() {
    let compress = |n: usize| {
        let c = vec!["1"; n].join(", ");
        valid(&format!(
            "g (float[3, 2] x) => (float[{n}, 2] y) <bool[{n}] c = {{{c}}}> \
             {{ y = Compress <axis: int = 0> (x, c) }}"
        ))
    };
    assert!(compress(2).is_ok());
    assert!(compress(3).is_ok());
    let e = compress(4).unwrap_err();
    assert!(e.contains("4 entries for 3"), "{e}");
    let rev = |lens: &str, n: usize| {
        valid(&format!(
            "g (float[4, 2] x) => (float[4, 2] y) <int64[{n}] l = {{{lens}}}> \
             {{ y = ReverseSequence <batch_axis: int = 1, time_axis: int = 0> (x, l) }}"
        ))
    };
    assert!(rev("4, 1", 2).is_ok());
    assert!(
        rev("1, 1, 1", 3)
            .unwrap_err()
            .contains("3 entries for a batch of 2")
    );
    assert!(rev("5, 1", 2).unwrap_err().contains("outside 0..=4"));
    let ct = |b: usize| {
        let v = vec!["0"; b].join(", ");
        valid(&format!(
            "g (float[1, 2, 1, 1] x) => (float[1, 3, 1, 1] y) <float[2, 3, 1, 1] w = {{1, 1, 1, 1, 1, 1}}, float[{b}] b = {{{v}}}> \
             {{ y = ConvTranspose (x, w, b) }}"
        ))
    };
    assert!(ct(3).is_ok());
    assert!(ct(2).unwrap_err().contains("bias has shape"));
}

/// The cases ONNX defines inconsistently are valid (imported models keep them) but reported
/// as ambiguous, so that generators and the minimizer stay out of them.
#[test]
fn open_cases_are_valid_but_reported_ambiguous() {
    let ambiguous = |body: &str| -> Vec<String> {
        let src = format!("<ir_version: 8, opset_import: [\"\" : 17]>\n{body}");
        let mut m = parse_model(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        let r = mutagraph_ir::infer::infer_model(&mut m, Default::default());
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        r.ambiguous.into_iter().map(|(_, why)| why).collect()
    };
    let conv_t = |os: &str| {
        ambiguous(&format!(
            "g (float[1, 1, 3, 3] x, float[1, 2, 3, 3] w) => (float[1, 2, 9, 7] y) \
             {{ y = ConvTranspose <strides: ints = [3, 2], output_shape: ints = [{os}]> (x, w) }}"
        ))
    };
    // Within the reach (3*2+3 = 9, 2*2+3 = 7): defined.
    assert!(conv_t("9, 7").is_empty());
    assert!(conv_t("8, 6").is_empty());
    // One past it (the suite's own test_convtranspose_output_shape): open.
    let why = conv_t("10, 8");
    assert!(
        why.iter()
            .any(|w| w.contains("beyond what the geometry reaches (9)")),
        "{why:?}"
    );
    // An Einsum label of size 1 in one operand and 3 in the other: broadcasting that ONNX
    // enables only through an ellipsis.
    let einsum = |b: usize| {
        ambiguous(&format!(
            "g (float[2, 3, 4] x, float[2, {b}, 4] z) => (float[2, 3] y) \
             {{ y = Einsum <equation: string = \"bhj,bhj->bh\"> (x, z) }}"
        ))
    };
    assert!(einsum(3).is_empty(), "{:?}", einsum(3));
    let why = einsum(1);
    assert!(
        why.iter()
            .any(|w| w.contains("label 'h' has size 1 in one operand and 3")),
        "{why:?}"
    );
}

#[test]
fn conv_window_attributes_fit_the_weight_when_the_input_rank_is_unknown() {
    // A 1-D conv whose input comes with no shape (as out of an `If` whose branches differ):
    // `strides` of the wrong length must still be refused, as ONNX Runtime's shape inference
    // refuses it at load.
    let model = |attrs: &str| {
        let mut m = mutagraph_ir::text::parse_model(&format!(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[1,2,8] x, float[3,2,3] w) => (float[1,3,6] y) {{ y = Conv {attrs} (x, w) }}"
        ))
        .unwrap();
        if let Some(mutagraph_ir::pb::type_proto::Value::TensorType(t)) =
            m.graph.inputs[0].r#type.as_mut().unwrap().value.as_mut()
        {
            t.shape = None;
        }
        m
    };
    let errors = |attrs: &str| mutagraph_ir::validate::check(&model(attrs)).errors;
    assert!(errors("").is_empty(), "{:?}", errors(""));
    assert!(errors("<strides = [2]>").is_empty());
    let e = errors("<strides = [1, 1]>");
    assert!(e.iter().any(|e| e.contains("strides")), "{e:?}");
    let e = errors("<kernel_shape = [3, 3]>");
    assert!(e.iter().any(|e| e.contains("kernel_shape")), "{e:?}");
    let e = errors("<pads = [1, 1, 1, 1]>");
    assert!(e.iter().any(|e| e.contains("pads")), "{e:?}");
}
