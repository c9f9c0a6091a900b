//! tract (`tract`, `tract-opt`) on the whole ONNX backend test suite, in process. Each case runs
//! under `catch_unwind`: a panic is counted as a crash.
//!
//! Needs the suite (`apt-get install -y libonnx-testdata`); without it the tests fail and say so.
//!
//! Run with `--nocapture` to see the figures and every test that does not pass.
#![cfg(feature = "tract")]

use crate::common;

use common::{
    assert_round_trip, cases, create, identity_model, round_trip_values, run_backend,
    silence_panics,
};
use mutagraph_backends::ir::dtype::DType;
use mutagraph_backends::suite;
use mutagraph_backends::{Data, HostTensor, Value};
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

#[test]
fn dtypes_round_trip_through_identity() {
    let values = round_trip_values(false);
    let dtypes: Vec<DType> = values.iter().map(|t| t.dtype).collect();
    let model = identity_model(&dtypes);
    for name in ["tract", "tract-opt"] {
        let mut b = create(name);
        let mut p = b.prepare(&model).unwrap();
        // Twice: the second run takes the cached plan.
        for _ in 0..2 {
            assert_round_trip(p.as_mut(), &values, name);
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
