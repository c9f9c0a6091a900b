//! The specification of one operator ([`OpSpec`]): its ports, attributes, type constraints,
//! inference, validity rules and constant folder, built step by step.

use super::attr_spec::AttrSpec;
use super::infer_ctx::{FoldFn, InferCtx, InferError, InferFn, RequiresFn};
use super::traits::Traits;
use super::type_table::schema_port_types;
use crate::dtype::DType;
use crate::types::ValueType;

/// Broad family of an op (used by reports, the zoo and mutators).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Category {
    /// Elementwise math (unary or binary, broadcasting).
    Elementwise,
    /// Activation functions.
    Activation,
    /// Convolutions.
    Conv,
    /// Pooling.
    Pool,
    /// Normalization.
    Norm,
    /// Matrix products (Gemm, MatMul, Einsum).
    Linear,
    /// Reductions, ArgMax/ArgMin, TopK, CumSum.
    Reduce,
    /// Softmax family.
    Softmax,
    /// Shape manipulation (Reshape, Transpose, Concat, ...).
    Shape,
    /// Indexing (Gather, Scatter, Slice, ...).
    Index,
    /// Recurrent layers.
    Rnn,
    /// Casts and type conversion.
    Cast,
    /// Comparison and logic.
    Logic,
    /// Control flow (If, Loop, Scan).
    ControlFlow,
    /// Sequences and optionals.
    Sequence,
    /// Quantization.
    Quantize,
    /// Random number generation.
    Random,
    /// Anything else.
    Misc,
}

/// How many values a port takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum PortKind {
    /// Exactly one value.
    Single,
    /// Zero or one value.
    Optional,
    /// `min` or more values (only the last port).
    Variadic {
        /// Least count.
        min: usize,
    },
}

/// An input or output port.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Port {
    /// Port name (as in the ONNX operator schema).
    pub name: &'static str,
    /// Type variable (a key of [`OpSpec::constraints`]) or `""` for unconstrained.
    pub tc: &'static str,
    /// Arity of the port.
    pub kind: PortKind,
    /// For an optional port: the first opset where it is required (the value moved from an
    /// attribute to this input: Pad's pads at 11, Slice's starts and ends at 10, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_from: Option<i64>,
}

impl Port {
    /// Whether the port must be given at `opset`.
    pub fn required_at(&self, opset: i64) -> bool {
        match self.kind {
            PortKind::Single => true,
            PortKind::Optional => self.required_from.is_some_and(|f| opset >= f),
            PortKind::Variadic { min } => min > 0,
        }
    }
}

/// The specification of one operator.
#[derive(Clone, serde::Serialize)]
pub struct OpSpec {
    /// Operator type.
    pub op_type: &'static str,
    /// Domain (`""` = default ONNX domain).
    pub domain: &'static str,
    /// Op key: `op_type` in the default domain, `domain::op_type` elsewhere (see
    /// [`op_key`](super::op_key)); what recipes, coverage and backend capabilities name it by.
    #[serde(skip)]
    pub key: &'static str,
    /// Opset versions in which the schema changed, ascending; the first is the op's first opset.
    pub versions: Vec<i64>,
    /// First opset where the op no longer exists, if deprecated.
    pub removed_at: Option<i64>,
    /// Family.
    pub category: Category,
    /// Input ports.
    pub inputs: Vec<Port>,
    /// Output ports.
    pub outputs: Vec<Port>,
    /// Attributes.
    pub attrs: Vec<AttrSpec>,
    /// Type variables → allowed dtypes.
    pub constraints: Vec<(&'static str, Vec<DType>)>,
    /// What the oracles and mutators need to know of the op's numerics and role.
    #[serde(skip_serializing_if = "no_traits")]
    pub traits: Traits,
    /// Type-and-shape transfer.
    #[serde(skip)]
    pub infer: InferFn,
    /// Extra validity constraints.
    #[serde(skip)]
    pub requires: Option<RequiresFn>,
    /// Cases that are valid but that ONNX defines inconsistently or not at all (its shape
    /// inference and its reference disagree, the result is left open): `Err(why)` for such a
    /// case. Imported models may hold them; generated and minimized ones never do.
    #[serde(skip)]
    pub ambiguous: Option<RequiresFn>,
    /// Constant folding for shape-data propagation.
    #[serde(skip)]
    pub fold: Option<FoldFn>,
}

fn no_traits(t: &Traits) -> bool {
    t.is_empty()
}

fn no_infer(_: &InferCtx) -> Result<Vec<ValueType>, InferError> {
    Err(InferError::NoInference)
}

impl OpSpec {
    /// A new spec of the default domain; `versions` as in [`OpSpec::versions`].
    pub fn new(op_type: &'static str, versions: &[i64], category: Category) -> OpSpec {
        OpSpec {
            op_type,
            domain: "",
            key: op_type,
            versions: versions.to_vec(),
            removed_at: None,
            category,
            inputs: vec![],
            outputs: vec![],
            attrs: vec![],
            constraints: vec![],
            traits: Traits::NONE,
            infer: no_infer,
            requires: None,
            ambiguous: None,
            fold: None,
        }
    }
    /// Sets the domain.
    pub fn domain(mut self, d: &'static str) -> OpSpec {
        self.domain = d;
        // Specs live as long as the program (the registry is built once): the key of a spec
        // outside the default domain is made once and kept.
        self.key = match super::op_key(d, self.op_type) {
            k if k == self.op_type => self.op_type,
            k => Box::leak(k.into_boxed_str()),
        };
        self
    }
    /// Marks the op removed at `opset`.
    pub fn removed_at(mut self, opset: i64) -> OpSpec {
        self.removed_at = Some(opset);
        self
    }
    /// Adds a required input.
    pub fn input(mut self, name: &'static str, tc: &'static str) -> OpSpec {
        self.inputs.push(Port {
            name,
            tc,
            kind: PortKind::Single,
            required_from: None,
        });
        self
    }
    /// Adds an optional input.
    pub fn opt_input(mut self, name: &'static str, tc: &'static str) -> OpSpec {
        self.inputs.push(Port {
            name,
            tc,
            kind: PortKind::Optional,
            required_from: None,
        });
        self
    }
    /// Adds an input that is optional before `opset` and required from it on.
    pub fn input_from(mut self, name: &'static str, tc: &'static str, opset: i64) -> OpSpec {
        self.inputs.push(Port {
            name,
            tc,
            kind: PortKind::Optional,
            required_from: Some(opset),
        });
        self
    }
    /// Adds a variadic input (must be last).
    pub fn var_input(mut self, name: &'static str, tc: &'static str, min: usize) -> OpSpec {
        self.inputs.push(Port {
            name,
            tc,
            kind: PortKind::Variadic { min },
            required_from: None,
        });
        self
    }
    /// Adds an output.
    pub fn output(mut self, name: &'static str, tc: &'static str) -> OpSpec {
        self.outputs.push(Port {
            name,
            tc,
            kind: PortKind::Single,
            required_from: None,
        });
        self
    }
    /// Adds an optional output.
    pub fn opt_output(mut self, name: &'static str, tc: &'static str) -> OpSpec {
        self.outputs.push(Port {
            name,
            tc,
            kind: PortKind::Optional,
            required_from: None,
        });
        self
    }
    /// Adds a variadic output (must be last).
    pub fn var_output(mut self, name: &'static str, tc: &'static str, min: usize) -> OpSpec {
        self.outputs.push(Port {
            name,
            tc,
            kind: PortKind::Variadic { min },
            required_from: None,
        });
        self
    }
    /// Adds an attribute.
    pub fn attr(mut self, a: AttrSpec) -> OpSpec {
        self.attrs.push(a);
        self
    }
    /// Adds a type constraint.
    pub fn types(mut self, tc: &'static str, allowed: &[DType]) -> OpSpec {
        self.constraints.push((tc, allowed.to_vec()));
        self
    }
    /// Adds traits (see [`Traits`]).
    pub fn traits(mut self, t: Traits) -> OpSpec {
        self.traits |= t;
        self
    }
    /// Whether the op has every trait of `t`.
    pub fn has(&self, t: Traits) -> bool {
        self.traits.contains(t)
    }
    /// Sets the inference function.
    pub fn infer(mut self, f: InferFn) -> OpSpec {
        self.infer = f;
        self
    }
    /// The ops that share this op's attributes and, in every library we know, their code:
    /// the recurrent layers (RNN, GRU, LSTM), the windowed pools (MaxPool, AveragePool,
    /// LpPool) and the ten ReduceX (`Reduce*`). A bug that one of those shared attributes
    /// triggers is one bug for the family.
    /// Any other op is its own family.
    pub fn family(&self) -> &'static str {
        match (self.category, self.op_type) {
            (Category::Rnn, "RNN" | "GRU" | "LSTM") => "RNN/GRU/LSTM",
            (Category::Pool, "MaxPool" | "AveragePool" | "LpPool") => "MaxPool/AveragePool/LpPool",
            // The ten ReduceX share their axes handling (`axes`, `keepdims`,
            // `noop_with_empty_axes`) in every library; only the combining function differs.
            (Category::Reduce, op) if op.starts_with("Reduce") => "Reduce*",
            _ => self.op_type,
        }
    }

    /// Sets the cases ONNX defines inconsistently or not at all (see [`OpSpec::ambiguous`]).
    pub fn ambiguous(mut self, f: RequiresFn) -> OpSpec {
        self.ambiguous = Some(f);
        self
    }
    /// Sets the validity constraints.
    pub fn requires(mut self, f: RequiresFn) -> OpSpec {
        self.requires = Some(f);
        self
    }
    /// Sets the constant folder.
    pub fn fold(mut self, f: FoldFn) -> OpSpec {
        self.fold = Some(f);
        self
    }

    /// First opset of the op.
    pub fn since(&self) -> i64 {
        self.versions.first().copied().unwrap_or(1)
    }

    /// Least and greatest number of inputs (`None` = unbounded).
    pub fn input_arity(&self) -> (usize, Option<usize>) {
        arity(&self.inputs)
    }
    /// Least and greatest number of outputs.
    pub fn output_arity(&self) -> (usize, Option<usize>) {
        arity(&self.outputs)
    }
    /// The attribute spec named `name`.
    pub fn attr_spec(&self, name: &str) -> Option<&AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }
    /// The attribute spec named `name` that exists at `opset` (else any of that name): an
    /// attribute whose kind or requiredness changed between opsets has one spec per range.
    pub fn attr_spec_at(&self, name: &str, opset: i64) -> Option<&AttrSpec> {
        self.attrs
            .iter()
            .find(|a| a.name == name && a.exists_at(opset))
            .or_else(|| self.attr_spec(name))
    }
    /// The type variable of input slot `i`.
    pub fn input_tc(&self, i: usize) -> &'static str {
        port_tc(&self.inputs, i)
    }
    /// The type variable of output slot `i`.
    pub fn output_tc(&self, i: usize) -> &'static str {
        port_tc(&self.outputs, i)
    }
    /// Allowed dtypes of a type variable.
    pub fn allowed(&self, tc: &str) -> Option<&[DType]> {
        self.constraints
            .iter()
            .find(|(n, _)| *n == tc)
            .map(|(_, v)| v.as_slice())
    }
    /// Allowed dtypes of input `slot` at `opset`: [`OpSpec::allowed`] of its type variable,
    /// narrowed to what the op's schema version active at `opset` allows for that port (ONNX
    /// widened many type lists over time: bool for ReduceMax only from opset 20, bfloat16 for
    /// most math ops from 13). Ops outside the table (custom domains) get [`OpSpec::allowed`].
    pub fn input_allowed_at(&self, slot: usize, opset: i64) -> Option<Vec<DType>> {
        self.port_allowed_at(false, slot, opset)
    }
    /// Whether [`OpSpec::input_allowed_at`] holds `dtype` (`None`: the port has no type
    /// variable with a dtype list), without building the list.
    pub fn input_allows_at(&self, slot: usize, opset: i64, dtype: DType) -> Option<bool> {
        let base = self.allowed(self.input_tc(slot))?;
        if !base.contains(&dtype) {
            return Some(false);
        }
        if !self.domain.is_empty() {
            return Some(true);
        }
        Some(
            schema_port_types(self.op_type, false, slot, opset)
                .is_none_or(|at| at.contains(&dtype)),
        )
    }
    /// [`OpSpec::input_allowed_at`] for output `slot`.
    pub fn output_allowed_at(&self, slot: usize, opset: i64) -> Option<Vec<DType>> {
        self.port_allowed_at(true, slot, opset)
    }
    fn port_allowed_at(&self, out: bool, slot: usize, opset: i64) -> Option<Vec<DType>> {
        let tc = if out {
            self.output_tc(slot)
        } else {
            self.input_tc(slot)
        };
        let base = self.allowed(tc)?;
        if !self.domain.is_empty() {
            return Some(base.to_vec());
        }
        match schema_port_types(self.op_type, out, slot, opset) {
            Some(at) => Some(base.iter().copied().filter(|d| at.contains(d)).collect()),
            None => Some(base.to_vec()),
        }
    }
    /// Total number of parameter buckets of this op.
    pub fn bucket_count(&self) -> usize {
        self.attrs.iter().map(|a| a.buckets.len()).sum()
    }
}

fn port_tc(ports: &[Port], i: usize) -> &'static str {
    match ports.get(i) {
        Some(p) => p.tc,
        None => match ports.last() {
            Some(p) if matches!(p.kind, PortKind::Variadic { .. }) => p.tc,
            _ => "",
        },
    }
}

fn arity(ports: &[Port]) -> (usize, Option<usize>) {
    let mut min = 0;
    let mut max = Some(0usize);
    for p in ports {
        match p.kind {
            PortKind::Single => {
                min += 1;
                max = max.map(|m| m + 1);
            }
            PortKind::Optional => max = max.map(|m| m + 1),
            PortKind::Variadic { min: k } => {
                min += k;
                max = None;
            }
        }
    }
    (min, max)
}
