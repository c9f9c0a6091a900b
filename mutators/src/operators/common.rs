//! What several operators need: the backbone of a model, candidate values and weights.
use crate::error::BuildError;
use crate::ir::registry::{Registry, Traits};
use crate::ir::types::TensorType;
use crate::ir::{DType, Model, NodeId};
use crate::mutation::{Ctx, Limits};
use std::collections::HashMap;

/// Node output values on the model's backbone: the longest input-to-output path (counted in
/// ops), in order. How-Far (finding 10) reports that mutating the backbone rather than side
/// branches gives larger inconsistencies, so operators pick backbone sites first.
pub fn backbone(model: &Model) -> Vec<String> {
    let g = &model.graph;
    let Ok(order) = g.topo_order() else {
        return Vec::new();
    };
    let producers = g.producers();
    // Longest path (in ops) ending at each node, and the predecessor on it.
    let mut best: HashMap<NodeId, (usize, Option<NodeId>)> = HashMap::new();
    for &id in &order {
        let n = g.node(id).unwrap();
        let mut here = (1, None);
        for i in n.present_inputs() {
            if let Some(&(p, _)) = producers.get(i)
                && let Some(&(len, _)) = best.get(&p)
                && len + 1 > here.0
            {
                here = (len + 1, Some(p));
            }
        }
        best.insert(id, here);
    }
    // End at the producer of a graph output with the longest path.
    let end = g
        .outputs
        .iter()
        .filter_map(|o| producers.get(o.name.as_deref()?).map(|&(p, _)| p))
        .max_by_key(|p| (best[p].0, std::cmp::Reverse(p.0)));
    let mut path = Vec::new();
    let mut cur = end;
    while let Some(id) = cur {
        path.push(id);
        cur = best[&id].1;
    }
    path.reverse();
    path.iter()
        .filter_map(|&id| g.node(id)?.outputs.first().cloned())
        .filter(|o| !o.is_empty())
        .collect()
}

/// Node outputs (main graph) whose type is a tensor of known dtype and static shape, and
/// whose contents are not computed before the run: a value inference folds is a shape
/// computation (`Shape → Gather → Concat` into a Reshape, Resize or Slice) or arithmetic on
/// constants, and an op put there makes the shape it computes unknown until the run, where it
/// may not fit (the real-model campaign's invalid mutants: a Reshape target grown from a OneHot,
/// a Resize `sizes` of unknown length that ONNX Runtime refuses at load).
pub fn static_values(model: &Model) -> Vec<(String, TensorType)> {
    let g = &model.graph;
    let mut v = Vec::new();
    for id in g.topo_order().unwrap_or_default() {
        for o in &g.node(id).unwrap().outputs {
            if o.is_empty() || g.folded.contains(o) {
                continue;
            }
            if let Some(t) = g.value_type(o).tensor()
                && t.dtype.is_known()
                && t.static_dims().is_some()
            {
                v.push((o.clone(), t.clone()));
            }
        }
    }
    v
}

/// A value to mutate at: with probability 0.8 one on the backbone (when the backbone has one
/// that `ok` accepts), otherwise any accepted static value.
pub fn pick_value(
    model: &Model,
    ctx: &mut Ctx<'_>,
    ok: impl Fn(&str, &TensorType) -> bool,
) -> Option<(String, TensorType)> {
    let all: Vec<(String, TensorType)> = static_values(model)
        .into_iter()
        .filter(|(n, t)| ok(n, t))
        .collect();
    if all.is_empty() {
        return None;
    }
    if ctx.chance(0.8) {
        let spine = backbone(model);
        let on: Vec<&(String, TensorType)> =
            all.iter().filter(|(n, _)| spine.contains(n)).collect();
        if !on.is_empty() {
            return Some(on[ctx.below(on.len())].clone());
        }
    }
    Some(all[ctx.below(all.len())].clone())
}

/// Float inputs that are coordinates or sizes, not learned weights: shuffling or scaling them
/// changes what the op means (a region with x2 < x1, a grid outside [-1, 1]), not its weights.
const NOT_WEIGHTS: &[&str] = &[
    "rois",
    "roi",
    "scales",
    "sizes",
    "grid",
    "boxes",
    "theta",
    "condition",
    "sequence_lens",
];

/// The schema's name of input `slot` of `n` (the last port for variadic tails).
fn port_name(n: &crate::ir::graph::Node, slot: usize) -> Option<&'static str> {
    let spec = crate::ir::registry::Registry::global().for_node(n)?;
    spec.inputs
        .get(slot)
        .or_else(|| spec.inputs.last())
        .map(|p| p.name)
}

/// Float initializers read by ops (the weights of the model), as (initializer, reader node).
pub fn weights(model: &Model) -> Vec<(String, NodeId)> {
    let g = &model.graph;
    let mut v = Vec::new();
    for n in g.nodes() {
        for (slot, i) in n.inputs.iter().enumerate() {
            if i.is_empty() || port_name(n, slot).is_some_and(|p| NOT_WEIGHTS.contains(&p)) {
                continue;
            }
            if let Some(t) = g.initializers.get(i) {
                let d = DType::from_code(t.data_type.unwrap_or(0));
                let numel: i64 = t.dims.iter().product();
                if d.is_float() && numel > 1 && !v.iter().any(|(w, _)| w == i) {
                    v.push((i.to_string(), n.id));
                }
            }
        }
    }
    v
}

/// Whether `op` (default domain) is an activation: its spec has [`Traits::ACTIVATION`]
/// (How-Far AFRm / AFRp; Softmax counts, as in Keras, where LEMON's activation operators come
/// from).
pub fn is_activation(op: &str) -> bool {
    Registry::global().has(op, Traits::ACTIVATION)
}

/// The activation op types, sorted by name.
pub fn activations() -> Vec<&'static str> {
    Registry::global().with_traits(Traits::ACTIVATION)
}

/// The op types that only move or reshape data (MEMO LResh): the specs with
/// [`Traits::RESHAPING`], sorted by name.
pub fn reshaping() -> Vec<&'static str> {
    Registry::global().with_traits(Traits::RESHAPING)
}

/// Op keys present in the model's main graph (`domain::Op` outside the default domain).
pub fn model_op_types(model: &Model) -> std::collections::BTreeSet<String> {
    model.graph.nodes().map(|n| n.key()).collect()
}

/// Producer → consumer op-type pairs present in the model's main graph (data edges).
pub fn model_pairs(model: &Model) -> std::collections::HashSet<(String, String)> {
    let g = &model.graph;
    let producers = g.producers();
    let mut s = std::collections::HashSet::new();
    for n in g.nodes() {
        for i in n.present_inputs() {
            if let Some(&(p, _)) = producers.get(i)
                && let Some(pn) = g.node(p)
            {
                s.insert((pn.key(), n.key()));
            }
        }
    }
    s
}

/// Orders `items` by preference: `first` before not `first`, and within each, `second`
/// before not `second`; each of the four groups shuffled.
pub fn prefer<T>(
    ctx: &mut Ctx<'_>,
    items: Vec<T>,
    first: impl Fn(&T) -> bool,
    second: impl Fn(&T) -> bool,
) -> Vec<T> {
    let mut groups: [Vec<T>; 4] = Default::default();
    for x in items {
        let k = 2 * usize::from(!first(&x)) + usize::from(!second(&x));
        groups[k].push(x);
    }
    let mut out = Vec::new();
    for mut g in groups {
        ctx.shuffle(&mut g);
        out.extend(g);
    }
    out
}

/// Values that depend on `value` (outputs of every node downstream of its readers,
/// `value` included).
pub fn descendants(model: &Model, value: &str) -> std::collections::HashSet<String> {
    let g = &model.graph;
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    seen.insert(value.to_string());
    for id in g.topo_order().unwrap_or_default() {
        let n = g.node(id).unwrap();
        let reads = n.present_inputs().any(|i| seen.contains(i))
            || n.subgraphs()
                .any(|(_, sg)| sg.captured_names().iter().any(|c| seen.contains(c)));
        if reads {
            for o in n.outputs.iter().filter(|o| !o.is_empty()) {
                seen.insert(o.clone());
            }
        }
    }
    seen
}

/// Whether some node reads `value` from inside a subgraph (a reroute would not reach it).
pub fn captured_by_subgraph(model: &Model, value: &str) -> bool {
    model.graph.nodes().any(|n| {
        n.subgraphs()
            .any(|(_, sg)| sg.captured_names().contains(value))
    })
}

/// Whether `value` is a graph output.
pub fn is_graph_output(model: &Model, value: &str) -> bool {
    model
        .graph
        .outputs
        .iter()
        .any(|o| o.name.as_deref() == Some(value))
}

/// Whether `value` is a graph input (not an initializer).
pub fn is_graph_input(model: &Model, value: &str) -> bool {
    model
        .graph
        .real_inputs()
        .iter()
        .any(|o| o.name.as_deref() == Some(value))
}

/// The static tensor type of a value of the model.
pub fn static_type_of(model: &Model, value: &str) -> Option<TensorType> {
    let t = model.graph.value_type(value).tensor()?.clone();
    (t.dtype.is_known() && t.static_dims().is_some()).then_some(t)
}

/// A node that can be bypassed: it has exactly one present output, read by no subgraph, its
/// first input has the output's static type, and rerouting its readers to that input keeps
/// the graph outputs distinct and not bare graph inputs. Returns (input, output).
pub fn bypassable(model: &Model, id: NodeId) -> Option<(String, String)> {
    let n = model.graph.node(id)?;
    if n.subgraphs().next().is_some() {
        return None;
    }
    let outs: Vec<&String> = n.outputs.iter().filter(|o| !o.is_empty()).collect();
    if outs.len() != 1 || n.outputs.first().is_none_or(|o| o.is_empty()) {
        return None;
    }
    let out = outs[0].clone();
    let x = n.inputs.first().filter(|i| !i.is_empty())?.clone();
    if model.graph.initializers.contains_key(&x) {
        return None;
    }
    let (tx, ty) = (static_type_of(model, &x)?, static_type_of(model, &out)?);
    if tx != ty || captured_by_subgraph(model, &out) {
        return None;
    }
    if is_graph_output(model, &out) && (is_graph_output(model, &x) || is_graph_input(model, &x)) {
        return None;
    }
    Some((x, out))
}

/// Removes node `id` (bypassable, see [`bypassable`]) in `site`: its readers read its first
/// input, and the initializers only it reads (and that are not graph inputs) are removed.
pub fn bypass_and_remove(site: &mut crate::site::Site<'_>, id: NodeId, x: &str, out: &str) {
    site.reroute(out, x);
    remove_node(site, id, x);
}

/// Removes node `id` in `site`, with the initializers only it reads (except `keep`, and those
/// that are graph inputs or outputs). Its readers must be rerouted by the caller.
pub fn remove_node(site: &mut crate::site::Site<'_>, id: NodeId, keep: &str) {
    use crate::ir::patch::PatchOp;
    let model = site.model;
    let g = &model.graph;
    site.push(PatchOp::RemoveNode(id));
    let Some(n) = g.node(id) else { return };
    let mut removed: Vec<&str> = Vec::new();
    for i in n.present_inputs() {
        if g.initializers.contains_key(i)
            && i != keep
            && !removed.contains(&i)
            && !g.inputs.iter().any(|v| v.name.as_deref() == Some(i))
            && !is_graph_output(model, i)
            && g.consumers(i).iter().all(|&c| c == id)
        {
            removed.push(i);
            site.push(PatchOp::RemoveInitializer(i.to_string()));
        }
    }
}

/// Splices a chain of ops in after a value `x` of static type `t`: each op reads the chain's
/// current value (adapted back to `t` first when the op does not accept the current type),
/// and at the end the chain's value is adapted to `t` and every reader of `x` reads it.
pub struct Splice {
    x: String,
    t: TensorType,
    cur: String,
    cur_t: TensorType,
    /// Op types added, in order (recipe ops only, not adapters).
    pub ops: Vec<&'static str>,
}

impl Splice {
    /// A splice at `x` (of static type `t`).
    pub fn new(x: &str, t: &TensorType) -> Splice {
        Splice {
            x: x.to_string(),
            t: t.clone(),
            cur: x.to_string(),
            cur_t: t.clone(),
            ops: Vec::new(),
        }
    }

    /// The current end of the chain and its type.
    pub fn current(&self) -> (&str, &TensorType) {
        (&self.cur, &self.cur_t)
    }

    /// The op type whose output is the current end (`None` before the first push).
    pub fn last_op(&self) -> Option<&'static str> {
        self.ops.last().copied()
    }

    /// Whether `r` can read the current end directly.
    pub fn accepts_now(&self, r: &dyn crate::recipes::Recipe) -> bool {
        self.cur_t
            .rank()
            .is_some_and(|rank| r.accepts(self.cur_t.dtype, rank))
    }

    /// Adds recipe `r` at the end of the chain. On error the site may hold a partial edit:
    /// drop it.
    pub fn push(
        &mut self,
        site: &mut crate::site::Site<'_>,
        r: &dyn crate::recipes::Recipe,
        rng: &mut crate::builder::SplitMix64,
    ) -> Result<(), BuildError> {
        if !self.accepts_now(r) {
            let rank = self.t.rank().unwrap_or(0);
            if !r.accepts(self.t.dtype, rank) {
                return Err(BuildError::NotAccepted {
                    op: r.op_type().to_string(),
                });
            }
            self.cur = site.adapt(&self.cur, &self.t)?;
            self.cur_t = self.t.clone();
        }
        let y = r.build(site, &self.cur, &self.cur_t, rng)?;
        self.set(site, y, r.op_type())
    }

    /// Makes `y` (built by the caller from the current end) the new end.
    pub fn set(
        &mut self,
        site: &mut crate::site::Site<'_>,
        y: String,
        op: &'static str,
    ) -> Result<(), BuildError> {
        let yt = site
            .static_type(&y)
            .ok_or_else(|| BuildError::OutputNotStatic { op: op.to_string() })?;
        self.cur = y;
        self.cur_t = yt;
        self.ops.push(op);
        Ok(())
    }

    /// Adapts the end back to `t` and reroutes the readers of `x` to it; returns the value
    /// now read in place of `x`.
    pub fn finish(self, site: &mut crate::site::Site<'_>) -> Result<String, BuildError> {
        if self.ops.is_empty() {
            return Err(BuildError::EmptySplice);
        }
        let y = site.adapt(&self.cur, &self.t)?;
        site.reroute(&self.x, &y);
        Ok(y)
    }
}

/// How many nodes `model` may still gain under `limits` (`None` when it is at the limit).
pub(crate) fn node_room(model: &Model, limits: &Limits) -> Option<usize> {
    let room = limits.max_nodes.saturating_sub(model.graph.node_count());
    (room > 0).then_some(room)
}
