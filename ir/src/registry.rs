//! The op registry: one [`OpSpec`] per operator.
//!
//! A spec is a type-and-shape transfer function plus its constraints, in the manner of NNSmith:
//! arity (ports), attribute schema (kinds, defaults, legal values), dtype constraints, the
//! inference function, extra validity constraints on inputs (`requires`), an optional constant
//! folder used for shape-data propagation, and a bucketed parameter space for coverage.
use crate::attr::{AttrKind, AttrLookup, AttrValue};
use crate::dtype::DType;
use crate::graph::{Graph, Node};
use crate::tensor::{Tensor, TensorExt};
use crate::types::{TensorType, ValueType};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

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
}

/// Legal values of an attribute.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum Legal {
    /// Anything of the right kind.
    Any,
    /// One of these strings (STRING attributes).
    Strings(Vec<&'static str>),
    /// One of these integers (INT attributes, or each element of INTS).
    Ints(Vec<i64>),
    /// Integers in `[lo, hi]` (INT, or each element of INTS).
    IntRange(i64, i64),
    /// Floats in `[lo, hi]` (FLOAT, or each element of FLOATS).
    FloatRange(f64, f64),
}

/// How attribute values are bucketed for parameter coverage (at most 5 buckets).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum Buckets {
    /// Not part of the parameter space (graphs, tensors, free-form strings).
    None,
    /// One bucket per listed string.
    Strings(Vec<&'static str>),
    /// Inclusive integer ranges.
    IntRanges(Vec<(i64, i64)>),
    /// Half-open float ranges `[lo, hi)`.
    FloatRanges(Vec<(f64, f64)>),
    /// INTS lists: empty / all 0 / all 1 / uniform other / mixed.
    IntsShape,
    /// INTS lists whose empty form is left out (ambiguous, e.g. a reduction's attribute
    /// `axes`): all 0 / all 1 / uniform other / mixed.
    IntsNonEmpty,
    /// FLOATS lists: empty / all equal / mixed.
    FloatsShape,
}

impl Buckets {
    /// Number of buckets.
    pub fn len(&self) -> usize {
        match self {
            Buckets::None => 0,
            Buckets::Strings(s) => s.len(),
            Buckets::IntRanges(r) => r.len(),
            Buckets::FloatRanges(r) => r.len(),
            Buckets::IntsShape => 5,
            Buckets::IntsNonEmpty => 4,
            Buckets::FloatsShape => 3,
        }
    }

    /// True when there are no buckets.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Names of the buckets.
    pub fn labels(&self) -> Vec<String> {
        match self {
            Buckets::None => vec![],
            Buckets::Strings(s) => s.iter().map(|s| s.to_string()).collect(),
            Buckets::IntRanges(r) => r
                .iter()
                .map(|(a, b)| {
                    if a == b {
                        format!("{a}")
                    } else {
                        format!("{a}..={b}")
                    }
                })
                .collect(),
            Buckets::FloatRanges(r) => r.iter().map(|(a, b)| format!("[{a},{b})")).collect(),
            Buckets::IntsShape => ["empty", "all0", "all1", "uniform", "mixed"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Buckets::IntsNonEmpty => ["all0", "all1", "uniform", "mixed"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Buckets::FloatsShape => ["empty", "uniform", "mixed"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        }
    }

    /// The bucket a value falls in.
    pub fn bucket_of(&self, v: &AttrValue) -> Option<usize> {
        match (self, v) {
            (Buckets::Strings(s), AttrValue::String(x)) => {
                let x = String::from_utf8_lossy(x);
                s.iter().position(|c| c.eq_ignore_ascii_case(&x))
            }
            (Buckets::Strings(s), AttrValue::Int(x)) => s.iter().position(|c| *c == x.to_string()),
            (Buckets::IntRanges(r), AttrValue::Int(x)) => {
                r.iter().position(|(a, b)| a <= x && x <= b)
            }
            (Buckets::FloatRanges(r), AttrValue::Float(x)) => {
                let x = *x as f64;
                r.iter().position(|(a, b)| *a <= x && x < *b)
            }
            (Buckets::IntsNonEmpty, AttrValue::Ints(v)) => {
                if v.is_empty() {
                    None
                } else {
                    Buckets::IntsShape
                        .bucket_of(&AttrValue::Ints(v.clone()))
                        .map(|b| b - 1)
                }
            }
            (Buckets::IntsShape, AttrValue::Ints(v)) => Some(if v.is_empty() {
                0
            } else if v.iter().all(|x| *x == 0) {
                1
            } else if v.iter().all(|x| *x == 1) {
                2
            } else if v.iter().all(|x| *x == v[0]) {
                3
            } else {
                4
            }),
            (Buckets::FloatsShape, AttrValue::Floats(v)) => Some(if v.is_empty() {
                0
            } else if v.iter().all(|x| x.to_bits() == v[0].to_bits()) {
                1
            } else {
                2
            }),
            _ => None,
        }
    }
}

/// Schema of one attribute.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AttrSpec {
    /// Name.
    pub name: &'static str,
    /// Kind.
    pub kind: AttrKind,
    /// Default value (`None`: required or no default).
    #[serde(skip)]
    pub default: Option<AttrValue>,
    /// Must be present.
    pub required: bool,
    /// Legal values.
    pub legal: Legal,
    /// Parameter-coverage buckets.
    pub buckets: Buckets,
    /// First opset that has this attribute.
    pub since: i64,
    /// First opset that no longer has it.
    pub until: Option<i64>,
}

impl serde::Serialize for AttrKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

const DEFAULT_INT_BUCKETS: &[(i64, i64)] = &[(i64::MIN, -1), (0, 0), (1, 1), (2, 4), (5, i64::MAX)];
const DEFAULT_FLOAT_BUCKETS: &[(f64, f64)] = &[
    (f64::NEG_INFINITY, 0.0),
    (0.0, 1e-6),
    (1e-6, 1.0),
    (1.0, 10.0),
    (10.0, f64::INFINITY),
];

impl AttrSpec {
    fn base(name: &'static str, kind: AttrKind, default: Option<AttrValue>) -> AttrSpec {
        let buckets = match kind {
            AttrKind::Int => Buckets::IntRanges(DEFAULT_INT_BUCKETS.to_vec()),
            AttrKind::Float => Buckets::FloatRanges(DEFAULT_FLOAT_BUCKETS.to_vec()),
            AttrKind::Ints => Buckets::IntsShape,
            AttrKind::Floats => Buckets::FloatsShape,
            _ => Buckets::None,
        };
        AttrSpec {
            name,
            kind,
            default,
            required: false,
            legal: Legal::Any,
            buckets,
            since: 1,
            until: None,
        }
    }
    /// INT with a default.
    pub fn int(name: &'static str, default: i64) -> AttrSpec {
        Self::base(name, AttrKind::Int, Some(AttrValue::Int(default)))
    }
    /// FLOAT with a default.
    pub fn float(name: &'static str, default: f32) -> AttrSpec {
        Self::base(name, AttrKind::Float, Some(AttrValue::Float(default)))
    }
    /// STRING with a default.
    pub fn string(name: &'static str, default: &str) -> AttrSpec {
        Self::base(
            name,
            AttrKind::String,
            Some(AttrValue::String(default.as_bytes().to_vec())),
        )
    }
    /// An attribute of any kind without a default (optional unless [`AttrSpec::required`]).
    pub fn of(name: &'static str, kind: AttrKind) -> AttrSpec {
        Self::base(name, kind, None)
    }
    /// Marks the attribute required.
    pub fn required(mut self) -> AttrSpec {
        self.required = true;
        self
    }
    /// Legal strings (also used as buckets).
    pub fn one_of(mut self, values: &[&'static str]) -> AttrSpec {
        self.legal = Legal::Strings(values.to_vec());
        self.buckets = Buckets::Strings(values.iter().take(5).copied().collect());
        self
    }
    /// Legal integers (also used as buckets when at most 5).
    pub fn one_of_ints(mut self, values: &[i64]) -> AttrSpec {
        self.legal = Legal::Ints(values.to_vec());
        if matches!(self.kind, AttrKind::Int) {
            self.buckets = Buckets::IntRanges(values.iter().take(5).map(|v| (*v, *v)).collect());
        }
        self
    }
    /// Legal integer range, inclusive.
    pub fn range(mut self, lo: i64, hi: i64) -> AttrSpec {
        self.legal = Legal::IntRange(lo, hi);
        self
    }
    /// Legal float range, inclusive.
    pub fn frange(mut self, lo: f64, hi: f64) -> AttrSpec {
        self.legal = Legal::FloatRange(lo, hi);
        self
    }
    /// Integer buckets (inclusive ranges, at most 5).
    pub fn int_buckets(mut self, b: &[(i64, i64)]) -> AttrSpec {
        assert!(b.len() <= 5);
        self.buckets = Buckets::IntRanges(b.to_vec());
        self
    }
    /// Float buckets (half-open ranges, at most 5).
    pub fn float_buckets(mut self, b: &[(f64, f64)]) -> AttrSpec {
        assert!(b.len() <= 5);
        self.buckets = Buckets::FloatRanges(b.to_vec());
        self
    }
    /// INTS buckets without the empty list (generators never write it).
    pub fn non_empty(mut self) -> AttrSpec {
        self.buckets = Buckets::IntsNonEmpty;
        self
    }
    /// No parameter buckets.
    pub fn no_buckets(mut self) -> AttrSpec {
        self.buckets = Buckets::None;
        self
    }
    /// Opset range in which the attribute exists: `[since, until)`.
    pub fn versions(mut self, since: i64, until: Option<i64>) -> AttrSpec {
        self.since = since;
        self.until = until;
        self
    }
    /// Whether the attribute exists at `opset`.
    pub fn exists_at(&self, opset: i64) -> bool {
        opset >= self.since && self.until.is_none_or(|u| opset < u)
    }

    /// Checks a value against kind and legal values.
    pub fn check(&self, v: &AttrValue) -> Result<(), String> {
        if v.kind() != self.kind {
            return Err(format!(
                "attribute '{}' must be {}, found {}",
                self.name,
                self.kind.name(),
                v.kind().name()
            ));
        }
        let bad = |what: String| {
            Err(format!(
                "attribute '{}' = {} is not legal: {}",
                self.name,
                v.short(),
                what
            ))
        };
        match (&self.legal, v) {
            (Legal::Any, _) => Ok(()),
            (Legal::Strings(ok), AttrValue::String(s)) => {
                let s = String::from_utf8_lossy(s);
                if ok.iter().any(|o| *o == s) {
                    Ok(())
                } else {
                    bad(format!("expected one of {ok:?}"))
                }
            }
            (Legal::Ints(ok), AttrValue::Int(i)) => {
                if ok.contains(i) {
                    Ok(())
                } else {
                    bad(format!("expected one of {ok:?}"))
                }
            }
            (Legal::Ints(ok), AttrValue::Ints(v)) => {
                if v.iter().all(|i| ok.contains(i)) {
                    Ok(())
                } else {
                    bad(format!("each must be one of {ok:?}"))
                }
            }
            (Legal::IntRange(lo, hi), AttrValue::Int(i)) => {
                if lo <= i && i <= hi {
                    Ok(())
                } else {
                    bad(format!("expected {lo}..={hi}"))
                }
            }
            (Legal::IntRange(lo, hi), AttrValue::Ints(v)) => {
                if v.iter().all(|i| lo <= i && i <= hi) {
                    Ok(())
                } else {
                    bad(format!("each must be in {lo}..={hi}"))
                }
            }
            (Legal::FloatRange(lo, hi), AttrValue::Float(f)) => {
                let f = *f as f64;
                if *lo <= f && f <= *hi {
                    Ok(())
                } else {
                    bad(format!("expected {lo}..={hi}"))
                }
            }
            (Legal::FloatRange(lo, hi), AttrValue::Floats(v)) => {
                if v.iter().all(|f| *lo <= *f as f64 && *f as f64 <= *hi) {
                    Ok(())
                } else {
                    bad(format!("each must be in {lo}..={hi}"))
                }
            }
            _ => Ok(()),
        }
    }
}

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

/// A failed inference: the node's inputs or attributes contradict the op's rules.
pub type InferError = String;

/// Type-and-shape transfer function.
pub type InferFn = fn(&InferCtx) -> Result<Vec<ValueType>, InferError>;
/// Extra validity constraints on inputs and attributes.
pub type RequiresFn = fn(&InferCtx) -> Result<(), String>;
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
            Some(Some(other)) => Err(format!("input {i} must be a tensor, found {other}")),
            _ => Err(format!("input {i} is missing")),
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

/// The specification of one operator.
#[derive(Clone, serde::Serialize)]
pub struct OpSpec {
    /// Operator type.
    pub op_type: &'static str,
    /// Domain (`""` = default ONNX domain).
    pub domain: &'static str,
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

fn no_infer(_: &InferCtx) -> Result<Vec<ValueType>, InferError> {
    Err("no inference function".into())
}

impl OpSpec {
    /// A new spec of the default domain; `versions` as in [`OpSpec::versions`].
    pub fn new(op_type: &'static str, versions: &[i64], category: Category) -> OpSpec {
        OpSpec {
            op_type,
            domain: "",
            versions: versions.to_vec(),
            removed_at: None,
            category,
            inputs: vec![],
            outputs: vec![],
            attrs: vec![],
            constraints: vec![],
            infer: no_infer,
            requires: None,
            ambiguous: None,
            fold: None,
        }
    }
    /// Sets the domain.
    pub fn domain(mut self, d: &'static str) -> OpSpec {
        self.domain = d;
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
        });
        self
    }
    /// Adds an optional input.
    pub fn opt_input(mut self, name: &'static str, tc: &'static str) -> OpSpec {
        self.inputs.push(Port {
            name,
            tc,
            kind: PortKind::Optional,
        });
        self
    }
    /// Adds a variadic input (must be last).
    pub fn var_input(mut self, name: &'static str, tc: &'static str, min: usize) -> OpSpec {
        self.inputs.push(Port {
            name,
            tc,
            kind: PortKind::Variadic { min },
        });
        self
    }
    /// Adds an output.
    pub fn output(mut self, name: &'static str, tc: &'static str) -> OpSpec {
        self.outputs.push(Port {
            name,
            tc,
            kind: PortKind::Single,
        });
        self
    }
    /// Adds an optional output.
    pub fn opt_output(mut self, name: &'static str, tc: &'static str) -> OpSpec {
        self.outputs.push(Port {
            name,
            tc,
            kind: PortKind::Optional,
        });
        self
    }
    /// Adds a variadic output (must be last).
    pub fn var_output(mut self, name: &'static str, tc: &'static str, min: usize) -> OpSpec {
        self.outputs.push(Port {
            name,
            tc,
            kind: PortKind::Variadic { min },
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
    /// Sets the inference function.
    pub fn infer(mut self, f: InferFn) -> OpSpec {
        self.infer = f;
        self
    }
    /// The ops that share this op's attributes and, in every library we know, their code:
    /// the recurrent layers (RNN, GRU, LSTM) and the windowed pools (MaxPool, AveragePool,
    /// LpPool). A bug that one of those shared attributes triggers is one bug for the family.
    /// Any other op is its own family.
    pub fn family(&self) -> &'static str {
        match (self.category, self.op_type) {
            (Category::Rnn, "RNN" | "GRU" | "LSTM") => "RNN/GRU/LSTM",
            (Category::Pool, "MaxPool" | "AveragePool" | "LpPool") => "MaxPool/AveragePool/LpPool",
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

/// Per op: its schema versions, each with the dtypes of its input and output ports; from
/// `ir/data/type_constraints.tsv` (facts of the ONNX schemas, written by
/// `tests/python/gen_type_constraints.py`).
type PortTypes = Vec<Vec<DType>>;
type TypeTable = FnvMap<&'static str, Vec<(i64, PortTypes, PortTypes)>>;

fn type_table() -> &'static TypeTable {
    static TABLE: OnceLock<TypeTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: TypeTable = FnvMap::default();
        for line in include_str!("../data/type_constraints.tsv").lines() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            let [op, since, side, port, list] = f[..] else {
                continue;
            };
            let (Ok(since), Ok(port)) = (since.parse::<i64>(), port.parse::<usize>()) else {
                continue;
            };
            let dtypes: Vec<DType> = list.split(',').filter_map(DType::from_name).collect();
            let versions = t.entry(op).or_default();
            if versions.last().is_none_or(|(v, _, _)| *v != since) {
                versions.push((since, Vec::new(), Vec::new()));
            }
            let (_, ins, outs) = versions.last_mut().expect("pushed above");
            let ports = if side == "out" { outs } else { ins };
            if ports.len() <= port {
                ports.resize(port + 1, Vec::new());
            }
            ports[port] = dtypes;
        }
        for versions in t.values_mut() {
            versions.sort_by_key(|(v, _, _)| *v);
        }
        t
    })
}

/// The dtypes the ONNX schema of `op` active at `opset` allows on a port (the last port of a
/// variadic list stands for the rest), if the table knows.
fn schema_port_types(op: &str, out: bool, slot: usize, opset: i64) -> Option<&'static [DType]> {
    let versions = type_table().get(op)?;
    let (_, ins, outs) = versions.iter().rev().find(|(v, _, _)| *v <= opset)?;
    let ports = if out { outs } else { ins };
    let p = ports.get(slot).or_else(|| ports.last())?;
    (!p.is_empty()).then_some(p.as_slice())
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

/// FNV-1a: a hasher for the registry's fixed tables of op names (looked up for every node of
/// every graph, where SipHash was most of the lookup). The tables' keys are our own names,
/// so no input can make them collide.
#[derive(Default, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by op names, hashed with [`Fnv`].
pub(crate) type FnvMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fnv>>;

/// All op specs, by (domain, op_type).
pub struct Registry {
    /// The default domain's specs, by op type.
    default: FnvMap<&'static str, OpSpec>,
    /// The other domains' specs, by domain and op type.
    specs: BTreeMap<&'static str, BTreeMap<&'static str, OpSpec>>,
}

impl Registry {
    /// An empty registry.
    pub fn empty() -> Registry {
        Registry {
            specs: BTreeMap::new(),
            default: FnvMap::default(),
        }
    }

    /// The registry of every op this build knows.
    pub fn global() -> &'static Registry {
        static R: OnceLock<Registry> = OnceLock::new();
        R.get_or_init(|| {
            let mut r = Registry::empty();
            crate::ops::register_all(&mut r);
            r
        })
    }

    /// Adds a spec (replacing one of the same name).
    pub fn add(&mut self, spec: OpSpec) {
        if spec.domain.is_empty() || spec.domain == "ai.onnx" {
            self.default.insert(spec.op_type, spec);
        } else {
            self.specs
                .entry(spec.domain)
                .or_default()
                .insert(spec.op_type, spec);
        }
    }

    /// The spec of `op_type` in `domain` (`""` or `"ai.onnx"` = default domain).
    pub fn get(&self, domain: &str, op_type: &str) -> Option<&OpSpec> {
        match domain {
            "" | "ai.onnx" => self.default.get(op_type),
            d => self.specs.get(d)?.get(op_type),
        }
    }

    /// The spec for a node.
    pub fn for_node(&self, n: &Node) -> Option<&OpSpec> {
        self.get(n.domain(), &n.op_type)
    }

    /// All specs, sorted by domain and name.
    pub fn iter(&self) -> impl Iterator<Item = &OpSpec> {
        let mut default: Vec<&OpSpec> = self.default.values().collect();
        default.sort_by_key(|s| s.op_type);
        default
            .into_iter()
            .chain(self.specs.values().flat_map(|m| m.values()))
    }

    /// Number of specs.
    pub fn len(&self) -> usize {
        self.default.len() + self.specs.values().map(|m| m.len()).sum::<usize>()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.default.is_empty() && self.specs.is_empty()
    }
}
