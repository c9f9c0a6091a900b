//! Seed reduction (MEMO Alg. 1): drop repeated ops inside a block and repeated blocks, keeping
//! op type, op pair and parameter coverage and keeping the model valid.
//!
//! # What the graph is seen as
//!
//! Exporters do not write the clean layer lists MEMO's Keras models have: weights arrive as
//! `Constant` nodes or as `Identity` nodes of shared initializers hoisted to the top of the
//! graph, and reshapes read their target shape from `Shape → Gather → Unsqueeze → Concat`
//! chains computed from an earlier activation. So every node is classified first
//! ([`work`]):
//!
//! * **const**: a node whose inputs are all constants (`Constant`, `Identity` of an
//!   initializer, folded arithmetic on weights): part of the op that reads it;
//! * **meta**: `Shape` / `Size` and anything computed only from their outputs and constants
//!   (the shape chains, `ConstantOfShape` of a computed shape): a side branch, part of the op
//!   that consumes it;
//! * **data**: everything else, the activations' path.
//!
//! Const and meta nodes never delimit a block and are never "another input": they live as long
//! as one of their (transitive) data consumers does, and go with the last one.
//!
//! # Blocks
//!
//! **Cut values** are data values that alone carry everything computed so far to the rest of
//! the graph: walking the data nodes in topological order, the only data value (or real graph
//! input) that is still to be read. A read by a const or meta node counts at the position of
//! the data node that consumes that side chain (a `Shape` of a block's input feeding the
//! block's `Reshape` keeps the input alive until that `Reshape`). Blocks are the segments
//! between cut values: a residual, bottleneck, inverted-residual, squeeze-excitation or
//! attention module with its shape chains and weights is one block. [`find_blocks`] lists them.
//!
//! # Removals
//!
//! Every removal has one form: *readers of value `b` read value `a` instead*, then every node
//! left without a reader is dropped, with the constants, shape chains and initializers only it
//! used. Candidates, in rounds until nothing changes:
//!
//! * **common subexpressions** ([`cse`]): `b` computes what `a` already computes (equal
//!   constants, the `Identity` of a weight, `Shape` of two values of the same type, the same op
//!   on the same values): exporters repeat these at every use;
//! * **inter-block**: `a` and `b` are cut values of the same type (a run of whole blocks), the
//!   longest run from each block first, so that the first occurrence stays;
//! * **intra-block**: `b` is any data value, `a` a data value of the same type among `b`'s
//!   nearest ancestors (a window of [`search::WINDOW`] ops): one op bypassed
//!   (`BatchNormalization`, an activation), a branch of an `Add` dropped, a dense layer of a
//!   DenseNet block replaced by the previous one, a squeeze-excitation module dropped; the
//!   candidate removing most nodes wins, later values first.
//!
//! "The same type" is the same element type and the same dims for every size the inputs can
//! take ([`types`]). Then, on the small model this leaves, **shape-changing** removals
//! ([`adapt`]): `a` of the same rank but other dims, the weights of `b`'s readers cut or tiled to
//! `a`'s channels, each candidate checked by inference on a copy of the model (MEMO keeps the
//! rank only and lets Keras rebuild the weights).
//!
//! A candidate is kept only when the op type, op pair and parameter coverage of the model over
//! the full universe is unchanged (no item lost, none gained). That check is incremental
//! ([`items`]): the reducer keeps a count of every coverage item and computes what a candidate
//! removes and rewires, on its own compact copy of the graph ([`work`]), without cloning or
//! re-validating the model. The model is rebuilt, validated and its coverage compared with the
//! original's once, at the end (and on every candidate of the shape-changing phase, which runs
//! on small models only).
//!
//! Not done: shrinking spatial or sequence sizes (the inputs keep their declared sizes; a
//! dynamic size is left dynamic).
mod adapt;
mod cse;
mod items;
mod search;
mod types;
mod work;

use crate::coverage::{Coverage, Universe};
use crate::ir::attr::AttrValue;
use crate::ir::tensor::TensorExt;
use crate::ir::{Graph, Model, NodeId};
use std::fmt;

pub use search::{Block, find_blocks};

/// Sizes before and after a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReduceReport {
    /// Ops before.
    pub nodes_before: usize,
    /// Ops after.
    pub nodes_after: usize,
    /// Parameters before ([`param_count`]).
    pub params_before: usize,
    /// Parameters after.
    pub params_after: usize,
    /// Blocks found in the original model.
    pub blocks: usize,
    /// Ops removed by intra-block removals.
    pub intra_removed: usize,
    /// Runs of whole blocks removed.
    pub blocks_removed: usize,
    /// Ops removed by removals that change shapes, with weights adapted.
    #[serde(default)]
    pub adapted_removed: usize,
}

impl fmt::Display for ReduceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nodes {} -> {}, parameters {} -> {} ({} blocks; {} ops removed inside blocks, {} block runs removed, {} ops removed with their readers' weights adapted)",
            self.nodes_before,
            self.nodes_after,
            self.params_before,
            self.params_after,
            self.blocks,
            self.intra_removed,
            self.blocks_removed,
            self.adapted_removed
        )
    }
}

/// Why a model cannot be reduced.
#[derive(Debug, thiserror::Error)]
pub enum ReduceError {
    /// The model does not validate.
    #[error("invalid model: {0}")]
    Invalid(crate::ir::Error),
    /// The main graph has no topological order (a cycle).
    #[error(transparent)]
    Order(crate::ir::Error),
    /// A node reads a value that nothing before it defines.
    #[error("value '{0}' is read before it is defined")]
    ReadBeforeDefined(
        /// The value.
        String,
    ),
    /// A graph output names a value nothing defines.
    #[error("graph output '{0}' is not defined")]
    UndefinedOutput(
        /// The value.
        String,
    ),
    /// The reduced model could not be rebuilt from the working copy.
    #[error("reduced model: {0}")]
    Rebuild(crate::ir::Error),
    /// The reduction lost or gained a coverage item (a bug of the reducer).
    #[error("internal error: the reduced model's coverage differs from the original's")]
    CoverageChanged,
}

/// Parameters of a model: the elements of its initializers and of the tensors its `Constant`
/// nodes hold (`value`, `value_floats`, `value_ints`: exporters such as Paddle's write every
/// weight so), in the main graph and in subgraphs.
pub fn param_count(m: &Model) -> usize {
    graph_params(&m.graph)
}

fn graph_params(g: &Graph) -> usize {
    let elements = |t: &crate::ir::tensor::Tensor| t.num_elements().max(0) as usize;
    let mut n: usize = g.initializers.values().map(elements).sum();
    for node in g.nodes() {
        if node.op_type == "Constant" && node.domain().is_empty() {
            for a in &node.attributes {
                n += match (a.name.as_str(), &a.value) {
                    ("value", AttrValue::Tensor(t)) => elements(t),
                    ("value_floats", AttrValue::Floats(v)) => v.len(),
                    ("value_ints", AttrValue::Ints(v)) => v.len(),
                    _ => 0,
                };
            }
        }
        for (_, sg) in node.subgraphs() {
            n += graph_params(sg);
        }
    }
    n
}

type Signature = (Vec<String>, Vec<(String, String)>, Vec<String>);

/// The op type, op pair and parameter items a model covers over the full universe.
fn signature(m: &Model) -> Signature {
    let u = Universe::full();
    let mut c = Coverage::new(u.clone());
    c.add_model(m);
    let ops = u
        .op_types()
        .filter(|o| c.has_op(o))
        .map(str::to_string)
        .collect();
    (ops, c.covered_pairs(), c.covered_params())
}

/// Reduces a model; see the module documentation.
pub fn reduce(model: &Model) -> Result<(Model, ReduceReport), ReduceError> {
    crate::ir::validate::validate(model).map_err(ReduceError::Invalid)?;
    let mut m = model.clone();
    let keys = types::TypeKeys::infer(&mut m);
    let sig = signature(&m);
    let mut w = work::Work::build(&m, &keys)?;
    drop(keys);
    let mut report = ReduceReport {
        nodes_before: model.graph.node_count(),
        nodes_after: 0,
        params_before: param_count(model),
        params_after: 0,
        blocks: search::blocks_of(&w, &m).len(),
        intra_removed: 0,
        blocks_removed: 0,
        adapted_removed: 0,
    };
    let stats = search::run(&mut w, &m);
    report.blocks_removed = stats.runs_removed;
    report.intra_removed = stats.intra_nodes;
    let mut r = w.into_model(m)?;
    report.adapted_removed = adapt::adapt(&mut r, &sig);
    if signature(&r) != sig {
        return Err(ReduceError::CoverageChanged);
    }
    report.nodes_after = r.graph.node_count();
    report.params_after = param_count(&r);
    Ok((r, report))
}

/// A node's label for block listings.
fn label(m: &Model, id: NodeId) -> String {
    m.graph
        .node(id)
        .map_or_else(|| id.to_string(), |n| n.op_type.clone())
}
