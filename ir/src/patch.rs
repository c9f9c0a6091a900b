//! Edits as patches: a list of operations applied to a copy of the model, validated, and
//! committed only if the result is a valid model.
use crate::error::{Error, Result};
use crate::graph::{Node, NodeId};
use crate::model::Model;
use crate::pb;
use crate::tensor::Tensor;

/// One edit.
#[derive(Clone, Debug)]
pub enum PatchOp {
    /// Adds a node (its id is assigned on apply and returned in order).
    AddNode(Node),
    /// Removes a node.
    RemoveNode(NodeId),
    /// Replaces a node's content, keeping its id.
    ReplaceNode(NodeId, Node),
    /// Points input `slot` of `node` at `value`.
    SetInput {
        /// The consumer.
        node: NodeId,
        /// Its input slot.
        slot: usize,
        /// The new value name.
        value: String,
    },
    /// Makes every reader of `old` (node inputs and graph outputs) read `new` instead.
    ReplaceUses {
        /// Value to stop reading.
        old: String,
        /// Value to read instead.
        new: String,
    },
    /// Adds or replaces an initializer.
    AddInitializer(Tensor),
    /// Removes an initializer.
    RemoveInitializer(String),
    /// Adds a graph input.
    AddInput(pb::ValueInfoProto),
    /// Removes a graph input.
    RemoveInput(String),
    /// Adds a graph output.
    AddOutput(pb::ValueInfoProto),
    /// Removes a graph output.
    RemoveOutput(String),
}

/// A set of edits applied at once.
#[derive(Clone, Debug, Default)]
pub struct Patch {
    /// The edits, in order.
    pub ops: Vec<PatchOp>,
}

impl Patch {
    /// An empty patch.
    pub fn new() -> Patch {
        Patch::default()
    }
    /// Adds an edit (builder style).
    pub fn push(&mut self, op: PatchOp) -> &mut Patch {
        self.ops.push(op);
        self
    }
}

impl Model {
    /// Applies `patch` to the main graph: all edits or none. The result must pass
    /// [`crate::validate::validate`]; the ids of added nodes are returned in order.
    pub fn apply(&mut self, patch: &Patch) -> Result<Vec<NodeId>> {
        let mut m = self.clone();
        let added = apply_ops(&mut m, patch)?;
        m.graph.rebuild_edges();
        crate::validate::validate(&m).map_err(|e| Error::Patch(e.to_string()))?;
        crate::infer::infer_model(&mut m, Default::default());
        *self = m;
        Ok(added)
    }
}

fn apply_ops(m: &mut Model, patch: &Patch) -> Result<Vec<NodeId>> {
    let g = &mut m.graph;
    let missing = |id: NodeId| Error::Patch(format!("node {id} does not exist"));
    let mut added = Vec::new();
    for op in &patch.ops {
        match op {
            PatchOp::AddNode(n) => added.push(g.push_node(n.clone())),
            PatchOp::RemoveNode(id) => {
                g.remove_node_raw(*id).ok_or_else(|| missing(*id))?;
            }
            PatchOp::ReplaceNode(id, n) => {
                if !g.replace_node_raw(*id, n.clone()) {
                    return Err(missing(*id));
                }
            }
            PatchOp::SetInput { node, slot, value } => {
                let n = g.node_mut(*node).ok_or_else(|| missing(*node))?;
                if *slot >= n.inputs.len() {
                    n.inputs.resize(*slot + 1, String::new());
                }
                n.inputs[*slot] = value.clone();
            }
            PatchOp::ReplaceUses { old, new } => {
                for id in g.node_ids() {
                    let n = g.node_mut(id).unwrap();
                    for i in n.inputs.iter_mut().filter(|i| *i == old) {
                        *i = new.clone();
                    }
                }
                for o in g
                    .outputs
                    .iter_mut()
                    .filter(|o| o.name.as_deref() == Some(old))
                {
                    o.name = Some(new.clone());
                }
            }
            PatchOp::AddInitializer(t) => {
                let name = t
                    .name
                    .clone()
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| Error::Patch("initializer without a name".into()))?;
                g.initializers.insert(name, t.clone());
            }
            PatchOp::RemoveInitializer(name) => {
                g.initializers
                    .shift_remove(name)
                    .ok_or_else(|| Error::Patch(format!("no initializer '{name}'")))?;
            }
            PatchOp::AddInput(v) => g.inputs.push(v.clone()),
            PatchOp::RemoveInput(name) => {
                let before = g.inputs.len();
                g.inputs.retain(|v| v.name.as_deref() != Some(name));
                if g.inputs.len() == before {
                    return Err(Error::Patch(format!("no graph input '{name}'")));
                }
            }
            PatchOp::AddOutput(v) => g.outputs.push(v.clone()),
            PatchOp::RemoveOutput(name) => {
                let before = g.outputs.len();
                g.outputs.retain(|v| v.name.as_deref() != Some(name));
                if g.outputs.len() == before {
                    return Err(Error::Patch(format!("no graph output '{name}'")));
                }
            }
        }
    }
    Ok(added)
}
