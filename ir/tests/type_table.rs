//! Per-opset port types: the registry's type lists narrowed to the schema version in force.
use mutagraph_ir::{DType, Registry};

#[test]
fn reduce_max_takes_bool_only_from_opset_20() {
    let spec = Registry::global().get("", "ReduceMax").unwrap();
    assert!(
        spec.allowed(spec.input_tc(0))
            .unwrap()
            .contains(&DType::Bool)
    );
    assert!(!spec.input_allowed_at(0, 17).unwrap().contains(&DType::Bool));
    assert!(!spec.input_allowed_at(0, 18).unwrap().contains(&DType::Bool));
    assert!(spec.input_allowed_at(0, 20).unwrap().contains(&DType::Bool));
    assert!(spec.input_allowed_at(0, 17).unwrap().contains(&DType::F32));
}

#[test]
fn ports_not_type_variable_names_decide() {
    // QuantizeLinear's scale was a plain float tensor before opset 19, then shared T1 with x.
    let spec = Registry::global().get("", "QuantizeLinear").unwrap();
    assert_eq!(spec.input_allowed_at(1, 17).unwrap(), vec![DType::F32]);
    assert!(spec.input_allowed_at(1, 19).unwrap().contains(&DType::F16));
    // LayerNormalization's Mean output: f32 or bf16 at 17, never f64.
    let ln = Registry::global().get("", "LayerNormalization").unwrap();
    let mean = ln.output_allowed_at(1, 17).unwrap();
    assert!(mean.contains(&DType::F32) && !mean.contains(&DType::F64));
}

#[test]
fn variadic_ports_use_the_last_entry() {
    let spec = Registry::global().get("", "Concat").unwrap();
    assert_eq!(spec.input_allowed_at(5, 17), spec.input_allowed_at(0, 17));
    assert!(spec.input_allowed_at(5, 17).unwrap().contains(&DType::I64));
}

#[test]
fn validate_rejects_a_dtype_the_opset_does_not_allow() {
    let text = r#"<ir_version: 8, opset_import: ["" : 17]>
g (bool[2,3] X) => (bool[2] Y) {
  Y = ReduceMax <keepdims: int = 0> (X)
}"#;
    let m = mutagraph_ir::text::parse_model(text).unwrap();
    let err = mutagraph_ir::validate::validate(&m)
        .unwrap_err()
        .to_string();
    assert!(err.contains("ReduceMax") && err.contains("bool"), "{err}");
    let ok = text.replace("\"\" : 17", "\"\" : 20");
    let m = mutagraph_ir::text::parse_model(&ok).unwrap();
    mutagraph_ir::validate::validate(&m).unwrap();
}
