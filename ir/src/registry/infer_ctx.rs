//! What an op's inference, validity rules and constant folder see of a node ([`InferCtx`]),
//! and the types of those functions.

use crate::attr::{AttrLookup, AttrValue};
use crate::dtype::DType;
use crate::graph::{Graph, Node};
use crate::tensor::{Tensor, TensorExt};
use crate::types::{TensorType, ValueType};
use std::borrow::Cow;
use std::collections::HashMap;

/// What shape inference sees of one node.
pub struct InferCtx<'a> {
    /// The node.
    pub node: &'a Node,
    /// The default-domain opset of the model.
    pub opset: i64,
    /// Types of the inputs by slot; `None` for an absent optional input (borrowed from the
    /// graph's types during inference).
    pub inputs: Vec<Option<Cow<'a, ValueType>>>,
    /// Constant values of the inputs by slot, where known (borrowed from the graph during
    /// inference: a copy of every constant input of every node was a large part of
    /// inferring a graph with weights).
    pub consts: Vec<Option<Cow<'a, Tensor>>>,
    /// Inferred output types of the node's subgraphs: attribute name → one list per graph.
    pub subgraph_outputs: HashMap<String, Vec<Vec<ValueType>>>,
}

/// Owned input types as [`InferCtx::inputs`] holds them.
pub fn owned_types(inputs: Vec<Option<ValueType>>) -> Vec<Option<Cow<'static, ValueType>>> {
    inputs.into_iter().map(|c| c.map(Cow::Owned)).collect()
}

/// Owned constants as [`InferCtx::consts`] holds them.
pub fn owned(consts: Vec<Option<Tensor>>) -> Vec<Option<Cow<'static, Tensor>>> {
    consts.into_iter().map(|c| c.map(Cow::Owned)).collect()
}

/// A failed inference: the node's inputs or attributes contradict the op's rules. The same
/// type says why a case is ambiguous ([`crate::registry::OpSpec::ambiguous`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InferError {
    /// The op has no inference function.
    #[error("no inference function")]
    NoInference,
    /// A required input slot is absent.
    #[error("input {0} is missing")]
    MissingInput(usize),
    /// An input is of the wrong kind of value (a sequence where a tensor is needed, ...).
    #[error("input {slot} must be a {expected}, found {found}")]
    WrongKind {
        /// The input slot.
        slot: usize,
        /// The kind needed (`tensor`, `sequence`).
        expected: &'static str,
        /// The input's type.
        found: ValueType,
    },
    /// An axis outside `[-rank, rank)`.
    #[error("axis {axis} is out of range for rank {rank}")]
    AxisOutOfRange {
        /// The axis as given.
        axis: i64,
        /// The rank it indexes.
        rank: usize,
    },
    /// An axis listed twice (after normalization).
    #[error("axis {0} is repeated")]
    RepeatedAxis(i64),
    /// An axis given for a scalar, which has none.
    #[error("axis {0} given for a scalar input")]
    AxisOfScalar(i64),
    /// Axes given for a scalar, which has none.
    #[error("axes {0:?} given for a scalar input")]
    AxesOfScalar(Vec<i64>),
    /// Two known dims that do not broadcast (neither is 1 and they differ).
    #[error("cannot broadcast dims {0} and {1}")]
    Broadcast(i64, i64),
    /// Two descriptions of one value disagree on its element type.
    #[error("element types differ: {0} and {1}")]
    ElemTypesDiffer(DType, DType),
    /// Two descriptions of one value disagree on its kind.
    #[error("types differ: {0} and {1}")]
    TypesDiffer(ValueType, ValueType),
    /// The node breaks a rule particular to its op; the message says which (each op states
    /// its own rules, in its own terms).
    #[error("{0}")]
    Rule(String),
}

/// Type-and-shape transfer function.
pub type InferFn = fn(&InferCtx) -> Result<Vec<ValueType>, InferError>;

/// Extra validity constraints on inputs and attributes (also the type of
/// [`crate::registry::OpSpec::ambiguous`], whose `Err` says why a case is ambiguous).
pub type RequiresFn = fn(&InferCtx) -> Result<(), InferError>;

/// Constant evaluation of small tensors (shape arithmetic), `None` when not computable.
pub type FoldFn = fn(&InferCtx) -> Option<Vec<Tensor>>;

impl<'a> InferCtx<'a> {
    /// A context for a node without subgraphs (or whose subgraph outputs are not needed).
    pub fn new(
        node: &'a Node,
        opset: i64,
        inputs: Vec<Option<ValueType>>,
        consts: Vec<Option<Tensor>>,
    ) -> InferCtx<'a> {
        InferCtx {
            node,
            opset,
            inputs: owned_types(inputs),
            consts: owned(consts),
            subgraph_outputs: HashMap::new(),
        }
    }
    /// Number of input slots (including absent ones).
    pub fn n_inputs(&self) -> usize {
        self.inputs.len()
    }
    /// Number of outputs of the node.
    pub fn n_outputs(&self) -> usize {
        self.node.outputs.len()
    }
    /// Whether input `i` is present.
    pub fn has_input(&self, i: usize) -> bool {
        matches!(self.inputs.get(i), Some(Some(_)))
    }
    /// The type of input `i` (Unknown if absent).
    pub fn input_type(&self, i: usize) -> ValueType {
        self.inputs
            .get(i)
            .and_then(|t| t.as_deref())
            .cloned()
            .unwrap_or(ValueType::Unknown)
    }
    /// Input `i` as a tensor type; error if it is absent or not a tensor. An input of unknown
    /// type gives a tensor of unknown dtype and rank.
    pub fn tensor(&self, i: usize) -> Result<TensorType, InferError> {
        match self.inputs.get(i).map(|t| t.as_deref()) {
            Some(Some(ValueType::Tensor(t))) => Ok(t.clone()),
            Some(Some(ValueType::Unknown)) => Ok(TensorType {
                dtype: DType::Other(0),
                shape: None,
            }),
            Some(Some(other)) => Err(InferError::WrongKind {
                slot: i,
                expected: "tensor",
                found: other.clone(),
            }),
            _ => Err(InferError::MissingInput(i)),
        }
    }
    /// The dtype of input `i` (Other(0) if unknown).
    pub fn dtype(&self, i: usize) -> DType {
        match self.inputs.get(i).map(|t| t.as_deref()) {
            Some(Some(ValueType::Tensor(t))) => t.dtype,
            _ => DType::Other(0),
        }
    }
    /// Constant value of input `i` as i64s.
    pub fn const_i64s(&self, i: usize) -> Option<Vec<i64>> {
        self.consts.get(i)?.as_ref()?.to_i64s().ok()
    }
    /// Constant value of input `i` as f64s.
    pub fn const_f64s(&self, i: usize) -> Option<Vec<f64>> {
        self.consts.get(i)?.as_ref()?.to_f64s().ok()
    }
    /// Constant tensor of input `i`.
    pub fn const_tensor(&self, i: usize) -> Option<&Tensor> {
        self.consts.get(i)?.as_deref()
    }
    /// The inferred output types of the subgraph held in attribute `name` (first graph).
    pub fn subgraph(&self, name: &str) -> Option<&Vec<ValueType>> {
        self.subgraph_outputs.get(name).and_then(|v| v.first())
    }
    /// The subgraph itself.
    pub fn subgraph_def(&self, name: &str) -> Option<&Graph> {
        self.node.graph(name)
    }
}

impl AttrLookup for InferCtx<'_> {
    fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.node.attr(name)
    }
}
