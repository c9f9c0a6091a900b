//! Two instances of one campaign sharing a sync directory, run side by side: they import each
//! other's coverage-adding entries, no finding signature is filed by both, an instance resumes
//! in place, and `report SYNC` renders the whole campaign.
use mutagraph_engine::corpus;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

fn instance(sync: &Path, name: &str, seed: &str, iterations: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["campaign", "--seeds", "zoo", "--sync-dir"])
        .arg(sync)
        .args([
            "--instance",
            name,
            "--seed",
            seed,
            "--iterations",
            iterations,
            "--backends",
            "reference,ort",
            "--sync-every",
            "1s",
            "--no-minimize",
            "-q",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(c: std::process::Child, what: &str) {
    let o = c.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "{what}: {}\n(campaigns need ONNX Runtime: `pip install onnxruntime==1.31.1`)",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn two_instances_share_entries_and_file_each_signature_once() {
    let dir = tempfile::tempdir().unwrap();
    let sync = dir.path().join("sync");
    let a = instance(&sync, "a", "1", "300");
    let b = instance(&sync, "b", "2", "300");
    finish(a, "instance a");
    finish(b, "instance b");

    let mut imported = 0;
    let mut filed: BTreeMap<String, String> = BTreeMap::new();
    for name in ["a", "b"] {
        let out = sync.join(name);
        let state = json(&out.join("state.json"));
        assert_eq!(state["iteration"].as_u64(), Some(300));
        let st = &state["sync"];
        assert_eq!(st["instance"].as_str(), Some(name));
        let other = if name == "a" { "b" } else { "a" };
        assert!(
            st["seen"][other].as_u64().is_some(),
            "{name} never looked at {other}: {st}"
        );
        imported += st["imported"].as_u64().unwrap();
        // Every imported entry names its origin and rebuilds; the pool's entries are whole.
        let cdir = out.join("corpus");
        for id in corpus::store::entry_ids(&cdir).unwrap() {
            let t = corpus::read_trace(&cdir, &id).unwrap();
            assert_eq!(id.starts_with('x'), t.imported_from.is_some(), "{id}");
            if let Some(from) = &t.imported_from {
                assert!(from.starts_with(&format!("{other}/")), "{id}: {from}");
                corpus::model_bytes(&out, &id).unwrap_or_else(|e| panic!("{id}: {e}"));
            }
        }
        // Each bundle's signature is filed by this instance only.
        for e in std::fs::read_dir(out.join("findings")).unwrap() {
            let meta = json(&e.unwrap().path().join("meta.json"));
            let sig = meta["signature"].as_str().unwrap().to_string();
            if let Some(first) = filed.insert(sig.clone(), name.to_string()) {
                panic!("signature filed by {first} and {name}: {sig}");
            }
        }
        // A signature the other instance filed points at its bundle.
        for e in state["signatures"].as_object().unwrap().values() {
            if let Some(by) = e["filed_by"].as_str() {
                let (inst, id) = by.split_once('/').unwrap();
                assert_eq!(inst, other);
                assert!(sync.join(inst).join("findings").join(id).is_dir(), "{by}");
            }
        }
    }
    assert!(imported > 0, "neither instance imported anything");

    // An instance resumes in place (by its directory alone, too).
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["campaign", "--out"])
        .arg(sync.join("a"))
        .args(["--iterations", "320", "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let state = json(&sync.join("a/state.json"));
    assert_eq!(state["iteration"].as_u64(), Some(320));
    assert_eq!(state["sessions"].as_array().unwrap().len(), 2);

    // The report over the sync directory: each instance's, and the whole campaign's.
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["report"])
        .arg(&sync)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains("| a |") && md.contains("| b |") && md.contains("| merged |"),
        "{md}"
    );
    let html = std::fs::read_to_string(sync.join("report.html")).unwrap();
    assert!(html.contains("a/report.html") && html.contains("merged (sum)"));
    assert!(sync.join("a/report.html").exists() && sync.join("b/report.html").exists());
    let executions: u64 = ["a", "b"]
        .iter()
        .map(|n| {
            json(&sync.join(n).join("stats.json"))["executions"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert!(
        md.contains(&format!("{executions} executions")),
        "merged executions are not the sum {executions}: {md}"
    );
}

#[test]
fn sync_arguments_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["campaign", "--seeds", "zoo", "--sync-dir"])
        .arg(dir.path())
        .args(["--instance", "../x", "--iterations", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--instance"));
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["campaign", "--seeds", "zoo", "--sync-dir"])
        .arg(dir.path())
        .args(["--iterations", "1"])
        .output()
        .unwrap();
    assert_ne!(
        o.status.code(),
        Some(0),
        "--sync-dir without --instance ran"
    );
}
