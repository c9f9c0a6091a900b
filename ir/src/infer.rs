//! Type and shape inference over graphs, driven by the op registry.
//!
//! Nodes are visited in topological order; each op's transfer function gets the types of its
//! inputs and, where known, their constant values (initializers, `Constant` outputs and small
//! shape computations folded on the way: the data propagation that lets `Shape → Gather →
//! Concat → Reshape` chains get static shapes). Subgraphs are inferred before the node that
//! holds them, with the enclosing scope visible.
//!
//! One pass over the graph, linear in its size: the enclosing scopes are a chain of borrowed
//! frames (nothing is copied per subgraph), input types and constants are lent to the transfer
//! functions (no copy of a weight per node), names are borrowed from the graph until results
//! are stored, and subgraphs nest at most [`MAX_SUBGRAPH_DEPTH`] levels.
use crate::attr::AttrValue;
use crate::graph::{Graph, Node, NodeId};
use crate::model::Model;
use crate::registry::{InferCtx, Registry};
use crate::tensor::{Tensor, TensorExt};
use crate::types::{Dim, TensorType, ValueType};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

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

/// Values visible from an enclosing graph.
#[derive(Clone, Default)]
pub struct Scope {
    /// Types by name.
    pub types: HashMap<String, ValueType>,
    /// Constant values by name.
    pub consts: HashMap<String, Tensor>,
}

/// Subgraphs nest at most this deep: deeper ones are reported as an error and not inferred
/// (inference, validation and the walks over subgraphs recurse once per level). A protobuf
/// model cannot nest deeper anyway (prost refuses messages nested over 100 levels, three per
/// subgraph); a model built in memory can.
pub const MAX_SUBGRAPH_DEPTH: usize = 48;

/// Infers every value of the model's main graph (and subgraphs); results land in `Graph::types`.
pub fn infer_model(m: &mut Model, opts: Options) -> Report {
    let opset = m.default_opset();
    infer_graph(&mut m.graph, opset, &Scope::default(), opts)
}

/// Declares the type inference found (run [`infer_model`] first) for each output of `g`
/// written without one (the text format accepts `=> (Y)`; ONNX's checker and ONNX Runtime
/// require every graph output's type). Returns the names of such outputs left without a type
/// because inference knows no element type for them.
pub fn declare_output_types(g: &mut Graph) -> Vec<String> {
    let mut left = Vec::new();
    for o in g.outputs.iter_mut().filter(|o| o.r#type.is_none()) {
        let name = o.name.clone().unwrap_or_default();
        match g.types.get(&name) {
            Some(t @ ValueType::Tensor(tt)) if tt.dtype.is_known() => o.r#type = Some(t.to_proto()),
            Some(t) if !matches!(t, ValueType::Tensor(_) | ValueType::Unknown) => {
                o.r#type = Some(t.to_proto())
            }
            _ => left.push(name),
        }
    }
    left
}

/// Infers the values of one graph given its enclosing scope.
pub fn infer_graph(g: &mut Graph, opset: i64, outer: &Scope, opts: Options) -> Report {
    let mut report = Report::default();
    let inferred = run(g, opset, &Env::Root(outer), opts, &[], 0, &mut report).into_owned();
    inferred.store(g);
    report
}

/// What inference found for one graph, before it is stored in the graph: its own values'
/// types, the values it folded, and the same for the subgraphs of its nodes. Names are
/// borrowed from the graph (inference that is not stored, as validation's and the input
/// solver's, allocates no name).
pub(crate) struct Inferred<'g> {
    /// The graph's own values (initializers, inputs, node outputs), as `Graph::types`.
    pub(crate) types: HashMap<&'g str, ValueType>,
    /// As `Graph::folded`.
    pub(crate) folded: HashSet<&'g str>,
    /// Per node holding subgraphs: (attribute position, index in the attribute, results).
    pub(crate) subs: HashMap<NodeId, Vec<(usize, usize, Inferred<'g>)>>,
}

impl<'g> Inferred<'g> {
    /// The results for subgraph `idx` of the attribute at position `pos` of node `id`.
    pub(crate) fn sub(&self, id: NodeId, pos: usize, idx: usize) -> Option<&Inferred<'g>> {
        self.subs
            .get(&id)?
            .iter()
            .find(|(p, i, _)| *p == pos && *i == idx)
            .map(|(_, _, r)| r)
    }

    /// What [`Inferred::store`] stores, owning its names (the graph they borrow from is then
    /// free to be changed).
    pub(crate) fn into_owned(self) -> Stored {
        let own = |types: HashMap<&str, ValueType>| -> HashMap<String, ValueType> {
            types.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
        };
        Stored {
            types: own(self.types),
            folded: self.folded.into_iter().map(str::to_string).collect(),
            subs: self
                .subs
                .into_iter()
                .map(|(id, subs)| {
                    let subs = subs
                        .into_iter()
                        .map(|(pos, idx, r)| (pos, idx, own(r.types)))
                        .collect();
                    (id, subs)
                })
                .collect(),
        }
    }
}

/// A subgraph's types: (attribute position, index in the attribute, the types).
type SubTypes = (usize, usize, HashMap<String, ValueType>);

/// [`Inferred`] with owned names, ready to be stored in its graph.
pub(crate) struct Stored {
    types: HashMap<String, ValueType>,
    folded: HashSet<String>,
    /// Per node holding subgraphs, their types.
    subs: Vec<(NodeId, Vec<SubTypes>)>,
}

impl Stored {
    /// Stores the results in `g`: its types and folded values, and the types of the subgraphs
    /// its nodes hold (one level: as inference has always stored them).
    pub(crate) fn store(self, g: &mut Graph) {
        g.types = self.types;
        g.folded = self.folded;
        for (id, subs) in self.subs {
            let Some(node) = g.node_mut(id) else { continue };
            for (pos, idx, types) in subs {
                let target = match node.attributes.get_mut(pos).map(|a| &mut a.value) {
                    Some(AttrValue::Graph(b)) if idx == 0 => Some(&mut **b),
                    Some(AttrValue::Graphs(gs)) => gs.get_mut(idx),
                    _ => None,
                };
                if let Some(t) = target {
                    t.types = types;
                }
            }
        }
    }
}

/// What a graph under inference sees of the graphs around it: a chain of borrowed frames, so
/// inferring a subgraph copies nothing of its enclosing scope (a copy per subgraph made a
/// graph of N `If` nodes quadratic).
enum Env<'a> {
    Root(&'a Scope),
    Frame {
        parent: &'a Env<'a>,
        types: &'a HashMap<&'a str, ValueType>,
        folded: &'a HashMap<&'a str, Tensor>,
        initializers: &'a indexmap::IndexMap<String, Tensor>,
    },
}

impl<'a> Env<'a> {
    fn ty(&self, name: &str) -> Option<&'a ValueType> {
        match self {
            Env::Root(s) => s.types.get(name),
            Env::Frame { parent, types, .. } => types.get(name).or_else(|| parent.ty(name)),
        }
    }

    fn konst(&self, name: &str) -> Option<&'a Tensor> {
        match self {
            Env::Root(s) => s.consts.get(name),
            Env::Frame {
                parent,
                folded,
                initializers,
                ..
            } => folded
                .get(name)
                .or_else(|| foldable(initializers.get(name)?))
                .or_else(|| parent.konst(name)),
        }
    }
}

/// An initializer small enough to propagate as a constant.
fn foldable(t: &Tensor) -> Option<&Tensor> {
    (t.num_elements() <= MAX_FOLD_ELEMENTS && !t.is_external()).then_some(t)
}

/// Infers `g` without changing it; `inputs` overrides the declared types of its inputs by
/// position (`None`: as declared). Problems are added to `report`.
fn run<'g>(
    g: &'g Graph,
    opset: i64,
    env: &Env<'_>,
    opts: Options,
    inputs: &[Option<ValueType>],
    depth: usize,
    report: &mut Report,
) -> Inferred<'g> {
    let reg = Registry::global();
    let mut types = input_types(g, env, inputs);
    // Constants folded from this graph's nodes (initializers are read where they are).
    let mut consts: HashMap<&str, Tensor> = HashMap::new();
    let order = match g.topo_order() {
        Ok(o) => o,
        Err(e) => {
            report
                .errors
                .push((g.name.clone().unwrap_or_default(), e.to_string()));
            g.node_ids()
        }
    };
    let declared = declared_types(g, opts);
    let mut subs: HashMap<NodeId, Vec<(usize, usize, Inferred<'g>)>> = HashMap::new();
    let mut folded = HashSet::new();
    for id in order {
        let node = g.node(id).unwrap();
        // Subgraphs first, with the current scope visible.
        let frame = Env::Frame {
            parent: env,
            types: &types,
            folded: &consts,
            initializers: &g.initializers,
        };
        let (subgraph_outputs, inferred_subs) =
            infer_subgraphs(node, opset, &frame, opts, depth, report);
        if !inferred_subs.is_empty() {
            subs.insert(id, inferred_subs);
        }
        let lookup = |i: &str| types.get(i).or_else(|| env.ty(i));
        const UNKNOWN: ValueType = ValueType::Unknown;
        let inputs: Vec<Option<Cow<'_, ValueType>>> = node
            .inputs
            .iter()
            .map(|i| {
                if i.is_empty() {
                    None
                } else {
                    Some(Cow::Borrowed(lookup(i).unwrap_or(&UNKNOWN)))
                }
            })
            .collect();
        let input_consts: Vec<Option<Cow<'_, Tensor>>> = node
            .inputs
            .iter()
            .map(|i| {
                if i.is_empty() {
                    return None;
                }
                consts
                    .get(i.as_str())
                    .or_else(|| foldable(g.initializers.get(i)?))
                    .or_else(|| env.konst(i))
                    .map(Cow::Borrowed)
            })
            .collect();
        let ctx = InferCtx {
            node,
            opset,
            inputs,
            consts: input_consts,
            subgraph_outputs,
        };
        let (outs, vals) = infer_node(reg, &ctx, report);
        for (name, t) in node.outputs.iter().zip(vals.into_iter().flatten()) {
            if !name.is_empty() && t.num_elements() <= MAX_FOLD_ELEMENTS {
                folded.insert(name.as_str());
                consts.insert(name.as_str(), t);
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
            types.insert(name, t);
        }
    }
    Inferred {
        types,
        folded,
        subs,
    }
}

/// The types of `g`'s initializers and inputs: declared (or as `inputs` overrides them by
/// position), refined by what the graph or its outer scopes know of the same name.
fn input_types<'g>(
    g: &'g Graph,
    env: &Env<'_>,
    inputs: &[Option<ValueType>],
) -> HashMap<&'g str, ValueType> {
    let mut types: HashMap<&'g str, ValueType> =
        HashMap::with_capacity(g.initializers.len() + g.inputs.len() + g.node_count());
    for (name, t) in &g.initializers {
        types.insert(name, ValueType::Tensor(t.tensor_type()));
    }
    for (i, v) in g.inputs.iter().enumerate() {
        let name = v.name.as_deref().unwrap_or("");
        let declared = match inputs.get(i).and_then(Option::as_ref) {
            Some(t) => Some(ValueType::from_proto(&t.to_proto())),
            None => v.r#type.as_ref().map(ValueType::from_proto),
        };
        let existing = types.get(name).or_else(|| env.ty(name));
        let t = match (declared, existing) {
            (Some(d), Some(e)) => refine(&d, e),
            (Some(d), None) => d,
            (None, Some(e)) => e.clone(),
            (None, None) => ValueType::Unknown,
        };
        types.insert(name, t);
    }
    types
}

/// The types `g` declares for its values and outputs (what inference refines), when
/// `opts.use_declared`.
fn declared_types(g: &Graph, opts: Options) -> HashMap<&str, ValueType> {
    if !opts.use_declared {
        return HashMap::new();
    }
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
}

/// The output types of each subgraph of a node, by attribute name.
type SubgraphOutputs = HashMap<String, Vec<Vec<ValueType>>>;

/// Infers the subgraphs of `node` with the scope `frame` visible (none beyond
/// [`MAX_SUBGRAPH_DEPTH`]): their output types, and each one's inference by position.
fn infer_subgraphs<'g>(
    node: &'g Node,
    opset: i64,
    frame: &Env<'_>,
    opts: Options,
    depth: usize,
    report: &mut Report,
) -> (SubgraphOutputs, Vec<(usize, usize, Inferred<'g>)>) {
    let mut subgraph_outputs = SubgraphOutputs::new();
    let mut inferred_subs = Vec::new();
    if node.subgraphs().next().is_none() {
        return (subgraph_outputs, inferred_subs);
    }
    if depth >= MAX_SUBGRAPH_DEPTH {
        report.errors.push((
            node.label(),
            format!("subgraphs nest deeper than {MAX_SUBGRAPH_DEPTH} levels: not inferred"),
        ));
        return (subgraph_outputs, inferred_subs);
    }
    for (pos, idx, name, sub) in node.subgraphs_at() {
        let seeds = subgraph_input_types(sub, node, frame);
        let r = run(sub, opset, frame, opts, &seeds, depth + 1, report);
        let outs: Vec<ValueType> = sub
            .outputs
            .iter()
            .map(|o| {
                r.types
                    .get(o.name.as_deref().unwrap_or(""))
                    .cloned()
                    .unwrap_or(ValueType::Unknown)
            })
            .collect();
        subgraph_outputs
            .entry(name.to_string())
            .or_default()
            .push(outs);
        inferred_subs.push((pos, idx, r));
    }
    (subgraph_outputs, inferred_subs)
}

/// What the registry says of one node: its output types (unknown where the op has no spec
/// or its inference fails) and the values its folder computes; `requires` and `ambiguous`
/// findings go to `report`.
fn infer_node(
    reg: &Registry,
    ctx: &InferCtx,
    report: &mut Report,
) -> (Vec<ValueType>, Option<Vec<Tensor>>) {
    let node = ctx.node;
    let mut outs: Vec<ValueType> = vec![ValueType::Unknown; node.outputs.len()];
    let Some(spec) = reg.for_node(node) else {
        let key = if node.domain().is_empty() {
            node.op_type.clone()
        } else {
            format!("{}.{}", node.domain(), node.op_type)
        };
        *report.unknown_ops.entry(key).or_default() += 1;
        return (outs, None);
    };
    if let Some(requires) = spec.requires
        && let Err(e) = requires(ctx)
    {
        report.errors.push((node.label(), e.to_string()));
    }
    if let Some(ambiguous) = spec.ambiguous
        && let Err(e) = ambiguous(ctx)
    {
        report.ambiguous.push((node.label(), e.to_string()));
    }
    match (spec.infer)(ctx) {
        Ok(v) => {
            for (o, t) in outs.iter_mut().zip(v) {
                *o = t;
            }
        }
        Err(e) => report.errors.push((node.label(), e.to_string())),
    }
    (outs, spec.fold.and_then(|fold| fold(ctx)))
}

/// Infers the model's main graph (and subgraphs) without changing the model.
pub(crate) fn run_model<'m>(m: &'m Model, opts: Options, report: &mut Report) -> Inferred<'m> {
    run(
        &m.graph,
        m.default_opset(),
        &Env::Root(&Scope::default()),
        opts,
        &[],
        0,
        report,
    )
}

/// Infers `g` without changing it, its inputs typed `inputs` by position where given (the
/// declared type otherwise).
pub(crate) fn run_graph_with_inputs<'g>(
    g: &'g Graph,
    opset: i64,
    outer: &Scope,
    opts: Options,
    inputs: &[Option<ValueType>],
    report: &mut Report,
) -> Inferred<'g> {
    run(g, opset, &Env::Root(outer), opts, inputs, 0, report)
}

/// The types Loop bodies' inputs will have where the body does not declare them, by position
/// (`None`: as declared). Other ops' subgraphs take their inputs as declared.
fn subgraph_input_types(
    sub: &Graph,
    node: &crate::graph::Node,
    outer: &Env<'_>,
) -> Vec<Option<ValueType>> {
    if node.op_type != "Loop" {
        return Vec::new();
    }
    let outer_t = |i: usize| -> ValueType {
        node.inputs
            .get(i)
            .filter(|s| !s.is_empty())
            .and_then(|s| outer.ty(s))
            .cloned()
            .unwrap_or(ValueType::Unknown)
    };
    let mut seeds: Vec<ValueType> = vec![
        ValueType::Tensor(TensorType::fixed(crate::DType::I64, &[])),
        ValueType::Tensor(TensorType::fixed(crate::DType::Bool, &[])),
    ];
    for i in 2..node.inputs.len() {
        seeds.push(outer_t(i));
    }
    sub.inputs
        .iter()
        .zip(seeds)
        .map(|(v, seed)| {
            let declared = v
                .r#type
                .as_ref()
                .map(ValueType::from_proto)
                .unwrap_or(ValueType::Unknown);
            let t = refine(&declared, &seed);
            (t != ValueType::Unknown).then_some(t)
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_without_a_type_are_declared_from_inference() {
        let mut m = crate::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[2,3] X, Z) => (Y, int64[2] S, U)\n{\n  Y = Relu (X)\n  S = Shape (X)\n  U = Neg (Z)\n}",
        )
        .unwrap();
        infer_model(&mut m, Options::default());
        // U reads an input of unknown type: nothing to declare.
        assert_eq!(declare_output_types(&mut m.graph), vec!["U".to_string()]);
        let declared = |i: usize| {
            m.graph.outputs[i]
                .r#type
                .as_ref()
                .map(ValueType::from_proto)
        };
        assert_eq!(
            declared(0),
            Some(ValueType::Tensor(TensorType::fixed(
                crate::DType::F32,
                &[2, 3]
            )))
        );
        assert_eq!(
            declared(1),
            Some(ValueType::Tensor(TensorType::fixed(
                crate::DType::I64,
                &[2]
            )))
        );
        assert_eq!(declared(2), None);
    }
}
