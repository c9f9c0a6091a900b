//! The reducer's working copy of the main graph: nodes in topological order, values with their
//! readers, the kind of every node, coverage item counts. Candidate removals are simulated on
//! it and committed in place, in time proportional to what they touch; the model is rebuilt
//! from it once ([`Work::into_model`]).
use super::ReduceError;
use super::items::{Items, Pair};
use super::types::TypeKeys;
use crate::ir::patch::{Patch, PatchOp};
use crate::ir::{Model, NodeId};
use std::collections::{BTreeSet, HashMap, HashSet};

pub(super) const NONE: u32 = u32::MAX;
/// The input slot of a read through a subgraph capture.
pub(super) const CAPTURE: u32 = u32::MAX;

/// What a node computes (see the module documentation of [`super`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Activations: the path blocks are made of.
    Data,
    /// Shapes and what is computed from them and constants only.
    Meta,
    /// Constants: weights, `Constant` nodes, arithmetic on them.
    Const,
}

pub(super) struct WNode {
    pub id: NodeId,
    pub op: Option<u32>,
    pub kind: Kind,
    /// Value per input slot ([`NONE`] for an absent optional input).
    pub inputs: Vec<u32>,
    /// Value per output slot ([`NONE`] for an absent optional output).
    pub outputs: Vec<u32>,
    /// Values its subgraphs capture.
    pub captures: Vec<u32>,
    /// Its own coverage items (op type, parameters, subgraphs).
    own: Vec<u32>,
    pub alive: bool,
}

pub(super) struct WVal {
    pub name: String,
    /// The producing node ([`NONE`] for graph inputs and initializers).
    pub producer: u32,
    /// Reads `(node, slot)`; entries of dead nodes or of slots since rewired are stale (see
    /// [`Work::reads`]).
    readers: Vec<(u32, u32)>,
    /// Number of current reads.
    pub live_readers: u32,
    /// Number of graph outputs naming it.
    pub outs: u32,
    pub kind: Kind,
    /// Type key ([`NONE`]: not comparable).
    pub key: u32,
    /// A real graph input.
    pub input: bool,
}

/// A simulated removal: readers of `b` read `a`, `dead` nodes go.
pub(super) struct Plan {
    pub a: u32,
    pub b: u32,
    pub dead: Vec<u32>,
    delta: Vec<(u32, i32)>,
}

/// Why a candidate was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// Not a removal the graph allows (nothing dies, a capture, an output).
    Structure,
    /// The nodes that would go take a coverage item with them.
    Internal,
    /// The rewired edges lose or add an op pair.
    Boundary,
}

pub(super) struct Work {
    pub nodes: Vec<WNode>,
    pub vals: Vec<WVal>,
    /// Graph outputs, in order.
    outputs: Vec<u32>,
    items: Items,
    epoch: u32,
    node_mark: Vec<u32>,
    val_mark: Vec<u32>,
    lost: Vec<u32>,
    item_mark: Vec<u32>,
    item_delta: Vec<i32>,
    /// Main-graph nodes removed so far.
    pub removed: usize,
}

impl Work {
    /// Reads the main graph of `m` (types inferred).
    pub fn build(m: &Model, keys: &TypeKeys) -> Result<Work, ReduceError> {
        let g = &m.graph;
        let order = g.topo_order().map_err(ReduceError::Order)?;
        let mut items = Items::new(m.default_opset());
        let mut vals: Vec<WVal> = Vec::new();
        let mut index: HashMap<String, u32> = HashMap::new();
        let add_val = |vals: &mut Vec<WVal>,
                       index: &mut HashMap<String, u32>,
                       name: &str,
                       producer: u32,
                       kind: Kind| {
            let id = vals.len() as u32;
            vals.push(WVal {
                name: name.to_string(),
                producer,
                readers: Vec::new(),
                live_readers: 0,
                outs: 0,
                kind,
                key: keys.key(name).unwrap_or(NONE),
                input: false,
            });
            index.insert(name.to_string(), id);
            id
        };
        for name in g.initializers.keys() {
            add_val(&mut vals, &mut index, name, NONE, Kind::Const);
        }
        for v in &g.inputs {
            let name = v.name.as_deref().unwrap_or("");
            if name.is_empty() || index.contains_key(name) {
                continue;
            }
            let id = add_val(&mut vals, &mut index, name, NONE, Kind::Data);
            vals[id as usize].input = true;
        }
        let mut nodes: Vec<WNode> = Vec::with_capacity(order.len());
        for (pos, &id) in order.iter().enumerate() {
            let n = g.node(id).unwrap();
            let mut inputs = Vec::with_capacity(n.inputs.len());
            for name in &n.inputs {
                if name.is_empty() {
                    inputs.push(NONE);
                    continue;
                }
                let v = match index.get(name.as_str()) {
                    Some(&v) => v,
                    None => return Err(ReduceError::ReadBeforeDefined(name.clone())),
                };
                inputs.push(v);
            }
            let captured: BTreeSet<String> = n
                .subgraphs()
                .flat_map(|(_, sg)| sg.captured_names())
                .collect();
            let captures: Vec<u32> = captured
                .iter()
                .filter_map(|c| index.get(c.as_str()).copied())
                .collect();
            let kinds = || {
                inputs
                    .iter()
                    .filter(|&&v| v != NONE)
                    .map(|&v| vals[v as usize].kind)
            };
            let kind = if !captured.is_empty() || n.subgraphs().next().is_some() {
                Kind::Data
            } else if n.domain().is_empty() && matches!(n.op_type.as_str(), "Shape" | "Size") {
                Kind::Meta
            } else if kinds().all(|k| k == Kind::Const) {
                Kind::Const
            } else if kinds().all(|k| k != Kind::Data) {
                Kind::Meta
            } else {
                Kind::Data
            };
            let op = items.op_of(n);
            let own = items.node_items(n);
            let me = pos as u32;
            for (slot, &v) in inputs.iter().enumerate() {
                if v == NONE {
                    continue;
                }
                let val = &mut vals[v as usize];
                val.readers.push((me, slot as u32));
                val.live_readers += 1;
                let p = val.producer;
                let pop = if p == NONE {
                    None
                } else {
                    nodes[p as usize].op
                };
                items.add_edge(pop, op);
            }
            for &v in &captures {
                let val = &mut vals[v as usize];
                val.readers.push((me, CAPTURE));
                val.live_readers += 1;
            }
            let mut outputs = Vec::with_capacity(n.outputs.len());
            for name in &n.outputs {
                if name.is_empty() {
                    outputs.push(NONE);
                } else {
                    outputs.push(add_val(&mut vals, &mut index, name, me, kind));
                }
            }
            nodes.push(WNode {
                id,
                op,
                kind,
                inputs,
                outputs,
                captures,
                own,
                alive: true,
            });
        }
        let mut outputs = Vec::new();
        for o in &g.outputs {
            let name = o.name.as_deref().unwrap_or("");
            let Some(&v) = index.get(name) else {
                return Err(ReduceError::UndefinedOutput(name.to_string()));
            };
            vals[v as usize].outs += 1;
            outputs.push(v);
        }
        let n_items = items.counts.len();
        Ok(Work {
            node_mark: vec![0; nodes.len()],
            val_mark: vec![0; vals.len()],
            lost: vec![0; vals.len()],
            item_mark: vec![0; n_items],
            item_delta: vec![0; n_items],
            nodes,
            vals,
            outputs,
            items,
            epoch: 0,
            removed: 0,
        })
    }

    /// The current reads of value `v`: `(node, slot)`, slot [`CAPTURE`] for a capture.
    pub fn reads(&self, v: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.vals[v as usize]
            .readers
            .iter()
            .copied()
            .filter(move |&(n, s)| {
                let node = &self.nodes[n as usize];
                node.alive && (s == CAPTURE || node.inputs[s as usize] == v)
            })
    }

    fn op_of_producer(&self, v: u32) -> Option<u32> {
        let p = self.vals[v as usize].producer;
        if p == NONE {
            None
        } else {
            self.nodes[p as usize].op
        }
    }

    fn lost(&self, v: u32) -> u32 {
        if self.val_mark[v as usize] == self.epoch {
            self.lost[v as usize]
        } else {
            0
        }
    }

    fn lose(&mut self, v: u32) {
        let i = v as usize;
        if self.val_mark[i] != self.epoch {
            self.val_mark[i] = self.epoch;
            self.lost[i] = 0;
        }
        self.lost[i] += 1;
    }

    /// Adds `d` to what the current plan does to `item`; true when the item would be gone.
    fn add_delta(&mut self, item: u32, d: i32, touched: &mut Vec<u32>) -> bool {
        let i = item as usize;
        if self.item_mark[i] != self.epoch {
            self.item_mark[i] = self.epoch;
            self.item_delta[i] = 0;
            touched.push(item);
        }
        self.item_delta[i] += d;
        self.items.counts[i] as i32 + self.item_delta[i] <= 0
    }

    /// Whether node `n` is left without a reader once `b`'s readers read `a`.
    fn unread(&self, n: u32, a: u32, b: u32) -> bool {
        self.nodes[n as usize].outputs.iter().all(|&o| {
            if o == NONE {
                return true;
            }
            if o == a {
                return false;
            }
            let v = &self.vals[o as usize];
            (v.outs == 0 || o == b) && v.live_readers <= self.lost(o)
        })
    }

    /// Simulates "readers of `b` read `a`" and the removal of every node left without a reader.
    pub fn plan(&mut self, a: u32, b: u32) -> Result<Plan, Refused> {
        if a == b {
            return Err(Refused::Structure);
        }
        let vb = &self.vals[b as usize];
        let va = &self.vals[a as usize];
        if vb.producer == NONE || (vb.live_readers == 0 && vb.outs == 0) {
            return Err(Refused::Structure);
        }
        if vb.outs > 0 && (va.producer == NONE || va.outs > 0) {
            return Err(Refused::Structure);
        }
        let moved: Vec<(u32, u32)> = self.reads(b).collect();
        if moved.iter().any(|&(_, s)| s == CAPTURE) {
            return Err(Refused::Structure);
        }
        let pb = vb.producer;
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.node_mark.fill(0);
            self.val_mark.fill(0);
            self.item_mark.fill(0);
            self.epoch = 1;
        }
        let e = self.epoch;
        for _ in 0..moved.len() {
            self.lose(b);
        }
        // Nodes left without a reader, from `b`'s producer up; what each takes with it is
        // counted as it goes, so that a run that would take a coverage item away is refused as
        // soon as it reaches the item's last occurrence (not after walking the whole run).
        let mut dead = Vec::new();
        let mut touched = Vec::new();
        let mut stack = vec![pb];
        while let Some(n) = stack.pop() {
            let ni = n as usize;
            if self.node_mark[ni] == e || !self.nodes[ni].alive || !self.unread(n, a, b) {
                continue;
            }
            self.node_mark[ni] = e;
            dead.push(n);
            let node = &self.nodes[ni];
            let own = node.own.clone();
            let c = node.op;
            let ins: Vec<u32> = node.inputs.iter().copied().filter(|&v| v != NONE).collect();
            let reads: Vec<u32> = node
                .inputs
                .iter()
                .chain(&node.captures)
                .copied()
                .filter(|&v| v != NONE)
                .collect();
            let mut lost_item = false;
            for i in own {
                lost_item |= self.add_delta(i, -1, &mut touched);
            }
            for v in ins {
                let p = self.op_of_producer(v);
                if let Pair::Item(i) = self.items.pair(p, c) {
                    lost_item |= self.add_delta(i, -1, &mut touched);
                }
            }
            if lost_item {
                return Err(Refused::Internal);
            }
            for v in reads {
                self.lose(v);
                let p = self.vals[v as usize].producer;
                if p != NONE {
                    stack.push(p);
                }
            }
        }
        if dead.is_empty() {
            return Err(Refused::Structure);
        }
        // The rewired edges.
        let (pa, pbop) = (self.op_of_producer(a), self.nodes[pb as usize].op);
        for &(r, _) in &moved {
            let c = self.nodes[r as usize].op;
            // Whether these leave an item gone is checked below, once all are counted.
            if let Pair::Item(i) = self.items.pair(pbop, c) {
                self.add_delta(i, -1, &mut touched);
            }
            match self.items.pair(pa, c) {
                Pair::Item(i) => {
                    self.add_delta(i, 1, &mut touched);
                }
                Pair::New => return Err(Refused::Boundary),
                Pair::NotItem => {}
            }
        }
        if touched
            .iter()
            .any(|&i| self.items.counts[i as usize] as i32 + self.item_delta[i as usize] <= 0)
        {
            return Err(Refused::Boundary);
        }
        let delta = touched
            .iter()
            .map(|&i| (i, self.item_delta[i as usize]))
            .filter(|&(_, d)| d != 0)
            .collect();
        Ok(Plan { a, b, dead, delta })
    }

    /// Applies a plan made on the current state.
    pub fn commit(&mut self, p: Plan) {
        for &n in &p.dead {
            let node = &mut self.nodes[n as usize];
            node.alive = false;
            let reads: Vec<u32> = node
                .inputs
                .iter()
                .chain(&node.captures)
                .copied()
                .filter(|&v| v != NONE)
                .collect();
            for v in reads {
                self.vals[v as usize].live_readers -= 1;
            }
        }
        let moved: Vec<(u32, u32)> = self.reads(p.b).collect();
        for &(r, s) in &moved {
            self.nodes[r as usize].inputs[s as usize] = p.a;
        }
        let n_moved = moved.len() as u32;
        let (a, b) = (p.a as usize, p.b as usize);
        self.vals[b].readers.clear();
        self.vals[b].live_readers -= n_moved;
        self.vals[a].readers.extend(moved);
        self.vals[a].live_readers += n_moved;
        if self.vals[b].outs > 0 {
            for o in self.outputs.iter_mut().filter(|o| **o == p.b) {
                *o = p.a;
            }
            self.vals[a].outs += self.vals[b].outs;
            self.vals[b].outs = 0;
        }
        for (i, d) in p.delta {
            let c = &mut self.items.counts[i as usize];
            *c = (*c as i64 + d as i64) as u32;
        }
        self.removed += p.dead.len();
    }

    /// The edit that carries out plan `p` on the model `m` this was built from (`m` unchanged
    /// since): the dead nodes and the initializers only they read go, readers of `b` read `a`.
    pub fn plan_patch(&self, p: &Plan, m: &Model) -> Patch {
        let mut patch = Patch::new();
        let dead: HashSet<u32> = p.dead.iter().copied().collect();
        for &n in &p.dead {
            patch.push(PatchOp::RemoveNode(self.nodes[n as usize].id));
        }
        let a = self.vals[p.a as usize].name.clone();
        for (r, s) in self.reads(p.b) {
            patch.push(PatchOp::SetInput {
                node: self.nodes[r as usize].id,
                slot: s as usize,
                value: a.clone(),
            });
        }
        if self.vals[p.b as usize].outs > 0 {
            patch.push(PatchOp::ReplaceUses {
                old: self.vals[p.b as usize].name.clone(),
                new: a,
            });
        }
        let mut gone: BTreeSet<u32> = BTreeSet::new();
        for &n in &p.dead {
            let node = &self.nodes[n as usize];
            for &v in node.inputs.iter().chain(&node.captures) {
                if v == NONE {
                    continue;
                }
                let val = &self.vals[v as usize];
                if val.producer == NONE
                    && !val.input
                    && val.outs == 0
                    && self.reads(v).all(|(r, _)| dead.contains(&r))
                    && m.graph.initializers.contains_key(&val.name)
                {
                    gone.insert(v);
                }
            }
        }
        for v in gone {
            let name = self.vals[v as usize].name.clone();
            if m.graph
                .inputs
                .iter()
                .any(|i| i.name.as_deref() == Some(&name))
            {
                patch.push(PatchOp::RemoveInput(name.clone()));
            }
            patch.push(PatchOp::RemoveInitializer(name));
        }
        patch
    }

    /// Rebuilds the model `m` (the one this was built from) without the removed nodes and with
    /// the rewired reads; drops initializers, inputs declared for them and value infos nothing
    /// uses any more; validates the result.
    pub fn into_model(self, mut m: Model) -> Result<Model, ReduceError> {
        if self.removed == 0 {
            return Ok(m);
        }
        let mut p = Patch::new();
        for n in &self.nodes {
            if !n.alive {
                p.push(PatchOp::RemoveNode(n.id));
                continue;
            }
            let node = m.graph.node(n.id).unwrap();
            for (slot, &v) in n.inputs.iter().enumerate() {
                if v == NONE {
                    continue;
                }
                let name = &self.vals[v as usize].name;
                if node.inputs[slot] != *name {
                    p.push(PatchOp::SetInput {
                        node: n.id,
                        slot,
                        value: name.clone(),
                    });
                }
            }
        }
        for (o, &v) in m.graph.outputs.iter().zip(&self.outputs) {
            let name = &self.vals[v as usize].name;
            if o.name.as_deref() != Some(name) {
                p.push(PatchOp::ReplaceUses {
                    old: o.name.clone().unwrap_or_default(),
                    new: name.clone(),
                });
            }
        }
        // Initializers read before and by nothing now.
        let mut unused: Vec<String> = Vec::new();
        for v in &self.vals {
            if v.producer == NONE
                && !v.input
                && v.live_readers == 0
                && v.outs == 0
                && !v.readers.is_empty()
                && m.graph.initializers.contains_key(&v.name)
            {
                unused.push(v.name.clone());
            }
        }
        m.apply(&p).map_err(ReduceError::Rebuild)?;
        // Unused initializers (and the inputs declared for them) go in one pass, keeping the
        // order of the others (one `RemoveInitializer` each would shift the map every time).
        let unused: HashSet<String> = unused.into_iter().collect();
        m.graph.initializers.retain(|k, _| !unused.contains(k));
        m.graph
            .inputs
            .retain(|v| v.name.as_deref().is_none_or(|n| !unused.contains(n)));
        let defined: HashSet<&str> = self
            .nodes
            .iter()
            .filter(|n| n.alive)
            .flat_map(|n| n.outputs.iter())
            .filter(|&&v| v != NONE)
            .map(|&v| self.vals[v as usize].name.as_str())
            .collect();
        m.graph
            .value_info
            .retain(|v| v.name.as_deref().is_some_and(|n| defined.contains(n)));
        Ok(m)
    }
}
