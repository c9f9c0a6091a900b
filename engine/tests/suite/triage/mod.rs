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

fn x_at(v: f32) -> NamedValues {
    x(&[v])
}

mod peers;
mod placement;
mod rewrites;
