//! Every intermediate value of a model as a graph output: the model variant that localization
//! runs on all backends to find the first node whose output diverges.
use mutagraph_ir::infer::{Options, infer_model};
use mutagraph_ir::model::Model;
use mutagraph_ir::pb;
use mutagraph_ir::types::ValueType;
use std::collections::HashSet;

/// A node output exposed as a graph output.
#[derive(Clone, Debug, PartialEq)]
pub struct Exposed {
    /// The value's name.
    pub value: String,
    /// The stable id of the node that produces it.
    pub node: mutagraph_ir::graph::NodeId,
    /// Its op type.
    pub op_type: String,
}

/// Returns a copy of `model` whose graph outputs are the original outputs followed by every
/// output of every node of the main graph (in topological order) that is not already one.
/// Types come from shape inference where known (only the element type otherwise); values
/// whose type is not a tensor are left out.
pub fn expose_all(model: &Model) -> Result<(Model, Vec<Exposed>), mutagraph_ir::Error> {
    let mut m = model.clone();
    infer_model(&mut m, Options::default());
    let order = m.graph.topo_order()?;
    let mut present: HashSet<String> = m
        .graph
        .outputs
        .iter()
        .filter_map(|o| o.name.clone())
        .collect();
    let mut added = Vec::new();
    let mut extra = Vec::new();
    for id in order {
        let node = m.graph.node(id).expect("listed by topo_order");
        for out in &node.outputs {
            if out.is_empty() || present.contains(out) {
                continue;
            }
            let ty = m.graph.value_type(out);
            let ty = match ty {
                ValueType::Tensor(ref t) if t.dtype.is_known() => ty,
                _ => continue,
            };
            present.insert(out.clone());
            extra.push(pb::ValueInfoProto {
                name: Some(out.clone()),
                r#type: Some(ty.to_proto()),
                ..Default::default()
            });
            added.push(Exposed {
                value: out.clone(),
                node: id,
                op_type: node.op_type.clone(),
            });
        }
    }
    m.graph.outputs.extend(extra);
    Ok((m, added))
}
