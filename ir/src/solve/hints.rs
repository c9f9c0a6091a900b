//! Values for the integer inputs that select behaviour (compared with a constant, or
//! indexing a tensor), found from the graph.
use super::{Input, Plan};
use crate::attr::AttrValue;
use crate::graph::{Graph, NodeId};
use crate::tensor::TensorExt;
use std::collections::HashMap;

/// [`Graph::consumers`] of every value at once (asking the graph walks every node per value).
struct Consumers<'a> {
    /// Nodes reading a value as an input.
    direct: HashMap<&'a str, Vec<NodeId>>,
    /// Nodes whose subgraphs capture a value.
    captured: HashMap<String, Vec<NodeId>>,
}

impl<'a> Consumers<'a> {
    fn new(g: &'a Graph) -> Consumers<'a> {
        let mut direct: HashMap<&str, Vec<NodeId>> = HashMap::new();
        let mut captured: HashMap<String, Vec<NodeId>> = HashMap::new();
        for n in g.nodes() {
            for i in n.present_inputs() {
                let list = direct.entry(i).or_default();
                if list.last() != Some(&n.id) {
                    list.push(n.id);
                }
            }
            for (_, sub) in n.subgraphs() {
                for c in sub.captured_names() {
                    let list = captured.entry(c).or_default();
                    if list.last() != Some(&n.id) {
                        list.push(n.id);
                    }
                }
            }
        }
        Consumers { direct, captured }
    }

    /// The nodes reading `v`, in id order.
    fn of(&self, v: &str) -> Vec<NodeId> {
        let mut ids: Vec<NodeId> = self
            .direct
            .get(v)
            .into_iter()
            .chain(self.captured.get(v))
            .flatten()
            .copied()
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

/// Values for integer inputs that select behaviour: the constant an input is compared with,
/// or the range of the axis it indexes. Looks through ops that keep values (Cast, Reshape,
/// Squeeze, Unsqueeze, Identity, Flatten).
pub(super) fn selector_hints(g: &Graph, inputs: &[Input], plan: &mut Plan) {
    if !inputs
        .iter()
        .any(|inp| inp.dtype.is_int() && !plan.values.contains_key(&inp.name))
    {
        return;
    }
    let consts = g.constants();
    let consumers = Consumers::new(g);
    for inp in inputs {
        if !inp.dtype.is_int() || plan.values.contains_key(&inp.name) {
            continue;
        }
        let mut frontier = vec![inp.name.clone()];
        let mut seen = 0;
        let mut found = false;
        while let Some(v) = frontier.pop() {
            seen += 1;
            if seen > 64 || found {
                break;
            }
            for id in consumers.of(&v) {
                let Some(n) = g.node(id) else { continue };
                let slot = n.inputs.iter().position(|i| *i == v);
                match n.op_type.as_str() {
                    "Cast" | "Reshape" | "Squeeze" | "Unsqueeze" | "Identity" | "Flatten"
                        if slot == Some(0) =>
                    {
                        frontier.extend(n.outputs.iter().filter(|o| !o.is_empty()).cloned());
                    }
                    "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" => {
                        let other = n.inputs.iter().find(|i| **i != v);
                        if let Some(t) = other.and_then(|o| consts.get(o.as_str()))
                            && t.num_elements() >= 1
                            && let Ok(vals) = t.to_f64s()
                        {
                            let val = vals[0];
                            plan.values.insert(inp.name.clone(), val);
                            plan.why.push(format!(
                                "{} = {val}: compared with that constant by node {}",
                                inp.name,
                                n.label()
                            ));
                            found = true;
                            break;
                        }
                    }
                    "Gather" | "GatherElements" if slot == Some(1) => {
                        let axis = n
                            .attributes
                            .iter()
                            .find(|a| a.name == "axis")
                            .and_then(|a| match a.value {
                                AttrValue::Int(k) => Some(k),
                                _ => None,
                            })
                            .unwrap_or(0);
                        if let Some(t) = consts.get(n.inputs[0].as_str())
                            && let Ok(ax) = crate::ops::common::norm_axis(axis, t.dims.len())
                            && let Some(&len) = t.dims.get(ax)
                            && len > 0
                        {
                            plan.ranges.insert(inp.name.clone(), (0, len));
                            plan.why.push(format!(
                                "{} in [0, {len}): indices into axis {ax} of '{}' by node {}",
                                inp.name,
                                n.inputs[0],
                                n.label()
                            ));
                            found = true;
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}
