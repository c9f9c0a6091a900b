//! Common subexpressions: a node computing what an earlier node already computes (the same op
//! and attributes on the same values) is replaced by it. Equal initializers and `Constant`
//! tensors are the same value, an `Identity` is its input, and `Shape` (`Size`) of two values
//! of the same type key ([`super::types`]) is the same value: exporters repeat the shape chain
//! of every reshape, the `Identity` of a shared weight at every use, and the scalar constants
//! of every activation. Semantics-preserving; the coverage check still applies (the last
//! `Identity → Conv` stays).
use super::work::{NONE, Work};
use crate::ir::attr::{AttrValue, Attribute};
use crate::ir::tensor::Tensor;
use crate::ir::{Model, Node};
use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Ops whose two runs on the same inputs may differ.
const RANDOM: &[&str] = &[
    "RandomNormal",
    "RandomUniform",
    "RandomNormalLike",
    "RandomUniformLike",
    "Multinomial",
    "Bernoulli",
    "Dropout",
];

fn hash_tensor(t: &Tensor, h: &mut DefaultHasher) {
    t.data_type.hash(h);
    t.dims.hash(h);
    t.raw_data.hash(h);
    for f in &t.float_data {
        f.to_bits().hash(h);
    }
    t.int32_data.hash(h);
    t.int64_data.hash(h);
    t.string_data.hash(h);
    for d in &t.double_data {
        d.to_bits().hash(h);
    }
    t.uint64_data.hash(h);
}

fn same_tensor(a: &Tensor, b: &Tensor) -> bool {
    a.data_location != Some(1)
        && b.data_location != Some(1)
        && a.data_type == b.data_type
        && a.dims == b.dims
        && a.raw_data == b.raw_data
        && a.float_data.len() == b.float_data.len()
        && a.float_data
            .iter()
            .zip(&b.float_data)
            .all(|(x, y)| x.to_bits() == y.to_bits())
        && a.int32_data == b.int32_data
        && a.int64_data == b.int64_data
        && a.string_data == b.string_data
        && a.double_data.len() == b.double_data.len()
        && a.double_data
            .iter()
            .zip(&b.double_data)
            .all(|(x, y)| x.to_bits() == y.to_bits())
        && a.uint64_data == b.uint64_data
}

fn same_attrs(a: &[Attribute], b: &[Attribute]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().all(|x| {
        b.iter().any(|y| {
            x.name == y.name
                && match (&x.value, &y.value) {
                    (AttrValue::Tensor(s), AttrValue::Tensor(t)) => same_tensor(s, t),
                    (AttrValue::Float(s), AttrValue::Float(t)) => s.to_bits() == t.to_bits(),
                    (AttrValue::Floats(s), AttrValue::Floats(t)) => {
                        s.len() == t.len()
                            && s.iter().zip(t).all(|(p, q)| p.to_bits() == q.to_bits())
                    }
                    (s, t) => s == t,
                }
        })
    })
}

fn hash_attrs(attrs: &[Attribute], h: &mut DefaultHasher) {
    let mut sorted: Vec<&Attribute> = attrs.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for a in sorted {
        a.name.hash(h);
        match &a.value {
            AttrValue::Float(f) => f.to_bits().hash(h),
            AttrValue::Int(i) => i.hash(h),
            AttrValue::String(s) => s.hash(h),
            AttrValue::Tensor(t) => hash_tensor(t, h),
            AttrValue::Floats(v) => v.iter().for_each(|f| f.to_bits().hash(h)),
            AttrValue::Ints(v) => v.hash(h),
            AttrValue::Strings(v) => v.hash(h),
            other => format!("{other:?}").hash(h),
        }
    }
}

/// What a value is known to equal: a number shared by equal values only.
struct Numbering {
    vn: Vec<u64>,
    rep: HashMap<u64, u32>,
    unique: u64,
}

impl Numbering {
    fn fresh(&mut self) -> u64 {
        self.unique += 1;
        // Hashes of values never collide with these in practice; a collision could only merge
        // two values whose definitions are then compared (see `cse`).
        self.unique.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1
    }
}

fn eligible(n: &Node) -> bool {
    n.subgraphs().next().is_none()
        && !(n.domain().is_empty() && RANDOM.contains(&n.op_type.as_str()))
}

/// Merges common subexpressions; returns how many nodes went.
pub(super) fn cse(w: &mut Work, m: &Model) -> usize {
    let before = w.removed;
    let g = &m.graph;
    let mut num = Numbering {
        vn: vec![0; w.vals.len()],
        rep: HashMap::new(),
        unique: 0,
    };
    for v in 0..w.vals.len() as u32 {
        let val = &w.vals[v as usize];
        if val.producer != NONE {
            continue;
        }
        let init = (!val.input)
            .then(|| g.initializers.get(&val.name))
            .flatten();
        num.vn[v as usize] = match init {
            Some(t) if t.data_location != Some(1) => {
                let mut h = DefaultHasher::new();
                "init".hash(&mut h);
                hash_tensor(t, &mut h);
                let k = h.finish();
                match num.rep.get(&k) {
                    None => {
                        num.rep.insert(k, v);
                        k
                    }
                    Some(&r) if same_tensor(&g.initializers[&w.vals[r as usize].name], t) => k,
                    Some(_) => num.fresh(),
                }
            }
            _ => num.fresh(),
        };
    }
    for i in 0..w.nodes.len() {
        if !w.nodes[i].alive {
            // Values of removed nodes are never read again.
            continue;
        }
        let node = g.node(w.nodes[i].id).unwrap();
        let outputs = w.nodes[i].outputs.clone();
        let ins = w.nodes[i].inputs.clone();
        let mut key: Option<u64> = None;
        if eligible(node) {
            let default = node.domain().is_empty();
            if default && node.op_type == "Identity" && ins.len() == 1 && ins[0] != NONE {
                // The same value as its input.
                let a = ins[0];
                let k = num.vn[a as usize];
                if let Some(&o) = outputs.first()
                    && o != NONE
                {
                    num.vn[o as usize] = k;
                    let r = *num.rep.entry(k).or_insert(a);
                    if r != o {
                        try_merge(w, r, o);
                    }
                }
                continue;
            }
            let mut h = DefaultHasher::new();
            node.op_type.hash(&mut h);
            node.domain().hash(&mut h);
            hash_attrs(&node.attributes, &mut h);
            let shape_of = default && matches!(node.op_type.as_str(), "Shape" | "Size");
            let mut ok = true;
            for (slot, &v) in ins.iter().enumerate() {
                if v == NONE {
                    u64::MAX.hash(&mut h);
                } else if shape_of && slot == 0 {
                    let k = w.vals[v as usize].key;
                    if k == NONE {
                        ok = false;
                    }
                    ("type", k).hash(&mut h);
                } else {
                    num.vn[v as usize].hash(&mut h);
                }
            }
            if ok {
                key = Some(h.finish());
            }
        }
        for (slot, &o) in outputs.iter().enumerate() {
            if o == NONE {
                continue;
            }
            let Some(k) = key else {
                num.vn[o as usize] = num.fresh();
                continue;
            };
            let mut h = DefaultHasher::new();
            (k, slot).hash(&mut h);
            let k = h.finish();
            match num.rep.get(&k).copied() {
                None => {
                    num.rep.insert(k, o);
                    num.vn[o as usize] = k;
                }
                Some(r) if same_definition(w, &num, g, r, i as u32) => {
                    num.vn[o as usize] = k;
                    if w.nodes[i].alive {
                        try_merge(w, r, o);
                    }
                }
                Some(_) => num.vn[o as usize] = num.fresh(),
            }
        }
    }
    w.removed - before
}

/// Whether the producer of `r` computes what node `n` computes (the hash matched).
fn same_definition(w: &Work, num: &Numbering, g: &crate::ir::Graph, r: u32, n: u32) -> bool {
    let p = w.vals[r as usize].producer;
    if p == NONE {
        return false;
    }
    let (pa, pb) = (&w.nodes[p as usize], &w.nodes[n as usize]);
    let (na, nb) = (g.node(pa.id).unwrap(), g.node(pb.id).unwrap());
    let shape_of = nb.domain().is_empty() && matches!(nb.op_type.as_str(), "Shape" | "Size");
    na.op_type == nb.op_type
        && na.domain() == nb.domain()
        && same_attrs(&na.attributes, &nb.attributes)
        && pa.inputs.len() == pb.inputs.len()
        && pa
            .inputs
            .iter()
            .zip(&pb.inputs)
            .enumerate()
            .all(|(slot, (&x, &y))| {
                if x == NONE || y == NONE {
                    x == y
                } else if shape_of && slot == 0 {
                    w.vals[x as usize].key == w.vals[y as usize].key
                } else {
                    num.vn[x as usize] == num.vn[y as usize]
                }
            })
}

fn try_merge(w: &mut Work, a: u32, b: u32) {
    if let Ok(p) = w.plan(a, b) {
        w.commit(p);
    }
}
