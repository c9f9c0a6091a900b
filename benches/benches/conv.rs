//! One 3×3 Conv layer of a mid-sized image network (1×64×112×112 f32 input, 64×64×3×3 weights,
//! pads 1, bias) run by the f64 reference and, when compiled in, by ONNX Runtime on the same
//! model, each on 1 and on 2 threads: how far the ground truth lags a library on a real layer
//! size.
//!
//! Run with `cargo bench -p mutagraph-benches --bench conv`.
use criterion::{Criterion, criterion_group, criterion_main};
use mutagraph_backends::catalog::{self, Config};
use mutagraph_backends::{Data, HostTensor, Value};
use mutagraph_ir::pb;
use mutagraph_ir::{DType, TensorType, ValueType};
use std::hint::black_box;
use std::time::Duration;

const X: [usize; 4] = [1, 64, 112, 112];
const W: [usize; 4] = [64, 64, 3, 3];

/// Deterministic values in [-1, 1) (a 64-bit LCG; the benchmark needs no better).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn conv_model() -> Vec<u8> {
    let dims = |d: &[usize]| d.iter().map(|&v| v as i64).collect::<Vec<_>>();
    let vi = |name: &str, d: &[usize]| pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(ValueType::Tensor(TensorType::fixed(DType::F32, &dims(d))).to_proto()),
        ..Default::default()
    };
    let w = HostTensor::new(
        W.to_vec(),
        Data::F32(
            values(W.iter().product(), 2)
                .iter()
                .map(|v| v * 0.05)
                .collect(),
        ),
    )
    .to_proto("w");
    let b = HostTensor::new(vec![W[0]], Data::F32(values(W[0], 3))).to_proto("b");
    // AttributeProto type 7: INTS.
    let ints = |name: &str, v: &[i64]| pb::AttributeProto {
        name: Some(name.into()),
        r#type: Some(7),
        ints: v.to_vec(),
        ..Default::default()
    };
    let node = pb::NodeProto {
        input: vec!["x".into(), "w".into(), "b".into()],
        output: vec!["y".into()],
        op_type: Some("Conv".into()),
        attribute: vec![ints("kernel_shape", &[3, 3]), ints("pads", &[1, 1, 1, 1])],
        ..Default::default()
    };
    mutagraph_benches::model_bytes(pb::GraphProto {
        name: Some("conv".into()),
        node: vec![node],
        initializer: vec![w, b],
        input: vec![vi("x", &X)],
        output: vec![vi("y", &[1, 64, 112, 112])],
        ..Default::default()
    })
}

fn conv(c: &mut Criterion) {
    let model = conv_model();
    let inputs = vec![(
        "x".to_string(),
        Value::Tensor(HostTensor::new(
            X.to_vec(),
            Data::F32(values(X.iter().product(), 1)),
        )),
    )];
    let mut g = c.benchmark_group("conv_1x64x112x112_k3x3");
    // The reference took seconds per run before its GEMM lowering: few samples, long window.
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    // One thread (what a campaign's workers use) and two (`--threads 2`, this machine's
    // cores), the same count for both backends.
    for threads in [1, 2] {
        for name in ["reference", "ort"] {
            if !catalog::is_compiled(name) {
                eprintln!("{name}: not compiled in, skipped");
                continue;
            }
            let config = Config {
                threads: Some(threads),
                ..Config::default()
            };
            let mut backend = match catalog::create(name, &config) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("{name}: {e}, skipped");
                    continue;
                }
            };
            let mut prepared = backend.prepare(&model).expect("prepare");
            g.bench_function(format!("{name}/{threads}-thread"), |bench| {
                bench.iter(|| black_box(prepared.run(black_box(&inputs)).expect("run")))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, conv);
criterion_main!(benches);
