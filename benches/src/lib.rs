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
