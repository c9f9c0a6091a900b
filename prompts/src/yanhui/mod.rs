//! YANHUI: knowledge-aware generation from historical bug cases.
//!
//! - [`kb`]: the knowledge base (a starter set shipped as data, plus our own findings), each
//!   case decomposed into model definition / API / input data and summarized as exception
//!   type, location and reason.
//! - Distance (YANHUI §3.4): category (0 same, 1 different) + API path distance (levels of
//!   difference after the common prefix of two dotted paths, matched API by API) + type
//!   distance (1 per differing level of the exception and data-type hierarchies, compared from
//!   the leaves up until they meet); clustering with threshold [`THRESHOLD`].
//! - Generation prompts with 2-5 examples of one cluster and the six mutation rules.
pub mod kb;

pub use kb::{Case, KbError, KnowledgeBase};

use crate::llm::Message;
use crate::template::{self, TemplateError, Vars};
use serde::{Deserialize, Serialize};

/// YANHUI's clustering threshold.
pub const THRESHOLD: u32 = 6;

/// The opset of generated models.
pub const OPSET: i64 = 17;

/// Levels of difference between two dotted paths after their common prefix (the longer
/// remainder): `torch.ao.quantization.experimental` vs `torch.jit` is 3.
pub fn path_distance(a: &str, b: &str) -> u32 {
    let pa: Vec<&str> = a.split(['.', '/']).filter(|s| !s.is_empty()).collect();
    let pb: Vec<&str> = b.split(['.', '/']).filter(|s| !s.is_empty()).collect();
    let common = pa.iter().zip(&pb).take_while(|(x, y)| x == y).count();
    (pa.len() - common).max(pb.len() - common) as u32
}

/// Distance of two sets of API paths: each API of one side matched with its nearest on the
/// other, summed, the larger of the two directions.
pub fn api_distance(a: &[String], b: &[String]) -> u32 {
    let directed = |x: &[String], y: &[String]| -> u32 {
        x.iter()
            .map(|p| y.iter().map(|q| path_distance(p, q)).min().unwrap_or(0))
            .sum()
    };
    if a.is_empty() || b.is_empty() {
        return (a.len().max(b.len())) as u32;
    }
    directed(a, b).max(directed(b, a))
}

/// Type-hierarchy distance of two paths written root first (`RuntimeError/ShapeError`): from
/// the leaves up, 1 for each level where the types differ, until they meet or one has no
/// parent left.
pub fn type_distance(a: &str, b: &str) -> u32 {
    let pa: Vec<&str> = a.split('/').filter(|s| !s.is_empty()).collect();
    let pb: Vec<&str> = b.split('/').filter(|s| !s.is_empty()).collect();
    let mut d = 0;
    for (x, y) in pa.iter().rev().zip(pb.iter().rev()) {
        if x == y {
            return d;
        }
        d += 1;
    }
    d
}

fn types_distance(a: &[String], b: &[String]) -> u32 {
    let directed = |x: &[String], y: &[String]| -> u32 {
        x.iter()
            .map(|p| y.iter().map(|q| type_distance(p, q)).min().unwrap_or(1))
            .sum()
    };
    directed(a, b).max(directed(b, a))
}

/// YANHUI's distance between two cases.
pub fn distance(a: &Case, b: &Case) -> u32 {
    let cat = u32::from(a.category != b.category);
    cat + api_distance(&a.apis, &b.apis)
        + type_distance(&a.exception, &b.exception)
        + types_distance(&a.dtypes, &b.dtypes)
}

/// A cluster of cases.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// Stable id: `c-` and the first member's id.
    pub id: String,
    /// Member case ids, in knowledge-base order.
    pub members: Vec<String>,
}

/// Complete-linkage clustering: cases in knowledge-base order join the first cluster whose
/// every member is within `threshold`; deterministic.
pub fn cluster(kb: &KnowledgeBase, threshold: u32) -> Vec<Cluster> {
    let cases = kb.cases();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|g| g.iter().all(|&j| distance(c, &cases[j]) <= threshold))
        {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
        .into_iter()
        .map(|g| Cluster {
            id: format!("c-{}", cases[g[0]].id),
            members: g.iter().map(|&i| cases[i].id.clone()).collect(),
        })
        .collect()
}

/// The six mutation rules of YANHUI (§3.5), for ONNX models.
pub const RULES: [&str; 6] = [
    "Model definition: replace or add ops next to the one in the examples (another op of the \
     same family, or an op the backends handle through a different code path), keeping the \
     graph valid.",
    "Optimization API: build the pattern that a graph optimizer rewrites (Conv followed by \
     BatchNormalization, MatMul followed by Add, a Transpose next to a Reshape, chains of \
     Casts), so that the optimized and the plain execution can differ.",
    "Input data: use shapes and values at the edge: zero-sized or size-1 dimensions, very \
     large or very small magnitudes, negative values, NaN and infinities (in an initializer \
     with literal values), other element types (float16, double, int32, int8, bool).",
    "Triggered exception: aim at a different failure than the examples (a shape error, an \
     index out of range, an unsupported type, a division by zero).",
    "Bug location: exercise the same kind of mistake in a similar component (another kernel \
     of the same family, shape inference instead of the kernel, another attribute).",
    "Bug reason: reproduce the root cause of the examples in a new way rather than copying \
     their models.",
];

fn clip_model(text: &str) -> String {
    const MAX: usize = 40;
    let lines: Vec<&str> = text.trim().lines().collect();
    if lines.len() <= MAX {
        return text.trim().to_string();
    }
    format!(
        "{}\n# ... {} more lines",
        lines[..MAX].join("\n"),
        lines.len() - MAX
    )
}

/// One example as the prompt shows it.
pub fn render_example(i: usize, c: &Case) -> String {
    let mut s = format!("### Example {i}: {} ({})\n", c.title, c.project);
    if !c.model.trim().is_empty() {
        s += &format!("Model:\n```onnx\n{}\n```\n", clip_model(&c.model));
    }
    s += &format!("API: {}\n", c.apis.join(", "));
    if !c.input.is_empty() {
        s += &format!("Input data: {}\n", c.input);
    }
    s += &format!(
        "Summary: exception {}; location {}; reason: {}.\n",
        c.exception, c.location, c.reason
    );
    s
}

/// The examples of a cluster for one prompt: `n` of them (2..=5, at most the cluster's size),
/// chosen by `seed` (a rotation of the member list, so that different seeds lead with
/// different cases).
pub fn pick_examples<'k>(
    cluster: &Cluster,
    kb: &'k KnowledgeBase,
    n: usize,
    seed: u64,
) -> Vec<&'k Case> {
    let members: Vec<&Case> = cluster.members.iter().filter_map(|m| kb.get(m)).collect();
    if members.is_empty() {
        return Vec::new();
    }
    let n = n.clamp(2, 5).min(members.len());
    let start = (seed % members.len() as u64) as usize;
    (0..n)
        .map(|i| members[(start + i) % members.len()])
        .collect()
}

/// The generation prompt for one cluster.
pub fn generate_prompt(
    cluster: &Cluster,
    kb: &KnowledgeBase,
    n_examples: usize,
    seed: u64,
) -> Result<Vec<Message>, TemplateError> {
    let ex = pick_examples(cluster, kb, n_examples, seed);
    let mut v = Vars::new();
    v.insert("opset".into(), OPSET.to_string());
    let system = template::get("yanhui-system")?.render(&v)?;
    v.insert(
        "examples".into(),
        ex.iter()
            .enumerate()
            .map(|(i, c)| render_example(i + 1, c))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    v.insert(
        "rules".into(),
        RULES
            .iter()
            .enumerate()
            .map(|(i, r)| format!("{}. {r}", i + 1))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    v.insert("n".into(), ex.len().to_string());
    let user = template::get("yanhui-generate")?.render(&v)?;
    Ok(vec![
        Message::system(system.trim().to_string()),
        Message::user(user.trim().to_string()),
    ])
}

/// The ops a cluster is about: the `onnx.*` APIs of its members (last path component).
pub fn cluster_ops(cluster: &Cluster, kb: &KnowledgeBase) -> Vec<String> {
    let mut ops: Vec<String> = cluster
        .members
        .iter()
        .filter_map(|m| kb.get(m))
        .flat_map(|c| c.apis.iter())
        .filter(|a| a.starts_with("onnx."))
        .filter_map(|a| a.rsplit('.').next().map(String::from))
        .collect();
    ops.sort();
    ops.dedup();
    ops
}

/// The grammar task of a generation from `cluster_ops`: a model holding one of them that
/// the grammar gives (at [`OPSET`]), able to write the special values the mutation rules ask
/// for (NaN, infinities, huge and tiny numbers) in literal initializers. `None` when none has
/// a grammar.
pub fn generation_task(cluster_ops: &[String]) -> Option<crate::grammar::onnx_text::Task> {
    let supported = crate::grammar::onnx_text::supported_ops(OPSET);
    let ops: Vec<String> = cluster_ops
        .iter()
        .filter(|o| supported.contains(&o.as_str()))
        .cloned()
        .collect();
    (!ops.is_empty()).then(|| crate::grammar::onnx_text::Task {
        ops,
        opset: OPSET,
        require_literal: false,
        literals: [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e30,
            -1e30,
            1e-30,
        ]
        .into_iter()
        .map(crate::grammar::onnx_text::Literal::Float)
        .chain([crate::grammar::onnx_text::Literal::Int(-1)])
        .collect(),
        fenced: true,
    })
}

/// YANHUI's relevant output (§4, "Evaluation metrics"): valid code that tests what the
/// examples are about, there "the model and input are created and the optimization API is
/// applied to the model". An ONNX model always creates its model and inputs, and what the
/// examples are about is the cluster's ops ([`cluster_ops`]), so here: `valid` (the caller's
/// judgement; the engine's is that the graph validates, its declared types included, and at
/// least one backend runs it) and the graph (its node `op_types`) holds one of the cluster's
/// ops. Unlike the paper's, this needs no reading of the code by hand, and it does not ask
/// that an optimizer be applied (every backend under test optimizes as it loads).
pub fn relevant(cluster_ops: &[String], valid: bool, op_types: &[String]) -> bool {
    valid && op_types.iter().any(|o| cluster_ops.contains(o))
}

/// What a case is built from, of one of our findings (its bug bundle's `meta.json`, which the
/// campaign's bundle module reads: this crate never parses it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FindingFacts {
    /// The bundle's id.
    pub id: String,
    /// The finding's kind (`crash`, `nan`, `inconsistency`, ...).
    pub kind: String,
    /// The library that shows it, as the shipped cases name projects (`onnxruntime`,
    /// `tract`, `burn`).
    pub project: String,
    /// The backends that show it.
    pub backends: Vec<String>,
    /// Where it failed (`load`, `run`), lower case; empty: at run time.
    pub stage: String,
    /// The op it is localized at, when it is.
    pub op_type: Option<String>,
    /// The symptom (`panic`, `all`, ...).
    pub symptom: String,
    /// The backend's message, or the oracle's.
    pub message: String,
    /// How often it was met.
    pub hits: u64,
}

/// A finding that does not describe a case ([`case_from_finding`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FindingError {
    /// A field every finding has is empty.
    #[error("the finding has no {0}")]
    MissingField(&'static str),
}

/// A case from one of our findings (kind, library, backends, stage, localized op, symptom,
/// message) and the text of its model.
pub fn case_from_finding(f: &FindingFacts, model: Option<&str>) -> Result<Case, FindingError> {
    if f.id.is_empty() {
        return Err(FindingError::MissingField("id"));
    }
    if f.kind.is_empty() {
        return Err(FindingError::MissingField("kind"));
    }
    let (id, kind) = (f.id.as_str(), f.kind.as_str());
    let backend = f.backends.first().map_or("unknown", String::as_str);
    let project = if f.project.is_empty() {
        "unknown"
    } else {
        f.project.as_str()
    };
    let stage = if f.stage.is_empty() {
        "run".to_string()
    } else {
        f.stage.to_lowercase()
    };
    let category = match kind {
        "crash" | "hang" | "memory" => "memory-or-crash",
        "nan" | "inconsistency" | "flaky" => "numerical-precision",
        "slow" => "performance",
        _ => "incorrect-optimization",
    };
    let exception = match kind {
        "crash" if f.symptom == "panic" => "Panic/BackendPanic".to_string(),
        "crash" => format!("RuntimeError/{stage}-error"),
        "nan" => "Mismatch/NaNMismatch".into(),
        "inconsistency" => "Mismatch/NumericMismatch".into(),
        "hang" => "Timeout/Hang".into(),
        other => format!("Finding/{other}"),
    };
    let mut apis = Vec::new();
    if let Some(op) = &f.op_type {
        apis.push(format!("onnx.op.{op}"));
    }
    apis.push(format!("{project}.{stage}"));
    Ok(Case {
        id: format!("finding-{id}"),
        project: project.to_string(),
        source: format!("mutagraph finding {id} ({} hits)", f.hits),
        title: format!(
            "{kind} on {} at {stage}{}",
            f.backends.join(", "),
            f.op_type
                .as_ref()
                .map(|o| format!(" in {o}"))
                .unwrap_or_default()
        ),
        category: category.into(),
        apis,
        exception,
        dtypes: Vec::new(),
        location: format!("{backend}.{stage}"),
        reason: f.message.chars().take(300).collect(),
        model: model.unwrap_or("").to_string(),
        input: String::new(),
    })
}

/// Ids of the clusters with at least `min` members, in order.
pub fn usable(clusters: &[Cluster], min: usize) -> Vec<&Cluster> {
    clusters.iter().filter(|c| c.members.len() >= min).collect()
}
