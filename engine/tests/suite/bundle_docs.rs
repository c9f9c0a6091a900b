//! A bug bundle's documents: REPORT.md names the library, the op and the trigger, shows its
//! hits and last-seen time as meta.json has them once renewed, and the snippet runs with the
//! library's own Python package.
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::value::{Data, HostTensor, Value};
use mutagraph_backends::worker::{Outcome, RunReport};
use mutagraph_engine::bundle::{Found, read_meta, renew_docs, update_hits, write_new};
use mutagraph_engine::findings::{Seen, SigEntry};
use mutagraph_oracles::{Finding, Kind, Layer, Location, MutantRuns};
use std::process::Command;

fn t(v: &[f32]) -> Value {
    Value::Tensor(HostTensor::new(vec![v.len()], Data::F32(v.to_vec())))
}

fn report(backend: &str, v: &[f32]) -> RunReport {
    RunReport {
        backend: backend.into(),
        version: "1.31.1".into(),
        outcome: Outcome::Ok(vec![("y".into(), t(v))]),
        wall_ms: 1.0,
        prepare_ms: 0.0,
        run_ms: 1.0,
        peak_rss: 0,
        cached: false,
        rewrites: Vec::new(),
    }
}

#[test]
fn report_and_snippet_of_a_bundle() {
    let model = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[3] x) => (float[3] y) { y = LeakyRelu <alpha: float = 0.5> (x) }",
    )
    .unwrap()
    .to_bytes();
    let inputs = vec![("x".to_string(), t(&[-2.0, 1.0, 3.0]))];
    // The "library" got the first element wrong (the expected value is -1).
    let runs = MutantRuns {
        runs: vec![
            report("reference", &[-1.0, 1.0, 3.0]),
            report("ort", &[-4.0, 1.0, 3.0]),
        ],
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let mut f = Finding::new(
        Kind::Inconsistency,
        "ort",
        "values",
        "output 'y': 1 of 3".into(),
    );
    f.location = Some(Location {
        op_type: "LeakyRelu".into(),
        value: "y".into(),
        attrs: String::new(),
    });
    f.layer = Some(Layer::Kernel);
    f.variants = vec![("ort".into(), true), ("ort-noopt".into(), true)];
    let seen = Seen {
        iteration: 3,
        elapsed_s: 1.5,
    };
    let mut entry = SigEntry::first("inconsistency-ort-leakyrelu-00000000".into(), &f, seen);
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join(&entry.id);
    let sig = f.signature();
    write_new(
        &b,
        &Found {
            finding: &f,
            signature: &sig,
            entry: &entry,
            localization: None,
            model: &mutagraph_oracles::Mutant::new(model.clone()),
            inputs: &inputs,
            input_seed: 0,
            seed_file: None,
            derived_from: None,
            whole_model: None,
            runs: &runs,
            native: None,
            blamed_inputs: None,
            seed: "zoo:lenet",
            iteration: 3,
            trace: &[],
            config: serde_json::json!({"backends": ["reference", "ort"]}),
            tolerance: Tolerance::APPROXIMATE,
        },
    )
    .unwrap();
    let md = std::fs::read_to_string(b.join("REPORT.md")).unwrap();
    let title = md.lines().next().unwrap();
    assert!(
        title.starts_with("# ONNX Runtime: LeakyRelu gives wrong values"),
        "{title}"
    );
    assert!(title.contains("alpha=0.5"), "{title}");
    assert!(md.contains("- Hits: 1\n"), "{md}");
    assert!(
        md.contains("| `y` | [0] -1.000000 | [0] -4.000000 | 1 of 3 |"),
        "{md}"
    );
    assert!(md.contains("- OS: "), "{md}");
    // New hits: meta.json follows at once, REPORT.md when the documents are renewed.
    entry.hits = 7;
    entry.last_seen = Seen {
        iteration: 99,
        elapsed_s: 42.0,
    };
    update_hits(&b, &entry).unwrap();
    assert_eq!(read_meta(&b).unwrap().hits, 7);
    let md = std::fs::read_to_string(b.join("REPORT.md")).unwrap();
    assert!(md.contains("- Hits: 1\n"), "{md}");
    renew_docs(&b).unwrap();
    let md = std::fs::read_to_string(b.join("REPORT.md")).unwrap();
    assert!(md.contains("- Hits: 7\n"), "{md}");
    assert!(md.contains("last seen: 42.0 s (iteration 99)"), "{md}");
    // The snippet builds the model with onnx.helper and runs ONNX Runtime on it.
    let snippet = std::fs::read_to_string(b.join("snippet.py")).unwrap();
    assert!(snippet.lines().count() <= 30, "{snippet}");
    assert!(
        snippet.contains("helper.make_node(\"LeakyRelu\""),
        "{snippet}"
    );
    let out = Command::new("python3")
        .arg("snippet.py")
        .current_dir(&b)
        .output()
        .expect("python3 with onnx and onnxruntime: bash .ci/setup");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // ONNX Runtime's own (correct) value and the expected one are printed.
    assert!(text.contains("-1."), "{text}");
    assert!(text.contains("expected [-1.0"), "{text}");
}

/// REPORT.md describes the model it shows: once `minimized.onnx` is written, its title, its
/// error block and its summary come from the finding on the minimized model, not from the
/// message the campaign saw on the original (whose node numbers and shapes are another
/// model's).
#[test]
fn report_of_a_minimized_crash_uses_the_minimized_message() {
    use mutagraph_engine::bundle::write_minimized;
    use mutagraph_engine::minimizer::{Done, MinimizedInfo};
    let model = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[3] x) => (float[3] y) { a = Relu (x) \n y = Neg (a) }",
    )
    .unwrap()
    .to_bytes();
    let small = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[3] a) => (float[3] y) { y = Neg (a) }",
    )
    .unwrap()
    .to_bytes();
    let inputs = vec![("x".to_string(), t(&[-2.0, 1.0, 3.0]))];
    let failing = |backend: &str, msg: &str| RunReport {
        outcome: Outcome::Error {
            stage: mutagraph_backends::backend::Stage::Compile,
            message: msg.into(),
        },
        ..report(backend, &[])
    };
    let big_msg = "compile: node #18 \"Neg_1\" Neg: expected 8,2,F32 got 8,4,F32";
    let small_msg = "compile: node #1 \"Neg_1\" Neg: expected 1,2,F32 got 1,4,F32";
    let runs = MutantRuns {
        runs: vec![
            report("reference", &[2.0, -1.0, -3.0]),
            failing("tract", big_msg),
        ],
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let mut f = Finding::new(Kind::Crash, "tract", "error", big_msg.into());
    f.location = Some(Location {
        op_type: "Neg".into(),
        value: "y".into(),
        attrs: String::new(),
    });
    f.layer = Some(Layer::Kernel);
    f.variants = vec![("tract".into(), true)];
    let (_dir, b, sig) = write_bundle("crash-tract-neg-00000000", &f, &model, &inputs, &runs);
    let md = std::fs::read_to_string(b.join("REPORT.md")).unwrap();
    assert!(md.contains("node #18"), "{md}");
    let mut small_f = f.clone();
    small_f.message = small_msg.into();
    let done = Done {
        dir: b.clone(),
        signature: sig.clone(),
        model: small,
        inputs: vec![("a".to_string(), t(&[-2.0, 1.0, 3.0]))],
        runs: MutantRuns {
            runs: vec![
                report("reference", &[2.0, -1.0, -3.0]),
                failing("tract", small_msg),
            ],
            reference: Some(0),
            reruns: Vec::new(),
            slow_baseline: Default::default(),
        },
        finding: small_f,
        native: None,
        localization: None,
        blamed_inputs: None,
        info: MinimizedInfo {
            nodes_before: 2,
            nodes_after: 1,
            ..Default::default()
        },
        whole_model: None,
    };
    write_minimized(&b, &done).unwrap();
    let md = std::fs::read_to_string(b.join("REPORT.md")).unwrap();
    assert!(md.contains("expected 1,2,F32 got 1,4,F32"), "{md}");
    assert!(
        !md.contains("node #18"),
        "the original's message is still shown:\n{md}"
    );
}

/// tract cannot compile some models from their inputs' types and shapes alone (a Reshape whose
/// shape is an input): mutagraph's tract pipeline then fixes the inputs to their values, and
/// repro.py does the same with tract's Python package, saying so, instead of reporting the
/// compile failure as the library's answer.
#[test]
fn tract_repro_fixes_the_inputs_as_mutagraph_does() {
    let model = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[3] x, int64[2] s) => (float[3,1] y) { y = Reshape (x, s) }",
    )
    .unwrap()
    .to_bytes();
    let inputs = vec![
        ("x".to_string(), t(&[1.0, 2.0, 3.0])),
        (
            "s".to_string(),
            Value::Tensor(HostTensor::new(vec![2], Data::I64(vec![3, 1]))),
        ),
    ];
    let out = |v: &[f32]| RunReport {
        outcome: Outcome::Ok(vec![(
            "y".into(),
            Value::Tensor(HostTensor::new(vec![3, 1], Data::F32(v.to_vec()))),
        )]),
        ..report("reference", v)
    };
    // A made-up wrong answer: tract's package gives the right one once compiled.
    let runs = MutantRuns {
        runs: vec![
            out(&[1.0, 2.0, 3.0]),
            RunReport {
                backend: "tract".into(),
                ..out(&[9.0, 2.0, 3.0])
            },
        ],
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let text = tract_values_repro("Reshape", &model, &inputs, &runs);
    assert!(
        text.contains("fixed to their values"),
        "no retry with fixed inputs:\n{text}"
    );
    assert!(
        text.contains("NOT REPRODUCED") && text.contains("matches the expected values"),
        "tract's package did not run the model:\n{text}"
    );
}

/// A model whose output tract keeps as its dimension type (a Shape's): tract's package cannot
/// hand TDim to numpy, so repro.py converts it to int64 and says so, and the run is judged.
#[test]
fn tract_repro_reads_an_output_tract_keeps_as_a_dimension() {
    let model = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[3] x) => (int64[1] y) { y = Shape (x) }",
    )
    .unwrap()
    .to_bytes();
    let inputs = vec![("x".to_string(), t(&[1.0, 2.0, 3.0]))];
    let out = |backend: &str, v: i64| RunReport {
        outcome: Outcome::Ok(vec![(
            "y".into(),
            Value::Tensor(HostTensor::new(vec![1], Data::I64(vec![v]))),
        )]),
        ..report(backend, &[])
    };
    // A made-up wrong answer: tract's package gives the right one.
    let runs = MutantRuns {
        runs: vec![out("reference", 3), out("tract", 4)],
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let text = tract_values_repro("Shape", &model, &inputs, &runs);
    assert!(
        text.contains("converted to int64") && text.contains("matches the expected values"),
        "tract's TDim output was not read:\n{text}"
    );
}

/// A model tract fails on both ways (a variable Reshape shape, then, with the inputs fixed, a
/// logarithm of int64): repro.py reports both failures as the crate pipeline does, so the
/// bundle's expected phrase (from the first) is found.
#[test]
fn tract_repro_reports_both_failures_when_fixing_the_inputs_fails_too() {
    let model = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (int64[4] x, int64[2] s) => (int64 y) { r = Reshape (x, s)\n \
         y = ReduceLogSum <keepdims = 0> (r) }",
    )
    .unwrap()
    .to_bytes();
    let i64s = |v: Vec<i64>| Value::Tensor(HostTensor::new(vec![v.len()], Data::I64(v)));
    let inputs = vec![
        ("x".to_string(), i64s(vec![1, 2, 3, 4])),
        ("s".to_string(), i64s(vec![2, 2])),
    ];
    let failed = |backend: &str| RunReport {
        backend: backend.into(),
        outcome: Outcome::Error {
            stage: mutagraph_backends::backend::Stage::Compile,
            message: "compile: Translating node #1 \"r\" Reshape ToTypedTranslator: shape \
                      input is variable; with the inputs fixed to their values: Ln does not \
                      support I64"
                .into(),
        },
        ..report(backend, &[])
    };
    let runs = MutantRuns {
        runs: vec![report("reference", &[0.0]), failed("tract")],
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let mut f = Finding::new(
        Kind::Crash,
        "tract",
        "error",
        "compile: Translating node #1 \"r\" Reshape ToTypedTranslator: shape input is variable"
            .into(),
    );
    f.variants = vec![("tract".into(), true)];
    let (_dir, b, _) = write_bundle("crash-tract-reshape-00000000", &f, &model, &inputs, &runs);
    let out = Command::new("python3")
        .arg("repro.py")
        .current_dir(&b)
        .output()
        .expect("python3 with onnx and the tract package: bash .ci/setup");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\nREPRODUCED: ") && text.contains("with the inputs fixed to their values: "),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The output of `repro.py` (stdout, then stderr) of a bundle filing tract's values of `op`'s
/// output `y` as wrong.
fn tract_values_repro(
    op: &str,
    model: &[u8],
    inputs: &mutagraph_backends::value::NamedValues,
    runs: &MutantRuns,
) -> String {
    let mut f = Finding::new(
        Kind::Inconsistency,
        "tract",
        "values",
        "output 'y' differs".into(),
    );
    f.location = Some(Location {
        op_type: op.into(),
        value: "y".into(),
        attrs: String::new(),
    });
    f.variants = vec![("tract".into(), true)];
    let id = format!("inconsistency-tract-{}-00000000", op.to_lowercase());
    let (_dir, b, _) = write_bundle(&id, &f, model, inputs, runs);
    let out = Command::new("python3")
        .arg("repro.py")
        .current_dir(&b)
        .output()
        .expect("python3 with onnx and the tract package: bash .ci/setup");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Files `f` (a tract finding seen at iteration 1) as bundle `id` in a new temporary directory;
/// returns the directory, the bundle's path and the signature.
fn write_bundle(
    id: &str,
    f: &Finding,
    model: &[u8],
    inputs: &mutagraph_backends::value::NamedValues,
    runs: &MutantRuns,
) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let seen = Seen {
        iteration: 1,
        elapsed_s: 0.5,
    };
    let entry = SigEntry::first(id.into(), f, seen);
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join(&entry.id);
    let sig = f.signature();
    write_new(
        &b,
        &Found {
            finding: f,
            signature: &sig,
            entry: &entry,
            localization: None,
            model: &mutagraph_oracles::Mutant::new(model.to_vec()),
            inputs,
            input_seed: 0,
            seed_file: None,
            derived_from: None,
            whole_model: None,
            runs,
            native: None,
            blamed_inputs: None,
            seed: "zoo:lenet",
            iteration: 1,
            trace: &[],
            config: serde_json::json!({
                "backends": runs.runs.iter().map(|r| r.backend.clone()).collect::<Vec<_>>()
            }),
            tolerance: Tolerance::APPROXIMATE,
        },
    )
    .unwrap();
    (dir, b, sig)
}

/// `y = Abs(Neg(x))` on x = [-2, 1, 3], with the reference's run and `faulty`'s (`actual`).
fn neg_then_abs(
    faulty: &str,
    actual: &[f32],
) -> (Vec<u8>, mutagraph_backends::value::NamedValues, MutantRuns) {
    let model = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[3] x) => (float[3] y) { t = Neg (x)\n y = Abs (t) }",
    )
    .unwrap()
    .to_bytes();
    let inputs = vec![("x".to_string(), t(&[-2.0, 1.0, 3.0]))];
    let runs = MutantRuns {
        runs: vec![
            report("reference", &[2.0, 1.0, 3.0]),
            report(faulty, actual),
        ],
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    (model, inputs, runs)
}

#[test]
fn a_node_that_shows_it_only_after_its_producers_is_titled_so_and_gets_no_node_repro() {
    let (model, inputs, runs) = neg_then_abs("burn-ndarray", &[1.0, 3.0, 2.0]);
    let mut f = Finding::new(
        Kind::Inconsistency,
        "burn-ndarray",
        "values",
        "output 'y': 3 of 3".into(),
    );
    f.location = Some(Location {
        op_type: "Abs".into(),
        value: "y".into(),
        attrs: String::new(),
    });
    f.blame = Some(mutagraph_oracles::Blame::WithProducers {
        ops: vec!["Neg".into()],
    });
    let (_dir, b, _) = write_bundle(
        "inconsistency-burn-abs-00000000",
        &f,
        &model,
        &inputs,
        &runs,
    );
    let md = std::fs::read_to_string(b.join("REPORT.md")).unwrap();
    let title = md.lines().next().unwrap();
    assert!(
        title.starts_with(
            "# burn: Abs after Neg gives wrong values on the memory layout Neg leaves (right on \
             a fresh tensor of the same values)"
        ),
        "{title}"
    );
    assert!(
        md.contains("- Blame checked: the Abs node shows it only together with the nodes producing its inputs (Neg)"),
        "{md}"
    );
    assert!(
        !b.join("repro").exists(),
        "the node alone does not show it: no repro/ of the node alone"
    );
}

#[test]
fn an_optimizer_finding_on_no_node_is_titled_with_the_small_models_ops() {
    let (model, inputs, runs) = neg_then_abs("ort", &[2.0, 1.0, 2.0]);
    let mut f = Finding::new(Kind::Inconsistency, "ort", "values", "output 'y'".into());
    f.layer = Some(Layer::Optimizer);
    let (_dir, b, _) = write_bundle(
        "inconsistency-ort-values-00000000",
        &f,
        &model,
        &inputs,
        &runs,
    );
    let md = std::fs::read_to_string(b.join("REPORT.md")).unwrap();
    let title = md.lines().next().unwrap();
    assert!(
        title.starts_with("# ONNX Runtime: Neg, Abs with graph optimizations gives wrong values"),
        "{title}"
    );
}

#[test]
fn a_witness_the_triage_ran_on_its_own_is_listed_among_the_other_backends() {
    // The campaign's runs hold the reference and tract only; the triage ran burn-ndarray on
    // its own and it ran the model: "that burn-ndarray runs" is backed by a line (round 9: the
    // claim had no run in the bundle to show for it).
    let (model, inputs, runs) = neg_then_abs("tract", &[2.0, 1.0, 9.0]);
    let mut f = Finding::new(Kind::Inconsistency, "tract", "values", "output 'y'".into());
    f.witnesses = vec!["burn-ndarray".into(), "reference".into()];
    let (_dir, b, _) = write_bundle(
        "inconsistency-tract-values-00000000",
        &f,
        &model,
        &inputs,
        &runs,
    );
    let md = std::fs::read_to_string(b.join("REPORT.md")).unwrap();
    let line = md
        .lines()
        .find(|l| l.contains("burn-ndarray") && l.contains("a run of its own"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(line.contains("runs it"), "{line}");
}
