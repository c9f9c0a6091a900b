//! Type and shape inference over graphs, driven by the op registry.
//!
//! Nodes are visited in topological order; each op's transfer function gets the types of its
//! inputs and, where known, their constant values (initializers, `Constant` outputs and small
//! shape computations folded on the way: the data propagation that lets `Shape → Gather →
//! Concat → Reshape` chains get static shapes). Subgraphs are inferred before the node that
//! holds them, with the enclosing scope visible.
use crate::graph::{Graph, NodeId};
use crate::model::Model;
use crate::registry::{InferCtx, Registry};
use crate::tensor::{Tensor, TensorExt};
use crate::types::{Dim, TensorType, ValueType};
use std::collections::{BTreeMap, HashMap};

/// Constants larger than this many elements are not propagated.
const MAX_FOLD_ELEMENTS: i64 = 4096;

/// Options of an inference run.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Fill what inference cannot find from the types declared in the file
    /// (value_info, graph outputs). Off for cross-checking inference itself.
    pub use_declared: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { use_declared: true }
    }
}

/// What went wrong or stayed unknown during inference.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Op types without a spec (domain-qualified), with the number of nodes.
    pub unknown_ops: BTreeMap<String, usize>,
    /// Nodes whose transfer function or validity constraints (`requires`) rejected their
    /// inputs: (node label, message).
    pub errors: Vec<(String, String)>,
    /// Nodes in a case ONNX defines inconsistently or not at all ([`OpSpec::ambiguous`]):
    /// (node label, message). Not errors.
    ///
    /// [`OpSpec::ambiguous`]: crate::registry::OpSpec::ambiguous
    pub ambiguous: Vec<(String, String)>,
}

impl Report {
    fn merge(&mut self, o: Report) {
        for (k, v) in o.unknown_ops {
            *self.unknown_ops.entry(k).or_default() += v;
        }
        self.errors.extend(o.errors);
        self.ambiguous.extend(o.ambiguous);
    }
}

/// A subgraph inferred on a scratch copy: (attribute name, index in the attribute, graph).
type InferredSub = (String, usize, Graph);

/// Values visible from an enclosing graph.
#[derive(Clone, Default)]
pub struct Scope {
    /// Types by name.
    pub types: HashMap<String, ValueType>,
    /// Constant values by name.
    pub consts: HashMap<String, Tensor>,
}

/// Infers every value of the model's main graph (and subgraphs); results land in `Graph::types`.
pub fn infer_model(m: &mut Model, opts: Options) -> Report {
    let opset = m.default_opset();
    infer_graph(&mut m.graph, opset, &Scope::default(), opts)
}

/// Infers the values of one graph given its enclosing scope.
pub fn infer_graph(g: &mut Graph, opset: i64, outer: &Scope, opts: Options) -> Report {
    let reg = Registry::global();
    let mut report = Report::default();
    let mut types: HashMap<String, ValueType> = outer.types.clone();
    let mut consts: HashMap<String, Tensor> = outer.consts.clone();
    for (name, t) in &g.initializers {
        types.insert(name.clone(), ValueType::Tensor(t.tensor_type()));
        if t.num_elements() <= MAX_FOLD_ELEMENTS && !t.is_external() {
            consts.insert(name.clone(), t.clone());
        }
    }
    for v in &g.inputs {
        let name = v.name.clone().unwrap_or_default();
        if let Some(tp) = &v.r#type {
            let declared = ValueType::from_proto(tp);
            let merged = match types.get(&name) {
                Some(init) => refine(&declared, init),
                None => declared,
            };
            types.insert(name, merged);
        } else {
            types.entry(name).or_insert(ValueType::Unknown);
        }
    }
    let order = match g.topo_order() {
        Ok(o) => o,
        Err(e) => {
            report
                .errors
                .push((g.name.clone().unwrap_or_default(), e.to_string()));
            g.node_ids()
        }
    };
    let declared: HashMap<&str, ValueType> = if opts.use_declared {
        g.value_info
            .iter()
            .chain(&g.outputs)
            .filter_map(|v| {
                Some((
                    v.name.as_deref()?,
                    ValueType::from_proto(v.r#type.as_ref()?),
                ))
            })
            .collect()
    } else {
        HashMap::new()
    };
    let mut sub_results: Vec<(NodeId, Vec<InferredSub>)> = Vec::new();
    let mut folded = std::collections::HashSet::new();
    for id in order {
        let node = g.node(id).unwrap();
        // Subgraphs first, with the current scope visible.
        let mut subgraph_outputs: HashMap<String, Vec<Vec<ValueType>>> = HashMap::new();
        let mut inferred_subs = Vec::new();
        if node.subgraphs().next().is_some() {
            let scope = Scope {
                types: types.clone(),
                consts: consts.clone(),
            };
            for (attr, sub) in node.subgraphs() {
                let mut sub = sub.clone();
                seed_subgraph_inputs(&mut sub, node, attr, &types);
                report.merge(infer_graph(&mut sub, opset, &scope, opts));
                let outs: Vec<ValueType> = sub
                    .outputs
                    .iter()
                    .map(|o| {
                        sub.types
                            .get(o.name.as_deref().unwrap_or(""))
                            .cloned()
                            .unwrap_or(ValueType::Unknown)
                    })
                    .collect();
                let idx = subgraph_outputs.get(attr).map_or(0, |v| v.len());
                subgraph_outputs
                    .entry(attr.to_string())
                    .or_default()
                    .push(outs);
                inferred_subs.push((attr.to_string(), idx, sub));
            }
        }
        if !inferred_subs.is_empty() {
            sub_results.push((id, inferred_subs));
        }
        let inputs: Vec<Option<ValueType>> = node
            .inputs
            .iter()
            .map(|i| {
                if i.is_empty() {
                    None
                } else {
                    Some(types.get(i).cloned().unwrap_or(ValueType::Unknown))
                }
            })
            .collect();
        let input_consts: Vec<Option<Tensor>> =
            node.inputs.iter().map(|i| consts.get(i).cloned()).collect();
        let ctx = InferCtx {
            node,
            opset,
            inputs,
            consts: input_consts,
            subgraph_outputs,
        };
        let mut outs: Vec<ValueType> = vec![ValueType::Unknown; node.outputs.len()];
        match reg.for_node(node) {
            None => {
                let key = if node.domain().is_empty() {
                    node.op_type.clone()
                } else {
                    format!("{}.{}", node.domain(), node.op_type)
                };
                *report.unknown_ops.entry(key).or_default() += 1;
            }
            Some(spec) => {
                if let Some(requires) = spec.requires
                    && let Err(e) = requires(&ctx)
                {
                    report.errors.push((node.label(), e));
                }
                if let Some(ambiguous) = spec.ambiguous
                    && let Err(e) = ambiguous(&ctx)
                {
                    report.ambiguous.push((node.label(), e));
                }
                match (spec.infer)(&ctx) {
                    Ok(v) => {
                        for (o, t) in outs.iter_mut().zip(v) {
                            *o = t;
                        }
                    }
                    Err(e) => report.errors.push((node.label(), e)),
                }
                if let Some(fold) = spec.fold
                    && let Some(vals) = fold(&ctx)
                {
                    for (name, t) in node.outputs.iter().zip(vals) {
                        if !name.is_empty() && t.num_elements() <= MAX_FOLD_ELEMENTS {
                            folded.insert(name.clone());
                            consts.insert(name.clone(), t);
                        }
                    }
                }
            }
        }
        for (name, t) in node.outputs.iter().zip(outs) {
            if name.is_empty() {
                continue;
            }
            let t = match declared.get(name.as_str()) {
                Some(d) => refine(&t, d),
                None => t,
            };
            types.insert(name.clone(), t);
        }
    }
    // Store results: this graph's own values only.
    for (k, _) in outer.types.iter() {
        if !g.initializers.contains_key(k) && !g.inputs.iter().any(|v| v.name.as_deref() == Some(k))
        {
            types.remove(k);
        }
    }
    g.types = types;
    g.folded = folded;
    for (id, subs) in sub_results {
        let node = g.node_mut(id).unwrap();
        for (attr, idx, sub) in subs {
            if let Some(a) = node.attributes.iter_mut().find(|a| a.name == attr) {
                match &mut a.value {
                    crate::attr::AttrValue::Graph(g) => g.types = sub.types,
                    crate::attr::AttrValue::Graphs(gs) => {
                        if let Some(g) = gs.get_mut(idx) {
                            g.types = sub.types;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    report
}

/// Gives Loop/Scan bodies the types their inputs will have where the body does not declare them.
fn seed_subgraph_inputs(
    sub: &mut Graph,
    node: &crate::graph::Node,
    _attr: &str,
    outer: &HashMap<String, ValueType>,
) {
    let outer_t = |i: usize| -> ValueType {
        node.inputs
            .get(i)
            .filter(|s| !s.is_empty())
            .and_then(|s| outer.get(s))
            .cloned()
            .unwrap_or(ValueType::Unknown)
    };
    let mut seeds: Vec<ValueType> = Vec::new();
    match node.op_type.as_str() {
        "Loop" => {
            seeds.push(ValueType::Tensor(TensorType::fixed(crate::DType::I64, &[])));
            seeds.push(ValueType::Tensor(TensorType::fixed(
                crate::DType::Bool,
                &[],
            )));
            for i in 2..node.inputs.len() {
                seeds.push(outer_t(i));
            }
        }
        _ => return,
    }
    // `sub` is a scratch copy: only its inferred `types` are kept, so filling in the declared
    // input types here does not change the model.
    for (v, seed) in sub.inputs.iter_mut().zip(seeds) {
        let declared = v
            .r#type
            .as_ref()
            .map(ValueType::from_proto)
            .unwrap_or(ValueType::Unknown);
        let t = refine(&declared, &seed);
        if t != ValueType::Unknown {
            v.r#type = Some(t.to_proto());
        }
    }
}

/// Combines two descriptions of one value: known facts of `a` win, gaps are filled from `b`.
pub fn refine(a: &ValueType, b: &ValueType) -> ValueType {
    match (a, b) {
        (ValueType::Unknown, x) => x.clone(),
        (x, ValueType::Unknown) => x.clone(),
        (ValueType::Tensor(x), ValueType::Tensor(y)) => {
            let dtype = if x.dtype.is_known() { x.dtype } else { y.dtype };
            let shape = match (&x.shape, &y.shape) {
                (None, s) | (s, None) => s.clone(),
                (Some(p), Some(q)) if p.len() == q.len() => Some(
                    p.iter()
                        .zip(q)
                        .map(|(d, e)| match (d, e) {
                            (Dim::Known(_), _) => d.clone(),
                            (_, Dim::Known(_)) => e.clone(),
                            (Dim::Param(_), _) => d.clone(),
                            _ => e.clone(),
                        })
                        .collect(),
                ),
                (Some(p), Some(_)) => Some(p.clone()),
            };
            ValueType::Tensor(TensorType { dtype, shape })
        }
        (ValueType::Sequence(x), ValueType::Sequence(y)) => {
            ValueType::Sequence(Box::new(refine(x, y)))
        }
        (ValueType::Optional(x), ValueType::Optional(y)) => {
            ValueType::Optional(Box::new(refine(x, y)))
        }
        (x, _) => x.clone(),
    }
}
