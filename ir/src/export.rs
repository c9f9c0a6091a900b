//! IR → ONNX protobuf.
use crate::attr::{AttrValue, Attribute};
use crate::graph::{Graph, Node};
use crate::model::Model;
use crate::pb;

/// Exports a model.
pub fn model_to_proto(m: &Model) -> pb::ModelProto {
    pb::ModelProto {
        ir_version: m.ir_version,
        opset_import: m.opset_import.clone(),
        producer_name: m.producer_name.clone(),
        producer_version: m.producer_version.clone(),
        domain: m.domain.clone(),
        model_version: m.model_version,
        doc_string: m.doc_string.clone(),
        graph: Some(graph_to_proto(&m.graph)),
        metadata_props: m.metadata_props.clone(),
        training_info: m.training_info.clone(),
        functions: m.functions.clone(),
        configuration: m.configuration.clone(),
    }
}

/// Exports a graph; nodes are written in [`Graph::topo_order`] (id order if the graph is cyclic).
pub fn graph_to_proto(g: &Graph) -> pb::GraphProto {
    let order = g.topo_order().unwrap_or_else(|_| g.node_ids());
    pb::GraphProto {
        node: order
            .into_iter()
            .map(|id| node_to_proto(g.node(id).unwrap()))
            .collect(),
        name: g.name.clone(),
        initializer: g.initializers.values().cloned().collect(),
        sparse_initializer: g.sparse_initializers.clone(),
        doc_string: g.doc_string.clone(),
        input: g.inputs.clone(),
        output: g.outputs.clone(),
        value_info: g.value_info.clone(),
        quantization_annotation: g.quantization_annotation.clone(),
        metadata_props: g.metadata_props.clone(),
    }
}

/// One node as a `NodeProto`.
pub fn node_to_proto(n: &Node) -> pb::NodeProto {
    pb::NodeProto {
        input: n.inputs.clone(),
        output: n.outputs.clone(),
        name: n.name.clone(),
        op_type: Some(n.op_type.clone()),
        domain: n.domain.clone(),
        overload: n.overload.clone(),
        attribute: n.attributes.iter().map(attr_to_proto).collect(),
        doc_string: n.doc_string.clone(),
        metadata_props: n.metadata_props.clone(),
        device_configurations: n.device_configurations.clone(),
    }
}

fn attr_to_proto(a: &Attribute) -> pb::AttributeProto {
    let mut p = pb::AttributeProto {
        name: Some(a.name.clone()),
        ref_attr_name: a.ref_attr_name.clone(),
        doc_string: a.doc_string.clone(),
        r#type: a.type_code,
        ..Default::default()
    };
    match &a.value {
        AttrValue::Float(v) => p.f = Some(*v),
        AttrValue::Int(v) => p.i = Some(*v),
        AttrValue::String(v) => p.s = Some(v.clone()),
        AttrValue::Tensor(v) => p.t = Some(v.clone()),
        AttrValue::Graph(g) => p.g = Some(graph_to_proto(g)),
        AttrValue::SparseTensor(v) => p.sparse_tensor = Some((**v).clone()),
        AttrValue::TypeProto(v) => p.tp = Some(v.clone()),
        AttrValue::Floats(v) => p.floats = v.clone(),
        AttrValue::Ints(v) => p.ints = v.clone(),
        AttrValue::Strings(v) => p.strings = v.clone(),
        AttrValue::Tensors(v) => p.tensors = v.clone(),
        AttrValue::Graphs(v) => p.graphs = v.iter().map(graph_to_proto).collect(),
        AttrValue::SparseTensors(v) => p.sparse_tensors = v.clone(),
        AttrValue::TypeProtos(v) => p.type_protos = v.clone(),
        AttrValue::Undefined => {}
    }
    p
}
