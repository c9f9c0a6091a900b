//! Graph slicing: a model cut down to some of its nodes ([`extract`]), and a model with every
//! intermediate value as a graph output ([`expose_all`]). Localization runs the first on one
//! node to re-check a blamed node alone, and the second on every backend to find the first
//! node whose output diverges; crash triage runs both on the prefix that still fails.
use crate::error::Error;
use crate::graph::{Graph, Node, NodeId};
use crate::infer::{Options, infer_model};
use crate::model::Model;
use crate::patch::{Patch, PatchOp};
use crate::pb;
use crate::types::ValueType;
use std::collections::HashSet;

/// A model made of `nodes` of `model` (by id): inputs that no kept node produces become graph
/// inputs (typed by inference; initializers stay initializers), the kept nodes' outputs that no
/// kept node reads, or that were graph outputs, become the graph outputs.
pub fn extract(model: &Model, nodes: &[NodeId]) -> Result<Model, Error> {
    let mut m = model.clone();
    infer_model(&mut m, Options::default());
    let keep: HashSet<NodeId> = nodes.iter().copied().collect();
    let kept: Vec<Node> = m
        .graph
        .topo_order()?
        .into_iter()
        .filter(|id| keep.contains(id))
        .filter_map(|id| m.graph.node(id).cloned())
        .collect();
    let produced: HashSet<&str> = kept
        .iter()
        .flat_map(|n| n.outputs.iter().map(String::as_str))
        .collect();
    let read: HashSet<&str> = kept.iter().flat_map(|n| n.present_inputs()).collect();
    let old_outputs: HashSet<String> = m
        .graph
        .outputs
        .iter()
        .filter_map(|o| o.name.clone())
        .collect();
    let typed = |name: &str| -> Option<pb::ValueInfoProto> {
        let ty = m.graph.value_type(name);
        matches!(ty, ValueType::Tensor(_)).then(|| pb::ValueInfoProto {
            name: Some(name.to_string()),
            r#type: Some(ty.to_proto()),
            ..Default::default()
        })
    };
    let mut inputs = Vec::new();
    let mut seen = HashSet::new();
    for n in &kept {
        for i in n.present_inputs() {
            if produced.contains(i) || m.graph.initializers.contains_key(i) || !seen.insert(i) {
                continue;
            }
            inputs.push(
                typed(i)
                    .ok_or_else(|| Error::Invalid(format!("value '{i}' has no tensor type")))?,
            );
        }
    }
    let mut outputs = Vec::new();
    for n in &kept {
        for o in n.outputs.iter().filter(|o| !o.is_empty()) {
            if !read.contains(o.as_str()) || old_outputs.contains(o) {
                outputs
                    .push(typed(o).ok_or_else(|| {
                        Error::Invalid(format!("value '{o}' has no tensor type"))
                    })?);
            }
        }
    }
    let mut g = Graph::new(m.graph.name.as_deref().unwrap_or("extract"));
    g.inputs = inputs;
    g.outputs = outputs;
    g.initializers = m
        .graph
        .initializers
        .iter()
        .filter(|(k, _)| read.contains(k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut out = m.clone();
    out.graph = g;
    let mut patch = Patch::new();
    for n in kept {
        patch.push(PatchOp::AddNode(n));
    }
    out.apply(&patch)?;
    Ok(out)
}

/// A node output exposed as a graph output.
#[derive(Clone, Debug, PartialEq)]
pub struct Exposed {
    /// The value's name.
    pub value: String,
    /// The stable id of the node that produces it.
    pub node: NodeId,
    /// Its op type.
    pub op_type: String,
}

/// Returns a copy of `model` whose graph outputs are the original outputs followed by every
/// output of every node of the main graph (in topological order) that is not already one.
/// Types come from shape inference where known (only the element type otherwise); values
/// whose type is not a tensor are left out.
pub fn expose_all(model: &Model) -> Result<(Model, Vec<Exposed>), Error> {
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
