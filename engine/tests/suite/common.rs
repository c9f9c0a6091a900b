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

/// Runs `mutagraph prompt` with `args` on the stub LLM `server`, with none of the user's LLM
/// settings from the environment; `cache`: the model cache's home (`XDG_CACHE_HOME`).
pub fn mg_prompt(
    server: &mutagraph_prompts::llm::stub::StubServer,
    cache: Option<&std::path::Path>,
    args: &[&str],
) -> std::process::Output {
    let url = server.base_url();
    let mut all = vec![
        "prompt",
        "--provider",
        "http",
        "--base-url",
        &url,
        "--model",
        "stub",
    ];
    all.extend_from_slice(args);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mutagraph"));
    cmd.args(&all)
        .env_remove("MUTAGRAPH_LLM_PROVIDER")
        .env_remove("MUTAGRAPH_LLM_TEMPERATURE");
    if let Some(c) = cache {
        cmd.env("XDG_CACHE_HOME", c);
    }
    cmd.output().unwrap()
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

/// Runs the Python `script` with `dir` as its one argument (it writes models there with the
/// `onnx` package); `what` says what it writes, for the message when it cannot.
pub fn python_writes(script: &str, dir: &std::path::Path, what: &str) {
    let o = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .output()
        .expect("python3 is needed (apt-get install python3; pip install onnx numpy)");
    assert!(
        o.status.success(),
        "writing {what} needs `pip install onnx numpy`: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
