//! The triage stage's verdict policy on runs made up for the purpose (the workers only run the
//! reference in its two precisions): our own failures are never filed, a failure needs an
//! independent witness, a library's variants tell a kernel bug from an optimizer bug, and a
//! result inside the precision envelope is rounding.
use mutagraph_backends::backend::Stage;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::value::{Data, HostTensor, NamedValues, Value};
use mutagraph_backends::worker::{Outcome, Pool, PoolOptions, RunReport};
use mutagraph_oracles::triage::{Triage, Triaged, Verdict};
use mutagraph_oracles::{Blame, Kind, Layer, MutantRuns};
use std::path::PathBuf;

fn pool() -> Pool {
    Pool::new(PoolOptions::new(PathBuf::from(env!(
        "CARGO_BIN_EXE_mutagraph"
    ))))
}

fn t(v: &[f32]) -> Value {
    Value::Tensor(HostTensor::new(vec![v.len()], Data::F32(v.to_vec())))
}

fn ok(v: &[f32]) -> Outcome {
    Outcome::Ok(vec![("y".into(), t(v))])
}

fn err(msg: &str) -> Outcome {
    Outcome::Error {
        stage: Stage::Run,
        message: msg.into(),
    }
}

fn report(backend: &str, outcome: Outcome) -> RunReport {
    RunReport {
        backend: backend.into(),
        version: "0".into(),
        outcome,
        wall_ms: 1.0,
        prepare_ms: 0.0,
        run_ms: 1.0,
        peak_rss: 100 << 20,
        cached: false,
        rewrites: Vec::new(),
    }
}

/// A one-node model `y = op(x)` on `n` floats.
fn model(op: &str, n: usize) -> Vec<u8> {
    crate::common::text_model(&format!(
        "g (float[{n}] x) => (float[{n}] y) {{ y = {op} (x) }}"
    ))
}

fn judge(
    backends: &[&str],
    outcomes: Vec<Outcome>,
    bytes: &[u8],
    inputs: &NamedValues,
    extra: bool,
) -> Vec<(Kind, Vec<String>, Verdict, Option<Layer>)> {
    judge_full(backends, outcomes, bytes, inputs, extra)
        .into_iter()
        .map(|t| {
            (
                t.finding.kind,
                t.finding.backends,
                t.verdict,
                t.finding.layer,
            )
        })
        .collect()
}

/// Every triaged finding on runs of `backends` with these outcomes (`extra`: the triage may
/// run what the set lacks).
fn judge_full(
    backends: &[&str],
    outcomes: Vec<Outcome>,
    bytes: &[u8],
    inputs: &NamedValues,
    extra: bool,
) -> Vec<Triaged> {
    let names: Vec<String> = backends.iter().map(|s| s.to_string()).collect();
    let mut triage = Triage::new(&names, Tolerance::APPROXIMATE);
    triage.extra_runs = extra;
    let runs = MutantRuns {
        runs: backends
            .iter()
            .zip(outcomes)
            .map(|(b, o)| report(b, o))
            .collect(),
        reference: names.iter().position(|b| b == "reference"),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let mut p = pool();
    let out = triage.judge(&mut p, bytes, inputs, &runs);
    p.shutdown();
    out
}

fn x(v: &[f32]) -> NamedValues {
    vec![("x".into(), t(v))]
}

#[test]
fn the_references_failures_are_ours_never_findings() {
    let m = model("Relu", 2);
    // The reference fails where ONNX Runtime runs the model.
    let j = judge(
        &["reference", "ort"],
        vec![err("index out of range"), ok(&[1.0, 2.0])],
        &m,
        &x(&[1.0, 2.0]),
        false,
    );
    assert_eq!(j.len(), 1, "{j:?}");
    assert!(
        matches!(&j[0].2, Verdict::Ours(w) if w.contains("reference failed")),
        "{j:?}"
    );
    // Two libraries agree with each other against the reference: the reference is wrong.
    let j = judge(
        &["reference", "ort", "tract"],
        vec![ok(&[1.0, 2.0]), ok(&[5.0, 2.0]), ok(&[5.0, 2.0])],
        &m,
        &x(&[1.0, 2.0]),
        false,
    );
    assert_eq!(j.len(), 1, "{j:?}");
    assert!(
        matches!(&j[0].2, Verdict::Ours(w) if w.contains("against the reference")),
        "{j:?}"
    );
}

#[test]
fn a_failure_needs_an_independent_witness() {
    let m = model("Relu", 2);
    // tract fails; the reference fails too: nothing says the model is runnable.
    let j = judge(
        &["reference", "ort", "tract"],
        vec![err("bad"), ok(&[1.0, 2.0]), err("panic: boom")],
        &m,
        &x(&[1.0, 2.0]),
        false,
    );
    let tract = j.iter().find(|f| f.1[0] == "tract").unwrap();
    assert!(matches!(&tract.2, Verdict::Unwitnessed(_)), "{j:?}");
    // The optimizing ort that ran it is no witness; the reference alone is.
    let names = ["reference", "ort", "tract"];
    let mut triage = Triage::new(
        &names.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        Tolerance::APPROXIMATE,
    );
    triage.extra_runs = false;
    let runs = MutantRuns {
        runs: vec![
            report("reference", ok(&[1.0, 2.0])),
            report("ort", ok(&[1.0, 2.0])),
            report("tract", err("Evaluating #1 \"r\" Relu: boom")),
        ],
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let mut p = pool();
    let tr = triage.judge(&mut p, &m, &x(&[1.0, 2.0]), &runs);
    p.shutdown();
    let f = &tr
        .iter()
        .find(|t| t.finding.backends[0] == "tract")
        .unwrap();
    assert_eq!(f.verdict, Verdict::Report);
    assert_eq!(f.finding.witnesses, vec!["reference".to_string()]);
}

#[test]
fn variants_tell_a_kernel_bug_from_an_optimizer_bug() {
    let m = model("Relu", 2);
    let ins = x(&[1.0, 2.0]);
    // Only the optimized ONNX Runtime fails: an optimizer bug.
    let j = judge(
        &["reference", "ort", "ort-noopt", "tract"],
        vec![
            ok(&[1.0, 2.0]),
            err("fused"),
            ok(&[1.0, 2.0]),
            ok(&[1.0, 2.0]),
        ],
        &m,
        &ins,
        false,
    );
    assert_eq!(j.len(), 1, "{j:?}");
    assert_eq!(j[0].3, Some(Layer::Optimizer), "{j:?}");
    // Both fail alike: one kernel bug of ONNX Runtime, not two findings.
    let j = judge(
        &["reference", "ort", "ort-noopt", "tract"],
        vec![ok(&[1.0, 2.0]), err("k"), err("k"), ok(&[1.0, 2.0])],
        &m,
        &ins,
        false,
    );
    assert_eq!(j.len(), 1, "{j:?}");
    assert_eq!(j[0].3, Some(Layer::Kernel));
    assert_eq!(j[0].1, vec!["ort".to_string(), "ort-noopt".to_string()]);
}

#[test]
fn what_the_spec_body_gives_in_f32_is_not_a_bug() {
    // Softplus(100) is 100; its ONNX function body Log(Add(Exp(x), 1)) in f32 overflows to
    // +Inf. A library that follows the body is inside the envelope; one that gives 50 is not.
    let m = model("Softplus", 2);
    let ins = x(&[100.0, 0.5]);
    let soft = (1.0f64 + 0.5f64.exp()).ln() as f32;
    let j = judge(
        &["reference", "fault"],
        vec![ok(&[100.0, soft]), ok(&[f32::INFINITY, soft])],
        &m,
        &ins,
        true,
    );
    assert_eq!(j.len(), 1, "{j:?}");
    assert_eq!(j[0].0, Kind::Nan);
    assert!(
        matches!(&j[0].2, Verdict::Unstable(w) if w.contains("envelope")),
        "{j:?}"
    );
    let j = judge(
        &["reference", "fault"],
        vec![ok(&[100.0, soft]), ok(&[50.0, soft])],
        &m,
        &ins,
        true,
    );
    assert_eq!(j.len(), 1, "{j:?}");
    assert_eq!(j[0].2, Verdict::Report, "{j:?}");
}

#[test]
fn an_optimizer_failing_on_what_the_library_does_not_implement_is_not_filed() {
    // ONNX Runtime has no int32 QuantizeLinear kernel: unoptimized, it says so; optimized, its
    // rewrite fails with a type error first. The gap shows through the optimizer: no finding.
    let m = model("Relu", 2);
    let ins = x(&[1.0, 2.0]);
    let unsupported = Outcome::Unsupported {
        stage: Stage::Load,
        message: "Could not find an implementation for QuantizeLinear(13)".into(),
    };
    let j = judge(
        &["reference", "ort", "ort-noopt", "tract"],
        vec![
            ok(&[1.0, 2.0]),
            err("Type Error: Type (tensor(int32)) of output arg (r) of node (R) does not match"),
            unsupported,
            ok(&[1.0, 2.0]),
        ],
        &m,
        &ins,
        false,
    );
    assert_eq!(j.len(), 1, "{j:?}");
    assert!(
        matches!(&j[0].2, Verdict::Unsupported(w) if w.contains("QuantizeLinear")),
        "{j:?}"
    );
    // The same failure where the unoptimized level runs the model is an optimizer bug.
    let j = judge(
        &["reference", "ort", "ort-noopt", "tract"],
        vec![
            ok(&[1.0, 2.0]),
            err("Type Error: Type (tensor(int32)) of output arg (r) of node (R) does not match"),
            ok(&[1.0, 2.0]),
            ok(&[1.0, 2.0]),
        ],
        &m,
        &ins,
        false,
    );
    assert_eq!(j[0].2, Verdict::Report, "{j:?}");
    assert_eq!(j[0].3, Some(Layer::Optimizer), "{j:?}");
}

#[test]
fn a_failure_fed_by_a_value_onnx_leaves_open_is_undefined() {
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
               g (float[2] x) => (float[2] y) <float[2] o = {1, 1}> { m = Max (x, o)\n y = Neg (m) }";
    let m = mutagraph_ir::text::parse_model(src).unwrap().to_bytes();
    let names = ["reference", "tract"];
    let verdict = |input: &[f32]| {
        let mut triage = Triage::new(
            &names.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            Tolerance::APPROXIMATE,
        );
        triage.extra_runs = false;
        let runs = MutantRuns {
            runs: vec![
                report("reference", ok(input)),
                report("tract", err("Evaluating #1 \"y\" Neg: boom")),
            ],
            reference: Some(0),
            reruns: Vec::new(),
            slow_baseline: Default::default(),
        };
        let mut p = pool();
        let tr = triage.judge(&mut p, &m, &x(input), &runs);
        p.shutdown();
        tr.into_iter()
            .find(|t| t.finding.backends[0] == "tract")
            .unwrap()
            .verdict
    };
    // A NaN reaches the Max: whichever operand wins is the library's choice (tract picks 1,
    // the reference NaN), and the failure on the Neg after it follows from a value the spec
    // does not fix.
    let v = verdict(&[f32::NAN, 1.0]);
    assert!(
        matches!(&v, Verdict::Undefined(w) if w.contains("upstream Max") && w.contains("nan-unspecified")),
        "{v:?}"
    );
    // Finite inputs: the same failure is the library's.
    assert_eq!(verdict(&[2.0, 1.0]), Verdict::Report);
}

#[test]
fn burn_failures_that_are_not_burn_panics_are_ours() {
    let m = model("Relu", 2);
    let ins = x(&[1.0, 2.0]);
    let verdict = |msg: &str| {
        let j = judge(
            &["reference", "burn-ndarray"],
            vec![ok(&[1.0, 2.0]), err(msg)],
            &m,
            &ins,
            false,
        );
        j.into_iter().find(|f| f.1[0] == "burn-ndarray").unwrap().2
    };
    // The interpreter's own refusal: no panic inside burn.
    let v = verdict("run: y (Relu): Relu: bad input");
    assert!(
        matches!(&v, Verdict::Ours(w) if w.contains("interpreter")),
        "{v:?}"
    );
    // A gap burn declares itself.
    let v = verdict(
        "panic: Asymmetric padding is not yet supported for conv3d (at /r/burn-tensor-0.21.0/src/tensor/module.rs:179)",
    );
    assert!(
        matches!(&v, Verdict::Ours(w) if w.contains("declares")),
        "{v:?}"
    );
    // A panic inside burn is burn's.
    let v =
        verdict("panic: index out of bounds (at /r/burn-tensor-0.21.0/src/tensor/api/base.rs:10)");
    assert_eq!(v, Verdict::Report);
}

/// Where the triage places tract's failure on the model `src`, run on the reference and tract
/// with f64 inputs `e` (one value) and `x` (1×4×2×2): (op type, value). tract must panic on it.
fn tract_panic_placed(src: &str) -> (String, String) {
    let f64s = |shape: Vec<usize>, v: Vec<f64>| Value::Tensor(HostTensor::new(shape, Data::F64(v)));
    let inputs: NamedValues = vec![
        ("e".into(), f64s(vec![1], vec![0.5])),
        (
            "x".into(),
            f64s(vec![1, 4, 2, 2], (0..16).map(|i| i as f64 / 4.0).collect()),
        ),
    ];
    let t = tract_triaged(src, &inputs, |msg| msg.starts_with("panic: "));
    let loc = t
        .finding
        .location
        .as_ref()
        .unwrap_or_else(|| panic!("not placed: {:?}", t.finding));
    (loc.op_type.clone(), loc.value.clone())
}

/// The triage of tract's failure on the model `src` fed `inputs`, run on the reference and
/// tract (with the blame checked). tract's message must be `like` (what tract 0.23.9 does).
fn tract_triaged(src: &str, inputs: &NamedValues, like: impl Fn(&str) -> bool) -> Triaged {
    let bytes = mutagraph_ir::text::parse_model(src).unwrap().to_bytes();
    let names = ["reference", "tract"];
    let mut p = pool();
    let runs = MutantRuns {
        runs: names
            .iter()
            .map(|b| p.run(b, &bytes, inputs).unwrap())
            .collect(),
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    // (An assertion of ndarray in a release build, an overflow check in a debug one.)
    let msg = runs.runs[1].outcome.detail();
    assert!(like(&msg), "tract 0.23.9 fails so: {msg}");
    let mut triage = Triage::new(
        &names.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        Tolerance::APPROXIMATE,
    );
    triage.extra_runs = false;
    let tr = triage.judge(&mut p, &bytes, inputs, &runs);
    p.shutdown();
    tr.into_iter()
        .find(|t| t.finding.backends[0] == "tract")
        .expect("a tract finding")
}

fn f32s(shape: Vec<usize>, v: Vec<f32>) -> Value {
    Value::Tensor(HostTensor::new(shape, Data::F32(v)))
}

#[test]
fn a_failure_downstream_of_a_wrong_shape_is_filed_as_that_shape() {
    // tract reads Einsum's empty explicit output ('abc->') as implicit mode: a [1,1,1] sum
    // where ONNX has a scalar. Its Shape, padded, reaches a Max that cannot broadcast, and
    // tract's analysis fails at the Reshape after it. The Reshape alone runs, and so does
    // no part of two levels before it; the part from the Einsum fails as the model does, and
    // the Einsum alone gives the wrong shape.
    let src = "<ir_version: 7, opset_import: [\"\" : 13]>\n\
               g (float[1,1,1] r, float[2] m) => (float[1,2,1] y) {\n\
                 part = Constant <value = int64[1] {-1}> ()\n\
                 pads = Constant <value = int64[2] {0,1}> ()\n\
                 to = Constant <value = int64[3] {1,2,1}> ()\n\
                 e = Einsum <equation: string = \"abc->\"> (r)\n\
                 s = Shape (e)\n\
                 c = Concat <axis: int = 0> (part, s)\n\
                 f = Cast <to: int = 1> (c)\n\
                 p = Pad (f, pads)\n\
                 x = Max (p, m)\n\
                 y = Reshape (x, to)\n\
               }";
    let inputs: NamedValues = vec![
        ("r".into(), f32s(vec![1, 1, 1], vec![-0.89])),
        ("m".into(), f32s(vec![2], vec![-0.83, 0.09])),
    ];
    let t = tract_triaged(src, &inputs, |m| m.contains("Reshape volume mismatch"));
    let f = &t.finding;
    assert_eq!(
        (f.kind, f.symptom.as_str()),
        (Kind::Inconsistency, "shape"),
        "{f:?}"
    );
    assert_eq!(f.op_type(), Some("Einsum"), "{f:?}");
    assert_eq!(f.blame, Some(mutagraph_oracles::Blame::Alone));
    assert!(f.message.contains("downstream: compile:"), "{}", f.message);
}

#[test]
fn a_failure_downstream_of_another_is_filed_as_that_one() {
    // tract casts Pad's negative pads to usize: the whole model panics nine nodes below, at
    // a Gather (a campaign's bundle blamed it). Wherever the search finds it (the prefixes,
    // or the tail of ancestors from the Pad), the finding is the Pad's, blamed on it alone:
    // the bug a model with the Pad alone files.
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
               g (int64[1] i, float[2,1] t) => (float[2,6,1] y)\n\
               <int64[4] pads1 = {-1,0,2,0}, int64[1] flat = {-1}, int64[1] starts = {0},\n\
                int64[1] ends = {2}, int64[3] shape1 = {2,1,1}, int64[1] axes = {1},\n\
                int64[2] pads2 = {0,190}, int64[3] shape2 = {2,6,16}> {\n\
                 p1 = Pad (t, pads1)\n\
                 r2 = Reshape (p1, flat)\n\
                 s1 = Slice (r2, starts, ends)\n\
                 r1 = Reshape (s1, shape1)\n\
                 r3 = Reshape (r1, flat)\n\
                 f1 = Flatten <axis: int = 1> (r3)\n\
                 q1 = Squeeze (f1, axes)\n\
                 p2 = Pad (q1, pads2)\n\
                 r4 = Reshape (p2, shape2)\n\
                 y = Gather <axis: int = 2> (r4, i)\n\
               }";
    let inputs: NamedValues = vec![
        (
            "i".into(),
            Value::Tensor(HostTensor::new(vec![1], Data::I64(vec![1]))),
        ),
        ("t".into(), f32s(vec![2, 1], vec![0.5, -0.25])),
    ];
    let t = tract_triaged(src, &inputs, |m| m.starts_with("panic: "));
    let f = &t.finding;
    assert_eq!(f.kind, Kind::Crash, "{f:?}");
    assert_eq!(
        f.location.as_ref().map(|l| l.value.as_str()),
        Some("p1"),
        "{f:?}"
    );
    assert_eq!(f.blame, Some(mutagraph_oracles::Blame::Alone));
}

#[test]
fn a_failure_is_placed_on_the_node_that_fails_that_way() {
    // tract runs the Pad first (the order of the graph's outputs) and panics in it; the prefix
    // that holds only the Erf fails too, another way (tract has no f64 Erf), so bisecting the
    // prefixes by "fails at all" blamed the Erf. The panic is the Pad's.
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
               g (double[1] e, double[1,4,2,2] x) => (double[1,1,1,1] y, double[1] a) {\n\
                 p = Constant <value = int64[8] {0,-1,0,0,0,-2,-1,-1}> ()\n\
                 a = Erf (e)\n\
                 y = Pad <mode: string = \"reflect\"> (x, p)\n\
               }";
    assert_eq!(tract_panic_placed(src), ("Pad".into(), "y".into()));
}

#[test]
fn a_limit_the_library_declares_is_not_filed() {
    let m = model("Relu", 2);
    let verdict = |msg: &str| {
        judge(
            &["reference", "tract"],
            vec![ok(&[1.0, 0.0]), err(msg)],
            &m,
            &x(&[1.0, -1.0]),
            false,
        )
        .into_iter()
        .find(|(_, b, _, _)| b[0] == "tract")
        .unwrap()
        .2
    };
    let v = verdict(
        "compile: Translating node #6 \"y\" RNN ToTypedTranslator: seq_len only supported for trivial noop case",
    );
    assert!(
        matches!(&v, Verdict::Unsupported(w) if w.contains("only supported for")),
        "{v:?}"
    );
    // A failure that says nothing of the kind is the library's.
    assert_eq!(
        verdict(
            "compile: Translating node #6 \"y\" Relu: Output mismatch after rewiring expansion"
        ),
        Verdict::Report
    );
}

#[test]
fn a_failure_hidden_by_another_in_the_prefixes_is_placed_by_its_own_part() {
    // tract runs `b` first in the whole model (the order of the graph's outputs) and panics
    // there; every prefix that holds `b` holds `a` too, which tract meets first there and
    // which fails another way (no f64 Erf). Bisecting the prefixes blamed `c`; `b` alone with
    // what it depends on fails the way the whole model did.
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
               g (double[1] e, double[1,4,2,2] x) => (double[1] c, double[1,1,1,1] b, double[1] a) {\n\
                 p = Constant <value = int64[8] {0,-1,0,0,0,-2,-1,-1}> ()\n\
                 a = Erf (e)\n\
                 b = Pad <mode: string = \"reflect\"> (x, p)\n\
                 c = Neg (e)\n\
               }";
    assert_eq!(tract_panic_placed(src), ("Pad".into(), "b".into()));
}

/// A crash triaged to one reported signature `LEARN_AFTER` times is a known crash: later hits
/// (whatever its numbers) are filed under that signature without a full triage, but one in
/// `SPOT_CHECK`; a different message is triaged in full; and without `learn` nothing is skipped.
/// The mutants alternate between two triages of one memory ([`Triage::sharing`], as the
/// campaign's triage threads are): what one learns, the other applies.
#[test]
fn a_crash_met_again_and_again_is_filed_as_a_known_hit() {
    use mutagraph_oracles::triage::{LEARN_AFTER, SPOT_CHECK};
    let m = model("Relu", 2);
    let names: Vec<String> = ["reference", "tract"].map(String::from).to_vec();
    let runs = |message: &str| MutantRuns {
        runs: vec![
            report("reference", ok(&[1.0, 2.0])),
            report("tract", err(message)),
        ],
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let mut p = pool();
    for learn in [false, true] {
        let mut triage = Triage::new(&names, Tolerance::APPROXIMATE);
        triage.extra_runs = false;
        triage.learn = learn;
        let mut sibling = triage.sharing();
        let mut signatures = Vec::new();
        let total = LEARN_AFTER as u64 + 2 * SPOT_CHECK;
        for i in 0..total {
            let by = if i % 2 == 0 {
                &mut triage
            } else {
                &mut sibling
            };
            let j = by.judge(
                &mut p,
                &m,
                &x(&[1.0, 2.0]),
                &runs(&format!(
                    "Failed analyse for node #{i} \"n{i}\" Relu: width {i}"
                )),
            );
            assert_eq!(j.len(), 1, "{j:?}");
            assert_eq!(j[0].verdict, Verdict::Report, "{j:?}");
            signatures.push(j[0].finding.signature());
        }
        signatures.dedup();
        assert_eq!(signatures.len(), 1, "one signature: {signatures:?}");
        let s = &triage.stats();
        if learn {
            // Hits after the streak: 2 × SPOT_CHECK, of which 2 spot-checked in full.
            assert_eq!(s.spot_checks, 2, "{s:?}");
            assert_eq!(s.known_hits, 2 * SPOT_CHECK - 2, "{s:?}");
            assert_eq!(s.spot_check_changes, 0, "{s:?}");
        } else {
            assert_eq!(s.known_hits + s.spot_checks, 0, "{s:?}");
        }
        // Another message is no known crash.
        let before = triage.stats().known_hits;
        triage.judge(
            &mut p,
            &m,
            &x(&[1.0, 2.0]),
            &runs("Undetermined symbol in expression"),
        );
        assert_eq!(triage.stats().known_hits, before);
    }
    p.shutdown();
}

/// The triage, with its extra runs, of `ort`'s outcome against the `ground`'s (`ort-noopt`)
/// where the reference lacks an op of the model.
fn without_the_reference(
    ort: Outcome,
    ground: &Outcome,
    bytes: &[u8],
    inputs: &NamedValues,
) -> Vec<Triaged> {
    let outcomes = vec![lacks(), ort, ground.clone()];
    judge_full(
        &["reference", "ort", "ort-noopt"],
        outcomes,
        bytes,
        inputs,
        true,
    )
}

fn lacks() -> Outcome {
    Outcome::Unsupported {
        stage: Stage::Load,
        message: "op com.microsoft::FusedThing is not implemented".into(),
    }
}

/// One triaged finding against `backend`.
fn against<'a>(j: &'a [Triaged], backend: &str) -> &'a Triaged {
    j.iter()
        .find(|t| t.finding.backends[0] == backend)
        .unwrap_or_else(|| panic!("no finding against {backend}: {j:?}"))
}

#[test]
fn without_the_reference_an_optimizer_is_judged_against_its_own_kernels() {
    // The reference lacks an op: ONNX Runtime without its optimizer stands in for it.
    let m = model("Relu", 2);
    let ins = x(&[1.0, 2.0]);
    let j = judge_full(
        &["reference", "ort", "ort-noopt", "tract"],
        vec![lacks(), ok(&[1.0, 5.0]), ok(&[1.0, 2.0]), lacks()],
        &m,
        &ins,
        false,
    );
    assert_eq!(j.len(), 1, "{j:?}");
    let t = against(&j, "ort");
    assert_eq!(t.verdict, Verdict::Report, "{j:?}");
    assert_eq!(t.finding.ground.as_deref(), Some("ort-noopt"));
    assert_eq!(t.finding.layer, Some(Layer::Optimizer));
    assert!(t.finding.signature().ends_with("|ground=ort-noopt"));
    // The bundle's expected values are the ground's.
    let g = t.ground_run.as_ref().expect("the ground's run");
    assert_eq!(g.backend, "ort-noopt");
    // The optimized build crashing where the unoptimized one runs: an optimizer crash.
    let j = judge_full(
        &["reference", "ort", "ort-noopt"],
        vec![lacks(), err("fusion failed"), ok(&[1.0, 2.0])],
        &m,
        &ins,
        false,
    );
    let t = against(&j, "ort");
    assert_eq!(
        (t.finding.kind, &t.verdict),
        (Kind::Crash, &Verdict::Report)
    );
    assert_eq!(t.finding.layer, Some(Layer::Optimizer));
    // Agreeing: nothing.
    let j = judge_full(
        &["reference", "ort", "ort-noopt"],
        vec![lacks(), ok(&[1.0, 2.0]), ok(&[1.0, 2.0])],
        &m,
        &ins,
        false,
    );
    assert!(j.is_empty(), "{j:?}");
}

#[test]
fn without_the_reference_an_optimizer_choosing_otherwise_on_nan_is_undefined() {
    // Round 13: ONNX Runtime's two MaxPool paths differ in windows holding NaN, judged
    // against its own unoptimized run (the reference lacked an op). MaxPool's text says
    // nothing of NaN: undefined, read from the ground's own values on the way to the output.
    let m = crate::common::text_model(
        "g (float[1,1,4] x) => (float[1,1,2] y) { y = MaxPool <kernel_shape=[2], strides=[2]> (x) }",
    );
    let y = |v: [f32; 2]| {
        Outcome::Ok(vec![(
            "y".into(),
            Value::Tensor(HostTensor::new(vec![1, 1, 2], Data::F32(v.to_vec()))),
        )])
    };
    let x = |v: [f32; 4]| -> NamedValues {
        vec![(
            "x".into(),
            Value::Tensor(HostTensor::new(vec![1, 1, 4], Data::F32(v.to_vec()))),
        )]
    };
    let nan = x([f32::NAN, 1.0, 2.0, 3.0]);
    let j = without_the_reference(y([f32::NAN, 3.0]), &y([1.0, 3.0]), &m, &nan);
    let t = against(&j, "ort");
    assert!(
        matches!(&t.verdict, Verdict::Undefined(w) if w.contains("NaN")),
        "{j:?}"
    );
    // Without a NaN in a window the same difference is the optimizer's.
    let finite = x([0.0, 1.0, 2.0, 3.0]);
    let j = without_the_reference(y([5.0, 3.0]), &y([1.0, 3.0]), &m, &finite);
    let t = against(&j, "ort");
    assert_eq!(t.verdict, Verdict::Report, "{j:?}");
    assert_eq!(t.finding.layer, Some(Layer::Optimizer));
}

#[test]
fn without_the_reference_another_library_needs_a_third_implementation() {
    let m = model("Relu", 2);
    let ins = x(&[1.0, 2.0]);
    // tract against ONNX Runtime alone: one implementation against another decides nothing.
    let j = judge_full(
        &["reference", "ort", "ort-noopt", "tract"],
        vec![lacks(), ok(&[1.0, 2.0]), ok(&[1.0, 2.0]), ok(&[1.0, 7.0])],
        &m,
        &ins,
        false,
    );
    let t = against(&j, "tract");
    assert!(
        matches!(&t.verdict, Verdict::Unwitnessed(w) if w.contains("third")),
        "{j:?}"
    );
    // With burn giving `burn`, tract giving 7 where ONNX Runtime gives 2.
    let with_burn = |burn: &[f32]| {
        judge_full(
            &["reference", "ort", "ort-noopt", "tract", "burn-ndarray"],
            vec![
                lacks(),
                ok(&[1.0, 2.0]),
                ok(&[1.0, 2.0]),
                ok(&[1.0, 7.0]),
                ok(burn),
            ],
            &m,
            &ins,
            false,
        )
    };
    // burn sides with ONNX Runtime: tract is blamed, against the weaker oracle.
    let j = with_burn(&[1.0, 2.0]);
    let t = against(&j, "tract");
    assert_eq!(t.verdict, Verdict::Report, "{j:?}");
    assert_eq!(t.finding.ground.as_deref(), Some("ort-noopt"));
    assert_eq!(t.finding.witnesses, vec!["ort-noopt", "burn-ndarray"]);
    // burn sides with tract: the ground is outvoted, and nothing is filed.
    let j = with_burn(&[1.0, 7.0]);
    assert!(
        j.iter().all(|t| t.verdict != Verdict::Report),
        "nothing filed: {j:?}"
    );
    // A reference that fails otherwise than lacking an op is ours, as before: no peers.
    let j = judge_full(
        &["reference", "ort", "ort-noopt"],
        vec![err("boom"), ok(&[1.0, 5.0]), ok(&[1.0, 2.0])],
        &m,
        &ins,
        false,
    );
    assert!(j.iter().all(|t| t.finding.ground.is_none()), "{j:?}");
    assert!(j.iter().all(|t| t.verdict != Verdict::Report), "{j:?}");
}

/// A float16 model whose TopK ranks values that ONNX Runtime's optimizer computes in float32
/// between casts (written with the `onnx` package; the inputs' seed is one on which the two
/// levels' indices differ).
fn near_tie_model(dir: &std::path::Path) -> (Vec<u8>, NamedValues) {
    let script = r#"
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
r = np.random.default_rng(0)
W = np.ones((8, 32), np.float16)
B = r.uniform(-0.2, 0.2, 32).astype(np.float16)
f16 = lambda name, shape: h.make_tensor_value_info(name, T.FLOAT16, shape)
nodes = [h.make_node('MatMul', ['s', 'v'], ['m1']), h.make_node('MatMul', ['m1', 'W'], ['m']),
         h.make_node('Add', ['m', 'B'], ['a']), h.make_node('Transpose', ['a'], ['t'], perm=[1, 0, 2]),
         h.make_node('Concat', ['x', 'e'], ['c'], axis=2), h.make_node('Add', ['c', 't'], ['z']),
         h.make_node('TopK', ['z', 'k'], ['val', 'i'])]
g = h.make_graph(nodes, 'g', [f16('s', [2, 8, 8]), f16('v', [2, 8, 8]), f16('x', [8, 2, 16]),
                 f16('e', [8, 2, 16])], [h.make_tensor_value_info('i', T.INT64, [8, 2, 21])],
                 initializer=[nh.from_array(W, 'W'), nh.from_array(B, 'B'),
                              nh.from_array(np.array([21], np.int64), 'k')])
m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m, full_check=True)
onnx.save(m, sys.argv[1] + '/m.onnx')
u = lambda shape: r.uniform(-1, 1, shape).astype(np.float16)
np.savez(sys.argv[1] + '/in.npz', s=u((2, 8, 8)), v=u((2, 8, 8)), x=u((8, 2, 16)), e=u((8, 2, 16)))
"#;
    crate::common::python_writes(script, dir, "the model");
    let bytes = std::fs::read(dir.join("m.onnx")).unwrap();
    let inputs = mutagraph_oracles::bundle::npz::read_npz(&dir.join("in.npz"))
        .unwrap()
        .into_iter()
        .map(|(n, t)| (n, Value::Tensor(t)))
        .collect();
    (bytes, inputs)
}

#[test]
fn indices_that_differ_among_near_equal_values_are_rounding_not_a_ranking_bug() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, inputs) = near_tie_model(dir.path());
    let mut p = pool();
    let mut real = |b: &str| p.run(b, &bytes, &inputs).unwrap().outcome;
    let (opt, noopt) = (real("ort"), real("ort-noopt"));
    p.shutdown();
    assert_ne!(
        opt, noopt,
        "ONNX Runtime 1.31.1's two levels no longer differ on this model: pick another seed"
    );
    // The reference lacking an op: the unoptimized level is the ground.
    let judged = |opt: Outcome| {
        judge_full(
            &["reference", "ort", "ort-noopt"],
            vec![lacks(), opt, noopt.clone()],
            &bytes,
            &inputs,
            true,
        )
    };
    let j = judged(opt.clone());
    let t = against(&j, "ort");
    assert!(
        matches!(&t.verdict, Verdict::Unstable(w) if w.contains("within rounding")),
        "{j:?}"
    );
    // Indices that swap far-apart values are a wrong ranking: the first and last of a row.
    let Outcome::Ok(mut outs) = opt else {
        panic!("ort failed: {opt:?}")
    };
    let Value::Tensor(HostTensor {
        data: Data::I64(v), ..
    }) = &mut outs[0].1
    else {
        panic!("indices are int64")
    };
    v.swap(0, 20);
    let j = judged(Outcome::Ok(outs));
    assert_eq!(against(&j, "ort").verdict, Verdict::Report, "{j:?}");
}

/// The part of a model, run for real on the reference and `library`'s variants, triaged with
/// the triage's own runs: the finding against `faulty`.
fn triaged_for_real(bytes: &[u8], inputs: &NamedValues, set: &[&str], faulty: &str) -> Triaged {
    let mut p = pool();
    let outcomes = set
        .iter()
        .map(|b| p.run(b, bytes, inputs).unwrap().outcome)
        .collect();
    p.shutdown();
    let j = judge_full(set, outcomes, bytes, inputs, true);
    against(&j, faulty).clone()
}

/// `x` of `shape` holding 0.1 · its index.
fn ramp(name: &str, shape: &[usize], scale: f32) -> (String, Value) {
    let n = shape.iter().product::<usize>();
    let v = (0..n).map(|i| i as f32 * scale).collect();
    (
        name.into(),
        Value::Tensor(HostTensor::new(shape.to_vec(), Data::F32(v))),
    )
}

#[test]
fn a_tract_finding_that_goes_without_one_declutter_rewrite_is_filed_on_it() {
    // A Softmax over H, then a 1x1 Conv of stride 2 along H: tract pulls the stride's
    // Downsample above the Softmax, which then normalizes over 2 rows instead of 4.
    let bytes = crate::common::text_model(
        "g (float[1,1,4,4] x) => (float[1,1,2,4] y) <float[1,1,1,1] w = {2.0}> {
            s = Softmax <axis = 2> (x)
            y = Conv <strides = [2, 1]> (s, w)
        }",
    );
    let inputs = vec![ramp("x", &[1, 1, 4, 4], 0.1)];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    match &t.finding.blame {
        Some(Blame::Rewrite { library, rule, ops }) => {
            assert_eq!(library, "tract");
            assert_eq!(rule, "declutter Downsample");
            assert_eq!(ops, &["Softmax", "Conv"]);
        }
        other => panic!("not blamed on a rewrite: {other:?}"),
    }
    assert!(
        t.finding
            .signature()
            .contains("rewrite=declutter Downsample"),
        "{}",
        t.finding.signature()
    );
}

#[test]
fn an_onnx_runtime_finding_that_goes_without_one_graph_transformer_is_filed_on_it() {
    // Add then LayerNormalization over every axis (axis 0): ONNX Runtime fuses them into its
    // SkipLayerNormalization, which normalizes the last axis only.
    let ones = vec!["1.0"; 32].join(", ");
    let bytes = crate::common::text_model(&format!(
        "g (float[1,2,32] x, float[1,2,32] s) => (float[1,2,32] y)
            <float[32] g = {{{ones}}}, float[32] b = {{{ones}}}> {{
            a = Add (x, s)
            y = LayerNormalization <axis = 0> (a, g, b)
        }}"
    ));
    let inputs = vec![ramp("x", &[1, 2, 32], 0.03), ramp("s", &[1, 2, 32], -0.01)];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "ort", "ort-noopt"], "ort");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    match &t.finding.blame {
        Some(Blame::Rewrite { library, rule, .. }) => {
            assert_eq!(library, "ONNX Runtime");
            assert_eq!(rule, "SkipLayerNormFusion");
        }
        other => panic!("not blamed on a rewrite: {other:?}: {t:?}"),
    }
}

#[test]
fn an_onnx_runtime_failure_one_rule_of_its_rule_based_transformer_makes_is_filed_on_that_rule() {
    // A Pad before a 1×1 AveragePool: ONNX Runtime's PadFusion rule moves the pads into the
    // pool, whose kernel then refuses pads as large as its window. Its log names only
    // Level1_RuleBasedTransformer; the rule whose absence alone lets the model load is the blame.
    let bytes = crate::common::text_model(
        "g (float[1,1,2,2] x) => (float[1,1,4,4] y) <int64[8] p = {0, 0, 1, 1, 0, 0, 1, 1}> {
            t = Pad (x, p)
            y = AveragePool <kernel_shape = [1, 1]> (t)
        }",
    );
    let inputs = vec![ramp("x", &[1, 1, 2, 2], 0.25)];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "ort", "ort-noopt"], "ort");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    match &t.finding.blame {
        Some(Blame::Rewrite { library, rule, .. }) => {
            assert_eq!(library, "ONNX Runtime");
            assert_eq!(rule, "Pad_Fusion");
        }
        other => panic!("not blamed on a rewrite: {other:?}: {t:?}"),
    }
}

#[test]
fn an_onnx_runtime_failure_inside_a_fusion_is_placed_at_the_fused_pool_not_the_node_after() {
    // Round 12: the same PadFusion fault with a Reshape after the pool was placed at the
    // Reshape. Bisecting prefixes exposes every value, and a Pad whose output is exposed is not
    // fused, so every prefix ran; the pool's own part, as is, fails.
    let bytes = crate::common::text_model(
        "g (float[1,1,2,2] x) => (float[16] y)
            <int64[8] p = {0, 0, 1, 1, 0, 0, 1, 1}, int64[1] f = {-1}> {
            t = Pad (x, p)
            a = AveragePool <kernel_shape = [1, 1]> (t)
            y = Reshape (a, f)
        }",
    );
    let inputs = vec![ramp("x", &[1, 1, 2, 2], 0.25)];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "ort", "ort-noopt"], "ort");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    let at = t.finding.location.as_ref().map(|l| l.op_type.as_str());
    assert_eq!(at, Some("AveragePool"), "{t:?}");
    match &t.finding.blame {
        Some(Blame::Rewrite { rule, .. }) => assert_eq!(rule, "Pad_Fusion"),
        Some(Blame::WithProducers { ops }) => assert!(ops.contains(&"Pad".to_string()), "{ops:?}"),
        other => panic!("blame: {other:?}: {t:?}"),
    }
}

#[test]
fn a_failure_after_a_producer_that_fails_alone_is_filed_on_that_producer() {
    // tract types IsInf of doubles as a double and fails at the Xor taking it ("No super type
    // for F64 and Bool"); IsInf alone fails on doubles its own way. One fault, whichever
    // consumer meets it first.
    let bytes = crate::common::text_model(
        "g (double[3] x, bool[3] k) => (bool[3] y) { b = IsInf (x) \n y = Xor (b, k) }",
    );
    let inputs: NamedValues = vec![
        (
            "x".into(),
            Value::Tensor(HostTensor::new(
                vec![3],
                Data::F64(vec![1.0, f64::INFINITY, 0.5]),
            )),
        ),
        (
            "k".into(),
            Value::Tensor(HostTensor::new(
                vec![3],
                Data::Bool(vec![true, false, false]),
            )),
        ),
    ];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert_eq!(t.finding.op_type(), Some("IsInf"), "{t:?}");
    assert_eq!(t.finding.blame, Some(Blame::Alone), "{t:?}");
    assert!(!t.finding.message.contains("Xor"), "{}", t.finding.message);
}

/// y = x·x − c in f16, about 16 − 15.95 (a small result of intermediates at the scale of
/// 16), its inputs, and `backend`'s outcome on it.
fn f16_cancelling(backend: &str) -> (Vec<u8>, NamedValues, Outcome) {
    let bytes = crate::common::text_model(
        "g (float16[4] x, float16[4] c) => (float16[4] y) {
            m = Mul (x, x)
            y = Sub (m, c)
        }",
    );
    let inputs: NamedValues = vec![
        ("x".into(), f16s(&[4.0; 4])),
        ("c".into(), f16s(&[15.95, 15.9, 15.85, 15.8])),
    ];
    let mut p = pool();
    let outcome = p.run(backend, &bytes, &inputs).unwrap().outcome;
    p.shutdown();
    (bytes, inputs, outcome)
}

fn f16s(v: &[f64]) -> Value {
    Value::Tensor(HostTensor::from_f64s(mutagraph_ir::DType::F16, vec![v.len()], v).unwrap())
}

/// `outcome` with every element of its first output moved by `d`, in f16.
fn f16_off_by(outcome: &Outcome, d: f64) -> Outcome {
    let Outcome::Ok(mut outs) = outcome.clone() else {
        panic!("the run failed: {outcome:?}")
    };
    let y = outs[0].1.tensors()[0].to_f64s().unwrap();
    outs[0].1 = f16s(&y.iter().map(|e| e + d).collect::<Vec<_>>());
    Outcome::Ok(outs)
}

#[test]
fn a_small_half_precision_result_of_large_intermediates_may_carry_their_rounding() {
    // y = x·x − c in f16, about 16 − 15.95: a result of 0.05 computed at the scale of 16,
    // where one f16 step is 0.0078. An implementation folding or reordering that arithmetic
    // (ONNX Runtime folding a BatchNormalization into the Conv before it) is off by a few such
    // steps; the result's own size would allow 0.001.
    let (bytes, inputs, want) = f16_cancelling("reference");
    let off_by = |d: f64| f16_off_by(&want, d);
    let judged = |d: f64| {
        judge_full(
            &["reference", "ort"],
            vec![want.clone(), off_by(d)],
            &bytes,
            &inputs,
            true,
        )
    };
    // Two f16 steps at 16: rounding of the intermediate.
    let j = judged(0.0156);
    assert!(
        matches!(&against(&j, "ort").verdict, Verdict::Unstable(w) if w.contains("half-precision")),
        "{j:?}"
    );
    // Far beyond any rounding of the path: a bug.
    let j = judged(0.5);
    assert_eq!(against(&j, "ort").verdict, Verdict::Report, "{j:?}");
}

#[test]
fn wrong_values_are_localized_on_the_way_to_the_output_that_shows_them() {
    // Two unrelated parts: tract's GRU ignoring direction="reverse" makes 'y' wrong; its
    // MatMulInteger of a 1-D A keeps a unit dimension, a wrong shape of 'm' (another finding).
    // The values of 'y' are the GRU's, whatever node comes first in the model.
    let w: Vec<String> = (0..18)
        .map(|i| format!("{:.2}", 0.05 * i as f64 - 0.4))
        .collect();
    let r: Vec<String> = (0..12)
        .map(|i| format!("{:.2}", 0.3 - 0.05 * i as f64))
        .collect();
    let bytes = crate::common::text_model(&format!(
        "g (int8[4] a, float[3,1,3] x) => (float[3,1,1,2] y, int32[2] m)
            <int8[4,2] b = {{1, 2, 3, 4, 5, 6, 7, 8}}, float[1,6,3] w = {{{}}},
             float[1,6,2] r = {{{}}}> {{
            m = MatMulInteger (a, b)
            y = GRU <hidden_size = 2, direction = \"reverse\"> (x, w, r)
        }}",
        w.join(", "),
        r.join(", ")
    ));
    let inputs: NamedValues = vec![
        (
            "a".into(),
            Value::Tensor(HostTensor::new(vec![4], Data::I8(vec![1, -2, 3, -4]))),
        ),
        ramp("x", &[3, 1, 3], 0.2),
    ];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert_eq!(t.finding.named_output(), Some("y"), "{t:?}");
    assert_eq!(t.finding.op_type(), Some("GRU"), "{t:?}");
}

#[test]
fn a_failure_naming_its_tract_rule_is_keyed_on_the_rule_not_on_a_patch() {
    // tract's message names the rule it failed in ("Pulling Downsample over Reshape: Invalid
    // axis"): one finding of that rule, whichever patch made the Downsample it pulled.
    let bytes = crate::common::text_model(
        "g (float[2] x) => (float[2,1] y) <int64[2] s = {2, 1}, int64[1] st = {0},
            int64[1] en = {-2}, int64[1] ax = {1}, int64[1] sp = {-2}> {
            r = Reshape (x, s)
            y = Slice (r, st, en, ax, sp)
        }",
    );
    let inputs = vec![ramp("x", &[2], 1.0)];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert!(
        t.finding.signature().contains("rule=Downsample/AxisOp"),
        "{}",
        t.finding.signature()
    );
    assert!(
        !matches!(t.finding.blame, Some(Blame::Rewrite { .. })),
        "{t:?}"
    );
}

#[test]
fn an_optimizer_finding_on_an_ill_conditioned_model_is_rounding() {
    // Tan 1e-4 from its pole moves by 0.8 % when its input moves by a few f32 roundings: a
    // result 1 % off that only the optimized run shows (and exposing the intermediates undoes)
    // is rounding. Off by 1 % where Tan is tame, it stays a finding.
    let bytes = model("Tan", 1);
    let judged = |x: f32| {
        let inputs = x_at(x);
        let mut p = pool();
        let want = p.run("reference", &bytes, &inputs).unwrap().outcome;
        let noopt = p.run("ort-noopt", &bytes, &inputs).unwrap().outcome;
        p.shutdown();
        let Outcome::Ok(outs) = &want else {
            panic!("the reference failed: {want:?}")
        };
        let y = outs[0].1.tensors()[0].to_f64s().unwrap()[0];
        let j = judge_full(
            &["reference", "ort", "ort-noopt"],
            vec![want.clone(), ok(&[(y * 1.01) as f32]), noopt],
            &bytes,
            &inputs,
            true,
        );
        against(&j, "ort").clone()
    };
    let t = judged(std::f32::consts::FRAC_PI_2 - 1e-4);
    assert!(
        matches!(&t.verdict, Verdict::Unstable(w) if w.contains("ill-conditioned")),
        "{t:?}"
    );
    assert_eq!(judged(0.5).verdict, Verdict::Report);
}

fn x_at(v: f32) -> NamedValues {
    x(&[v])
}

#[test]
fn a_failure_on_a_shape_its_producer_got_wrong_is_filed_on_the_producer() {
    // ONNX Runtime's SAME_UPPER padding of a dilated MaxPool ignores the dilation: 31 columns
    // where the spec's ceil(32 / 1) is 32. The Add after it (fused into a
    // SkipLayerNormalization with the LayerNormalization at the optimized level) then fails on
    // mismatched shapes, and the message names only the fused node, which no prefix of the
    // model with its values exposed reproduces. The fault is the MaxPool's shape, not the Add,
    // the fused node nor the model's last node.
    let bytes = crate::common::text_model(
        "g (float[1,1,32] e, float[1,1,32] a, float[1] z) => (float[1,1,32] y, float[1] w)
            <float[32] g = {1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,
                            1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0},
             float[32] b = {0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,
                            0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0}> {
            m = MaxPool <kernel_shape = [2], strides = [1], dilations = [2], auto_pad = \"SAME_UPPER\"> (a)
            s = Add (e, m)
            y = LayerNormalization <axis = -1> (s, g, b)
            w = Neg (z)
        }",
    );
    let inputs = vec![
        ramp("e", &[1, 1, 32], 0.03),
        ramp("a", &[1, 1, 32], -0.01),
        ramp("z", &[1], 0.5),
    ];
    for faulty in ["ort", "ort-noopt"] {
        let t = triaged_for_real(&bytes, &inputs, &["reference", faulty], faulty);
        assert_eq!(t.verdict, Verdict::Report, "{t:?}");
        assert_eq!(t.finding.op_type(), Some("MaxPool"), "{faulty}: {t:?}");
        assert_eq!(t.finding.symptom, "shape", "{faulty}: {t:?}");
        assert_eq!(t.finding.blame, Some(Blame::Alone), "{faulty}: {t:?}");
    }
}

#[test]
fn a_failure_that_a_rightly_shaped_value_does_not_prevent_is_not_the_wrong_shape() {
    // tract keeps the input's shape for Einsum's 'ab->' (a scalar in ONNX), and fails at the
    // Xor after IsInf of doubles whatever shape reaches it. The wrong shape is a bug of its
    // own, but the failure is not its consequence: fed the rightly shaped sum, the IsInf and
    // the Xor fail the same way.
    let bytes = crate::common::text_model(
        "g (double[2,3] x, bool k) => (bool y) {
            e = Einsum <equation = \"ab->\"> (x)
            i = IsInf (e)
            y = Xor (i, k)
        }",
    );
    let inputs: NamedValues = vec![
        (
            "x".into(),
            Value::Tensor(HostTensor::new(
                vec![2, 3],
                Data::F64(vec![1.0, 2.0, 0.5, -1.0, 3.0, 4.0]),
            )),
        ),
        (
            "k".into(),
            Value::Tensor(HostTensor::new(vec![], Data::Bool(vec![true]))),
        ),
    ];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert_eq!(t.finding.kind, Kind::Crash, "{t:?}");
    assert_ne!(t.finding.op_type(), Some("Einsum"), "{t:?}");
}

#[test]
fn wrong_values_made_of_a_wrong_shape_upstream_are_that_shape() {
    // ONNX Runtime's SAME_UPPER AveragePool ignores the dilation (3 rows where ONNX gives 4);
    // the ArgMin after it returns wrong indices of the right shape. The fault is the pool's
    // shape: the same finding as the failures that shape makes elsewhere.
    let bytes = mutagraph_ir::text::parse_model(
        "<ir_version: 9, opset_import: [\"\" : 19]>
        g (float[1,1,4,2] x) => (int64[1,1,1,2] y) {
            p = AveragePool <kernel_shape = [2, 1], dilations = [2, 1], auto_pad = \"SAME_UPPER\"> (x)
            y = ArgMin <axis = 2> (p)
        }",
    )
    .expect("valid text")
    .to_bytes();
    let inputs = vec![(
        "x".to_string(),
        Value::Tensor(HostTensor::new(
            vec![1, 1, 4, 2],
            Data::F32(vec![4.0, 3.0, 3.0, 2.0, 2.0, 1.0, 1.0, 0.0]),
        )),
    )];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "ort", "ort-noopt"], "ort");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert_eq!(t.finding.op_type(), Some("AveragePool"), "{t:?}");
    assert_eq!(t.finding.symptom, "shape", "{t:?}");
    assert!(
        t.finding.signature().contains("shape"),
        "{}",
        t.finding.signature()
    );
}

#[test]
fn a_tdim_leak_is_blamed_on_the_node_with_the_cast_that_made_it() {
    // tract holds a Cast to int64 as its dimension type TDim, which Sign has no kernel for.
    // Sign alone, fed int64 values, runs: the fault needs the Cast.
    let bytes = crate::common::text_model(
        "g (float[4] x) => (int64[4] y) { c = Cast <to = 7> (x) \n y = Sign (c) }",
    );
    let inputs = vec![(
        "x".to_string(),
        Value::Tensor(HostTensor::new(
            vec![4],
            Data::F32(vec![1.5, -2.2, 3.7, 0.0]),
        )),
    )];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert_eq!(t.finding.gap.as_deref(), Some("tdim"), "{t:?}");
    assert_eq!(
        t.finding.blame,
        Some(Blame::WithProducers {
            ops: vec!["Cast".into()]
        }),
        "{t:?}"
    );
}

#[test]
fn an_optimizer_jump_at_a_round_of_a_value_at_its_step_is_rounding() {
    // y = Round(x + b) where x + b is 2.5 and a few roundings: an optimizer folding the sum into
    // other arithmetic lands on either side of the step, a jump of one (ONNX Runtime's
    // Conv+BatchNormalization fold before a Reciprocal and a Round). The same jump where the
    // value is far from its step is a finding.
    let bytes = crate::common::text_model(
        "g (float[3] x) => (float[3] y) <float[3] b = {0.0, 0.0, 0.0}> {
            m = Add (x, b)
            y = Round (m)
        }",
    );
    let judged = |first: f32, shown: f32| {
        let inputs = vec![(
            "x".to_string(),
            Value::Tensor(HostTensor::new(vec![3], Data::F32(vec![first, 1.2, 7.7]))),
        )];
        let right = first.round_ties_even();
        let outcomes = vec![
            ok(&[right, 1.0, 8.0]),
            ok(&[shown, 1.0, 8.0]),
            ok(&[right, 1.0, 8.0]),
        ];
        let j = judge_full(
            &["reference", "ort", "ort-noopt"],
            outcomes,
            &bytes,
            &inputs,
            true,
        );
        against(&j, "ort").clone()
    };
    let at_step = judged(2.500_000_2, 2.0);
    assert!(
        matches!(&at_step.verdict, Verdict::Unstable(why) if why.contains("Round")),
        "{at_step:?}"
    );
    let far = judged(2.7, 2.0);
    assert!(!matches!(far.verdict, Verdict::Unstable(_)), "{far:?}");
}

#[test]
fn an_optimizer_jump_after_a_dynamic_quantization_is_rounding() {
    // y = DequantizeLinear(DynamicQuantizeLinear(x + b)): the scale comes from the input's
    // range, so an optimizer's reordering before it (ONNX Runtime fusing a MatMul with its Add
    // before a DynamicQuantizeLSTM) moves the scale by a rounding and an element across a
    // quantization step. The same jump without the dynamic quantizer is a finding.
    let quantized = crate::common::text_model(
        "g (float[4] x) => (float[4] y) <float[4] b = {0.0, 0.0, 0.0, 0.0}> {
            m = Add (x, b)
            q, s, z = DynamicQuantizeLinear (m)
            y = DequantizeLinear (q, s, z)
        }",
    );
    let plain = crate::common::text_model(
        "g (float[4] x) => (float[4] y) <float[4] b = {0.0, 0.0, 0.0, 0.0}> {
            m = Add (x, b)
            y = Relu (m)
        }",
    );
    let inputs = vec![(
        "x".to_string(),
        Value::Tensor(HostTensor::new(
            vec![4],
            Data::F32(vec![0.0, 0.5, 20.0, 30.0]),
        )),
    )];
    let judged = |bytes: &[u8], right: &[f32]| {
        let mut shown = right.to_vec();
        shown[1] += 30.0 / 255.0;
        let outcomes = vec![ok(right), ok(&shown), ok(right)];
        let j = judge_full(
            &["reference", "ort", "ort-noopt"],
            outcomes,
            bytes,
            &inputs,
            true,
        );
        against(&j, "ort").clone()
    };
    let step = 30.0f32 / 255.0;
    let dequantized: Vec<f32> = [0.0f32, 0.5, 20.0, 30.0]
        .iter()
        .map(|v| (v / step).round_ties_even() * step)
        .collect();
    let after_quantizer = judged(&quantized, &dequantized);
    assert!(
        matches!(&after_quantizer.verdict, Verdict::Unstable(why) if why.contains("DynamicQuantizeLinear")),
        "{after_quantizer:?}"
    );
    let without = judged(&plain, &[0.0, 0.5, 20.0, 30.0]);
    assert!(
        !matches!(without.verdict, Verdict::Unstable(_)),
        "{without:?}"
    );
}

#[test]
fn without_the_reference_an_optimizer_within_the_rounding_of_its_path_is_rounding() {
    // The reference lacks an op of the model: ONNX Runtime's optimized run is judged against
    // its unoptimized one. y = x·x − c in f16 at the scale of 16: two f16 steps there are the
    // rounding of the path (ONNX Runtime folding an f16 BatchNormalization into a Conv); half
    // a unit is a finding.
    let (bytes, inputs, ground) = f16_cancelling("ort-noopt");
    let off_by = |d: f64| f16_off_by(&ground, d);
    let judged = |d: f64| without_the_reference(off_by(d), &ground, &bytes, &inputs);
    let j = judged(0.0156);
    assert!(
        matches!(&against(&j, "ort").verdict, Verdict::Unstable(w) if w.contains("ort-noopt")),
        "{j:?}"
    );
    let j = judged(0.5);
    assert_eq!(against(&j, "ort").verdict, Verdict::Report, "{j:?}");
}

#[test]
fn a_failure_whose_part_the_library_cannot_compile_is_traced_to_the_producer() {
    // tract types IsInf of doubles as a double: the Xor after it fails analysis, and so does
    // every part before the Xor (no values of tract's to check the Xor alone on). Fed the
    // reference's values, the IsInf alone fails its own way: the finding is the IsInf's.
    let bytes = crate::common::text_model(
        "g (double[1,2] r) => (bool[1,3] y)
            <double[3,2] w = {1.0, 0.5, -0.25, 2.0, 0.0, 1.0}, bool[1,3] k = {1, 0, 0}> {
            e = Einsum <equation = \"bi,oi->bo\"> (r, w)
            i = IsInf (e)
            y = Xor (i, k)
        }",
    );
    let inputs: NamedValues = vec![(
        "r".into(),
        Value::Tensor(HostTensor::new(vec![1, 2], Data::F64(vec![0.5, -1.5]))),
    )];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert_eq!(t.finding.op_type(), Some("IsInf"), "{t:?}");
    assert_eq!(t.finding.blame, Some(Blame::Alone), "{t:?}");
}

#[test]
fn an_optimizer_failure_no_part_shows_is_filed_on_the_rewrite() {
    // The tanh form of Gelu before a MatMul, whose x·0.5 also feeds a Min: ONNX Runtime's
    // FastGeluFusion removes that Mul all the same, and the session fails to load ("Node input ... is not a
    // graph input, initializer, or output of a previous node"). No part ending at a node shows
    // it; the whole model without that one transformer loads.
    let bytes = crate::common::text_model(
        "g (float[1,4] x, float[1,1] a) => (float[1,4] y, float[1,4] m)
            <float three = {3.0}, float k = {0.044715}, float c = {0.797885}, float one = {1.0},
             float half = {0.5}, float[4,4] w = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
             1.0, 1.0, 1.0, 1.0, 1.0, 1.0}> {
            p = Pow (x, three)
            q = Mul (p, k)
            r = Add (x, q)
            s = Mul (r, c)
            t = Tanh (s)
            u = Add (t, one)
            h = Mul (x, half)
            g = Mul (h, u)
            y = MatMul (g, w)
            m = Min (a, h)
        }",
    );
    let inputs = vec![ramp("x", &[1, 4], 0.25), ramp("a", &[1, 1], 0.5)];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "ort", "ort-noopt"], "ort");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    match &t.finding.blame {
        Some(Blame::Rewrite { library, rule, .. }) => {
            assert_eq!(library, "ONNX Runtime");
            assert_eq!(rule, "FastGeluFusion");
        }
        other => panic!("not blamed on a rewrite: {other:?}: {t:?}"),
    }
}

#[test]
fn without_the_reference_a_ground_that_rounds_only_what_it_shows_is_no_witness() {
    // float16 x·W reaches 8e4, float16's infinity, before a LayerNormalization: NaN as the
    // model's types say. ONNX Runtime without its optimizer keeps the chain in float32 between
    // the casts its CPU provider inserts and gives finite values, until the values are graph
    // outputs (round 9: two findings against ONNX Runtime's optimized run, false).
    // float16 values are written as their bits
    let bits = |v: f32| mutagraph_ir::tensor::f32_to_f16(v).to_string();
    let w: Vec<String> = (0..64).map(|k| bits(100.0 * (k % 8 + 1) as f32)).collect();
    let ones = vec![bits(1.0); 8].join(", ");
    let bytes = crate::common::text_model(&format!(
        "g (float16[2,8] x) => (float16[2,8] y) <float16[8,8] w = {{{}}}, \
         float16[8] s = {{{ones}}}, float16[8] b = {{0, 0, 0, 0, 0, 0, 0, 0}}, \
         float16[8] c = {{{ones}}}> {{
            m = MatMul (x, w)
            l = LayerNormalization <axis = -1> (m, s, b)
            p = MatMul (l, w)
            y = Add (p, c)
        }}",
        w.join(", ")
    ));
    let x = HostTensor::from_f64s(mutagraph_ir::DType::F16, vec![2, 8], &[100.0; 16]).unwrap();
    let inputs: NamedValues = vec![("x".into(), Value::Tensor(x))];
    let mut p = pool();
    let ground = p.run("ort-noopt", &bytes, &inputs).unwrap().outcome;
    p.shutdown();
    let finite = ground.outputs().unwrap()[0]
        .1
        .tensor()
        .unwrap()
        .nan_inf_counts();
    assert_eq!(
        finite,
        (0, 0),
        "ONNX Runtime keeps the chain in float32: {ground:?}"
    );
    let shown = |v: f64| {
        let t = HostTensor::from_f64s(mutagraph_ir::DType::F16, vec![2, 8], &[v; 16]).unwrap();
        Outcome::Ok(vec![("y".into(), Value::Tensor(t))])
    };
    let judged = |v: f64| without_the_reference(shown(v), &ground, &bytes, &inputs);
    let j = judged(f64::NAN);
    assert!(
        matches!(&against(&j, "ort").verdict, Verdict::Unstable(w) if w.contains("graph output")),
        "{j:?}"
    );
    // other values are no result the ground gives (the model's conditioning may still make
    // them rounding)
    let j = judged(3.0);
    assert!(
        !matches!(&against(&j, "ort").verdict, Verdict::Unstable(w) if w.contains("graph output")),
        "{j:?}"
    );
}

#[test]
fn without_the_reference_a_nan_the_ground_turns_to_under_a_nudge_is_rounding() {
    // y = sqrt(x·x − c) with c one rounding below x·x: the ground gives a tiny positive root,
    // and inputs moved by a few rounding steps turn it NaN; an optimizer's NaN there is the
    // model's conditioning (round 9: a square root of 4.5e-7 left from terms of 6.6e-3,
    // ONNX Runtime's optimized run against its unoptimized one). Far from zero it is a finding.
    let bytes = crate::common::text_model(
        "g (float[4] x, float[4] c) => (float[4] y) {
            m = Mul (x, x)
            d = Sub (m, c)
            y = Sqrt (d)
        }",
    );
    let xs: Vec<f32> = (0..4).map(|i| 0.0814 + 0.001 * i as f32).collect();
    let judged = |c: &dyn Fn(f32) -> f32| {
        let cs: Vec<f32> = xs.iter().map(|&x| c(x)).collect();
        let inputs: NamedValues = vec![("x".into(), t(&xs)), ("c".into(), t(&cs))];
        let mut p = pool();
        let ground = p.run("ort-noopt", &bytes, &inputs).unwrap().outcome;
        p.shutdown();
        without_the_reference(ok(&[f32::NAN; 4]), &ground, &bytes, &inputs)
    };
    let below = |x: f32| f32::from_bits((x * x).to_bits() - 1);
    let j = judged(&below);
    assert!(
        matches!(&against(&j, "ort").verdict, Verdict::Unstable(w) if w.contains("singularity")),
        "{j:?}"
    );
    let half = |x: f32| 0.5 * x * x;
    let j = judged(&half);
    assert_eq!(against(&j, "ort").verdict, Verdict::Report, "{j:?}");
}

/// tract's declutter loops for ever over an RNN whose output is reshaped with unit axes,
/// summed over them and flattened (round 12: the bundle was neither minimized nor placed). The
/// RNN's final state goes unread, as in round 13's bundle, whose parts asked for it and never
/// hung.
/// A hang is minimized with a short time limit per run and placed on the minimized model: the
/// first node whose part, as is, does not finish, blamed with the nodes it depends on.
#[test]
fn a_hang_is_minimized_and_placed_on_the_part_that_does_not_finish() {
    use mutagraph_engine::minimizer::{Finished, MinimizeJob, minimize_one};
    let w: Vec<String> = (0..32)
        .map(|i| format!("{:.2}", (i as f32 * 0.37).sin()))
        .collect();
    let r: Vec<String> = (0..64)
        .map(|i| format!("{:.2}", (i as f32 * 0.53).cos()))
        .collect();
    let bytes = crate::common::text_model(&format!(
        "g (float[2,1,4] x) => (float[16] y, float[2,1,4] z)
            <float[1,8,4] W = {{{}}}, float[1,8,8] R = {{{}}}, int64[5] s = {{1, 2, 1, 1, 8}},
             int64[3] ax = {{0, 2, 3}}, int64[1] f = {{-1}}> {{
            a = Relu (x)
            h, hn = RNN <hidden_size = 8> (a, W, R)
            q = Reshape (h, s)
            u = ReduceSum (q, ax)
            y = Reshape (u, f)
            z = Neg (x)
        }}",
        w.join(", "),
        r.join(", ")
    ));
    let inputs = vec![ramp("x", &[2, 1, 4], 0.1)];
    let set: Vec<String> = ["reference", "tract"].map(String::from).to_vec();
    let mut p = pool();
    p.set_timeout(std::time::Duration::from_secs(5));
    let first = p.run("tract", &bytes, &inputs).unwrap();
    assert!(
        matches!(first.outcome, Outcome::Timeout { .. }),
        "tract finished: {:?}",
        first.outcome.detail()
    );
    let outcomes = set
        .iter()
        .map(|b| p.run(b, &bytes, &inputs).unwrap().outcome)
        .collect();
    let names: Vec<&str> = set.iter().map(String::as_str).collect();
    let j = judge_full(&names, outcomes, &bytes, &inputs, true);
    let hang = against(&j, "tract").finding.clone();
    assert_eq!(hang.kind, Kind::Hang, "{hang:?}");
    let job = MinimizeJob {
        signature: hang.signature(),
        dir: PathBuf::from("unused"),
        finding: hang,
        model: bytes,
        inputs,
        intermediates: None,
        input_seed: 1,
        trace: None,
        whole: None,
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let opts = mutagraph_oracles::minimize::Options::default();
    let done = minimize_one(&mut p, &set, Tolerance::APPROXIMATE, &job, &opts, &stop);
    p.shutdown();
    let Some(Finished::Minimized(done)) = done else {
        panic!("not minimized")
    };
    assert!(done.info.nodes_after <= 4, "{:?}", done.info);
    let at = done.finding.location.as_ref().expect("placed");
    assert!(
        ["RNN", "Reshape", "ReduceSum"].contains(&at.op_type.as_str()),
        "{at:?}"
    );
    match &done.finding.blame {
        Some(Blame::WithProducers { ops }) => assert!(ops.contains(&"RNN".into()), "{ops:?}"),
        Some(Blame::Alone) => assert_eq!(at.op_type, "RNN"),
        other => panic!("blame {other:?}"),
    }
}

/// tract types Gemm over int64 with alpha 2 through an f32 constant and fails to compile ("No
/// super type for F32 and I64"). Alone, fed an int64 graph input, the node failed the same way
/// and the adapter compiled it again with the input fixed to its value, which folded it: the
/// blame read "only together with ArgMin and GatherND" (round 12, `crash-tract-gemm-e1f98b9a`).
/// A part is judged as the whole model meets it: compiled from types and shapes.
#[test]
fn a_node_alone_is_not_folded_where_the_model_is_not() {
    let bytes = crate::common::text_model(
        "g (float[1,1,1] x) => (int64[1,1] y)
            <int64[2,2] i = {0, 0, 0, 0}, int64[1,2] b = {-1, 0}, int64[1,1] c = {-1}> {
            a = ArgMin <axis = 1, keepdims = 1, select_last_index = 1> (x)
            g = GatherND (a, i)
            y = Gemm <transA = 1, transB = 1, alpha = 2.0, beta = -0.5> (g, b, c)
        }",
    );
    let inputs = vec![ramp("x", &[1, 1, 1], 2.0)];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    let at = t.finding.location.as_ref().map(|l| l.op_type.as_str());
    assert_eq!(at, Some("Gemm"), "{t:?}");
    assert_eq!(t.finding.blame, Some(Blame::Alone), "{t:?}");
}

/// ONNX Runtime's SkipLayerNormFusion normalizes a LayerNormalization over axis -3 on the last
/// axis only; the values first differ earlier, at a OneHot of a float index, which ONNX Runtime
/// computes wrongly at every level (another fault) and whose value a Compress and a ScatterND
/// then discard (round 13: filed as "OneHot with graph optimizations gives wrong values"). The
/// node must be right without the optimizer to carry an optimizer's finding.
#[test]
fn an_optimizers_finding_is_not_blamed_on_a_node_wrong_at_every_level() {
    let ones = |n: usize| vec!["1"; n].join(", ");
    let bytes = crate::common::text_model(&format!(
        "g (float[1,8,32] e, float[1,8,32] a, float[1,1,1] m) => (float[1,8,32] y)
            <float[32] s = {{{o32}}}, float[32] b = {{{o32}}}, float[64,32] w = {{{o2048}}},
             float[1] depth = {{4}}, float[2] vals = {{0, 1}}, bool[1] keep = {{1}},
             int64[1,1] at = {{0}}, float[1] upd = {{0.858}}, int64[2] pads = {{0, 511}},
             int64[3] shape = {{1, 8, 64}}> {{
            x = Add (e, a)
            n = LayerNormalization <axis = -3> (x, s, b)
            h = OneHot <axis = -3> (m, depth, vals)
            c = Compress (h, keep)
            u = ScatterND (c, at, upd)
            p = Pad (u, pads)
            r = Reshape (p, shape)
            l = MatMul (r, w)
            y = Add (n, l)
        }}",
        o32 = ones(32),
        o2048 = ones(2048)
    ));
    let inputs = vec![
        ramp("e", &[1, 8, 32], 0.003),
        ramp("a", &[1, 8, 32], -0.002),
        (
            "m".into(),
            Value::Tensor(HostTensor::new(vec![1, 1, 1], Data::F32(vec![0.1415]))),
        ),
    ];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "ort", "ort-noopt"], "ort");
    let at = t.finding.location.as_ref().map(|l| l.op_type.as_str());
    match (&t.verdict, &t.finding.blame) {
        (Verdict::Report, Some(Blame::Rewrite { rule, .. })) => {
            assert_eq!(rule, "SkipLayerNormFusion", "{t:?}")
        }
        (Verdict::Unlocalized(_), _) => {}
        _ => panic!("blamed at {at:?}: {t:?}"),
    }
    assert_ne!(at, Some("OneHot"), "{t:?}");
}
