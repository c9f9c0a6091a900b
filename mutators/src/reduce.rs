//! Seed reduction (MEMO Alg. 1): drop repeated ops inside a block and repeated blocks, keeping
//! op type, op pair and parameter coverage and keeping the model valid.
//!
//! * **Blocks** are the segments of the main graph between *cut values*: a value that alone
//!   carries everything computed so far to the rest of the graph (in topological order, the
//!   only value produced before that point and read after it). A residual or inception block
//!   is one segment.
//! * **Intra-block**: an op is a candidate when the block already has an op with the same key
//!   (op type, parameter buckets of its attributes, the op type that feeds it) and the op can
//!   be bypassed: one input that is not a constant, one output of the same static type.
//! * **Inter-block**: a block is a candidate when an earlier block has the same signature
//!   (multiset of op keys) and its input and output values have the same static type.
//!
//! Each candidate removal is applied as one validated patch and kept only when the op type,
//! op pair and parameter coverage of the model (over the full universe) is unchanged, so both
//! invariants hold by construction.
use crate::coverage::{Coverage, Universe};
use crate::ir::patch::{Patch, PatchOp};
use crate::ir::registry::Registry;
use crate::ir::{Model, NodeId};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

/// Sizes before and after a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReduceReport {
    /// Ops before.
    pub nodes_before: usize,
    /// Ops after.
    pub nodes_after: usize,
    /// Initializer elements before.
    pub params_before: usize,
    /// Initializer elements after.
    pub params_after: usize,
    /// Blocks found.
    pub blocks: usize,
    /// Ops removed inside blocks.
    pub intra_removed: usize,
    /// Whole blocks removed.
    pub blocks_removed: usize,
}

impl fmt::Display for ReduceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nodes {} -> {}, parameters {} -> {} ({} blocks; {} ops removed inside blocks, {} blocks removed)",
            self.nodes_before,
            self.nodes_after,
            self.params_before,
            self.params_after,
            self.blocks,
            self.intra_removed,
            self.blocks_removed
        )
    }
}

/// Why a model cannot be reduced.
#[derive(Debug, Clone, PartialEq)]
pub struct ReduceError(pub String);

impl fmt::Display for ReduceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReduceError {}

/// Initializer elements of a model.
pub fn param_count(m: &Model) -> usize {
    m.graph
        .initializers
        .values()
        .map(|t| t.dims.iter().product::<i64>().max(0) as usize)
        .sum()
}

type Signature = (Vec<String>, Vec<(String, String)>, Vec<String>);

fn signature(m: &Model) -> Signature {
    let mut c = Coverage::new(Universe::full());
    c.add_model(m);
    let ops = Universe::full()
        .op_types()
        .filter(|o| c.has_op(o))
        .map(str::to_string)
        .collect();
    (ops, c.covered_pairs(), c.covered_params())
}

/// The key of an op inside a block: type, attribute buckets, and the op type feeding it.
fn op_key(m: &Model, id: NodeId, producers: &HashMap<&str, (NodeId, usize)>) -> String {
    let n = m.graph.node(id).unwrap();
    let spec = Registry::global().for_node(n);
    let mut attrs: Vec<String> = n
        .attributes
        .iter()
        .map(|a| {
            let b = spec
                .and_then(|s| s.attr_spec(&a.name))
                .and_then(|s| s.buckets.bucket_of(&a.value));
            format!("{}#{:?}", a.name, b)
        })
        .collect();
    attrs.sort();
    let feeder = n
        .present_inputs()
        .filter_map(|i| producers.get(i))
        .map(|&(p, _)| m.graph.node(p).unwrap().op_type.clone())
        .next()
        .unwrap_or_default();
    format!("{}|{}|{}", n.op_type, attrs.join(","), feeder)
}

/// Blocks: node ids per segment between cut values, in topological order; with the value
/// entering and the value leaving each block (None when the block has several).
#[allow(clippy::type_complexity)]
fn blocks(m: &Model) -> Vec<(Vec<NodeId>, Option<String>, Option<String>)> {
    let g = &m.graph;
    let Ok(order) = g.topo_order() else {
        return Vec::new();
    };
    let pos: HashMap<NodeId, usize> = order.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    // Last position at which each value is read (graph outputs: after the end).
    let mut last_read: HashMap<&str, usize> = HashMap::new();
    for &id in &order {
        for i in g.node(id).unwrap().present_inputs() {
            let e = last_read.entry(i).or_insert(0);
            *e = (*e).max(pos[&id]);
        }
    }
    for o in &g.outputs {
        if let Some(n) = o.name.as_deref() {
            last_read.insert(n, usize::MAX);
        }
    }
    let real_inputs: Vec<String> = g
        .real_inputs()
        .iter()
        .filter_map(|v| v.name.clone())
        .collect();
    // Values live after position i: produced at ≤ i (or graph inputs) and read at > i.
    let mut live: HashSet<String> = real_inputs
        .iter()
        .filter(|v| {
            last_read
                .get(v.as_str())
                .is_some_and(|&l| l > 0 || l == usize::MAX)
        })
        .cloned()
        .collect();
    let mut out = Vec::new();
    let mut current: Vec<NodeId> = Vec::new();
    let mut entry: Option<String> = if real_inputs.len() == 1 {
        Some(real_inputs[0].clone())
    } else {
        None
    };
    for (i, &id) in order.iter().enumerate() {
        let n = g.node(id).unwrap();
        current.push(id);
        for o in &n.outputs {
            if !o.is_empty() && last_read.get(o.as_str()).is_some_and(|&l| l > i) {
                live.insert(o.clone());
            }
        }
        live.retain(|v| last_read.get(v.as_str()).is_some_and(|&l| l > i));
        if live.len() == 1 {
            let cut = live.iter().next().cloned();
            out.push((std::mem::take(&mut current), entry.clone(), cut.clone()));
            entry = cut;
        }
    }
    if !current.is_empty() {
        out.push((current, entry, None));
    }
    out
}

/// An op key without its feeder (type and attribute buckets).
fn plain_key(k: &str) -> &str {
    k.rsplit_once('|').map_or(k, |(a, _)| a)
}

/// How many ops of the model have each plain key.
#[allow(clippy::type_complexity)]
fn plain_counts(
    keyed: &[(Vec<NodeId>, Option<String>, Option<String>, Vec<String>)],
) -> HashMap<&str, usize> {
    let mut c: HashMap<&str, usize> = HashMap::new();
    for b in keyed {
        for k in &b.3 {
            *c.entry(plain_key(k)).or_default() += 1;
        }
    }
    c
}

/// Blocks with the key of each op.
#[allow(clippy::type_complexity)]
fn keyed_blocks(m: &Model) -> Vec<(Vec<NodeId>, Option<String>, Option<String>, Vec<String>)> {
    let producers = m.graph.producers();
    blocks(m)
        .into_iter()
        .map(|(ids, i, o)| {
            let keys = ids.iter().map(|&id| op_key(m, id, &producers)).collect();
            (ids, i, o, keys)
        })
        .collect()
}

/// Tries a removal: applies it and keeps it when the model stays valid and its signature is
/// unchanged.
fn try_patch(m: &mut Model, patch: &Patch, sig: &Signature) -> bool {
    let mut trial = m.clone();
    if trial.apply(patch).is_err() {
        return false;
    }
    if signature(&trial) != *sig {
        return false;
    }
    *m = trial;
    true
}

/// The patch that bypasses `ids` (readers of `output` read `input`) and drops initializers
/// only they used.
fn bypass(m: &Model, ids: &[NodeId], input: &str, output: &str) -> Patch {
    let g = &m.graph;
    let removed: HashSet<NodeId> = ids.iter().copied().collect();
    let mut p = Patch::new();
    p.push(PatchOp::ReplaceUses {
        old: output.to_string(),
        new: input.to_string(),
    });
    let mut used_elsewhere: HashSet<&str> = HashSet::new();
    for n in g.nodes() {
        if !removed.contains(&n.id) {
            used_elsewhere.extend(n.present_inputs());
        }
    }
    let mut dropped = BTreeMap::new();
    for &id in ids {
        p.push(PatchOp::RemoveNode(id));
        for i in g.node(id).unwrap().present_inputs() {
            if g.initializers.contains_key(i) && !used_elsewhere.contains(i) && i != input {
                dropped.insert(i.to_string(), ());
            }
        }
    }
    for name in dropped.into_keys() {
        p.push(PatchOp::RemoveInitializer(name));
    }
    p
}

fn same_static_type(m: &Model, a: &str, b: &str) -> bool {
    let (ta, tb) = (m.graph.value_type(a), m.graph.value_type(b));
    match (ta.tensor(), tb.tensor()) {
        (Some(x), Some(y)) => {
            x.dtype == y.dtype && x.static_dims().is_some() && x.static_dims() == y.static_dims()
        }
        _ => false,
    }
}

/// Reduces a model; see the module documentation.
pub fn reduce(model: &Model) -> Result<(Model, ReduceReport), ReduceError> {
    crate::ir::validate::validate(model).map_err(|e| ReduceError(format!("invalid model: {e}")))?;
    let mut m = model.clone();
    crate::ir::infer::infer_model(&mut m, Default::default());
    let sig = signature(&m);
    let mut report = ReduceReport {
        nodes_before: model.graph.node_count(),
        nodes_after: 0,
        params_before: param_count(model),
        params_after: 0,
        blocks: blocks(model).len(),
        intra_removed: 0,
        blocks_removed: 0,
    };
    // Inter-block: a run of consecutive blocks whose ops all occur elsewhere in the model and
    // whose entry and exit values have the same type is bypassed (longest runs first, later
    // runs first: the first occurrence stays).
    loop {
        let keyed = keyed_blocks(&m);
        let plain = plain_counts(&keyed);
        let mut cands: Vec<(usize, usize, Vec<NodeId>, String, String)> = Vec::new();
        for i in 0..keyed.len() {
            let Some(entry) = &keyed[i].1 else {
                continue;
            };
            let mut ids: Vec<NodeId> = Vec::new();
            let mut in_run: HashMap<&str, usize> = HashMap::new();
            for blk in &keyed[i..] {
                ids.extend(&blk.0);
                for k in &blk.3 {
                    *in_run.entry(plain_key(k)).or_default() += 1;
                }
                let Some(exit) = &blk.2 else {
                    break;
                };
                let repeated = in_run.iter().all(|(k, &n)| plain[k] > n);
                if repeated && same_static_type(&m, entry, exit) {
                    cands.push((ids.len(), i, ids.clone(), entry.clone(), exit.clone()));
                }
            }
        }
        cands.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        let mut removed = false;
        for (_, _, ids, entry, exit) in cands {
            let p = bypass(&m, &ids, &entry, &exit);
            if try_patch(&mut m, &p, &sig) {
                report.blocks_removed += 1;
                removed = true;
                break;
            }
        }
        if !removed {
            break;
        }
    }
    // Intra-block: an op whose key occurs elsewhere and that can be bypassed (later first).
    loop {
        let keyed = keyed_blocks(&m);
        let plain = plain_counts(&keyed);
        let mut removed = false;
        let ops: Vec<(NodeId, String)> = keyed
            .iter()
            .flat_map(|b| b.0.iter().copied().zip(b.3.iter().cloned()))
            .collect();
        for (id, key) in ops.into_iter().rev() {
            if plain[plain_key(&key)] < 2 {
                continue;
            }
            let n = m.graph.node(id).unwrap();
            let data: Vec<String> = n
                .present_inputs()
                .filter(|i| !m.graph.initializers.contains_key(*i))
                .map(str::to_string)
                .collect();
            let outs: Vec<String> = n
                .outputs
                .iter()
                .filter(|o| !o.is_empty())
                .cloned()
                .collect();
            if data.len() != 1 || outs.len() != 1 || !same_static_type(&m, &data[0], &outs[0]) {
                continue;
            }
            let p = bypass(&m, &[id], &data[0], &outs[0]);
            if try_patch(&mut m, &p, &sig) {
                report.intra_removed += 1;
                removed = true;
                break;
            }
        }
        if !removed {
            break;
        }
    }
    report.nodes_after = m.graph.node_count();
    report.params_after = param_count(&m);
    Ok((m, report))
}
