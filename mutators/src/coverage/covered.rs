//! [`Coverage`]: the covered items of the four families over a universe, and how adding a
//! model or merging another coverage grows them.
use super::bitset::BitSet;
use super::cells::{SHAPE_CELLS, shape_cell};
use super::params::{NO_PARAMS, node_buckets};
use super::report::{Delta, Family, Report};
use super::universe::Universe;
use mutagraph_ir::registry::PortKind;
use mutagraph_ir::{Graph, Model, ValueType};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Covered items of the four families over a [`Universe`].
///
/// Serializes as readable item keys (`Conv`, `Conv->Relu`, `Conv.group@1#2`,
/// `Conv/0/f32/r4/general`) plus the universe's op restriction; deserializing rebuilds the
/// universe from the registry and drops keys it no longer has.
#[derive(Clone, Debug)]
pub struct Coverage {
    pub(super) universe: Arc<Universe>,
    pub(super) ops: BitSet,
    pub(super) pairs: BitSet,
    pub(super) params: BitSet,
    pub(super) inputs: BitSet,
    pub(super) outside_ops: BTreeSet<String>,
    pub(super) outside_pairs: BTreeSet<(u32, u32)>,
    pub(super) models: u64,
}

impl Default for Coverage {
    fn default() -> Coverage {
        Coverage::new(Universe::full())
    }
}

impl Coverage {
    /// Nothing covered yet over `universe`.
    pub fn new(universe: Arc<Universe>) -> Coverage {
        let s = universe.sizes();
        let n = universe.ops.len();
        Coverage {
            ops: BitSet::new(s.op_types),
            pairs: BitSet::new(n * n),
            params: BitSet::new(s.params),
            inputs: BitSet::new(s.inputs),
            outside_ops: BTreeSet::new(),
            outside_pairs: BTreeSet::new(),
            models: 0,
            universe,
        }
    }

    /// The universe.
    pub fn universe(&self) -> &Arc<Universe> {
        &self.universe
    }

    /// Adds a model; infers types on a copy first when the model carries none.
    pub fn add_model(&mut self, model: &Model) -> Delta {
        if model.graph.types.is_empty() && model.graph.node_count() > 0 {
            let mut m = model.clone();
            mutagraph_ir::infer::infer_model(&mut m, Default::default());
            self.add_inferred(&m)
        } else {
            self.add_inferred(model)
        }
    }

    /// Adds a model as it is (types as already inferred or declared).
    pub fn add_inferred(&mut self, model: &Model) -> Delta {
        let mut d = Delta::default();
        let opset = model.default_opset();
        self.add_graph(&model.graph, opset, &mut d);
        self.models += 1;
        d
    }

    /// What adding `model` would newly cover, leaving `self` unchanged.
    pub fn novelty(&self, model: &Model) -> Delta {
        self.clone().add_model(model)
    }

    fn add_graph(&mut self, g: &Graph, opset: i64, d: &mut Delta) {
        let u = Arc::clone(&self.universe);
        let producer = u.producers(g);
        for n in g.nodes() {
            for (_, sg) in n.subgraphs() {
                self.add_graph(sg, opset, d);
            }
            let Some(op) = u.op_of(n) else {
                self.outside_ops
                    .insert(crate::ir::registry::op_key(n.domain(), &n.op_type));
                continue;
            };
            if self.ops.insert(op as usize) {
                d.op_types += 1;
            }
            let spec = u.ops[op as usize];
            for (slot, name) in n.inputs.iter().enumerate() {
                if name.is_empty() {
                    continue;
                }
                if let Some(Some(p)) = producer.get(name.as_str()) {
                    let id = u.pair_id(*p, op);
                    if u.connectable.contains(id) {
                        if self.pairs.insert(id) {
                            d.op_pairs += 1;
                        }
                    } else {
                        self.outside_pairs.insert((*p, op));
                    }
                }
                let ports = &u.op_ports[op as usize];
                let port = if slot < ports.len() {
                    Some(slot)
                } else if matches!(
                    spec.inputs.last().map(|p| p.kind),
                    Some(PortKind::Variadic { .. })
                ) {
                    Some(ports.len() - 1)
                } else {
                    None
                };
                let Some(Some(pi)) = port.map(|p| ports[p]) else {
                    continue;
                };
                let owned;
                let vt = match g.types.get(name.as_str()) {
                    Some(t) if *t != ValueType::Unknown => t,
                    _ => {
                        owned = g.value_type(name);
                        &owned
                    }
                };
                let Some(t) = vt.tensor() else { continue };
                let p = &u.ports[pi];
                let (Some(di), Some(cell)) =
                    (p.dtypes.iter().position(|x| *x == t.dtype), shape_cell(t))
                else {
                    continue;
                };
                if self.inputs.insert(p.offset + di * SHAPE_CELLS + cell) {
                    d.inputs += 1;
                }
            }
            let offs = &u.attr_offsets[op as usize];
            for (k, b) in node_buckets(spec, n, opset) {
                if offs[k] != NO_PARAMS && self.params.insert(offs[k] + b) {
                    d.params += 1;
                }
            }
        }
    }

    /// Unions `other` in; returns what was new. Coverages over different universes merge
    /// through their item keys (items outside `self`'s universe are dropped).
    pub fn merge(&mut self, other: &Coverage) -> Delta {
        self.models += other.models;
        if self.universe.same_as(&other.universe) {
            self.outside_ops.extend(other.outside_ops.iter().cloned());
            self.outside_pairs
                .extend(other.outside_pairs.iter().copied());
            Delta {
                op_types: self.ops.union(&other.ops),
                op_pairs: self.pairs.union(&other.pairs),
                params: self.params.union(&other.params),
                inputs: self.inputs.union(&other.inputs),
            }
        } else {
            let mut saved = other.to_saved();
            saved.models = 0;
            self.add_saved(&saved)
        }
    }

    /// Covered / total per family.
    pub fn report(&self) -> Report {
        let u = &self.universe;
        let s = u.sizes();
        Report {
            models: self.models,
            op_types: Family::new(self.ops.count(), s.op_types),
            op_pairs: Family::new(self.pairs.count(), s.op_pairs),
            params: Family::new(self.params.count(), s.params),
            inputs: Family::new(self.inputs.count(), s.inputs),
            uncovered_op_types: u
                .ops
                .iter()
                .enumerate()
                .filter(|(i, _)| !self.ops.contains(*i))
                .map(|(_, s)| s.key.to_string())
                .collect(),
            outside_op_types: self.outside_ops.iter().cloned().collect(),
            outside_pairs: self.outside_pairs.len(),
        }
    }

    /// Whether op type `op` is covered.
    pub fn has_op(&self, op: &str) -> bool {
        self.universe
            .op_index
            .get(op)
            .is_some_and(|&i| self.ops.contains(i as usize))
    }

    /// Whether the pair `a → b` is covered.
    pub fn has_pair(&self, a: &str, b: &str) -> bool {
        let u = &self.universe;
        match (u.op_index.get(a), u.op_index.get(b)) {
            (Some(&a), Some(&b)) => self.pairs.contains(u.pair_id(a, b)),
            _ => false,
        }
    }

    /// Labels (`Op.attr=bucket`) of the covered parameter buckets.
    pub fn covered_params(&self) -> Vec<String> {
        self.params
            .iter()
            .map(|i| self.universe.param_label(i))
            .collect()
    }

    /// Whether bucket `bucket` of attribute `attr` (the spec that exists at `opset`) of `op` is
    /// covered; `None` when the universe has no such item.
    pub fn has_param(&self, op: &str, attr: &str, opset: i64, bucket: usize) -> Option<bool> {
        let u = &self.universe;
        let io = *u.op_index.get(op)? as usize;
        let spec = u.ops[io];
        let k = spec
            .attrs
            .iter()
            .position(|a| a.name == attr && a.exists_at(opset))?;
        if bucket >= spec.attrs[k].buckets.len() {
            return None;
        }
        let off = u.attr_offsets[io][k];
        if off == NO_PARAMS {
            return None;
        }
        Some(self.params.contains(off + bucket))
    }

    /// Keys (`Op/port/dtype/rank/class`) of the covered input cells.
    pub fn covered_inputs(&self) -> Vec<String> {
        self.inputs
            .iter()
            .map(|i| self.universe.input_key(i))
            .collect()
    }

    /// Covered op pairs as `(a, b)`.
    pub fn covered_pairs(&self) -> Vec<(String, String)> {
        let n = self.universe.ops.len();
        self.pairs
            .iter()
            .map(|i| {
                (
                    self.universe.ops[i / n].key.to_string(),
                    self.universe.ops[i % n].key.to_string(),
                )
            })
            .collect()
    }
}

impl PartialEq for Coverage {
    fn eq(&self, other: &Coverage) -> bool {
        self.universe.same_as(&other.universe)
            && self.ops == other.ops
            && self.pairs == other.pairs
            && self.params == other.params
            && self.inputs == other.inputs
            && self.outside_ops == other.outside_ops
            && self.outside_pairs == other.outside_pairs
            && self.models == other.models
    }
}
