//! Steps 3 and 4 for failures (crash, hang, memory): the witnesses, the node the library
//! failed on, and a wrongly shaped value upstream of it.

use super::confirm::{self, Blamed, Shows};
use super::{Cache, Triage, Triaged, Verdict, crash, plain};
use crate::MutantRuns;
use crate::checks::crash_symptom;
use crate::finding::{Blame, Finding, Kind, Layer, Location};
use mutagraph_backends::catalog;
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Outcome, Pool};
use mutagraph_ir::graph::NodeId;
use mutagraph_ir::model::Model;

/// The failure being placed: the model, its inputs and the library variant that failed.
#[derive(Clone, Copy)]
struct Failed<'a> {
    model: &'a Model,
    inputs: &'a NamedValues,
    faulty: &'a str,
}

impl Triage {
    /// A failure's verdict ([`Triage::place_failure`]), and then a limit the library words in
    /// the message it fails with where the triage placed it: the node alone may fail otherwise
    /// than the whole model did (round 14: tract stopped first at a bool Pad; the Compress it
    /// placed says "can not be typed", a limit).
    pub(super) fn triage_failure(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        runs: &MutantRuns,
        f: Finding,
    ) -> Triaged {
        let mut t = self.place_failure(pool, cache, runs, f);
        declared_where_placed(&mut t);
        t
    }

    /// A failure's verdict, placed on the node that fails that way and its blame checked.
    fn place_failure(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        runs: &MutantRuns,
        mut f: Finding,
    ) -> Triaged {
        let faulty = f.backends[0].clone();
        let library = catalog::library(&faulty);
        let unsupported = self.variants(pool, cache, runs, &mut f);
        if f.kind == Kind::Crash
            && f.layer.is_none()
            && let Some(why) = unsupported
        {
            return plain(
                f,
                Verdict::Unsupported(format!(
                    "the unoptimized level does not implement the model ({why})"
                )),
            );
        }
        f.witnesses = self.witnesses(pool, cache, runs, &faulty);
        let mut t = plain(f, Verdict::Report);
        if t.finding.witnesses.is_empty() {
            t.verdict = Verdict::Unwitnessed(
                "no other implementation runs the model at its unoptimized level".into(),
            );
            return t;
        }
        if t.finding.kind != Kind::Crash {
            return t;
        }
        t.finding.gap = crash::dtype_gap(library, &t.finding.message);
        if t.finding.optimizer_pass().is_some() {
            // The worker died applying a pass of the optimizer, before any node ran: the pass
            // is the place (a node found by running parts of the model would be a guess).
            return t;
        }
        let Some(model) = cache.model() else {
            return t;
        };
        // A message that quotes a node places the failure itself.
        t.finding.placed_by_message = !crash::quoted_spans(&t.finding.message).is_empty();
        let at = Failed {
            model,
            inputs: cache.inputs,
            faulty: &faulty,
        };
        let Some((node, prefix_out, guessed)) = self.failed_node(pool, &at, &mut t.finding) else {
            return t;
        };
        let truth = self
            .reference()
            .map(str::to_string)
            .and_then(|r| self.exposed(pool, cache, &r));
        // The library's own values upstream of the failing node, when it computes them.
        let mut library_values: Option<NamedValues> = None;
        if let Some(truth) = &truth {
            library_values = self.library_upstream(pool, &at, node, prefix_out);
            if self.shape_root_cause(pool, &at, node, truth, library_values.as_ref(), &mut t)
                || guessed && self.shape_before_any_failure(pool, &at, truth, &mut t)
            {
                shape_blame(pool, &at, truth, &mut t);
                return t;
            }
        }
        let n = model.graph.node(node).expect("a node of the model");
        t.finding.location = Some(Location::of(n));
        if let Some(truth) = &truth {
            self.undefined_verdict(&at, node, truth, library_values.as_ref(), &mut t);
            t.intermediates = Some(truth.clone());
        }
        let values = (library_values.as_ref(), truth.as_ref());
        self.blame_failure(pool, &at, node, values, &mut t);
        t
    }

    /// Checks the blame of a failure placed at `node`: alone, fed the library's own values
    /// upstream, else the reference's (`(library, truth)`: the library's where it computed
    /// them, it may fail compiling the part before the node); then upstream, where the node
    /// shows it only with its producers or not alone; then among the rewrites of the whole
    /// model, for an optimizer's failure no part shows.
    fn blame_failure(
        &mut self,
        pool: &mut Pool,
        at: &Failed,
        node: NodeId,
        (library_values, truth): (Option<&NamedValues>, Option<&NamedValues>),
        t: &mut Triaged,
    ) {
        // The library's own values upstream; where it computed none (it fails while
        // compiling the part before the node), the reference's.
        let blamed = Blamed {
            model: at.model,
            node,
            faulty: at.faulty,
            inputs: at.inputs,
            library: library_values.or(truth),
            fresh: true,
        };
        let message = t.finding.message.clone();
        self.check_blame(pool, blamed, &Shows::Failure(&message), t);
        // A failure its node shows only with its producers starts there when one of them
        // fails alone (tract's IsNaN on f64, typed as a number, fails at the Xor after it).
        let with_producers = matches!(t.finding.blame, Some(Blame::WithProducers { .. }));
        // Nor one it could not check alone because the library computed no values upstream
        // (it fails to compile the part before the node): the reference's values feed the tail.
        let not_alone = matches!(
            t.finding.blame,
            Some(Blame::NotShown { .. } | Blame::Unchecked { .. })
        );
        if let Some(truth) = truth
            && (with_producers || not_alone)
        {
            let on_truth = Blamed {
                library: Some(truth),
                ..blamed
            };
            self.failure_upstream(pool, on_truth, truth, t, with_producers);
        }
        // An optimizer's failure no part shows (ONNX Runtime's FastGeluFusion leaving a node
        // reading a value it removed) is looked for among the rewrites on the whole model.
        let unplaced = matches!(
            t.finding.blame,
            Some(Blame::NotShown { .. } | Blame::Unchecked { .. })
        );
        if unplaced && t.finding.layer == Some(Layer::Optimizer) {
            let shows = Shows::Failure(&message);
            self.check_model_rewrite(pool, at.model, at.faulty, at.inputs, &shows, t);
        }
    }

    /// A failure its node does not show alone starts upstream, where the smallest failing
    /// tail of its ancestors begins ([`confirm::failing_tail`], fed the reference's values).
    /// That node alone fails its own way: the finding becomes that failure, on it (the same
    /// bug as where it fails first). Or it gives another shape than the reference: the finding
    /// becomes that wrong shape. Else the node keeps the blame: the one it has (`keep`), or
    /// shown with the tail before it.
    fn failure_upstream(
        &mut self,
        pool: &mut Pool,
        at: Blamed,
        truth: &NamedValues,
        t: &mut Triaged,
        keep: bool,
    ) {
        self.memory().stats.extra_runs += 1;
        let Some(tail) = confirm::failing_tail(pool, &at, &t.finding.message) else {
            return;
        };
        let (first, before) = (tail[0], &tail[..tail.len() - 1]);
        let (Some(n), Some((outcome, fed))) = (
            at.model.graph.node(first),
            confirm::run_alone(pool, &at, first),
        ) else {
            return;
        };
        if let Some((symptom, stage)) = crash_symptom(&outcome) {
            let f = &mut t.finding;
            f.message = outcome.detail();
            (f.symptom, f.stage) = (symptom, stage);
            f.gap = crash::dtype_gap(catalog::library(at.faulty), &f.message);
            f.placed_by_message = !crash::quoted_spans(&f.message).is_empty();
            f.location = Some(Location::of(n));
        } else if let Outcome::Ok(got) = &outcome
            && let Some((loc, why)) =
                crash::first_shape_mismatch(at.model, &[first], truth, got, at.faulty)
        {
            self.wrong_shape(at.model, at.inputs, truth, (loc, why), t);
        } else if keep {
            return;
        } else {
            let ops = before
                .iter()
                .filter_map(|id| Some(at.model.graph.node(*id)?.op_type.clone()))
                .collect();
            t.finding.blame = Some(Blame::WithProducers { ops });
            return;
        }
        t.finding.blame = Some(Blame::Alone);
        t.blamed_inputs = Some(fed);
    }

    /// The node the library failed on: the one its message names, else the first whose
    /// prefix of the model fails that way; with the outputs of the longest prefix the library
    /// runs, when a run computed them, and whether no part fails that way (the node is a guess).
    fn failed_node(
        &mut self,
        pool: &mut Pool,
        at: &Failed,
        f: &mut Finding,
    ) -> Option<(NodeId, Option<NamedValues>, bool)> {
        let Failed {
            model,
            inputs,
            faulty,
        } = *at;
        match crash::named_node(model, &f.message) {
            Some(named) => {
                let (node, outputs) = self.blame_upstream(pool, at, named, f);
                Some((node, outputs, false))
            }
            None => {
                let first =
                    crash::failing_node(pool, faulty, model, inputs, None, None, Some(&f.message))?;
                self.memory().stats.extra_runs += 8;
                Some((first.node, first.outputs, !first.fails_like))
            }
        }
    }

    /// When no part of the model fails the way the whole model does (the message names a node
    /// an optimizer made, ONNX Runtime's fused SkipLayerNormalization, which exposing values
    /// undoes), a wrongly shaped value before the first node that fails at all is still the
    /// root cause: `t` becomes that inconsistency. True when it did.
    fn shape_before_any_failure(
        &mut self,
        pool: &mut Pool,
        at: &Failed,
        truth: &NamedValues,
        t: &mut Triaged,
    ) -> bool {
        self.memory().stats.extra_runs += 8;
        let Some(first) =
            crash::failing_node(pool, at.faulty, at.model, at.inputs, None, None, None)
        else {
            return false;
        };
        let values = self.library_upstream(pool, at, first.node, first.outputs);
        self.shape_root_cause(pool, at, first.node, truth, values.as_ref(), t)
    }

    /// When the `named` node's own inputs already fail, the failure starts further up: the
    /// first failing node of its ancestors, with that failure's own message (`f` takes it).
    /// The node, with the outputs of the part before it when they were computed.
    fn blame_upstream(
        &mut self,
        pool: &mut Pool,
        at: &Failed,
        named: NodeId,
        f: &mut Finding,
    ) -> (NodeId, Option<NamedValues>) {
        let Failed {
            model,
            inputs,
            faulty,
        } = *at;
        let before = crash::ancestors(model, named);
        if before.is_empty() {
            return (named, None);
        }
        self.memory().stats.extra_runs += 1;
        match crash::run_part(pool, faulty, model, &before, inputs) {
            Ok(o) => (named, Some(o)),
            // A failure that the whole model never reaches (the part runs, and fails, where
            // the whole model fails to compile) is another bug.
            Err(Some(whole)) if crash::stage_rank(&whole) <= crash::stage_rank(&f.message) => {
                self.memory().stats.extra_runs += 8;
                // Only a failure of its own, one the whole model reaches, moves the blame
                // upstream.
                if let Some(first) = crash::failing_node(
                    pool,
                    faulty,
                    model,
                    inputs,
                    Some(before),
                    Some(whole),
                    None,
                ) && let Some(m) = first.message
                    && crash::stage_rank(&m) <= crash::stage_rank(&f.message)
                {
                    f.message = m;
                    f.gap = crash::dtype_gap(catalog::library(faulty), &f.message);
                    f.placed_by_message = !crash::quoted_spans(&f.message).is_empty();
                    (first.node, first.outputs)
                } else {
                    (named, None)
                }
            }
            Err(_) => (named, None),
        }
    }

    /// The library's values upstream of `node`: `prefix_out` when a run computed them, else
    /// those of a run of its ancestors; where that run fails too (another failure on the way,
    /// which a wrong shape upstream may cause: ONNX Runtime's fused node named in the message
    /// is not the first to fail unfused), those of the longest prefix of them that runs.
    fn library_upstream(
        &mut self,
        pool: &mut Pool,
        at: &Failed,
        node: NodeId,
        prefix_out: Option<NamedValues>,
    ) -> Option<NamedValues> {
        let before = crash::ancestors(at.model, node);
        let covers = |values: &NamedValues| {
            before.iter().all(|id| {
                at.model.graph.node(*id).is_none_or(|n| {
                    n.outputs
                        .iter()
                        .all(|o| o.is_empty() || values.iter().any(|(k, _)| k == o))
                })
            })
        };
        if prefix_out.as_ref().is_some_and(covers) || before.is_empty() {
            return prefix_out;
        }
        self.memory().stats.extra_runs += 1;
        match crash::run_part(pool, at.faulty, at.model, &before, at.inputs) {
            Ok(values) => Some(values),
            Err(None) => prefix_out,
            Err(Some(whole)) => {
                self.memory().stats.extra_runs += 8;
                let (model, inputs) = (at.model, at.inputs);
                crash::failing_node(
                    pool,
                    at.faulty,
                    model,
                    inputs,
                    Some(before),
                    Some(whole),
                    None,
                )
                .and_then(|first| first.outputs)
                .or(prefix_out)
            }
        }
    }

    /// A wrongly shaped value upstream of `node` (the library's values `got` against the
    /// reference's `truth`) is the root cause: `t` becomes that inconsistency. True when it
    /// did.
    ///
    /// Not when the part between that value and `node`, fed the reference's values (that one
    /// rightly shaped), still fails the same way: the failure is then another bug (tract's
    /// 'ab->' Einsum keeps its input's shape, and a later Einsum fails on a TDim either way).
    fn shape_root_cause(
        &self,
        pool: &mut Pool,
        at: &Failed,
        node: NodeId,
        truth: &NamedValues,
        got: Option<&NamedValues>,
        t: &mut Triaged,
    ) -> bool {
        let Failed {
            model,
            inputs,
            faulty,
        } = *at;
        let before = crash::ancestors(model, node);
        let Some(got) = got else { return false };
        let Some(wrong) = crash::first_shape_mismatch(model, &before, truth, got, faulty) else {
            return false;
        };
        let producer = model
            .graph
            .nodes()
            .find(|n| n.outputs.contains(&wrong.0.value))
            .map(|n| n.id);
        let on_truth = Blamed {
            model,
            node,
            faulty,
            inputs,
            library: Some(truth),
            fresh: false,
        };
        if let Some(producer) = producer
            && confirm::fails_without(pool, &on_truth, producer, &t.finding.message)
        {
            return false;
        }
        if self.clean_variant_shapes_alike(pool, at, &before, &wrong.0.value, got, &t.finding) {
            return false;
        }
        self.wrong_shape(model, inputs, truth, wrong, t);
        true
    }

    /// Whether, for an optimizer's failure, the library's unoptimized level gives `value` the
    /// same wrong shape: that shape is then a fault of both levels, not the optimizer's failure
    /// (round 14: ONNX Runtime's ReduceMean gave an empty axis's mean the wrong shape at both
    /// levels, and SimplifiedLayerNormFusion's check failed whatever that shape).
    fn clean_variant_shapes_alike(
        &self,
        pool: &mut Pool,
        at: &Failed,
        before: &[NodeId],
        value: &str,
        got: &NamedValues,
        finding: &Finding,
    ) -> bool {
        if finding.layer != Some(Layer::Optimizer) {
            return false;
        }
        let Some((clean, _)) = finding.variants.iter().find(|(_, showing)| !showing) else {
            return false;
        };
        let shape = |values: &NamedValues| {
            values
                .iter()
                .find(|(k, _)| k == value)
                .and_then(|(_, v)| v.tensor())
                .map(|t| t.shape.clone())
        };
        self.memory().stats.extra_runs += 1;
        let Ok(clean_values) = crash::run_part(pool, clean, at.model, before, at.inputs) else {
            return false;
        };
        shape(&clean_values).is_some_and(|s| Some(s) == shape(got))
    }

    /// `t` becomes the inconsistency `wrong` (a value's location, and why its shape is wrong)
    /// that its failure follows from.
    fn wrong_shape(
        &self,
        model: &Model,
        inputs: &NamedValues,
        truth: &NamedValues,
        (loc, why): (Location, String),
        t: &mut Triaged,
    ) {
        let f = &mut t.finding;
        f.message = format!("{why}; downstream: {}", f.message);
        f.kind = Kind::Inconsistency;
        f.stage = None;
        f.symptom = "shape".into();
        f.gap = None;
        f.placed_by_message = false;
        let id = model
            .graph
            .nodes()
            .find(|n| n.outputs.first() == Some(&loc.value))
            .map(|n| n.id);
        f.location = Some(loc);
        if let Some(id) = id
            && let Some(hit) = self.undefined_at(model, id, truth, inputs, true)
        {
            t.verdict = Verdict::Undefined(hit);
        }
        t.intermediates = Some(truth.clone());
    }

    /// The verdict `Undefined` when what ONNX leaves open explains the failure at `node`: at
    /// the node itself, or at a value upstream that may reach it as anything.
    fn undefined_verdict(
        &self,
        at: &Failed,
        node: NodeId,
        truth: &NamedValues,
        library_values: Option<&NamedValues>,
        t: &mut Triaged,
    ) {
        let (model, inputs) = (at.model, at.inputs);
        if let Some(hit) = self.undefined_at(model, node, truth, inputs, false) {
            t.verdict = Verdict::Undefined(hit);
            return;
        }
        // A value upstream that ONNX leaves open may reach the failing node as anything (a
        // NaN cast to an integer pad, a size): the failure then follows from a result the
        // spec does not fix, when the library's value there is not the reference's (a type
        // gap does not depend on values).
        let upstream = crash::ancestors(model, node).into_iter().find_map(|id| {
            if t.finding.gap.is_some() {
                return None;
            }
            let n = model.graph.node(id)?;
            if let Some(got) = library_values
                && crash::same_values(n, truth, got)
            {
                return None;
            }
            let hit = self.undefined_at(model, id, truth, inputs, false)?;
            Some(format!("upstream {}: {hit}", n.op_type))
        });
        if let Some(hit) = upstream {
            t.verdict = Verdict::Undefined(hit);
        }
    }
}

/// The blame on the node a wrongly shaped value comes from: alone, fed the reference's values,
/// it gives that shape again, or the blame says it was not seen alone.
/// A reported crash whose message, where the triage placed it, words a limit of the library
/// ([`crash::declared_limitation`]) is that limit.
fn declared_where_placed(t: &mut Triaged) {
    if t.verdict == Verdict::Report
        && t.finding.kind == Kind::Crash
        && let Some(why) = crash::declared_limitation(&t.finding.message)
    {
        t.verdict = Verdict::Unsupported(why);
    }
}

fn shape_blame(pool: &mut Pool, at: &Failed, truth: &NamedValues, t: &mut Triaged) {
    let Some(loc) = &t.finding.location else {
        return;
    };
    let Some(id) = at
        .model
        .graph
        .nodes()
        .find(|n| n.outputs.contains(&loc.value))
        .map(|n| n.id)
    else {
        return;
    };
    let alone = Blamed {
        model: at.model,
        node: id,
        faulty: at.faulty,
        inputs: at.inputs,
        library: Some(truth),
        fresh: true,
    };
    let blame = match confirm::run_alone(pool, &alone, id) {
        Some((Outcome::Ok(got), fed))
            if crash::first_shape_mismatch(at.model, &[id], truth, &got, at.faulty).is_some() =>
        {
            t.blamed_inputs = Some(fed);
            Blame::Alone
        }
        _ => Blame::NotShown { nodes: 1 },
    };
    t.finding.blame = Some(blame);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_in_the_placed_message_is_not_filed() {
        // Round 14: tract stopped at a bool Pad first; the Compress the triage placed, run
        // on its own, says "can not be typed".
        let placed = "compile: Translating node #20 \"C\" Compress ToTypedTranslator: Node #20 \"C\" Compress can not be typed";
        let mut t = plain(
            Finding::new(Kind::Crash, "tract", "error", placed.into()),
            Verdict::Report,
        );
        declared_where_placed(&mut t);
        assert!(matches!(&t.verdict, Verdict::Unsupported(w) if w.contains("can not be typed")));
        // Another message, or a verdict already given, stays.
        let mut t = plain(
            Finding::new(
                Kind::Crash,
                "tract",
                "error",
                "run: Bool is not a number".into(),
            ),
            Verdict::Report,
        );
        declared_where_placed(&mut t);
        assert_eq!(t.verdict, Verdict::Report);
    }
}
