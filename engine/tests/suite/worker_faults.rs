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
    assert_eq!(r.outcome, Outcome::Timeout { limit_ms: 2000 });
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
