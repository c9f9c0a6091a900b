//! Helpers shared by the engine's test modules.

/// The bytes of a model given in the textual syntax, at IR 8 and opset 17.
pub fn text_model(src: &str) -> Vec<u8> {
    mutagraph_ir::text::parse_model(&format!(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n{src}"
    ))
    .expect("valid text")
    .to_bytes()
}
