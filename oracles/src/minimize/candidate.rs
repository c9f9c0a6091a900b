//! Building candidate models from the current one: sub-models carved out of a node set (with
//! dead code eliminated, cut values turned into typed graph inputs or constant initializers),
//! and the final typing and validation every candidate goes through.
use crate::ir::attr::{AttrLookup, AttrValue, Attribute};
use crate::ir::graph::{Graph, Node, NodeId};
use crate::ir::patch::{Patch, PatchOp};
use crate::ir::registry::{InferCtx, Registry};
use crate::ir::tensor::{Tensor, TensorExt};
use crate::ir::types::{TensorType, ValueType};
use crate::ir::{Model, infer, pb, validate};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Constants larger than this many elements are not materialized from folding (initializers
/// and `Constant` tensors are taken whatever their size).
const MAX_FOLD_ELEMENTS: i64 = 4096;

/// Why a candidate is not a valid model (it is counted, never shown to the predicate).
#[derive(Clone, Debug)]
pub(crate) struct Invalid(pub String);

/// Which values the carved model outputs.
#[derive(Clone, Debug)]
pub(crate) enum OutputRule {
    /// The current outputs still produced, plus every value produced by a kept node and read
    /// by a removed one (so removing a suffix keeps its producers observable).
    Frontier,
    /// The current outputs still produced (after renames), nothing more.
    Original,
    /// Exactly these values (each must be produced by a kept node).
    Explicit(Vec<String>),
}

/// Values a node reads: present inputs, then names its subgraphs capture, without repeats.
pub(crate) fn reads(n: &Node) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in n.present_inputs() {
        if !out.iter().any(|o| o == i) {
            out.push(i.to_string());
        }
    }
    for (_, g) in n.subgraphs() {
        for c in g.captured_names() {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// Names captured by some node's subgraph in `g`.
pub(crate) fn captured(g: &Graph) -> HashSet<String> {
    g.nodes()
        .flat_map(|n| n.subgraphs().flat_map(|(_, s)| s.captured_names()))
        .collect()
}

/// Node-produced values of `m` whose value is a known constant (a `Constant`'s tensor, or what
/// the registry's folding finds from initializers and static shapes), as named tensors. Only
/// tensors matching the inferred type of their value are kept.
pub(crate) fn constants(m: &Model) -> HashMap<String, Tensor> {
    let g = &m.graph;
    let reg = Registry::global();
    let opset = m.default_opset();
    let mut known: HashMap<String, Tensor> = g
        .initializers
        .iter()
        .filter(|(_, t)| t.num_elements() <= MAX_FOLD_ELEMENTS && !t.is_external())
        .map(|(k, t)| (k.clone(), t.clone()))
        .collect();
    let mut out = HashMap::new();
    let Ok(order) = g.topo_order() else {
        return out;
    };
    for id in order {
        let Some(n) = g.node(id) else { continue };
        let mut produced: Vec<(String, Tensor)> = Vec::new();
        if n.op_type == "Constant"
            && n.domain().is_empty()
            && let Some(AttrValue::Tensor(t)) = n.attr("value")
            && let Some(o) = n.outputs.first().filter(|o| !o.is_empty())
        {
            produced.push((o.clone(), t.clone()));
        } else if n.subgraphs().next().is_none()
            && let Some(fold) = reg.for_node(n).and_then(|s| s.fold)
        {
            let inputs = n
                .inputs
                .iter()
                .map(|i| (!i.is_empty()).then(|| g.value_type(i)))
                .collect();
            let consts = n.inputs.iter().map(|i| known.get(i).cloned()).collect();
            let ctx = InferCtx::new(n, opset, inputs, consts);
            if let Some(vals) = fold(&ctx) {
                for (name, t) in n.outputs.iter().zip(vals) {
                    if !name.is_empty() && t.num_elements() <= MAX_FOLD_ELEMENTS {
                        produced.push((name.clone(), t));
                    }
                }
            }
        }
        for (name, mut t) in produced {
            let fits = match g.value_type(&name) {
                ValueType::Tensor(tt) => {
                    tt.dtype == t.dtype()
                        && tt.static_dims().is_none_or(|d| d == t.dims)
                        && tt.rank().is_none_or(|r| r == t.dims.len())
                }
                ValueType::Unknown => true,
                _ => false,
            };
            if !fits || !t.dtype().is_known() {
                continue;
            }
            t.name = Some(name.clone());
            if t.num_elements() <= MAX_FOLD_ELEMENTS && !t.is_external() {
                known.insert(name.clone(), t.clone());
            }
            out.insert(name, t);
        }
    }
    out
}

/// A graph input / output declaration.
fn info(name: &str, t: &ValueType) -> pb::ValueInfoProto {
    pb::ValueInfoProto {
        name: Some(name.to_string()),
        r#type: (*t != ValueType::Unknown).then(|| t.to_proto()),
        ..Default::default()
    }
}

/// True when a value of this type can be declared as a graph input.
pub(crate) fn declarable(t: &ValueType) -> bool {
    match t {
        ValueType::Tensor(tt) | ValueType::SparseTensor(tt) => tt.dtype.is_known(),
        ValueType::Unknown => false,
        _ => t.is_fully_known(),
    }
}

/// The sub-model of `cur` made of the nodes in `keep` (ids not in `cur` are ignored), after
/// the renames (`old → new`: every node input and graph output reading `old` reads `new`),
/// with outputs chosen by `rule`, dead nodes (no output depends on them) removed, values read
/// from removed nodes made constant initializers (when `consts` knows them) or typed graph
/// inputs, and unused inputs and initializers dropped. The result is validated.
pub(crate) fn carve(
    cur: &Model,
    consts: &HashMap<String, Tensor>,
    keep: &BTreeSet<NodeId>,
    renames: &[(String, String)],
    rule: &OutputRule,
) -> Result<Model, Invalid> {
    let g = &cur.graph;
    let flow = Flow::new(g, keep, renames)?;
    let outs = flow.outputs(g, keep, renames, rule)?;
    let needed = flow.needed(&outs);
    let external = flow.external(&needed);
    let boundary = Boundary::new(g, consts, &external)?;
    let p = carve_patch(g, &needed, renames, &outs, boundary);
    let mut m = cur.clone();
    m.apply(&p).map_err(|e| Invalid(e.to_string()))?;
    finalize(m, cur)
}

/// `v` after the renames (`old → new`).
fn renamed(renames: &[(String, String)], v: &str) -> String {
    renames
        .iter()
        .find(|(o, _)| o == v)
        .map_or_else(|| v.to_string(), |(_, n)| n.clone())
}

/// Pushes `v` unless `outs` has it.
fn push_new(v: String, outs: &mut Vec<String>) {
    if !outs.contains(&v) {
        outs.push(v);
    }
}

/// The data flow of a graph as [`carve`] sees it: its nodes in topological order, what each
/// reads (after the renames) and which kept node produces each value.
struct Flow {
    order: Vec<NodeId>,
    node_reads: HashMap<NodeId, Vec<String>>,
    producer: HashMap<String, NodeId>,
}

impl Flow {
    fn new(
        g: &Graph,
        keep: &BTreeSet<NodeId>,
        renames: &[(String, String)],
    ) -> Result<Flow, Invalid> {
        let order = g.topo_order().map_err(|e| Invalid(e.to_string()))?;
        let node_reads: HashMap<NodeId, Vec<String>> = order
            .iter()
            .filter_map(|&id| g.node(id))
            .map(|n| {
                let mut r: Vec<String> = Vec::new();
                for v in reads(n) {
                    push_new(renamed(renames, &v), &mut r);
                }
                (n.id, r)
            })
            .collect();
        let mut producer: HashMap<String, NodeId> = HashMap::new();
        for &id in &order {
            if keep.contains(&id)
                && let Some(n) = g.node(id)
            {
                for o in n.outputs.iter().filter(|o| !o.is_empty()) {
                    producer.insert(o.clone(), id);
                }
            }
        }
        Ok(Flow {
            order,
            node_reads,
            producer,
        })
    }

    /// The carved model's outputs, as `rule` chooses them.
    fn outputs(
        &self,
        g: &Graph,
        keep: &BTreeSet<NodeId>,
        renames: &[(String, String)],
        rule: &OutputRule,
    ) -> Result<Vec<String>, Invalid> {
        let mut outs: Vec<String> = Vec::new();
        match rule {
            OutputRule::Frontier | OutputRule::Original => {
                for o in &g.outputs {
                    let v = renamed(renames, o.name.as_deref().unwrap_or(""));
                    if self.producer.contains_key(&v) {
                        push_new(v, &mut outs);
                    }
                }
                if matches!(rule, OutputRule::Frontier) {
                    for id in self.order.iter().filter(|id| !keep.contains(id)) {
                        for r in &self.node_reads[id] {
                            if self.producer.contains_key(r) {
                                push_new(r.clone(), &mut outs);
                            }
                        }
                    }
                }
            }
            OutputRule::Explicit(list) => {
                for v in list {
                    if !self.producer.contains_key(v) {
                        return Err(Invalid(format!("output '{v}' is not produced")));
                    }
                    push_new(v.clone(), &mut outs);
                }
            }
        }
        if outs.is_empty() {
            return Err(Invalid("no outputs left".into()));
        }
        Ok(outs)
    }

    /// Dead code elimination: the kept nodes the outputs `outs` depend on.
    fn needed(&self, outs: &[String]) -> BTreeSet<NodeId> {
        let mut needed: BTreeSet<NodeId> = BTreeSet::new();
        let mut stack: Vec<NodeId> = outs.iter().map(|o| self.producer[o]).collect();
        while let Some(id) = stack.pop() {
            if needed.insert(id) {
                for r in &self.node_reads[&id] {
                    if let Some(&p) = self.producer.get(r) {
                        stack.push(p);
                    }
                }
            }
        }
        needed
    }

    /// Values the `needed` nodes read from outside, in topological order of their first
    /// reader.
    fn external(&self, needed: &BTreeSet<NodeId>) -> Vec<String> {
        let mut external: Vec<String> = Vec::new();
        for id in self.order.iter().filter(|id| needed.contains(id)) {
            for r in &self.node_reads[id] {
                if !self.producer.contains_key(r) && !external.contains(r) {
                    external.push(r.clone());
                }
            }
        }
        external
    }
}

/// Where the values a carved model reads from outside come from: the graph's own inputs and
/// initializers it keeps, and the constant initializers and typed inputs it gains.
struct Boundary<'a> {
    keep_inits: HashSet<&'a str>,
    keep_inputs: HashSet<&'a str>,
    new_inits: Vec<Tensor>,
    new_inputs: Vec<pb::ValueInfoProto>,
}

impl<'a> Boundary<'a> {
    fn new(
        g: &Graph,
        consts: &HashMap<String, Tensor>,
        external: &'a [String],
    ) -> Result<Boundary<'a>, Invalid> {
        let sparse: HashSet<&str> = g
            .sparse_initializers
            .iter()
            .filter_map(|s| s.values.as_ref().and_then(|v| v.name.as_deref()))
            .collect();
        let declared_inputs: HashSet<&str> =
            g.inputs.iter().filter_map(|v| v.name.as_deref()).collect();
        let mut b = Boundary {
            keep_inits: HashSet::new(),
            keep_inputs: HashSet::new(),
            new_inits: Vec::new(),
            new_inputs: Vec::new(),
        };
        for v in external {
            let in_init = g.initializers.contains_key(v);
            if in_init {
                b.keep_inits.insert(v);
            }
            if declared_inputs.contains(v.as_str()) {
                b.keep_inputs.insert(v);
            }
            if in_init || declared_inputs.contains(v.as_str()) || sparse.contains(v.as_str()) {
                continue;
            }
            if let Some(t) = consts.get(v) {
                b.new_inits.push(t.clone());
                continue;
            }
            let t = g.value_type(v);
            if !declarable(&t) {
                return Err(Invalid(format!(
                    "value '{v}' would be an input of unknown type"
                )));
            }
            b.new_inputs.push(info(v, &t));
        }
        Ok(b)
    }
}

/// The one patch that turns `g` into the carved graph: the nodes not `needed` removed, the
/// renames applied, the outputs `outs` declared, the inputs and initializers of `boundary`.
fn carve_patch(
    g: &Graph,
    needed: &BTreeSet<NodeId>,
    renames: &[(String, String)],
    outs: &[String],
    boundary: Boundary<'_>,
) -> Patch {
    let mut p = Patch::new();
    for id in g.node_ids() {
        if !needed.contains(&id) {
            p.push(PatchOp::RemoveNode(id));
        }
    }
    let mut seen: HashSet<&str> = HashSet::new();
    for o in &g.outputs {
        if let Some(name) = o.name.as_deref()
            && seen.insert(name)
        {
            p.push(PatchOp::RemoveOutput(name.to_string()));
        }
    }
    for (old, new) in renames {
        p.push(PatchOp::ReplaceUses {
            old: old.clone(),
            new: new.clone(),
        });
    }
    for o in outs {
        let mut decl = g
            .outputs
            .iter()
            .find(|d| d.name.as_deref() == Some(o.as_str()))
            .cloned()
            .unwrap_or_else(|| info(o, &ValueType::Unknown));
        let t = g.value_type(o);
        if t != ValueType::Unknown {
            decl.r#type = Some(t.to_proto());
        }
        p.push(PatchOp::AddOutput(decl));
    }
    let mut seen: HashSet<&str> = HashSet::new();
    for v in &g.inputs {
        if let Some(name) = v.name.as_deref()
            && seen.insert(name)
        {
            p.push(PatchOp::RemoveInput(name.to_string()));
        }
    }
    let mut seen: HashSet<&str> = HashSet::new();
    for v in &g.inputs {
        if let Some(name) = v.name.as_deref()
            && boundary.keep_inputs.contains(name)
            && seen.insert(name)
        {
            p.push(PatchOp::AddInput(v.clone()));
        }
    }
    for v in boundary.new_inputs {
        p.push(PatchOp::AddInput(v));
    }
    for name in g.initializers.keys() {
        if !boundary.keep_inits.contains(name.as_str()) {
            p.push(PatchOp::RemoveInitializer(name.clone()));
        }
    }
    for t in boundary.new_inits {
        p.push(PatchOp::AddInitializer(t));
    }
    p
}

/// `cur` with the attribute `name` of node `id` removed (the op then takes its default), its
/// declared shapes forgotten so that inference retypes what the change reshapes.
pub(crate) fn without_attribute(cur: &Model, id: NodeId, name: &str) -> Result<Model, Invalid> {
    let node = cur
        .graph
        .node(id)
        .ok_or_else(|| Invalid("no such node".into()))?;
    if !node.attributes.iter().any(|a| a.name == name) {
        return Err(Invalid(format!("no attribute '{name}'")));
    }
    let mut n2 = node.clone();
    n2.attributes.retain(|a| a.name != name);
    let mut m = cur.clone();
    let mut p = Patch::new();
    p.push(PatchOp::ReplaceNode(id, n2));
    m.apply(&p).map_err(|e| Invalid(e.to_string()))?;
    forget_declared_shapes(&mut m)?;
    finalize(m, cur)
}

/// `cur` with the attribute `name` of node `id` set to `value` (its declared shapes forgotten,
/// as [`without_attribute`] does).
pub(crate) fn with_attribute(
    cur: &Model,
    id: NodeId,
    name: &str,
    value: AttrValue,
) -> Result<Model, Invalid> {
    let node = cur
        .graph
        .node(id)
        .ok_or_else(|| Invalid("no such node".into()))?;
    let mut n2 = node.clone();
    n2.attributes.retain(|a| a.name != name);
    n2.attributes.push(Attribute::new(name, value));
    let mut m = cur.clone();
    let mut p = Patch::new();
    p.push(PatchOp::ReplaceNode(id, n2));
    m.apply(&p).map_err(|e| Invalid(e.to_string()))?;
    forget_declared_shapes(&mut m)?;
    finalize(m, cur)
}

/// [`without_attribute`] for the trigger search: the model without the attribute computes the
/// same function where the attribute only says how the node reads and writes its values. An
/// RNN, GRU or LSTM without `layout` = 1 reads sequence-major values: its batch-major inputs
/// are transposed before it and its outputs back after it ([`without_layout`]), so that a bug
/// that does not need the layout stays.
pub(crate) fn without_attribute_keeping_function(
    cur: &Model,
    id: NodeId,
    name: &str,
) -> Result<Model, Invalid> {
    let node = cur
        .graph
        .node(id)
        .ok_or_else(|| Invalid("no such node".into()))?;
    let recurrent = matches!(node.op_type.as_str(), "RNN" | "GRU" | "LSTM");
    if name == "layout" && recurrent && node.attributes.int("layout", 0) == 1 {
        without_layout(cur, id)
    } else {
        without_attribute(cur, id, name)
    }
}

/// The recurrent node `id` with `layout` = 1 removed and Transposes around it: X, initial_h
/// and initial_c from [batch, ...] to [seq or directions, batch, ...]; Y from
/// [seq, directions, batch, hidden] back to [batch, seq, directions, hidden], Y_h and Y_c from
/// [directions, batch, hidden] back to [batch, directions, hidden].
fn without_layout(cur: &Model, id: NodeId) -> Result<Model, Invalid> {
    let node = cur
        .graph
        .node(id)
        .ok_or_else(|| Invalid("no such node".into()))?;
    let mut n2 = node.clone();
    n2.attributes.retain(|a| a.name != "layout");
    let mut p = Patch::new();
    let transpose = |from: &str, to: &str, perm: &[i64]| {
        PatchOp::AddNode(
            Node::new("Transpose", &[from], &[to])
                .with_attr("perm", AttrValue::Ints(perm.to_vec())),
        )
    };
    for slot in [0usize, 5, 6] {
        if let Some(v) = node.inputs.get(slot).filter(|v| !v.is_empty()) {
            let moved = format!("{v}_seq_major");
            p.push(transpose(v, &moved, &[1, 0, 2]));
            n2.inputs[slot] = moved;
        }
    }
    for (slot, perm) in [
        (0usize, &[2i64, 0, 1, 3][..]),
        (1, &[1, 0, 2]),
        (2, &[1, 0, 2]),
    ] {
        if let Some(v) = node.outputs.get(slot).filter(|v| !v.is_empty()) {
            let moved = format!("{v}_seq_major");
            p.push(transpose(&moved, v, perm));
            n2.outputs[slot] = moved;
        }
    }
    p.push(PatchOp::ReplaceNode(id, n2));
    let mut m = cur.clone();
    m.apply(&p).map_err(|e| Invalid(e.to_string()))?;
    forget_declared_shapes(&mut m)?;
    finalize(m, cur)
}

/// The bidirectional recurrent node `id` as one of its directions: `direction` removed
/// (forward) or `reverse`, each per-direction input (W, R, B, initial_h, initial_c, P) cut to
/// that direction's half by a Gather, the activations with their alphas and betas halved (the
/// forward ones first, as the operator lists them). Its outputs then hold one direction: the
/// model is valid only where no other node reads them.
pub(crate) fn one_direction(cur: &Model, id: NodeId, reverse: bool) -> Result<Model, Invalid> {
    let node = cur
        .graph
        .node(id)
        .ok_or_else(|| Invalid("no such node".into()))?;
    let recurrent = matches!(node.op_type.as_str(), "RNN" | "GRU" | "LSTM");
    if !recurrent || node.attributes.string("direction", "forward") != "bidirectional" {
        return Err(Invalid("not a bidirectional recurrent node".into()));
    }
    let half = usize::from(reverse);
    let mut n2 = node.clone();
    n2.attributes.retain(|a| a.name != "direction");
    if reverse {
        n2.attributes.push(Attribute::new(
            "direction",
            AttrValue::String(b"reverse".to_vec()),
        ));
    }
    for a in &mut n2.attributes {
        let halved = match &a.value {
            AttrValue::Strings(v) if a.name == "activations" => AttrValue::Strings(halve(v, half)?),
            AttrValue::Floats(v) if a.name.starts_with("activation_") => {
                AttrValue::Floats(halve(v, half)?)
            }
            _ => continue,
        };
        a.value = halved;
    }
    let layout = node.attributes.int("layout", 0);
    let index = format!(
        "{}_direction_{half}",
        node.outputs.first().map_or("", |o| o.as_str())
    );
    let mut p = Patch::new();
    p.push(PatchOp::AddInitializer(crate::ir::tensor::from_i64s(
        &index,
        &[1],
        &[half as i64],
    )));
    for slot in [1usize, 2, 3, 5, 6, 7] {
        let Some(v) = node.inputs.get(slot).filter(|v| !v.is_empty()) else {
            continue;
        };
        // the states hold directions on axis 1 when batch-major
        let axis = i64::from(layout == 1 && matches!(slot, 5 | 6));
        let cut = format!("{v}_direction_{half}");
        p.push(PatchOp::AddNode(
            Node::new("Gather", &[v.as_str(), index.as_str()], &[cut.as_str()])
                .with_attr("axis", AttrValue::Int(axis)),
        ));
        n2.inputs[slot] = cut;
    }
    p.push(PatchOp::ReplaceNode(id, n2));
    let mut m = cur.clone();
    m.apply(&p).map_err(|e| Invalid(e.to_string()))?;
    forget_declared_shapes(&mut m)?;
    finalize(m, cur)
}

/// The first (`half` 0) or second half of a per-direction list.
fn halve<T: Clone>(v: &[T], half: usize) -> Result<Vec<T>, Invalid> {
    if !v.len().is_multiple_of(2) {
        return Err(Invalid("a per-direction list of odd length".into()));
    }
    let n = v.len() / 2;
    Ok(v[half * n..(half + 1) * n].to_vec())
}

/// Keeps the dtype and drops the shape of tensor declarations.
fn forget_shapes(decls: &mut [pb::ValueInfoProto]) {
    for v in decls {
        if let Some(tp) = &v.r#type
            && let ValueType::Tensor(t) = ValueType::from_proto(tp)
        {
            v.r#type = Some(ValueType::Tensor(TensorType::unranked(t.dtype)).to_proto());
        }
    }
}

/// Forgets the shapes declared for outputs and intermediate values, in the main graph and in
/// the subgraphs its nodes hold (after an input shape changed, so that inference rather than
/// stale declarations types them).
pub(crate) fn forget_declared_shapes(m: &mut Model) -> Result<(), Invalid> {
    let g = &mut m.graph;
    forget_shapes(&mut g.outputs);
    forget_shapes(&mut g.value_info);
    let mut p = Patch::new();
    for n in g.nodes() {
        if n.subgraphs().next().is_none() {
            continue;
        }
        let mut n2 = n.clone();
        for a in &mut n2.attributes {
            let subs: Vec<&mut Graph> = match &mut a.value {
                AttrValue::Graph(sg) => vec![sg.as_mut()],
                AttrValue::Graphs(gs) => gs.iter_mut().collect(),
                _ => Vec::new(),
            };
            for sg in subs {
                forget_shapes(&mut sg.outputs);
                forget_shapes(&mut sg.value_info);
            }
        }
        p.push(PatchOp::ReplaceNode(n.id, n2));
    }
    if !p.ops.is_empty() {
        m.apply(&p).map_err(|e| Invalid(e.to_string()))?;
    }
    Ok(())
}

/// The last step of every candidate made from `parent`: drops declarations of values that no
/// longer exist, runs shape inference and [`validate::check`] (cases ONNX leaves open refused
/// too, but for those `parent` already has), types the outputs (and kept declarations) from
/// inference, and requires every real graph input to be typed.
pub(crate) fn finalize(mut m: Model, parent: &Model) -> Result<Model, Invalid> {
    let defined: HashSet<String> = m
        .graph
        .nodes()
        .flat_map(|n| n.outputs.iter().filter(|o| !o.is_empty()).cloned())
        .collect();
    m.graph
        .value_info
        .retain(|v| v.name.as_deref().is_some_and(|n| defined.contains(n)));
    let rep = infer::infer_model(&mut m, infer::Options::default());
    if let Some((node, msg)) = rep.errors.first() {
        return Err(Invalid(format!("inference: node {node}: {msg}")));
    }
    // A smaller model never steps into what ONNX defines inconsistently (a report must rest
    // on the spec); what the model to minimize held already stays (a user's Conv with a SAME
    // pad that ONNX leaves open would otherwise keep the whole model from being minimized).
    if !rep.ambiguous.is_empty() {
        let mut before = parent.clone();
        let known = infer::infer_model(&mut before, infer::Options::default()).ambiguous;
        if let Some((node, msg)) = rep.ambiguous.iter().find(|a| !known.contains(a)) {
            return Err(Invalid(format!("ambiguous: node {node}: {msg}")));
        }
    }
    let d = validate::check(&m);
    if let Some(e) = d.errors.first() {
        return Err(Invalid(e.clone()));
    }
    let g = &mut m.graph;
    for v in g.outputs.iter_mut().chain(g.value_info.iter_mut()) {
        let name = v.name.clone().unwrap_or_default();
        if let Some(t) = g.types.get(&name).filter(|t| **t != ValueType::Unknown) {
            let declared = v
                .r#type
                .as_ref()
                .map(ValueType::from_proto)
                .unwrap_or(ValueType::Unknown);
            v.r#type = Some(infer::refine(t, &declared).to_proto());
        }
    }
    for v in g.real_inputs() {
        if v.r#type.is_none() {
            return Err(Invalid(format!(
                "graph input '{}' has no type",
                v.name.as_deref().unwrap_or("")
            )));
        }
    }
    Ok(m)
}

/// Main-graph node ids in topological order (empty if the graph has a cycle).
pub(crate) fn topo(m: &Model) -> Vec<NodeId> {
    m.graph.topo_order().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_backends::value::{Data, HostTensor, Value};

    #[test]
    fn a_recurrent_node_without_its_layout_computes_the_same() {
        let vals = |n: usize, k: f32| -> String {
            (0..n)
                .map(|i| format!("{:.3}", ((i as f32 * k).sin() * 0.5)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let src = format!(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[2, 3, 2] x, float[2, 1, 3] h0) => (float[2, 3, 1, 3] y, float[2, 1, 3] yh)\n\
             <float[1, 9, 2] w = {{{}}}, float[1, 9, 3] r = {{{}}}>\n\
             {{ y, yh = GRU <hidden_size: int = 3, layout: int = 1, direction: string = \"reverse\"> \
             (x, w, r, \"\", \"\", h0) }}",
            vals(18, 0.7),
            vals(27, 1.3)
        );
        let model = mutagraph_ir::text::parse_model(&src).unwrap();
        let id = model.graph.node_ids()[0];
        let moved = without_attribute_keeping_function(&model, id, "layout").unwrap();
        assert_eq!(moved.graph.node_count(), 5, "two Transposes in, two out");
        let f = |shape: Vec<usize>, n: usize| {
            let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).cos()).collect();
            Value::Tensor(HostTensor::new(shape, Data::F32(v)))
        };
        let inputs = vec![
            ("x".to_string(), f(vec![2, 3, 2], 12)),
            ("h0".to_string(), f(vec![2, 1, 3], 6)),
        ];
        let a = crate::localize::run_reference(&model, &inputs).unwrap();
        let b = crate::localize::run_reference(&moved, &inputs).unwrap();
        assert_eq!(a, b);
        // A plain removal reads the same values as sequence-major: another function.
        let plain = without_attribute(&model, id, "layout").unwrap();
        let c = crate::localize::run_reference(&plain, &inputs);
        assert!(c.map_or(true, |c| c != a));
    }
}
