//! Runs the f64 reference interpreter on every node test of the ONNX backend test suite.
//!
//! A node test counts as "of its ops" when every op of its model is in the interpreter's op
//! table; over those, at least 95 % must pass (outputs compared with the suite tolerance and the
//! dtype checked), and none may panic. Tests the interpreter answers `unsupported` for (an
//! attribute value or dtype it does not implement) are listed but not counted.
use mutagraph_backends::compare::{CompareOptions, Tolerance, compare};
use mutagraph_backends::reference::Reference;
use mutagraph_backends::suite::{self, Case};
use mutagraph_backends::{Backend, BackendError};
use std::panic::{AssertUnwindSafe, catch_unwind};

enum Verdict {
    Pass,
    Fail(String),
    Unsupported(String),
}

fn run_case(case: &Case) -> Verdict {
    let mut backend = Reference::new();
    let mut prepared = match backend.prepare(&case.model_bytes) {
        Ok(p) => p,
        Err(e) => return from_error(e),
    };
    for (k, set) in case.sets.iter().enumerate() {
        let outs = match prepared.run(&set.inputs) {
            Ok(o) => o,
            Err(e) => return from_error(e),
        };
        if outs.len() != set.outputs.len() {
            return Verdict::Fail(format!(
                "set {k}: {} outputs, expected {}",
                outs.len(),
                set.outputs.len()
            ));
        }
        for ((name, expected), (_, actual)) in set.outputs.iter().zip(&outs) {
            let c = compare(
                expected,
                actual,
                CompareOptions {
                    tolerance: Tolerance::SUITE,
                    check_dtype: true,
                },
            );
            if !c.ok {
                return Verdict::Fail(format!(
                    "set {k} output '{name}': {}",
                    c.reason.unwrap_or_default()
                ));
            }
        }
    }
    Verdict::Pass
}

fn from_error(e: BackendError) -> Verdict {
    if e.unsupported {
        Verdict::Unsupported(e.message)
    } else {
        Verdict::Fail(e.to_string())
    }
}

#[test]
fn reference_passes_the_node_suite() {
    let cases = suite::discover(&suite::root(), &["node"])
        .expect("the ONNX backend test suite is needed: apt-get install -y libonnx-testdata");
    let caps = Reference::new().capabilities();
    let op_count = caps.ops.len();

    let mut pass = 0;
    let mut fails: Vec<(String, String)> = Vec::new();
    let mut panics: Vec<(String, String)> = Vec::new();
    let mut unsupported: Vec<(String, String)> = Vec::new();
    let mut not_in_table = 0;
    let mut load_errors: Vec<(String, String)> = Vec::new();

    for c in &cases {
        let case = match suite::load(c) {
            Ok(case) => case,
            Err(e) => {
                load_errors.push((c.name.clone(), e.to_string()));
                continue;
            }
        };
        if !case.op_types().iter().all(|o| caps.ops.contains_key(o)) {
            not_in_table += 1;
            continue;
        }
        match catch_unwind(AssertUnwindSafe(|| run_case(&case))) {
            Ok(Verdict::Pass) => pass += 1,
            Ok(Verdict::Fail(r)) => fails.push((c.name.clone(), r)),
            Ok(Verdict::Unsupported(r)) => unsupported.push((c.name.clone(), r)),
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panics.push((c.name.clone(), msg));
            }
        }
    }

    let counted = pass + fails.len() + panics.len();
    let rate = if counted == 0 {
        0.0
    } else {
        pass as f64 / counted as f64
    };
    println!(
        "reference interpreter on the node suite ({} tests)",
        cases.len()
    );
    println!("  ops implemented       {op_count}");
    println!("  tests of other ops    {not_in_table}");
    println!("  load errors           {}", load_errors.len());
    println!("  pass                  {pass}");
    println!("  fail                  {}", fails.len());
    println!("  panic                 {}", panics.len());
    println!("  unsupported           {}", unsupported.len());
    println!("  pass rate             {:.2} % of {counted}", rate * 100.0);
    for (n, r) in &fails {
        println!("FAIL {n}: {r}");
    }
    for (n, r) in &panics {
        println!("PANIC {n}: {r}");
    }
    for (n, r) in &unsupported {
        println!("UNSUPPORTED {n}: {r}");
    }
    for (n, r) in &load_errors {
        println!("LOAD ERROR {n}: {r}");
    }

    assert!(op_count >= 100, "only {op_count} ops implemented");
    assert!(panics.is_empty(), "{} tests panicked", panics.len());
    assert!(
        rate >= 0.95,
        "pass rate {:.2} % is below 95 %",
        rate * 100.0
    );
}

/// The other parts of the suite (whole models converted from PyTorch, and the simple models):
/// reported, not held to a pass rate, but the interpreter must never panic on them.
#[test]
fn reference_never_panics_on_the_model_parts() {
    let cases = suite::discover(
        &suite::root(),
        &["pytorch-converted", "pytorch-operator", "simple"],
    )
    .expect("the ONNX backend test suite is needed: apt-get install -y libonnx-testdata");
    let (mut pass, mut fail, mut unsup) = (0, 0, 0);
    let mut panics = Vec::new();
    for c in &cases {
        let Ok(case) = suite::load(c) else {
            continue;
        };
        match catch_unwind(AssertUnwindSafe(|| run_case(&case))) {
            Ok(Verdict::Pass) => pass += 1,
            Ok(Verdict::Fail(r)) => {
                println!("FAIL {}: {r}", c.id());
                fail += 1
            }
            Ok(Verdict::Unsupported(r)) => {
                println!("UNSUPPORTED {}: {r}", c.id());
                unsup += 1
            }
            Err(_) => panics.push(c.id()),
        }
    }
    println!(
        "model parts: {pass} pass, {fail} fail, {unsup} unsupported, {} panics",
        panics.len()
    );
    assert!(panics.is_empty(), "panics on {panics:?}");
}

/// In f64 mode floating-point outputs come back as f64 and agree with the suite's f32 outputs.
#[test]
fn f64_mode_returns_f64_outputs() {
    let cases = suite::discover(&suite::root(), &["node"])
        .expect("the ONNX backend test suite is needed: apt-get install -y libonnx-testdata");
    let c = cases
        .iter()
        .find(|c| c.name == "test_softmax_example")
        .expect("test_softmax_example");
    let case = suite::load(c).unwrap();
    let mut p = Reference::new_f64().prepare(&case.model_bytes).unwrap();
    let set = &case.sets[0];
    let outs = p.run(&set.inputs).unwrap();
    let t = outs[0].1.tensor().unwrap();
    assert_eq!(t.dtype, mutagraph_backends::ir::dtype::DType::F64);
    let cmp = compare(
        &set.outputs[0].1,
        &outs[0].1,
        CompareOptions {
            tolerance: Tolerance::SUITE,
            check_dtype: false,
        },
    );
    assert!(cmp.ok, "{:?}", cmp.reason);
}

#[test]
fn reverse_sequence_refuses_lengths_that_do_not_fit_the_batch() {
    use mutagraph_backends::value::{HostTensor, Value};
    // The input's shape is only known at run time (an Expand to a shape input): one length for
    // a batch of 0 is an invalid model there, as ONNX Runtime says, not a result to compare.
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
               g (float x, int64[3] s) => (float[?,?,?] y) <int64[1] l = {1}> {\n\
                 e = Expand (x, s)\n\
                 y = ReverseSequence (e, l)\n\
               }";
    let model = mutagraph_ir::text::parse_model(src).unwrap().to_bytes();
    let run = |shape: [i64; 3]| {
        let mut r = Reference::new();
        let mut p = r.prepare(&model).unwrap();
        p.run(&vec![
            (
                "x".to_string(),
                Value::Tensor(
                    HostTensor::from_f64s(mutagraph_ir::DType::F32, vec![], &[1.0]).unwrap(),
                ),
            ),
            (
                "s".to_string(),
                Value::Tensor(
                    HostTensor::from_f64s(
                        mutagraph_ir::DType::I64,
                        vec![3],
                        &shape.map(|d| d as f64),
                    )
                    .unwrap(),
                ),
            ),
        ])
    };
    let e = run([1, 0, 0]).expect_err("a batch of 0 with one length");
    assert!(e.to_string().contains("1 entries for a batch of 0"), "{e}");
    let e = run([0, 1, 2]).expect_err("a length beyond an empty time axis");
    assert!(e.to_string().contains("outside 0..=0"), "{e}");
    assert!(run([1, 1, 2]).is_ok());
}
