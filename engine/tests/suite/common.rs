//! Helpers shared by the engine's test modules.

/// The bytes of a model given in the textual syntax, at IR 8 and opset 17.
pub fn text_model(src: &str) -> Vec<u8> {
    mutagraph_ir::text::parse_model(&format!(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n{src}"
    ))
    .expect("valid text")
    .to_bytes()
}

/// Runs the `mutagraph` binary under test with `args` and returns what it did.
pub fn mg(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(args)
        .output()
        .unwrap()
}

/// The `model.onnx` of the ONNX backend test suite's test `rel` (e.g.
/// `node/test_relu`), as a path string.
pub fn suite_model(rel: &str) -> String {
    mutagraph_tests::suite_dir()
        .join(rel)
        .join("model.onnx")
        .display()
        .to_string()
}
