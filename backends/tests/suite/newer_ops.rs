//! Ops newer than the Debian suite (libonnx-testdata 1.12): their node tests come from the
//! `onnx` Python package (`onnx/backend/test/data/node`), which CI installs. Each is run on
//! the reference, burn and ONNX Runtime, and the outputs compared with the recorded ones.
#![cfg(feature = "ort")]
use crate::common::{Outcome, create, run_case};
use mutagraph_backends::suite::{self, CaseRef};
use std::path::PathBuf;

/// The node-test directory of the installed `onnx` package.
fn onnx_node_tests() -> PathBuf {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend', 'test', 'data', 'node'))",
        ])
        .output()
        .expect("python3 is needed: install it (apt-get install -y python3)");
    assert!(
        out.status.success(),
        "the onnx Python package is needed for these tests: pip install onnx==1.22.0 (bash .ci/setup does): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn case(name: &str) -> suite::Case {
    let dir = onnx_node_tests().join(name);
    assert!(
        dir.join("model.onnx").is_file(),
        "{}: no node test (onnx 1.22 has it)",
        dir.display()
    );
    let r = CaseRef {
        part: "node".into(),
        name: name.into(),
        dir,
    };
    suite::load(&r).unwrap_or_else(|e| panic!("{}: {e}", r.id()))
}

#[test]
fn swish_matches_the_onnx_node_tests_on_every_interpreter_and_ort() {
    for name in ["test_swish", "test_swish_expanded"] {
        let c = case(name);
        for backend in ["reference", "burn-ndarray", "ort"] {
            let mut b = create(backend);
            match run_case(b.as_mut(), &c) {
                Outcome::Pass => {}
                other => panic!("{name} on {backend}: {other:?}"),
            }
        }
    }
}
