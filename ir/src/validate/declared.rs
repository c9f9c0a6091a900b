//! Declared types against inference: a graph output, a value_info entry or a graph input whose
//! declared type says something inference proves wrong.
//!
//! [`super::check`] accepts such models because inference lets its own facts win over a
//! declaration (and backends differ in what they do with a wrong one: ONNX Runtime refuses to
//! load it, others ignore it). A model whose declarations contradict its nodes is not a test of
//! anything; [`declared_contradictions`] lists them so that callers can call it invalid.
use crate::graph::Graph;
use crate::infer::{self, Inferred, MAX_SUBGRAPH_DEPTH, Options, Report};
use crate::model::Model;
use crate::tensor::TensorExt;
use crate::text::print_type;
use crate::types::{Dim, TensorType, ValueType};
use std::fmt;

/// Where a contradicting declaration is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Declared {
    /// A graph input (compared with the initializer of the same name).
    Input,
    /// A graph output.
    Output,
    /// A value_info entry.
    ValueInfo,
}

impl fmt::Display for Declared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Declared::Input => "input",
            Declared::Output => "output",
            Declared::ValueInfo => "value_info",
        })
    }
}

/// A declared type that contradicts what the value is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contradiction {
    /// The graph (`main graph`, or the path to a subgraph).
    pub graph: String,
    /// The kind of declaration.
    pub role: Declared,
    /// The value's name.
    pub name: String,
    /// The declared type.
    pub declared: ValueType,
    /// What inference (or the initializer, for an input) gives.
    pub inferred: ValueType,
    /// What differs: `element type`, `rank` or `dim <i>`.
    pub what: String,
}

impl fmt::Display for Contradiction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = if self.role == Declared::Input {
            "its initializer is"
        } else {
            "inference gives"
        };
        write!(
            f,
            "{}: {} '{}' is declared {}, but {source} {} ({} differs)",
            self.graph,
            self.role,
            self.name,
            print_type(&self.declared),
            print_type(&self.inferred),
            self.what
        )
    }
}

/// The declared types of `m` (graph outputs, value_info, and graph inputs that have an
/// initializer, in the main graph and every subgraph) that contradict what the value is:
/// another element type, another rank, or another size for a dim both know. A declaration
/// that says less than inference (an unknown dtype, a missing shape, a symbolic or unknown
/// dim) is no contradiction, nor is a value inference knows nothing of.
///
/// Graph inputs without an initializer are where inference starts, so they cannot contradict
/// it; an op whose inputs are declared with types it rejects is an inference error, which
/// [`super::check`] reports.
pub fn declared_contradictions(m: &Model) -> Vec<Contradiction> {
    let mut report = Report::default();
    let inferred = infer::run_model(m, Options::default(), &mut report);
    let mut out = Vec::new();
    walk(&m.graph, &inferred, "main graph", 0, &mut out);
    out
}

fn walk(
    g: &Graph,
    inferred: &Inferred<'_>,
    path: &str,
    depth: usize,
    out: &mut Vec<Contradiction>,
) {
    if depth > MAX_SUBGRAPH_DEPTH {
        return; // check_graph reports it
    }
    let mut push = |role: Declared, name: &str, declared: ValueType, actual: &ValueType| {
        if let Some(what) = contradiction(&declared, actual) {
            out.push(Contradiction {
                graph: path.to_string(),
                role,
                name: name.to_string(),
                declared,
                inferred: actual.clone(),
                what,
            });
        }
    };
    for v in &g.inputs {
        let name = v.name.as_deref().unwrap_or("");
        if let (Some(tp), Some(init)) = (&v.r#type, g.initializers.get(name)) {
            let actual = ValueType::Tensor(init.tensor_type());
            push(Declared::Input, name, ValueType::from_proto(tp), &actual);
        }
    }
    let lists = [
        (Declared::Output, &g.outputs),
        (Declared::ValueInfo, &g.value_info),
    ];
    for (role, list) in lists {
        for v in list {
            let name = v.name.as_deref().unwrap_or("");
            if let (Some(tp), Some(actual)) = (&v.r#type, inferred.types.get(name)) {
                push(role, name, ValueType::from_proto(tp), actual);
            }
        }
    }
    for n in g.nodes() {
        for (pos, idx, name, sub) in n.subgraphs_at() {
            if let Some(r) = inferred.sub(n.id, pos, idx) {
                let p = format!("{path} > {} attribute '{name}'", n.label());
                walk(sub, r, &p, depth + 1, out);
            }
        }
    }
}

/// What `declared` says that `actual` contradicts (`None`: nothing).
fn contradiction(declared: &ValueType, actual: &ValueType) -> Option<String> {
    use ValueType as V;
    match (declared, actual) {
        (V::Unknown, _) | (_, V::Unknown) => None,
        (V::Tensor(d), V::Tensor(a)) | (V::SparseTensor(d), V::SparseTensor(a)) => tensors(d, a),
        (V::Sequence(d), V::Sequence(a)) | (V::Optional(d), V::Optional(a)) => {
            contradiction(d, a).map(|w| format!("element's {w}"))
        }
        (V::Map(dk, dv), V::Map(ak, av)) => {
            if dk.is_known() && ak.is_known() && dk != ak {
                Some("key type".into())
            } else {
                contradiction(dv, av).map(|w| format!("map value's {w}"))
            }
        }
        (V::Opaque(..), V::Opaque(..)) => None,
        _ => Some("kind of value".into()),
    }
}

fn tensors(d: &TensorType, a: &TensorType) -> Option<String> {
    if d.dtype.is_known() && a.dtype.is_known() && d.dtype != a.dtype {
        return Some("element type".into());
    }
    let (Some(ds), Some(xs)) = (&d.shape, &a.shape) else {
        return None;
    };
    if ds.len() != xs.len() {
        return Some("rank".into());
    }
    ds.iter()
        .zip(xs)
        .enumerate()
        .find_map(|(i, pair)| match pair {
            (Dim::Known(p), Dim::Known(q)) if p != q => Some(format!("dim {i}")),
            _ => None,
        })
}
