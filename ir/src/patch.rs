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
        m.import_node_domains(&added);
        m.graph.rebuild_edges();
        // Validation's inference is the one stored (one inference, not two).
        let d = crate::validate::infer_and_check(&mut m);
        crate::validate::into_result(d).map_err(|e| Error::Patch(e.to_string()))?;
        *self = m;
        Ok(added)
    }
}

impl Model {
    /// Imports the domain of each node of `nodes` that the model does not import yet, at the
    /// first version the registry knows of the node's op (1 for an op it does not know): an
    /// added `com.microsoft` node brings `com.microsoft` into `opset_import`.
    fn import_node_domains(&mut self, nodes: &[NodeId]) {
        for &id in nodes {
            let Some(n) = self.graph.node(id) else {
                continue;
            };
            let domain = n.domain().to_string();
            if domain.is_empty() || domain == "ai.onnx" || self.opset(&domain).is_some() {
                continue;
            }
            let version = crate::registry::Registry::global()
                .for_node(n)
                .map_or(1, |s| s.since());
            self.opset_import.push(pb::OperatorSetIdProto {
                domain: Some(domain),
                version: Some(version),
            });
        }
    }
}

fn apply_ops(m: &mut Model, patch: &Patch) -> Result<Vec<NodeId>> {
    let g = &mut m.graph;
    let missing = |id: NodeId| Error::Patch(format!("node {id} does not exist"));
    let mut added = Vec::new();
    // Initializers removed, dropped at the end in one pass (removing each in place shifted
    // every later one: a patch removing many was quadratic).
    let mut removed: std::collections::HashSet<String> = std::collections::HashSet::new();
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
                if removed.remove(&name) {
                    // Added again after its removal: it goes last, as a new one does.
                    g.initializers.shift_remove(&name);
                }
                g.initializers.insert(name, t.clone());
            }
            PatchOp::RemoveInitializer(name) => {
                if removed.contains(name) || !g.initializers.contains_key(name) {
                    return Err(Error::Patch(format!("no initializer '{name}'")));
                }
                removed.insert(name.clone());
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
    if !removed.is_empty() {
        g.initializers.retain(|name, _| !removed.contains(name));
    }
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;
    use crate::tensor::from_f64s;

    fn names(m: &Model) -> Vec<&str> {
        m.graph.initializers.keys().map(String::as_str).collect()
    }

    /// A node of a domain the model does not import brings the domain in (else the model
    /// would be invalid, and every backend would refuse the mutant).
    #[test]
    fn an_added_contrib_node_imports_its_domain() {
        let mut m = crate::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[2, 3] x) => (float[2, 3] y) { y = Relu (x) }",
        )
        .unwrap();
        let mut n = crate::graph::Node::new("QuickGelu", &["y"], &["z"]);
        n.domain = Some("com.microsoft".into());
        let mut p = Patch::new();
        p.push(PatchOp::AddNode(n));
        m.apply(&p).unwrap();
        assert_eq!(m.opset("com.microsoft"), Some(1));
        assert_eq!(m.opset(""), Some(17));
        // Once imported, a second node does not import it twice.
        let mut n = crate::graph::Node::new("QuickGelu", &["z"], &["w"]);
        n.domain = Some("com.microsoft".into());
        let mut p = Patch::new();
        p.push(PatchOp::AddNode(n));
        m.apply(&p).unwrap();
        assert_eq!(m.opset_import.len(), 2);
    }

    /// Removals are applied in one pass at the end, with the order and errors of removing
    /// each in place: an initializer added again after its removal goes last.
    #[test]
    fn initializer_removals_keep_their_meaning() {
        let mut m = Model::new(17);
        let t = |name: &str| from_f64s(name, DType::F32, &[1], &[1.0]);
        for name in ["a", "b", "c", "d"] {
            m.graph.initializers.insert(name.into(), t(name));
        }
        let mut g = m.graph.clone();
        let mut m2 = m.clone();
        let mut p = Patch::new();
        p.push(PatchOp::RemoveInitializer("b".into()))
            .push(PatchOp::RemoveInitializer("a".into()))
            .push(PatchOp::AddInitializer(t("a")))
            .push(PatchOp::AddInitializer(t("e")))
            .push(PatchOp::RemoveInitializer("d".into()));
        apply_ops(&mut m2, &p).unwrap();
        assert_eq!(names(&m2), ["c", "a", "e"]);
        let mut twice = Patch::new();
        twice
            .push(PatchOp::RemoveInitializer("c".into()))
            .push(PatchOp::RemoveInitializer("c".into()));
        let e = apply_ops(&mut m.clone(), &twice).unwrap_err().to_string();
        assert!(e.contains("no initializer 'c'"), "{e}");
        // Many removals: each one used to shift every later initializer.
        for i in 0..20_000 {
            g.initializers.insert(format!("w{i}"), t("w"));
        }
        m.graph = g;
        let mut p = Patch::new();
        for i in 0..20_000 {
            p.push(PatchOp::RemoveInitializer(format!("w{i}")));
        }
        apply_ops(&mut m, &p).unwrap();
        assert_eq!(names(&m), ["a", "b", "c", "d"]);
    }
}
