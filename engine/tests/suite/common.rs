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

/// Every file of a campaign's corpus (`records/<hash>.json` included), by name; empty when
/// there is no corpus yet.
pub fn corpus_files(out: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    for sub in ["", "records"] {
        let Ok(rd) = std::fs::read_dir(out.join("corpus").join(sub)) else {
            continue;
        };
        for p in rd.map(|e| e.unwrap().path()) {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            if name.starts_with('.') || !p.is_file() {
                continue;
            }
            let key = if sub.is_empty() {
                name
            } else {
                format!("{sub}/{name}")
            };
            files.insert(key, std::fs::read(&p).unwrap());
        }
    }
    files
}
