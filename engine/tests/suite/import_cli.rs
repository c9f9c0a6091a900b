//! Models as exporters write them, through the real binary: a -1 declared dim (read as a
//! dynamic dim, with a warning), tensor data in a side file (read in, run on every backend,
//! written back by `convert`), and side-file locations outside the model's directory (refused,
//! exit 1). The models come from `tests/python/make_import_models.py` (the `onnx` package).
use crate::common::mg;
use mutagraph_ir::pb;
use prost::Message;
use std::path::{Path, PathBuf};
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The exporter-made models in a fresh scratch directory.
fn models(name: &str) -> PathBuf {
    let dir = mutagraph_tests::scratch(name);
    let o = mutagraph_tests::python("make_import_models.py", &[dir.to_str().unwrap()]);
    assert!(
        o.status.success(),
        "make_import_models.py failed: {}",
        stderr(&o)
    );
    dir
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `run --json` on the default backends: every backend runs the model and agrees with the
/// reference. Returns the parsed report.
fn run_ok(model: &Path) -> serde_json::Value {
    let o = mg(&["run", path(model), "--seed", "5", "--json"]);
    assert!(
        o.status.success(),
        "run {}: exit {:?}: {}",
        model.display(),
        o.status,
        stderr(&o)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = j["runs"].as_array().unwrap();
    for b in ["reference", "ort", "tract", "burn-ndarray"] {
        let r = runs
            .iter()
            .find(|r| r["backend"] == b)
            .unwrap_or_else(|| panic!("{b} did not run: {j}"));
        assert_eq!(r["status"], "ok", "{}: {r}", model.display());
        assert_eq!(r["vs_reference"]["agrees"], true, "{r}");
    }
    j
}

#[test]
fn a_negative_declared_dim_is_dynamic_with_a_warning() {
    let dir = models("import_neg_dims");
    let model = dir.join("neg_dims.onnx");
    let o = mg(&["inspect", path(&model)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("input 'x': dim 0 is declared -1, read as a dynamic dim")
            && text.contains("x: f32[?,3]"),
        "{text}"
    );
    let j: serde_json::Value =
        serde_json::from_slice(&mg(&["inspect", path(&model), "--json"]).stdout).unwrap();
    let warnings = j["warnings"].to_string();
    assert!(warnings.contains("input 'x': dim 0 is declared -1"), "{j}");

    let j = run_ok(&model);
    assert_eq!(j["inputs"][0][1], "f32[1, 3]", "{j}");
    // The dynamic dim takes --free-dim.
    let o = mg(&["run", path(&model), "--free-dim", "4", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("input 'x': dim 0 is declared -1, read as a dynamic dim"),
        "{}",
        stderr(&o)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["inputs"][0][1], "f32[4, 3]", "{j}");
    for r in j["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
    }
}

/// The metrics of each backend against the reference, by backend.
fn metrics(j: &serde_json::Value) -> Vec<(String, String)> {
    j["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["backend"].as_str().unwrap().to_string(),
                r["vs_reference"]["metrics"].to_string(),
            )
        })
        .collect()
}

#[test]
fn external_data_runs_like_its_inline_twin() {
    let dir = models("import_external");
    let inline = dir.join("inline.onnx");
    let external = dir.join("external.onnx");
    // The weights really are outside the model file.
    let raw = pb::ModelProto::decode(std::fs::read(&external).unwrap().as_slice()).unwrap();
    assert!(
        raw.graph
            .unwrap()
            .initializer
            .iter()
            .all(|t| t.data_location == Some(1) && t.raw_data.is_none())
    );
    // The model backends get is the inline twin, byte for byte.
    assert_eq!(
        mutagraph_ir::Model::load(&external).unwrap().to_bytes(),
        mutagraph_ir::Model::load(&inline).unwrap().to_bytes()
    );
    let a = run_ok(&external);
    let b = run_ok(&inline);
    assert_eq!(metrics(&a), metrics(&b));
    let o = mg(&["inspect", path(&external)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("16 parameters"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // Moved elsewhere without its data file, the model says what is missing.
    let alone = mutagraph_tests::scratch("import_external_alone").join("external.onnx");
    std::fs::copy(&external, &alone).unwrap();
    let o = mg(&["run", path(&alone)]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(path(&alone))
            && err.contains("tensor 'w'")
            && err.contains("external data location 'external.data'")
            && err.contains("does not exist"),
        "{err}"
    );
}

/// `external.onnx` with every location replaced, written as `file` in `dir`.
fn relocated(source: &Path, dir: &Path, file: &str, location: &str) -> PathBuf {
    let mut m = pb::ModelProto::decode(std::fs::read(source).unwrap().as_slice()).unwrap();
    let g = m.graph.as_mut().unwrap();
    let attrs = g
        .node
        .iter_mut()
        .flat_map(|n| n.attribute.iter_mut())
        .filter_map(|a| a.t.as_mut());
    for t in g.initializer.iter_mut().chain(attrs) {
        for e in t.external_data.iter_mut() {
            if e.key.as_deref() == Some("location") {
                e.value = Some(location.to_string());
            }
        }
    }
    let out = dir.join(file);
    std::fs::write(&out, m.encode_to_vec()).unwrap();
    out
}

#[test]
fn locations_outside_the_model_directory_are_refused() {
    let dir = models("import_confine");
    let source = dir.join("external.onnx");
    let models_dir = dir.join("models");
    std::fs::create_dir_all(&models_dir).unwrap();
    // The data itself sits one directory up: only a location leading out reaches it.
    let mut cases = vec![
        ("dotdot.onnx", "../../../../etc/passwd", "'..' leads out"),
        ("parent.onnx", "../external.data", "'..' leads out"),
        ("abs.onnx", "/etc/passwd", "an absolute path"),
    ];
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("../external.data", models_dir.join("link.data")).unwrap();
        cases.push(("link.onnx", "link.data", "outside the model's directory"));
    }
    for (file, location, problem) in cases {
        let model = relocated(&source, &models_dir, file, location);
        for cmd in [
            vec!["run", path(&model)],
            vec!["inspect", path(&model)],
            vec!["convert", path(&model), path(&dir.join("never.onnx"))],
        ] {
            let o = mg(&cmd);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{cmd:?}: {err}");
            assert!(
                err.contains(path(&model))
                    && err.contains("tensor 'w'")
                    && err.contains(&format!("external data location '{location}'"))
                    && err.contains(problem)
                    && !err.contains("panicked"),
                "{cmd:?}: {err}"
            );
        }
        assert!(!dir.join("never.onnx").exists());
    }
    // A data file shorter than the model says.
    let data = std::fs::read(dir.join("external.data")).unwrap();
    std::fs::write(models_dir.join("short.data"), &data[..50]).unwrap();
    let model = relocated(&source, &models_dir, "short.onnx", "short.data");
    let o = mg(&["run", path(&model)]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(path(&model))
            && err.contains("is beyond the end")
            && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn convert_writes_external_data_beside_the_new_file() {
    let dir = models("import_convert");
    let external = dir.join("external.onnx");
    let inline = mutagraph_ir::Model::load(dir.join("inline.onnx")).unwrap();
    let out_dir = dir.join("converted");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("copy.onnx");
    let o = mg(&["convert", path(&external), path(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let data = out_dir.join("copy.onnx.data");
    assert!(data.is_file(), "{}", stderr(&o));
    // The new model points at its own data file, never at the input's.
    let raw = pb::ModelProto::decode(std::fs::read(&out).unwrap().as_slice()).unwrap();
    let g = raw.graph.unwrap();
    let attrs = g
        .node
        .iter()
        .flat_map(|n| &n.attribute)
        .filter_map(|a| a.t.as_ref());
    let mut external_tensors = 0;
    for t in g.initializer.iter().chain(attrs) {
        assert_eq!(t.data_location, Some(1), "{t:?}");
        let location = t
            .external_data
            .iter()
            .find(|e| e.key.as_deref() == Some("location"))
            .and_then(|e| e.value.clone());
        assert_eq!(location.as_deref(), Some("copy.onnx.data"));
        external_tensors += 1;
    }
    assert_eq!(external_tensors, 3);
    assert_eq!(
        mutagraph_ir::Model::load(&out).unwrap().to_bytes(),
        inline.to_bytes()
    );
    // Moving the pair elsewhere keeps it whole; it runs like the original.
    let moved = mutagraph_tests::scratch("import_convert_moved");
    std::fs::rename(&out, moved.join("copy.onnx")).unwrap();
    std::fs::rename(&data, moved.join("copy.onnx.data")).unwrap();
    assert_eq!(
        metrics(&run_ok(&moved.join("copy.onnx"))),
        metrics(&run_ok(&external))
    );

    // Through the text syntax and back: each file gets its data beside it.
    let txt = out_dir.join("copy.onnxtxt");
    let o = mg(&["convert", path(&external), path(&txt)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out_dir.join("copy.onnxtxt.data").is_file());
    let text = std::fs::read_to_string(&txt).unwrap();
    assert!(
        text.contains("\"location\": \"copy.onnxtxt.data\""),
        "{text}"
    );
    let back = out_dir.join("back.onnx");
    let o = mg(&["convert", path(&txt), path(&back)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out_dir.join("back.onnx.data").is_file());
    let expected = mutagraph_ir::text::normalize(&inline).to_bytes();
    assert_eq!(
        mutagraph_ir::text::normalize(&mutagraph_ir::Model::load(&back).unwrap()).to_bytes(),
        expected
    );
    // An inline input stays one file.
    let plain = out_dir.join("plain.onnx");
    let o = mg(&["convert", path(&dir.join("inline.onnx")), path(&plain)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!out_dir.join("plain.onnx.data").exists());
    let leftovers: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}
