//! The coverage model that guides the campaign (MEMO's layer type / layer pair / layer
//! parameter coverage, plus an input coverage), with explicit finite universes.
//!
//! # Families and their universes
//!
//! A [`Universe`] is computed once from the op registry ([`Registry::global`]). Only ops of the
//! default ONNX domain are in it (the `ai.onnx.preview.training` ops are left out). The full
//! universe holds every such op; [`Universe::restricted`] keeps a given list of op types (the
//! campaign restricts it to the ops every backend under test supports, so that the
//! denominators only count what the campaign can generate).
//!
//! * **Op types**: one item per op.
//! * **Op pairs** `a → b`: one item per *connectable* ordered pair. `a → b` is connectable when
//!   some output port of `a` can feed some input port of `b`: both ports are tensor ports
//!   (their type variable is named) and the dtype sets of the two type variables intersect, or
//!   both ports are untyped (the registry leaves sequence and optional ports untyped, `tc ""`),
//!   in which case they connect. An untyped port never connects to a tensor port. This is an
//!   approximation: the registry describes no rank constraints on ports, so ranks are not
//!   checked (`Size → Conv` counts as connectable though a rank-0 tensor cannot be a Conv
//!   input), and a `""` port of the `Optional` ops that would in truth take a tensor is taken
//!   as non-tensor. A pair seen in a model but outside the universe is not counted as covered;
//!   [`Report::outside_pairs`] tells how many such pairs were seen.
//! * **Parameters**: one item per bucket of every attribute spec of every op (the registry
//!   buckets each attribute into at most 5 buckets, see [`mutagraph_ir::registry::Buckets`]).
//!   An attribute that a node leaves out but whose spec has a default (at the model's opset)
//!   covers the bucket of its default: the library runs the default's code path.
//! * **Inputs**: per op, per tensor input port, per dtype allowed by the port's type variable,
//!   per shape cell. The cells are: rank 0 (scalar), and for each rank class `1`, `2`, `3`,
//!   `4`, `≥5` one of three shape classes: [`ShapeClass::ZeroSized`] (some dimension is 0),
//!   [`ShapeClass::HasUnit`] (no 0 but some 1: broadcasting and squeezing paths),
//!   [`ShapeClass::General`] (every known dimension is ≥ 2; symbolic dimensions count as
//!   general). That is 16 cells per (op, port, dtype). An input whose rank or dtype is unknown
//!   covers nothing. Variadic inputs all map onto their port. Ranks are not pruned by the
//!   op's rank constraints (the registry does not describe them), so this family's
//!   denominator is an over-approximation and its percentage reads low.
//!
//! Nodes of subgraphs (`If`, `Loop`, `Scan` bodies) count like nodes of the main graph; pairs
//! are taken within each graph.
//!
//! # Cost
//!
//! Items are dense integer ids and each family is a bitset, so adding a model costs a pass
//! over its nodes and edges with a hash lookup per op type and value name.
use mutagraph_ir::dtype::{self, DType};
use mutagraph_ir::registry::{OpSpec, PortKind, Registry};
use mutagraph_ir::types::TensorType;
use mutagraph_ir::{Graph, Model, Node, ValueType};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// Marks an attribute spec without parameter items (see [`Universe::params_at_opset`]).
const NO_PARAMS: usize = usize::MAX;

/// Number of shape cells per (op, input port, dtype).
pub const SHAPE_CELLS: usize = 1 + 5 * 3;

/// Shape class of an input of rank ≥ 1 (rank 0 is [`ShapeClass::Scalar`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShapeClass {
    /// Rank 0.
    Scalar,
    /// Some dimension is 0.
    ZeroSized,
    /// No dimension is 0, some is 1.
    HasUnit,
    /// Every known dimension is at least 2.
    General,
}

impl ShapeClass {
    fn name(self) -> &'static str {
        match self {
            ShapeClass::Scalar => "scalar",
            ShapeClass::ZeroSized => "zero",
            ShapeClass::HasUnit => "unit",
            ShapeClass::General => "general",
        }
    }
}

/// The shape cell (`0..SHAPE_CELLS`) of a tensor type, if its rank is known.
pub fn shape_cell(t: &TensorType) -> Option<usize> {
    let (rank, class) = shape_class(t)?;
    Some(match class {
        ShapeClass::Scalar => 0,
        c => {
            let k = match c {
                ShapeClass::ZeroSized => 0,
                ShapeClass::HasUnit => 1,
                _ => 2,
            };
            1 + (rank.min(5) - 1) * 3 + k
        }
    })
}

/// Rank and shape class of a tensor type, if its rank is known.
pub fn shape_class(t: &TensorType) -> Option<(usize, ShapeClass)> {
    let shape = t.shape.as_ref()?;
    if shape.is_empty() {
        return Some((0, ShapeClass::Scalar));
    }
    let class = if shape.iter().any(|d| d.value() == Some(0)) {
        ShapeClass::ZeroSized
    } else if shape.iter().any(|d| d.value() == Some(1)) {
        ShapeClass::HasUnit
    } else {
        ShapeClass::General
    };
    Some((shape.len(), class))
}

fn cell_name(cell: usize) -> String {
    if cell == 0 {
        return "r0/scalar".into();
    }
    let rank = (cell - 1) / 3 + 1;
    let class = [
        ShapeClass::ZeroSized,
        ShapeClass::HasUnit,
        ShapeClass::General,
    ][(cell - 1) % 3];
    let r = if rank == 5 {
        "r5+".to_string()
    } else {
        format!("r{rank}")
    };
    format!("{r}/{}", class.name())
}

/// A fixed-size set of small integers.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    fn new(n: usize) -> BitSet {
        BitSet {
            words: vec![0; n.div_ceil(64)],
        }
    }
    /// Sets bit `i`; true when it was clear.
    fn insert(&mut self, i: usize) -> bool {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        let new = self.words[w] & b == 0;
        self.words[w] |= b;
        new
    }
    fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
    }
    fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// Unions `other` in; returns how many bits were newly set.
    fn union(&mut self, other: &BitSet) -> usize {
        let mut n = 0;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            n += (*b & !*a).count_ones() as usize;
            *a |= *b;
        }
        n
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits & (1u64 << b) != 0)
                .map(move |b| w * 64 + b)
        })
    }
}

/// One tensor input port of an op in the input family.
#[derive(Debug)]
struct InputPort {
    op: u32,
    port: usize,
    dtypes: Vec<DType>,
    offset: usize,
}

/// Sizes of the four families of a universe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sizes {
    /// Op types.
    pub op_types: usize,
    /// Connectable op pairs.
    pub op_pairs: usize,
    /// Parameter buckets.
    pub params: usize,
    /// Input cells.
    pub inputs: usize,
}

/// The denominators: every coverable item of each family, as dense ids.
pub struct Universe {
    restricted: Option<Vec<String>>,
    ops: Vec<&'static OpSpec>,
    op_index: HashMap<&'static str, u32>,
    /// `a * n + b` set when `a → b` is connectable.
    connectable: BitSet,
    n_pairs: usize,
    /// Per op, per attr spec: id of its first bucket ([`NO_PARAMS`] when the spec is left out).
    attr_offsets: Vec<Vec<usize>>,
    /// The opset the parameter family was restricted to, if any.
    params_opset: Option<i64>,
    /// Per param id: (op, attr spec index, bucket).
    params: Vec<(u32, u16, u8)>,
    /// Per op, per input port: index into `ports` (None for untyped ports).
    op_ports: Vec<Vec<Option<usize>>>,
    ports: Vec<InputPort>,
    n_inputs: usize,
}

impl fmt::Debug for Universe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Universe")
            .field("restricted", &self.restricted)
            .field("sizes", &self.sizes())
            .finish()
    }
}

/// The allowed dtypes of a port's type variable; `None` for an untyped (non-tensor) port.
fn port_dtypes(spec: &OpSpec, tc: &str) -> Option<Vec<DType>> {
    if tc.is_empty() {
        return None;
    }
    Some(spec.allowed(tc).unwrap_or(dtype::ALL).to_vec())
}

fn ports_connect(a: &OpSpec, b: &OpSpec) -> bool {
    a.outputs.iter().any(|o| {
        let od = port_dtypes(a, o.tc);
        b.inputs.iter().any(|i| match (&od, port_dtypes(b, i.tc)) {
            (None, None) => true,
            (Some(x), Some(y)) => x.iter().any(|d| y.contains(d)),
            _ => false,
        })
    })
}

impl Universe {
    /// The universe over every default-domain op of the registry (built once, shared).
    pub fn full() -> Arc<Universe> {
        static U: OnceLock<Arc<Universe>> = OnceLock::new();
        U.get_or_init(|| {
            let specs = Registry::global()
                .iter()
                .filter(|s| s.domain.is_empty())
                .collect();
            Arc::new(Universe::build(specs, None))
        })
        .clone()
    }

    /// The universe over the listed default-domain op types (sorted, duplicates dropped).
    /// An op type the registry does not know is an error.
    pub fn restricted<S: AsRef<str>>(op_types: &[S]) -> Result<Universe, String> {
        let reg = Registry::global();
        let names: BTreeSet<&str> = op_types.iter().map(|s| s.as_ref()).collect();
        let mut specs = Vec::new();
        for n in &names {
            specs.push(
                reg.get("", n)
                    .ok_or_else(|| format!("unknown op type `{n}`"))?,
            );
        }
        let list = names.iter().map(|s| s.to_string()).collect();
        Ok(Universe::build(specs, Some(list)))
    }

    /// Like [`Universe::restricted`], but `a → b` is a pair of the universe exactly when
    /// `connectable(a, b)` says so (the campaign passes the generator's dtype-and-rank facts,
    /// which are finer than the registry's port dtype sets).
    pub fn with_pairs<S: AsRef<str>>(
        op_types: &[S],
        connectable: impl Fn(&str, &str) -> bool,
    ) -> Result<Universe, String> {
        let mut u = Universe::restricted(op_types)?;
        let n = u.ops.len();
        let mut bits = BitSet::new(n * n);
        for (ia, a) in u.ops.iter().enumerate() {
            for (ib, b) in u.ops.iter().enumerate() {
                if connectable(a.op_type, b.op_type) {
                    bits.insert(ia * n + ib);
                }
            }
        }
        u.n_pairs = bits.count();
        u.connectable = bits;
        Ok(u)
    }

    /// The same universe whose parameter family only has the attribute versions that exist at
    /// `opset` (a campaign over seeds of one opset can reach no other version's buckets).
    pub fn params_at_opset(mut self, opset: i64) -> Universe {
        let mut attr_offsets = Vec::with_capacity(self.ops.len());
        let mut params = Vec::new();
        for (io, s) in self.ops.iter().enumerate() {
            let mut offs = Vec::with_capacity(s.attrs.len());
            for (k, a) in s.attrs.iter().enumerate() {
                if !a.exists_at(opset) {
                    offs.push(NO_PARAMS);
                    continue;
                }
                offs.push(params.len());
                for b in 0..a.buckets.len() {
                    params.push((io as u32, k as u16, b as u8));
                }
            }
            attr_offsets.push(offs);
        }
        self.attr_offsets = attr_offsets;
        self.params = params;
        self.params_opset = Some(opset);
        self
    }

    fn build(ops: Vec<&'static OpSpec>, restricted: Option<Vec<String>>) -> Universe {
        let n = ops.len();
        let op_index = ops
            .iter()
            .enumerate()
            .map(|(i, s)| (s.op_type, i as u32))
            .collect();
        let mut connectable = BitSet::new(n * n);
        for (ia, a) in ops.iter().enumerate() {
            for (ib, b) in ops.iter().enumerate() {
                if ports_connect(a, b) {
                    connectable.insert(ia * n + ib);
                }
            }
        }
        let n_pairs = connectable.count();
        let mut attr_offsets = Vec::with_capacity(n);
        let mut params = Vec::new();
        for (io, s) in ops.iter().enumerate() {
            let mut offs = Vec::with_capacity(s.attrs.len());
            for (k, a) in s.attrs.iter().enumerate() {
                offs.push(params.len());
                for b in 0..a.buckets.len() {
                    params.push((io as u32, k as u16, b as u8));
                }
            }
            attr_offsets.push(offs);
        }
        let mut op_ports = Vec::with_capacity(n);
        let mut ports = Vec::new();
        let mut n_inputs = 0;
        for (io, s) in ops.iter().enumerate() {
            let mut v = Vec::with_capacity(s.inputs.len());
            for (ip, p) in s.inputs.iter().enumerate() {
                match port_dtypes(s, p.tc) {
                    None => v.push(None),
                    Some(dtypes) => {
                        v.push(Some(ports.len()));
                        let size = dtypes.len() * SHAPE_CELLS;
                        ports.push(InputPort {
                            op: io as u32,
                            port: ip,
                            dtypes,
                            offset: n_inputs,
                        });
                        n_inputs += size;
                    }
                }
            }
            op_ports.push(v);
        }
        Universe {
            restricted,
            ops,
            op_index,
            connectable,
            n_pairs,
            attr_offsets,
            params_opset: None,
            params,
            op_ports,
            ports,
            n_inputs,
        }
    }

    /// Sizes of the families.
    pub fn sizes(&self) -> Sizes {
        Sizes {
            op_types: self.ops.len(),
            op_pairs: self.n_pairs,
            params: self.params.len(),
            inputs: self.n_inputs,
        }
    }

    /// The op types, sorted.
    pub fn op_types(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.ops.iter().map(|s| s.op_type)
    }

    /// The op list this universe was restricted to (`None`: the full registry).
    pub fn restriction(&self) -> Option<&[String]> {
        self.restricted.as_deref()
    }

    /// Whether `a → b` is a connectable pair (`None` when either op is not in the universe).
    pub fn is_connectable(&self, a: &str, b: &str) -> Option<bool> {
        let (a, b) = (*self.op_index.get(a)?, *self.op_index.get(b)?);
        Some(self.connectable.contains(self.pair_id(a, b)))
    }

    fn pair_id(&self, a: u32, b: u32) -> usize {
        a as usize * self.ops.len() + b as usize
    }

    fn op_of(&self, n: &Node) -> Option<u32> {
        if !n.domain().is_empty() {
            return None;
        }
        self.op_index.get(n.op_type.as_str()).copied()
    }

    fn param_key(&self, id: usize) -> String {
        let (op, k, b) = self.params[id];
        let s = self.ops[op as usize];
        let a = &s.attrs[k as usize];
        format!("{}.{}@{}#{}", s.op_type, a.name, a.since, b)
    }

    /// A readable label of a parameter item: `Op.attr=bucket`.
    pub fn param_label(&self, id: usize) -> String {
        let (op, k, b) = self.params[id];
        let s = self.ops[op as usize];
        let a = &s.attrs[k as usize];
        let label = a.buckets.labels().swap_remove(b as usize);
        format!("{}.{}={}", s.op_type, a.name, label)
    }

    fn input_key(&self, id: usize) -> String {
        let pi = self.ports.partition_point(|p| p.offset <= id) - 1;
        let p = &self.ports[pi];
        let rel = id - p.offset;
        let (d, cell) = (rel / SHAPE_CELLS, rel % SHAPE_CELLS);
        format!(
            "{}/{}/{}/{}",
            self.ops[p.op as usize].op_type,
            p.port,
            p.dtypes[d].name(),
            cell_name(cell)
        )
    }

    fn same_as(&self, other: &Universe) -> bool {
        std::ptr::eq(self, other)
            || (self.restricted == other.restricted && self.sizes() == other.sizes())
    }
}

/// What one added model (or merge) newly covered, per family.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delta {
    /// New op types.
    pub op_types: usize,
    /// New op pairs.
    pub op_pairs: usize,
    /// New parameter buckets.
    pub params: usize,
    /// New input cells.
    pub inputs: usize,
}

impl Delta {
    /// True when nothing new was covered.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }
    /// Sum over the families.
    pub fn total(&self) -> usize {
        self.op_types + self.op_pairs + self.params + self.inputs
    }
    /// True when a MEMO coverage family (types, pairs, parameters) grew.
    pub fn is_diverse(&self) -> bool {
        self.op_types + self.op_pairs + self.params > 0
    }
}

/// Covered / total of one family.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Family {
    /// Items covered.
    pub covered: usize,
    /// Items in the universe.
    pub total: usize,
    /// `100 * covered / total` (0 for an empty family).
    pub percent: f64,
}

impl Family {
    fn new(covered: usize, total: usize) -> Family {
        let percent = if total == 0 {
            0.0
        } else {
            100.0 * covered as f64 / total as f64
        };
        Family {
            covered,
            total,
            percent,
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} / {} ({:.1}%)",
            self.covered, self.total, self.percent
        )
    }
}

/// A summary of a [`Coverage`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Models added.
    pub models: u64,
    /// Op type coverage.
    pub op_types: Family,
    /// Op pair coverage.
    pub op_pairs: Family,
    /// Parameter bucket coverage.
    pub params: Family,
    /// Input coverage.
    pub inputs: Family,
    /// Op types of the universe never seen.
    pub uncovered_op_types: Vec<String>,
    /// Op types seen that are not in the universe (domain-qualified when not default).
    pub outside_op_types: Vec<String>,
    /// Distinct pairs seen between universe ops that the universe deems not connectable.
    pub outside_pairs: usize,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "models:    {}", self.models)?;
        writeln!(f, "op types:  {}", self.op_types)?;
        writeln!(f, "op pairs:  {}", self.op_pairs)?;
        writeln!(f, "params:    {}", self.params)?;
        write!(f, "inputs:    {}", self.inputs)
    }
}

/// Covered items of the four families over a [`Universe`].
///
/// Serializes as readable item keys (`Conv`, `Conv->Relu`, `Conv.group@1#2`,
/// `Conv/0/f32/r4/general`) plus the universe's op restriction; deserializing rebuilds the
/// universe from the registry and drops keys it no longer has.
#[derive(Clone, Debug)]
pub struct Coverage {
    universe: Arc<Universe>,
    ops: BitSet,
    pairs: BitSet,
    params: BitSet,
    inputs: BitSet,
    outside_ops: BTreeSet<String>,
    outside_pairs: BTreeSet<(u32, u32)>,
    models: u64,
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
        let mut producer: HashMap<&str, Option<u32>> = HashMap::new();
        for n in g.nodes() {
            let op = u.op_of(n);
            for o in &n.outputs {
                if !o.is_empty() {
                    producer.insert(o.as_str(), op);
                }
            }
        }
        for n in g.nodes() {
            for (_, sg) in n.subgraphs() {
                self.add_graph(sg, opset, d);
            }
            let Some(op) = u.op_of(n) else {
                let label = if n.domain().is_empty() {
                    n.op_type.clone()
                } else {
                    format!("{}::{}", n.domain(), n.op_type)
                };
                self.outside_ops.insert(label);
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
            for a in &n.attributes {
                let Some(k) = spec
                    .attr_spec_at(&a.name, opset)
                    .and_then(|s| spec.attrs.iter().position(|x| std::ptr::eq(x, s)))
                else {
                    continue;
                };
                if offs[k] != NO_PARAMS
                    && let Some(b) = spec.attrs[k].buckets.bucket_of(&a.value)
                    && self.params.insert(offs[k] + b)
                {
                    d.params += 1;
                }
            }
            for (k, s) in spec.attrs.iter().enumerate() {
                if !s.exists_at(opset)
                    || offs[k] == NO_PARAMS
                    || n.attributes.iter().any(|a| a.name == s.name)
                {
                    continue;
                }
                if let Some(b) = s.default.as_ref().and_then(|v| s.buckets.bucket_of(v))
                    && self.params.insert(offs[k] + b)
                {
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
                .map(|(_, s)| s.op_type.to_string())
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
                    self.universe.ops[i / n].op_type.to_string(),
                    self.universe.ops[i % n].op_type.to_string(),
                )
            })
            .collect()
    }

    fn to_saved(&self) -> Saved {
        let u = &self.universe;
        Saved {
            restricted: u.restricted.clone(),
            models: self.models,
            op_types: self
                .ops
                .iter()
                .map(|i| u.ops[i].op_type.to_string())
                .collect(),
            op_pairs: self
                .covered_pairs()
                .into_iter()
                .map(|(a, b)| format!("{a}->{b}"))
                .collect(),
            params: self.params.iter().map(|i| u.param_key(i)).collect(),
            inputs: self.inputs.iter().map(|i| u.input_key(i)).collect(),
            outside_op_types: self.outside_ops.iter().cloned().collect(),
            outside_pairs: self
                .outside_pairs
                .iter()
                .map(|&(a, b)| {
                    format!(
                        "{}->{}",
                        u.ops[a as usize].op_type, u.ops[b as usize].op_type
                    )
                })
                .collect(),
        }
    }

    fn add_saved(&mut self, s: &Saved) -> Delta {
        let u = Arc::clone(&self.universe);
        let mut d = Delta::default();
        self.models += s.models;
        for o in &s.op_types {
            if let Some(&i) = u.op_index.get(o.as_str())
                && self.ops.insert(i as usize)
            {
                d.op_types += 1;
            }
        }
        let pair = |k: &str| {
            let (a, b) = k.split_once("->")?;
            Some((*u.op_index.get(a)?, *u.op_index.get(b)?))
        };
        for k in &s.op_pairs {
            if let Some((a, b)) = pair(k) {
                let id = u.pair_id(a, b);
                if u.connectable.contains(id) && self.pairs.insert(id) {
                    d.op_pairs += 1;
                }
            }
        }
        for k in &s.outside_pairs {
            if let Some(p) = pair(k) {
                self.outside_pairs.insert(p);
            }
        }
        if !s.params.is_empty() {
            let keys: HashMap<String, usize> =
                (0..u.params.len()).map(|i| (u.param_key(i), i)).collect();
            for k in &s.params {
                if let Some(&i) = keys.get(k)
                    && self.params.insert(i)
                {
                    d.params += 1;
                }
            }
        }
        if !s.inputs.is_empty() {
            let keys: HashMap<String, usize> =
                (0..u.n_inputs).map(|i| (u.input_key(i), i)).collect();
            for k in &s.inputs {
                if let Some(&i) = keys.get(k)
                    && self.inputs.insert(i)
                {
                    d.inputs += 1;
                }
            }
        }
        self.outside_ops.extend(s.outside_op_types.iter().cloned());
        d
    }
}

/// The serialized form of a [`Coverage`].
#[derive(Serialize, Deserialize)]
struct Saved {
    restricted: Option<Vec<String>>,
    models: u64,
    op_types: Vec<String>,
    op_pairs: Vec<String>,
    params: Vec<String>,
    inputs: Vec<String>,
    #[serde(default)]
    outside_op_types: Vec<String>,
    #[serde(default)]
    outside_pairs: Vec<String>,
}

impl Serialize for Coverage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_saved().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Coverage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Coverage, D::Error> {
        let saved = Saved::deserialize(d)?;
        let universe = match &saved.restricted {
            None => Universe::full(),
            Some(list) => Arc::new(Universe::restricted(list).map_err(serde::de::Error::custom)?),
        };
        let mut c = Coverage::new(universe);
        c.add_saved(&saved);
        Ok(c)
    }
}

impl Coverage {
    /// The same covered items over another universe (after deserializing a coverage whose
    /// universe was made by [`Universe::with_pairs`], which the saved form does not describe).
    pub fn rebase(&self, universe: Arc<Universe>) -> Coverage {
        let mut c = Coverage::new(universe);
        c.add_saved(&self.to_saved());
        c
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
