//! Model checks: structure (acyclic, single definition, no dangling inputs), arity, attributes,
//! dtypes and shapes against the op registry.
use crate::attr::AttrLookup;
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::infer::{self, Options, Scope};
use crate::model::Model;
use crate::registry::{OpSpec, Registry};
use crate::types::ValueType;
use std::collections::{HashMap, HashSet};

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
    let d = check(m);
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

/// Runs every check and collects the findings.
pub fn check(m: &Model) -> Diagnostics {
    let mut d = Diagnostics::default();
    let opset = m.default_opset();
    let mut domains: HashSet<String> = HashSet::new();
    for o in &m.opset_import {
        let dom = o.domain.clone().unwrap_or_default();
        domains.insert(if dom == "ai.onnx" { String::new() } else { dom });
    }
    check_graph(
        &m.graph,
        "main graph",
        opset,
        &domains,
        &HashSet::new(),
        &mut d,
    );
    // Types: run inference on a copy and report transfer-function failures.
    let mut copy = m.clone();
    let rep = infer::infer_graph(
        &mut copy.graph,
        opset,
        &Scope::default(),
        Options::default(),
    );
    for (node, msg) in rep.errors {
        d.errors.push(format!("node {node}: {msg}"));
    }
    for (node, msg) in rep.ambiguous {
        d.ambiguous.push(format!("node {node}: {msg}"));
    }
    for (op, n) in rep.unknown_ops {
        d.warnings
            .push(format!("no spec for op {op} ({n} nodes): not checked"));
    }
    check_types(&copy.graph, "main graph", opset, &mut d);
    d
}

fn check_graph(
    g: &Graph,
    path: &str,
    opset: i64,
    domains: &HashSet<String>,
    outer: &HashSet<String>,
    d: &mut Diagnostics,
) {
    let reg = Registry::global();
    check_initializers(g, path, d);
    // Definitions.
    let mut defined: HashSet<String> = HashSet::new();
    let mut input_names = HashSet::new();
    for v in &g.inputs {
        let n = v.name.clone().unwrap_or_default();
        if n.is_empty() {
            d.errors.push(format!("{path}: a graph input has no name"));
        } else if !input_names.insert(n.clone()) {
            d.errors
                .push(format!("{path}: graph input '{n}' is declared twice"));
        }
        defined.insert(n);
    }
    for k in g.initializers.keys() {
        defined.insert(k.clone());
    }
    for s in &g.sparse_initializers {
        if let Some(n) = s.values.as_ref().and_then(|v| v.name.clone()) {
            defined.insert(n);
        }
    }
    let mut produced: HashMap<&str, String> = HashMap::new();
    for n in g.nodes() {
        for o in n.outputs.iter().filter(|o| !o.is_empty()) {
            if let Some(prev) = produced.insert(o, n.label()) {
                d.errors.push(format!(
                    "{path}: value '{o}' is produced twice (by {prev} and {})",
                    n.label()
                ));
            } else if defined.contains(o) {
                d.errors.push(format!(
                    "{path}: node {} redefines '{o}', a graph input or initializer",
                    n.label()
                ));
            }
        }
    }
    for o in produced.keys() {
        defined.insert(o.to_string());
    }
    if let Err(e) = g.topo_order() {
        d.errors.push(format!("{path}: {e}"));
    }
    let visible = |name: &str| defined.contains(name) || outer.contains(name);
    for n in g.nodes() {
        for i in n.present_inputs() {
            if !visible(i) {
                d.errors.push(format!(
                    "{path}: node {} reads '{i}', which nothing defines",
                    n.label()
                ));
            }
        }
        if !domains.contains(n.domain()) {
            d.errors.push(format!(
                "{path}: node {} uses domain '{}' but the model imports no opset for it",
                n.label(),
                n.domain()
            ));
        }
        if let Some(spec) = reg.for_node(n) {
            check_node(n, spec, opset, path, d);
        }
        if n.subgraphs().next().is_none() {
            continue;
        }
        // Built only for nodes with subgraphs: cloning every name per node made validating a
        // graph of N nodes quadratic.
        let mut scope: HashSet<String> = outer.clone();
        scope.extend(defined.iter().cloned());
        for (attr, sub) in n.subgraphs() {
            check_graph(
                sub,
                &format!("{path} > {} attribute '{attr}'", n.label()),
                opset,
                domains,
                &scope,
                d,
            );
        }
    }
    for o in &g.outputs {
        let name = o.name.as_deref().unwrap_or("");
        if name.is_empty() {
            d.errors.push(format!("{path}: a graph output has no name"));
        } else if !visible(name) {
            d.errors
                .push(format!("{path}: graph output '{name}' is never defined"));
        }
    }
}

fn check_node(n: &crate::graph::Node, spec: &OpSpec, opset: i64, path: &str, d: &mut Diagnostics) {
    let who = format!("{path}: node {}", n.label());
    if opset < spec.since() {
        d.errors.push(format!(
            "{who}: {} needs opset {} but the model imports {opset}",
            spec.op_type,
            spec.since()
        ));
    }
    let count = |v: &[String]| v.len() - v.iter().rev().take_while(|s| s.is_empty()).count();
    let (lo, hi) = spec.input_arity();
    let ni = count(&n.inputs);
    if ni < lo || hi.is_some_and(|h| ni > h) {
        d.errors.push(format!(
            "{who}: takes {} inputs, found {ni}",
            arity_text(lo, hi)
        ));
    }
    for (slot, name) in n.inputs.iter().enumerate() {
        if name.is_empty()
            && let Some(p) = spec.inputs.get(slot)
            && p.kind == crate::registry::PortKind::Single
        {
            d.errors.push(format!(
                "{who}: required input '{}' (slot {slot}) is empty",
                p.name
            ));
        }
    }
    let (lo, hi) = spec.output_arity();
    let no = count(&n.outputs);
    if no < lo.min(1) || hi.is_some_and(|h| no > h) {
        d.errors.push(format!(
            "{who}: has {} outputs, found {no}",
            arity_text(lo, hi)
        ));
    }
    for a in &n.attributes {
        match spec.attr_spec_at(&a.name, opset) {
            None => d
                .errors
                .push(format!("{who}: unknown attribute '{}'", a.name)),
            Some(s) => {
                if a.ref_attr_name.is_none()
                    && let Err(e) = s.check(&a.value)
                {
                    d.errors.push(format!("{who}: {e}"));
                }
            }
        }
    }
    for s in &spec.attrs {
        if s.required && s.exists_at(opset) && n.attr(s.name).is_none() {
            d.errors
                .push(format!("{who}: required attribute '{}' is missing", s.name));
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

/// Dtype constraints of every node, using the inferred types of its inputs.
fn check_types(g: &Graph, path: &str, opset: i64, d: &mut Diagnostics) {
    let reg = Registry::global();
    for n in g.nodes() {
        if let Some(spec) = reg.for_node(n) {
            let mut bound: HashMap<&str, crate::DType> = HashMap::new();
            for (slot, name) in n.inputs.iter().enumerate() {
                if name.is_empty() {
                    continue;
                }
                let tc = spec.input_tc(slot);
                let Some(allowed) = spec.input_allowed_at(slot, opset) else {
                    continue;
                };
                let ValueType::Tensor(t) = g.value_type(name) else {
                    continue;
                };
                if !t.dtype.is_known() {
                    continue;
                }
                if !allowed.contains(&t.dtype) {
                    d.errors.push(format!(
                        "{path}: node {} input {slot} ('{name}') is {}, but {} allows {}",
                        n.label(),
                        t.dtype,
                        spec.op_type,
                        allowed
                            .iter()
                            .map(|x| x.name())
                            .collect::<Vec<_>>()
                            .join("|")
                    ));
                } else if let Some(prev) = bound.insert(tc, t.dtype)
                    && prev != t.dtype
                {
                    d.errors.push(format!(
                        "{path}: node {} mixes {prev} and {} for type {tc}",
                        n.label(),
                        t.dtype
                    ));
                }
            }
        }
        for (attr, sub) in n.subgraphs() {
            check_types(
                sub,
                &format!("{path} > {} attribute '{attr}'", n.label()),
                opset,
                d,
            );
        }
    }
}

/// Initializer data must match its dims and dtype.
fn check_initializers(g: &Graph, path: &str, d: &mut Diagnostics) {
    use crate::tensor::TensorExt;
    for (name, t) in &g.initializers {
        if t.dims.iter().any(|&x| x < 0) {
            d.errors.push(format!(
                "{path}: initializer '{name}' has negative dims {:?}",
                t.dims
            ));
            continue;
        }
        if !t.dtype().is_known() {
            d.errors.push(format!(
                "{path}: initializer '{name}' has undefined data type {}",
                t.data_type.unwrap_or(0)
            ));
            continue;
        }
        if t.is_external() || !(t.dtype().is_numeric() || t.dtype() == crate::DType::Bool) {
            continue;
        }
        if t.dtype().bits().is_some_and(|b| b >= 8)
            && let Err(e) = t.to_f64s()
        {
            d.errors.push(format!("{path}: {e}"));
        }
    }
}
