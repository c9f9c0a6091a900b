//! A model with custom-domain ops, unmodeled attributes, a quantized path, LSTM, If and Loop
//! subgraphs and a model-local function imports, round-trips byte for byte, validates (custom
//! ops are kept opaque and reported as unchecked) and gets its types inferred.
use mutagraph_ir::infer::{Options, infer_model};
use mutagraph_ir::{Model, validate};
use mutagraph_tests::{python, scratch};

#[test]
fn production_like_model_round_trips_and_infers() {
    let path = scratch("production_like").join("model.onnx");
    let o = python("make_production_like.py", &[path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&path).unwrap();
    let mut m = Model::from_bytes(&bytes).unwrap();
    assert_eq!(
        m.to_bytes(),
        bytes,
        "export must reproduce the file byte for byte"
    );
    assert_eq!(m.functions.len(), 1, "the model-local function is kept");
    // An op of ONNX Runtime's domain the registry does not model (its QuickGelu it does:
    // ORT refuses an attribute its schema lacks, and so does the registry).
    let custom = m
        .graph
        .nodes()
        .find(|n| n.op_type == "GemmFastGelu")
        .unwrap();
    assert_eq!(custom.domain(), "com.microsoft");
    assert!(custom.attributes.iter().any(|a| a.name == "unmodeled_knob"));

    let d = validate::validate(&m).expect("valid");
    assert!(
        d.warnings
            .iter()
            .any(|w| w.contains("com.microsoft.GemmFastGelu")),
        "{:?}",
        d.warnings
    );

    let mut bare = m.clone();
    infer_model(
        &mut bare,
        Options {
            use_declared: false,
        },
    );
    assert_eq!(
        bare.graph.types.get("act"),
        Some(&mutagraph_ir::ValueType::Unknown),
        "a custom op is opaque"
    );
    infer_model(&mut m, Options::default());
    let ty = |n: &str| m.graph.value_type(n).to_string();
    assert_eq!(ty("xq"), "u8[1,2,4,4]");
    assert_eq!(ty("xs"), "f32[]");
    assert_eq!(ty("conv_i32"), "i32[1,3,4,4]");
    assert_eq!(ty("conv_f"), "f32[1,3,4,4]");
    assert_eq!(ty("seq"), "f32[4,1,12]");
    assert_eq!(ty("h_last"), "f32[1,1,4]");
    assert_eq!(ty("h2"), "f32[1,4]");
    assert_eq!(ty("mm"), "i32[1,4]");
    assert_eq!(ty("total"), "i32[]");
    assert_eq!(ty("cond"), "bool[]");
    assert_eq!(ty("branch"), "f32[1,4]");
    assert_eq!(ty("looped"), "f32[1,4]");
}
