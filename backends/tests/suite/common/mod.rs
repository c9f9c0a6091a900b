//! The harness shared by the in-process suite tests of ONNX Runtime and tract: run a backend on
//! every case (panics caught), tally per part, print the cases that did not pass.
#![allow(dead_code)] // each test crate uses its own subset

use mutagraph_backends::backend::{Backend, Prepared};
use mutagraph_backends::catalog::{self, Config};
use mutagraph_backends::compare::{CompareOptions, compare};
use mutagraph_backends::ir::dtype::DType;
use mutagraph_backends::ir::model::Model;
use mutagraph_backends::ir::pb;
use mutagraph_backends::suite::{self, Case};
use mutagraph_backends::{Data, HostTensor, Value};
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// How one case ended.
#[derive(Debug)]
pub enum Outcome {
    Pass,
    Fail(String),
    Unsupported(String),
    Crash(String),
}

pub fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

pub fn run_case(b: &mut dyn Backend, case: &Case) -> Outcome {
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
pub struct Tally {
    pub pass: usize,
    pub fail: usize,
    pub unsupported: usize,
    pub crash: usize,
}

impl Tally {
    pub fn total(&self) -> usize {
        self.pass + self.fail + self.unsupported + self.crash
    }
}

pub fn create(name: &str) -> Box<dyn Backend> {
    match catalog::create(name, &Config::default()) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    }
}

pub fn cases() -> Vec<Case> {
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
pub fn run_backend(name: &str, cases: &[Case]) -> Tally {
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
/// A model with one Identity node per input, of the given element types.
pub fn identity_model(dtypes: &[DType]) -> Vec<u8> {
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
    let bytes = m.encode_to_vec();
    Model::from_bytes(&bytes).expect("the identity model imports");
    bytes
}

/// Tensors of many element types for a round trip through [`identity_model`]: f16 extremes,
/// booleans, strings, i8 bounds, a u64 scalar, an empty f64 tensor and u16 bounds; with
/// `with_bf16`, two bf16 values as well (after the i8 ones).
pub fn round_trip_values(with_bf16: bool) -> Vec<HostTensor> {
    use half::{bf16, f16};
    let mut values = vec![
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
    ];
    if with_bf16 {
        values.push(HostTensor::new(
            vec![2],
            Data::BF16(vec![bf16::from_f32(3.0), bf16::MAX]),
        ));
    }
    values.extend([
        HostTensor::new(vec![], Data::U64(vec![u64::MAX])),
        HostTensor::new(vec![0, 3], Data::F64(vec![])),
        HostTensor::new(vec![2], Data::U16(vec![0, 65535])),
    ]);
    values
}

/// Runs `p`, the [`identity_model`] of `values`' element types, on `values` (as x0, x1, ...)
/// and asserts that every output (y0, y1, ...) equals its input; `name` labels the failures.
pub fn assert_round_trip(p: &mut dyn Prepared, values: &[HostTensor], name: &str) {
    let inputs: Vec<(String, Value)> = values
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("x{i}"), Value::Tensor(t.clone())))
        .collect();
    let out = p.run(&inputs).unwrap();
    assert_eq!(out.len(), values.len());
    for (i, (t, (n, v))) in values.iter().zip(&out).enumerate() {
        assert_eq!(n, &format!("y{i}"));
        assert_eq!(v, &Value::Tensor(t.clone()), "{name}: {}", t.dtype);
    }
}

pub fn silence_panics() {
    // Crashes are counted, and their messages listed with the cases; the default hook would
    // print each one again with a backtrace hint.
    std::panic::set_hook(Box::new(|_| {}));
}
