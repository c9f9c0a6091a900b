//! `mutagraph coverage` on suite models and on bad files.
use crate::common::{mg, suite_model};

fn have_suite() -> bool {
    let ok = mutagraph_tests::suite_dir().join("node").is_dir();
    if !ok {
        eprintln!("no ONNX test suite here; skipped");
    }
    ok
}

#[test]
fn text_report_of_two_models() {
    if !have_suite() {
        return;
    }
    let conv = suite_model("node/test_conv_with_strides_padding");
    let relu = suite_model("node/test_relu");
    let o = mg(&["coverage", &conv, &relu, "--verbose"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("models:    2"), "{text}");
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line in {text}"))
            .to_string()
    };
    let ops = line("op types:");
    assert!(ops.starts_with("op types:  2 / "), "{ops}");
    assert!(ops.ends_with("%)"), "{ops}");
    assert!(line("op pairs:").starts_with("op pairs:  0 / "), "{text}");
    assert!(!line("params:").starts_with("params:    0 /"), "{text}");
    let uncovered = line("uncovered op types");
    assert!(
        uncovered.contains(" Add ") && !uncovered.contains(" Conv "),
        "{uncovered}"
    );
}

#[test]
fn json_report_and_restricted_universe() {
    if !have_suite() {
        return;
    }
    let model = suite_model("pytorch-operator/test_operator_conv");
    let o = mg(&["coverage", &model, "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["models"], 1);
    assert_eq!(j["op_types"]["covered"], 1);
    assert!(j["op_types"]["total"].as_u64().unwrap() > 150);
    assert!(j["params"]["covered"].as_u64().unwrap() >= 1);
    assert!(j["inputs"]["covered"].as_u64().unwrap() >= 2);

    let o = mg(&["coverage", &model, "--json", "--ops", "Conv,Relu"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["op_types"]["total"], 2);
    assert_eq!(j["op_types"]["percent"], 50.0);
    assert_eq!(j["uncovered_op_types"], serde_json::json!(["Relu"]));

    let o = mg(&["coverage", &model, "--ops", "Conv,Nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Nope"));
}

#[test]
fn bad_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("garbage.onnx");
    std::fs::write(&bad, b"\xff\xff\xff this is not a model").unwrap();
    let bad = bad.display().to_string();
    let o = mg(&["coverage", &bad]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with(&format!("error: {bad}: ")), "{err}");
    assert!(o.stdout.is_empty());

    let missing = dir.path().join("missing.onnx").display().to_string();
    let o = mg(&["coverage", &missing]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with(&format!("error: {missing}: ")), "{err}");

    // No model at all is a usage error.
    assert_eq!(mg(&["coverage"]).status.code(), Some(2));
}
