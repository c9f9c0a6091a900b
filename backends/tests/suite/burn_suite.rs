//! The burn interpreter (on NdArray) against the ONNX backend test suite's node tests, plus a
//! few hand-computed checks of the tricky parts.
#![cfg(feature = "burn")]

use mutagraph_backends::backend::Backend;
use mutagraph_backends::compare::{CompareOptions, compare};
use mutagraph_backends::suite::{self, discover, load, root};
use mutagraph_backends::value::{Data, HostTensor, Value};
use mutagraph_ir::attr::AttrValue;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use mutagraph_ir::model::Model;
use mutagraph_ir::patch::{Patch, PatchOp};
use mutagraph_ir::pb;
use mutagraph_ir::types::ValueType;
use std::panic::{AssertUnwindSafe, catch_unwind};

#[derive(Debug)]
enum Verdict {
    Pass,
    Fail(String),
    Unsupported(String),
    Crash(String),
}

fn quiet_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    let s = if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic".to_string()
    };
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .take(4)
        .collect::<Vec<_>>()
        .join(" | ")
}

fn run_case(be: &mut dyn Backend, case: &suite::Case) -> Verdict {
    let mut prepared = match be.prepare(&case.model_bytes) {
        Ok(p) => p,
        Err(e) if e.unsupported => return Verdict::Unsupported(e.to_string()),
        Err(e) => return Verdict::Fail(e.to_string()),
    };
    for (i, set) in case.sets.iter().enumerate() {
        let got = match prepared.run(&set.inputs) {
            Ok(v) => v,
            Err(e) if e.unsupported => return Verdict::Unsupported(e.to_string()),
            Err(e) => return Verdict::Fail(format!("set {i}: {e}")),
        };
        for (name, expected) in &set.outputs {
            let Some((_, actual)) = got.iter().find(|(n, _)| n == name) else {
                return Verdict::Fail(format!("set {i}: output {name} missing"));
            };
            let c = compare(expected, actual, CompareOptions::default());
            if !c.ok {
                return Verdict::Fail(format!(
                    "set {i} output {name}: {}",
                    c.reason.unwrap_or_default()
                ));
            }
        }
    }
    Verdict::Pass
}

#[test]
fn node_suite() {
    let cases = discover(&root(), &["node"]).expect("the ONNX backend test suite");
    let mut be = mutagraph_backends::burn::ndarray();
    let caps = be.capabilities();
    let n_ops = caps.ops.len();
    // BURN_CASE=substring runs only the matching cases, with panic messages shown.
    let only = std::env::var("BURN_CASE").ok();
    if only.is_none() {
        quiet_panics();
    }
    let (mut pass, mut fail, mut unsup, mut crash, mut skipped) = (0, 0, 0, 0, 0);
    let mut failures = Vec::new();
    for cref in &cases {
        if only
            .as_ref()
            .is_some_and(|o| !cref.name.contains(o.as_str()))
        {
            continue;
        }
        let case = match load(cref) {
            Ok(c) => c,
            Err(e) => {
                skipped += 1;
                eprintln!("skip {}: {e}", cref.id());
                continue;
            }
        };
        let implemented = case.op_types().iter().all(|o| caps.ops.contains_key(o));
        if !implemented {
            if std::env::var("BURN_MISSING").is_ok() {
                let miss: Vec<_> = case
                    .op_types()
                    .into_iter()
                    .filter(|o| !caps.ops.contains_key(o))
                    .collect();
                println!("MISSING {}", miss.join(","));
            }
            skipped += 1;
            continue;
        }
        let v = match catch_unwind(AssertUnwindSafe(|| run_case(be.as_mut(), &case))) {
            Ok(v) => v,
            Err(p) => Verdict::Crash(panic_text(p)),
        };
        match &v {
            Verdict::Pass => pass += 1,
            Verdict::Fail(r) => {
                fail += 1;
                failures.push(format!("FAIL  {}: {r}", cref.name));
            }
            Verdict::Unsupported(r) => {
                unsup += 1;
                println!("UNSUP {}: {r}", cref.name);
            }
            Verdict::Crash(r) => {
                crash += 1;
                failures.push(format!("CRASH {}: {r}", cref.name));
            }
        }
    }
    let _ = std::panic::take_hook();
    for f in &failures {
        println!("{f}");
    }
    let counted = pass + fail + crash;
    let rate = if counted == 0 {
        0.0
    } else {
        pass as f64 / counted as f64
    };
    println!(
        "burn-ndarray: {n_ops} ops; node tests of implemented ops: {pass} pass, {fail} fail, \
         {crash} crash, {unsup} unsupported ({} not implemented or unloadable); pass rate {:.1} %",
        skipped,
        rate * 100.0
    );
    if only.is_some() {
        return;
    }
    assert!(n_ops >= 60, "only {n_ops} ops");
    assert!(rate >= 0.9, "pass rate {:.1} % below 90 %", rate * 100.0);
}

// ---- hand-computed checks ----

fn vi(name: &str, dtype: DType, shape: &[i64]) -> pb::ValueInfoProto {
    pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(
            ValueType::t(
                dtype,
                Some(
                    shape
                        .iter()
                        .map(|&d| mutagraph_ir::types::Dim::Known(d))
                        .collect(),
                ),
            )
            .to_proto(),
        ),
        ..Default::default()
    }
}

/// A one-node model.
fn model(opset: i64, node: Node, inputs: &[(&str, &[i64])], output: (&str, &[i64])) -> Vec<u8> {
    let mut m = Model::new(opset);
    let mut p = Patch::new();
    for (n, s) in inputs {
        p.push(PatchOp::AddInput(vi(n, DType::F32, s)));
    }
    p.push(PatchOp::AddNode(node));
    p.push(PatchOp::AddOutput(vi(output.0, DType::F32, output.1)));
    m.apply(&p).expect("valid model");
    m.to_bytes()
}

fn f32s(shape: &[usize], v: &[f32]) -> Value {
    Value::Tensor(HostTensor::new(shape.to_vec(), Data::F32(v.to_vec())))
}

fn run1(bytes: &[u8], inputs: Vec<(&str, Value)>) -> HostTensor {
    let mut be = mutagraph_backends::burn::ndarray();
    let mut p = be.prepare(bytes).expect("prepare");
    let ins = inputs
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect();
    let out = p.run(&ins).expect("run");
    match &out[0].1 {
        Value::Tensor(t) => t.clone(),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn close(got: &HostTensor, shape: &[usize], want: &[f32]) {
    assert_eq!(got.shape, shape);
    let Data::F32(v) = &got.data else {
        panic!("not f32: {got}")
    };
    for (a, b) in v.iter().zip(want) {
        assert!((a - b).abs() < 1e-5, "got {v:?}, want {want:?}");
    }
}

#[test]
fn broadcasting_add() {
    // [2, 1] + [3] -> [2, 3]
    let m = model(
        17,
        Node::new("Add", &["a", "b"], &["y"]),
        &[("a", &[2, 1]), ("b", &[3])],
        ("y", &[2, 3]),
    );
    let y = run1(
        &m,
        vec![
            ("a", f32s(&[2, 1], &[10.0, 20.0])),
            ("b", f32s(&[3], &[1.0, 2.0, 3.0])),
        ],
    );
    close(&y, &[2, 3], &[11.0, 12.0, 13.0, 21.0, 22.0, 23.0]);
}

#[test]
fn conv_pads_and_groups() {
    // x: 1x2x3 (two channels), w: 2x1x2 (group 2), pads [1, 0]:
    // channel 0: [0,1,2,3] * [1,1] -> [1,3,5]; channel 1: [0,4,5,6] * [1,-1] -> [-4,-1,-1]
    let node = Node::new("Conv", &["x", "w"], &["y"])
        .with_attr("group", AttrValue::Int(2))
        .with_attr("pads", AttrValue::Ints(vec![1, 0]));
    let m = model(
        17,
        node,
        &[("x", &[1, 2, 3]), ("w", &[2, 1, 2])],
        ("y", &[1, 2, 3]),
    );
    let y = run1(
        &m,
        vec![
            ("x", f32s(&[1, 2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])),
            ("w", f32s(&[2, 1, 2], &[1.0, 1.0, 1.0, -1.0])),
        ],
    );
    close(&y, &[1, 2, 3], &[1.0, 3.0, 5.0, -4.0, -1.0, -1.0]);
}

#[test]
fn softmax_opset_switch() {
    // x [1, 2, 2] = [[[0, 0], [0, ln 3]]]
    let l3 = 3f32.ln();
    let x = [0.0, 0.0, 0.0, l3];
    // opset 11, axis 1: softmax over the flattened last two dims: exp = [1,1,1,3] / 6
    let m11 = model(
        11,
        Node::new("Softmax", &["x"], &["y"]).with_attr("axis", AttrValue::Int(1)),
        &[("x", &[1, 2, 2])],
        ("y", &[1, 2, 2]),
    );
    let y = run1(&m11, vec![("x", f32s(&[1, 2, 2], &x))]);
    close(&y, &[1, 2, 2], &[1.0 / 6.0, 1.0 / 6.0, 1.0 / 6.0, 0.5]);
    // opset 13, axis 1: softmax over axis 1 alone: columns [0,0] -> 1/2, [0, ln3] -> 1/4, 3/4
    let m13 = model(
        13,
        Node::new("Softmax", &["x"], &["y"]).with_attr("axis", AttrValue::Int(1)),
        &[("x", &[1, 2, 2])],
        ("y", &[1, 2, 2]),
    );
    let y = run1(&m13, vec![("x", f32s(&[1, 2, 2], &x))]);
    close(&y, &[1, 2, 2], &[0.5, 0.25, 0.5, 0.75]);
}

#[test]
fn unsupported_op_is_refused_at_prepare() {
    let m = model(
        17,
        Node::new("Det", &["x"], &["y"]),
        &[("x", &[2, 2])],
        ("y", &[]),
    );
    let mut be = mutagraph_backends::burn::ndarray();
    let e = be.prepare(&m).err().expect("refused");
    assert!(e.unsupported, "{e}");
}

// ---- element types and edge cases met in campaigns ----

fn run_text(src: &str, inputs: Vec<(&str, HostTensor)>) -> HostTensor {
    let m = mutagraph_ir::text::parse_model(&format!(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n{src}"
    ))
    .expect("valid text")
    .to_bytes();
    run1(
        &m,
        inputs
            .into_iter()
            .map(|(n, t)| (n, Value::Tensor(t)))
            .collect(),
    )
}

/// burn fixes a device's default float type for the whole process at its first tensor, so one
/// process cannot compute both an f32 and an f64 model on NdArray: whichever came second must
/// be refused as needing a fresh process (the worker pool then runs it in a new worker:
/// `engine/tests/suite/worker_faults.rs`), never computed in the wrong type. The test binary
/// runs f32 models in other tests, in any order, so either of the two may be the refused one.
#[test]
fn one_process_computes_ndarray_in_one_float_type_and_refuses_the_other() {
    let mut be = mutagraph_backends::burn::ndarray();
    let model = |t: &str| {
        mutagraph_ir::text::parse_model(&format!(
            "<ir_version: 8, opset_import: [\"\" : 17]>\ng ({t}[1] x) => ({t}[1] y) {{ y = Cosh (x) }}"
        ))
        .expect("valid text")
        .to_bytes()
    };
    let f32_prep = be.prepare(&model("float"));
    let f64_prep = be.prepare(&model("double"));
    let refused: Vec<_> = [&f32_prep, &f64_prep]
        .into_iter()
        .filter_map(|r| r.as_ref().err())
        .collect();
    assert_eq!(refused.len(), 1, "exactly one float type per process");
    assert!(refused[0].fresh_process, "{}", refused[0]);
    if let Ok(mut p) = f64_prep {
        let x = HostTensor::new(vec![1], Data::F64(vec![100.0]));
        let out = p
            .run(&vec![("x".to_string(), Value::Tensor(x))])
            .expect("run");
        let Value::Tensor(HostTensor {
            data: Data::F64(v), ..
        }) = &out[0].1
        else {
            panic!("not f64: {:?}", out[0].1)
        };
        assert!((v[0] / 100f64.cosh() - 1.0).abs() < 1e-12, "{v:?}");
    }
}

#[test]
fn each_op_stores_its_result_in_the_declared_type() {
    // 1023 + 0.75 = 1023.75 in f32; in f16 (steps of 0.5 there) it rounds to 1024, and the
    // Cast that follows sees 1024, as in a library with f16 tensors.
    let h = |v: f32| HostTensor::new(vec![1], Data::F16(vec![half::f16::from_f32(v)]));
    let y = run_text(
        "g (float16[1] x, float16[1] z) => (int32[1] y) { m = Add (x, z)\n y = Cast <to: int = 6> (m) }",
        vec![("x", h(1023.0)), ("z", h(0.75))],
    );
    assert_eq!(y.data, Data::I32(vec![1024]));
}

#[test]
fn empty_results_of_resize_and_hardmax() {
    // sizes with a zero: an empty output, as ONNX Runtime and ONNX's reference give
    let y = run_text(
        "g (float[1,1,2] x, int64[3] s) => (float[1,0,4] y) { y = Resize (x, \"\", \"\", s) }",
        vec![
            (
                "x",
                HostTensor::new(vec![1, 1, 2], Data::F32(vec![1.0, 2.0])),
            ),
            ("s", HostTensor::new(vec![3], Data::I64(vec![1, 0, 4]))),
        ],
    );
    assert_eq!(y.shape, vec![1, 0, 4]);
    let y = run_text(
        "g (float[0] x) => (float[0] y) { y = Hardmax (x) }",
        vec![("x", HostTensor::new(vec![0], Data::F32(vec![])))],
    );
    assert_eq!(y.shape, vec![0]);
}

#[test]
fn conv3d_with_uneven_pads() {
    // D = 3 ones, kernel 2 ones, one pad before and none after: [0+1, 1+1, 1+1]
    let y = run_text(
        "g (float[1,1,3,1,1] x, float[1,1,2,1,1] w) => (float[1,1,3,1,1] y) \
         { y = Conv <pads: ints = [1, 0, 0, 0, 0, 0]> (x, w) }",
        vec![
            (
                "x",
                HostTensor::new(vec![1, 1, 3, 1, 1], Data::F32(vec![1.0; 3])),
            ),
            (
                "w",
                HostTensor::new(vec![1, 1, 2, 1, 1], Data::F32(vec![1.0; 2])),
            ),
        ],
    );
    close(&y, &[1, 1, 3, 1, 1], &[1.0, 2.0, 2.0]);
}
