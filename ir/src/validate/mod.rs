//! Model checks: structure (acyclic, single definition, no dangling inputs), the header (IR
//! version), operators (ONNX defines the op at the model's opset: [`crate::onnx_ops`]), element
//! types and sizes of declared types and tensors, arity, attributes, dtypes and shapes against
//! the op registry.
//!
//! Every check is linear in the size of the model: names are looked up in hash sets, enclosing
//! scopes are chained by reference (never copied per subgraph), inference runs once without
//! copying the model.
//!
//! One room per role: `structure.rs` (definitions, references, cycles, nesting), `node.rs` (the
//! op exists, arity and attributes against the spec), `types.rs` (dtypes against the spec,
//! declared types), `tensors.rs` (initializers and attribute tensors), `declared.rs`
//! (declared types that inference contradicts: [`declared_contradictions`], not part of
//! [`check`]).
mod declared;
mod node;
mod structure;
mod tensors;
#[cfg(test)]
mod tests;
mod types;

pub use declared::{Contradiction, Declared, declared_contradictions};

use crate::error::{Error, Result};
use crate::infer::{self, Inferred, Options, Report};
use crate::model::Model;
use crate::onnx_ops::{self, MAX_IR_VERSION, OpStatus};
use std::collections::HashMap;
use structure::check_graph;
use types::check_types;

/// Findings of [`check`].
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    /// Rule violations: the model is invalid.
    pub errors: Vec<String>,
    /// Things that cannot be checked (ops without a spec, custom domains).
    pub warnings: Vec<String>,
    /// Cases that are valid but that ONNX defines inconsistently or not at all
    /// ([`OpSpec::ambiguous`](crate::registry::OpSpec::ambiguous)): not errors, but generated
    /// and minimized models avoid them.
    pub ambiguous: Vec<String>,
}

/// Validates a model; `Err(Error::Invalid)` lists every violation found.
pub fn validate(m: &Model) -> Result<Diagnostics> {
    into_result(check(m))
}

/// [`validate`], with an error for each declared type that inference contradicts
/// ([`declared_contradictions`]) too: what a model written by hand (or by a language model)
/// must pass, since its declarations are claims about what its nodes compute.
pub fn validate_declared(m: &Model) -> Result<Diagnostics> {
    let mut d = check(m);
    d.errors
        .extend(declared_contradictions(m).iter().map(ToString::to_string));
    into_result(d)
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
