//! Planted bugs are found by short campaigns on the zoo: each one is localized to the right op,
//! minimized to at most 3 nodes and reported once (one bug bundle), and its bundle reproduces
//! with `mutagraph recheck`.
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn json(p: &Path) -> Value {
    let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_slice(&bytes).unwrap()
}

fn planted(backend: &str, seed: u64, iterations: u64, kind: &str, op: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c");
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args([
            "campaign",
            "--seeds",
            "zoo",
            "--out",
            out.to_str().unwrap(),
            "--seed",
            &seed.to_string(),
            "--iterations",
            &iterations.to_string(),
            "--backends",
            &format!("reference,{backend}"),
            "--minimize-grace",
            "600s",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{backend}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stats = json(&out.join("stats.json"));
    let bundles: Vec<_> = std::fs::read_dir(out.join("findings"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        bundles.len(),
        1,
        "{backend}: reported once, got {bundles:?}\n{stats}"
    );
    let b = &bundles[0];
    let meta = json(&b.join("meta.json"));
    assert_eq!(meta["kind"], kind, "{meta}");
    assert_eq!(meta["backends"][0], backend);
    assert_eq!(
        meta["op_type"], op,
        "{backend}: localized to {}",
        meta["op_type"]
    );
    assert_eq!(
        meta["hits"], stats["findings"],
        "every hit goes to the one bundle"
    );
    let min = &meta["minimized"];
    assert!(min.is_object(), "{backend}: not minimized: {meta}");
    let after = min["nodes_after"].as_u64().unwrap();
    assert!(after <= 3, "{backend}: minimized to {after} nodes");
    assert!(min["nodes_before"].as_u64().unwrap() > after);
    assert_eq!(min["op_type"], op);
    let small = mutagraph_mutators::ir::Model::load(b.join("minimized.onnx")).unwrap();
    assert!(small.graph.nodes().any(|n| n.op_type == op));
    // What the mutators named has plain names in a bundle (`retuned_1`, not
    // `retuned_m3b17de67_5`).
    let names = small.graph.nodes().flat_map(|n| {
        let values = n.inputs.iter().chain(&n.outputs).cloned();
        values.chain(n.name.clone())
    });
    for name in names {
        assert!(
            mutagraph_mutators::ir::names::generated_hint(&name).is_none(),
            "{backend}: generated name {name} in the bundle"
        );
    }
    // The bundle stands alone: `mutagraph recheck` runs it again from its files in fresh
    // workers (the planted backend has no Python package for repro.py to run)...
    let r = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["recheck", "--json"])
        .arg(b)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        r.status.success(),
        "{backend}: recheck failed\n{text}\n{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let rechecked: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(rechecked[0]["reproduced"], true, "{backend}: {rechecked}");
    // ... and repro.py says that it cannot run this library rather than claiming anything.
    let r = Command::new("python3")
        .arg("repro.py")
        .current_dir(b)
        .output()
        .expect("python3 is needed (apt-get install python3; pip install onnxruntime numpy)");
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(!r.status.success(), "{backend}: {text}");
    assert!(
        text.contains("runs onnxruntime and tract") && !text.contains("\nREPRODUCED"),
        "{backend}: {text}"
    );
}

#[test]
fn conv_padding_off_by_one_is_found_localized_and_minimized() {
    planted("planted-conv-pad", 3, 60, "inconsistency", "Conv");
}

#[test]
fn softmax_without_max_subtraction_is_found_localized_and_minimized() {
    // 3 of seeds 2 and 4-8 meet it within 300 iterations with the 19 contrib ops and the
    // pattern planting in the book (the search spreads over more ops; seed 1 no longer does).
    planted("planted-softmax", 4, 300, "nan", "Softmax");
}

/// The zoo has no ReduceMean: a mutation must insert one with a negative axis over a dim whose
/// length differs from its neighbour's (3 of seeds 1, 2 and 4-7 meet it within 300 iterations,
/// seed 2 among them, with the 19 contrib ops and the pattern planting in the book).
#[test]
fn reduce_mean_wrong_axis_is_found_localized_and_minimized() {
    planted("planted-reducemean", 2, 300, "inconsistency", "ReduceMean");
}
