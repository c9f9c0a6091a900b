//! `mutagraph inspect` on generated chains of 1 000, 10 000 and 100 000 ops: what the command
//! does, from the file to the text it prints (read, decode, import, solve the input shapes,
//! infer, validate, summarize, render). Its time must grow linearly with the graph.
//!
//! Two chains: `unary_chain_N`, unary ops without weights (the benches library's), and
//! `conv_chain_N`, `gen-chain`'s (`benches/src/bin/gen_chain.rs`): `Conv 3×3 →
//! BatchNormalization → Relu → Conv 1×1 → Relu` repeated on a `1×8×8×8` tensor, then a
//! `GlobalAveragePool`, with its weights as initializers (1.4 per op, 65 MB at 100 000 ops),
//! as exporters write networks; written here straight as protobuf (the graph builder
//! validates as it goes and takes seconds for the largest chain).
use criterion::{Criterion, criterion_group, criterion_main};
use mutagraph_ir::solve::Fixed;
use mutagraph_ir::{DType, TensorType, ValueType, pb};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn tensor(name: &str, dims: &[i64], seed: &mut u64, positive: bool) -> pb::TensorProto {
    let n: i64 = dims.iter().product();
    let mut raw = Vec::with_capacity(n as usize * 4);
    for _ in 0..n {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let u = (*seed >> 40) as f32 / (1u64 << 24) as f32;
        let v = if positive { 0.5 + u } else { u - 0.5 };
        raw.extend_from_slice(&v.to_le_bytes());
    }
    pb::TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(DType::F32.code()),
        raw_data: Some(raw.into()),
        ..Default::default()
    }
}

fn ints(name: &str, v: &[i64]) -> pb::AttributeProto {
    pb::AttributeProto {
        name: Some(name.into()),
        ints: v.to_vec(),
        r#type: Some(7),
        ..Default::default()
    }
}

/// A chain of `n` ops as protobuf bytes.
fn chain(n: usize) -> Vec<u8> {
    let vi = |name: &str, dims: &[i64]| pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(ValueType::Tensor(TensorType::fixed(DType::F32, dims)).to_proto()),
        ..Default::default()
    };
    let mut seed = 7u64;
    let mut nodes = Vec::with_capacity(n);
    let mut inits = Vec::new();
    let mut x = "x".to_string();
    let mut step = 0usize;
    while nodes.len() + 1 < n {
        let i = nodes.len();
        let out = format!("v{i}");
        let node = match step % 5 {
            0 | 3 => {
                let k = if step.is_multiple_of(5) { 3 } else { 1 };
                let (w, b) = (format!("w{i}"), format!("b{i}"));
                inits.push(tensor(&w, &[8, 8, k, k], &mut seed, false));
                inits.push(tensor(&b, &[8], &mut seed, false));
                let p = k / 2;
                pb::NodeProto {
                    op_type: Some("Conv".into()),
                    input: vec![x.clone(), w, b],
                    attribute: vec![
                        ints("kernel_shape", &[k, k]),
                        ints("strides", &[1, 1]),
                        ints("pads", &[p, p, p, p]),
                    ],
                    ..Default::default()
                }
            }
            1 => {
                let names: Vec<String> = ["s", "c", "m", "q"]
                    .iter()
                    .map(|p| format!("{p}{i}"))
                    .collect();
                for (j, name) in names.iter().enumerate() {
                    inits.push(tensor(name, &[8], &mut seed, j == 3));
                }
                let mut input = vec![x.clone()];
                input.extend(names);
                pb::NodeProto {
                    op_type: Some("BatchNormalization".into()),
                    input,
                    ..Default::default()
                }
            }
            _ => pb::NodeProto {
                op_type: Some("Relu".into()),
                input: vec![x.clone()],
                ..Default::default()
            },
        };
        nodes.push(pb::NodeProto {
            output: vec![out.clone()],
            name: Some(format!("n{i}")),
            ..node
        });
        x = out;
        step += 1;
    }
    nodes.push(pb::NodeProto {
        op_type: Some("GlobalAveragePool".into()),
        input: vec![x],
        output: vec!["y".into()],
        name: Some("pool".into()),
        ..Default::default()
    });
    mutagraph_benches::model_bytes(pb::GraphProto {
        name: Some("chain".into()),
        node: nodes,
        initializer: inits,
        input: vec![vi("x", &[1, 8, 8, 8])],
        output: vec![vi("y", &[1, 8, 1, 1])],
        ..Default::default()
    })
}

/// What `mutagraph inspect FILE` does, up to the text it prints.
fn inspect_file(path: &Path) -> String {
    let ins = mutagraph_engine::cmd::inspect::inspect_file(path, &Fixed::default()).unwrap();
    assert!(ins.errors.is_empty(), "{:?}", &ins.errors[..1]);
    ins.to_text()
}

fn benches(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("mutagraph-bench-inspect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut group = c.benchmark_group("inspect");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    type Make = fn(usize) -> Vec<u8>;
    let chains: [(&str, Make); 2] = [
        ("unary_chain", mutagraph_benches::unary_chain),
        ("conv_chain", chain),
    ];
    for (name, make) in chains {
        for n in [1_000usize, 10_000, 100_000] {
            let path: PathBuf = dir.join(format!("{name}{n}.onnx"));
            std::fs::write(&path, make(n)).unwrap();
            // The file is the chain it claims to be, and valid.
            let text = inspect_file(&path);
            assert!(text.contains(&format!("size        {n} nodes")), "{text}");
            group.bench_function(format!("{name}_{n}"), |b| {
                b.iter(|| inspect_file(black_box(&path)))
            });
        }
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(inspect_benches, benches);
criterion_main!(inspect_benches);
