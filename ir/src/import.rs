//! ONNX protobuf → IR.
use crate::attr::{AttrKind, AttrValue, Attribute};
use crate::error::{Error, Result};
use crate::graph::{Graph, Node, NodeId};
use crate::model::Model;
use crate::pb;

/// Imports a decoded `ModelProto`.
pub fn model_from_proto(p: pb::ModelProto) -> Result<Model> {
    let graph = p
        .graph
        .ok_or_else(|| Error::Malformed("the model has no graph".into()))?;
    Ok(Model {
        ir_version: p.ir_version,
        opset_import: p.opset_import,
        producer_name: p.producer_name,
        producer_version: p.producer_version,
        domain: p.domain,
        model_version: p.model_version,
        doc_string: p.doc_string,
        graph: graph_from_proto(graph, "main graph")?,
        metadata_props: p.metadata_props,
        training_info: p.training_info,
        functions: p.functions,
        configuration: p.configuration,
    })
}

/// Imports a `GraphProto`; `path` names the graph in error messages.
pub fn graph_from_proto(p: pb::GraphProto, path: &str) -> Result<Graph> {
    let mut g = Graph {
        name: p.name,
        doc_string: p.doc_string,
        inputs: p.input,
        outputs: p.output,
        value_info: p.value_info,
        sparse_initializers: p.sparse_initializer,
        quantization_annotation: p.quantization_annotation,
        metadata_props: p.metadata_props,
        ..Default::default()
    };
    g.initializers.reserve(p.initializer.len());
    for (i, t) in p.initializer.into_iter().enumerate() {
        let name = match t.name.as_deref() {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => {
                return Err(Error::Malformed(format!(
                    "{path}: initializer #{i} has no name"
                )));
            }
        };
        if g.initializers.insert(name.clone(), t).is_some() {
            return Err(Error::Malformed(format!(
                "{path}: initializer '{name}' is defined twice"
            )));
        }
    }
    g.index.reserve(p.node.len());
    for (i, n) in p.node.into_iter().enumerate() {
        // The node's place is only spelled out for an error (a format per node was a tenth of
        // importing a long chain).
        let node = node_at(n, &|| format!("{path}, node #{i}"))?;
        g.push_node(node);
    }
    g.rebuild_edges();
    Ok(g)
}

/// One node from a `NodeProto` (`path` names it in errors).
pub fn node_from_proto(n: pb::NodeProto, path: &str) -> Result<Node> {
    node_at(n, &|| path.to_string())
}

fn node_at(n: pb::NodeProto, path: &dyn Fn() -> String) -> Result<Node> {
    let op_type = match n.op_type {
        Some(op) if !op.is_empty() => op,
        _ => return Err(Error::Malformed(format!("{} has no op_type", path()))),
    };
    let mut attributes = Vec::with_capacity(n.attribute.len());
    for a in n.attribute {
        attributes.push(attr_from_proto(a, &|| format!("{} ({op_type})", path()))?);
    }
    Ok(Node {
        id: NodeId(u32::MAX),
        name: n.name,
        op_type,
        domain: n.domain,
        overload: n.overload,
        inputs: n.input,
        outputs: n.output,
        attributes,
        doc_string: n.doc_string,
        metadata_props: n.metadata_props,
        device_configurations: n.device_configurations,
    })
}

fn attr_from_proto(mut a: pb::AttributeProto, path: &dyn Fn() -> String) -> Result<Attribute> {
    let name = a.name.take().unwrap_or_default();
    let kind = match a.r#type {
        Some(code) => AttrKind::from_code(code).ok_or_else(|| {
            Error::Malformed(format!(
                "{}: attribute '{name}' has unknown type code {code}",
                path()
            ))
        })?,
        None => legacy_kind(&a),
    };
    let sub = |g: pb::GraphProto, i: usize| {
        graph_from_proto(g, &format!("{}, attribute '{name}' graph #{i}", path()))
    };
    let value = match kind {
        AttrKind::Float => AttrValue::Float(a.f.unwrap_or_default()),
        AttrKind::Int => AttrValue::Int(a.i.unwrap_or_default()),
        AttrKind::String => AttrValue::String(a.s.unwrap_or_default()),
        AttrKind::Tensor => AttrValue::Tensor(a.t.unwrap_or_default()),
        AttrKind::Graph => AttrValue::Graph(Box::new(sub(a.g.unwrap_or_default(), 0)?)),
        AttrKind::SparseTensor => {
            AttrValue::SparseTensor(Box::new(a.sparse_tensor.unwrap_or_default()))
        }
        AttrKind::TypeProto => AttrValue::TypeProto(a.tp.unwrap_or_default()),
        AttrKind::Floats => AttrValue::Floats(a.floats),
        AttrKind::Ints => AttrValue::Ints(a.ints),
        AttrKind::Strings => AttrValue::Strings(a.strings),
        AttrKind::Tensors => AttrValue::Tensors(a.tensors),
        AttrKind::Graphs => AttrValue::Graphs(
            a.graphs
                .into_iter()
                .enumerate()
                .map(|(i, g)| sub(g, i))
                .collect::<Result<_>>()?,
        ),
        AttrKind::SparseTensors => AttrValue::SparseTensors(a.sparse_tensors),
        AttrKind::TypeProtos => AttrValue::TypeProtos(a.type_protos),
        AttrKind::Undefined => AttrValue::Undefined,
    };
    Ok(Attribute {
        name,
        value,
        type_code: a.r#type,
        ref_attr_name: a.ref_attr_name,
        doc_string: a.doc_string,
    })
}

/// The kind of an attribute without a `type` field, from which value field is set (files
/// written before the `type` field existed say the kind only so). The text printer reads it too.
pub(crate) fn legacy_kind(a: &pb::AttributeProto) -> AttrKind {
    if a.f.is_some() {
        AttrKind::Float
    } else if a.i.is_some() {
        AttrKind::Int
    } else if a.s.is_some() {
        AttrKind::String
    } else if a.t.is_some() {
        AttrKind::Tensor
    } else if a.g.is_some() {
        AttrKind::Graph
    } else if a.sparse_tensor.is_some() {
        AttrKind::SparseTensor
    } else if a.tp.is_some() {
        AttrKind::TypeProto
    } else if !a.floats.is_empty() {
        AttrKind::Floats
    } else if !a.ints.is_empty() {
        AttrKind::Ints
    } else if !a.strings.is_empty() {
        AttrKind::Strings
    } else if !a.tensors.is_empty() {
        AttrKind::Tensors
    } else if !a.graphs.is_empty() {
        AttrKind::Graphs
    } else if !a.sparse_tensors.is_empty() {
        AttrKind::SparseTensors
    } else if !a.type_protos.is_empty() {
        AttrKind::TypeProtos
    } else {
        AttrKind::Undefined
    }
}

/// A declared dim that import does not read as the plain size it says: a negative `dim_value`
/// (exporters write -1 for a dynamic size) is read as a dynamic dim, and a `dim_value` of 0 on
/// an input is an empty dimension, which a model meaning a dynamic size gets wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DimNote {
    /// `input`, `output` or `value_info`, prefixed by the subgraph's path outside the main graph.
    pub role: String,
    /// The value's name.
    pub value: String,
    /// The dim's index in the shape.
    pub index: usize,
    /// The `dim_value` the file declares.
    pub declared: i64,
}

impl std::fmt::Display for DimNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let DimNote {
            role,
            value,
            index,
            declared,
        } = self;
        if *declared < 0 {
            write!(
                f,
                "{role} '{value}': dim {index} is declared {declared}, read as a dynamic dim"
            )
        } else {
            write!(
                f,
                "{role} '{value}': dim {index} is declared 0, read as an empty dim (ONNX Runtime \
                 accepts only empty tensors there); a dynamic dim has a name, no value or -1"
            )
        }
    }
}

/// The declared dims of `g` (its subgraphs included) that [`DimNote`] describes: negative
/// `dim_value`s on inputs, outputs and value_info, and zeros on inputs that no initializer
/// feeds.
pub fn declared_dim_notes(g: &Graph) -> Vec<DimNote> {
    let mut out = Vec::new();
    dim_notes(g, "", &mut out);
    out
}

fn dim_notes(g: &Graph, prefix: &str, out: &mut Vec<DimNote>) {
    use pb::tensor_shape_proto::dimension::Value;
    use pb::type_proto::Value as Tv;
    let lists = [
        ("input", &g.inputs),
        ("output", &g.outputs),
        ("value_info", &g.value_info),
    ];
    for (role, list) in lists {
        for v in list {
            let shape = match v.r#type.as_ref().and_then(|t| t.value.as_ref()) {
                Some(Tv::TensorType(t)) => t.shape.as_ref(),
                Some(Tv::SparseTensorType(t)) => t.shape.as_ref(),
                _ => None,
            };
            for (index, d) in shape.into_iter().flat_map(|s| s.dim.iter()).enumerate() {
                if let Some(Value::DimValue(declared)) = d.value
                    && (declared < 0
                        || (declared == 0
                            && role == "input"
                            && !g.initializers.contains_key(v.name.as_deref().unwrap_or(""))))
                {
                    out.push(DimNote {
                        role: format!("{prefix}{role}"),
                        value: v.name.clone().unwrap_or_default(),
                        index,
                        declared,
                    });
                }
            }
        }
    }
    for n in g.nodes() {
        for (attr, sub) in n.subgraphs() {
            dim_notes(
                sub,
                &format!("{prefix}{} attribute '{attr}': ", n.label()),
                out,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::Model;
    use crate::pb;
    use prost::Message;

    /// A model whose graph holds an `If` whose branch holds an `If` ... `depth` levels deep.
    fn nested(depth: usize) -> Vec<u8> {
        let mut g = pb::GraphProto {
            name: Some("leaf".into()),
            ..Default::default()
        };
        for _ in 0..depth {
            g = pb::GraphProto {
                name: Some("level".into()),
                node: vec![pb::NodeProto {
                    op_type: Some("If".into()),
                    input: vec!["c".into()],
                    output: vec!["y".into()],
                    attribute: vec![pb::AttributeProto {
                        name: Some("then_branch".into()),
                        r#type: Some(5),
                        g: Some(g),
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            };
        }
        pb::ModelProto {
            ir_version: Some(8),
            graph: Some(g),
            ..Default::default()
        }
        .encode_to_vec()
    }

    /// Decoding stops at protobuf's recursion limit (three messages per level): a file
    /// nested deeper is an error, never a stack overflow of the import or of anything after.
    #[test]
    fn nesting_beyond_the_protobuf_recursion_limit_is_a_decode_error() {
        assert!(Model::from_bytes(&nested(30)).is_ok());
        let bytes = nested(60);
        let e = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || Model::from_bytes(&bytes).map(|_| ()))
            .unwrap()
            .join()
            .unwrap()
            .unwrap_err();
        assert!(e.to_string().contains("recursion limit"), "{e}");
    }
}
