//! Worker isolation under fault injection: the `fault` backend aborts, segfaults, panics,
//! hangs, exits and allocates without bound inside real worker processes (the `mutagraph`
//! binary); the pool must report each as the right outcome and keep serving afterwards.
use crate::common::text_model;
use mutagraph_backends::value::{Data, HostTensor, Value};
use mutagraph_backends::worker::{Outcome, Pool, PoolOptions};
use mutagraph_ir::pb;
use prost::Message;
use std::path::PathBuf;
use std::time::Duration;

/// A model `y = fault(x)`: one node of the fault domain (or an Identity when `fault` is None).
fn model(fault: Option<&str>) -> Vec<u8> {
    let f32_vec = |name: &str| pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: Some(1),
                shape: Some(pb::TensorShapeProto {
                    dim: vec![pb::tensor_shape_proto::Dimension {
                        value: Some(pb::tensor_shape_proto::dimension::Value::DimValue(3)),
                        ..Default::default()
                    }],
                }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let node = pb::NodeProto {
        input: vec!["x".into()],
        output: vec!["y".into()],
        op_type: Some(fault.unwrap_or("Identity").into()),
        domain: fault.map(|_| mutagraph_backends::fault::DOMAIN.to_string()),
        ..Default::default()
    };
    let mut opsets = vec![pb::OperatorSetIdProto {
        domain: Some(String::new()),
        version: Some(17),
    }];
    if fault.is_some() {
        opsets.push(pb::OperatorSetIdProto {
            domain: Some(mutagraph_backends::fault::DOMAIN.into()),
            version: Some(1),
        });
    }
    pb::ModelProto {
        ir_version: Some(8),
        opset_import: opsets,
        graph: Some(pb::GraphProto {
            name: Some("fault".into()),
            node: vec![node],
            input: vec![f32_vec("x")],
            output: vec![f32_vec("y")],
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

fn inputs() -> Vec<(String, Value)> {
    vec![(
        "x".into(),
        Value::Tensor(HostTensor::new(vec![3], Data::F32(vec![1.0, -2.0, 3.5]))),
    )]
}

fn pool() -> Pool {
    let mut o = PoolOptions::new(PathBuf::from(env!("CARGO_BIN_EXE_mutagraph")));
    o.timeout = Duration::from_secs(2);
    o.mem_limit = 768 << 20;
    Pool::new(o)
}

/// After any fault the pool must serve a normal run again, with a correct result.
fn assert_serves(p: &mut Pool) {
    let r = p.run("fault", &model(None), &inputs()).unwrap();
    match &r.outcome {
        Outcome::Ok(out) => {
            assert_eq!(out.len(), 1);
            assert_eq!(out[0].0, "y");
            assert_eq!(out[0].1, inputs()[0].1);
        }
        o => panic!("identity run failed after a fault: {o:?}"),
    }
}

#[test]
fn identity_runs_and_the_worker_stays_warm() {
    let mut p = pool();
    assert_serves(&mut p);
    let pid = p.worker_pid("fault").unwrap();
    let r = p.run("fault", &model(None), &inputs()).unwrap();
    assert!(r.cached, "the same model must be reused by the warm worker");
    assert_eq!(p.worker_pid("fault"), Some(pid), "worker was restarted");
    assert_eq!(p.spawns("fault"), 1);
    // The step file's name is gone once the worker started: an engine killed now leaves none.
    let step = p.step_file("fault").unwrap();
    assert!(step.starts_with(std::env::temp_dir()), "{step:?}");
    assert!(!step.exists(), "{step:?} outlives the worker's start");
    assert!(r.peak_rss > 0, "peak memory is measured");
    assert!(r.wall_ms > 0.0);
}

#[test]
fn abort_is_a_crash_with_sigabrt() {
    let mut p = pool();
    assert_serves(&mut p);
    let r = p.run("fault", &model(Some("Abort")), &inputs()).unwrap();
    assert!(
        matches!(
            r.outcome,
            Outcome::Crash {
                signal: Some(6),
                ..
            }
        ),
        "{:?}",
        r.outcome
    );
    assert_serves(&mut p);
    assert_eq!(p.spawns("fault"), 2);
}

#[test]
fn segfault_is_a_crash_with_sigsegv() {
    let mut p = pool();
    let r = p.run("fault", &model(Some("Segfault")), &inputs()).unwrap();
    assert!(
        matches!(
            r.outcome,
            Outcome::Crash {
                signal: Some(11),
                ..
            }
        ),
        "{:?}",
        r.outcome
    );
    assert_serves(&mut p);
}

#[test]
fn panic_is_a_crash_with_its_message_and_the_worker_survives() {
    let mut p = pool();
    assert_serves(&mut p);
    let pid = p.worker_pid("fault");
    let r = p.run("fault", &model(Some("Panic")), &inputs()).unwrap();
    match &r.outcome {
        Outcome::Crash {
            signal: None,
            exit_code: None,
            message,
        } => assert!(message.contains("injected panic"), "{message}"),
        o => panic!("{o:?}"),
    }
    assert_eq!(
        p.worker_pid("fault"),
        pid,
        "a caught panic must not cost a respawn"
    );
    assert_serves(&mut p);
}

#[test]
fn hang_is_a_timeout_and_the_worker_is_replaced() {
    let mut p = pool();
    let r = p.run("fault", &model(Some("Hang")), &inputs()).unwrap();
    // The worker was killed while running the model, and the outcome says so.
    assert_eq!(
        r.outcome,
        Outcome::Timeout {
            limit_ms: 2000,
            step: Some(mutagraph_backends::worker::context::RUNNING.into()),
        }
    );
    assert!(r.wall_ms >= 2000.0 && r.wall_ms < 10_000.0, "{}", r.wall_ms);
    assert_serves(&mut p);
    assert_eq!(p.spawns("fault"), 2);
}

#[test]
fn unbounded_allocation_is_out_of_memory() {
    let mut o = PoolOptions::new(PathBuf::from(env!("CARGO_BIN_EXE_mutagraph")));
    o.timeout = Duration::from_secs(30);
    o.mem_limit = 768 << 20;
    let mut p = Pool::new(o);
    let r = p.run("fault", &model(Some("Alloc")), &inputs()).unwrap();
    assert!(
        matches!(r.outcome, Outcome::OutOfMemory { .. }),
        "{:?}",
        r.outcome
    );
    assert!(
        r.peak_rss > 768 << 20,
        "peak {} is above the cap",
        r.peak_rss
    );
    assert_serves(&mut p);
}

#[test]
fn refused_huge_allocation_is_out_of_memory() {
    // A time limit far above the run's own: on a loaded 2-core machine the worker's start
    // and the failed allocation's report have taken more than 2 s.
    let mut o = PoolOptions::new(PathBuf::from(env!("CARGO_BIN_EXE_mutagraph")));
    o.timeout = Duration::from_secs(30);
    o.mem_limit = 768 << 20;
    let mut p = Pool::new(o);
    let r = p
        .run("fault", &model(Some("AllocHuge")), &inputs())
        .unwrap();
    match &r.outcome {
        Outcome::OutOfMemory { message, .. } => {
            assert!(message.contains("memory allocation"), "{:?}", r.outcome)
        }
        o => panic!("{o:?}"),
    }
    assert_serves(&mut p);
}

#[test]
fn exit_and_errors_are_reported_as_such() {
    let mut p = pool();
    let r = p.run("fault", &model(Some("Exit")), &inputs()).unwrap();
    assert!(
        matches!(
            r.outcome,
            Outcome::Crash {
                signal: None,
                exit_code: Some(3),
                ..
            }
        ),
        "{:?}",
        r.outcome
    );
    let r = p.run("fault", &model(Some("Error")), &inputs()).unwrap();
    assert!(
        matches!(&r.outcome, Outcome::Error { stage: mutagraph_backends::Stage::Run, message } if message.contains("injected")),
        "{:?}",
        r.outcome
    );
    let r = p
        .run("fault", &model(Some("Unsupported")), &inputs())
        .unwrap();
    assert!(
        matches!(r.outcome, Outcome::Unsupported { .. }),
        "{:?}",
        r.outcome
    );
    assert_serves(&mut p);
}

#[test]
fn every_fault_in_one_pool_in_a_row() {
    let mut p = pool();
    for f in [
        "Abort",
        "Panic",
        "Segfault",
        "Hang",
        "Alloc",
        "AllocHuge",
        "Exit",
    ] {
        let r = p.run("fault", &model(Some(f)), &inputs()).unwrap();
        assert_ne!(r.outcome.status(), "ok", "{f}");
        assert_serves(&mut p);
    }
}

#[test]
fn unknown_backend_is_an_init_error_not_a_crash() {
    let mut p = pool();
    let e = p
        .run("no-such-backend", &model(None), &inputs())
        .unwrap_err();
    assert!(e.to_string().contains("unknown backend"), "{e}");
}

#[test]
fn missing_worker_executable_is_a_spawn_error() {
    let mut p = Pool::new(PoolOptions::new(PathBuf::from("/nonexistent/mutagraph")));
    let e = p.run("fault", &model(None), &inputs()).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/mutagraph"), "{e}");
}

/// burn fixes a device's float type for the whole process at its first tensor: a worker that
/// ran an f32 model would compute an f64 model in f32 (cosh(100) ≈ 1.3e43 overflows to +inf).
/// The pool must run such a model in a fresh worker and get the f64 result, and go back to f32.
#[test]
fn burn_ndarray_computes_f64_after_f32_in_a_fresh_worker() {
    let mut p = pool();
    let f32_model = text_model("g (float[1] x) => (float[1] y) { y = Cosh (x) }");
    let f64_model = text_model("g (double[1] x) => (double[1] y) { y = Cosh (x) }");
    let x32 = vec![(
        "x".to_string(),
        Value::Tensor(HostTensor::new(vec![1], Data::F32(vec![1.0]))),
    )];
    let x64 = vec![(
        "x".to_string(),
        Value::Tensor(HostTensor::new(vec![1], Data::F64(vec![100.0]))),
    )];
    let first = p.run("burn-ndarray", &f32_model, &x32).unwrap();
    assert!(
        matches!(first.outcome, Outcome::Ok(_)),
        "{:?}",
        first.outcome
    );
    let r = p.run("burn-ndarray", &f64_model, &x64).unwrap();
    let Outcome::Ok(out) = &r.outcome else {
        panic!("the f64 model failed: {:?}", r.outcome)
    };
    let Value::Tensor(HostTensor {
        data: Data::F64(v), ..
    }) = &out[0].1
    else {
        panic!("not an f64 tensor: {:?}", out[0].1)
    };
    assert!(
        v[0].is_finite() && (v[0] / 100f64.cosh() - 1.0).abs() < 1e-12,
        "cosh(100) in f64: {v:?}"
    );
    assert_eq!(p.fresh_restarts(), 1, "one run repeated in a fresh worker");
    assert_eq!(p.spawns("burn-ndarray"), 2);
    // And back: the f64 worker cannot run the f32 model, a third worker does.
    let again = p.run("burn-ndarray", &f32_model, &x32).unwrap();
    let Outcome::Ok(out) = &again.outcome else {
        panic!(
            "the f32 model failed after the f64 one: {:?}",
            again.outcome
        )
    };
    assert!(matches!(&out[0].1, Value::Tensor(t) if matches!(t.data, Data::F32(_))));
    assert_eq!(p.fresh_restarts(), 2);
}

/// A pool whose `fault` workers compute models without a fault node as the reference does.
fn computing_pool() -> Pool {
    let mut o = PoolOptions::new(PathBuf::from(env!("CARGO_BIN_EXE_mutagraph")));
    o.timeout = Duration::from_secs(30);
    o.env = vec![(
        mutagraph_backends::fault::COMPUTE.to_string(),
        "reference".to_string(),
    )];
    Pool::new(o)
}

/// `Relu` then `Neg`, on inputs with a negative element.
fn two_nodes() -> (Vec<u8>, Vec<(String, Value)>) {
    let m = text_model("g (float[3] x) => (float[3] z) { y = Relu (x)\n z = Neg (y) }");
    (m, inputs())
}

#[test]
fn a_device_error_ends_the_worker_and_later_runs_get_a_fresh_one() {
    let mut p = computing_pool();
    let r = p
        .run("fault", &model(Some("DeviceError")), &inputs())
        .unwrap();
    assert!(
        matches!(&r.outcome, Outcome::Error { message, .. } if message.contains("device error")),
        "{:?}",
        r.outcome
    );
    assert_eq!(p.poisoned(), 1);
    // The next run is in a fresh worker, on a sound device: the reference's values.
    let (m, ins) = two_nodes();
    let r = p.run("fault", &m, &ins).unwrap();
    let Outcome::Ok(out) = &r.outcome else {
        panic!("{:?}", r.outcome)
    };
    assert_eq!(
        out[0].1,
        Value::Tensor(HostTensor::new(vec![3], Data::F32(vec![-1.0, -0.0, -3.5])))
    );
    assert_eq!(p.spawns("fault"), 2);
}

/// Runs `two_nodes` on the reference and on `fault` after a silent `Poison` in its worker,
/// and triages what the oracles find, with the blame checked or not.
fn triage_after_poison(check_blame: bool) -> Vec<mutagraph_oracles::Triaged> {
    let mut p = computing_pool();
    let r = p.run("fault", &model(Some("Poison")), &inputs()).unwrap();
    assert!(r.outcome.outputs().is_some(), "{:?}", r.outcome);
    let (m, ins) = two_nodes();
    let runs = mutagraph_oracles::MutantRuns {
        runs: vec![
            p.run("reference", &m, &ins).unwrap(),
            p.run("fault", &m, &ins).unwrap(),
        ],
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let backends = ["reference".to_string(), "fault".to_string()];
    let mut triage = mutagraph_oracles::Triage::new(
        &backends,
        mutagraph_backends::compare::Tolerance::APPROXIMATE,
    );
    triage.check_blame = check_blame;
    triage.judge(&mut p, &m, &ins, &runs)
}

#[test]
fn a_finding_only_a_poisoned_worker_shows_is_not_filed() {
    use mutagraph_oracles::{Blame, Verdict};
    // The poisoned worker computes every value wrong: localization blames the Relu.
    let unchecked = triage_after_poison(false);
    assert!(
        unchecked
            .iter()
            .any(|t| t.verdict == Verdict::Report && t.finding.op_type() == Some("Relu")),
        "without the check the poisoned worker's values are a finding: {unchecked:?}"
    );
    // The Relu alone, fed the values that reached it, in a fresh worker: right. Not filed.
    let checked = triage_after_poison(true);
    assert!(!checked.is_empty());
    for t in &checked {
        assert!(
            matches!(t.verdict, Verdict::Unlocalized(_)),
            "{:?}: {:?}",
            t.verdict,
            t.finding
        );
        assert!(
            matches!(t.finding.blame, Some(Blame::NotShown { .. })),
            "{:?}",
            t.finding.blame
        );
    }
}

#[test]
fn a_gpu_backends_device_error_panic_poisons_its_worker_and_a_cpu_backends_does_not() {
    use mutagraph_backends::catalog::device_error;
    let cuda = "CUDA_ERROR_INVALID_VALUE: The server is in an invalid state";
    assert!(device_error("burn-cuda", cuda));
    assert!(device_error("burn-wgpu", "wgpu: DeviceLost"));
    assert!(
        !device_error("burn-ndarray", cuda),
        "no device on a CPU backend"
    );
    assert!(!device_error(
        "burn-cuda",
        "index out of bounds: the len is 3"
    ));
}
