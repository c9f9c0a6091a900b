//! burn's interpreter (on NdArray) on the recurrent ops (RNN, GRU, LSTM) and the control-flow
//! ops (If, Loop, Scan): the ONNX backend test suite's node tests of those ops, the seed zoo's
//! LSTM and GRU models, and models for what the suite leaves out (bidirectional and
//! batch-first layers with initial states, sequence_lens, clip, every activation function,
//! linear_before_reset, captured outer values, nested subgraphs, Scan axes and directions,
//! loops that never run, sequences carried through a loop), each compared with the f64
//! reference. What ONNX does not define is refused, not computed.
#![cfg(feature = "burn")]

use mutagraph_backends::backend::Backend;
use mutagraph_backends::catalog::{self, Config};
use mutagraph_backends::compare::{CompareOptions, Tolerance, compare};
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_backends::suite::{self, discover, load, root};
use mutagraph_backends::value::{Data, HostTensor, NamedValues, Value};
use mutagraph_backends::{BackendError, Stage};
use mutagraph_ir::model::Model;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

fn create(name: &str) -> Box<dyn Backend> {
    catalog::create(name, &Config::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

fn run(be: &mut dyn Backend, bytes: &[u8], feeds: &NamedValues) -> Result<NamedValues, String> {
    catch_unwind(AssertUnwindSafe(|| {
        be.prepare(bytes)
            .and_then(|mut p| p.run(feeds))
            .map_err(|e| e.to_string())
    }))
    .unwrap_or_else(|p| Err(format!("panic: {}", panic_text(p))))
}

// ---- the suite's node tests ----

/// Name prefixes of the suite's node tests of the recurrent and control-flow ops, and the op
/// each stands for.
const PREFIXES: &[(&str, &str)] = &[
    ("test_lstm_", "LSTM"),
    ("test_gru_", "GRU"),
    ("test_rnn_", "RNN"),
    ("test_simple_rnn_", "RNN"),
    ("test_if", "If"),
    ("test_loop", "Loop"),
    ("test_scan", "Scan"),
];

/// Every node test of those ops in Debian's libonnx-testdata: all pass on burn-ndarray.
const PASS: &[&str] = &[
    "test_gru_batchwise",
    "test_gru_defaults",
    "test_gru_seq_length",
    "test_gru_with_initial_bias",
    "test_if",
    "test_if_opt",
    "test_if_seq",
    "test_loop11",
    "test_loop13_seq",
    "test_loop16_seq_none",
    "test_lstm_batchwise",
    "test_lstm_defaults",
    "test_lstm_with_initial_bias",
    "test_lstm_with_peepholes",
    "test_rnn_seq_length",
    "test_scan9_sum",
    "test_scan_sum",
    "test_simple_rnn_batchwise",
    "test_simple_rnn_defaults",
    "test_simple_rnn_with_initial_bias",
];

#[test]
fn suite_node_tests_of_recurrent_and_control_flow_ops_pass() {
    let cases = discover(&root(), &["node"]).unwrap_or_else(|e| panic!("{e}"));
    let mut be = mutagraph_backends::burn::ndarray();
    let mut per_op: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut passed = Vec::new();
    let mut failures = Vec::new();
    for cref in &cases {
        let Some((_, op)) = PREFIXES.iter().find(|(p, _)| cref.name.starts_with(p)) else {
            continue;
        };
        let case = load(cref).unwrap_or_else(|e| panic!("{}: {e}", cref.id()));
        let verdict = catch_unwind(AssertUnwindSafe(|| check_case(be.as_mut(), &case)))
            .unwrap_or_else(|p| Err(format!("panic: {}", panic_text(p))));
        let e = per_op.entry(op).or_default();
        e.1 += 1;
        match verdict {
            Ok(()) => {
                e.0 += 1;
                passed.push(cref.name.clone());
            }
            Err(why) => failures.push(format!("{}: {why}", cref.name)),
        }
    }
    for (op, (pass, total)) in &per_op {
        println!("{op:5} {pass}/{total} pass");
    }
    let missing: Vec<&&str> = PASS
        .iter()
        .filter(|n| !passed.iter().any(|p| p == *n))
        .collect();
    assert!(
        failures.is_empty() && missing.is_empty(),
        "failing: {failures:#?}\nexpected to pass but not found or failing: {missing:?}"
    );
    assert_eq!(passed.len(), PASS.len(), "{passed:?}");
}

fn check_case(be: &mut dyn Backend, case: &suite::Case) -> Result<(), String> {
    let mut p = be.prepare(&case.model_bytes).map_err(|e| e.to_string())?;
    for (i, set) in case.sets.iter().enumerate() {
        let got = p.run(&set.inputs).map_err(|e| format!("set {i}: {e}"))?;
        for (name, expected) in &set.outputs {
            let (_, actual) = got
                .iter()
                .find(|(n, _)| n == name)
                .ok_or_else(|| format!("set {i}: no output {name}"))?;
            let c = compare(expected, actual, CompareOptions::default());
            if !c.ok {
                return Err(format!("set {i}, {name}: {}", c.reason.unwrap_or_default()));
            }
        }
    }
    Ok(())
}

// ---- the seed zoo ----

#[test]
fn zoo_lstm_and_gru_seeds_run_and_agree_with_the_reference() {
    for (name, op) in [("lstm", "LSTM"), ("gru", "GRU")] {
        let m = mutagraph_mutators::zoo::build(name).expect("a zoo model");
        assert!(
            m.graph.nodes().any(|n| n.op_type == op),
            "{name} has no {op}"
        );
        let bytes = m.to_bytes();
        let feeds = inputs::generate(&m, 0x5eed, &GenOptions::default()).unwrap();
        let want = run(create("reference").as_mut(), &bytes, &feeds)
            .unwrap_or_else(|e| panic!("{name} on the reference: {e}"));
        let got = run(create("burn-ndarray").as_mut(), &bytes, &feeds)
            .unwrap_or_else(|e| panic!("{name} on burn-ndarray: {e}"));
        agree(name, &want, &got, Tolerance::CLOSE);
    }
}

/// `got` has `want`'s outputs (names, element types, shapes) within `tol`.
fn agree(what: &str, want: &NamedValues, got: &NamedValues, tol: Tolerance) {
    assert_eq!(want.len(), got.len(), "{what}: output count");
    for ((wn, wv), (gn, gv)) in want.iter().zip(got) {
        assert_eq!(wn, gn, "{what}");
        let c = compare(
            wv,
            gv,
            CompareOptions {
                tolerance: tol,
                check_dtype: true,
            },
        );
        assert!(
            c.ok,
            "{what}, output {wn}: {} (max abs {:.2e})\nreference: {wv:?}\nburn: {gv:?}",
            c.reason.unwrap_or_default(),
            c.metrics.max_abs
        );
    }
}

// ---- models for what the suite leaves out ----

fn parse(opset: i64, src: &str) -> Model {
    mutagraph_ir::text::parse_model(&format!(
        "<ir_version: 8, opset_import: [\"\" : {opset}]>\n{src}"
    ))
    .unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// Runs `m` on the reference and on burn-ndarray with `feeds` (seeded inputs for those not
/// given) and checks that they agree.
fn differential(what: &str, m: &Model, given: &[(&str, Value)]) -> NamedValues {
    let mut feeds = inputs::generate(m, 7, &GenOptions::default()).unwrap();
    for (n, v) in given {
        match feeds.iter_mut().find(|(k, _)| k == n) {
            Some(slot) => slot.1 = v.clone(),
            None => panic!("{what}: no input {n}"),
        }
    }
    let bytes = m.to_bytes();
    let want = run(create("reference").as_mut(), &bytes, &feeds)
        .unwrap_or_else(|e| panic!("{what} on the reference: {e}"));
    let got = run(create("burn-ndarray").as_mut(), &bytes, &feeds)
        .unwrap_or_else(|e| panic!("{what} on burn-ndarray: {e}"));
    agree(what, &want, &got, Tolerance::CLOSE);
    got
}

const SEQ: usize = 4;
const BATCH: usize = 3;
const INPUT: usize = 2;
const HIDDEN: usize = 3;

fn dims(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// A one-node recurrent model: `op` with `attrs` (besides hidden_size), every optional input
/// when `full` (sequence_lens an initializer, some entries shorter than the sequence).
fn recurrent(op: &str, direction: &str, layout: i64, attrs: &str, full: bool) -> Model {
    let g = match op {
        "RNN" => 1,
        "GRU" => 3,
        _ => 4,
    };
    let d = if direction == "bidirectional" { 2 } else { 1 };
    let (x, y, state) = if layout == 0 {
        (
            [SEQ, BATCH, INPUT],
            vec![SEQ, d, BATCH, HIDDEN],
            [d, BATCH, HIDDEN],
        )
    } else {
        (
            [BATCH, SEQ, INPUT],
            vec![BATCH, SEQ, d, HIDDEN],
            [BATCH, d, HIDDEN],
        )
    };
    let lstm = op == "LSTM";
    let mut ins = format!(
        "float[{}] x, float[{}] w, float[{}] r",
        dims(&x),
        dims(&[d, g * HIDDEN, INPUT]),
        dims(&[d, g * HIDDEN, HIDDEN])
    );
    let mut args = "x, w, r".to_string();
    if full {
        ins += &format!(
            ", float[{}] b, float[{}] h0",
            dims(&[d, 2 * g * HIDDEN]),
            dims(&state)
        );
        args += ", b, lens, h0";
        if lstm {
            ins += &format!(
                ", float[{}] c0, float[{}] p",
                dims(&state),
                dims(&[d, 3 * HIDDEN])
            );
            args += ", c0, p";
        }
    }
    let mut outs = format!("float[{}] y, float[{}] yh", dims(&y), dims(&state));
    let mut names = "y, yh".to_string();
    if lstm {
        outs += &format!(", float[{}] yc", dims(&state));
        names += ", yc";
    }
    let inits = if full {
        "<int32[3] lens = {4, 2, 3}>"
    } else {
        ""
    };
    parse(
        14,
        &format!(
            "g ({ins}) => ({outs}) {inits} {{\n  {names} = {op} <hidden_size: int = {HIDDEN}, \
             direction: string = \"{direction}\", layout: int = {layout}{attrs}> ({args})\n}}"
        ),
    )
}

#[test]
fn recurrent_layers_agree_with_the_reference_in_every_direction_and_layout() {
    for op in ["RNN", "GRU", "LSTM"] {
        for direction in ["forward", "reverse", "bidirectional"] {
            for layout in [0, 1] {
                for full in [false, true] {
                    let what = format!("{op} {direction} layout {layout} full {full}");
                    differential(&what, &recurrent(op, direction, layout, "", full), &[]);
                }
            }
        }
    }
}

#[test]
fn clip_activations_and_linear_before_reset_agree_with_the_reference() {
    let two = |a: &str, b: &str| format!("[\"{a}\", \"{b}\", \"{a}\", \"{b}\"]");
    let cases: Vec<(&str, String)> = vec![
        ("RNN", ", clip: float = 0.3".into()),
        ("GRU", ", clip: float = 0.3".into()),
        ("LSTM", ", clip: float = 0.3".into()),
        ("GRU", ", linear_before_reset: int = 1".into()),
        (
            "GRU",
            ", linear_before_reset: int = 1, clip: float = 0.5".to_string(),
        ),
        (
            "GRU",
            format!(
                ", activations: strings = {}, activation_alpha: floats = [0.3, 0.8, 0.3, 0.8], \
                 activation_beta: floats = [0.4, 0.0, 0.4, 0.0]",
                two("HardSigmoid", "Elu")
            ),
        ),
        (
            "GRU",
            format!(
                ", activations: strings = {}, activation_alpha: floats = [0.5, 1.5, 0.5, 1.5], \
                 activation_beta: floats = [0.1, 0.7, 0.1, 0.7]",
                two("Affine", "ScaledTanh")
            ),
        ),
        (
            "GRU",
            format!(
                ", activations: strings = {}, activation_alpha: floats = [0.1, 0.2, 0.1, 0.2]",
                two("LeakyRelu", "ThresholdedRelu")
            ),
        ),
        (
            "GRU",
            format!(", activations: strings = {}", two("Softsign", "Softplus")),
        ),
        (
            "GRU",
            format!(", activations: strings = {}", two("sigmoid", "relu")),
        ),
        (
            "LSTM",
            ", activations: strings = [\"HardSigmoid\", \"ScaledTanh\", \"Softsign\", \
             \"Sigmoid\", \"Tanh\", \"Elu\"], activation_alpha: floats = [0.3, 1.5, 1, 1, 1, \
             0.7], activation_beta: floats = [0.4, 0.6, 0, 0, 0, 0]"
                .into(),
        ),
        (
            "RNN",
            ", activations: strings = [\"Relu\", \"Softplus\"], clip: float = 2".into(),
        ),
    ];
    for (op, attrs) in cases {
        for layout in [0, 1] {
            let what = format!("{op} layout {layout}{attrs}");
            differential(
                &what,
                &recurrent(op, "bidirectional", layout, &attrs, true),
                &[],
            );
        }
    }
}

#[test]
fn batch_first_initial_states_carry_the_batch_first() {
    // W = 0, R = 1, the identity as activation: every step keeps the state, so Y_h is
    // initial_h, read [batch, directions, hidden] as layout 1 says (not [directions, ...]).
    let m = parse(
        14,
        "g (float[2,3,1] x, float[2,2,1] h0) => (float[2,3,2,1] y, float[2,2,1] yh) \
         <float[2,1,1] w = {0, 0}, float[2,1,1] r = {1, 1}> {\n  y, yh = RNN <hidden_size: \
         int = 1, direction: string = \"bidirectional\", layout: int = 1, activations: \
         strings = [\"Affine\", \"Affine\"]> (x, w, r, \"\", \"\", h0)\n}",
    );
    let h0 = Value::Tensor(HostTensor::new(
        vec![2, 2, 1],
        Data::F32(vec![1.0, 2.0, 3.0, 4.0]),
    ));
    for backend in ["reference", "burn-ndarray"] {
        let mut feeds = inputs::generate(&m, 1, &GenOptions::default()).unwrap();
        feeds.iter_mut().find(|(n, _)| n == "h0").unwrap().1 = h0.clone();
        let out = run(create(backend).as_mut(), &m.to_bytes(), &feeds).unwrap();
        assert_eq!(out[1].1, h0, "{backend}");
    }
}

#[test]
fn what_onnx_leaves_undefined_is_refused_as_unsupported() {
    let m = recurrent("LSTM", "forward", 0, ", input_forget: int = 1", true);
    let e = create("burn-ndarray")
        .prepare(&m.to_bytes())
        .err()
        .expect("refused");
    assert!(
        e.unsupported && e.stage == Stage::Compile && e.message.contains("input_forget"),
        "{e}"
    );
    // Scan-8 with a sequence shorter than the batch's longest: ONNX does not say what the
    // outputs hold past its end (the reference refuses it too).
    let m = parse(
        8,
        "g (float[2,3,2] x, int32[2] lens) => (float[2,2] s, float[2,3,2] ys) \
         <float[2,2] s0 = {0, 0, 0, 0}> {\n  s, ys = Scan <num_scan_inputs: int = 1, body: \
         graph = body (float[2] a, float[2] e) => (float[2] b, float[2] c) {\n    b = Add (a, \
         e)\n    c = Identity (b)\n  }> (lens, s0, x)\n}",
    );
    let lens = Value::Tensor(HostTensor::new(vec![2], Data::I32(vec![3, 2])));
    let feeds: NamedValues = vec![
        (
            "x".into(),
            inputs::generate(&m, 1, &GenOptions::default()).unwrap()[0]
                .1
                .clone(),
        ),
        ("lens".into(), lens),
    ];
    let e: BackendError = create("burn-ndarray")
        .prepare(&m.to_bytes())
        .and_then(|mut p| p.run(&feeds))
        .expect_err("refused");
    assert!(e.unsupported && e.message.contains("shorter"), "{e}");
}

fn bool_value(b: bool) -> Value {
    Value::Tensor(HostTensor::new(vec![], Data::Bool(vec![b])))
}

fn i64_value(v: i64) -> Value {
    Value::Tensor(HostTensor::new(vec![], Data::I64(vec![v])))
}

#[test]
fn if_branches_read_values_of_the_graphs_around_them() {
    // The branches give different shapes and read x, z, t and the ReduceSum axes (an
    // initializer) from the main graph.
    let m = parse(
        13,
        "g (bool c, float[2,3] x, float[3] z) => (float[] y) <int64[1] zero = {0}> {\n  \
         t = Relu (x)\n  y = If (c) <then_branch: graph = th () => (float[2,3] a) {\n    \
         a = Add (t, z)\n  }, else_branch: graph = el () => (float[3] b) {\n    k = ReduceSum \
         <keepdims: int = 0> (x, zero)\n    b = Mul (k, z)\n  }>\n}",
    );
    let then = differential("If then", &m, &[("c", bool_value(true))]);
    let els = differential("If else", &m, &[("c", bool_value(false))]);
    assert_eq!(then[0].1.tensor().unwrap().shape, vec![2, 3]);
    assert_eq!(els[0].1.tensor().unwrap().shape, vec![3]);
}

/// A Loop: at most `M` iterations while the running sum stays below 3; carries the sum and
/// a step counter, scans out each iteration's sum; the body reads `x` of the main graph and,
/// in an If nested inside it, `bias` (two levels up) and the loop's carried value.
fn loop_model(with_m: bool, with_cond: bool) -> Model {
    let m = if with_m { "m" } else { "\"\"" };
    let c = if with_cond { "c" } else { "\"\"" };
    parse(
        13,
        &format!(
            "g (int64 m, bool c, float[2] s0, float[2] x, float[2] bias) => (float[2] s, \
             int64 n, float[?,2] ys) <int64 n0 = {{0}}, float three = {{3}}, int64 one = \
             {{1}}> {{\n  s, n, ys = Loop ({m}, {c}, s0, n0) <body: graph = body (int64 i, \
             bool ci, float[2] si, int64 ni) => (bool co, float[2] so, int64 no, float[2] \
             yo) <int64 two = {{2}}> {{\n    xi = Mul (x, x)\n    odd = Mod (i, two)\n    \
             isodd = Equal (odd, one)\n    so = If (isodd) <then_branch: graph = th () => \
             (float[2] a) {{\n      a = Add (si, bias)\n    }}, else_branch: graph = el () \
             => (float[2] b) {{\n      b = Add (si, xi)\n    }}>\n    no = Add (ni, one)\n    \
             total = ReduceSum <keepdims: int = 0> (so)\n    co = Less (total, three)\n    \
             yo = Identity (so)\n  }}>\n}}"
        ),
    )
}

#[test]
fn loops_with_and_without_trip_count_and_condition_agree_with_the_reference() {
    let small = |v: f32| Value::Tensor(HostTensor::new(vec![2], Data::F32(vec![v, v])));
    let base = [("s0", small(0.0)), ("x", small(0.5)), ("bias", small(0.25))];
    for (with_m, with_cond, trips, cond) in [
        (true, true, 5, true),
        (true, true, 2, true),
        (true, true, 5, false),
        (true, false, 3, true),
        (false, true, 0, true),
        (true, true, 0, true),
    ] {
        let m = loop_model(with_m, with_cond);
        let mut given: Vec<(&str, Value)> = base.to_vec();
        given.push(("m", i64_value(trips)));
        given.push(("c", bool_value(cond)));
        let what = format!("Loop M {with_m} ({trips}) cond {with_cond} ({cond})");
        let out = differential(&what, &m, &given);
        let scanned = out[2].1.tensor().unwrap();
        if with_m && trips == 0 || with_cond && !cond {
            // no iteration: the scan output is empty, shaped as the body declares it
            assert_eq!(scanned.shape, vec![0, 2], "{what}");
        } else {
            assert!(scanned.shape[0] > 0, "{what}");
        }
    }
}

#[test]
fn loops_carry_sequences() {
    let m = parse(
        13,
        "g (int64 m, float[3] x) => (seq(float[?]) out, int64 len) <float[1] e = {1}> {\n  \
         start = SequenceConstruct (e)\n  out = Loop (m, \"\", start) <body: graph = body \
         (int64 i, bool c, seq(float[?]) si) => (bool co, seq(float[?]) so) {\n    co = \
         Identity (c)\n    one = Constant <value: tensor = int64[1] {1}> ()\n    zero = \
         Constant <value: tensor = int64[1] {0}> ()\n    end = Add (i, one)\n    part = Slice \
         (x, zero, end)\n    grown = SequenceInsert (si, part)\n    so = SequenceErase \
         (grown, zero)\n  }>\n  len = SequenceLength (out)\n}",
    );
    let out = differential("Loop over a sequence", &m, &[("m", i64_value(3))]);
    match &out[0].1 {
        Value::Sequence(s) => assert_eq!(s.len(), 1),
        other => panic!("not a sequence: {other:?}"),
    }
}

#[test]
fn scan_axes_and_directions_agree_with_the_reference() {
    // Two scan inputs read along axes 1 and 0 (the first last to first), a state, and two
    // scan outputs stacked along axis 1 (reversed) and axis -1; the body reads w.
    let m = parse(
        16,
        "g (float[2,4,3] a, float[4,3] b, float[3] s0, float[3] w) => (float[3] s, float[3,4] \
         p, float[3,4] q) {\n  s, p, q = Scan <num_scan_inputs: int = 2, scan_input_axes: ints \
         = [1, 0], scan_input_directions: ints = [1, 0], scan_output_axes: ints = [1, -1], \
         scan_output_directions: ints = [1, 0], body: graph = body (float[3] si, float[2,3] \
         ai, float[3] bi) => (float[3] so, float[3] po, float[3] qo) {\n    r = ReduceMax \
         <axes: ints = [0], keepdims: int = 0> (ai)\n    t = Mul (bi, w)\n    so = Add (si, \
         r)\n    po = Sub (so, t)\n    qo = Tanh (so)\n  }> (s0, a, b)\n}",
    );
    differential("Scan axes and directions", &m, &[]);
    // Scan-8: everything carries a batch axis first
    let m = parse(
        8,
        "g (float[2,3] s0, float[2,4,3] x) => (float[2,3] s, float[2,4,3] ys) {\n  s, ys = \
         Scan <num_scan_inputs: int = 1, directions: ints = [1], body: graph = body (float[3] \
         a, float[3] e) => (float[3] b, float[3] c) {\n    b = Add (a, e)\n    c = Sigmoid (b)\n  \
         }> (\"\", s0, x)\n}",
    );
    differential("Scan-8", &m, &[]);
}
