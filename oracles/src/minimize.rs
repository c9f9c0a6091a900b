//! Test-case minimization: delta debugging over ONNX graphs.
//!
//! Given a model that shows a bug and an *interestingness* predicate (true: the model still
//! shows the same bug), [`minimize`] searches for a much smaller model the predicate still
//! accepts. The predicate is assumed expensive (it runs backends), so the search counts its
//! calls against [`Options::max_checks`], never calls it twice on the same model (candidates
//! are cached by their exported bytes), and never calls it on an invalid model: every
//! candidate goes through shape inference and [`validate::check`] first, and the invalid
//! ones are only counted ([`Report::invalid_candidates`]).
//!
//! Candidates are *sub-models* of the current model: a set of kept nodes whose values read
//! from removed nodes become constant initializers (when the value is a known constant) or
//! graph inputs typed by inference, with unused inputs and initializers dropped and dead nodes
//! (no graph output depends on them) eliminated. Header fields, opset imports and what the IR
//! keeps verbatim are kept. The search is greedy and deterministic; its passes, in order:
//!
//! 0. **dead-code**: nodes no output depends on are dropped (every candidate drops them); if
//!    that loses the bug, their unread outputs become graph outputs instead.
//! 1. **focus** (with [`Options::focus`]): the node producing the blamed value alone, then
//!    with one, then two hops of its producers.
//! 2. **outputs**: ddmin over the graph outputs (fewer outputs, then dead code removed).
//! 3. **cut**: bisection over topological positions for the shortest interesting prefix
//!    (values the cut suffix read become outputs), then for the shortest suffix (values the
//!    cut prefix produced become inputs), then ddmin over nodes (remove halves, quarters, …
//!    down to single nodes; values produced by a kept node and read by a removed one become
//!    outputs, values read from a removed node become inputs).
//! 4. **bypass**: a node is replaced by one of its inputs of the same type as its output.
//!
//! Passes 2-4 repeat until none makes progress; then
//!
//! 5. **shrink-shapes**: graph input dims > 1 become 1, else half (all dims of one size
//!    together first, then one at a time), when the model still validates.
//! 6. **simplify-weights**: float initializers become constant tensors of the same shape
//!    (1.0, else 0.5; all at once first, then one at a time).
//!
//! The budget ([`Options::max_checks`], [`Options::time_limit`]) is checked before every
//! predicate call; when it runs out the smallest interesting model found so far is returned.
pub(crate) mod candidate;
mod passes;

use crate::ir::{Model, validate};
use candidate::{constants, finalize};
use mutagraph_ir::tensor::Tensor;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

/// Settings of a minimization.
#[derive(Clone, Debug)]
pub struct Options {
    /// Most predicate calls (the initial check included).
    pub max_checks: usize,
    /// Wall-clock budget, checked before each predicate call.
    pub time_limit: Option<Duration>,
    /// A value name, the output of the node a localizer blamed: its small neighbourhood is
    /// tried first.
    pub focus: Option<String>,
    /// Check that the input model is interesting before searching (one predicate call); when
    /// off, the caller vouches for it.
    pub check_initial: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_checks: 500,
            time_limit: None,
            focus: None,
            check_initial: true,
        }
    }
}

/// What one pass did, summed over its runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassStat {
    /// Pass name (`dead-code`, `focus`, `outputs`, `cut-suffix`, `cut-prefix`, `cut-ddmin`, `bypass`,
    /// `shrink-shapes`, `simplify-weights`).
    pub name: String,
    /// How many times the pass ran.
    pub runs: usize,
    /// Predicate calls it made.
    pub checks: usize,
    /// Candidates it built that were invalid (not shown to the predicate).
    pub invalid_candidates: usize,
    /// Candidates it kept (interesting ones).
    pub accepted: usize,
    /// Main-graph nodes it removed.
    pub nodes_removed: usize,
}

/// Why the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// No pass makes progress any more.
    FixedPoint,
    /// [`Options::max_checks`] predicate calls were made.
    CheckBudget,
    /// [`Options::time_limit`] ran out.
    TimeLimit,
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stop::FixedPoint => "fixed point",
            Stop::CheckBudget => "check budget spent",
            Stop::TimeLimit => "time limit",
        })
    }
}

/// What a minimization did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Main-graph nodes of the input model.
    pub nodes_before: usize,
    /// Main-graph nodes of the result.
    pub nodes_after: usize,
    /// Predicate calls (the initial check included).
    pub checks: usize,
    /// Candidates rejected by inference or validation (never shown to the predicate).
    pub invalid_candidates: usize,
    /// Candidates already judged (answered from the cache, not counted as checks).
    pub cache_hits: usize,
    /// Wall time of the whole search, in seconds.
    pub wall_s: f64,
    /// Why the search ended.
    pub stop: Stop,
    /// Per pass, in the order they first ran.
    pub passes: Vec<PassStat>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nodes {} -> {} in {} checks ({} invalid candidates, {} cache hits, {:.2} s, {})",
            self.nodes_before,
            self.nodes_after,
            self.checks,
            self.invalid_candidates,
            self.cache_hits,
            self.wall_s,
            self.stop
        )?;
        for p in &self.passes {
            write!(
                f,
                "\n  {}: {} runs, {} checks, {} invalid, {} accepted, {} nodes removed",
                p.name, p.runs, p.checks, p.invalid_candidates, p.accepted, p.nodes_removed
            )?;
        }
        Ok(())
    }
}

/// Why a model cannot be minimized.
#[derive(Debug, thiserror::Error)]
pub enum MinimizeError {
    /// The input model fails validation.
    #[error("the model to minimize is invalid: {0}")]
    InvalidModel(String),
    /// The predicate rejects the input model itself.
    #[error("the model to minimize is not interesting (the predicate rejects it)")]
    NotInteresting,
    /// [`Options::focus`] names no value of the model.
    #[error("focus value '{0}' is not defined in the model")]
    UnknownFocus(String),
}

/// Minimizes `model` while `interesting` holds; see the module documentation. Returns the
/// smallest interesting model found (the input itself when nothing smaller is) and a report.
pub fn minimize(
    model: &Model,
    opts: &Options,
    interesting: &mut dyn FnMut(&Model) -> bool,
) -> Result<(Model, Report), MinimizeError> {
    let start = Instant::now();
    let diags = validate::check(model);
    if !diags.errors.is_empty() {
        return Err(MinimizeError::InvalidModel(diags.errors.join("; ")));
    }
    let cur = finalize(model.clone(), model).map_err(|e| MinimizeError::InvalidModel(e.0))?;
    if let Some(f) = &opts.focus
        && !cur.graph.defined_values().contains(f)
    {
        return Err(MinimizeError::UnknownFocus(f.clone()));
    }
    let mut s = Search {
        pred: interesting,
        max_checks: opts.max_checks,
        deadline: opts.time_limit.map(|d| start + d),
        checks: 0,
        invalid: 0,
        cache_hits: 0,
        cache: HashMap::new(),
        consts: constants(&cur),
        cur,
        stop: None,
        stats: Vec::new(),
        pass: 0,
    };
    s.cache.insert(key(&s.cur), true);
    if opts.check_initial && s.budget_left() {
        s.checks += 1;
        if !(s.pred)(&s.cur) {
            return Err(MinimizeError::NotInteresting);
        }
    }
    if s.stop.is_none() {
        s.run(opts.focus.as_deref());
    }
    let report = Report {
        nodes_before: model.graph.node_count(),
        nodes_after: s.cur.graph.node_count(),
        checks: s.checks,
        invalid_candidates: s.invalid,
        cache_hits: s.cache_hits,
        wall_s: start.elapsed().as_secs_f64(),
        stop: s.stop.unwrap_or(Stop::FixedPoint),
        passes: s.stats,
    };
    Ok((s.cur, report))
}

/// The cache key of a model: a hash of its exported bytes (deterministic: SipHash with fixed
/// keys).
fn key(m: &Model) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    m.to_bytes().hash(&mut h);
    h.finish()
}

/// The state of a search.
struct Search<'p> {
    pred: &'p mut dyn FnMut(&Model) -> bool,
    max_checks: usize,
    deadline: Option<Instant>,
    checks: usize,
    invalid: usize,
    cache_hits: usize,
    /// Verdicts by model key.
    cache: HashMap<u64, bool>,
    /// The smallest interesting model so far (valid, inferred).
    cur: Model,
    /// Constant node outputs of `cur`.
    consts: HashMap<String, Tensor>,
    stop: Option<Stop>,
    stats: Vec<PassStat>,
    /// Index in `stats` of the running pass.
    pass: usize,
}

impl Search<'_> {
    /// Whether another predicate call fits the budget (records why not).
    fn budget_left(&mut self) -> bool {
        if self.stop.is_some() {
            return false;
        }
        if self.checks >= self.max_checks {
            self.stop = Some(Stop::CheckBudget);
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stop = Some(Stop::TimeLimit);
        }
        self.stop.is_none()
    }

    /// Starts (or resumes) the statistics of a pass.
    fn begin(&mut self, name: &str) {
        self.pass = match self.stats.iter().position(|p| p.name == name) {
            Some(i) => i,
            None => {
                self.stats.push(PassStat {
                    name: name.to_string(),
                    ..Default::default()
                });
                self.stats.len() - 1
            }
        };
        self.stats[self.pass].runs += 1;
    }

    /// Judges a candidate; an interesting one becomes the current model. Invalid candidates
    /// and candidates judged before (or equal to the current model) are not shown to the
    /// predicate, and neither is anything once the budget is spent.
    fn try_candidate(&mut self, cand: Result<Model, candidate::Invalid>) -> bool {
        if self.stop.is_some() {
            return false;
        }
        let m = match cand {
            Ok(m) => m,
            Err(_) => {
                self.invalid += 1;
                self.stats[self.pass].invalid_candidates += 1;
                return false;
            }
        };
        let k = key(&m);
        if self.cache.contains_key(&k) {
            self.cache_hits += 1;
            return false;
        }
        if !self.budget_left() {
            return false;
        }
        self.checks += 1;
        self.stats[self.pass].checks += 1;
        let verdict = (self.pred)(&m);
        self.cache.insert(k, verdict);
        if verdict {
            let st = &mut self.stats[self.pass];
            st.accepted += 1;
            st.nodes_removed += self
                .cur
                .graph
                .node_count()
                .saturating_sub(m.graph.node_count());
            self.consts = constants(&m);
            self.cur = m;
        }
        verdict
    }

    /// The whole search.
    fn run(&mut self, focus: Option<&str>) {
        self.begin("dead-code");
        self.dead_code();
        if let Some(f) = focus {
            self.begin("focus");
            self.focus(f);
        }
        let total = |s: &Self| s.stats.iter().map(|p| p.accepted).sum::<usize>();
        let mut round = 0;
        while self.stop.is_none() {
            self.begin("outputs");
            self.outputs();
            if round == 0 {
                self.begin("cut-suffix");
                self.cut_suffix();
                self.begin("cut-prefix");
                self.cut_prefix();
            }
            self.begin("cut-ddmin");
            self.cut_ddmin();
            // The node set is now 1-minimal for removals; another round only when pruning
            // outputs or bypassing changed the model since.
            let after_cut = total(self);
            self.begin("outputs");
            self.outputs();
            self.begin("bypass");
            self.bypass();
            round += 1;
            if total(self) == after_cut {
                break;
            }
        }
        if self.stop.is_none() {
            self.begin("shrink-shapes");
            self.shrink_shapes();
        }
        if self.stop.is_none() {
            self.begin("simplify-weights");
            self.simplify_weights();
        }
    }
}
