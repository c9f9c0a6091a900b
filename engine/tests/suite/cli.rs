//! The `mutagraph` binary: inspect, convert and ops, on real suite models and on bad input.
use crate::common::{mg, suite_model};
use std::path::PathBuf;

#[test]
fn inspect_reports_shapes_ops_and_parameters() {
    let model = suite_model("pytorch-operator/test_operator_conv");
    let o = mg(&["inspect", &model, "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["opsets"]["ai.onnx"], 6);
    assert_eq!(j["op_histogram"]["Conv"], 1);
    assert!(j["parameters"].as_i64().unwrap() > 100);
    assert!(j["errors"].as_array().unwrap().is_empty());
    let values = j["values"].as_array().unwrap();
    assert!(!values.is_empty());
    for v in values {
        assert!(
            !v["type"].as_str().unwrap().contains('?'),
            "unknown type for {v}"
        );
    }
    let text = mg(&["inspect", &model]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("validation  ok") && text.contains("Conv"),
        "{text}"
    );
}

#[test]
fn convert_round_trips_and_never_clobbers_on_error() {
    let dir = mutagraph_tests::scratch("cli_convert");
    let model = suite_model("node/test_lstm_defaults");
    let out = dir.join("out.onnx");
    let o = mg(&["convert", &model, out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&model).unwrap());
    // A bad input must leave the existing output untouched.
    let bad = dir.join("bad.onnx");
    std::fs::write(&bad, b"\x08\x07\x12\x03abc garbage").unwrap();
    let before = std::fs::read(&out).unwrap();
    let o = mg(&["convert", bad.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.onnx"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let leftovers: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn convert_reads_and_writes_the_text_syntax() {
    let dir = mutagraph_tests::scratch("cli_convert_text");
    let model = suite_model("node/test_lstm_defaults");
    let txt = dir.join("lstm.onnxtxt");
    let o = mg(&["convert", &model, txt.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&txt).unwrap();
    assert!(text.contains("= LSTM <"), "{text}");
    let back = dir.join("back.onnx");
    let o = mg(&["convert", txt.to_str().unwrap(), back.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let original = mutagraph_ir::Model::load(&model).unwrap();
    let expected = mutagraph_ir::text::normalize(&original).to_bytes();
    assert_eq!(std::fs::read(&back).unwrap(), expected);
    // Text to text.
    let again = dir.join("again.onnxtxt");
    let o = mg(&["convert", txt.to_str().unwrap(), again.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);
    // A syntax error names the file, the line and the column.
    let bad = dir.join("bad.onnxtxt");
    std::fs::write(&bad, "g (float x) => (float y) {\n  y = Neg (x\n}\n").unwrap();
    let o = mg(&["convert", bad.to_str().unwrap(), back.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.onnxtxt:3:1: expected ')' after the inputs of node 'Neg'"),
        "{err}"
    );
}

#[test]
fn ops_lists_at_least_100_ops() {
    let o = mg(&["ops"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let last = text.lines().last().unwrap();
    let n: usize = last.strip_suffix(" ops").unwrap().parse().unwrap();
    assert!(n >= 100, "{last}");
    assert!(text.contains("Conv ") && text.contains("LSTM "));
    let j: serde_json::Value = serde_json::from_slice(&mg(&["ops", "--json"]).stdout).unwrap();
    assert_eq!(j.as_array().unwrap().len(), n);
}

#[test]
fn missing_and_invalid_files_exit_2_with_the_file_named() {
    let o = mg(&["inspect", "/nonexistent/model.onnx"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/model.onnx"));
}

#[test]
fn corpus_export_of_a_directory_without_a_corpus_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    let o = mg(&[
        "corpus",
        "export",
        missing.to_str().unwrap(),
        "--out",
        dir.path().join("x").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("nothing-here") && err.contains("not a campaign directory"),
        "{err}"
    );
}

/// The exit codes the README's table gives: 2 for a command line or an input the command
/// refuses, whatever the command; 1 for what a command reports.
#[test]
fn usage_and_input_errors_exit_2_and_reports_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c");
    let o = out.to_str().unwrap();
    let relu = suite_model("node/test_relu");
    for (args, says) in [
        (vec!["campaign", "--out", o], "--seeds is required"),
        (
            vec![
                "campaign",
                "--seeds",
                "zoo",
                "--out",
                o,
                "--backends",
                "nope",
            ],
            "nope",
        ),
        (
            vec!["campaign", "--seeds", "zoo", "--out", o, "--mcmc-p", "3"],
            "--mcmc-p",
        ),
        (
            vec!["campaign", "--seeds", "zoo", "--out", o, "-j", "0"],
            "-j",
        ),
        (
            vec!["run", &relu, "--tolerance", "1e-3"],
            "exact, suite, close, approximate, very-approximate",
        ),
        (vec!["run", &relu, "--input-shape", "x:[1,2"], "x:[1,2"),
        (vec!["run", "/nonexistent/m.onnx"], "/nonexistent/m.onnx"),
        (
            vec!["minimize", dir.path().to_str().unwrap()],
            "no meta.json",
        ),
    ] {
        let r = mg(&args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // A failed start leaves no directory it created.
    assert!(!out.exists(), "a failed start left {}", out.display());
    // A report: a backend that differs.
    let r = mg(&["run", &relu, "--backends", "fault"]);
    assert_eq!(r.status.code(), Some(1), "{r:?}");
}
