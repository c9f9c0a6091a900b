//! Property-based fuzzing of the importer: whatever the bytes, import, validation, inference and
//! export return (Ok or a typed error) and never panic. Seeds are a small hand-built model with
//! a subgraph; mutations flip bits, truncate, splice and insert bytes.
use mutagraph_ir::infer::{Options, infer_model};
use mutagraph_ir::{Model, pb, validate};
use proptest::prelude::*;
use prost::Message;

fn vi(name: &str, dims: &[i64]) -> pb::ValueInfoProto {
    let t = mutagraph_ir::ValueType::Tensor(mutagraph_ir::TensorType::fixed(
        mutagraph_ir::DType::F32,
        dims,
    ));
    pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(t.to_proto()),
        ..Default::default()
    }
}

fn node(
    op: &str,
    inputs: &[&str],
    outputs: &[&str],
    attrs: Vec<pb::AttributeProto>,
) -> pb::NodeProto {
    pb::NodeProto {
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

fn seed() -> Vec<u8> {
    let branch = |op: &str, out: &str| pb::GraphProto {
        name: Some(format!("{op}_branch")),
        node: vec![node(op, &["y"], &[out], vec![])],
        output: vec![vi(out, &[1, 2, 3, 3])],
        ..Default::default()
    };
    let graph = pb::GraphProto {
        name: Some("seed".into()),
        node: vec![
            node(
                "Conv",
                &["x", "w"],
                &["y"],
                vec![pb::AttributeProto {
                    name: Some("pads".into()),
                    r#type: Some(7),
                    ints: vec![1, 1, 1, 1],
                    ..Default::default()
                }],
            ),
            node(
                "If",
                &["c"],
                &["z"],
                vec![
                    pb::AttributeProto {
                        name: Some("then_branch".into()),
                        r#type: Some(5),
                        g: Some(branch("Relu", "t")),
                        ..Default::default()
                    },
                    pb::AttributeProto {
                        name: Some("else_branch".into()),
                        r#type: Some(5),
                        g: Some(branch("Neg", "e")),
                        ..Default::default()
                    },
                ],
            ),
        ],
        initializer: vec![mutagraph_ir::tensor::from_f64s(
            "w",
            mutagraph_ir::DType::F32,
            &[2, 1, 3, 3],
            &[0.5; 18],
        )],
        input: vec![
            vi("x", &[1, 1, 3, 3]),
            pb::ValueInfoProto {
                name: Some("c".into()),
                r#type: Some(
                    mutagraph_ir::ValueType::Tensor(mutagraph_ir::TensorType::fixed(
                        mutagraph_ir::DType::Bool,
                        &[],
                    ))
                    .to_proto(),
                ),
                ..Default::default()
            },
        ],
        output: vec![vi("z", &[1, 2, 3, 3])],
        ..Default::default()
    };
    pb::ModelProto {
        ir_version: Some(8),
        opset_import: vec![pb::OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(13),
        }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}

fn exercise(bytes: &[u8]) {
    if let Ok(mut m) = Model::from_bytes(bytes) {
        let _ = validate::check(&m);
        infer_model(&mut m, Options::default());
        let again = Model::from_bytes(&m.to_bytes()).expect("an export always imports");
        assert_eq!(again.to_bytes(), m.to_bytes());
    }
}

#[test]
fn seed_is_valid_and_typed() {
    let mut m = Model::from_bytes(&seed()).unwrap();
    infer_model(&mut m, Options::default());
    assert_eq!(m.graph.value_type("y").to_string(), "f32[1,2,3,3]");
    assert_eq!(m.graph.node_count(), 2);
}

#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, Vec<u8>),
    Splice(usize, usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(p, b)| Edit::Flip(p, b)),
        any::<usize>().prop_map(Edit::Truncate),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..16)
        )
            .prop_map(|(p, v)| Edit::Insert(p, v)),
        (any::<usize>(), any::<usize>(), 1usize..64).prop_map(|(a, b, n)| Edit::Splice(a, b, n)),
    ]
}

fn apply(mut b: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        if b.is_empty() {
            break;
        }
        let len = b.len();
        match e {
            Edit::Flip(p, bit) => b[p % len] ^= 1 << bit,
            Edit::Truncate(p) => b.truncate(p % len),
            Edit::Insert(p, v) => {
                let p = p % len;
                b.splice(p..p, v.iter().copied());
            }
            Edit::Splice(a, c, n) => {
                let (a, c) = (a % len, c % len);
                let n = (*n).min(len - a).min(len - c);
                let chunk: Vec<u8> = b[a..a + n].to_vec();
                b[c..c + n].copy_from_slice(&chunk);
            }
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(7), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        exercise(&bytes);
    }

    #[test]
    fn mutated_models_never_panic(edits in proptest::collection::vec(edit(), 1..6)) {
        exercise(&apply(seed(), &edits));
    }
}
