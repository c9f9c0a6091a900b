//! `mutagraph run` and `mutagraph conformance` through the real binary.
use crate::common::mg;
use std::process::{Command, Output};

fn suite(rel: &str) -> std::path::PathBuf {
    mutagraph_tests::suite_dir().join(rel)
}

fn json(o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn run_compares_every_default_backend_with_the_reference() {
    let model = suite("pytorch-operator/test_operator_conv/model.onnx");
    let j = json(&mg(&[
        "run",
        model.to_str().unwrap(),
        "--seed",
        "3",
        "--json",
    ]));
    let runs = j["runs"].as_array().unwrap();
    let names: Vec<&str> = runs
        .iter()
        .map(|r| r["backend"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "reference-f64");
    // The default set: one variant per library (the triage runs the others on demand).
    for b in ["reference", "ort", "tract", "burn-ndarray"] {
        assert!(names.contains(&b), "{b} missing from {names:?}");
    }
    for r in runs {
        assert_eq!(r["status"], "ok", "{r}");
        assert!(r["wall_ms"].as_f64().unwrap() > 0.0);
        assert!(r["peak_rss"].as_u64().unwrap() > 0);
        if r["backend"] != "reference-f64" {
            let v = &r["vs_reference"];
            assert_eq!(v["agrees"], true, "{r}");
            assert!(v["metrics"]["max_abs"].as_f64().unwrap() < 1e-4, "{r}");
            assert!(v["metrics"]["elements"].as_u64().unwrap() > 0);
        }
    }
    // Same seed, same inputs; another seed, other values.
    let again = json(&mg(&[
        "run",
        model.to_str().unwrap(),
        "--seed",
        "3",
        "--json",
        "--backends",
        "ort",
    ]));
    assert_eq!(again["inputs"], j["inputs"]);
    let text = mg(&["run", model.to_str().unwrap(), "--backends", "ort,tract"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("agrees"), "{text}");
}

#[test]
fn run_reads_suite_inputs() {
    let dir = suite("node/test_relu");
    let o = mg(&[
        "run",
        dir.join("model.onnx").to_str().unwrap(),
        "--inputs",
        dir.join("test_data_set_0").to_str().unwrap(),
        "--backends",
        "ort",
        "--json",
    ]);
    let j = json(&o);
    assert!(
        j["input_source"]
            .as_str()
            .unwrap()
            .contains("test_data_set_0")
    );
    assert_eq!(j["runs"][1]["vs_reference"]["agrees"], true);
}

#[test]
fn run_rejects_bad_input_with_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.onnx");
    std::fs::write(&bad, b"\x08\x07garbage").unwrap();
    let o = mg(&["run", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.onnx"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let o = mg(&["run", "/nonexistent/m.onnx"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/m.onnx"));
    let model = suite("node/test_relu/model.onnx");
    let o = mg(&["run", model.to_str().unwrap(), "--backends", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown backend 'nope'"));
    let o = mg(&[
        "run",
        model.to_str().unwrap(),
        "--inputs",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("input files"));
}

#[test]
fn conformance_simple_part_writes_a_report_and_checks_allowlists() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let allow = dir.path().join("allow");
    let o = mg(&[
        "conformance",
        "--suite",
        "simple",
        "--backends",
        "reference,ort",
        "--report",
        report.to_str().unwrap(),
        "--write-allowlist",
        allow.to_str().unwrap(),
        "--per-op",
        "--check",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("pass%"), "{out}");
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let backends = j["backends"].as_array().unwrap();
    assert_eq!(backends.len(), 2);
    for b in backends {
        assert_eq!(
            b["results"].as_array().unwrap().len(),
            23,
            "{}",
            b["backend"]
        );
    }
    let ort_pass = backends[1]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "pass")
        .count();
    assert!(ort_pass >= 21, "ort passes {ort_pass}/23 simple tests");
    assert!(allow.join("ort.txt").is_file());
}

#[test]
fn dynamic_dims_get_solved_or_given_sizes() {
    // A 7×7 strided conv and a 40×40 pool over dynamic H, W (85 or more), and a selector
    // `mode` compared with a constant. At size 1 (the old default) every backend failed on it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net.onnx");
    let m = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[batch,3,H,W] x, float[4,3,7,7] w, int64 mode) => (float[batch,4,?,?] y, bool sel) {\n\
           c = Conv <strides = [2, 2]> (x, w)\n\
           y = MaxPool <kernel_shape = [40, 40]> (c)\n\
           k = Constant <value = int64 {7}> ()\n\
           sel = Equal (mode, k)\n\
         }",
    )
    .unwrap();
    std::fs::write(&path, m.to_bytes()).unwrap();
    let p = path.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", p, "--json", "--backends", "reference,ort"];
        args.extend_from_slice(extra);
        json(&mg(&args))
    };
    let x = |j: &serde_json::Value| {
        j["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i[0] == "x")
            .unwrap()[1]
            .as_str()
            .unwrap()
            .to_string()
    };
    let j = run(&[]);
    assert!(x(&j).contains("[1, 3, 96, 96]"), "{j}");
    for r in j["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
    }
    let j = run(&["--input-shape", "x:2x3x90x88", "--input-value", "mode=3"]);
    assert!(x(&j).contains("[2, 3, 90, 88]"), "{j}");
    // One size for every dynamic dim, batches too: the pool no longer fits at 1.
    let o = mg(&[
        "run",
        p,
        "--json",
        "--backends",
        "reference",
        "--free-dim",
        "1",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(x(&j).contains("[1, 3, 1, 1]"), "{j}");
    assert_ne!(j["runs"][0]["status"], "ok", "{j}");
    // `inspect` says what it chose and why.
    let o = mg(&["inspect", p]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("x: 1x3x96x96") && text.contains("mode = 7") && text.contains("at 64"),
        "{text}"
    );
    // A shape that does not fit names the input; exit 1.
    let o = mg(&["run", p, "--input-shape", "x:1x3x12"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains("input 'x'") && err.contains("4 dims"), "{err}");
}

#[test]
fn run_exits_1_when_a_backend_fails_unless_told_not_to() {
    // The `fault` backend runs an ordinary model as identity: it differs from the reference.
    let model = suite("node/test_relu/model.onnx");
    let m = model.to_str().unwrap();
    let o = mg(&["run", m, "--backends", "ort,fault", "--tolerance", "close"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("fault: differs from reference-f64"), "{err}");
    assert!(!err.contains("ort:"), "ort agrees: {err}");
    let o = mg(&["run", m, "--backends", "ort,fault", "--no-fail"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let o = mg(&["run", m, "--backends", "ort", "--timeout", "10s"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let o = mg(&["run", m, "--backends", "ort", "--timeout", "10 parsecs"]);
    assert_eq!(o.status.code(), Some(2), "a usage error: {o:?}");
}

#[test]
fn run_reads_npz_inputs_text_models_and_bundle_directories() {
    let dir = tempfile::tempdir().unwrap();
    let suite_case = suite("node/test_relu");
    // The text syntax, through convert and back into run.
    let txt = dir.path().join("relu.onnxtxt");
    let o = mg(&[
        "convert",
        suite_case.join("model.onnx").to_str().unwrap(),
        txt.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{o:?}");
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["nodes"], 1);
    // A bundle-shaped directory: its model and an .npz of its inputs.
    let bundle = dir.path().join("b");
    std::fs::create_dir(&bundle).unwrap();
    std::fs::copy(suite_case.join("model.onnx"), bundle.join("original.onnx")).unwrap();
    std::fs::write(bundle.join("meta.json"), b"{}").unwrap();
    let input = suite_case.join("test_data_set_0/input_0.pb");
    let t = mutagraph_backends::value::HostTensor::from_proto(
        &prost::Message::decode(std::fs::read(&input).unwrap().as_slice()).unwrap(),
    )
    .unwrap();
    mutagraph_oracles::bundle::write_npz(&bundle.join("inputs.npz"), &[("x".to_string(), t)])
        .unwrap();
    for (model, inputs) in [
        (txt.to_str().unwrap(), bundle.join("inputs.npz")),
        (bundle.to_str().unwrap(), bundle.clone()),
    ] {
        let mut args = vec!["run", model, "--backends", "ort", "--json"];
        let inputs = inputs.display().to_string();
        if model != bundle.to_str().unwrap() {
            args.extend(["--inputs", &inputs]);
        }
        let j = json(&mg(&args));
        assert!(j["input_source"].as_str().unwrap().contains(&inputs), "{j}");
        assert_eq!(j["runs"][1]["vs_reference"]["agrees"], true, "{j}");
    }
    // An archive without the model's input is refused, naming both.
    mutagraph_oracles::bundle::write_npz(&bundle.join("inputs.npz"), &[]).unwrap();
    let o = mg(&["run", bundle.to_str().unwrap(), "--backends", "ort"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("inputs.npz") && err.contains("'x'"), "{err}");
}

#[test]
fn closed_pipes_end_quietly_and_endless_files_are_refused() {
    use std::io::Read;
    // 300 KB of JSON: more than a pipe holds, so the writer meets the closed pipe.
    for args in [&["ops", "--json"][..], &["ops"][..], &["zoo", "--list"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Read one line, then close the pipe, as `| head -1` does.
        let mut out = child.stdout.take().unwrap();
        let mut first = [0u8; 16];
        out.read_exact(&mut first).unwrap();
        drop(out);
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["inspect", "/dev/zero", "--max-model-size", "1M"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/dev/zero") && err.contains("larger than the model size limit"),
        "{err}"
    );
}

/// What a Polygraphy user types works: `--input-shapes NAME:[...]`, `--atol`/`--rtol`,
/// `--save-outputs`; a differing backend is pinned on its first diverging node; the JSON
/// holds no empty outcome.
#[test]
fn polygraphy_habits_work_and_the_first_diverging_node_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("resnet.onnx");
    mutagraph_mutators::zoo::build("resnet_basic")
        .unwrap()
        .save(&model)
        .unwrap();
    let saved = dir.path().join("outputs.npz");
    let m = model.to_str().unwrap();
    let o = mg(&[
        "run",
        m,
        "--backends",
        "reference,planted-conv-pad",
        "--input-shapes",
        "image:[1,3,32,32]",
        "--atol",
        "1e-4",
        "--rtol",
        "1e-4",
        "--save-outputs",
        saved.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("first diverging node: Conv"), "{err}");
    let arrays = mutagraph_oracles::bundle::read_npz(&saved).unwrap();
    let names: Vec<&str> = arrays.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.iter().any(|n| n.starts_with("planted-conv-pad/")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.starts_with("reference-f64/")),
        "{names:?}"
    );
    let o = mg(&[
        "run",
        m,
        "--backends",
        "reference,planted-conv-pad",
        "--json",
        "--no-fail",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let planted = &j["runs"][2];
    assert_eq!(planted["backend"], "planted-conv-pad", "{j}");
    assert_eq!(planted["first_diverging"]["op"], "Conv", "{j}");
    assert!(planted.get("outcome").is_none(), "{planted}");
}
