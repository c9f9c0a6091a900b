//! Minimization never drifts: a candidate that still shows the target bug but also another bug
//! of the same library (one the starting model did not show) is not kept
//! (`Reproducer::start`, `Reproducer::reproduces`). `planted-two` carries two bugs: Softmax
//! overflows, ReduceMean reduces the wrong axis for a negative one.
use crate::common::text_model;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::value::{Data, HostTensor, Value};
use mutagraph_backends::worker::{Pool, PoolOptions};
use mutagraph_ir::Model;
use mutagraph_oracles::triage::{Reproducer, ValueMap};
use mutagraph_oracles::{MutantRuns, Triage, Verdict};
use std::path::PathBuf;

const BACKENDS: [&str; 2] = ["reference", "planted-two"];

fn backends() -> Vec<String> {
    BACKENDS.iter().map(|b| b.to_string()).collect()
}

fn inputs() -> Vec<(String, Value)> {
    let t = |shape: Vec<usize>, v: Vec<f32>| Value::Tensor(HostTensor::new(shape, Data::F32(v)));
    vec![
        (
            "a".into(),
            t(vec![2, 3], vec![1.0, 2.0, 3.0, 5.0, 7.0, 11.0]),
        ),
        ("x".into(), t(vec![4], vec![100.0, 1.0, 2.0, 3.0])),
    ]
}

/// Softmax over values past 88.7 (planted-two makes NaN), beside a ReduceMean over the last
/// axis (planted-two divides by the other axis' length) that a product with zero hides or not.
fn model(hidden: bool) -> Model {
    let (weights, y2) = if hidden {
        (
            "<float zero = {0.0}>",
            "m = ReduceMean <axes = [-1]> (a)\n y2 = Mul (m, zero)",
        )
    } else {
        ("", "y2 = ReduceMean <axes = [-1]> (a)")
    };
    let src = format!(
        "g (float[2,3] a, float[4] x) => (float[4] y1, float[2,1] y2) {weights} \
         {{ {y2}\n y1 = Softmax (x) }}"
    );
    Model::from_bytes(&text_model(&src)).expect("a valid model")
}

fn reports(pool: &mut Pool, m: &Model) -> Vec<String> {
    let bytes = m.to_bytes();
    let runs = MutantRuns {
        runs: BACKENDS
            .iter()
            .map(|b| pool.run(b, &bytes, &inputs()).unwrap())
            .collect(),
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    Triage::new(&backends(), Tolerance::APPROXIMATE)
        .judge(pool, &bytes, &inputs(), &runs)
        .into_iter()
        .filter(|t| t.verdict == Verdict::Report)
        .map(|t| t.finding.signature())
        .collect()
}

#[test]
fn a_candidate_showing_another_bug_of_the_library_is_not_kept() {
    let mut pool = Pool::new(PoolOptions::new(PathBuf::from(env!(
        "CARGO_BIN_EXE_mutagraph"
    ))));
    let (start, drifted) = (model(true), model(false));
    let shown = reports(&mut pool, &start);
    let [target] = shown.as_slice() else {
        panic!("the starting model shows the Softmax bug alone: {shown:?}")
    };
    assert!(target.contains("op=Softmax"), "{target}");
    let also = reports(&mut pool, &drifted);
    assert!(also.contains(target), "{also:?}");
    assert!(
        also.iter().any(|s| s.contains("op=ReduceMean")),
        "the smaller model shows the ReduceMean bug too: {also:?}"
    );
    let mut rep = Reproducer::new(
        &mut pool,
        Triage::new(&backends(), Tolerance::APPROXIMATE),
        target.clone(),
        ValueMap::new(&inputs(), None, 0),
    );
    let first = rep.check_with(&start, inputs()).unwrap();
    rep.start(&first);
    assert!(rep.reproduces(&start));
    assert!(
        !rep.reproduces(&drifted),
        "a candidate that shows the target and a new bug of its library has drifted"
    );
}

/// Add → LayerNormalization over the last two axes (ONNX Runtime 1.31.1 fuses it into
/// SkipLayerNormalization, which normalizes over the last axis only), beside an LSTM with
/// `input_forget = 1` that the reference refuses (ONNX leaves the coupling undefined) or not.
fn skip_layer_norm(with_lstm: bool) -> Model {
    let (outputs, lstm) = if with_lstm {
        (
            ", float[1,1,1,1] h",
            " h = LSTM <hidden_size = 1, input_forget = 1> (q, w, r)\n",
        )
    } else {
        ("", "")
    };
    let src = format!(
        "g (float[1,2,4] a, float[1,2,4] b, float[1,1,2] q) => (float[1,2,4] y{outputs}) \
         <float[4] sc = {{1, 1, 1, 1}}, float[4] bi = {{0, 0, 0, 0}}, \
         float[1,4,2] w = {{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}}, \
         float[1,4,1] r = {{0.1, 0.2, 0.3, 0.4}}> \
         {{ s = Add (a, b)\n y = LayerNormalization <axis = -2> (s, sc, bi)\n{lstm} }}"
    );
    Model::from_bytes(&text_model(&src)).expect("a valid model")
}

/// A bug judged against ONNX Runtime's unoptimized run because the reference could not run
/// the model is the same bug once a candidate drops the op the reference lacks: the minimizer
/// may keep that candidate (it used to keep the LSTM, unrelated to the fusion, to the end).
#[test]
fn dropping_the_op_the_reference_lacked_keeps_the_bug() {
    let mut pool = Pool::new(PoolOptions::new(PathBuf::from(env!(
        "CARGO_BIN_EXE_mutagraph"
    ))));
    let backends: Vec<String> = ["reference", "ort"].map(String::from).to_vec();
    let t = |shape: Vec<usize>, v: Vec<f32>| Value::Tensor(HostTensor::new(shape, Data::F32(v)));
    let values = vec![
        (
            "a".to_string(),
            t(vec![1, 2, 4], (0..8).map(|v| v as f32).collect()),
        ),
        ("b".to_string(), t(vec![1, 2, 4], vec![0.0; 8])),
        ("q".to_string(), t(vec![1, 1, 2], vec![0.5, -0.5])),
    ];
    let start = skip_layer_norm(true);
    let bytes = start.to_bytes();
    let runs = MutantRuns {
        runs: backends
            .iter()
            .map(|b| pool.run(b, &bytes, &values).unwrap())
            .collect(),
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let shown: Vec<String> = Triage::new(&backends, Tolerance::APPROXIMATE)
        .judge(&mut pool, &bytes, &values, &runs)
        .into_iter()
        .filter(|t| t.verdict == Verdict::Report)
        .map(|t| t.finding.signature())
        .collect();
    let [target] = shown.as_slice() else {
        panic!("ONNX Runtime's optimizer bug alone: {shown:?}")
    };
    assert!(
        target.starts_with("inconsistency|ort|optimizer|values")
            && target.contains("ground=ort-noopt"),
        "{target}"
    );
    let mut rep = Reproducer::new(
        &mut pool,
        Triage::new(&backends, Tolerance::APPROXIMATE),
        target.clone(),
        ValueMap::new(&values, None, 0),
    );
    let first = rep.check_with(&start, values.clone()).unwrap();
    rep.start(&first);
    assert!(rep.reproduces(&start));
    assert!(
        rep.reproduces(&skip_layer_norm(false)),
        "without the LSTM the reference judges the same optimizer bug"
    );
}

#[test]
fn a_candidate_that_fails_first_on_something_else_is_not_kept() {
    // tract lacks IsInf on doubles: alone, IsInf fails its own way. Before a Xor, tract fails
    // at the Xor instead ("No super type for F64 and Bool"), which the triage traces back to
    // the IsInf. A minimization of the IsInf alone must not keep a candidate with the Xor: the
    // model a maintainer runs would fail with another message.
    let f64s = Value::Tensor(HostTensor::new(
        vec![3],
        Data::F64(vec![1.0, f64::INFINITY, 0.5]),
    ));
    let bools = Value::Tensor(HostTensor::new(
        vec![3],
        Data::Bool(vec![true, false, false]),
    ));
    let inputs = vec![("x".to_string(), f64s), ("k".to_string(), bools)];
    let load = |src: &str| Model::from_bytes(&text_model(src)).expect("a valid model");
    let alone = load(
        "g (double[3] x, bool[3] k) => (bool[3] b, bool[3] n) { b = IsInf (x) \n n = Not (k) }",
    );
    let with_xor =
        load("g (double[3] x, bool[3] k) => (bool[3] y) { b = IsInf (x) \n y = Xor (b, k) }");
    let set = vec!["reference".to_string(), "tract".to_string()];
    let mut pool = Pool::new(PoolOptions::new(PathBuf::from(env!(
        "CARGO_BIN_EXE_mutagraph"
    ))));
    let mut rep = Reproducer::new(
        &mut pool,
        Triage::new(&set, Tolerance::APPROXIMATE),
        String::new(),
        ValueMap::new(&inputs, None, 0),
    );
    let first = rep.check_with(&alone, inputs.clone()).unwrap();
    let target = first
        .all
        .iter()
        .find(|t| t.verdict == Verdict::Report && t.finding.op_type() == Some("IsInf"))
        .unwrap_or_else(|| panic!("tract fails on IsInf of doubles: {:?}", first.all.len()))
        .finding
        .signature();
    rep.target = target.clone();
    let first = rep.check_with(&alone, inputs.clone()).unwrap();
    rep.start(&first);
    assert!(rep.whole_failure.is_some(), "{target}");
    assert!(rep.reproduces(&alone));
    let second = rep.check_with(&with_xor, inputs).unwrap();
    assert!(
        second.found.is_some(),
        "the triage traces the Xor's failure to the IsInf: {target}"
    );
    assert!(
        !rep.reproduces(&with_xor),
        "a candidate whose whole run fails at the Xor is not the IsInf's model"
    );
}
