//! The grammar of an ONNX text model (the syntax [`mutagraph_ir::text::parse_model`] reads)
//! that holds a node of one of a task's ops.
//!
//! Each op's grammar comes from the op registry and is checked against it before it is
//! offered: for each layout of the op's inputs (which optional inputs are written, how many
//! values a variadic port takes) a small search finds a concrete instance that parses, infers
//! and validates (one shape per port, chosen from candidates derived from the first input's
//! shape: the same shape, its last or channel dim, a matrix, a convolution weight, scalars;
//! constant integer inputs such as shapes, axes and pads get fixed values). The grammar then
//! offers:
//!
//! - the dtype bindings that validate with that instance (one dtype per type variable, bound
//!   once per alternative, so the inputs' types are consistent);
//! - for each input other than the first, every candidate shape that validates with the rest
//!   of the instance;
//! - for small inputs of float, integer or bool type, an initializer with literal values
//!   (small ordinary numbers and the task's [`Literal`]s: NaN, infinities, huge values), in the
//!   `<...>` list after the graph's outputs;
//! - each attribute that exists at the opset, optional unless required, with the values that
//!   validate with the instance (legal values from its
//!   [`Legal`](mutagraph_ir::registry::Legal), the op's default first) and the task's
//!   literals where the attribute's kind and legal values take them.
//!
//! Graph outputs are written without a type (`=> (Y)`; inference types them). Value names are
//! fixed (the schema's port names). Sentences stay short: at most four dims of at most six,
//! initializers of at most [`MAX_INIT_VALUES`] values.
//!
//! The module's parts: `search` finds the instances per op (with `candidates` the shapes,
//! layouts and attribute values it tries, `instance` what it builds and validates),
//! `rules` assembles the grammar's rules from them, `literals` writes the literal
//! values and initializers, `values` formats dtypes, numbers and attributes.

mod candidates;
mod instance;
mod literals;
mod rules;
mod search;
mod values;

use super::{Expr, Grammar, GrammarError};
use literals::add_values;
use mutagraph_ir::registry::Registry;
use search::plan;

/// What a generated model must hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// The ops of interest: the model holds a node of one of them.
    pub ops: Vec<String>,
    /// The default domain's opset of the model.
    pub opset: i64,
    /// Values the model should be able to hold (trigger values, axes, pads, scales).
    pub literals: Vec<Literal>,
    /// Wrap the model in a "```onnx" fence (what the answer extractor looks for).
    pub fenced: bool,
    /// Every model writes one of `literals` (a float one into a float input, an integer one
    /// into an integer input; of the floats only the special ones, NaN, infinities, huge and
    /// tiny magnitudes, when there are any) in an input given as a literal initializer — the
    /// trigger value of a transferred snippet. Ops none of whose inputs can hold one are offered as if this
    /// were false.
    pub require_literal: bool,
}

/// A value a generated model may write in an initializer or an attribute.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// A float (NaN and infinities included): values of float and double initializers and
    /// float attributes.
    Float(f64),
    /// An integer: values of integer initializers and int attributes.
    Int(i64),
    /// A list of integers: the values of a constant integer input (axes, pads, a shape) and
    /// ints attributes.
    Ints(Vec<i64>),
}

/// Initializers with literal values hold at most this many values.
pub const MAX_INIT_VALUES: i64 = 12;

/// The grammar of a model holding a node of one of `task.ops`; the root rule is `root`.
/// An error names the first op that is not in the registry, not defined at the opset, or has
/// no instance that validates.
pub fn grammar(task: &Task) -> Result<Grammar, GrammarError> {
    if task.ops.is_empty() {
        return Err(GrammarError::NoOps);
    }
    let mut g = Grammar::new("root");
    let mut models = Vec::new();
    for op in &task.ops {
        let plan = plan(op, task.opset).map_err(|reason| GrammarError::Op {
            op: op.clone(),
            opset: task.opset,
            reason,
        })?;
        models.push(plan.add_rules(&mut g, task));
    }
    add_values(&mut g, task);
    let header = format!(
        "<ir_version: {}, opset_import: [\"\" : {}]>\n",
        ir_version(task.opset),
        task.opset
    );
    g.rule("model", Expr::alt(models));
    let body = Expr::seq([Expr::lit(header), Expr::r("model")]);
    g.rule(
        "root",
        if task.fenced {
            Expr::seq([Expr::lit("```onnx\n"), body, Expr::lit("```")])
        } else {
            body
        },
    );
    g.check()?;
    Ok(g)
}

/// Every op of the default domain that gets a grammar at `opset`, sorted by name.
pub fn supported_ops(opset: i64) -> Vec<&'static str> {
    Registry::global()
        .iter()
        .filter(|s| s.domain.is_empty())
        .filter(|s| plan(s.op_type, opset).is_ok())
        .map(|s| s.op_type)
        .collect()
}

/// The default domain's ops of the registry that get no grammar at `opset`, each with why.
pub fn unsupported_ops(opset: i64) -> Vec<(&'static str, String)> {
    Registry::global()
        .iter()
        .filter(|s| s.domain.is_empty())
        .filter_map(|s| plan(s.op_type, opset).err().map(|e| (s.op_type, e)))
        .collect()
}

/// The IR version written with an opset (the one ONNX released with it, at most 11).
fn ir_version(opset: i64) -> i64 {
    match opset {
        ..=18 => 8,
        19..=20 => 9,
        21..=22 => 10,
        _ => 11,
    }
}
