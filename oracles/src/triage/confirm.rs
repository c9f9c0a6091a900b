//! The blame checked, not inferred: the blamed node is run without the rest of the model, fed
//! the library's own values of its inputs (what reached it in the model, not the reference's),
//! in a worker of the library started for that run. When the node alone does not show the
//! finding, the nodes producing its inputs join it, a level at a time ([`MAX_LEVELS`]): a
//! rewrite over several nodes shows only with them. A finding no such part shows is not pinned
//! on the node.
use crate::envelope::Precision;
use crate::finding::{Blame, Kind, same_failure};
use crate::localize::{ReferenceRunner, diverges};
use crate::minimize::candidate::{OutputRule, carve, constants};
use mutagraph_backends::catalog;
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Outcome, Pool};
use mutagraph_ir::graph::NodeId;
use mutagraph_ir::model::Model;
use mutagraph_ir::slice::extract;
use mutagraph_ir::tensor::Tensor;
use std::collections::{BTreeSet, HashMap};

/// How many levels of producers may join the blamed node.
pub const MAX_LEVELS: usize = 2;

/// How many of a failing node's ancestors are tried alone when it does not fail alone.
pub const MAX_ELSEWHERE: usize = 8;

/// How many of a failing node's nearest ancestors the search for where its failure starts may
/// take in ([`failing_tail`]).
pub const MAX_UPSTREAM: usize = 32;

/// The blamed node and what reached it.
#[derive(Clone, Copy)]
pub(super) struct Blamed<'a> {
    /// The model.
    pub model: &'a Model,
    /// The blamed node.
    pub node: NodeId,
    /// The library variant that showed the finding.
    pub faulty: &'a str,
    /// The model's inputs.
    pub inputs: &'a NamedValues,
    /// The library's own values of the model's intermediates (those it computed upstream).
    pub library: Option<&'a NamedValues>,
    /// Run the part in a fresh worker (else in the pool's current one).
    pub fresh: bool,
}

/// What shows the finding on a part of the model.
pub(super) enum Shows<'a> {
    /// A failure worded as this message.
    Failure(&'a str),
    /// Values of the blamed node's outputs outside the envelope of the references.
    Values {
        /// The finding's kind.
        kind: Kind,
        /// The envelope's tolerances.
        precision: &'a Precision,
        /// Whether the native-precision reference bounds the envelope too.
        native: bool,
    },
}

/// The part of the model that showed the finding (the node alone, or with its producers), with
/// the values fed to it.
pub(super) type Part = (Model, NamedValues);

/// The check's outcome: the [`Blame`] and the part that showed the finding (with
/// [`Blame::Alone`], the node and the values fed to it: a bundle's reproduction runs the node
/// on them).
pub(super) fn check(pool: &mut Pool, at: &Blamed, shows: &Shows) -> (Blame, Option<Part>) {
    let mut part: BTreeSet<NodeId> = BTreeSet::from([at.node]);
    let mut tried = 0;
    for level in 0..=MAX_LEVELS {
        let ids: Vec<NodeId> = in_order(at.model, &part);
        let Ok(single) = extract(at.model, &ids) else {
            return (
                unchecked("the part could not be cut out of the model"),
                None,
            );
        };
        let Some(feed) = feed(&single, at) else {
            return (
                unchecked("the library did not compute every value reaching the part"),
                None,
            );
        };
        tried = ids.len();
        match shown(pool, at, &single, &feed, shows) {
            Some(true) if level == 0 => return (Blame::Alone, Some((single, feed))),
            Some(true) => {
                let ops = ids
                    .iter()
                    .filter(|id| **id != at.node)
                    .filter_map(|id| Some(at.model.graph.node(*id)?.op_type.clone()))
                    .collect();
                return (Blame::WithProducers { ops }, Some((single, feed)));
            }
            Some(false) => {}
            None => return (unchecked("the part could not be run"), None),
        }
        let before = part.len();
        let producers: Vec<NodeId> = part
            .iter()
            .filter_map(|id| at.model.graph.node(*id))
            .flat_map(|n| n.present_inputs())
            .filter_map(|v| at.model.graph.producer(v))
            .collect();
        part.extend(producers);
        if part.len() == before {
            break;
        }
    }
    if let Shows::Failure(message) = shows
        && let Some(rule) = crate::triage::crash::ort_rewrite(message)
        && let Some(blame) = in_rewrite(pool, at, shows, &rule)
    {
        return (blame, None);
    }
    (Blame::NotShown { nodes: tried }, None)
}

/// A failure of a node ONNX Runtime's rewrite made (`…/n/Mul/LayerNormFusion/`): the rule
/// names the node it anchors on, which need not be the last of what it matched (LayerNorm's
/// pattern ends in an Add after the Mul), so the part is the anchor with what precedes it
/// ([`MAX_UPSTREAM`] nearest ancestors) and [`MAX_LEVELS`] levels of its consumers.
fn in_rewrite(pool: &mut Pool, at: &Blamed, shows: &Shows, rule: &str) -> Option<Blame> {
    let g = &at.model.graph;
    let mut part: BTreeSet<NodeId> = crate::triage::crash::ancestors(at.model, at.node)
        .into_iter()
        .rev()
        .take(MAX_UPSTREAM)
        .collect();
    let mut front = vec![at.node];
    part.insert(at.node);
    for _ in 0..MAX_LEVELS {
        front = front
            .iter()
            .filter_map(|id| g.node(*id))
            .flat_map(|n| n.outputs.iter().flat_map(|o| g.consumers(o)))
            .filter(|id| part.insert(*id))
            .collect();
    }
    let ids = in_order(at.model, &part);
    let single = extract(at.model, &ids).ok()?;
    let feed = feed(&single, at)?;
    (shown(pool, at, &single, &feed, shows) == Some(true)).then(|| Blame::InRewrite {
        rule: rule.to_string(),
        ops: ids
            .iter()
            .filter_map(|id| Some(g.node(*id)?.op_type.clone()))
            .collect(),
    })
}

/// When the blamed node of a failure does not fail alone: the nearest of its ancestors (at
/// most [`MAX_ELSEWHERE`]) that fails alone the way looked for, with the values fed to it.
pub(super) fn elsewhere(
    pool: &mut Pool,
    at: &Blamed,
    shows: &Shows,
) -> Option<(NodeId, NamedValues)> {
    let mut before = crate::triage::crash::ancestors(at.model, at.node);
    before.reverse();
    before.into_iter().take(MAX_ELSEWHERE).find_map(|id| {
        let one = Blamed {
            node: id,
            fresh: false,
            ..*at
        };
        let single = extract(at.model, &[id]).ok()?;
        let fed = feed(&single, &one)?;
        (shown(pool, &one, &single, &fed, shows) == Some(true)).then_some((id, fed))
    })
}

/// Where a failure that its node does not show alone starts: the smallest tail of the node's
/// ancestors (in the model's order; the nearest [`MAX_UPSTREAM`] at most) that, run with the
/// node and fed the values of `at.library` (the reference's, for a library that computed
/// none), fails the way looked for. The tail's first node is where the library goes wrong (a
/// shape it infers wrongly, a value it computes wrongly); the part is returned in order, the
/// failing node last.
pub(super) fn failing_tail(pool: &mut Pool, at: &Blamed, message: &str) -> Option<Vec<NodeId>> {
    let before = crate::triage::crash::ancestors(at.model, at.node);
    let from = before.len().saturating_sub(MAX_UPSTREAM);
    let family = catalog::family(at.faulty);
    let consts = constants(at.model);
    (from..before.len()).rev().find_map(|k| {
        let mut ids = before[k..].to_vec();
        ids.push(at.node);
        let (outcome, _) = run_part(pool, at, &consts, &ids)?;
        (!matches!(outcome, Outcome::Ok(_) | Outcome::Unsupported { .. })
            && same_failure(family, message, &outcome.detail()))
        .then_some(ids)
    })
}

/// Whether the library still fails at `at.node` the way `message` says when every value the
/// node `from` and its ancestors compute is fed from `at.library` (the reference's, rightly
/// shaped): the part between them fails on its own, so a wrong shape at `from` is not what
/// makes it fail.
pub(super) fn fails_without(pool: &mut Pool, at: &Blamed, from: NodeId, message: &str) -> bool {
    let mut upstream = crate::triage::crash::ancestors(at.model, from);
    upstream.push(from);
    let mut ids: Vec<NodeId> = crate::triage::crash::ancestors(at.model, at.node)
        .into_iter()
        .filter(|id| !upstream.contains(id))
        .collect();
    ids.push(at.node);
    let family = catalog::family(at.faulty);
    run_part(pool, at, &constants(at.model), &ids).is_some_and(|(outcome, _)| {
        !matches!(outcome, Outcome::Ok(_) | Outcome::Unsupported { .. })
            && same_failure(family, message, &outcome.detail())
    })
}

/// The library's outcome on the node `id` of `at.model` alone, fed from `at.inputs` and
/// `at.library`, with what it was fed. Values the model computes from its initializers alone
/// stay constants, as in the model (a library infers shapes from them).
pub(super) fn run_alone(
    pool: &mut Pool,
    at: &Blamed,
    id: NodeId,
) -> Option<(Outcome, NamedValues)> {
    run_part(pool, at, &constants(at.model), &[id])
}

/// The library's outcome on the part of `at.model` made of `ids` (the last one's outputs are
/// the part's), with the values the model computes from its initializers alone as constants
/// (`consts`), fed the rest from `at.inputs` and `at.library`; with what it was fed.
fn run_part(
    pool: &mut Pool,
    at: &Blamed,
    consts: &HashMap<String, Tensor>,
    ids: &[NodeId],
) -> Option<(Outcome, NamedValues)> {
    let part = carve_part(at.model, consts, ids)?;
    let fed = feed(&part, at)?;
    let run = run_as_in_the_model(pool, at, &part, &fed, false)?;
    Some((run.outcome, fed))
}

/// The library's run of `part` of `at.model` fed `feed`, as the whole model meets it. A
/// library that compiles a model again with its inputs fixed to their values (tract's
/// adapter, for shapes given as inputs: [`catalog::BackendInfo::compiles_by_value`]) would
/// fold a part whose integer inputs are values the model computes, which the model does not:
/// an int64 Gemm with alpha 2, alone and fed a graph input, folded and ran where the whole
/// model failed to compile (round 12). Such a part runs compiled from types and shapes only;
/// others in a fresh worker when `fresh`.
fn run_as_in_the_model(
    pool: &mut Pool,
    at: &Blamed,
    part: &Model,
    feed: &NamedValues,
    fresh: bool,
) -> Option<mutagraph_backends::worker::RunReport> {
    let bytes = part.to_bytes();
    let by_value = catalog::info(at.faulty).is_some_and(|b| b.compiles_by_value);
    let own: BTreeSet<&str> = at
        .model
        .graph
        .real_inputs()
        .iter()
        .filter_map(|v| v.name.as_deref())
        .collect();
    let computed_int = part.graph.real_inputs().iter().any(|v| {
        let name = v.name.as_deref().unwrap_or_default();
        !own.contains(name)
            && matches!(part.graph.value_type(name),
                mutagraph_ir::types::ValueType::Tensor(t) if t.dtype.is_int())
    });
    if by_value && computed_int {
        pool.run_typed_only(at.faulty, &bytes, feed)
    } else if fresh {
        pool.run_fresh(at.faulty, &bytes, feed)
    } else {
        pool.run(at.faulty, &bytes, feed)
    }
    .ok()
}

/// The part of `model` made of the nodes `ids` (the last one's outputs are the part's), the
/// values the model computes from its initializers alone kept as constants (`consts`), the
/// others its inputs.
pub(super) fn carve_part(
    model: &Model,
    consts: &HashMap<String, Tensor>,
    ids: &[NodeId],
) -> Option<Model> {
    let last = model.graph.node(*ids.last()?)?;
    let outputs = last
        .outputs
        .iter()
        .filter(|o| !o.is_empty())
        .cloned()
        .collect();
    let keep: BTreeSet<NodeId> = ids.iter().copied().collect();
    carve(model, consts, &keep, &[], &OutputRule::Explicit(outputs)).ok()
}

/// The blame on `rule`, a rewrite of `at.faulty`, over the ops of `part`.
fn rewrite_blame(at: &Blamed, part: &Part, rule: String) -> Blame {
    let g = &part.0.graph;
    let ops = g
        .topo_order()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|id| Some(g.node(id)?.op_type.clone()))
        .collect();
    let library = catalog::library(at.faulty).display().to_string();
    Blame::Rewrite { library, rule, ops }
}

fn unchecked(why: &str) -> Blame {
    Blame::Unchecked { why: why.into() }
}

/// `part` in the model's topological order.
fn in_order(model: &Model, part: &BTreeSet<NodeId>) -> Vec<NodeId> {
    model
        .graph
        .topo_order()
        .unwrap_or_default()
        .into_iter()
        .filter(|id| part.contains(id))
        .collect()
}

/// The values reaching `single`'s inputs: the model's inputs, else the library's own values.
fn feed(single: &Model, at: &Blamed) -> Option<NamedValues> {
    single
        .graph
        .real_inputs()
        .iter()
        .map(|vi| {
            let n = vi.name.as_deref()?;
            at.inputs
                .iter()
                .chain(at.library.into_iter().flatten())
                .find(|(k, _)| k == n)
                .cloned()
        })
        .collect()
}

/// Whether the library shows the finding on `single` fed `feed` (`None`: it could not be
/// judged: the library's worker did not start, or the reference failed on the part).
fn shown(
    pool: &mut Pool,
    at: &Blamed,
    single: &Model,
    feed: &NamedValues,
    shows: &Shows,
) -> Option<bool> {
    let run = run_as_in_the_model(pool, at, single, feed, at.fresh)?;
    judged(pool, at, (single, feed), shows, &run.outcome, &mut None)
}

/// The reference's outputs of a part (f64, and native when asked), computed once for the
/// several runs of the library judged against them ([`judged`]).
pub(super) type Expected = Option<(NamedValues, Option<NamedValues>)>;

/// Whether the library's `outcome` on `single` fed `feed` shows the finding (`None`: the
/// reference failed on the part). The reference's outputs are taken from `expected`, else
/// computed and kept there.
pub(super) fn judged(
    pool: &mut Pool,
    at: &Blamed,
    (single, feed): (&Model, &NamedValues),
    shows: &Shows,
    outcome: &Outcome,
    expected: &mut Expected,
) -> Option<bool> {
    match shows {
        Shows::Failure(message) => Some(match outcome {
            Outcome::Ok(_) | Outcome::Unsupported { .. } => false,
            o => same_failure(catalog::family(at.faulty), message, &o.detail()),
        }),
        Shows::Values {
            kind,
            precision,
            native,
        } => {
            let Outcome::Ok(got) = outcome else {
                // Failing where the model ran is another finding, not this one.
                return Some(false);
            };
            if expected.is_none() {
                let want = pool.run_reference(single, feed, false).ok()?;
                let nat = native
                    .then(|| pool.run_reference(single, feed, true).ok())
                    .flatten();
                *expected = Some((want, nat));
            }
            let (want, nat) = expected.as_ref()?;
            let node = at.model.graph.node(at.node)?;
            let of = |vals: &NamedValues| -> NamedValues {
                vals.iter()
                    .filter(|(n, _)| node.outputs.contains(n))
                    .cloned()
                    .collect()
            };
            let (want, got) = (of(want), of(got));
            if want.is_empty() || want.len() != got.len() {
                return None;
            }
            Some(diverges(
                *kind,
                &want,
                nat.as_ref().map(of).as_ref(),
                &got,
                precision,
            ))
        }
    }
}

impl super::Triage {
    /// The rewrite of the library that `part` needs to show the finding
    /// ([`rewrite::culprit`](super::rewrite::culprit)), found once per library, part structure
    /// (op types and key attributes) and finding class, then remembered.
    fn rewrite_needed(
        &mut self,
        pool: &mut Pool,
        at: &Blamed,
        part: &Part,
        shows: &Shows,
    ) -> Option<String> {
        let what = match shows {
            // A failure whose message names the rewrite it failed in needs no search: tract's
            // "Pulling Downsample over …" keys it already, whichever patch reached it.
            Shows::Failure(m)
                if crate::finding::tract_rule(m).is_some()
                    || crate::triage::crash::ort_rewrite(m).is_some() =>
            {
                return None;
            }
            Shows::Failure(m) => format!("failure:{}", crate::finding::core_message(m)),
            Shows::Values { kind, .. } => kind.name().to_string(),
        };
        let nodes: Vec<String> = part
            .0
            .graph
            .topo_order()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|id| {
                let l = crate::finding::Location::of(part.0.graph.node(id)?);
                Some(format!("{}[{}]", l.op_type, l.attrs))
            })
            .collect();
        let key = format!("{}|{what}|{}", at.faulty, nodes.join(","));
        if let Some(known) = self.memory().rewrites.get(&key) {
            return known.clone();
        }
        let found = super::rewrite::culprit(pool, at, (&part.0, &part.1), shows);
        let mut memory = self.memory();
        memory.stats.extra_runs += 1;
        memory.rewrites.insert(key, found.clone());
        found
    }

    /// Whether the variant of the library that the finding's whole model is right on (its
    /// unoptimized level) shows the finding on `part` too, for an optimizer's finding: then
    /// the part shows another fault than the optimizer's (round 13: ONNX Runtime's OneHot on
    /// float indices, wrong at both levels, was blamed for SkipLayerNormFusion's values).
    fn clean_variant_shows(
        &mut self,
        pool: &mut Pool,
        at: &Blamed,
        (model, feed): &Part,
        shows: &Shows,
        finding: &crate::finding::Finding,
    ) -> bool {
        if finding.layer != Some(crate::finding::Layer::Optimizer) {
            return false;
        }
        let Some((clean, _)) = finding.variants.iter().find(|(_, showing)| !showing) else {
            return false;
        };
        self.memory().stats.extra_runs += 1;
        let at = Blamed {
            faulty: clean,
            ..*at
        };
        shown(pool, &at, model, feed, shows) == Some(true)
    }

    /// The blame of a finding not pinned on a node (an optimizer's rewrite that exposing the
    /// intermediates undoes) when the whole `model` shows it with all of the library's rewrites
    /// and not with one left out: that rewrite, over the model's ops. Judged on the output the
    /// finding names (the first, when it names none).
    pub(super) fn check_model_rewrite(
        &mut self,
        pool: &mut Pool,
        model: &Model,
        faulty: &str,
        inputs: &NamedValues,
        shows: &Shows,
        t: &mut super::Triaged,
    ) {
        if !self.check_blame {
            return;
        }
        let output = t
            .finding
            .named_output()
            .map(String::from)
            .or_else(|| model.graph.outputs.first().and_then(|o| o.name.clone()));
        let Some(node) = output.and_then(|o| model.graph.producer(&o)) else {
            return;
        };
        let at = Blamed {
            model,
            node,
            faulty,
            inputs,
            library: None,
            fresh: true,
        };
        let part = (model.clone(), inputs.clone());
        if let Some(rule) = self.rewrite_needed(pool, &at, &part, shows) {
            t.finding.blame = Some(rewrite_blame(&at, &part, rule));
        }
    }

    /// Checks the blame of `t` (its location, a node of `at.model`) with [`check`], recording
    /// it in the finding. A numeric finding no part ending at the node shows is not pinned on
    /// it ([`Verdict::Unlocalized`](super::Verdict)); a failure keeps its place (the whole
    /// model fails), with the check saying the node alone does not.
    pub(super) fn check_blame(
        &mut self,
        pool: &mut Pool,
        at: Blamed,
        shows: &Shows,
        t: &mut super::Triaged,
    ) {
        if !self.check_blame || t.verdict != super::Verdict::Report {
            return;
        }
        let at = Blamed {
            fresh: self.fresh_blame,
            ..at
        };
        let (blame, part) = check(pool, &at, shows);
        self.memory().stats.extra_runs += 1;
        let fed = part
            .as_ref()
            .filter(|_| blame == Blame::Alone)
            .map(|(_, feed)| feed.clone());
        // A part that shows it with all of the library's rewrites and not without one of them
        // is that rewrite's finding.
        if let Some(part) = &part
            && let Some(rule) = self.rewrite_needed(pool, &at, part, shows)
        {
            t.blamed_inputs = fed;
            t.finding.blame = Some(rewrite_blame(&at, part, rule));
            return;
        }
        // An optimizer's finding: the part must be right without the optimizer, else it shows
        // another fault (a kernel's, wrong at every level) that the whole model masks; the
        // optimizer's is then looked for among the rewrites of the whole model.
        if let Some(part) = &part
            && self.clean_variant_shows(pool, &at, part, shows, &t.finding)
        {
            t.finding.blame = None;
            t.finding.location = None;
            self.check_model_rewrite(pool, at.model, at.faulty, at.inputs, shows, t);
            if t.finding.blame.is_none() {
                t.verdict = super::Verdict::Unlocalized(format!(
                    "the {} where the values first differ is wrong without the optimizer too \
                     (another fault, which the model masks), and no single rewrite of the \
                     whole model makes the difference",
                    t.finding.op_type().unwrap_or("node")
                ));
            }
            return;
        }
        // A failure its node does not show alone: the search goes on up the model, for the
        // node that fails alone the same way.
        if matches!(blame, Blame::NotShown { .. })
            && matches!(shows, Shows::Failure(_))
            && let Some((id, fed)) = elsewhere(pool, &at, shows)
            && let Some(n) = at.model.graph.node(id)
        {
            t.finding.location = Some(crate::finding::Location::of(n));
            t.blamed_inputs = Some(fed);
            t.finding.blame = Some(Blame::Alone);
            return;
        }
        let op = t.finding.op_type().unwrap_or("?").to_string();
        if matches!(blame, Blame::NotShown { .. }) && matches!(shows, Shows::Values { .. }) {
            t.verdict = super::Verdict::Unlocalized(blame.describe(&op));
        }
        t.blamed_inputs = fed;
        t.finding.blame = Some(blame);
    }
}
