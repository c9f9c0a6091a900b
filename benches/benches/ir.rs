//! Import, export and shape inference on the largest models of the ONNX backend test suite
//! (by bytes and by node count) and on a synthetic 10 000-node chain.
use criterion::{Criterion, criterion_group, criterion_main};
use mutagraph_ir::Model;
use mutagraph_ir::infer::{Options, infer_model};
use std::hint::black_box;

fn bench_model(c: &mut Criterion, label: &str, bytes: Vec<u8>) {
    let model = Model::from_bytes(&bytes).unwrap();
    c.bench_function(&format!("import/{label}"), |b| {
        b.iter(|| Model::from_bytes(black_box(&bytes)).unwrap())
    });
    c.bench_function(&format!("export/{label}"), |b| {
        b.iter(|| black_box(&model).to_bytes())
    });
    c.bench_function(&format!("infer/{label}"), |b| {
        b.iter_batched(
            || model.clone(),
            |mut m| infer_model(&mut m, Options::default()),
            criterion::BatchSize::SmallInput,
        )
    });
}

fn benches(c: &mut Criterion) {
    let suite = mutagraph_tests::suite_dir();
    for (label, rel) in [
        (
            "suite_largest_bytes",
            "pytorch-operator/test_operator_conv/model.onnx",
        ),
        (
            "suite_most_nodes",
            "node/test_layer_normalization_3d_axis0_epsilon_expanded/model.onnx",
        ),
    ] {
        let bytes = std::fs::read(suite.join(rel)).unwrap();
        bench_model(c, label, bytes);
    }
    bench_model(c, "chain10k", mutagraph_benches::unary_chain(10_000));
}

criterion_group!(ir, benches);
criterion_main!(ir);
