//! Every bundle a short campaign files reproduces from its files alone, in fresh processes:
//! `mutagraph recheck` (fresh workers, the campaign's triage) reports its signature again,
//! its `repro.py` says REPRODUCED with the library's own Python package (ONNX Runtime, tract),
//! also with the stored expected values, actual values and outputs removed, and every
//! minimized model passes `onnx.checker` with full, strict shape inference.
//!
//! Needs python3 with numpy, onnx, onnxruntime and tract (`bash .ci/setup`); fails, never
//! skips, when they are missing.
use crate::common::mg;
use std::path::Path;
use std::process::Command;

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn require_python() {
    let o = Command::new("python3")
        .args(["-c", "import numpy, onnx, onnxruntime, tract"])
        .output()
        .expect("python3 is needed: apt-get install python3");
    assert!(
        o.status.success(),
        "python3 needs numpy, onnx, onnxruntime and tract: \
         pip install numpy onnx==1.22.0 onnxruntime==1.31.1 tract==0.23.9 (or bash .ci/setup)\n{}",
        text(&o)
    );
}

#[test]
fn every_bundle_of_a_campaign_reproduces_with_its_library() {
    require_python();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c");
    let o = mg(&[
        "campaign",
        "--seeds",
        "zoo",
        "--out",
        out.to_str().unwrap(),
        "--iterations",
        "300",
        "--seed",
        "3",
        "--quiet",
        "--minimize-grace",
        "300s",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let findings = out.join("findings");
    let bundles: Vec<_> = std::fs::read_dir(&findings)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("meta.json").exists())
        .collect();
    assert!(
        bundles.len() >= 3,
        "the campaign filed {} bundles; the test needs a few",
        bundles.len()
    );
    // Fresh workers, the campaign's triage, and each bundle's own repro.py.
    let o = mg(&["recheck", out.to_str().unwrap(), "--repro"]);
    let t = text(&o);
    assert!(o.status.success(), "not every bundle reproduces:\n{t}");
    assert!(
        t.contains(&format!(
            "{} of {} bundles reproduce",
            bundles.len(),
            bundles.len()
        )),
        "{t}"
    );
    // repro.py ran the library itself for ONNX Runtime and tract bundles.
    let with_python = t.matches("repro.py: REPRODUCED").count();
    assert!(with_python >= 1, "{t}");
    // From the model and inputs alone: without the stored expected and actual values and
    // outputs, repro.py computes the expected values with onnx.reference and still
    // reproduces every bundle.
    for b in &bundles {
        for e in std::fs::read_dir(b).unwrap().map(|e| e.unwrap().path()) {
            let name = e.file_name().unwrap().to_string_lossy().to_string();
            if name.contains("expected") || name.contains("actual") {
                std::fs::remove_file(&e).unwrap();
            } else if name.ends_with("outputs") && e.is_dir() {
                std::fs::remove_dir_all(&e).unwrap();
            }
        }
    }
    let o = mg(&["recheck", out.to_str().unwrap(), "--repro"]);
    let stripped = text(&o);
    assert!(
        o.status.success(),
        "without the stored values not every bundle reproduces:\n{stripped}"
    );
    assert_eq!(
        stripped.matches("repro.py: REPRODUCED").count(),
        with_python,
        "{stripped}"
    );
    // Every minimized model is valid by ONNX's own rules.
    let minimized: Vec<String> = bundles
        .iter()
        .map(|b| b.join("minimized.onnx"))
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    assert!(!minimized.is_empty(), "no bundle was minimized");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/python/checker_models.py");
    let mut args = vec![script.display().to_string()];
    args.extend(minimized.iter().cloned());
    let c = Command::new("python3").args(&args).output().unwrap();
    assert!(
        c.status.success(),
        "minimized models fail onnx.checker:\n{}",
        text(&c)
    );
}

#[test]
fn generated_mutants_are_valid_by_onnx_rules() {
    require_python();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let o = mg(&[
        "mutants",
        "--seeds",
        "zoo",
        "--count",
        "1500",
        "--seed",
        "7",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/python/checker_models.py");
    let c = Command::new("python3")
        .arg(&script)
        .arg(&out)
        .output()
        .unwrap();
    let t = text(&c);
    assert!(
        c.status.success(),
        "generated models fail onnx.checker:\n{t}"
    );
    assert!(t.contains("checker: 1500 models, 0 fail"), "{t}");
    // onnx 1.22's shape inference dies (a segfault) on an EyeLike whose input has no type,
    // which the output of a com.microsoft op is to it (it has no schema of that domain): a
    // crash of ONNX's checker is only acceptable on a model holding such an op.
    for line in t.lines().filter(|l| l.starts_with("CRASH ")) {
        assert!(line.contains("com.microsoft::"), "{line}");
    }
}
