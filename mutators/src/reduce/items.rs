//! Coverage items as dense ids with a count each: what a node contributes (its op type, its
//! parameter buckets, everything inside its subgraphs) and the op pairs of the edges. The
//! rules are those of [`crate::coverage::Coverage`] over the full universe (default domain,
//! pairs only when connectable, attribute defaults at the model's opset), read through the same
//! functions (the universe's producer map and connectable pairs, the buckets a node covers);
//! the reducer checks the result against `Coverage` itself once, at the end.
use crate::coverage::{Universe, node_buckets};
use crate::ir::registry::Registry;
use crate::ir::{Graph, Node};
use std::collections::HashMap;
use std::sync::Arc;

/// What an edge `p → c` is for the pair family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pair {
    /// Not an item (an op outside the universe, or a pair the universe deems unconnectable).
    NotItem,
    /// An item the model covers.
    Item(u32),
    /// An item the model does not cover.
    New,
}

pub(super) struct Items {
    universe: Arc<Universe>,
    opset: i64,
    ids: HashMap<String, u32>,
    /// How many times each item occurs in the current model.
    pub counts: Vec<u32>,
    pairs: HashMap<(u32, u32), u32>,
}

impl Items {
    pub fn new(opset: i64) -> Items {
        Items {
            universe: Universe::full(),
            opset,
            ids: HashMap::new(),
            counts: Vec::new(),
            pairs: HashMap::new(),
        }
    }

    fn intern(&mut self, key: String) -> u32 {
        let next = self.counts.len() as u32;
        let id = *self.ids.entry(key).or_insert(next);
        if id == next {
            self.counts.push(0);
        }
        id
    }

    /// The universe index of a node's op (`None` outside the universe).
    pub fn op_of(&self, n: &Node) -> Option<u32> {
        self.universe.op_of(n)
    }

    /// The pair item of an edge from an op of `p` to an op of `c`, registering it (used while
    /// the model is read).
    fn pair_item(&mut self, p: Option<u32>, c: Option<u32>) -> Option<u32> {
        let (p, c) = (p?, c?);
        if !self.universe.connects(p, c) {
            return None;
        }
        if let Some(&id) = self.pairs.get(&(p, c)) {
            return Some(id);
        }
        let id = self.intern(format!("pair:{p}>{c}"));
        self.pairs.insert((p, c), id);
        Some(id)
    }

    /// Counts an edge of the main graph.
    pub fn add_edge(&mut self, p: Option<u32>, c: Option<u32>) {
        if let Some(id) = self.pair_item(p, c) {
            self.counts[id as usize] += 1;
        }
    }

    /// What an edge from an op of `p` to an op of `c` is, without registering anything.
    pub fn pair(&mut self, p: Option<u32>, c: Option<u32>) -> Pair {
        let (Some(p), Some(c)) = (p, c) else {
            return Pair::NotItem;
        };
        if !self.universe.connects(p, c) {
            return Pair::NotItem;
        }
        match self.pairs.get(&(p, c)) {
            Some(&id) if self.counts[id as usize] > 0 => Pair::Item(id),
            _ => Pair::New,
        }
    }

    /// The items a main-graph node contributes by itself: op type, parameter buckets and all
    /// items of its subgraphs (pairs of its edges are counted separately). Counted.
    pub fn node_items(&mut self, n: &Node) -> Vec<u32> {
        let mut out = Vec::new();
        self.own(n, &mut out);
        for &i in &out {
            self.counts[i as usize] += 1;
        }
        out
    }

    fn own(&mut self, n: &Node, out: &mut Vec<u32>) {
        for (_, sg) in n.subgraphs() {
            self.graph_items(sg, out);
        }
        let Some(op) = self.op_of(n) else {
            return;
        };
        out.push(self.intern(format!("op:{op}")));
        let Some(spec) = Registry::global().get("", &n.op_type) else {
            return;
        };
        for (k, b) in node_buckets(spec, n, self.opset) {
            out.push(self.intern(format!("param:{op}.{k}#{b}")));
        }
    }

    /// Every item of a subgraph: its nodes' own items and its pairs (taken within the graph).
    fn graph_items(&mut self, g: &Graph, out: &mut Vec<u32>) {
        let producer = self.universe.producers(g);
        for n in g.nodes() {
            self.own(n, out);
            let c = self.op_of(n);
            for i in n.present_inputs() {
                if let Some(&p) = producer.get(i)
                    && let Some(id) = self.pair_item(p, c)
                {
                    out.push(id);
                }
            }
        }
    }
}
