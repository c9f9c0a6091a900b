//! Backends: prepare + run of a small model on each backend in-process, and the overhead of a
//! worker round trip (engine → worker process → engine) on an identity model.
//!
//! Run with `cargo bench -p mutagraph-benches --bench backends`.
use criterion::{Criterion, criterion_group, criterion_main};
use mutagraph_backends::catalog::{self, Config};
use mutagraph_backends::suite;
use mutagraph_backends::worker::{Pool, PoolOptions};
use std::hint::black_box;
use std::path::PathBuf;

/// A small conv net layer from the suite (Conv 1x3x... with weights), with its recorded inputs.
fn small_model() -> suite::Case {
    let refs = suite::discover(&suite::root(), &["pytorch-operator"]).expect("suite");
    let r = refs
        .into_iter()
        .find(|r| r.name == "test_operator_conv")
        .expect("test_operator_conv in the suite");
    suite::load(&r).expect("load")
}

fn prepare_and_run(c: &mut Criterion) {
    let case = small_model();
    let inputs = case.sets[0].inputs.clone();
    let mut g = c.benchmark_group("prepare_run_conv");
    for name in catalog::default_set() {
        let mut b = match catalog::create(name, &Config::default()) {
            Ok(b) => b,
            Err(e) => panic!("{name}: {e}"),
        };
        g.bench_function(name, |bench| {
            bench.iter(|| {
                let mut p = b.prepare(black_box(&case.model_bytes)).expect("prepare");
                black_box(p.run(&inputs).expect("run"))
            })
        });
        let mut p = b.prepare(&case.model_bytes).expect("prepare");
        g.bench_function(format!("{name}/run_only"), |bench| {
            bench.iter(|| black_box(p.run(&inputs).expect("run")))
        });
    }
    g.finish();
}

fn worker_round_trip(c: &mut Criterion) {
    let case = small_model();
    let inputs = case.sets[0].inputs.clone();
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_bench-worker"));
    let mut pool = Pool::new(PoolOptions::new(exe));
    let mut g = c.benchmark_group("worker_round_trip");
    // The fault backend in identity mode: the cost is the protocol and the process hop.
    let identity = identity_model();
    let x = vec![inputs[0].clone()];
    g.bench_function("fault_identity_640k_floats", |bench| {
        bench.iter(|| black_box(pool.run("fault", &identity, &x).expect("run")))
    });
    let small = vec![(
        "x".to_string(),
        mutagraph_backends::Value::Tensor(mutagraph_backends::HostTensor::new(
            vec![3],
            mutagraph_backends::Data::F32(vec![1.0, 2.0, 3.0]),
        )),
    )];
    g.bench_function("fault_identity_3_floats", |bench| {
        bench.iter(|| black_box(pool.run("fault", &identity, &small).expect("run")))
    });
    g.bench_function("reference_conv_cached", |bench| {
        bench.iter(|| {
            black_box(
                pool.run("reference", &case.model_bytes, &inputs)
                    .expect("run"),
            )
        })
    });
    g.finish();
}

fn identity_model() -> Vec<u8> {
    use mutagraph_ir::pb;
    let vi = |n: &str| pb::ValueInfoProto {
        name: Some(n.into()),
        ..Default::default()
    };
    mutagraph_benches::model_bytes(pb::GraphProto {
        node: vec![pb::NodeProto {
            input: vec!["x".into()],
            output: vec!["y".into()],
            op_type: Some("Identity".into()),
            ..Default::default()
        }],
        input: vec![vi("x")],
        output: vec![vi("y")],
        ..Default::default()
    })
}

criterion_group!(benches, prepare_and_run, worker_round_trip);
criterion_main!(benches);
