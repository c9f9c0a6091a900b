//! Hostile inputs through every command that reads a model (`tests/python/hostile.py`, whose
//! 10 000-input run is the measurement; this is its short, fixed-seed form): endless devices,
//! pipes, deep nesting, huge declared sizes, allocation bombs, broken protobuf and text. No run
//! may panic, abort, hang past its limit, exceed 2 GiB or leave a process behind, and every
//! rejection exits 1 naming the file.
use std::path::Path;
use std::process::Command;

#[test]
fn hostile_inputs_never_break_a_command() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let work = tempfile::tempdir().unwrap();
    let summary = work.path().join("summary.json");
    let o = Command::new("python3")
        .arg(repo.join("tests/python/hostile.py"))
        .args(["--count", "120", "--seed", "11", "--jobs", "2"])
        .args(["--campaign-sample", "3", "--default-run-sample", "0.05"])
        // Limits for a debug build on a loaded 2-core machine: a hang still shows.
        .args([
            "--timeout",
            "60",
            "--run-timeout",
            "120",
            "--campaign-timeout",
            "240",
        ])
        .args(["--fail-on-defect", "--quiet"])
        .arg("--bin")
        .arg(env!("CARGO_BIN_EXE_mutagraph"))
        .arg("--workdir")
        .arg(work.path().join("w"))
        .arg("--out")
        .arg(&summary)
        .output()
        .expect("python3 is needed (apt-get install python3; pip install onnx numpy)");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "defects (or the runner failed: it needs `pip install onnx==1.22.0 numpy`):\n{out}\n{err}"
    );
    // The runner did run every command on every input.
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(s["complete"], true, "{s}");
    assert_eq!(s["defects_total"], 0, "{s}");
    let runs = s["runs_done"].as_u64().unwrap();
    assert!(runs >= 8 * 120, "only {runs} runs");
}
