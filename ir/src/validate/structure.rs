//! The structure of a graph and of the graphs nested in it: every value defined once, every
//! input read defined (here or in an enclosing graph), no cycle, named inputs and outputs; each
//! node checked on the way.

use super::node::{check_node, check_op_exists};
use super::tensors::{check_attribute_tensors, check_initializers, check_sparse};
use super::types::check_declared;
use super::{Ctx, Diagnostics};
use crate::graph::{Graph, Node};
use crate::infer::MAX_SUBGRAPH_DEPTH;
use crate::onnx_ops::{self};
use crate::registry::Registry;
use std::collections::HashMap;

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
pub(super) struct Visible<'a> {
    names: HashMap<&'a str, Def<'a>>,
    parent: Option<&'a Visible<'a>>,
}

impl Visible<'_> {
    fn contains(&self, name: &str) -> bool {
        self.names.contains_key(name) || self.parent.is_some_and(|p| p.contains(name))
    }
}

pub(super) fn check_graph(
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
