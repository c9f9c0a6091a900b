//! Blocks (cut values) and the search for removals (see the module documentation of
//! [`super`]).
use super::work::{Kind, NONE, Refused, Work};
use crate::ir::{Model, NodeId};
use std::collections::HashSet;
use std::fmt;

/// How far back (in data ops) an intra-block candidate looks for a value to read instead.
pub(super) const WINDOW: usize = 48;
/// Full simulations tried per block run start after the binary search.
const RUN_TRIES: usize = 8;
/// Rounds of inter- and intra-block passes at most.
const ROUNDS: usize = 8;

/// A cut value and the position (node index) after which it alone is live; `NONE` for a graph
/// input live before any node.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cut {
    pub value: u32,
    pub pos: u32,
}

/// Read at the end (a graph output); distinct from [`NONE`] (never read).
const INF: u32 = u32::MAX - 1;

/// The cut values of the current graph, in order.
pub(super) fn cuts(w: &Work) -> Vec<Cut> {
    let n = w.nodes.len();
    // Position of the last data node that consumes each side (const / meta) node's result.
    let mut side_pos = vec![NONE; n];
    for i in (0..n).rev() {
        let node = &w.nodes[i];
        if !node.alive || node.kind == Kind::Data {
            continue;
        }
        let mut last = NONE;
        for &o in &node.outputs {
            if o == NONE {
                continue;
            }
            if w.vals[o as usize].outs > 0 {
                last = INF;
            }
            for (r, _) in w.reads(o) {
                let p = read_pos(w, &side_pos, r);
                last = max_pos(last, p);
            }
        }
        side_pos[i] = last;
    }
    let last_read = |v: u32| -> u32 {
        let mut last = if w.vals[v as usize].outs > 0 {
            INF
        } else {
            NONE
        };
        for (r, _) in w.reads(v) {
            last = max_pos(last, read_pos(w, &side_pos, r));
        }
        last
    };
    let mut expire: Vec<Vec<u32>> = vec![Vec::new(); n];
    let (mut count, mut xor) = (0usize, 0u32);
    let add = |v: u32, at: u32, expire: &mut Vec<Vec<u32>>| {
        if at == NONE {
            return false;
        }
        if at != INF {
            expire[at as usize].push(v);
        }
        true
    };
    for (v, val) in w.vals.iter().enumerate() {
        if val.input && add(v as u32, last_read(v as u32), &mut expire) {
            count += 1;
            xor ^= v as u32;
        }
    }
    let mut out = Vec::new();
    if count == 1 {
        out.push(Cut {
            value: xor,
            pos: NONE,
        });
    }
    for i in 0..n {
        let node = &w.nodes[i];
        if !node.alive || node.kind != Kind::Data {
            continue;
        }
        for &o in &node.outputs {
            if o != NONE {
                let at = last_read(o);
                if at != NONE && (at == INF || at as usize > i) && add(o, at, &mut expire) {
                    count += 1;
                    xor ^= o;
                }
            }
        }
        for v in std::mem::take(&mut expire[i]) {
            count -= 1;
            xor ^= v;
        }
        if count == 1 && out.last().is_none_or(|c: &Cut| c.value != xor) {
            out.push(Cut {
                value: xor,
                pos: i as u32,
            });
        }
    }
    out
}

fn max_pos(a: u32, b: u32) -> u32 {
    match (a, b) {
        (NONE, x) | (x, NONE) => x,
        (INF, _) | (_, INF) => INF,
        (x, y) => x.max(y),
    }
}

/// Where a read by node `r` counts: at `r` for a data node, at its consumers for a side node.
fn read_pos(w: &Work, side_pos: &[u32], r: u32) -> u32 {
    if w.nodes[r as usize].kind == Kind::Data {
        r
    } else {
        side_pos[r as usize]
    }
}

/// What the search did.
#[derive(Default, Debug)]
pub(super) struct Stats {
    pub runs_removed: usize,
    pub intra_nodes: usize,
}

/// Removes what can go (see the module documentation of [`super`]).
pub(super) fn run(w: &mut Work, m: &Model) -> Stats {
    let mut stats = Stats::default();
    for _ in 0..ROUNDS {
        let before = w.removed;
        stats.intra_nodes += super::cse::cse(w, m);
        block_runs(w, &mut stats);
        let mid = w.removed;
        intra(w);
        stats.intra_nodes += w.removed - mid;
        if w.removed == before {
            break;
        }
    }
    stats
}

/// Inter-block: from each cut, the longest run of whole blocks up to a cut of the same type
/// whose removal keeps the coverage.
fn block_runs(w: &mut Work, stats: &mut Stats) {
    let mut cs = cuts(w);
    let mut i = 0;
    while i < cs.len() {
        let ci = cs[i].value;
        let key = w.vals[ci as usize].key;
        if key == NONE {
            i += 1;
            continue;
        }
        let ends: Vec<usize> = (i + 1..cs.len())
            .filter(|&j| w.vals[cs[j].value as usize].key == key)
            .collect();
        if ends.is_empty() {
            i += 1;
            continue;
        }
        // The farthest end whose run does not itself take an item away (removing more blocks
        // only takes more away), then the nearest ones below it.
        let (mut lo, mut hi) = (0usize, ends.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match w.plan(ci, cs[ends[mid]].value) {
                Err(Refused::Internal) => hi = mid,
                _ => lo = mid + 1,
            }
        }
        let mut done = false;
        for &j in ends[..lo].iter().rev().take(RUN_TRIES) {
            if let Ok(p) = w.plan(ci, cs[j].value) {
                w.commit(p);
                stats.runs_removed += 1;
                cs.drain(i + 1..=j);
                done = true;
                break;
            }
        }
        if !done {
            i += 1;
        }
    }
}

/// Intra-block: for every data value, latest first, the nearby ancestor whose taking its place
/// removes most nodes.
fn intra(w: &mut Work) {
    let n = w.nodes.len();
    let mut seen: HashSet<u32> = HashSet::new();
    for i in (0..n).rev() {
        let outputs = w.nodes[i].outputs.clone();
        for b in outputs {
            if !w.nodes[i].alive || w.nodes[i].kind != Kind::Data {
                break;
            }
            if b == NONE || w.vals[b as usize].key == NONE {
                continue;
            }
            let key = w.vals[b as usize].key;
            let mut best: Option<super::work::Plan> = None;
            for a in window(w, i as u32, &mut seen) {
                if w.vals[a as usize].key != key {
                    continue;
                }
                if let Ok(p) = w.plan(a, b)
                    && best.as_ref().is_none_or(|q| p.dead.len() > q.dead.len())
                {
                    best = Some(p);
                }
            }
            if let Some(p) = best {
                w.commit(p);
            }
        }
    }
}

/// Data values read by the data ops nearest above node `start` (breadth first, at most
/// [`WINDOW`] ops), nearest first.
pub(super) fn window(w: &Work, start: u32, seen: &mut HashSet<u32>) -> Vec<u32> {
    seen.clear();
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([start]);
    let mut visited = 0;
    let mut seen_nodes: HashSet<u32> = HashSet::from([start]);
    while let Some(n) = queue.pop_front() {
        visited += 1;
        if visited > WINDOW {
            break;
        }
        for &v in &w.nodes[n as usize].inputs {
            if v == NONE || w.vals[v as usize].kind != Kind::Data || !seen.insert(v) {
                continue;
            }
            out.push(v);
            let p = w.vals[v as usize].producer;
            if p != NONE && seen_nodes.insert(p) {
                queue.push_back(p);
            }
        }
    }
    out
}

/// A block of a model: the ops between two cut values, with the weights and shape chains they
/// consume.
#[derive(Clone, Debug)]
pub struct Block {
    /// The value entering the block (`None` for the first block of a model with several live
    /// inputs).
    pub entry: Option<String>,
    /// The value leaving it (`None` for the last block).
    pub exit: Option<String>,
    /// Its data ops, in topological order.
    pub ops: Vec<NodeId>,
    /// The const and meta nodes whose results only its ops consume.
    pub side: Vec<NodeId>,
    /// Op types of `ops`, for display.
    pub op_types: Vec<String>,
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} -> {}: {} (+{} side nodes)",
            self.entry.as_deref().unwrap_or("*"),
            self.exit.as_deref().unwrap_or("*"),
            self.op_types.join(" "),
            self.side.len()
        )
    }
}

/// The blocks of a model (its types are inferred on a copy).
pub fn find_blocks(model: &Model) -> Vec<Block> {
    let mut m = model.clone();
    let keys = super::types::TypeKeys::infer(&mut m);
    let Ok(w) = Work::build(&m, &keys) else {
        return Vec::new();
    };
    blocks_of(&w, &m)
}

pub(super) fn blocks_of(w: &Work, m: &Model) -> Vec<Block> {
    let cs = cuts(w);
    let n = w.nodes.len();
    // Block index of each data node.
    let mut block_of = vec![NONE; n];
    let mut b = 0u32;
    let mut next_cut = cs.iter().filter(|c| c.pos != NONE).peekable();
    for (i, slot) in block_of.iter_mut().enumerate() {
        let node = &w.nodes[i];
        if node.alive && node.kind == Kind::Data {
            *slot = b;
        }
        if next_cut.peek().is_some_and(|c| c.pos as usize == i) {
            next_cut.next();
            b += 1;
        }
    }
    // Side nodes: in the block of their consumers when those are all in one block (a shared
    // constant or shape chain is in none).
    for i in (0..n).rev() {
        let node = &w.nodes[i];
        if !node.alive || node.kind == Kind::Data {
            continue;
        }
        let mut owner = NONE;
        let mut shared = false;
        for &o in &node.outputs {
            if o == NONE {
                continue;
            }
            for (r, _) in w.reads(o) {
                let rb = block_of[r as usize];
                if owner == NONE {
                    owner = rb;
                } else if rb != owner {
                    shared = true;
                }
            }
        }
        if !shared {
            block_of[i] = owner;
        }
    }
    let first_entry = cs.first().filter(|c| c.pos == NONE).map(|c| c.value);
    let exits: Vec<u32> = cs
        .iter()
        .filter(|c| c.pos != NONE)
        .map(|c| c.value)
        .collect();
    let mut out: Vec<Block> = (0..=exits.len())
        .map(|k| Block {
            entry: if k == 0 {
                first_entry.map(|v| w.vals[v as usize].name.clone())
            } else {
                Some(w.vals[exits[k - 1] as usize].name.clone())
            },
            exit: exits.get(k).map(|&v| w.vals[v as usize].name.clone()),
            ops: Vec::new(),
            side: Vec::new(),
            op_types: Vec::new(),
        })
        .collect();
    for (i, &b) in block_of.iter().enumerate() {
        if b == NONE {
            continue;
        }
        let node = &w.nodes[i];
        let blk = &mut out[b as usize];
        if node.kind == Kind::Data {
            blk.ops.push(node.id);
            blk.op_types.push(super::label(m, node.id));
        } else {
            blk.side.push(node.id);
        }
    }
    out.retain(|b| !b.ops.is_empty());
    out
}
