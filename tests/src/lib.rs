//! Shared helpers of the integration tests: where the ONNX backend test suite is, how to list
//! its models, read their recorded tensors, and call the Python cross-check scripts.
use mutagraph_ir::pb;
use prost::Message;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Debian's `libonnx-testdata` puts the suite.
pub const DEFAULT_SUITE: &str = "/usr/share/libonnx-testdata/data";

/// The suite root (`MUTAGRAPH_SUITE_DIR` overrides). Panics with install instructions when the
/// data is missing: tests that need it must fail, never skip.
pub fn suite_dir() -> PathBuf {
    let dir = std::env::var("MUTAGRAPH_SUITE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(DEFAULT_SUITE));
    if !dir.join("node").is_dir() {
        panic!(
            "the ONNX backend test suite is missing at {}: install it with `apt-get install -y libonnx-testdata` \
             (or point MUTAGRAPH_SUITE_DIR at a copy)",
            dir.display()
        );
    }
    dir
}

/// Every `model.onnx` of the suite (node, pytorch-converted, pytorch-operator, simple), sorted.
pub fn suite_models() -> Vec<PathBuf> {
    let root = suite_dir();
    let mut out = Vec::new();
    for part in ["node", "pytorch-converted", "pytorch-operator", "simple"] {
        let Ok(rd) = std::fs::read_dir(root.join(part)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path().join("model.onnx");
            if p.is_file() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Path of a model relative to the suite root (`node/test_abs/model.onnx`).
pub fn rel(path: &Path) -> String {
    path.strip_prefix(suite_dir())
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The recorded tensors `prefix_*.pb` (prefix `input` or `output`) of the first data set of a
/// model, in index order. Files that are not tensors (sequences, optionals) come back as `None`.
pub fn recorded(model: &Path, prefix: &str) -> Vec<Option<pb::TensorProto>> {
    let dir = model.parent().unwrap().join("test_data_set_0");
    let mut out = Vec::new();
    for i in 0.. {
        let p = dir.join(format!("{prefix}_{i}.pb"));
        let Ok(bytes) = std::fs::read(&p) else { break };
        out.push(pb::TensorProto::decode(bytes.as_slice()).ok());
    }
    out
}

/// Runs a Python script of `tests/python` with arguments; panics with install instructions
/// when python3 or the `onnx` package is missing.
pub fn python(script: &str, args: &[&str]) -> std::process::Output {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("python")
        .join(script);
    let out = Command::new("python3")
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run python3 ({e}): install Python 3 and `pip install onnx==1.22.0 numpy`"
            )
        });
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named") {
        panic!("{script} needs Python packages: `pip install onnx==1.22.0 numpy`\n{stderr}");
    }
    out
}

/// A scratch directory under the target directory, fresh for each call with the same name.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/test-scratch")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
