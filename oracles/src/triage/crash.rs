//! Failures (crashes, errors) looked at closely: whose failure it is, which element type a
//! library lacks, which node it failed on, and whether a wrongly shaped value upstream is the
//! real cause.
use crate::finding::Location;
use crate::localize::key_attrs;
use mutagraph_backends::catalog::Library;
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::Pool;
use mutagraph_backends::worker::{Outcome, is_timeout_detail};
use mutagraph_ir::graph::NodeId;
use mutagraph_ir::model::Model;
use mutagraph_ir::slice::{expose_all, extract};
use std::collections::HashSet;

/// Why a failure is mutagraph's own rather than the library's, if it is: a panic located in
/// our interpreter (`backends/src/...`) or in the Rust binding of ONNX Runtime (the `ort`
/// crate, which is not ONNX Runtime), or ONNX's own shape inference (run by ONNX Runtime at
/// load) rejecting the model, which means the generator made a model that is not valid.
pub fn ours(library: Library, message: &str) -> Option<String> {
    if let Some(at) = panic_location(message) {
        let path = at.replace('\\', "/");
        if path.contains("/ort-2.") || path.contains("/ort-sys-") {
            return Some(format!(
                "a panic in the Rust `ort` crate (the binding mutagraph uses), not in ONNX Runtime: {at}"
            ));
        }
        if path.starts_with("backends/src/") || path.contains("/mutagraph") {
            return Some(format!("a panic in mutagraph's own code: {at}"));
        }
    }
    if library == Library::OnnxRuntime
        && message.starts_with("load: ")
        && message.contains("ShapeInferenceError")
    {
        return Some(
            "ONNX's shape inference (run by ONNX Runtime at load) rejects the model: the \
             generator made an invalid model"
                .into(),
        );
    }
    None
}

/// Why a burn failure is mutagraph's, if it is. burn has no model format: a failure that is not
/// a panic inside burn (or the crates under it) is mutagraph's interpreter refusing a model, and
/// a panic stating a gap burn declares ("not yet supported") is the interpreter asking for
/// what burn says it lacks.
pub fn burn_refusal(message: &str) -> Option<String> {
    match panic_location(message) {
        None => Some(format!(
            "mutagraph's interpreter over burn refused the model (no panic inside burn): {message}"
        )),
        Some(_) if message.contains("not yet supported") || message.contains("not supported") => {
            Some(format!(
                "mutagraph's interpreter called burn with an option burn declares unsupported: \
                 {message}"
            ))
        }
        Some(_) => None,
    }
}

/// A failure in which the library says in words that it does not implement what the model
/// asks (tract's `seq_len only supported for trivial noop case`): a limit it declares, not a
/// misbehaviour, so not filed. A panic is a declared limit only when it is Rust's own
/// `todo!()` or `unimplemented!()` (tract's `not yet implemented: Unsupported padding in
/// deconvolution arguments SameUpper`).
pub fn declared_limitation(message: &str) -> Option<String> {
    const PHRASES: &[&str] = &[
        "only supported for",
        "is not supported",
        "not yet supported",
        "not yet implemented",
        "unimplemented",
        "not implemented",
        // round 13: ONNX Runtime's "'Linear' mode only supports: 2-D inputs or ...", tract's
        // "only bits=4 and bits=2 are supported (got 8)", "Square does not support I64",
        // "Compress can not be typed" (an op whose output shape its values decide)
        "only supports",
        "are supported (got",
        "does not support",
        "can not be typed",
    ];
    if let Some(p) = message.strip_prefix("panic: ") {
        let todo = p.starts_with("not yet implemented") || p.starts_with("not implemented");
        if !todo {
            return None;
        }
    }
    let lower = message.to_lowercase();
    // tract's own dimension type is no type of the model: its kernels refusing it ("Sign does
    // not support TDim") is tract leaking it into values, a fault.
    if lower.contains("tdim") {
        return None;
    }
    PHRASES
        .iter()
        .find(|p| lower.contains(*p))
        .map(|p| format!("the library declares this unsupported (\"{p}\"): {message}"))
}

/// tract refusing a model whose declared types name a symbolic size (`batch`) that the
/// inputs it was given fix (`Impossible to unify Sym(batch) with Val(1)`): tract keeps the
/// file's declared shapes beside the input facts it is told, and they clash. A limit known
/// upstream (sonos/tract#797, #1819; tract's command line offers
/// `--onnx-ignore-output-shapes`), met on users' files run at fixed sizes, not filed. A
/// symbol the model does not declare (tract's own) is no such case.
pub fn declared_symbol_clash(message: &str, model: &Model) -> Option<String> {
    let rest = &message[message.find("Impossible to unify ")? + "Impossible to unify ".len()..];
    let sym = |s: &str| -> Option<String> {
        let inner = s.strip_prefix("Sym(")?;
        Some(inner[..inner.find(')')?].to_string())
    };
    let (a, b) = rest.split_once(" with ")?;
    let (symbol, other) = match (sym(a), sym(b)) {
        (Some(s), None) => (s, b),
        (None, Some(s)) => (s, a),
        _ => return None,
    };
    if !other.starts_with("Val(") || !model.graph.declared_symbols().contains(&symbol) {
        return None;
    }
    Some(format!(
        "tract keeps the symbolic size `{symbol}` that the model's declared types name beside \
         the fixed input sizes it is given, and they clash (known upstream: sonos/tract#797, \
         sonos/tract#1819): {message}"
    ))
}

/// Whether the library computed every output of `node` as the reference did (`got` and
/// `truth` hold values by name; an output missing from `got` is not the same). Integers and
/// NaN exactly, floats to a relative 1e-6.
pub fn same_values(
    node: &mutagraph_ir::graph::Node,
    truth: &NamedValues,
    got: &NamedValues,
) -> bool {
    let find = |set: &NamedValues, n: &str| {
        set.iter()
            .find(|(k, _)| k == n)
            .and_then(|(_, v)| v.tensor()?.to_f64s())
    };
    node.outputs
        .iter()
        .filter(|o| !o.is_empty())
        .all(|o| match (find(truth, o), find(got, o)) {
            (Some(a), Some(b)) => {
                a.len() == b.len()
                    && a.iter().zip(&b).all(|(x, y)| {
                        (x.is_nan() && y.is_nan())
                            || x == y
                            || (x - y).abs() <= 1e-6 * x.abs().max(1.0)
                    })
            }
            _ => false,
        })
}

/// The source location a caught panic names (`file:line` after ` (at `).
fn panic_location(message: &str) -> Option<&str> {
    let i = message.rfind(" (at ")?;
    let rest = &message[i + 5..];
    Some(rest.strip_suffix(')').unwrap_or(rest))
}

/// The element types a gap can be about (tract's `TDim` is its symbolic dimension type).
const GAP_TYPES: &[&str] = &[
    "bool", "tdim", "string", "blob", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16",
    "f32", "f64", "bf16", "qi8", "qu8", "qi32",
];

/// The element type a library's failure says it does not implement, if it says so: tract's
/// "bool is not a number", "Erf does not support F64", "impossible to unify TDim with I64",
/// "Can't build a WeightType from I64". One finding per library and type, whatever the op.
pub fn dtype_gap(library: Library, message: &str) -> Option<String> {
    if library != Library::Tract {
        return None;
    }
    // The tract backend's second attempt, with the inputs fixed to their values, meets other
    // ops first (a Pad of bools folded as a constant): the gap is the first attempt's.
    let first = message
        .split("; with the inputs fixed to their values")
        .next()
        .unwrap_or(message);
    let lower = first.to_lowercase();
    let word_before = |pat: &str| -> Option<String> {
        let i = lower.find(pat)?;
        let head = lower[..i].trim_end();
        let w: String = head
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        Some(w)
    };
    let word_after = |pat: &str| -> Option<String> {
        let i = lower.find(pat)?;
        Some(
            lower[i + pat.len()..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect(),
        )
    };
    // "tensor is TDim, accessed as I64": tract's symbolic dimensions leaking into values.
    // (Two element types of the model meeting in one op, "tensor is F16, accessed as F32" or
    // "No super type for F32 and I32", are no missing type: tract wires its own f32
    // constants into a model of another type; `finding::tract_phrase` names them.)
    let tdim_accessed = word_after("tensor is ").filter(|w| w == "tdim");
    // "impossible to unify I64 with TDim": a value tract typed as a symbolic dimension (a
    // Shape's output) meets an integer, the TDim leak whichever side it stands on; an i64
    // kernel that is missing fails otherwise ("Can't build a WeightType from I64").
    let unify = word_after("impossible to unify ").map(|first| {
        let tdim_beside = lower
            .find("impossible to unify ")
            .is_some_and(|i| lower[i..].contains(" with tdim"));
        if tdim_beside {
            "tdim".to_string()
        } else {
            first
        }
    });
    let candidates = [
        word_before(" is not a number"),
        word_after("does not support "),
        unify,
        word_after("weighttype from "),
        word_after("unsupported datum type "),
        tdim_accessed,
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|w| GAP_TYPES.contains(&w.as_str()))
}

/// The node of `model` a failure message names: a quoted node name, or a quoted value that a
/// node produces (ONNX Runtime writes `Name:'conv_3'`, tract `#12 "conv_3" Conv`).
pub fn named_node(model: &Model, message: &str) -> Option<NodeId> {
    let quoted = quoted_spans(message);
    if quoted.is_empty() {
        return None;
    }
    let g = &model.graph;
    for q in &quoted {
        for n in g.nodes() {
            if n.name.as_deref() == Some(q.as_str()) || n.outputs.first().is_some_and(|o| o == q) {
                return Some(n.id);
            }
        }
    }
    // tract names the nodes it derives from one of ours by suffixes ("Gemm_1.beta_c",
    // "Conv_3.downsample.1", "Slice_2.Slice_2.slice-axis-0-0"), ONNX Runtime the node a
    // fusion makes by the node it anchors on and the transformer ("/n/Mul/LayerNormFusion/"):
    // the longest node name that starts a quoted span, followed by a dot or by a slash
    quoted.iter().find_map(|q| {
        g.nodes()
            .filter_map(|n| {
                let name = n.name.as_deref().filter(|s| !s.is_empty())?;
                q.strip_prefix(name)
                    .is_some_and(|rest| {
                        rest.starts_with('.') || (rest.starts_with('/') && rest.ends_with('/'))
                    })
                    .then_some((name.len(), n.id))
            })
            .max_by_key(|&(len, _)| len)
            .map(|(_, id)| id)
    })
}

/// The ONNX Runtime rewrite that made the node a message quotes, when it names one: the
/// transformer whose name ends a quoted `…/<anchor>/<Rule>/` (`LayerNormFusion` in
/// `'/n/Mul/LayerNormFusion/'`).
pub fn ort_rewrite(message: &str) -> Option<String> {
    quoted_spans(message).into_iter().find_map(|q| {
        let inner = q.strip_suffix('/')?;
        let (anchor, rule) = inner.rsplit_once('/')?;
        let rule_like = rule.len() > 2
            && rule.starts_with(|c: char| c.is_ascii_uppercase())
            && rule.chars().all(|c| c.is_ascii_alphanumeric());
        (rule_like && !anchor.is_empty()).then(|| rule.to_string())
    })
}

/// The quoted spans of a message (node names, value names as libraries quote them).
pub fn quoted_spans(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    // ONNX Runtime's type and shape errors name the node in parentheses: `node (reshape_3)`.
    for pat in ["node (", "Node ("] {
        let mut rest = s;
        while let Some(i) = rest.find(pat) {
            rest = &rest[i + pat.len()..];
            if let Some(j) = rest.find(')')
                && j > 0
                && j < 200
            {
                out.push(rest[..j].to_string());
            }
        }
    }
    // tract names a node it could not build from the ONNX graph without quotes:
    // `Building node Squeeze_3 (Squeeze)`.
    let mut rest = s;
    while let Some(i) = rest.find("Building node ") {
        rest = &rest[i + "Building node ".len()..];
        if let Some(j) = rest.find(" (")
            && j > 0
            && j < 200
            && !rest[..j].contains(char::is_whitespace)
        {
            out.push(rest[..j].to_string());
        }
    }
    for q in ['"', '\''] {
        let parts: Vec<&str> = s.split(q).collect();
        for (i, p) in parts.iter().enumerate() {
            if i % 2 == 1 && i + 1 < parts.len() && !p.is_empty() && p.len() < 200 {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// How far a run got before it failed, from the stage its message starts with: loading (0),
/// compiling (1), running (2); a panic or an unlabelled failure counts as running.
pub fn stage_rank(message: &str) -> u8 {
    if message.starts_with("load: ") {
        0
    } else if message.starts_with("compile: ") {
        1
    } else {
        2
    }
}

/// The inputs of `prefix` taken from `inputs`.
fn feed_for(prefix: &Model, inputs: &NamedValues) -> NamedValues {
    let wanted: HashSet<String> = prefix
        .graph
        .real_inputs()
        .iter()
        .filter_map(|vi| vi.name.clone())
        .collect();
    inputs
        .iter()
        .filter(|(n, _)| wanted.contains(n))
        .cloned()
        .collect()
}

/// Runs the nodes `keep` of `model` (every output exposed) on `backend`: its outputs, or the
/// failure (`None` when the part could not even be built or run, or the library does not
/// support it).
pub fn run_part(
    pool: &mut Pool,
    backend: &str,
    model: &Model,
    keep: &[NodeId],
    inputs: &NamedValues,
) -> Result<NamedValues, Option<String>> {
    let part = extract(model, keep).map_err(|_| None)?;
    let (part, _) = expose_all(&part).map_err(|_| None)?;
    run_model(pool, backend, &part, inputs)
}

/// The part of `model` made of `keep` with only its own outputs (the values nothing in it
/// reads, and the model's outputs), for [`run_model`]: an optimizer fuses what it would fuse in
/// the whole model. Exposing every value undoes fusions (ONNX Runtime's Pad_Fusion leaves a Pad
/// whose output is a graph output alone), so a failure inside a fusion shows only in such a
/// part.
/// Outputs the whole model never reads (an RNN's unused final state) stay unasked: a library
/// prunes them in the model, and asking for them can change what its optimizer does (round 13:
/// tract's declutter loop over an RNN left every part with the RNN's Y_h as an output).
fn as_is(model: &Model, keep: &[NodeId]) -> Option<Model> {
    let mut part = extract(model, keep).ok()?;
    let g = &model.graph;
    let read: HashSet<&str> = g
        .nodes()
        .flat_map(|n| n.present_inputs())
        .chain(g.outputs.iter().filter_map(|o| o.name.as_deref()))
        .collect();
    part.graph
        .outputs
        .retain(|o| o.name.as_deref().is_some_and(|n| read.contains(n)));
    (!part.graph.outputs.is_empty()).then_some(part)
}

/// Runs `part` on `backend` (see [`run_part`]).
fn run_model(
    pool: &mut Pool,
    backend: &str,
    part: &Model,
    inputs: &NamedValues,
) -> Result<NamedValues, Option<String>> {
    let feed = feed_for(part, inputs);
    let r = pool
        .run(backend, &part.to_bytes(), &feed)
        .map_err(|_| None)?;
    match &r.outcome {
        // A part the library lacks a kernel for (a value an optimizer would have folded
        // away, exposed) says nothing about the failure being traced.
        Outcome::Unsupported { .. } => Err(None),
        o => match o.outputs() {
            Some(o) => Ok(o.clone()),
            None => Err(Some(o.detail())),
        },
    }
}

/// Where a failure starts: the first node (in topological order) that `faulty` cannot run,
/// found by bisecting the prefixes of the model it still runs; the outputs of the longest
/// prefix it runs, and the failure of the shortest one it does not.
pub struct FirstFailure {
    /// The node.
    pub node: NodeId,
    /// Every output of the longest prefix that runs.
    pub outputs: Option<NamedValues>,
    /// The failure of the prefix that ends with the node.
    pub message: Option<String>,
    /// False when a failure was looked for (`like`) and no node fails that way with only what
    /// it depends on: the node is then the bisection's guess.
    pub fails_like: bool,
}

/// See [`FirstFailure`]: bisection over the prefixes of `order` (the whole model's
/// topological order when `None`), whose whole list fails with `whole` (when known). With
/// `like`, a prefix counts as failing only when it fails that way
/// ([`crate::finding::same_failure`]): a prefix that fails otherwise (an op the library lacks,
/// which the whole model never reached) does not hold the failure looked for.
pub fn failing_node(
    pool: &mut Pool,
    faulty: &str,
    model: &Model,
    inputs: &NamedValues,
    order: Option<Vec<NodeId>>,
    whole: Option<String>,
    like: Option<&str>,
) -> Option<FirstFailure> {
    let library = mutagraph_backends::catalog::family(faulty);
    let order = match order {
        Some(o) => o,
        None => model.graph.topo_order().ok()?,
    };
    if order.is_empty() {
        return None;
    }
    // `lo` nodes run (0: trivially), `hi` do not (the whole model fails).
    let (mut lo, mut hi) = (0usize, order.len());
    let mut got: Option<NamedValues> = None;
    let mut message: Option<String> = whole;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        match run_part(pool, faulty, model, &order[..mid], inputs) {
            Ok(o) => {
                lo = mid;
                got = Some(o);
            }
            Err(Some(m)) if like.is_some_and(|l| !crate::finding::same_failure(library, l, &m)) => {
                lo = mid;
            }
            Err(m) => {
                hi = mid;
                message = m;
            }
        }
    }
    // A prefix that fails another way may hide the failure looked for (the library meets the
    // other fault first): the node found must fail that way with only what it depends on, else
    // the first node (in order) whose own part does.
    let mut found = true;
    if let Some(like) = like {
        let fails_like = |pool: &mut Pool, id: NodeId| {
            let mut part = ancestors(model, id);
            part.push(id);
            as_is(model, &part).is_some_and(|p| {
                matches!(run_model(pool, faulty, &p, inputs),
                    Err(Some(m)) if crate::finding::same_failure(library, like, &m))
            })
        };
        found = fails_like(pool, order[lo]);
        let start = if found {
            Some(order[lo])
        } else {
            order
                .iter()
                .take(MAX_SCAN)
                .copied()
                .find(|&id| fails_like(pool, id))
        };
        if let Some(id) = start {
            // The bisection's prefixes expose every value, which undoes fusions: a failure
            // inside one (a Pad fused into the pool after it) shows first at a later node.
            // The node is the earliest producer whose own part, as is, still fails that way.
            let earliest = walk_up(model, id, |id| fails_like(pool, id));
            if earliest != order[lo] || !found {
                return Some(FirstFailure {
                    node: earliest,
                    outputs: None,
                    message: Some(like.to_string()),
                    fails_like: true,
                });
            }
        }
    }
    Some(FirstFailure {
        node: order[lo],
        outputs: got,
        message,
        fails_like: found,
    })
}

/// From `id`, the producer of one of its inputs for which `fails` holds, again and again (at
/// most [`MAX_SCAN`] questions): the earliest node of that chain.
fn walk_up(model: &Model, mut id: NodeId, mut fails: impl FnMut(NodeId) -> bool) -> NodeId {
    let g = &model.graph;
    let mut asked = 0;
    'up: while asked < MAX_SCAN {
        let Some(node) = g.node(id) else { break };
        let producers: Vec<NodeId> = node
            .present_inputs()
            .filter_map(|i| g.producer(i))
            .filter(|&p| g.node(p).is_some_and(|n| n.op_type != "Constant"))
            .collect();
        for p in producers {
            asked += 1;
            if fails(p) {
                id = p;
                continue 'up;
            }
        }
        break;
    }
    id
}

/// Nodes [`failing_node`] tries one by one when bisection found none that fails the way looked
/// for on its own.
const MAX_SCAN: usize = 48;

/// The nodes `id` depends on (itself excluded), in topological order.
pub fn ancestors(model: &Model, id: NodeId) -> Vec<NodeId> {
    let g = &model.graph;
    let Ok(order) = g.topo_order() else {
        return Vec::new();
    };
    let mut need: HashSet<String> = g
        .node(id)
        .map(|n| n.present_inputs().map(String::from).collect())
        .unwrap_or_default();
    let mut keep = Vec::new();
    let pos = order.iter().position(|&n| n == id).unwrap_or(order.len());
    for &nid in order[..pos].iter().rev() {
        let n = g.node(nid).expect("listed");
        if n.outputs.iter().any(|o| need.contains(o)) {
            keep.push(nid);
            need.extend(n.present_inputs().map(String::from));
        }
    }
    keep.reverse();
    keep
}

/// Among `nodes`, the first whose output `faulty` gives another shape than the reference does
/// (`truth`: the reference's exposed values; `got`: the backend's, on those nodes): a failure
/// downstream of such a node is that node's wrong shape showing up (one wrongly shaped MaxPool
/// makes a Concat, a Reshape or an Add fail, each with its own message).
pub fn first_shape_mismatch(
    model: &Model,
    nodes: &[NodeId],
    truth: &NamedValues,
    got: &NamedValues,
    faulty: &str,
) -> Option<(Location, String)> {
    let shape = |vals: &NamedValues, name: &str| {
        vals.iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.tensor().map(|t| t.shape.clone()))
    };
    for id in nodes {
        let node = model.graph.node(*id)?;
        for o in node.outputs.iter().filter(|o| !o.is_empty()) {
            let (Some(w), Some(g)) = (shape(truth, o), shape(got, o)) else {
                continue;
            };
            if w != g {
                return Some((
                    Location {
                        op_type: node.key(),
                        value: o.clone(),
                        attrs: key_attrs(node),
                    },
                    format!(
                        "{faulty} gives '{o}' ({}) the shape {g:?}, the reference {w:?}",
                        node.op_type
                    ),
                ));
            }
        }
    }
    None
}

/// Where a hang starts in `model` (a small, minimized one): the first node, in topological
/// order, whose part (the node and what it depends on, run as is: an optimizer that loops over
/// a pattern needs the pattern unexposed) `faulty` does not finish; blamed on the node with the
/// nodes it depends on, or alone when it depends on none. Only the hanging part costs the
/// pool's time limit. `None` when no part hangs within [`MAX_SCAN`] nodes.
pub fn place_hang(
    pool: &mut Pool,
    faulty: &str,
    model: &Model,
    inputs: &NamedValues,
) -> Option<(Location, crate::finding::Blame)> {
    use crate::finding::Blame;
    let g = &model.graph;
    let order = g.topo_order().ok()?;
    let (id, before) = order.iter().take(MAX_SCAN).find_map(|&id| {
        let before = ancestors(model, id);
        let mut part = before.clone();
        part.push(id);
        let hangs = as_is(model, &part).is_some_and(|p| {
            matches!(run_model(pool, faulty, &p, inputs), Err(Some(m)) if is_timeout_detail(&m))
        });
        hangs.then_some((id, before))
    })?;
    let ops: Vec<String> = before
        .iter()
        .filter_map(|&b| g.node(b))
        .filter(|n| n.op_type != "Constant")
        .map(|n| n.key())
        .collect();
    let blame = if ops.is_empty() {
        Blame::Alone
    } else {
        Blame::WithProducers { ops }
    };
    Some((Location::of(g.node(id)?), blame))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_met_only_by_the_retry_with_fixed_inputs_is_not_the_failures() {
        let m = "compile: Translating node #22 \"c\" Compress ToTypedTranslator: Node #22 \"c\" \
                 Compress can not be typed; with the inputs fixed to their values: Failed analyse \
                 for node #64 \"p\" Pad: Eager eval during inference: Evaluating #2 \"adhoc\" \
                 Pad: Bool is not a number";
        assert_eq!(dtype_gap(Library::Tract, m), None);
        let pad = "run: Evaluating #2 \"p\" Pad: Bool is not a number; with the inputs fixed to \
                   their values: x";
        assert_eq!(dtype_gap(Library::Tract, pad).as_deref(), Some("bool"));
    }

    #[test]
    fn limits_declared_in_words_are_not_filed() {
        // Round 13: four bundles reviewers counted as declared limits.
        for m in [
            "run: Non-zero status code returned while running Resize node. Name:'r' Status Message: upsamplebase.h:553 ScalesValidation 'Linear' mode only supports:\n  * 2-D inputs or",
            "load: Building node M (MatMulNBits): MatMulNBits: only bits=4 and bits=2 are supported (got 8)",
            "run: Evaluating #10 \"R.sq\" Square: Square does not support I64",
            "compile: Translating node #32 \"C\" Compress ToTypedTranslator: Node #32 \"C\" Compress can not be typed",
            "panic: not yet implemented: Unsupported padding in deconvolution arguments SameUpper (at /r/tract-core-0.23.9/src/ops/cnn/deconv/mod.rs:48)",
        ] {
            assert!(declared_limitation(m).is_some(), "{m}");
        }
        // A panic that is no todo!() is a fault, whatever its words.
        assert!(declared_limitation("panic: index 3 is not supported (at /r/x.rs:1)").is_none());
        assert!(declared_limitation("run: Bool is not a number").is_none());
        // TDim is tract's, not the model's: its leak is a fault.
        assert!(
            declared_limitation("run: Evaluating #2 \"y\" Sign: Sign does not support TDim")
                .is_none()
        );
    }

    #[test]
    fn a_declared_symbol_fixed_by_the_inputs_is_a_known_tract_limit() {
        let m = mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[batch, 4] x) => (float[batch, 4] y) { y = Relu (x) }",
        )
        .unwrap();
        let msg = "compile: Failed analyse for node #1 \"y\" Relu: Unifying shapes batch,4 \
                   and 1,4: Impossible to unify Sym(batch) with Val(1).";
        let why = declared_symbol_clash(msg, &m).expect("a declared symbol");
        assert!(
            why.contains("`batch`") && why.contains("tract#797"),
            "{why}"
        );
        let swapped = "Impossible to unify Val(1) with Sym(batch).";
        assert!(declared_symbol_clash(swapped, &m).is_some());
        // A symbol the model does not declare is tract's own: no such case.
        let own = "Impossible to unify Sym(unk__0) with Val(1).";
        assert_eq!(declared_symbol_clash(own, &m), None);
        // Two values, or two symbols: no such case either.
        assert_eq!(
            declared_symbol_clash("Impossible to unify Val(3) with Val(1).", &m),
            None
        );
        assert_eq!(
            declared_symbol_clash("Impossible to unify Sym(batch) with Sym(n).", &m),
            None
        );
    }

    #[test]
    fn gaps_are_read_from_tract_messages() {
        let t = Library::Tract;
        assert_eq!(
            dtype_gap(t, "run: evaluating #3 \"p\" Pad: Bool is not a number").as_deref(),
            Some("bool")
        );
        assert_eq!(
            dtype_gap(t, "run: evaluating #1 \"e\" Erf: Erf does not support F64").as_deref(),
            Some("f64")
        );
        assert_eq!(
            dtype_gap(t, "compile: impossible to unify TDim with I64.").as_deref(),
            Some("tdim")
        );
        // The TDim leak on either side of the unification (a Shape's output read as i64)
        // is not tract lacking i64, which fails apart in the codegen below.
        assert_eq!(
            dtype_gap(
                t,
                "compile: Failed analyse for node #132 \"e\" EinSum: Infering facts: Applying \
                 rule inputs[1].datum_type == outputs[0].datum_type: Impossible to unify I64 \
                 with TDim."
            )
            .as_deref(),
            Some("tdim")
        );
        assert_eq!(
            dtype_gap(t, "panic: Can't build a WeightType from I64 (at x.rs:1)").as_deref(),
            Some("i64")
        );
        // Types meeting in one op are no missing type.
        assert_eq!(
            dtype_gap(
                t,
                "Evaluating #5 \"adhoc.alpha_ab\" Mul: Tensor datum type error: tensor is F16, accessed as F32"
            ),
            None
        );
        assert_eq!(
            dtype_gap(
                t,
                "in output_facts invocation for g.beta_c: Mul: No super type for F32 and I64"
            ),
            None
        );
        assert_eq!(
            dtype_gap(t, "Mul: tensor is TDim, accessed as I64").as_deref(),
            Some("tdim")
        );
        assert_eq!(dtype_gap(t, "run: index out of bounds"), None);
        assert_eq!(
            dtype_gap(Library::OnnxRuntime, "Bool is not a number"),
            None
        );
    }

    #[test]
    fn binding_and_interpreter_panics_are_ours() {
        let ort_crate = "panic: negative dim (at /root/.cargo/registry/src/index.crates.io-1/ort-2.0.0-rc.15/src/value/type.rs:210)";
        assert!(ours(Library::OnnxRuntime, ort_crate).is_some_and(|w| w.contains("`ort` crate")));
        let interp = "panic: index out of bounds (at backends/src/burn/ops.rs:300)";
        assert!(ours(Library::Burn, interp).is_some());
        let burn = "panic: === Tensor Operation Error === (at /root/.cargo/registry/src/x/burn-tensor-0.21.0/src/tensor/api/check.rs:1)";
        assert!(ours(Library::Burn, burn).is_none());
        // the interpreter's own refusal (no panic) and a gap burn states are not burn's bugs
        let refused = "run: /Resize (Resize): Resize: bad sizes";
        assert!(burn_refusal(refused).is_some_and(|w| w.contains("interpreter")));
        let declared = "panic: Asymmetric padding is not yet supported for conv3d (at /r/burn-tensor-0.21.0/src/tensor/module.rs:179)";
        assert!(burn_refusal(declared).is_some());
        assert!(burn_refusal(burn).is_none());
        let shape = "load: Node (n1) Op (Add) [ShapeInferenceError] Incompatible dimensions";
        assert!(ours(Library::OnnxRuntime, shape).is_some());
        assert!(ours(Library::OnnxRuntime, "run: Non-zero status code").is_none());
    }

    #[test]
    fn nodes_tract_derives_are_found_by_their_origin() {
        let m = mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[2] x) => (float[2] y) { [Erf_1] a = Erf (x)\n [Gemm_1] y = Relu (a) }",
        )
        .unwrap();
        let msg = "compile: running pass PropConst(0): Eager eval #7 \"Gemm_1.beta_c\" Mul during \
                   optimisation: Tensor datum type error: tensor is F32, accessed as F64";
        let id = named_node(&m, msg).expect("found");
        assert_eq!(m.graph.node(id).unwrap().name.as_deref(), Some("Gemm_1"));
        assert_eq!(named_node(&m, "\"Gemm_10.beta_c\" Mul"), None);
        // ONNX Runtime's fused node: the node it anchors on, then the transformer.
        let m = mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[2] x) => (float[2] y) { [\"/b/n\"] a = Erf (x)\n [\"/b/n/Mul\"] y = Relu (a) }",
        )
        .unwrap();
        let msg = "load: This is an invalid model. Type Error: Type 'tensor(int64)' of input \
                   parameter (c_6) of operator (LayerNormalization) in node \
                   (/b/n/Mul/LayerNormFusion/) is invalid.";
        let id = named_node(&m, msg).expect("found");
        assert_eq!(m.graph.node(id).unwrap().name.as_deref(), Some("/b/n/Mul"));
        // The rewrite is named too; a plain node path is no rewrite.
        assert_eq!(ort_rewrite(msg).as_deref(), Some("LayerNormFusion"));
        assert_eq!(
            ort_rewrite("running Add node. Name:'/b/n/Add' Status"),
            None
        );
        assert_eq!(ort_rewrite("in node (/b/conv/) is invalid"), None);
    }

    #[test]
    fn quoted_names_are_found() {
        assert_eq!(
            quoted_spans("running Concat node. Name:'concat_3' Status"),
            vec!["concat_3".to_string()]
        );
        assert_eq!(
            quoted_spans("evaluating #12 \"n3_pad\" Pad"),
            vec!["n3_pad".to_string()]
        );
        assert_eq!(
            quoted_spans("Type (tensor(int32)) of output arg (r_3) of node (Reshape_4) does not"),
            vec!["Reshape_4".to_string()]
        );
        // tract's load errors: the node first, then the quoted attribute.
        assert_eq!(
            quoted_spans(
                "load: Building node Squeeze_m0a_2 (Squeeze): Node Squeeze_m0a_2 (Squeeze): \
                 expected attribute 'axes'"
            ),
            vec!["Squeeze_m0a_2".to_string(), "axes".to_string()]
        );
    }
}
