//! `mutagraph consistency`: the agreement matrix, per-op attribution with a planted bug, the
//! three output files, and bad input.
use crate::common::mg;
use serde_json::Value;
use std::path::Path;

fn json(p: &Path) -> Value {
    let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_slice(&bytes).unwrap()
}

/// Runs the command and returns `consistency.json` (the command must succeed), which
/// `--json` prints too.
fn consistency(args: &[&str], out: &Path) -> Value {
    let mut all = vec![
        "consistency",
        "--out",
        out.to_str().unwrap(),
        "-q",
        "--json",
    ];
    all.extend_from_slice(args);
    let o = mg(&all);
    assert!(
        o.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let file = json(&out.join("consistency.json"));
    let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(printed, file, "--json prints the file's content");
    file
}

fn rate(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a rate: {v}"))
}

/// The zoo's small models on the default libraries: a symmetric matrix with 1 on the
/// diagonal, counts that follow from the per-model rows, latency for every backend; the
/// Markdown and the page hold the matrix.
#[test]
fn zoo_models_on_the_default_libraries() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    for name in ["lenet5", "lstm", "gru", "transformer_encoder"] {
        let m = mutagraph_mutators::zoo::build(name).unwrap();
        m.save(models.join(format!("{name}.onnx"))).unwrap();
    }
    let out = dir.path().join("out");
    let set = ["reference", "ort", "tract", "burn-ndarray"];
    let r = consistency(
        &[
            models.to_str().unwrap(),
            "--backends",
            &set.join(","),
            "--repeat",
            "2",
        ],
        &out,
    );
    assert_eq!(r["version"], 1);
    assert_eq!(r["reference"], "reference");
    assert_eq!(r["attribution"], "localization");
    assert_eq!(r["models_run"], 4);
    let rows = r["models"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let m = r["matrix"].as_array().unwrap();
    assert_eq!(m.len(), set.len());
    for (i, a) in set.iter().enumerate() {
        let ran = rows
            .iter()
            .filter(|row| {
                row["runs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x["backend"] == *a && x["status"] == "ok")
            })
            .count();
        assert_eq!(m[i][i]["both_ran"], ran, "{a}: diagonal counts its runs");
        assert_eq!(
            m[i][i]["models"],
            rows.len(),
            "{a}: diagonal counts its models"
        );
        let want = ran as f64 / rows.len() as f64;
        assert_eq!(
            rate(&m[i][i]["rate"]),
            want,
            "{a}: diagonal: the models it ran"
        );
        for (j, b) in set.iter().enumerate() {
            assert_eq!(m[i][j], m[j][i], "{a}/{b}: symmetric");
            if i == j {
                continue;
            }
            // The cell counts the rows' pairs of these two backends.
            let pairs: Vec<&Value> = rows
                .iter()
                .flat_map(|row| row["pairs"].as_array().unwrap())
                .filter(|p| (p["a"] == *a && p["b"] == *b) || (p["a"] == *b && p["b"] == *a))
                .collect();
            let agree = pairs.iter().filter(|p| p["agree"] == true).count();
            assert_eq!(m[i][j]["both_ran"], pairs.len(), "{a}/{b}");
            assert_eq!(m[i][j]["agree"], agree, "{a}/{b}");
            assert!(pairs.len() <= ran);
            // A model either one failed on counts against the pair.
            assert_eq!(m[i][j]["models"], rows.len(), "{a}/{b}");
            assert_eq!(m[i][j]["failed"], rows.len() - pairs.len(), "{a}/{b}");
            let want = agree as f64 / rows.len() as f64;
            assert!((rate(&m[i][j]["rate"]) - want).abs() < 1e-12, "{a}/{b}");
        }
    }
    assert_eq!(r["pairs"].as_array().unwrap().len(), 6);
    // Latency per backend, from each model's repeated runs.
    let lat = r["latency"].as_array().unwrap();
    assert_eq!(lat.len(), set.len());
    for (l, b) in lat.iter().zip(set) {
        assert_eq!(l["backend"], b);
        assert!(l["models"].as_u64().unwrap() > 0, "{l}");
        let (med, p90) = (rate(&l["median_ms"]), rate(&l["p90_ms"]));
        assert!(med > 0.0 && p90 >= med, "{l}");
        assert!(rate(&l["total_ms"]) >= p90, "{l}");
    }
    for row in rows {
        for x in row["runs"].as_array().unwrap() {
            if x["status"] == "ok" {
                assert_eq!(x["runs_ms"].as_array().unwrap().len(), 2, "{x}");
            }
        }
        // Every op of the models is in the per-op table.
        for op in row["ops"].as_array().unwrap() {
            assert!(
                r["ops"].as_array().unwrap().iter().any(|o| o["op"] == *op),
                "{op}"
            );
        }
    }
    // The Markdown and the page hold the matrix.
    let md = std::fs::read_to_string(out.join("consistency.md")).unwrap();
    assert!(md.contains("## Agreement matrix"), "{md}");
    assert!(md.contains("| **burn-ndarray** |"), "{md}");
    assert!(
        md.contains("| reference | ort | tract | burn-ndarray |"),
        "{md}"
    );
    let html = std::fs::read_to_string(out.join("consistency.html")).unwrap();
    assert!(html.contains("<table class=\"matrix\">"));
    assert_eq!(html.matches("<td class=\"heat\"").count(), 16);
    assert!(html.contains("<th class=\"row\">tract</th>"));
    assert!(!html.contains("<script"), "no script");
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "self-contained"
    );
}

/// A model in the ONNX text syntax.
fn write_text(path: &Path, graph: &str) {
    std::fs::write(
        path,
        format!("<ir_version: 8, opset_import: [\"\" : 17]>\n{graph}\n"),
    )
    .unwrap();
}

/// The planted Softmax bug (NaN once an input passes ≈ 88.7) disagrees with the reference on
/// the model with a large Softmax, is localized to Softmax (not to the Mul before it), and
/// agrees on the models without Softmax.
#[test]
fn a_planted_bug_is_attributed_to_its_op() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    write_text(
        &models.join("a_softmax.onnxtxt"),
        "g (float[2,16] x) => (float[2,16] y) {\n  k = Constant <value = float {200}> ()\n  \
         s = Mul (x, k)\n  y = Softmax <axis = -1> (s)\n}",
    );
    write_text(
        &models.join("b_mul_relu.onnxtxt"),
        "g (float[2,16] x) => (float[2,16] y) {\n  k = Constant <value = float {200}> ()\n  \
         s = Mul (x, k)\n  y = Relu (s)\n}",
    );
    write_text(
        &models.join("c_relu.onnxtxt"),
        "g (float[4] x) => (float[4] y) { y = Relu (x) }",
    );
    let out = dir.path().join("out");
    let r = consistency(
        &[
            models.to_str().unwrap(),
            "--backends",
            "reference,planted-softmax",
        ],
        &out,
    );
    assert_eq!(r["models_run"], 3);
    let cell = &r["matrix"][0][1];
    assert_eq!(cell["both_ran"], 3);
    assert_eq!(cell["agree"], 2);
    assert!(rate(&cell["rate"]) < 1.0);
    for row in r["models"].as_array().unwrap() {
        let name = row["model"].as_str().unwrap();
        let p = &row["pairs"][0];
        assert_eq!(
            (&p["a"], &p["b"]),
            (&"reference".into(), &"planted-softmax".into())
        );
        let has_softmax = name.ends_with("a_softmax.onnxtxt");
        assert_eq!(p["agree"], !has_softmax, "{name}: {p}");
        if has_softmax {
            assert_eq!(row["blame"][0]["backend"], "planted-softmax");
            assert_eq!(row["blame"][0]["verdict"], "localized", "{row}");
            assert_eq!(row["blame"][0]["op"], "Softmax", "{row}");
        } else {
            assert!(row["blame"].as_array().unwrap().is_empty());
        }
    }
    let ops = r["ops"].as_array().unwrap();
    let op = |n: &str| ops.iter().find(|o| o["op"] == n).unwrap().clone();
    let softmax = op("Softmax");
    assert_eq!(softmax["models"], 1);
    assert_eq!(softmax["disagree"], 1);
    assert_eq!(softmax["blamed"], 1);
    assert_eq!(softmax["blamed_by"]["planted-softmax"], 1);
    // The Mul before it is in the disagreeing model too: containment counts it, the
    // localization does not blame it.
    let mul = op("Mul");
    assert_eq!(
        (&mul["models"], &mul["vs_reference"]),
        (&2.into(), &1.into())
    );
    assert_eq!(mul["blamed"], 0);
    assert_eq!(ops[0]["op"], "Softmax", "the most blamed op first");
    let html = std::fs::read_to_string(out.join("consistency.html")).unwrap();
    assert!(
        html.contains("planted-softmax: Softmax (localized)"),
        "the model's row"
    );
    let md = std::fs::read_to_string(out.join("consistency.md")).unwrap();
    assert!(
        md.contains("| Softmax | 1 | 1 (100.0%) | 1 (100.0%) | planted-softmax 1 |"),
        "{md}"
    );
}

/// A model that cannot be read is listed with its reason and the others run; a path that
/// does not exist is an error naming it, with exit status 1.
#[test]
fn bad_models_and_bad_paths() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir_all(models.join("sub")).unwrap();
    std::fs::write(models.join("broken.onnx"), b"not a model").unwrap();
    write_text(
        &models.join("sub").join("relu.onnxtxt"),
        "g (float[4] x) => (float[4] y) { y = Relu (x) }",
    );
    let out = dir.path().join("out");
    let r = consistency(
        &[models.to_str().unwrap(), "--backends", "reference,ort"],
        &out,
    );
    assert_eq!(r["models_run"], 1, "found in the subdirectory");
    let refused = r["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0]["model"]
            .as_str()
            .unwrap()
            .ends_with("broken.onnx")
    );
    assert!(
        refused[0]["reason"]
            .as_str()
            .unwrap()
            .contains("broken.onnx")
    );

    let missing = dir.path().join("no-such-model.onnx");
    let o = mg(&[
        "consistency",
        missing.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no-such-model.onnx"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A backend that fails on a model is a disagreement the user sees: in the matrix cell (not
/// 100 %), and with its reason in the Markdown, the page and the JSON.
#[test]
fn a_failing_backend_is_a_cell_of_the_matrix_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    write_text(
        &models.join("a_relu.onnxtxt"),
        "g (float[4] x) => (float[4] y) { y = Relu (x) }",
    );
    // ONNX Runtime has com.microsoft's Inverse; the reference does not.
    std::fs::write(
        models.join("b_inverse.onnx"),
        mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
             g (float[4, 4] x) => (float[4, 4] y) { y = com.microsoft.Inverse (x) }",
        )
        .unwrap()
        .to_bytes(),
    )
    .unwrap();
    let out = dir.path().join("out");
    let r = consistency(
        &[models.to_str().unwrap(), "--backends", "reference,ort"],
        &out,
    );
    let cell = &r["matrix"][0][1];
    assert_eq!(
        (
            &cell["models"],
            &cell["both_ran"],
            &cell["agree"],
            &cell["failed"]
        ),
        (&2.into(), &1.into(), &1.into(), &1.into()),
        "{cell}"
    );
    assert!(rate(&cell["rate"]) < 1.0, "{cell}");
    let md = std::fs::read_to_string(out.join("consistency.md")).unwrap();
    assert!(md.contains("50.0% (1/2, 1 failed)"), "{md}");
    assert!(md.contains("## Failures"), "{md}");
    assert!(md.contains("com.microsoft::Inverse"), "{md}");
    let html = std::fs::read_to_string(out.join("consistency.html")).unwrap();
    assert!(
        html.contains("id=\"failures\""),
        "the page has the failures"
    );
    assert!(html.contains("com.microsoft::Inverse"));
}
