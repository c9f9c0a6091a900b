//! Removals that change shapes: MEMO drops a repeated block when the *rank* of its input and
//! output agree and lets Keras rebuild the weights; an ONNX model has fixed weights. On the
//! (small) model the type-preserving removals leave, a data value `b` may be replaced by a nearby
//! ancestor `a` of the same element type and rank but other dims, when
//!
//! * every reader of `b` that has weights over the changed axis gets them adapted: the weight of
//!   a `Conv` / `ConvTranspose` with one group (input channels), the right operand of a
//!   `MatMul` / `Gemm` (the reduced axis); the adapted weight repeats the old one cyclically
//!   along that axis (`W'[.., c, ..] = W[.., c mod C, ..]`), in place when nothing else reads
//!   it, else as a new tensor;
//! * the edited model is valid and infers without new errors at its own input sizes and at every
//!   sample size of [`super::types`], with the same output types as before (a stride-2 `Conv`
//!   dropped before a `GlobalAveragePool` or before a resize to the input's size changes no
//!   output), and the same types of what inference sees through only partly (values read or
//!   captured by `If` / `Loop` / `Scan`, inputs of ops without a spec);
//! * its op type, op pair and parameter coverage is unchanged, and it has no more parameters
//!   (adapting a weight to more channels can make it larger than what goes).
//!
//! `a`, `b` and the watched values must have a type key ([`super::types`]: no dim unknown or 1 at
//! every sample size), else the sample sizes say nothing of them. Each candidate is checked on a
//! copy of the model, so this runs only on models of at most [`MAX_NODES`] nodes and at most
//! [`MAX_TRIALS`] candidates.
use super::Signature;
use super::search::window;
use super::types::{TypeKeys, infer_at};
use super::work::{Kind, NONE, Plan, Work};
use crate::ir::attr::{AttrLookup, AttrValue};
use crate::ir::ops::common::norm_axis;
use crate::ir::patch::{Patch, PatchOp};
use crate::ir::tensor::{self, Tensor, TensorExt};
use crate::ir::types::{Dim, ValueType};
use crate::ir::{DType, Model, Node, NodeId};
use std::collections::{HashMap, HashSet};

/// Largest model (nodes) this phase runs on.
pub(super) const MAX_NODES: usize = 3000;
/// Candidates checked at most.
pub(super) const MAX_TRIALS: usize = 800;
/// Candidates checked per value (the ones removing most first).
const PER_VALUE: usize = 3;

/// The types of the values whose types must not change, at the model's own sizes and at the
/// sample sizes, and how many inference errors it has there. Watched: the graph outputs, and
/// what inference sees through only partly: the values read (or captured) by nodes with
/// subgraphs and by ops without a spec.
struct Probe {
    sites: Vec<(usize, usize, usize)>,
    samples: Vec<Vec<i64>>,
    watched: Vec<String>,
    base: (Vec<ValueType>, usize),
    at: Vec<(Vec<ValueType>, usize)>,
}

fn watched_types(names: &[String], types: &HashMap<String, ValueType>) -> Vec<ValueType> {
    names
        .iter()
        .map(|n| types.get(n).cloned().unwrap_or(ValueType::Unknown))
        .collect()
}

impl Probe {
    fn new(m: &mut Model, keys: &TypeKeys) -> Probe {
        let mut watched: Vec<String> = m
            .graph
            .outputs
            .iter()
            .filter_map(|o| o.name.clone())
            .collect();
        let reg = crate::ir::registry::Registry::global();
        for n in m.graph.nodes() {
            let opaque = n.subgraphs().next().is_some() || reg.for_node(n).is_none();
            if opaque {
                watched.extend(n.present_inputs().map(str::to_string));
                for (_, sg) in n.subgraphs() {
                    watched.extend(sg.captured_names());
                }
            }
        }
        watched.sort();
        watched.dedup();
        let errors = crate::ir::infer::infer_model(m, Default::default())
            .errors
            .len();
        let base = (watched_types(&watched, &m.graph.types), errors);
        let saved = std::mem::take(&mut m.graph.types);
        let at = keys
            .samples
            .iter()
            .map(|v| {
                let (t, e) = infer_at(m, &keys.sites, v);
                (watched_types(&watched, &t), e)
            })
            .collect();
        m.graph.types = saved;
        Probe {
            sites: keys.sites.clone(),
            samples: keys.samples.clone(),
            watched,
            base,
            at,
        }
    }

    /// Whether `c` infers as well as the model did, with the same types of the watched values
    /// (its `types` are left inferred at its own sizes).
    fn accepts(&self, c: &mut Model) -> bool {
        for (v, (types, errors)) in self.samples.iter().zip(&self.at) {
            let (t, e) = infer_at(c, &self.sites, v);
            if e > *errors || watched_types(&self.watched, &t) != *types {
                return false;
            }
        }
        let e = crate::ir::infer::infer_model(c, Default::default())
            .errors
            .len();
        e <= self.base.1 && watched_types(&self.watched, &c.graph.types) == self.base.0
    }
}

/// Runs the phase on `m`; returns how many nodes went.
pub(super) fn adapt(m: &mut Model, sig: &Signature) -> usize {
    let start = m.graph.node_count();
    if start > MAX_NODES {
        return 0;
    }
    let keys0 = TypeKeys::infer(m);
    let probe = Probe::new(m, &keys0);
    // A watched value without a type key has a size that is unknown, or 1 at every sample size
    // (collapsed): its types would say nothing.
    if probe.watched.iter().any(|n| keys0.key(n).is_none()) {
        return 0;
    }
    let mut keys = Some(keys0);
    let mut refused: HashSet<(String, String)> = HashSet::new();
    let mut trials = 0usize;
    let mut seen = HashSet::new();
    'round: loop {
        let keys = match keys.take() {
            Some(k) => k,
            None => TypeKeys::infer(m),
        };
        let Ok(mut w) = Work::build(m, &keys) else {
            break;
        };
        for i in (0..w.nodes.len()).rev() {
            if w.nodes[i].kind != Kind::Data {
                continue;
            }
            for b in w.nodes[i].outputs.clone() {
                if b == NONE {
                    continue;
                }
                let Some(tb) = tensor_dims(m, &w.vals[b as usize].name) else {
                    continue;
                };
                let kb = w.vals[b as usize].key;
                let mut plans: Vec<Plan> = Vec::new();
                for a in window(&w, i as u32, &mut seen) {
                    let va = &w.vals[a as usize];
                    if kb == NONE || va.key == NONE || va.key == kb {
                        continue;
                    }
                    let Some(ta) = tensor_dims(m, &va.name) else {
                        continue;
                    };
                    if ta.0 != tb.0 || ta.1.len() != tb.1.len() {
                        continue;
                    }
                    let names = (va.name.clone(), w.vals[b as usize].name.clone());
                    if refused.contains(&names) {
                        continue;
                    }
                    if let Ok(p) = w.plan(a, b) {
                        plans.push(p);
                    }
                }
                plans.sort_by_key(|p| std::cmp::Reverse(p.dead.len()));
                for p in plans.into_iter().take(PER_VALUE) {
                    trials += 1;
                    if trials > MAX_TRIALS {
                        break 'round;
                    }
                    let names = (
                        w.vals[p.a as usize].name.clone(),
                        w.vals[p.b as usize].name.clone(),
                    );
                    let accepted = edit(&w, &p, m).and_then(|patch| {
                        let mut c = m.clone();
                        c.graph.value_info.clear();
                        c.apply(&patch).ok()?;
                        (super::param_count(&c) <= super::param_count(m)
                            && probe.accepts(&mut c)
                            && super::signature(&c) == *sig)
                            .then_some(c)
                    });
                    match accepted {
                        Some(c) => {
                            *m = c;
                            continue 'round;
                        }
                        None => {
                            refused.insert(names);
                        }
                    }
                }
            }
        }
        break;
    }
    start - m.graph.node_count()
}

/// Element type and dims of a tensor value as inferred at the model's own sizes.
fn tensor_dims(m: &Model, name: &str) -> Option<(DType, Vec<Dim>)> {
    let t = m.graph.types.get(name)?.tensor()?.clone();
    Some((t.dtype, t.shape?))
}

/// The plan's edit with the weights of `b`'s readers adapted to `a`'s dims; `None` when a reader
/// needs a weight it cannot adapt.
fn edit(w: &Work, p: &Plan, m: &Model) -> Option<Patch> {
    let mut patch = w.plan_patch(p, m);
    let (_, da) = tensor_dims(m, &w.vals[p.a as usize].name)?;
    let (_, db) = tensor_dims(m, &w.vals[p.b as usize].name)?;
    let dead: HashSet<u32> = p.dead.iter().copied().collect();
    let mut fresh = 0usize;
    for (r, s) in w.reads(p.b).collect::<Vec<_>>() {
        let node = m.graph.node(w.nodes[r as usize].id)?;
        let Some((slot, axis, size)) = weight_axis(node, s as usize, &da, &db)? else {
            continue;
        };
        let wv = *w.nodes[r as usize].inputs.get(slot)?;
        if wv == NONE {
            return None;
        }
        let val = &w.vals[wv as usize];
        let (t, constant) = weight_tensor(w, m, wv)?;
        let axis = norm_axis(axis as i64, t.dims.len()).ok()?;
        let resized = resize_axis(&t, axis, size)?;
        let private = val.outs == 0 && w.reads(wv).all(|(q, _)| q == r || dead.contains(&q));
        match (private, constant) {
            (true, None) => {
                patch.push(PatchOp::AddInitializer(resized));
            }
            (true, Some(id)) => {
                let old = m.graph.node(id)?;
                let mut n = old.clone();
                n.attributes.retain(|a| a.name != "value");
                n = n.with_attr("value", AttrValue::Tensor(resized));
                patch.push(PatchOp::ReplaceNode(id, n));
            }
            (false, _) => {
                let name = loop {
                    fresh += 1;
                    let name = format!("{}_reduced{fresh}", val.name);
                    if !m.graph.initializers.contains_key(&name)
                        && !m.graph.types.contains_key(&name)
                    {
                        break name;
                    }
                };
                let mut t = resized;
                t.name = Some(name.clone());
                match constant {
                    None => {
                        patch.push(PatchOp::AddInitializer(t));
                    }
                    Some(_) => {
                        patch.push(PatchOp::AddNode(
                            Node::new("Constant", &[], &[&name])
                                .with_attr("value", AttrValue::Tensor(t)),
                        ));
                    }
                }
                patch.push(PatchOp::SetInput {
                    node: node.id,
                    slot,
                    value: name,
                });
            }
        }
    }
    Some(patch)
}

/// Which weight of `node` (read at input `slot` with dims `db`, to read dims `da`) must change:
/// `(weight slot, axis, new size)`; `Some(None)` when none; `None` when one would but cannot.
#[allow(clippy::type_complexity)]
fn weight_axis(
    node: &Node,
    slot: usize,
    da: &[Dim],
    db: &[Dim],
) -> Option<Option<(usize, isize, i64)>> {
    if slot != 0 || !node.domain().is_empty() {
        return Some(None);
    }
    let int = |name: &str, default: i64| match node.attr(name) {
        Some(AttrValue::Int(v)) => *v,
        _ => default,
    };
    let rank = da.len();
    let (axis_in, weight_axis) = match node.op_type.as_str() {
        "Conv" if int("group", 1) == 1 && rank >= 3 => (1, 1),
        "ConvTranspose" if int("group", 1) == 1 && rank >= 3 => (1, 0),
        // The rows of the right operand: its second last axis.
        "MatMul" if rank >= 2 => (rank - 1, -2),
        "Gemm" if rank == 2 && int("transA", 0) == 0 => {
            (1, if int("transB", 0) == 0 { 0 } else { 1 })
        }
        _ => return Some(None),
    };
    if da[axis_in] == db[axis_in] {
        return Some(None);
    }
    let size = da[axis_in].value()?;
    db[axis_in].value()?;
    Some(Some((1, weight_axis, size)))
}

/// The tensor of a weight value: an initializer, or the `value` of the `Constant` node making it
/// (with that node's id).
fn weight_tensor(w: &Work, m: &Model, v: u32) -> Option<(Tensor, Option<NodeId>)> {
    let val = &w.vals[v as usize];
    if val.producer == NONE {
        return m
            .graph
            .initializers
            .get(&val.name)
            .map(|t| (t.clone(), None));
    }
    let id = w.nodes[val.producer as usize].id;
    let n = m.graph.node(id)?;
    if n.op_type != "Constant" || !n.domain().is_empty() {
        return None;
    }
    match n.attr("value") {
        Some(AttrValue::Tensor(t)) => {
            let mut t = t.clone();
            t.name = Some(val.name.clone());
            Some((t, Some(id)))
        }
        _ => None,
    }
}

/// `t` with `axis` resized to `size`, repeating its slices cyclically (float tensors only).
fn resize_axis(t: &Tensor, axis: usize, size: i64) -> Option<Tensor> {
    let dt = t.dtype();
    if !matches!(dt, DType::F32 | DType::F16 | DType::BF16 | DType::F64) || t.is_external() {
        return None;
    }
    let dims = t.dims.clone();
    let old = *dims.get(axis)?;
    if old <= 0 || size <= 0 {
        return None;
    }
    let values = t.to_f64s().ok()?;
    let outer: i64 = dims[..axis].iter().product();
    let inner: i64 = dims[axis + 1..].iter().product();
    let mut out = Vec::with_capacity((outer * size * inner) as usize);
    for o in 0..outer {
        for c in 0..size {
            let base = ((o * old + c % old) * inner) as usize;
            out.extend_from_slice(&values[base..base + inner as usize]);
        }
    }
    let mut new_dims = dims;
    new_dims[axis] = size;
    Some(tensor::from_f64s(
        t.name.as_deref().unwrap_or(""),
        dt,
        &new_dims,
        &out,
    ))
}
