//! Delta debugging over ONNX graphs. Given a model that shows a bug and an interestingness
//! predicate (true: the same bug is still there; each call runs backends, so calls are
//! counted and budgeted), the passes below shrink the model while the predicate holds. Every
//! candidate is validated (inference + `validate`) before the predicate sees it.
//!
//! Passes, repeated while one of them makes progress:
//! 1. **focus**: the blamed node alone ([`crate::localize::extract`]), then with its producers
//!    one and two hops up;
//! 2. **suffix**: a single graph output, the earliest one (by bisection over topological
//!    positions, as `polygraphy debug reduce` does) that keeps the bug;
//! 3. **cut** (ddmin): remove chunks of nodes (halves, quarters, ... single nodes); values the
//!    removed nodes produced and the kept ones read become graph inputs;
//! 4. **bypass**: a node's readers read one of its inputs of the same type instead.
use crate::localize::extract;
use mutagraph_ir::graph::NodeId;
use mutagraph_ir::model::Model;
use mutagraph_ir::patch::{Patch, PatchOp};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Budgets and hints.
#[derive(Clone, Debug)]
pub struct Options {
    /// Predicate calls at most.
    pub max_checks: usize,
    /// Wall time at most.
    pub time_limit: Option<Duration>,
    /// A value produced by the node a localizer blamed: its neighbourhood is tried first.
    pub focus: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_checks: 500,
            time_limit: None,
            focus: None,
        }
    }
}

/// One pass's work.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassStat {
    /// Pass name.
    pub name: String,
    /// Predicate calls.
    pub checks: usize,
    /// Nodes removed.
    pub removed: usize,
}

/// What minimization did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Main-graph nodes before.
    pub nodes_before: usize,
    /// Main-graph nodes after.
    pub nodes_after: usize,
    /// Predicate calls.
    pub checks: usize,
    /// Candidates that failed validation (never given to the predicate).
    pub invalid_candidates: usize,
    /// Wall time, seconds.
    pub wall_s: f64,
    /// Per pass.
    pub passes: Vec<PassStat>,
}

/// Why minimization could not start.
#[derive(Debug, thiserror::Error)]
pub enum MinimizeError {
    /// The graph has a cycle or a dangling reference.
    #[error("the model cannot be minimized: {0}")]
    Model(String),
}

struct Search<'a> {
    opts: &'a Options,
    pred: &'a mut dyn FnMut(&Model) -> bool,
    report: Report,
    started: Instant,
}

impl Search<'_> {
    fn out_of_budget(&self) -> bool {
        self.report.checks >= self.opts.max_checks
            || self
                .opts
                .time_limit
                .is_some_and(|l| self.started.elapsed() >= l)
    }

    /// Validates then asks the predicate.
    fn try_model(&mut self, m: Option<Model>, pass: usize) -> Option<Model> {
        let m = m?;
        if self.out_of_budget() {
            return None;
        }
        if mutagraph_ir::validate::validate(&m).is_err() || m.graph.node_count() == 0 {
            self.report.invalid_candidates += 1;
            return None;
        }
        self.report.checks += 1;
        self.report.passes[pass].checks += 1;
        (self.pred)(&m).then_some(m)
    }
}

/// The model restricted to `keep` (by id), cut as [`extract`] does.
fn keep_nodes(model: &Model, keep: &[NodeId]) -> Option<Model> {
    if keep.is_empty() {
        return None;
    }
    extract(model, keep).ok()
}

/// The nodes that the graph output `value` depends on.
fn ancestors(model: &Model, value: &str) -> Vec<NodeId> {
    let producers = model.graph.producers();
    let mut seen = HashSet::new();
    let mut stack = vec![value.to_string()];
    let mut out = Vec::new();
    while let Some(v) = stack.pop() {
        if let Some((id, _)) = producers.get(v.as_str())
            && seen.insert(*id)
        {
            out.push(*id);
            let n = model.graph.node(*id).expect("a producer");
            stack.extend(n.present_inputs().map(String::from));
        }
    }
    out
}

fn with_single_output(model: &Model, value: &str) -> Option<Model> {
    let keep = ancestors(model, value);
    let mut m = keep_nodes(model, &keep)?;
    let vi = m
        .graph
        .outputs
        .iter()
        .find(|o| o.name.as_deref() == Some(value))
        .cloned()
        .or_else(|| {
            let ty = m.graph.value_type(value);
            Some(mutagraph_ir::pb::ValueInfoProto {
                name: Some(value.to_string()),
                r#type: Some(ty.to_proto()),
                ..Default::default()
            })
        })?;
    m.graph.outputs = vec![vi];
    let ids: Vec<NodeId> = m.graph.node_ids();
    keep_nodes(&m, &ids)
}

/// Minimizes `model` while `interesting` holds.
pub fn minimize(
    model: &Model,
    opts: &Options,
    interesting: &mut dyn FnMut(&Model) -> bool,
) -> Result<(Model, Report), MinimizeError> {
    let order = model
        .graph
        .topo_order()
        .map_err(|e| MinimizeError::Model(e.to_string()))?;
    let mut s = Search {
        opts,
        pred: interesting,
        report: Report {
            nodes_before: order.len(),
            passes: ["focus", "suffix", "cut", "bypass"]
                .iter()
                .map(|n| PassStat {
                    name: n.to_string(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        },
        started: Instant::now(),
    };
    let mut best = model.clone();
    let count = |m: &Model| m.graph.node_count();

    // 1. Focus.
    if let Some(v) = &opts.focus
        && let Some((id, _)) = best.graph.producers().get(v.as_str()).copied()
    {
        let mut ring = vec![id];
        for _ in 0..3 {
            let before = count(&best);
            if let Some(m) = s.try_model(keep_nodes(&best, &ring), 0) {
                s.report.passes[0].removed += before - count(&m);
                best = m;
                break;
            }
            let producers = best.graph.producers();
            let mut grown = ring.clone();
            for r in &ring {
                if let Some(n) = best.graph.node(*r) {
                    for i in n.present_inputs() {
                        if let Some((p, _)) = producers.get(i)
                            && !grown.contains(p)
                        {
                            grown.push(*p);
                        }
                    }
                }
            }
            if grown.len() == ring.len() {
                break;
            }
            ring = grown;
        }
    }

    loop {
        let start = count(&best);
        // 2. Suffix: the earliest single output that keeps the bug (bisection, then the
        // graph's own outputs).
        if let Ok(order) = best.graph.topo_order() {
            let values: Vec<String> = order
                .iter()
                .filter_map(|id| best.graph.node(*id))
                .filter_map(|n| n.outputs.iter().find(|o| !o.is_empty()).cloned())
                .collect();
            let (mut lo, mut hi) = (0usize, values.len());
            let mut found: Option<Model> = None;
            while lo < hi && !s.out_of_budget() {
                let mid = (lo + hi) / 2;
                match s.try_model(with_single_output(&best, &values[mid]), 1) {
                    Some(m) => {
                        found = Some(m);
                        hi = mid;
                    }
                    None => lo = mid + 1,
                }
            }
            if let Some(m) = found
                && count(&m) < count(&best)
            {
                s.report.passes[1].removed += count(&best) - count(&m);
                best = m;
            }
        }
        // 3. Cut (ddmin over nodes).
        let mut chunk = count(&best).div_ceil(2).max(1);
        while chunk >= 1 && !s.out_of_budget() {
            let ids = match best.graph.topo_order() {
                Ok(o) => o,
                Err(_) => break,
            };
            let mut progressed = false;
            let mut i = 0;
            while i < ids.len() && !s.out_of_budget() {
                let cut: HashSet<NodeId> =
                    ids[i..(i + chunk).min(ids.len())].iter().copied().collect();
                let keep: Vec<NodeId> = ids.iter().copied().filter(|x| !cut.contains(x)).collect();
                let before = count(&best);
                if let Some(m) = s.try_model(keep_nodes(&best, &keep), 2) {
                    s.report.passes[2].removed += before - count(&m);
                    best = m;
                    progressed = true;
                    break;
                }
                i += chunk;
            }
            if !progressed {
                if chunk == 1 {
                    break;
                }
                chunk = chunk.div_ceil(2);
            } else {
                chunk = chunk.min(count(&best).div_ceil(2)).max(1);
            }
        }
        // 4. Bypass.
        if let Ok(ids) = best.graph.topo_order() {
            for id in ids {
                if s.out_of_budget() || best.graph.node(id).is_none() {
                    continue;
                }
                let n = best.graph.node(id).expect("checked").clone();
                let Some(out) = n.outputs.first().filter(|o| !o.is_empty()) else {
                    continue;
                };
                let ty = best.graph.value_type(out);
                let Some(src) = n
                    .present_inputs()
                    .find(|i| best.graph.value_type(i) == ty)
                    .map(String::from)
                else {
                    continue;
                };
                if best
                    .graph
                    .outputs
                    .iter()
                    .any(|o| o.name.as_deref() == Some(out))
                {
                    continue;
                }
                let mut p = Patch::new();
                p.push(PatchOp::ReplaceUses {
                    old: out.clone(),
                    new: src,
                });
                p.push(PatchOp::RemoveNode(id));
                let mut m = best.clone();
                let cand = m.apply(&p).ok().and_then(|_| {
                    let ids = m.graph.node_ids();
                    keep_nodes(&m, &ids)
                });
                let before = count(&best);
                if let Some(m) = s.try_model(cand, 3) {
                    s.report.passes[3].removed += before - count(&m);
                    best = m;
                }
            }
        }
        if count(&best) >= start || s.out_of_budget() {
            break;
        }
    }
    s.report.nodes_after = count(&best);
    s.report.wall_s = s.started.elapsed().as_secs_f64();
    Ok((best, s.report))
}
