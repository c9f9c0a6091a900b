//! [`BuildError`]: why an op, or a chain of ops, could not be built at a [`Site`].
//!
//! A build error is never fatal: the mutator tries another op or another place, and the
//! last error's text ends up in the reason of a skipped mutation, so the texts are part of
//! what a campaign records.
//!
//! [`Site`]: crate::site::Site
use crate::ir::DType;

/// Why an op could not be built at a site: the recipe does not apply to the value, the
/// registry refuses the node, a size limit would be exceeded, or a value lacks the static
/// type the edit needs. Nothing is added to the site when a node is refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// The op does not apply to this input, for a reason of its own (recipes and mutators
    /// have many, each stated once: "Split of an empty dimension", ...).
    #[error("{0}")]
    NotApplicable(String),
    /// A constant over the constant size limit was asked for (it was not made); every later
    /// node of the edit is refused with this error.
    #[error("a constant '{hint}' of shape {dims:?} is over the limit of {limit} elements")]
    ConstantTooLarge {
        /// The name hint of the constant.
        hint: String,
        /// The shape asked for.
        dims: Vec<i64>,
        /// The limit, elements.
        limit: i64,
    },
    /// An output of the node would have more elements than the size limit allows.
    #[error("{op} output '{output}' would have {elements} elements (limit {limit})")]
    TooManyElements {
        /// The op type.
        op: String,
        /// The output value.
        output: String,
        /// Its element count.
        elements: i64,
        /// The limit, elements.
        limit: i64,
    },
    /// The registry does not know the op.
    #[error("unknown op {op}")]
    UnknownOp {
        /// The op type.
        op: String,
    },
    /// The op comes after the model's opset.
    #[error("{op} needs opset {since} (model has {opset})")]
    OpsetTooOld {
        /// The op type.
        op: String,
        /// The first opset of the op.
        since: i64,
        /// The model's opset.
        opset: i64,
    },
    /// The node has an attribute the op does not have at the model's opset.
    #[error("{op} has no attribute {attr}")]
    UnknownAttribute {
        /// The op type.
        op: String,
        /// The attribute's name.
        attr: String,
    },
    /// An attribute's value is not one its spec allows.
    #[error("{op}.{attr}: {reason}")]
    BadAttribute {
        /// The op type.
        op: String,
        /// The attribute's name.
        attr: String,
        /// What the spec says is wrong.
        reason: String,
    },
    /// An input's element type is not one the op allows at the model's opset.
    #[error("{op} input {slot} is {dtype}, which opset {opset} does not allow")]
    InputDtype {
        /// The op type.
        op: String,
        /// The input slot.
        slot: usize,
        /// The input's element type.
        dtype: DType,
        /// The model's opset.
        opset: i64,
    },
    /// An output's element type would not be one the op allows at the model's opset.
    #[error("{op} output {slot} would be {dtype}, which opset {opset} does not allow")]
    OutputDtype {
        /// The op type.
        op: String,
        /// The output slot.
        slot: usize,
        /// The output's element type.
        dtype: DType,
        /// The model's opset.
        opset: i64,
    },
    /// The op's constraints on its inputs and attributes (the registry's `requires`) fail.
    #[error("{op}: {reason}")]
    Unsatisfied {
        /// The op type.
        op: String,
        /// What the registry says.
        reason: String,
    },
    /// The node is valid but ONNX leaves its result ambiguous (never generated).
    #[error("{op}: {reason}")]
    Ambiguous {
        /// The op type.
        op: String,
        /// What the registry says.
        reason: String,
    },
    /// Type-and-shape inference refuses the node.
    #[error("{op}: {reason}")]
    Inference {
        /// The op type.
        op: String,
        /// What inference says.
        reason: String,
    },
    /// A value to adapt has no static type (known dtype and fully static shape).
    #[error("'{value}' has no static type")]
    NoStaticType {
        /// The value.
        value: String,
    },
    /// The type to adapt a value to has no static shape.
    #[error("target shape is not static")]
    TargetNotStatic,
    /// A value to declare a graph output is not a tensor.
    #[error("'{value}' is not a tensor")]
    NotATensor {
        /// The value.
        value: String,
    },
    /// A recipe of a splice reads neither the end of the chain nor the type it splices at.
    #[error("{op} accepts neither current type")]
    NotAccepted {
        /// The recipe's op type.
        op: String,
    },
    /// The output of an op of a splice has no static type.
    #[error("{op} output has no static type")]
    OutputNotStatic {
        /// The op type.
        op: String,
    },
    /// A splice was finished without any op in it.
    #[error("empty splice")]
    EmptySplice,
    /// No value of the model can be read by the op.
    #[error("no value {op} accepts")]
    NoValue {
        /// The op type.
        op: String,
    },
    /// An edit meant to keep a value's type would change it.
    #[error("{what} changes the type")]
    ChangesType {
        /// What was built (an op type, `copy`, `switch`).
        what: String,
    },
}

impl BuildError {
    /// The op does not apply to this input, for the reason given.
    pub fn not_applicable(reason: impl Into<String>) -> BuildError {
        BuildError::NotApplicable(reason.into())
    }
}
