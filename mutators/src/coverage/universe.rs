//! The [`Universe`]: every coverable item of each family, as dense ids, computed from the op
//! registry (or a list of its op types).
use super::bitset::BitSet;
use super::cells::{SHAPE_CELLS, cell_name};
use super::params::{ParamItem, param_table};
use mutagraph_ir::dtype::{self, DType};
use mutagraph_ir::registry::{OpSpec, Registry};
use mutagraph_ir::{Graph, Node};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// One tensor input port of an op in the input family.
#[derive(Debug)]
pub(super) struct InputPort {
    pub(super) op: u32,
    pub(super) port: usize,
    pub(super) dtypes: Vec<DType>,
    pub(super) offset: usize,
}

/// Why a universe could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UniverseError {
    /// An op type of the list is not a default-domain op of the registry.
    #[error("unknown op type `{0}`")]
    UnknownOp(
        /// The op type as listed.
        String,
    ),
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
    pub(super) restricted: Option<Vec<String>>,
    pub(super) ops: Vec<&'static OpSpec>,
    pub(super) op_index: HashMap<&'static str, u32>,
    /// `a * n + b` set when `a → b` is connectable.
    pub(super) connectable: BitSet,
    pub(super) n_pairs: usize,
    /// Per op, per attr spec: id of its first bucket ([`NO_PARAMS`] when the spec is left out).
    ///
    /// [`NO_PARAMS`]: super::params::NO_PARAMS
    pub(super) attr_offsets: Vec<Vec<usize>>,
    /// The opset the parameter family was restricted to, if any.
    pub(super) params_opset: Option<i64>,
    /// Per param id: (op, attr spec index, bucket).
    pub(super) params: Vec<ParamItem>,
    /// Per op, per input port: index into `ports` (None for untyped ports).
    pub(super) op_ports: Vec<Vec<Option<usize>>>,
    pub(super) ports: Vec<InputPort>,
    pub(super) n_inputs: usize,
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

/// Whether some output port of `a` can feed some input port of `b` (see the module
/// documentation).
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

    /// The universe over the listed op keys (`Op`, or `domain::Op` outside the default
    /// domain; sorted, duplicates dropped). An op the registry does not know is an error.
    pub fn restricted<S: AsRef<str>>(op_types: &[S]) -> Result<Universe, UniverseError> {
        let reg = Registry::global();
        let names: BTreeSet<&str> = op_types.iter().map(|s| s.as_ref()).collect();
        let mut specs = Vec::new();
        for n in &names {
            specs.push(
                reg.by_key(n)
                    .ok_or_else(|| UniverseError::UnknownOp(n.to_string()))?,
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
    ) -> Result<Universe, UniverseError> {
        let mut u = Universe::restricted(op_types)?;
        let bits = pair_bits(&u.ops, |a, b| connectable(a.key, b.key));
        u.n_pairs = bits.count();
        u.connectable = bits;
        Ok(u)
    }

    fn build(ops: Vec<&'static OpSpec>, restricted: Option<Vec<String>>) -> Universe {
        let n = ops.len();
        let op_index = ops
            .iter()
            .enumerate()
            .map(|(i, s)| (s.key, i as u32))
            .collect();
        let connectable = pair_bits(&ops, ports_connect);
        let n_pairs = connectable.count();
        let (attr_offsets, params) = param_table(&ops, |_| true);
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

    /// The op keys (`Op`, or `domain::Op` outside the default domain), sorted.
    pub fn op_types(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.ops.iter().map(|s| s.key)
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

    pub(super) fn pair_id(&self, a: u32, b: u32) -> usize {
        a as usize * self.ops.len() + b as usize
    }

    /// Whether the pair of the ops of ids `a` and `b` is connectable.
    pub(crate) fn connects(&self, a: u32, b: u32) -> bool {
        self.connectable.contains(self.pair_id(a, b))
    }

    /// The id of a node's op (`None` outside the universe: another domain, or an op type
    /// the universe does not have).
    pub(crate) fn op_of(&self, n: &Node) -> Option<u32> {
        if n.domain().is_empty() || n.domain() == "ai.onnx" {
            return self.op_index.get(n.op_type.as_str()).copied();
        }
        let key = mutagraph_ir::registry::op_key(n.domain(), &n.op_type);
        self.op_index.get(key.as_str()).copied()
    }

    /// The op id of the node that makes each value of `g` (the pair family's edges within a
    /// graph; `None` for a node outside the universe).
    pub(crate) fn producers<'g>(&self, g: &'g Graph) -> HashMap<&'g str, Option<u32>> {
        let mut producer = HashMap::new();
        for n in g.nodes() {
            let op = self.op_of(n);
            for o in &n.outputs {
                if !o.is_empty() {
                    producer.insert(o.as_str(), op);
                }
            }
        }
        producer
    }

    pub(super) fn input_key(&self, id: usize) -> String {
        let pi = self.ports.partition_point(|p| p.offset <= id) - 1;
        let p = &self.ports[pi];
        let rel = id - p.offset;
        let (d, cell) = (rel / SHAPE_CELLS, rel % SHAPE_CELLS);
        format!(
            "{}/{}/{}/{}",
            self.ops[p.op as usize].key,
            p.port,
            p.dtypes[d].name(),
            cell_name(cell)
        )
    }

    pub(super) fn same_as(&self, other: &Universe) -> bool {
        std::ptr::eq(self, other)
            || (self.restricted == other.restricted && self.sizes() == other.sizes())
    }
}

/// The pair bits over `ops`: `a * n + b` set when `connects(a, b)`.
fn pair_bits(ops: &[&'static OpSpec], connects: impl Fn(&OpSpec, &OpSpec) -> bool) -> BitSet {
    let n = ops.len();
    let mut bits = BitSet::new(n * n);
    for (ia, a) in ops.iter().enumerate() {
        for (ib, b) in ops.iter().enumerate() {
            if connects(a, b) {
                bits.insert(ia * n + ib);
            }
        }
    }
    bits
}
