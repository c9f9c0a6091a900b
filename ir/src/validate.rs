//! Model checks: structure (acyclic, single definition, no dangling inputs), the header (IR
//! version), operators (ONNX defines the op at the model's opset: [`crate::onnx_ops`]), element
//! types and sizes of declared types and tensors, arity, attributes, dtypes and shapes against
//! the op registry.
//!
//! Every check is linear in the size of the model: names are looked up in hash sets, enclosing
//! scopes are chained by reference (never copied per subgraph), inference runs once without
//! copying the model.
use crate::attr::{AttrLookup, AttrValue};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::{Graph, Node};
use crate::infer::{self, Inferred, MAX_SUBGRAPH_DEPTH, Options, Report};
use crate::model::Model;
use crate::onnx_ops::{self, MAX_IR_VERSION, OpStatus};
use crate::pb;
use crate::registry::{OpSpec, Registry};
use crate::tensor::Tensor;
use crate::types::ValueType;
use std::collections::HashMap;

/// Findings of [`check`].
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    /// Rule violations: the model is invalid.
    pub errors: Vec<String>,
    /// Things that cannot be checked (ops without a spec, custom domains).
    pub warnings: Vec<String>,
    /// Cases that are valid but that ONNX defines inconsistently or not at all
    /// ([`OpSpec::ambiguous`]): not errors, but generated and minimized models avoid them.
    pub ambiguous: Vec<String>,
}

/// Validates a model; `Err(Error::Invalid)` lists every violation found.
pub fn validate(m: &Model) -> Result<Diagnostics> {
    into_result(check(m))
}

/// `Ok(d)` without errors, else `Err(Error::Invalid)` listing the first ten.
pub(crate) fn into_result(d: Diagnostics) -> Result<Diagnostics> {
    if d.errors.is_empty() {
        Ok(d)
    } else {
        let n = d.errors.len();
        let mut msg = d
            .errors
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        if n > 10 {
            msg.push_str(&format!("; and {} more", n - 10));
        }
        Err(Error::Invalid(msg))
    }
}

/// Runs every check and collects the findings. The model is not changed: its types are
/// inferred aside.
pub fn check(m: &Model) -> Diagnostics {
    let mut report = Report::default();
    let inferred = infer::run_model(m, Options::default(), &mut report);
    diagnose(m, &inferred, report)
}

/// [`infer::infer_model`] (default options) then [`check`], with one inference instead of
/// two: the types inferred are stored in the model as `infer_model` stores them.
pub fn infer_and_check(m: &mut Model) -> Diagnostics {
    let mut report = Report::default();
    let inferred = infer::run_model(m, Options::default(), &mut report);
    let d = diagnose(m, &inferred, report);
    let stored = inferred.into_owned();
    stored.store(&mut m.graph);
    d
}

/// What every graph's checks need to know of the model.
struct Ctx {
    /// The default-domain opset.
    opset: i64,
    /// Imported domains (the default domain as `""`) and their versions.
    domains: HashMap<String, Option<i64>>,
}

impl Ctx {
    /// The version of an ONNX domain the model imports (`None`: not imported).
    fn version(&self, domain: &str) -> Option<i64> {
        if domain.is_empty() {
            return Some(self.opset);
        }
        self.domains.get(domain).map(|v| v.unwrap_or(1))
    }
}

fn diagnose(m: &Model, inferred: &Inferred<'_>, report: Report) -> Diagnostics {
    let mut d = Diagnostics::default();
    if let Some(v) = m.ir_version
        && v > MAX_IR_VERSION
    {
        d.errors.push(format!(
            "ir_version {v} is above {MAX_IR_VERSION}, the highest IR version this build knows \
             (that of onnx {})",
            onnx_ops::ONNX_VERSION
        ));
    }
    let mut ctx = Ctx {
        opset: m.default_opset(),
        domains: HashMap::new(),
    };
    for o in &m.opset_import {
        let dom = o.domain.clone().unwrap_or_default();
        ctx.domains.insert(
            if dom == "ai.onnx" { String::new() } else { dom },
            o.version,
        );
    }
    check_graph(&m.graph, "main graph", &ctx, None, 0, &mut d);
    for (node, msg) in report.errors {
        d.errors.push(format!("node {node}: {msg}"));
    }
    for (node, msg) in report.ambiguous {
        d.ambiguous.push(format!("node {node}: {msg}"));
    }
    for (op, n) in report.unknown_ops {
        // Ops of ONNX's domains that ONNX does not define are errors (above), not warnings.
        let (dom, name) = op.rsplit_once('.').unwrap_or(("", &op));
        if onnx_ops::is_onnx_domain(dom)
            && let Some(v) = ctx.version(dom)
            && !matches!(onnx_ops::status(dom, name, v), OpStatus::Defined(_))
        {
            continue;
        }
        d.warnings
            .push(format!("no spec for op {op} ({n} nodes): not checked"));
    }
    check_types(&m.graph, Some(inferred), "main graph", ctx.opset, 0, &mut d);
    d
}

/// What defines a value of a graph.
#[derive(Clone, Copy)]
enum Def<'a> {
    /// A graph input.
    Input,
    /// An initializer (dense or sparse).
    Initializer,
    /// A node's output.
    Node(&'a Node),
}

/// The names visible in a graph: its own, then those of the graphs around it (a chain of
/// borrowed maps: nothing is copied per subgraph).
struct Visible<'a> {
    names: HashMap<&'a str, Def<'a>>,
    parent: Option<&'a Visible<'a>>,
}

impl Visible<'_> {
    fn contains(&self, name: &str) -> bool {
        self.names.contains_key(name) || self.parent.is_some_and(|p| p.contains(name))
    }
}

fn check_graph(
    g: &Graph,
    path: &str,
    ctx: &Ctx,
    outer: Option<&Visible<'_>>,
    depth: usize,
    d: &mut Diagnostics,
) {
    let reg = Registry::global();
    check_initializers(g, path, d);
    check_declared(g, path, d);
    // Definitions: one map (one hash per name) says what defines each value.
    let mut defined: HashMap<&str, Def> =
        HashMap::with_capacity(g.inputs.len() + g.initializers.len() + g.node_count());
    for v in &g.inputs {
        let n = v.name.as_deref().unwrap_or("");
        if n.is_empty() {
            d.errors.push(format!("{path}: a graph input has no name"));
        }
        if defined.insert(n, Def::Input).is_some() && !n.is_empty() {
            d.errors
                .push(format!("{path}: graph input '{n}' is declared twice"));
        }
    }
    for k in g.initializers.keys() {
        defined.entry(k).or_insert(Def::Initializer);
    }
    for (i, s) in g.sparse_initializers.iter().enumerate() {
        if let Some(n) = s.values.as_ref().and_then(|v| v.name.as_deref()) {
            defined.entry(n).or_insert(Def::Initializer);
        }
        check_sparse(s, &|| format!("{path}: sparse initializer #{i}"), d);
    }
    for n in g.nodes() {
        for o in n.outputs.iter().filter(|o| !o.is_empty()) {
            match defined.insert(o, Def::Node(n)) {
                None => {}
                Some(Def::Node(prev)) => d.errors.push(format!(
                    "{path}: value '{o}' is produced twice (by {} and {})",
                    prev.label(),
                    n.label()
                )),
                Some(_) => d.errors.push(format!(
                    "{path}: node {} redefines '{o}', a graph input or initializer",
                    n.label()
                )),
            }
        }
    }
    if let Err(e) = g.topo_order() {
        d.errors.push(format!("{path}: {e}"));
    }
    let visible = Visible {
        names: defined,
        parent: outer,
    };
    for n in g.nodes() {
        for i in n.present_inputs() {
            if !visible.contains(i) {
                d.errors.push(format!(
                    "{path}: node {} reads '{i}', which nothing defines",
                    n.label()
                ));
            }
        }
        let mut version_reported = false;
        if !ctx.domains.contains_key(n.domain()) {
            d.errors.push(format!(
                "{path}: node {} uses domain '{}' but the model imports no opset for it",
                n.label(),
                n.domain()
            ));
        } else if onnx_ops::is_onnx_domain(n.domain())
            && let Some(version) = ctx.version(n.domain())
        {
            version_reported = check_op_exists(n, version, path, d);
        }
        if let Some(spec) = reg.for_node(n) {
            check_node(n, spec, ctx.opset, !version_reported, path, d);
        }
        check_attribute_tensors(n, path, d);
        if n.subgraphs().next().is_none() {
            continue;
        }
        if depth >= MAX_SUBGRAPH_DEPTH {
            d.errors.push(format!(
                "{path}: node {}: subgraphs nest deeper than {MAX_SUBGRAPH_DEPTH} levels",
                n.label()
            ));
            continue;
        }
        for (attr, sub) in n.subgraphs() {
            check_graph(
                sub,
                &format!("{path} > {} attribute '{attr}'", n.label()),
                ctx,
                Some(&visible),
                depth + 1,
                d,
            );
        }
    }
    for o in &g.outputs {
        let name = o.name.as_deref().unwrap_or("");
        if name.is_empty() {
            d.errors.push(format!("{path}: a graph output has no name"));
        } else if !visible.contains(name) {
            d.errors
                .push(format!("{path}: graph output '{name}' is never defined"));
        }
    }
}

/// An op of an ONNX domain must be one ONNX defines at the imported version of that domain
/// (`onnx.checker`'s "No Op registered for X with domain_version of V"). Returns whether it
/// reported an error.
///
/// An op whose schema is deprecated at that version is a warning: `onnx.checker` refuses it
/// ("Op registered for X is deprecated"), but our own mutators still build such ops (Scatter,
/// Upsample at opset 17, GroupNormalization at 18) and their models must stay valid until they
/// stop.
fn check_op_exists(n: &Node, version: i64, path: &str, d: &mut Diagnostics) -> bool {
    let domain = match n.domain() {
        "" => "the default domain".to_string(),
        dom => format!("domain '{dom}'"),
    };
    let what = match onnx_ops::status(n.domain(), &n.op_type, version) {
        OpStatus::Defined(_) => return false,
        OpStatus::Deprecated(since) => {
            d.warnings.push(format!(
                "{path}: node {}: {} is deprecated at version {version} of {domain} (its schema \
                 of version {since}); onnx.checker refuses it",
                n.label(),
                n.op_type
            ));
            return false;
        }
        OpStatus::Unknown => format!(
            "op type '{}' is not an operator of {domain} (ONNX defines no such op)",
            n.op_type
        ),
        OpStatus::NotYet(since) => format!(
            "{} exists in {domain} from version {since} on, but the model imports version \
             {version}",
            n.op_type
        ),
    };
    d.errors.push(format!("{path}: node {}: {what}", n.label()));
    true
}

fn check_node(
    n: &Node,
    spec: &OpSpec,
    opset: i64,
    check_since: bool,
    path: &str,
    d: &mut Diagnostics,
) {
    // Spelled out only for an error: formatting it for every node was a tenth of validating.
    let who = || format!("{path}: node {}", n.label());
    if check_since && opset < spec.since() {
        d.errors.push(format!(
            "{}: {} needs opset {} but the model imports {opset}",
            who(),
            spec.op_type,
            spec.since()
        ));
    }
    let count = |v: &[String]| v.len() - v.iter().rev().take_while(|s| s.is_empty()).count();
    let (lo, hi) = spec.input_arity();
    let ni = count(&n.inputs);
    if ni < lo || hi.is_some_and(|h| ni > h) {
        d.errors.push(format!(
            "{}: takes {} inputs, found {ni}",
            who(),
            arity_text(lo, hi)
        ));
    }
    for (slot, name) in n.inputs.iter().enumerate() {
        if name.is_empty()
            && let Some(p) = spec.inputs.get(slot)
            && p.kind == crate::registry::PortKind::Single
        {
            d.errors.push(format!(
                "{}: required input '{}' (slot {slot}) is empty",
                who(),
                p.name
            ));
        }
    }
    let (lo, hi) = spec.output_arity();
    let no = count(&n.outputs);
    if no < lo.min(1) || hi.is_some_and(|h| no > h) {
        d.errors.push(format!(
            "{}: has {} outputs, found {no}",
            who(),
            arity_text(lo, hi)
        ));
    }
    for a in &n.attributes {
        match spec.attr_spec_at(&a.name, opset) {
            None => d
                .errors
                .push(format!("{}: unknown attribute '{}'", who(), a.name)),
            Some(s) => {
                if a.ref_attr_name.is_none()
                    && let Err(e) = s.check(&a.value)
                {
                    d.errors.push(format!("{}: {e}", who()));
                }
            }
        }
    }
    for s in &spec.attrs {
        if s.required && s.exists_at(opset) && n.attr(s.name).is_none() {
            d.errors.push(format!(
                "{}: required attribute '{}' is missing",
                who(),
                s.name
            ));
        }
    }
}

fn arity_text(lo: usize, hi: Option<usize>) -> String {
    match hi {
        Some(h) if h == lo => format!("{lo}"),
        Some(h) => format!("{lo} to {h}"),
        None => format!("at least {lo}"),
    }
}

/// Dtype constraints of every node, using the inferred types of its inputs (`inferred`: what
/// inference found for `g`; `None` where it did not run, and the types stored in `g` are read).
fn check_types(
    g: &Graph,
    inferred: Option<&Inferred<'_>>,
    path: &str,
    opset: i64,
    depth: usize,
    d: &mut Diagnostics,
) {
    if depth > MAX_SUBGRAPH_DEPTH {
        return; // check_graph reports it
    }
    let reg = Registry::global();
    let view = g.type_view();
    // The element type of a value: inferred, else of the initializer, else declared.
    let dtype = |name: &str| -> Option<DType> {
        let inferred = match inferred {
            Some(r) => r.types.get(name),
            None => g.types.get(name),
        };
        let t = match inferred {
            Some(ValueType::Tensor(t)) => return Some(t.dtype),
            Some(t) if *t != ValueType::Unknown => return None,
            _ => match g.initializers.get(name) {
                Some(t) => return Some(crate::tensor::TensorExt::dtype(t)),
                None => view.declared_type(name),
            },
        };
        match t {
            Some(ValueType::Tensor(t)) => Some(t.dtype),
            _ => None,
        }
    };
    for n in g.nodes() {
        if let Some(spec) = reg.for_node(n) {
            let mut bound: Vec<(&str, DType)> = Vec::new();
            for (slot, name) in n.inputs.iter().enumerate() {
                if name.is_empty() {
                    continue;
                }
                let tc = spec.input_tc(slot);
                let Some(dt) = dtype(name).filter(|dt| dt.is_known()) else {
                    continue;
                };
                let Some(allows) = spec.input_allows_at(slot, opset, dt) else {
                    continue;
                };
                if !allows {
                    let allowed = spec.input_allowed_at(slot, opset).unwrap_or_default();
                    d.errors.push(format!(
                        "{path}: node {} input {slot} ('{name}') is {dt}, but {} allows {}",
                        n.label(),
                        spec.op_type,
                        allowed
                            .iter()
                            .map(|x| x.name())
                            .collect::<Vec<_>>()
                            .join("|")
                    ));
                } else if let Some(b) = bound.iter_mut().find(|(t, _)| *t == tc) {
                    let prev = std::mem::replace(&mut b.1, dt);
                    if prev != dt {
                        d.errors.push(format!(
                            "{path}: node {} mixes {prev} and {dt} for type {tc}",
                            n.label(),
                        ));
                    }
                } else {
                    bound.push((tc, dt));
                }
            }
        }
        for (pos, a) in n.attributes.iter().enumerate() {
            let graphs: Vec<&Graph> = match &a.value {
                AttrValue::Graph(b) => vec![b.as_ref()],
                AttrValue::Graphs(gs) => gs.iter().collect(),
                _ => continue,
            };
            for (idx, sub) in graphs.into_iter().enumerate() {
                check_types(
                    sub,
                    inferred.and_then(|r| r.sub(n.id, pos, idx)),
                    &format!("{path} > {} attribute '{}'", n.label(), a.name),
                    opset,
                    depth + 1,
                    d,
                );
            }
        }
    }
}

/// Initializers: a defined element type, sizes that are not negative, data that matches them.
fn check_initializers(g: &Graph, path: &str, d: &mut Diagnostics) {
    use crate::tensor::TensorExt;
    for (name, t) in &g.initializers {
        if !check_tensor(t, &|| format!("{path}: initializer '{name}'"), d) {
            continue;
        }
        if t.is_external() || !(t.dtype().is_numeric() || t.dtype() == crate::DType::Bool) {
            continue;
        }
        if t.dtype().bits().is_some_and(|b| b >= 8)
            && let Err(e) = crate::tensor::check_data(t)
        {
            d.errors.push(format!("{path}: {e}"));
        }
    }
}

/// A tensor's element type must be one ONNX defines (not 0, UNDEFINED) and its dims must not
/// be negative (`onnx.checker`'s `check_tensor`). Returns whether the tensor passed.
fn check_tensor(t: &Tensor, who: &dyn Fn() -> String, d: &mut Diagnostics) -> bool {
    let mut ok = true;
    let problem = match t.data_type {
        None => Some("has no data_type".to_string()),
        Some(0) => Some("has data_type 0 (UNDEFINED)".to_string()),
        Some(c) if !DType::from_code(c).is_known() => Some(format!(
            "has data_type {c}, which is not an ONNX element type"
        )),
        Some(_) => None,
    };
    if let Some(p) = problem {
        d.errors.push(format!("{} {p}", who()));
        ok = false;
    }
    if let Some(&x) = t.dims.iter().find(|&&x| x < 0) {
        d.errors.push(format!(
            "{} has a negative size {x} in its dims {:?}",
            who(),
            t.dims
        ));
        ok = false;
    }
    ok
}

fn check_sparse(s: &pb::SparseTensorProto, who: &dyn Fn() -> String, d: &mut Diagnostics) {
    if let Some(v) = &s.values {
        check_tensor(v, &|| format!("{} values", who()), d);
    }
    if let Some(i) = &s.indices {
        check_tensor(i, &|| format!("{} indices", who()), d);
    }
    if let Some(&x) = s.dims.iter().find(|&&x| x < 0) {
        d.errors.push(format!(
            "{} has a negative size {x} in its dims {:?}",
            who(),
            s.dims
        ));
    }
}

/// Tensors held by a node's attributes (`Constant` values, `ConstantOfShape` fills, ...).
fn check_attribute_tensors(n: &Node, path: &str, d: &mut Diagnostics) {
    for a in &n.attributes {
        let who = || format!("{path}: node {} attribute '{}'", n.label(), a.name);
        match &a.value {
            AttrValue::Tensor(t) => {
                check_tensor(t, &who, d);
            }
            AttrValue::Tensors(ts) => {
                for (i, t) in ts.iter().enumerate() {
                    check_tensor(t, &|| format!("{} tensor #{i}", who()), d);
                }
            }
            AttrValue::SparseTensor(s) => check_sparse(s, &who, d),
            AttrValue::SparseTensors(ss) => {
                for (i, s) in ss.iter().enumerate() {
                    check_sparse(s, &|| format!("{} sparse tensor #{i}", who()), d);
                }
            }
            _ => {}
        }
    }
}

/// Declared types of graph inputs, outputs and value_info: element types ONNX defines
/// (`TypeProto.Tensor.elem_type` "MUST NOT have the value of UNDEFINED" and "MUST have a valid
/// TensorProto.DataType value", onnx.proto) and sizes that are not negative. A `dim_value` of
/// -1 is what exporters write for a dynamic dim, and is read so ([`crate::import::DimNote`]);
/// any other negative size is an error.
fn check_declared(g: &Graph, path: &str, d: &mut Diagnostics) {
    let lists = [
        ("input", &g.inputs),
        ("output", &g.outputs),
        ("value_info", &g.value_info),
    ];
    for (role, list) in lists {
        for v in list {
            if let Some(tp) = &v.r#type {
                let name = v.name.as_deref().unwrap_or("");
                check_type(tp, &|| format!("{path}: {role} '{name}'"), 0, d);
            }
        }
    }
}

fn check_type(tp: &pb::TypeProto, who: &dyn Fn() -> String, depth: usize, d: &mut Diagnostics) {
    use pb::tensor_shape_proto::dimension::Value as DimValue;
    use pb::type_proto::Value;
    if depth > MAX_SUBGRAPH_DEPTH {
        d.errors.push(format!(
            "{}: the type nests deeper than {MAX_SUBGRAPH_DEPTH} levels",
            who()
        ));
        return;
    }
    let elem = |code: Option<i32>, field: &str, d: &mut Diagnostics| match code {
        Some(0) => d
            .errors
            .push(format!("{}: {field} is 0 (UNDEFINED)", who())),
        Some(c) if !DType::from_code(c).is_known() => d.errors.push(format!(
            "{}: {field} is {c}, which is not an ONNX element type",
            who()
        )),
        _ => {}
    };
    let shape = |s: Option<&pb::TensorShapeProto>, d: &mut Diagnostics| {
        for (i, dim) in s.into_iter().flat_map(|s| s.dim.iter()).enumerate() {
            if let Some(DimValue::DimValue(v)) = dim.value
                && v < -1
            {
                d.errors.push(format!(
                    "{}: dim {i} is {v}; a size is never negative (-1 is read as a dynamic \
                     dim)",
                    who()
                ));
            }
        }
    };
    match &tp.value {
        Some(Value::TensorType(t)) => {
            elem(t.elem_type, "elem_type", d);
            shape(t.shape.as_ref(), d);
        }
        Some(Value::SparseTensorType(t)) => {
            elem(t.elem_type, "elem_type", d);
            shape(t.shape.as_ref(), d);
        }
        Some(Value::SequenceType(s)) => {
            if let Some(e) = &s.elem_type {
                check_type(e, &|| format!("{} (sequence element)", who()), depth + 1, d);
            }
        }
        Some(Value::OptionalType(o)) => {
            if let Some(e) = &o.elem_type {
                check_type(e, &|| format!("{} (optional element)", who()), depth + 1, d);
            }
        }
        Some(Value::MapType(m)) => {
            elem(m.key_type, "key_type", d);
            if let Some(v) = &m.value_type {
                check_type(v, &|| format!("{} (map value)", who()), depth + 1, d);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TensorType;

    /// `x: f32[2] → op → y: f32[2]` at opset 17, IR version 8.
    fn model(op: &str, domain: &str) -> pb::ModelProto {
        let vi = |name: &str| pb::ValueInfoProto {
            name: Some(name.into()),
            r#type: Some(ValueType::Tensor(TensorType::fixed(DType::F32, &[2])).to_proto()),
            ..Default::default()
        };
        let mut opset_import = vec![pb::OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }];
        if !domain.is_empty() && domain != "ai.onnx" {
            opset_import.push(pb::OperatorSetIdProto {
                domain: Some(domain.into()),
                version: Some(1),
            });
        }
        pb::ModelProto {
            ir_version: Some(8),
            opset_import,
            graph: Some(pb::GraphProto {
                name: Some("g".into()),
                node: vec![pb::NodeProto {
                    name: Some("n0".into()),
                    op_type: Some(op.into()),
                    domain: Some(domain.into()),
                    input: vec!["x".into()],
                    output: vec!["y".into()],
                    ..Default::default()
                }],
                input: vec![vi("x")],
                output: vec![vi("y")],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn diagnose(p: pb::ModelProto) -> Diagnostics {
        check(&crate::import::model_from_proto(p).unwrap())
    }

    fn errors(p: pb::ModelProto) -> Vec<String> {
        diagnose(p).errors
    }

    /// The tensor type of the first value info in `list`.
    fn tensor_type(list: &mut [pb::ValueInfoProto]) -> &mut pb::type_proto::Tensor {
        match list[0].r#type.as_mut().and_then(|t| t.value.as_mut()) {
            Some(pb::type_proto::Value::TensorType(t)) => t,
            _ => unreachable!("a tensor type"),
        }
    }

    #[test]
    fn the_model_used_below_is_valid() {
        let d = diagnose(model("Relu", ""));
        assert!(d.errors.is_empty() && d.warnings.is_empty(), "{d:?}");
    }

    #[test]
    fn an_op_onnx_does_not_define_in_the_default_domain_is_an_error() {
        for domain in ["", "ai.onnx"] {
            let e = errors(model("Frobnicate", domain));
            assert_eq!(
                e,
                vec![
                    "main graph: node n0 (Frobnicate): op type 'Frobnicate' is not an operator \
                     of the default domain (ONNX defines no such op)"
                ],
                "domain '{domain}'"
            );
        }
        // ai.onnx.ml is ONNX's too.
        let mut p = model("Frobnicate", "ai.onnx.ml");
        p.opset_import[1].version = Some(3);
        let e = errors(p);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].contains("not an operator of domain 'ai.onnx.ml'"),
            "{e:?}"
        );
        // Other domains are not ONNX's to define: not checked, a warning.
        let d = diagnose(model("Frobnicate", "com.microsoft"));
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(
            d.warnings,
            vec!["no spec for op com.microsoft.Frobnicate (1 nodes): not checked"]
        );
    }

    #[test]
    fn onnx_ops_without_a_spec_are_checked_against_the_opset() {
        // Swish (opset 24) has no spec in the registry: at 24 a warning, before an error.
        let mut p = model("Swish", "");
        p.opset_import[0].version = Some(24);
        p.ir_version = Some(11);
        let d = diagnose(p);
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(
            d.warnings,
            vec!["no spec for op Swish (1 nodes): not checked"]
        );
        assert_eq!(
            errors(model("Swish", "")),
            vec![
                "main graph: node n0 (Swish): Swish exists in the default domain from version \
                 24 on, but the model imports version 17"
            ]
        );
    }

    #[test]
    fn a_deprecated_op_is_a_warning() {
        let mut p = model("Upsample", "");
        p.opset_import[0].version = Some(10);
        let d = diagnose(p);
        assert!(
            d.warnings.iter().any(|w| w
                == "main graph: node n0 (Upsample): Upsample is deprecated at version 10 of \
                    the default domain (its schema of version 10); onnx.checker refuses it"),
            "{d:?}"
        );
    }

    #[test]
    fn undefined_and_unknown_element_types_are_errors() {
        for (code, what) in [
            (0, "elem_type is 0 (UNDEFINED)"),
            (
                12345,
                "elem_type is 12345, which is not an ONNX element type",
            ),
        ] {
            let mut p = model("Relu", "");
            tensor_type(&mut p.graph.as_mut().unwrap().input).elem_type = Some(code);
            let e = errors(p);
            assert!(
                e.contains(&format!("main graph: input 'x': {what}")),
                "{code}: {e:?}"
            );
            let mut p = model("Relu", "");
            tensor_type(&mut p.graph.as_mut().unwrap().output).elem_type = Some(code);
            assert!(
                errors(p).contains(&format!("main graph: output 'y': {what}")),
                "{code}"
            );
            let mut p = model("Relu", "");
            let g = p.graph.as_mut().unwrap();
            let mut vi = g.output[0].clone();
            vi.name = Some("z".into());
            g.value_info.push(vi);
            tensor_type(&mut g.value_info).elem_type = Some(code);
            assert_eq!(
                errors(p),
                vec![format!("main graph: value_info 'z': {what}")],
                "{code}"
            );
            // Inside a sequence type too.
            let mut p = model("Relu", "");
            let g = p.graph.as_mut().unwrap();
            let mut vi = g.output[0].clone();
            vi.name = Some("s".into());
            let mut elem = vi.r#type.take().unwrap();
            if let Some(pb::type_proto::Value::TensorType(t)) = elem.value.as_mut() {
                t.elem_type = Some(code);
            }
            vi.r#type = Some(pb::TypeProto {
                value: Some(pb::type_proto::Value::SequenceType(Box::new(
                    pb::type_proto::Sequence {
                        elem_type: Some(Box::new(elem)),
                    },
                ))),
                denotation: None,
            });
            g.value_info.push(vi);
            assert_eq!(
                errors(p),
                vec![format!(
                    "main graph: value_info 's' (sequence element): {what}"
                )],
                "{code}"
            );
        }
    }

    #[test]
    fn a_negative_declared_size_other_than_minus_one_is_an_error() {
        let set_dim = |p: &mut pb::ModelProto, v: i64| {
            let t = tensor_type(&mut p.graph.as_mut().unwrap().input);
            t.shape.as_mut().unwrap().dim[0].value =
                Some(pb::tensor_shape_proto::dimension::Value::DimValue(v));
        };
        let mut p = model("Relu", "");
        set_dim(&mut p, -5);
        assert_eq!(
            errors(p),
            vec![
                "main graph: input 'x': dim 0 is -5; a size is never negative (-1 is read as \
                 a dynamic dim)"
            ]
        );
        // -1 is how exporters write a dynamic dim.
        let mut p = model("Relu", "");
        set_dim(&mut p, -1);
        assert!(errors(p).is_empty());
    }

    #[test]
    fn an_ir_version_above_what_we_know_is_an_error() {
        let mut p = model("Relu", "");
        p.ir_version = Some(999);
        assert_eq!(
            errors(p),
            vec![format!(
                "ir_version 999 is above {MAX_IR_VERSION}, the highest IR version this build \
                 knows (that of onnx {})",
                onnx_ops::ONNX_VERSION
            )]
        );
        let mut p = model("Relu", "");
        p.ir_version = Some(MAX_IR_VERSION);
        assert!(errors(p).is_empty());
    }

    /// A `Constant` node holding `t` feeding `Add(x, c)`.
    fn with_constant(t: pb::TensorProto) -> pb::ModelProto {
        let mut p = model("Add", "");
        let g = p.graph.as_mut().unwrap();
        g.node[0].input.push("c".into());
        g.node.insert(
            0,
            pb::NodeProto {
                name: Some("k".into()),
                op_type: Some("Constant".into()),
                output: vec!["c".into()],
                attribute: vec![pb::AttributeProto {
                    name: Some("value".into()),
                    r#type: Some(4),
                    t: Some(t),
                    ..Default::default()
                }],
                ..Default::default()
            },
        );
        p
    }

    #[test]
    fn tensors_need_a_defined_element_type_and_sizes_that_are_not_negative() {
        let good = crate::tensor::from_f64s("w", DType::F32, &[2], &[1.0, 2.0]);
        assert!(errors(with_constant(good.clone())).is_empty());
        for (code, what) in [
            (0, "has data_type 0 (UNDEFINED)"),
            (
                12345,
                "has data_type 12345, which is not an ONNX element type",
            ),
        ] {
            let mut t = good.clone();
            t.data_type = Some(code);
            let e = errors(with_constant(t.clone()));
            assert!(
                e.contains(&format!(
                    "main graph: node k (Constant) attribute 'value' {what}"
                )),
                "{code}: {e:?}"
            );
            // The same tensor as an initializer.
            let mut p = model("Add", "");
            let g = p.graph.as_mut().unwrap();
            g.node[0].input.push("w".into());
            g.initializer.push(t);
            let e = errors(p);
            assert!(
                e.contains(&format!("main graph: initializer 'w' {what}")),
                "{code}: {e:?}"
            );
        }
        let mut t = good;
        t.dims = vec![-5];
        let e = errors(with_constant(t));
        assert!(
            e.contains(
                &"main graph: node k (Constant) attribute 'value' has a negative size -5 in its \
                  dims [-5]"
                    .to_string()
            ),
            "{e:?}"
        );
    }

    /// An `If` whose branches are `If`s, `depth` levels deep, built in memory (a protobuf
    /// file cannot nest so deep: prost refuses it).
    fn nested_ifs(depth: usize) -> Model {
        use crate::attr::AttrValue;
        use crate::graph::Node;
        let ty = ValueType::Tensor(TensorType::fixed(DType::F32, &[2]));
        let vi = |name: &str| pb::ValueInfoProto {
            name: Some(name.into()),
            r#type: Some(ty.to_proto()),
            ..Default::default()
        };
        let leaf = |out: &str| {
            let mut g = Graph::new("leaf");
            g.push_node(Node::new("Relu", &["x"], &[out]));
            g.outputs.push(vi(out));
            g.rebuild_edges();
            g
        };
        let mut body = leaf("r0");
        for level in 1..depth {
            let mut g = Graph::new(&format!("level{level}"));
            let out = format!("r{level}");
            g.push_node(
                Node::new("If", &["c"], &[&out])
                    .with_attr("then_branch", AttrValue::Graph(Box::new(body)))
                    .with_attr(
                        "else_branch",
                        AttrValue::Graph(Box::new(leaf(&format!("e{level}")))),
                    ),
            );
            g.outputs.push(vi(&out));
            g.rebuild_edges();
            body = g;
        }
        let mut m = Model::new(17);
        m.graph = body;
        m.graph.inputs.push(vi("x"));
        m.graph.inputs.push(pb::ValueInfoProto {
            name: Some("c".into()),
            r#type: Some(ValueType::Tensor(TensorType::fixed(DType::Bool, &[])).to_proto()),
            ..Default::default()
        });
        m.graph.rebuild_edges();
        m
    }

    #[test]
    fn subgraphs_nested_too_deep_are_an_error_not_a_stack_overflow() {
        let ok = nested_ifs(10);
        let d = check(&ok);
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        // Run where the stack is small (a test thread's 2 MiB would hide nothing).
        let deep = nested_ifs(400);
        let d = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || check(&deep))
            .unwrap()
            .join()
            .unwrap();
        assert!(
            d.errors
                .iter()
                .any(|e| e.contains(&format!("subgraphs nest deeper than {MAX_SUBGRAPH_DEPTH}"))),
            "{:?}",
            d.errors
        );
    }

    #[test]
    fn a_long_chain_is_checked_without_recursion() {
        let mut m = Model::new(17);
        let ty = ValueType::Tensor(TensorType::fixed(DType::F32, &[2])).to_proto();
        let mut prev = "x".to_string();
        for i in 0..20_000 {
            let out = format!("v{i}");
            m.graph
                .push_node(crate::graph::Node::new("Relu", &[&prev], &[&out]));
            prev = out;
        }
        m.graph.rebuild_edges();
        for (name, list) in [
            ("x", &mut m.graph.inputs),
            (prev.as_str(), &mut m.graph.outputs),
        ] {
            list.push(pb::ValueInfoProto {
                name: Some(name.into()),
                r#type: Some(ty.clone()),
                ..Default::default()
            });
        }
        let d = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || infer_and_check(&mut m))
            .unwrap()
            .join()
            .unwrap();
        assert!(d.errors.is_empty(), "{:?}", &d.errors[..1]);
    }
}
