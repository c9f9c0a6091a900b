//! The textual syntax (`mutagraph_ir::text`) on the ONNX backend test suite, and against onnx's
//! own printer and parser (run by tests/python/text_compare.py, once for all models):
//!
//! 1. every suite model survives print → parse as exactly what `text::normalize` keeps;
//! 2. onnx.parser reads our text of every node model as the original model;
//! 3. our parser reads onnx.printer's text of every node model as the original model, modulo
//!    what onnx.printer's text cannot carry (floats are printed with 6 significant digits).
use mutagraph_ir::{Model, export, pb, text};
use mutagraph_tests::{python, rel, scratch, suite_dir, suite_models};
use prost::Message;
use std::collections::BTreeMap;

/// Node models where a direction is known not to round trip, with the reason. Empty: every
/// printable node model round trips both ways.
const EXCEPTIONS: &[(&str, &str)] = &[];

#[test]
fn every_suite_model_round_trips_through_the_text() {
    let models = suite_models();
    assert_eq!(models.len(), 1072, "the Debian suite has 1072 models");
    let mut failures = Vec::new();
    let mut lossless = 0;
    for path in &models {
        let m = Model::load(path).unwrap();
        let t = text::print_model(&m);
        let back = match text::parse_model(&t) {
            Ok(b) => b,
            Err(e) => {
                failures.push(format!("{}: our parser rejects our text: {e}", rel(path)));
                continue;
            }
        };
        let norm = text::normalize(&m);
        if back.to_bytes() != norm.to_bytes() {
            failures.push(format!(
                "{}: print → parse differs from normalize",
                rel(path)
            ));
        }
        if text::print_model(&back) != t {
            failures.push(format!("{}: printing is not stable", rel(path)));
        }
        if text::normalize(&norm).to_bytes() != norm.to_bytes() {
            failures.push(format!("{}: normalize is not idempotent", rel(path)));
        }
        if norm.to_bytes() == m.to_bytes() {
            lossless += 1;
        }
    }
    println!(
        "{} suite models round trip through the text; {lossless} of them losslessly \
         (the others differ only in what the text does not carry)",
        models.len() - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Rounds a float to 6 significant digits, as onnx.printer writes it.
fn g6(v: f64) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    format!("{v:.5e}").parse().unwrap_or(v)
}

fn round_tensor(t: &mut pb::TensorProto) {
    for v in &mut t.float_data {
        *v = g6(*v as f64) as f32;
    }
    for v in &mut t.double_data {
        *v = g6(*v);
    }
}

fn round_graph(g: &mut pb::GraphProto) {
    g.initializer.iter_mut().for_each(round_tensor);
    for n in &mut g.node {
        for a in &mut n.attribute {
            if let Some(f) = &mut a.f {
                *f = g6(*f as f64) as f32;
            }
            for f in &mut a.floats {
                *f = g6(*f as f64) as f32;
            }
            a.t.iter_mut().for_each(round_tensor);
            a.tensors.iter_mut().for_each(round_tensor);
            a.g.iter_mut().for_each(round_graph);
            a.graphs.iter_mut().for_each(round_graph);
        }
    }
}

/// What onnx.printer's text keeps of a model: what ours keeps, floats at 6 digits, and node
/// names only when they are not empty.
fn as_python_text(m: &Model) -> Vec<u8> {
    fn unname(g: &mut pb::GraphProto) {
        for n in &mut g.node {
            if n.name.as_deref() == Some("") {
                n.name = None;
            }
            for a in &mut n.attribute {
                a.g.iter_mut().for_each(unname);
                a.graphs.iter_mut().for_each(unname);
            }
        }
    }
    let mut p = export::model_to_proto(&text::normalize(m));
    if let Some(g) = &mut p.graph {
        round_graph(g);
        unname(g);
    }
    p.encode_to_vec()
}

#[test]
fn text_agrees_with_onnx_printer_and_parser() {
    let node_dir = suite_dir().join("node");
    let work = scratch("text_python");
    std::fs::create_dir_all(work.join("ours")).unwrap();
    let mut models = BTreeMap::new();
    for path in suite_models() {
        if !path.starts_with(&node_dir) {
            continue;
        }
        let test = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let m = Model::load(&path).unwrap();
        std::fs::write(
            work.join("ours").join(format!("{test}.onnxtxt")),
            text::print_model(&m),
        )
        .unwrap();
        models.insert(test, m);
    }
    assert_eq!(models.len(), 932, "the Debian suite has 932 node models");

    let o = python(
        "text_compare.py",
        &[node_dir.to_str().unwrap(), work.to_str().unwrap()],
    );
    assert!(
        o.status.success(),
        "text_compare.py failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let exceptions: BTreeMap<&str, &str> = EXCEPTIONS.iter().copied().collect();
    let (mut printable, mut ours_ok, mut theirs_ok) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut seen = 0;
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let rec: serde_json::Value = serde_json::from_str(line).unwrap();
        let test = rec["test"].as_str().unwrap().to_string();
        seen += 1;
        let excused = exceptions.contains_key(test.as_str());
        // (1) onnx.parser on our text.
        match rec["ours"].as_str().unwrap() {
            "ok" => ours_ok += 1,
            problem if !excused => failures.push(format!("{test}: {problem}")),
            _ => {}
        }
        if !rec["printable"].as_bool().unwrap() {
            continue;
        }
        printable += 1;
        // (2) our parser on onnx.printer's text.
        let py_text =
            std::fs::read_to_string(work.join("python").join(format!("{test}.txt"))).unwrap();
        let problem = match text::parse_model(&py_text) {
            Err(e) => Some(format!("our parser rejects onnx.printer's text: {e}")),
            Ok(parsed) if as_python_text(&parsed) != as_python_text(&models[&test]) => {
                Some("our parser reads onnx.printer's text as a different model".to_string())
            }
            Ok(_) => None,
        };
        match problem {
            None => theirs_ok += 1,
            Some(p) if !excused => failures.push(format!("{test}: {p}")),
            Some(_) => {}
        }
    }
    assert_eq!(seen, models.len(), "text_compare.py skipped models");
    println!(
        "{} node models; onnx.printer prints {printable}; onnx.parser reads our text as the \
         original for {ours_ok}; our parser reads onnx.printer's text as the original for \
         {theirs_ok}",
        models.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
