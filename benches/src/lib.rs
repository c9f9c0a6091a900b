//! Benchmarks live in benches/; this library holds what several of them build.
use mutagraph_ir::pb;
use prost::Message;

/// A model of IR version 8 importing the default domain at opset 17 around `graph`, as
/// protobuf bytes (the benches write their models straight as protobuf: the graph builder
/// validates as it goes, which costs seconds on the largest ones).
pub fn model_bytes(graph: pb::GraphProto) -> Vec<u8> {
    pb::ModelProto {
        ir_version: Some(8),
        opset_import: vec![pb::OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}

/// A chain of `n` unary ops (`Relu`, `Sigmoid`, `Tanh`, `Abs`, `Neg` in turn) on a
/// `1×16×8×8` tensor, no weights, as protobuf bytes.
pub fn unary_chain(n: usize) -> Vec<u8> {
    let ty = mutagraph_ir::ValueType::Tensor(mutagraph_ir::TensorType::fixed(
        mutagraph_ir::DType::F32,
        &[1, 16, 8, 8],
    ));
    let vi = |name: &str| pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(ty.to_proto()),
        ..Default::default()
    };
    let ops = ["Relu", "Sigmoid", "Tanh", "Abs", "Neg"];
    let node = (0..n)
        .map(|i| pb::NodeProto {
            op_type: Some(ops[i % ops.len()].into()),
            input: vec![if i == 0 {
                "x".into()
            } else {
                format!("v{}", i - 1)
            }],
            output: vec![format!("v{i}")],
            name: Some(format!("n{i}")),
            ..Default::default()
        })
        .collect();
    model_bytes(pb::GraphProto {
        name: Some("chain".into()),
        node,
        input: vec![vi("x")],
        output: vec![vi(&format!("v{}", n - 1))],
        ..Default::default()
    })
}
