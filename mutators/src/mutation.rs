//! The mutation framework: the [`Mutator`] trait (one struct per mutation), what a mutation
//! returns ([`Outcome`]), and the replayable, droppable [`Record`] of an applied mutation.
//!
//! A record is a list of [`Edit`]s that name nodes by their first output value (value names
//! are unique in a graph, node ids are not stable across replays that drop a record), so a
//! mutation trace can be replayed on the seed model with any subset of its records.
use crate::builder::SplitMix64;
use crate::coverage::Coverage;
use crate::ir::patch::{Patch, PatchOp};
use crate::ir::{Model, pb};
use crate::recipes::Recipes;
use prost::Message as _;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What part of a model a mutation changes (How-Far Table 3, MEMO Table 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Adds, removes, copies, switches, merges or connects ops.
    Structure,
    /// Changes the attributes (parameters) of ops.
    Layer,
    /// Changes the shape or rank of a graph input or of an op's input.
    Input,
    /// Changes weight values.
    Weight,
    /// Feeds NaN / Inf into an op.
    Value,
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Family::Structure => "structure",
            Family::Layer => "layer",
            Family::Input => "input",
            Family::Weight => "weight",
            Family::Value => "value",
        };
        f.write_str(s)
    }
}

/// Bounds that keep mutants small enough to run in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Most ops in a mutant's main graph.
    pub max_nodes: usize,
    /// Most elements in any one value a mutation's new ops compute.
    pub max_elements: i64,
    /// Most elements in any one constant a mutation creates. Constants take their shapes from
    /// the model (a weight replaced at its seed's size), so they may be larger than the values
    /// computed; the bound is there because a seed may declare any size (a dim of 10^12 must
    /// fail the mutation, not the allocation).
    pub max_constant_elements: i64,
    /// Most graph outputs.
    pub max_outputs: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_nodes: 120,
            max_elements: 1 << 16,
            max_constant_elements: 1 << 22,
            max_outputs: 8,
        }
    }
}

impl Limits {
    /// The limits for mutants of a seed of `seed_nodes` ops: a seed larger than the node limit
    /// (an exported model) may still grow by half the limit.
    pub fn for_seed(&self, seed_nodes: usize) -> Limits {
        Limits {
            max_nodes: self.max_nodes.max(seed_nodes + self.max_nodes / 2),
            ..self.clone()
        }
    }

    /// Whether a mutant of `nodes` ops of a seed of `seed_nodes` ops has grown so far that it
    /// should start again from its seed (operators that add ops would mostly be skipped on it):
    /// at three quarters of the limit, or, for a seed that raised its limit, three quarters of
    /// the way from the seed to it.
    pub fn grown_out(&self, seed_nodes: usize, nodes: usize) -> bool {
        let max = self.for_seed(seed_nodes).max_nodes;
        let at = if max == self.max_nodes {
            max * 3 / 4
        } else {
            seed_nodes + (max - seed_nodes) * 3 / 4
        };
        nodes >= at
    }
}

/// What a mutator may look at while mutating.
pub struct Ctx<'a> {
    /// The mutation's random generator (fixed seed per campaign, so runs are reproducible).
    pub rng: &'a mut SplitMix64,
    /// Global coverage so far (to prefer uncovered op types, pairs and parameter buckets).
    pub coverage: &'a Coverage,
    /// How to instantiate each op type the generator knows.
    pub recipes: &'a Recipes,
    /// Size bounds.
    pub limits: &'a Limits,
}

impl Ctx<'_> {
    /// Uniform integer in `[0, n)` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }
    /// Uniform integer in `[lo, hi]`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.rng.unit() < p
    }
    /// A uniformly chosen element (`None` on an empty slice).
    pub fn pick<'s, T>(&mut self, items: &'s [T]) -> Option<&'s T> {
        if items.is_empty() {
            None
        } else {
            Some(&items[self.below(items.len())])
        }
    }
    /// Shuffles in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// The result of one mutation attempt.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The model was changed; the record replays the change.
    Mutated(Record),
    /// The mutation does not apply to this model (no activation to remove, ...); the model is
    /// unchanged.
    Skipped(String),
    /// The mutation built an edit that failed validation; the model is unchanged. Counted as an
    /// illegal mutant: mutators are meant to be valid by construction.
    Rejected(String),
}

impl Outcome {
    /// The record, if the model was changed.
    pub fn record(&self) -> Option<&Record> {
        match self {
            Outcome::Mutated(r) => Some(r),
            _ => None,
        }
    }
}

/// One mutation operator.
pub trait Mutator: Send + Sync {
    /// Short name as in the papers (`NLA`, `LConn`, `GF`, ...).
    fn name(&self) -> &'static str;
    /// What the mutation changes.
    fn family(&self) -> Family;
    /// One line for `--help`-style listings.
    fn description(&self) -> &'static str;
    /// Mutates `model` in place. On [`Outcome::Skipped`] / [`Outcome::Rejected`] the model is
    /// left as it was.
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome;
}

/// A node as it travels in a record: its `NodeProto` bytes (base64 in JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeBytes(#[serde(with = "b64")] pub Vec<u8>);

/// A protobuf message (tensor, value info) as it travels in a record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProtoBytes(#[serde(with = "b64")] pub Vec<u8>);

mod b64 {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(v))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(s.as_bytes())
            .map_err(serde::de::Error::custom)
    }
}

/// One edit of a record. Nodes are named by their first output value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "edit")]
pub enum Edit {
    /// Adds a node.
    AddNode {
        /// Its op type (for readers of the trace).
        op: String,
        /// The node.
        node: NodeBytes,
    },
    /// Removes the node producing `output`.
    RemoveNode {
        /// First output of the node.
        output: String,
    },
    /// Replaces the node producing `output`.
    ReplaceNode {
        /// First output of the node before the edit.
        output: String,
        /// Its op type after the edit.
        op: String,
        /// The new node.
        node: NodeBytes,
    },
    /// Points input `slot` of the node producing `output` at `value`.
    SetInput {
        /// First output of the consumer.
        output: String,
        /// Input slot.
        slot: usize,
        /// New value read there.
        value: String,
    },
    /// Every reader of `old` reads `new` instead.
    ReplaceUses {
        /// Value no longer read.
        old: String,
        /// Value read instead.
        new: String,
    },
    /// Adds or replaces an initializer (a `TensorProto`).
    SetInitializer {
        /// Its name.
        name: String,
        /// The tensor.
        tensor: ProtoBytes,
    },
    /// Removes an initializer.
    RemoveInitializer {
        /// Its name.
        name: String,
    },
    /// Adds a graph input (a `ValueInfoProto`).
    AddInput {
        /// Its name.
        name: String,
        /// The value info.
        info: ProtoBytes,
    },
    /// Removes a graph input.
    RemoveInput {
        /// Its name.
        name: String,
    },
    /// Adds a graph output (a `ValueInfoProto`).
    AddOutput {
        /// Its name.
        name: String,
        /// The value info.
        info: ProtoBytes,
    },
    /// Removes a graph output.
    RemoveOutput {
        /// Its name.
        name: String,
    },
}

/// An applied mutation: which operator, what it did in words, and the edits that replay it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Operator name (`NLA`, ...).
    pub operator: String,
    /// What was done, in words (`inserted Softsign after conv_3`).
    pub summary: String,
    /// The edits, in order.
    pub edits: Vec<Edit>,
}

/// Why a record could not be replayed.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayError(pub String);

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReplayError {}

/// Why a patch could not be written as a [`Record`] (its edits name nodes by their first
/// output, which a node of the patch may not have).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RecordError {
    /// The patch names a node the model does not have.
    #[error("patch names node {0}, which does not exist")]
    NoSuchNode(crate::ir::NodeId),
    /// A node the patch names has no first output.
    #[error("node {0} has no first output to name it by")]
    Unnamed(
        /// The node's label.
        String,
    ),
}

fn first_output(model: &Model, id: crate::ir::NodeId) -> Result<String, RecordError> {
    let n = model.graph.node(id).ok_or(RecordError::NoSuchNode(id))?;
    n.outputs
        .first()
        .filter(|o| !o.is_empty())
        .cloned()
        .ok_or_else(|| RecordError::Unnamed(n.label()))
}

fn node_bytes(n: &crate::ir::Node) -> NodeBytes {
    NodeBytes(crate::ir::export::node_to_proto(n).encode_to_vec())
}

impl Record {
    /// The record of `patch` as applied to `before` (the model the patch was built against).
    pub fn from_patch(
        operator: &str,
        summary: impl Into<String>,
        before: &Model,
        patch: &Patch,
    ) -> Result<Record, RecordError> {
        let mut edits = Vec::with_capacity(patch.ops.len());
        for op in &patch.ops {
            edits.push(match op {
                PatchOp::AddNode(n) => Edit::AddNode {
                    op: n.op_type.clone(),
                    node: node_bytes(n),
                },
                PatchOp::RemoveNode(id) => Edit::RemoveNode {
                    output: first_output(before, *id)?,
                },
                PatchOp::ReplaceNode(id, n) => Edit::ReplaceNode {
                    output: first_output(before, *id)?,
                    op: n.op_type.clone(),
                    node: node_bytes(n),
                },
                PatchOp::SetInput { node, slot, value } => Edit::SetInput {
                    output: first_output(before, *node)?,
                    slot: *slot,
                    value: value.clone(),
                },
                PatchOp::ReplaceUses { old, new } => Edit::ReplaceUses {
                    old: old.clone(),
                    new: new.clone(),
                },
                PatchOp::AddInitializer(t) => Edit::SetInitializer {
                    name: t.name.clone().unwrap_or_default(),
                    tensor: ProtoBytes(t.encode_to_vec()),
                },
                PatchOp::RemoveInitializer(name) => Edit::RemoveInitializer { name: name.clone() },
                PatchOp::AddInput(v) => Edit::AddInput {
                    name: v.name.clone().unwrap_or_default(),
                    info: ProtoBytes(v.encode_to_vec()),
                },
                PatchOp::RemoveInput(name) => Edit::RemoveInput { name: name.clone() },
                PatchOp::AddOutput(v) => Edit::AddOutput {
                    name: v.name.clone().unwrap_or_default(),
                    info: ProtoBytes(v.encode_to_vec()),
                },
                PatchOp::RemoveOutput(name) => Edit::RemoveOutput { name: name.clone() },
            });
        }
        Ok(Record {
            operator: operator.to_string(),
            summary: summary.into(),
            edits,
        })
    }

    /// The patch that replays this record on `model` (nodes are looked up by first output as
    /// the edits go, so an edit may name a node added earlier in the same record).
    pub fn to_patch(&self, model: &Model) -> Result<Patch, ReplayError> {
        let err = |s: String| ReplayError(format!("{}: {s}", self.operator));
        // First outputs of the existing nodes.
        let mut by_output: std::collections::HashMap<String, crate::ir::NodeId> = model
            .graph
            .nodes()
            .filter_map(|n| Some((n.outputs.first()?.clone(), n.id)))
            .collect();
        let mut patch = Patch::new();
        let lookup = |by_output: &std::collections::HashMap<String, crate::ir::NodeId>,
                      o: &str|
         -> Result<crate::ir::NodeId, ReplayError> {
            by_output
                .get(o)
                .copied()
                .ok_or_else(|| err(format!("no node produces '{o}'")))
        };
        let decode_node = |b: &NodeBytes| -> Result<crate::ir::Node, ReplayError> {
            let p = pb::NodeProto::decode(b.0.as_slice())
                .map_err(|e| err(format!("bad node bytes: {e}")))?;
            crate::ir::import::node_from_proto(p, "record").map_err(|e| err(e.to_string()))
        };
        for e in &self.edits {
            match e {
                Edit::AddNode { node, .. } => {
                    let n = decode_node(node)?;
                    if n.outputs.first().is_some_and(|o| by_output.contains_key(o)) {
                        return Err(err(format!("value '{}' is already produced", n.outputs[0])));
                    }
                    patch.push(PatchOp::AddNode(n));
                }
                Edit::RemoveNode { output } => {
                    let id = lookup(&by_output, output)?;
                    by_output.remove(output);
                    patch.push(PatchOp::RemoveNode(id));
                }
                Edit::ReplaceNode { output, node, .. } => {
                    let id = lookup(&by_output, output)?;
                    let n = decode_node(node)?;
                    by_output.remove(output);
                    if let Some(o) = n.outputs.first() {
                        by_output.insert(o.clone(), id);
                    }
                    patch.push(PatchOp::ReplaceNode(id, n));
                }
                Edit::SetInput {
                    output,
                    slot,
                    value,
                } => {
                    let id = lookup(&by_output, output)?;
                    patch.push(PatchOp::SetInput {
                        node: id,
                        slot: *slot,
                        value: value.clone(),
                    });
                }
                Edit::ReplaceUses { old, new } => {
                    patch.push(PatchOp::ReplaceUses {
                        old: old.clone(),
                        new: new.clone(),
                    });
                }
                Edit::SetInitializer { tensor, .. } => {
                    let t = pb::TensorProto::decode(tensor.0.as_slice())
                        .map_err(|e| err(format!("bad tensor bytes: {e}")))?;
                    patch.push(PatchOp::AddInitializer(t));
                }
                Edit::RemoveInitializer { name } => {
                    patch.push(PatchOp::RemoveInitializer(name.clone()));
                }
                Edit::AddInput { info, .. } => {
                    let v = pb::ValueInfoProto::decode(info.0.as_slice())
                        .map_err(|e| err(format!("bad value info bytes: {e}")))?;
                    patch.push(PatchOp::AddInput(v));
                }
                Edit::RemoveInput { name } => {
                    patch.push(PatchOp::RemoveInput(name.clone()));
                }
                Edit::AddOutput { info, .. } => {
                    let v = pb::ValueInfoProto::decode(info.0.as_slice())
                        .map_err(|e| err(format!("bad value info bytes: {e}")))?;
                    patch.push(PatchOp::AddOutput(v));
                }
                Edit::RemoveOutput { name } => {
                    patch.push(PatchOp::RemoveOutput(name.clone()));
                }
            }
        }
        Ok(patch)
    }

    /// Applies the record to `model` (validated, all or nothing).
    pub fn replay(&self, model: &mut Model) -> Result<(), ReplayError> {
        let patch = self.to_patch(model)?;
        model
            .apply(&patch)
            .map(|_| ())
            .map_err(|e| ReplayError(format!("{}: {e}", self.operator)))
    }
}

/// Replays a trace on a seed model, keeping only the records for which `keep(i)` is true.
/// Records that no longer apply (they used something a dropped record made) are skipped;
/// the indices of the skipped records are returned beside the model.
pub fn replay_trace(
    seed: &Model,
    trace: &[Record],
    keep: impl Fn(usize) -> bool,
) -> (Model, Vec<usize>) {
    let mut m = seed.clone();
    let mut skipped = Vec::new();
    for (i, r) in trace.iter().enumerate() {
        if !keep(i) {
            continue;
        }
        if r.replay(&mut m).is_err() {
            skipped.push(i);
        }
    }
    (m, skipped)
}

/// Applies `patch` to `model` on behalf of `operator`: the record on success, `Rejected` with
/// the validation error otherwise (the model is then unchanged).
pub fn commit(model: &mut Model, operator: &str, summary: String, patch: &Patch) -> Outcome {
    if patch.ops.is_empty() {
        return Outcome::Skipped("nothing to change".into());
    }
    let record = match Record::from_patch(operator, summary, model, patch) {
        Ok(r) => r,
        Err(e) => return Outcome::Rejected(e.to_string()),
    };
    match model.apply(patch) {
        Ok(_) => Outcome::Mutated(record),
        Err(e) => Outcome::Rejected(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::Limits;

    #[test]
    fn exported_seeds_larger_than_the_limit_may_still_grow() {
        let l = Limits::default();
        // A zoo-sized seed: the limit and the restart point are the limit's.
        assert_eq!(l.for_seed(40).max_nodes, 120);
        assert!(!l.grown_out(40, 89) && l.grown_out(40, 90));
        // A 300-op exported model: it is not restarted at once, and may grow by 60.
        assert_eq!(l.for_seed(300).max_nodes, 360);
        assert!(!l.grown_out(300, 300));
        assert!(!l.grown_out(300, 344) && l.grown_out(300, 345));
    }
}
