//! `mutagraph minimize` through the binary: an external `--check`, a bug bundle, bad input.
use crate::common::mg;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "exit {:?}: {}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

#[test]
fn an_external_check_keeps_what_it_asks_for() {
    let dir = tempfile::tempdir().unwrap();
    ok(mg(&["zoo", "--out", dir.path().to_str().unwrap()]));
    let model = dir.path().join("transformer_encoder.onnx");
    let out = dir.path().join("small.onnx");
    // Interesting: a Softmax reads a Mul's output (the scaled attention scores). python3 with the onnx package (CI
    // installs it: `pip install onnx`).
    let check = "python3 -c \"import onnx,sys; m=onnx.load(sys.argv[1]); p={o: n.op_type for n in \
                 m.graph.node for o in n.output}; sys.exit(0 if any(n.op_type=='Softmax' and \
                 p.get(n.input[0])=='Mul' for n in m.graph.node) else 1)\"";
    let o = ok(mg(&[
        "minimize",
        model.to_str().unwrap(),
        "--check",
        check,
        "--out",
        out.to_str().unwrap(),
    ]));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(" -> 2 in "), "{text}");
    let m = mutagraph_mutators::ir::Model::load(&out).unwrap();
    let ops: Vec<&str> = m.graph.nodes().map(|n| n.op_type.as_str()).collect();
    assert_eq!(ops.len(), 2, "{ops:?}");
    assert!(ops.contains(&"Softmax") && ops.contains(&"Mul"));
}

#[test]
fn a_bundle_is_minimized_in_place_keeping_its_signature() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    ok(mg(&[
        "campaign",
        "--seeds",
        "zoo",
        "--out",
        c.to_str().unwrap(),
        "--seed",
        "3",
        "--iterations",
        "20",
        "--backends",
        "reference,planted-conv-pad",
        "--no-minimize",
        "--quiet",
    ]));
    let bundles: Vec<_> = std::fs::read_dir(c.join("findings"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(bundles.len(), 1, "{bundles:?}");
    let b = &bundles[0];
    assert!(json(&b.join("meta.json"))["minimized"].is_null());
    assert!(!b.join("minimized.onnx").exists());
    let o = ok(mg(&["minimize", b.to_str().unwrap()]));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("kept: inconsistency|planted-conv-pad|kernel|values|op=Conv"),
        "{text}"
    );
    let meta = json(&b.join("meta.json"));
    let min = &meta["minimized"];
    assert!(min["nodes_after"].as_u64().unwrap() <= 3, "{meta}");
    assert_eq!(min["op_type"], "Conv");
    for f in [
        "minimized.onnx",
        "minimized_inputs.npz",
        "minimized_expected.npz",
    ] {
        assert!(b.join(f).is_file(), "{f}");
    }
    let report = std::fs::read_to_string(b.join("REPORT.md")).unwrap();
    assert!(report.contains("minimized.onnx"), "{report}");
    // Again: it goes on from the minimized model and never replaces it with a larger one;
    // `recheck` judges the same model and agrees.
    let before = std::fs::read(b.join("minimized.onnx")).unwrap();
    let nodes = min["nodes_after"].as_u64().unwrap();
    let o = ok(mg(&["minimize", b.to_str().unwrap(), "--max-checks", "5"]));
    let err = String::from_utf8_lossy(&o.stderr);
    let after = mutagraph_ir::Model::load(b.join("minimized.onnx")).unwrap();
    assert!(after.graph.node_count() as u64 <= nodes, "{err}");
    if err.contains("kept minimized.onnx") {
        assert_eq!(std::fs::read(b.join("minimized.onnx")).unwrap(), before);
    }
    let o = ok(mg(&["recheck", b.to_str().unwrap()]));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("REPRODUCED"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// The bundles of a campaign on `seed` over `backends` (no minimization): `(dir, meta)`.
fn bundles_of(seed: &Path, backends: &str, iterations: &str, out: &Path) -> Vec<(PathBuf, Value)> {
    ok(mg(&[
        "campaign",
        "--seeds",
        seed.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backends",
        backends,
        "--iterations",
        iterations,
        "--seed",
        "5",
        "--no-minimize",
        "--quiet",
    ]));
    let mut v: Vec<(PathBuf, Value)> = std::fs::read_dir(out.join("findings"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|b| {
            let meta = json(&b.join("meta.json"));
            (b, meta)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn minimize_and_recheck_agree_on_seed_crash_and_numeric_bundles() {
    // Four kinds of bundle: a numeric finding on the user's seed itself (planted-conv-pad on
    // resnet_basic, iteration 0), a crash on the user's seed (tract 0.23.9 has no f64 IsNaN:
    // "Element wise eval in-place not defined"), a numeric finding and a crash on mutants of
    // the zoo. Slowness is
    // judged only in release builds (run times of unoptimized libraries say nothing), so a
    // slow bundle cannot come from this test build.
    let dir = tempfile::tempdir().unwrap();
    ok(mg(&["zoo", "--out", dir.path().to_str().unwrap()]));
    let text = dir.path().join("isnan.onnxtxt");
    std::fs::write(
        &text,
        r#"<ir_version: 8, opset_import: ["" : 17]>
g (double[2, 3] x) => (bool[2, 3] y)
{
   a = Relu (x)
   y = IsNaN (a)
}"#,
    )
    .unwrap();
    let isnan = dir.path().join("isnan.onnx");
    ok(mg(&[
        "convert",
        text.to_str().unwrap(),
        isnan.to_str().unwrap(),
    ]));
    let resnet = dir.path().join("resnet_basic.onnx");
    let mut cases = Vec::new();
    let seed_numeric = bundles_of(
        &resnet,
        "reference,planted-conv-pad",
        "2",
        &dir.path().join("a"),
    );
    cases.extend(
        seed_numeric
            .into_iter()
            .filter(|(_, m)| m["iteration"] == 0)
            .take(1),
    );
    let crash = bundles_of(&isnan, "reference,tract", "2", &dir.path().join("b"));
    cases.extend(
        crash
            .into_iter()
            .filter(|(_, m)| m["kind"] == "crash")
            .take(1),
    );
    // Mutants of the zoo on the default backends: a numeric finding and a crash.
    let mutants = bundles_of(
        Path::new("zoo"),
        "reference,ort,tract,burn-ndarray",
        "120",
        &dir.path().join("c"),
    );
    for kind in ["inconsistency", "crash"] {
        let on_mutant = |(_, m): &&(PathBuf, Value)| m["iteration"] != 0 && m["kind"] == kind;
        cases.extend(mutants.iter().filter(on_mutant).take(1).cloned());
    }
    let kinds: Vec<String> = cases
        .iter()
        .map(|(_, m)| format!("{}@{}", m["kind"], m["iteration"]))
        .collect();
    assert_eq!(
        cases.len(),
        4,
        "seed numeric, seed crash, mutant numeric and mutant crash bundles: {kinds:?}"
    );
    for (b, meta) in &cases {
        let what = format!("{} ({})", b.display(), meta["signature"]);
        let o = ok(mg(&["minimize", b.to_str().unwrap(), "--max-checks", "80"]));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains(&format!("kept: {}", meta["signature"].as_str().unwrap())),
            "{what}: minimize kept another signature\n{out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let small = mutagraph_ir::Model::load(b.join("minimized.onnx")).unwrap();
        let original = mutagraph_ir::Model::load(b.join("original.onnx")).unwrap();
        assert!(
            small.graph.node_count() <= original.graph.node_count(),
            "{what}"
        );
        let o = ok(mg(&["recheck", b.to_str().unwrap()]));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("REPRODUCED"),
            "{what}: recheck after minimize\n{out}"
        );
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    let o = mg(&["minimize", "/nonexistent/model.onnx"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent/model.onnx"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let o = mg(&["report", dir.path().to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("stats.json"), "{err}");
}

/// Minimizes the model written in ONNX's text syntax `src` on `backends` with `mutagraph
/// minimize`: its standard output and the op types of the smaller model.
fn minimize_text(src: &str, backends: &str) -> (String, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("m.onnxtxt");
    std::fs::write(&text, src).unwrap();
    let model = dir.path().join("m.onnx");
    ok(mg(&[
        "convert",
        text.to_str().unwrap(),
        model.to_str().unwrap(),
    ]));
    let small = dir.path().join("small.onnx");
    let o = ok(mg(&[
        "minimize",
        model.to_str().unwrap(),
        "--backends",
        backends,
        "--out",
        small.to_str().unwrap(),
    ]));
    let m = mutagraph_mutators::ir::Model::load(&small).unwrap();
    let ops = m.graph.nodes().map(|n| n.op_type.clone()).collect();
    (String::from_utf8_lossy(&o.stdout).into_owned(), ops)
}

#[test]
fn a_crash_downstream_of_a_wrong_shape_is_traced_to_the_op_that_made_it() {
    // planted-maxpool-same pads SAME as if the dilation were 1: its MaxPool output is 6x6 where
    // ONNX says 8x8, and the Add that meets the (right) AveragePool output fails. The crash is
    // traced back to the MaxPool's shape and minimized to that one node.
    let (text, ops) = minimize_text(
        r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 16, 16] x) => (float[1, 2, 8, 8] y)
{
   p = MaxPool <kernel_shape: ints = [3, 3], strides: ints = [2, 2], dilations: ints = [3, 3], auto_pad: string = "SAME_UPPER"> (x)
   r = Relu (p)
   q = AveragePool <kernel_shape: ints = [3, 3], strides: ints = [2, 2], auto_pad: string = "SAME_UPPER"> (x)
   y = Add (r, q)
}"#,
        "reference,planted-maxpool-same",
    );
    assert!(
        text.contains("kept: inconsistency|planted-maxpool-same|kernel|shape|op=MaxPool"),
        "{text}"
    );
    assert!(text.contains("nodes 4 -> 1"), "{text}");
    assert_eq!(ops, ["MaxPool"]);
}

#[test]
fn a_failure_met_on_its_node_alone_is_minimized_from_that_node() {
    // tract fails at the Xor ("No super type for F64 and Bool"); the triage traces it to the
    // IsInf of doubles, which fails alone its own way. The whole model never shows IsInf's
    // message, so the minimization starts from the IsInf alone, fed what reached it.
    let (text, ops) = minimize_text(
        r#"<ir_version: 8, opset_import: ["" : 17]>
g (double[3] x, bool[3] k) => (bool[3] y)
{
   b = IsInf (x)
   y = Xor (b, k)
}"#,
        "reference,tract",
    );
    assert!(text.contains("op=IsInf"), "{text}");
    assert!(
        text.contains("the blamed node alone (the whole model fails first otherwise)"),
        "{text}"
    );
    assert_eq!(ops, ["IsInf"]);
}
