//! tract (`tract`, `tract-opt`) on the whole ONNX backend test suite, in process. Each case runs
//! under `catch_unwind`: a panic is counted as a crash.
//!
//! Needs the suite (`apt-get install -y libonnx-testdata`); without it the tests fail and say so.
//!
//! Run with `--nocapture` to see the figures and every test that does not pass.
#![cfg(feature = "tract")]

use mutagraph_backends::backend::Backend;
use mutagraph_backends::catalog::{self, Config};
use mutagraph_backends::compare::{CompareOptions, compare};
use mutagraph_backends::ir::dtype::DType;
use mutagraph_backends::ir::pb;
use mutagraph_backends::suite::{self, Case};
use mutagraph_backends::{Data, HostTensor, Value};
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// How one case ended.
#[derive(Debug)]
enum Outcome {
    Pass,
    Fail(String),
    Unsupported(String),
    Crash(String),
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

fn run_case(b: &mut dyn Backend, case: &Case) -> Outcome {
    let r = catch_unwind(AssertUnwindSafe(|| -> Outcome {
        let mut p = match b.prepare(&case.model_bytes) {
            Ok(p) => p,
            Err(e) if e.unsupported => return Outcome::Unsupported(e.to_string()),
            Err(e) => return Outcome::Fail(e.to_string()),
        };
        for (k, set) in case.sets.iter().enumerate() {
            let got = match p.run(&set.inputs) {
                Ok(v) => v,
                Err(e) if e.unsupported => return Outcome::Unsupported(e.to_string()),
                Err(e) => return Outcome::Fail(e.to_string()),
            };
            for (name, expected) in &set.outputs {
                let Some((_, actual)) = got.iter().find(|(n, _)| n == name) else {
                    return Outcome::Fail(format!("set {k}: no output '{name}'"));
                };
                let c = compare(expected, actual, CompareOptions::default());
                if !c.ok {
                    return Outcome::Fail(format!(
                        "set {k}, output '{name}': {}",
                        c.reason.unwrap_or_default()
                    ));
                }
            }
        }
        Outcome::Pass
    }));
    r.unwrap_or_else(|p| Outcome::Crash(panic_text(p)))
}

#[derive(Default)]
struct Tally {
    pass: usize,
    fail: usize,
    unsupported: usize,
    crash: usize,
}

impl Tally {
    fn total(&self) -> usize {
        self.pass + self.fail + self.unsupported + self.crash
    }
}

fn create(name: &str) -> Box<dyn Backend> {
    match catalog::create(name, &Config::default()) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    }
}

fn cases() -> Vec<Case> {
    let refs = match suite::discover(&suite::root(), suite::PARTS) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    refs.iter()
        .map(|r| suite::load(r).unwrap_or_else(|e| panic!("{}: {e}", r.id())))
        .collect()
}

/// Runs `name` on every case, prints the figures and the cases that did not pass, and returns
/// the whole-suite tally.
fn run_backend(name: &str, cases: &[Case]) -> Tally {
    let mut b = create(name);
    let mut by_part: BTreeMap<String, Tally> = BTreeMap::new();
    let mut all = Tally::default();
    let mut notes = Vec::new();
    for case in cases {
        let o = run_case(b.as_mut(), case);
        let t = by_part.entry(case.case.part.clone()).or_default();
        let (tag, why) = match o {
            Outcome::Pass => {
                t.pass += 1;
                all.pass += 1;
                continue;
            }
            Outcome::Fail(m) => {
                t.fail += 1;
                all.fail += 1;
                ("FAIL", m)
            }
            Outcome::Unsupported(m) => {
                t.unsupported += 1;
                all.unsupported += 1;
                ("UNSUPPORTED", m)
            }
            Outcome::Crash(m) => {
                t.crash += 1;
                all.crash += 1;
                ("CRASH", m)
            }
        };
        let mut why = why.replace('\n', " ");
        if why.len() > 300 {
            let mut cut = 300;
            while !why.is_char_boundary(cut) {
                cut -= 1;
            }
            why.truncate(cut);
            why.push('…');
        }
        notes.push(format!("  {tag:<11} {}: {why}", case.case.id()));
    }
    println!("== {name} {} ==", b.version());
    for (part, t) in &by_part {
        println!(
            "  {part:<18} pass {:>4}  fail {:>3}  unsupported {:>3}  crash {:>3}  (of {})",
            t.pass,
            t.fail,
            t.unsupported,
            t.crash,
            t.total()
        );
    }
    println!(
        "  {:<18} pass {:>4}  fail {:>3}  unsupported {:>3}  crash {:>3}  (of {}) = {:.1} %",
        "all",
        all.pass,
        all.fail,
        all.unsupported,
        all.crash,
        all.total(),
        100.0 * all.pass as f64 / all.total().max(1) as f64
    );
    for n in notes {
        println!("{n}");
    }
    all
}

fn silence_panics() {
    // Crashes are counted, and their messages listed with the cases; the default hook would
    // print each one again with a backtrace hint.
    std::panic::set_hook(Box::new(|_| {}));
}

#[test]
fn tract_on_the_onnx_backend_suite() {
    let cases = cases();
    assert_eq!(
        cases.len() + suite::NONDETERMINISTIC.len(),
        1072,
        "the suite should hold 1072 cases"
    );
    silence_panics();
    let plain = run_backend("tract", &cases);
    let opt = run_backend("tract-opt", &cases);
    let _ = std::panic::take_hook();
    for (name, t) in [("tract", &plain), ("tract-opt", &opt)] {
        assert!(
            t.pass * 2 >= t.total(),
            "{name} passes only {} of {}",
            t.pass,
            t.total()
        );
    }
}

#[test]
fn unsupported_ops_are_unsupported() {
    // tract has no Loop.
    let refs = suite::discover(&suite::root(), &["node"]).unwrap_or_else(|e| panic!("{e}"));
    let r = refs
        .iter()
        .find(|r| r.name == "test_loop11")
        .expect("node/test_loop11 is in the suite");
    let case = suite::load(r).unwrap();
    for name in ["tract", "tract-opt"] {
        let mut b = create(name);
        let e = match b.prepare(&case.model_bytes) {
            Err(e) => e,
            Ok(mut p) => p.run(&case.sets[0].inputs).expect_err("Loop ran on tract"),
        };
        assert!(e.unsupported, "{name}: {e}");
        assert!(e.message.contains("Loop"), "{name}: {e}");
    }
}

/// A model with one Identity node per input, of the given element types.
fn identity_model(dtypes: &[DType]) -> Vec<u8> {
    let tensor_type = |dt: DType| pb::TypeProto {
        value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
            elem_type: Some(dt.code()),
            shape: None,
        })),
        ..Default::default()
    };
    let mut g = pb::GraphProto {
        name: Some("identity".into()),
        ..Default::default()
    };
    for (i, &dt) in dtypes.iter().enumerate() {
        g.input.push(pb::ValueInfoProto {
            name: Some(format!("x{i}")),
            r#type: Some(tensor_type(dt)),
            ..Default::default()
        });
        g.output.push(pb::ValueInfoProto {
            name: Some(format!("y{i}")),
            r#type: Some(tensor_type(dt)),
            ..Default::default()
        });
        g.node.push(pb::NodeProto {
            op_type: Some("Identity".into()),
            input: vec![format!("x{i}")],
            output: vec![format!("y{i}")],
            ..Default::default()
        });
    }
    let m = pb::ModelProto {
        ir_version: Some(8),
        opset_import: vec![pb::OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(g),
        ..Default::default()
    };
    use prost::Message;
    m.encode_to_vec()
}

#[test]
fn dtypes_round_trip_through_identity() {
    use half::f16;
    let values = [
        HostTensor::new(
            vec![2, 2],
            Data::F16(
                [1.5, -0.0, 65504.0, f32::INFINITY]
                    .map(f16::from_f32)
                    .to_vec(),
            ),
        ),
        HostTensor::new(vec![3], Data::Bool(vec![true, false, true])),
        HostTensor::new(
            vec![2],
            Data::String(vec![b"hello".to_vec(), "wörld".as_bytes().to_vec()]),
        ),
        HostTensor::new(vec![4], Data::I8(vec![-128, -1, 0, 127])),
        HostTensor::new(vec![], Data::U64(vec![u64::MAX])),
        HostTensor::new(vec![0, 3], Data::F64(vec![])),
        HostTensor::new(vec![2], Data::U16(vec![0, 65535])),
    ];
    let dtypes: Vec<DType> = values.iter().map(|t| t.dtype).collect();
    let model = identity_model(&dtypes);
    for name in ["tract", "tract-opt"] {
        let mut b = create(name);
        let mut p = b.prepare(&model).unwrap();
        let inputs: Vec<(String, Value)> = values
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("x{i}"), Value::Tensor(t.clone())))
            .collect();
        // Twice: the second run takes the cached plan.
        for _ in 0..2 {
            let out = p.run(&inputs).unwrap();
            assert_eq!(out.len(), values.len());
            for (i, (t, (n, v))) in values.iter().zip(&out).enumerate() {
                assert_eq!(n, &format!("y{i}"));
                assert_eq!(v, &Value::Tensor(t.clone()), "{name}: {}", t.dtype);
            }
        }
        // bf16 is not a tract type.
        let bf = identity_model(&[DType::BF16]);
        let e = match b.prepare(&bf) {
            Err(e) => e,
            Ok(mut p) => p
                .run(&vec![(
                    "x0".into(),
                    Value::Tensor(HostTensor::new(vec![1], Data::BF16(vec![half::bf16::ONE]))),
                )])
                .expect_err("bf16 ran on tract"),
        };
        assert!(e.unsupported, "{name}: {e}");
    }
}
