//! The f64 reference interpreter (ground truth).
//!
//! A plain tree-walking interpreter: every floating-point value is held and computed as f64
//! whatever its ONNX type, integers as i64 (wrapped to their declared width where ONNX says so),
//! booleans as bool and strings as bytes. The ops live under [`ops`], one file per op or small
//! family, and are found by name in one table ([`ops::OPS`], `name -> fn`); an op missing from
//! the table makes `prepare` answer `unsupported`.
// Kernels index several arrays with one loop variable; iterator chains would hide the math.
#![allow(clippy::needless_range_loop)]
use crate::backend::{Backend, BackendError, Capabilities, Prepared, Stage};
use crate::value::{Data, HostTensor, NamedValues, Value};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::{Graph, Node};
use mutagraph_ir::model::Model;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

mod gemm;
mod native;
mod ops;
pub mod tensor;

use tensor::{Buf, R, T, err, kind, unsup};

pub use gemm::set_threads;
/// Resize's input coordinate, shared with burn's interpreter.
#[cfg(feature = "burn")]
pub(crate) use ops::unscale_by;
/// Window geometry of a conv or pool (for variants of the interpreter that reuse it).
pub use ops::{Geo, geometry, softmax_groups_of};

/// A run-time value of the interpreter.
#[derive(Clone, Debug, PartialEq)]
pub enum V {
    /// A tensor.
    T(T),
    /// A sequence.
    Seq(Vec<V>),
    /// An optional (None = empty).
    Opt(Option<Box<V>>),
}

/// An op implementation: context, node, inputs (None for absent optional ones) -> outputs.
pub type OpFn = fn(&Cx, &Node, &[Option<&V>]) -> R<Vec<V>>;

/// An op table: op key (`Op`, or `domain::Op` outside the default domain) -> implementation.
pub type OpTable = BTreeMap<&'static str, OpFn>;

/// What an op sees besides its node and inputs.
pub struct Cx<'a> {
    /// The default-domain opset of the model.
    pub opset: i64,
    /// The values visible at this node (for subgraphs of control-flow ops).
    pub scope: &'a Scope<'a>,
    /// The op table in use: the reference's [`table`], or one with overrides (subgraphs are
    /// evaluated with the same table).
    pub ops: &'a OpTable,
    /// Native precision: every float result is rounded to its element type after each op
    /// (subgraphs are evaluated the same way).
    pub native: bool,
}

/// Values by name, with the enclosing graph's scope as parent.
pub struct Scope<'a> {
    vars: HashMap<String, V>,
    parent: Option<&'a Scope<'a>>,
}

impl<'a> Scope<'a> {
    /// A value by name, here or in an enclosing scope.
    pub fn get(&self, name: &str) -> Option<&V> {
        match self.vars.get(name) {
            Some(v) => Some(v),
            None => self.parent.and_then(|p| p.get(name)),
        }
    }
}

/// The op table: [`ops::OPS`] by key.
pub fn table() -> &'static OpTable {
    static TABLE: OnceLock<OpTable> = OnceLock::new();
    TABLE.get_or_init(|| ops::OPS.iter().copied().collect())
}

/// Names of the implemented ops (`Op`, or `domain::Op` outside the default domain).
pub fn op_names() -> Vec<&'static str> {
    table().keys().copied().collect()
}

// ---------------------------------------------------------------------------------------------
// Helpers for op implementations.

/// Required tensor input `i`.
pub fn inp<'v>(ins: &[Option<&'v V>], i: usize) -> R<&'v T> {
    match ins.get(i).copied().flatten() {
        Some(V::T(t)) => Ok(t),
        Some(v) => Err(err(format!(
            "input {i}: expected a tensor, got {}",
            describe(v)
        ))),
        None => Err(err(format!("missing required input {i}"))),
    }
}

/// Optional tensor input `i`.
pub fn opt<'v>(ins: &[Option<&'v V>], i: usize) -> R<Option<&'v T>> {
    match ins.get(i).copied().flatten() {
        Some(V::T(t)) => Ok(Some(t)),
        Some(v) => Err(err(format!(
            "input {i}: expected a tensor, got {}",
            describe(v)
        ))),
        None => Ok(None),
    }
}

/// One tensor output.
pub fn one(t: T) -> R<Vec<V>> {
    Ok(vec![V::T(t)])
}

fn describe(v: &V) -> String {
    match v {
        V::T(t) => format!("{}{:?}", t.dt, t.shape),
        V::Seq(s) => format!("seq({})", s.len()),
        V::Opt(o) => format!("optional({})", if o.is_some() { "some" } else { "none" }),
    }
}

// ---------------------------------------------------------------------------------------------
// Graph evaluation.

fn init_values(g: &Graph) -> Result<HashMap<String, V>, String> {
    let mut out = HashMap::new();
    for (name, t) in &g.initializers {
        let h = HostTensor::from_proto(t).map_err(|e| format!("initializer '{name}': {e}"))?;
        let t = host_to_t(&h).map_err(|e| format!("initializer '{name}': {}", e.message))?;
        out.insert(name.clone(), V::T(t));
    }
    Ok(out)
}

/// Evaluates `g` with the given bindings of its inputs; returns its outputs in order.
pub fn eval_graph(
    opset: i64,
    g: &Graph,
    parent: Option<&Scope>,
    inputs: Vec<(String, V)>,
) -> R<Vec<V>> {
    eval_graph_with(table(), false, opset, g, parent, inputs)
}

/// [`eval_graph`] with the op table `ops` (subgraphs use it too), in native precision when
/// `native` (see [`Cx::native`]).
pub fn eval_graph_with(
    ops: &OpTable,
    native: bool,
    opset: i64,
    g: &Graph,
    parent: Option<&Scope>,
    inputs: Vec<(String, V)>,
) -> R<Vec<V>> {
    let vars = init_values(g).map_err(err)?;
    let mut scope = Scope { vars, parent };
    for (k, v) in inputs {
        scope.vars.insert(k, v);
    }
    let order = g.topo_order().map_err(|e| err(e.to_string()))?;
    for id in order {
        let node = g
            .node(id)
            .ok_or_else(|| err(format!("node {id} vanished")))?;
        let key = Capabilities::key(node.domain(), &node.op_type);
        let f = ops
            .get(key.as_str())
            .ok_or_else(|| unsup(format!("op {key}")))?;
        let outs = {
            let mut ins = Vec::with_capacity(node.inputs.len());
            for name in &node.inputs {
                if name.is_empty() {
                    ins.push(None);
                } else {
                    let v = scope.get(name).ok_or_else(|| {
                        err(format!("{}: input '{name}' is not defined", node.label()))
                    })?;
                    ins.push(Some(v));
                }
            }
            let cx = Cx {
                opset,
                scope: &scope,
                ops,
                native,
            };
            let mut outs = f(&cx, node, &ins).map_err(|mut e| {
                e.message = format!("{}: {}", node.label(), e.message);
                e
            })?;
            if native {
                outs.iter_mut().for_each(round_to_type);
            }
            outs
        };
        let mut outs = outs.into_iter();
        for name in &node.outputs {
            let v = outs.next();
            if name.is_empty() {
                continue;
            }
            match v {
                Some(v) => {
                    scope.vars.insert(name.clone(), v);
                }
                None => {
                    return Err(err(format!(
                        "{}: output '{name}' was not produced",
                        node.label()
                    )));
                }
            }
        }
    }
    // Outputs are moved out of the scope (a large tensor is not copied), but for a name that a
    // later output repeats or that lives in an enclosing scope: those are copied.
    let names: Vec<&str> = g
        .outputs
        .iter()
        .map(|o| o.name.as_deref().unwrap_or(""))
        .collect();
    let mut result = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let v = if names[i + 1..].contains(name) {
            scope.get(name).cloned()
        } else {
            match scope.vars.remove(*name) {
                Some(v) => Some(v),
                None => scope.get(name).cloned(),
            }
        };
        result.push(v.ok_or_else(|| err(format!("graph output '{name}' was not computed")))?);
    }
    Ok(result)
}

/// Evaluates a subgraph whose inputs are bound by position.
pub fn eval_subgraph(cx: &Cx, g: &Graph, inputs: Vec<V>) -> R<Vec<V>> {
    if inputs.len() != g.inputs.len() {
        return Err(err(format!(
            "subgraph '{}' takes {} inputs, given {}",
            g.name.as_deref().unwrap_or(""),
            g.inputs.len(),
            inputs.len()
        )));
    }
    let named = g
        .inputs
        .iter()
        .map(|vi| vi.name.clone().unwrap_or_default())
        .zip(inputs)
        .collect();
    eval_graph_with(cx.ops, cx.native, cx.opset, g, Some(cx.scope), named)
}

/// Rounds every float element of `v` to its element type (f32, f16, bf16; f64 stays).
fn round_to_type(v: &mut V) {
    match v {
        V::T(t) => {
            let dt = t.dt;
            if let Buf::F(x) = &mut t.buf {
                match dt {
                    DType::F32 => x.iter_mut().for_each(|e| *e = *e as f32 as f64),
                    DType::F16 => x
                        .iter_mut()
                        .for_each(|e| *e = half::f16::from_f64(*e).to_f64()),
                    DType::BF16 => x
                        .iter_mut()
                        .for_each(|e| *e = half::bf16::from_f64(*e).to_f64()),
                    _ => {}
                }
            }
        }
        V::Seq(items) => items.iter_mut().for_each(round_to_type),
        V::Opt(Some(inner)) => round_to_type(inner),
        V::Opt(None) => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions between host values and interpreter values.

/// `h` transposed by `perm` (ONNX's Transpose) as the interpreter computes it.
#[cfg_attr(not(feature = "burn"), allow(dead_code))]
pub(crate) fn transposed(h: &HostTensor, perm: &[usize]) -> Option<HostTensor> {
    let t = ops::reshape::transpose(&host_to_t(h).ok()?, perm).ok()?;
    t_to_host(&t, false).ok()
}

fn host_to_t(h: &HostTensor) -> R<T> {
    let shape = h.shape.clone();
    Ok(match &h.data {
        Data::String(v) => T {
            dt: DType::String,
            shape,
            buf: Buf::S(v.clone()),
        },
        Data::Bool(v) => T::b(shape, v.clone()),
        Data::Raw(_) => return Err(unsup(format!("element type {}", h.dtype))),
        Data::F32(_) | Data::F64(_) | Data::F16(_) | Data::BF16(_) => {
            T::f(h.dtype, shape, h.to_f64s().unwrap_or_default())
        }
        _ => T::i(h.dtype, shape, h.to_i64s().unwrap_or_default()),
    })
}

fn t_to_host(t: &T, keep_f64: bool) -> R<HostTensor> {
    let shape = t.shape.clone();
    let data = match &t.buf {
        Buf::F(v) => {
            if keep_f64 {
                Data::F64(v.clone())
            } else {
                return HostTensor::from_f64s(t.dt, shape, v).map_err(|e| err(e.to_string()));
            }
        }
        Buf::I(v) => match t.dt {
            DType::I8 => Data::I8(v.iter().map(|&x| x as i8).collect()),
            DType::I16 => Data::I16(v.iter().map(|&x| x as i16).collect()),
            DType::I32 => Data::I32(v.iter().map(|&x| x as i32).collect()),
            DType::I64 => Data::I64(v.clone()),
            DType::U8 => Data::U8(v.iter().map(|&x| x as u8).collect()),
            DType::U16 => Data::U16(v.iter().map(|&x| x as u16).collect()),
            DType::U32 => Data::U32(v.iter().map(|&x| x as u32).collect()),
            DType::U64 => Data::U64(v.iter().map(|&x| x as u64).collect()),
            d => return Err(err(format!("integer buffer with element type {d}"))),
        },
        Buf::B(v) => Data::Bool(v.clone()),
        Buf::S(v) => Data::String(v.clone()),
    };
    if data.len() != tensor::numel(&shape) {
        return Err(err(format!(
            "internal: {} elements for shape {shape:?}",
            data.len()
        )));
    }
    Ok(HostTensor {
        dtype: if keep_f64 && matches!(t.buf, Buf::F(_)) {
            DType::F64
        } else {
            t.dt
        },
        shape,
        data,
    })
}

fn value_to_v(v: &Value) -> R<V> {
    Ok(match v {
        Value::Tensor(h) => V::T(host_to_t(h)?),
        Value::Sequence(s) => V::Seq(s.iter().map(value_to_v).collect::<R<_>>()?),
        Value::Optional(o) => V::Opt(match o {
            Some(x) => Some(Box::new(value_to_v(x)?)),
            None => None,
        }),
    })
}

fn v_to_value(v: &V, keep_f64: bool) -> R<Value> {
    Ok(match v {
        V::T(t) => Value::Tensor(t_to_host(t, keep_f64)?),
        V::Seq(s) => Value::Sequence(
            s.iter()
                .map(|x| v_to_value(x, keep_f64))
                .collect::<R<_>>()?,
        ),
        V::Opt(o) => Value::Optional(match o {
            Some(x) => Some(Box::new(v_to_value(x, keep_f64)?)),
            None => None,
        }),
    })
}

// ---------------------------------------------------------------------------------------------
// The backend.

/// The reference interpreter.
#[derive(Clone, Default)]
pub struct Reference {
    /// Hand floating-point outputs back as f64 instead of their declared type.
    pub keep_f64: bool,
    /// Native precision (`reference-native`): ops with a function body in the ONNX spec run
    /// as that body ([`native`]) and every float result is rounded to
    /// its element type after each op, as an implementation that computes in the model's own
    /// types would. With the f64 reference it bounds the results a correct library may give.
    pub native: bool,
    /// A variant with its own name, version and op table; `None`: the reference itself.
    variant: Option<Arc<Variant>>,
}

/// A named interpreter whose op table overrides some of the reference's entries.
struct Variant {
    name: String,
    version: String,
    ops: OpTable,
}

impl Reference {
    /// A new interpreter (outputs in their declared element types).
    pub fn new() -> Reference {
        Reference {
            keep_f64: false,
            native: false,
            variant: None,
        }
    }

    /// A new interpreter whose floating-point outputs come back as f64 (ground-truth mode).
    pub fn new_f64() -> Reference {
        Reference {
            keep_f64: true,
            native: false,
            variant: None,
        }
    }

    /// A new interpreter in native precision (see [`Reference::native`]).
    pub fn new_native() -> Reference {
        static OPS: OnceLock<Arc<Variant>> = OnceLock::new();
        let variant = OPS.get_or_init(|| {
            Arc::new(Variant {
                name: "reference-native".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                ops: native::table_native(),
            })
        });
        Reference {
            keep_f64: false,
            native: true,
            variant: Some(variant.clone()),
        }
    }

    /// An interpreter named `name` (version `version`) that runs the reference's op table with
    /// the entries of `overrides` replacing (or adding to) it; outputs in their declared element
    /// types. Its capabilities are the keys of the merged table. The plain reference is not
    /// affected (it keeps its static table).
    pub fn with_overrides(
        name: impl Into<String>,
        version: impl Into<String>,
        overrides: OpTable,
    ) -> Reference {
        let mut ops = table().clone();
        ops.extend(overrides);
        Reference {
            keep_f64: false,
            native: false,
            variant: Some(Arc::new(Variant {
                name: name.into(),
                version: version.into(),
                ops,
            })),
        }
    }

    /// The op table this interpreter runs.
    pub fn ops(&self) -> &OpTable {
        match &self.variant {
            Some(v) => &v.ops,
            None => table(),
        }
    }
}

fn check_ops(g: &Graph, ops: &OpTable) -> Result<(), BackendError> {
    for n in g.nodes() {
        let key = Capabilities::key(n.domain(), &n.op_type);
        if !ops.contains_key(key.as_str()) {
            return Err(BackendError::unsupported(
                Stage::Compile,
                format!("op {key}"),
            ));
        }
        for (_, sub) in n.subgraphs() {
            check_ops(sub, ops)?;
        }
    }
    Ok(())
}

/// Element types the interpreter handles.
pub const DTYPES: &[DType] = &[
    DType::F32,
    DType::F64,
    DType::F16,
    DType::BF16,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::Bool,
    DType::String,
];

impl Backend for Reference {
    fn name(&self) -> &str {
        if let Some(v) = &self.variant {
            &v.name
        } else if self.keep_f64 {
            "reference-f64"
        } else if self.native {
            "reference-native"
        } else {
            "reference"
        }
    }
    fn version(&self) -> String {
        match &self.variant {
            Some(v) => v.version.clone(),
            None => env!("CARGO_PKG_VERSION").to_string(),
        }
    }
    fn capabilities(&mut self) -> Capabilities {
        let name = self.name().to_string();
        let ops: Vec<&str> = self.ops().keys().copied().collect();
        Capabilities::from_ops(&name, &self.version(), &ops, DTYPES)
    }
    fn prepare(&mut self, model: &[u8]) -> Result<Box<dyn Prepared>, BackendError> {
        let model = Model::from_bytes(model)
            .map_err(|e| BackendError::failed(Stage::Load, e.to_string()))?;
        init_values(&model.graph).map_err(|e| BackendError::failed(Stage::Load, e))?;
        model
            .graph
            .topo_order()
            .map_err(|e| BackendError::failed(Stage::Load, e.to_string()))?;
        check_ops(&model.graph, self.ops())?;
        Ok(Box::new(RefPrepared {
            opset: model.default_opset(),
            model,
            keep_f64: self.keep_f64,
            native: self.native,
            variant: self.variant.clone(),
        }))
    }
}

struct RefPrepared {
    model: Model,
    opset: i64,
    keep_f64: bool,
    native: bool,
    variant: Option<Arc<Variant>>,
}

impl Prepared for RefPrepared {
    fn run(&mut self, inputs: &NamedValues) -> Result<NamedValues, BackendError> {
        let g = &self.model.graph;
        let mut bound = Vec::new();
        for (name, v) in inputs {
            bound.push((name.clone(), value_to_v(v)?));
        }
        for vi in g.real_inputs() {
            let name = vi.name.as_deref().unwrap_or("");
            if !bound.iter().any(|(n, _)| n == name) {
                return Err(err(format!("graph input '{name}' not given")));
            }
        }
        let ops = match &self.variant {
            Some(v) => &v.ops,
            None => table(),
        };
        if self.native {
            bound.iter_mut().for_each(|(_, v)| round_to_type(v));
        }
        let outs = eval_graph_with(ops, self.native, self.opset, g, None, bound)?;
        let mut result = Vec::new();
        for (o, v) in g.outputs.iter().zip(outs) {
            result.push((
                o.name.clone().unwrap_or_default(),
                v_to_value(&v, self.keep_f64)?,
            ));
        }
        Ok(result)
    }
}

/// Checks a dtype is one the interpreter computes with.
pub fn supported_dtype(dt: DType) -> R<()> {
    kind(dt).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_op(op: &str, node: &Node, ins: &[V]) -> R<Vec<V>> {
        let refs: Vec<Option<&V>> = ins.iter().map(Some).collect();
        run_refs(op, node, &refs)
    }

    /// Runs the reference's `op` alone on `ins` (absent optional inputs as `None`), at opset 18
    /// in f64.
    pub(crate) fn run_refs(op: &str, node: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
        let scope = Scope {
            vars: HashMap::new(),
            parent: None,
        };
        let cx = Cx {
            opset: 18,
            scope: &scope,
            ops: table(),
            native: false,
        };
        table()[op](&cx, node, ins)
    }

    fn f32s(shape: &[usize]) -> V {
        let n = tensor::numel(shape);
        V::T(T::f(
            DType::F32,
            shape.to_vec(),
            (0..n).map(|i| i as f64 - 2.5).collect(),
        ))
    }

    fn i64s(v: &[i64]) -> V {
        V::T(T::vec_i64(v.to_vec()))
    }

    #[test]
    fn bad_inputs_fail_without_panicking() {
        let gather = Node::new("Gather", &["x", "i"], &["y"]);
        let e = run_op("Gather", &gather, &[f32s(&[2, 3]), i64s(&[5])]).unwrap_err();
        assert!(!e.unsupported && e.stage == Stage::Run, "{e}");
        assert!(run_op("Gather", &gather, &[f32s(&[]), i64s(&[0])]).is_err());
        let concat = Node::new("Concat", &["a", "b"], &["y"])
            .with_attr("axis", mutagraph_ir::attr::AttrValue::Int(0));
        assert!(run_op("Concat", &concat, &[f32s(&[2, 3]), f32s(&[2, 4])]).is_err());
        let mm = Node::new("MatMul", &["a", "b"], &["y"]);
        assert!(run_op("MatMul", &mm, &[f32s(&[2, 3]), f32s(&[2, 3])]).is_err());
        let div = Node::new("Div", &["a", "b"], &["y"]);
        assert!(run_op("Div", &div, &[i64s(&[1]), i64s(&[0])]).is_err());
    }

    /// Every op, fed assorted ill-fitting inputs without attributes, answers with an error or
    /// a value, never a panic.
    #[test]
    fn no_op_panics_on_odd_inputs() {
        let variants: Vec<Vec<V>> = vec![
            vec![],
            vec![f32s(&[2, 3])],
            vec![f32s(&[2, 3]), i64s(&[5])],
            vec![f32s(&[])],
            vec![f32s(&[0, 3]), f32s(&[3])],
            vec![i64s(&[-7, 3, 0]), f32s(&[2, 3])],
            vec![f32s(&[1, 2, 3, 3]), f32s(&[2, 2, 2, 2])],
            vec![f32s(&[2, 3]), f32s(&[2, 3]), f32s(&[2, 3])],
            vec![V::T(T::b(vec![2], vec![true, false])), f32s(&[2])],
            vec![V::Seq(vec![]), i64s(&[1])],
            vec![V::Opt(None)],
            vec![i64s(&[1 << 40, 1 << 40])],
            vec![f32s(&[2, 3]), i64s(&[-1, -1])],
            vec![f32s(&[2, 3]), i64s(&[1 << 40, 1])],
            vec![i64s(&[i64::MIN]), i64s(&[-1])],
            vec![
                V::T(T::f(DType::F32, vec![], vec![0.0])),
                V::T(T::f(DType::F32, vec![], vec![1e12])),
                V::T(T::f(DType::F32, vec![], vec![1e-12])),
            ],
        ];
        let mut panics = Vec::new();
        for op in op_names() {
            let node = Node::new(op, &["a", "b", "c"], &["y", "z", "w"]);
            for (k, ins) in variants.iter().enumerate() {
                let r = std::panic::catch_unwind(|| run_op(op, &node, ins));
                if r.is_err() {
                    panics.push(format!("{op} on variant {k}"));
                }
            }
        }
        assert!(panics.is_empty(), "panics: {panics:?}");
    }
}
