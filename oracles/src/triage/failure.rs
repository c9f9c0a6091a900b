//! Steps 3 and 4 for failures (crash, hang, memory): the witnesses, the node the library
//! failed on, and a wrongly shaped value upstream of it.

use super::{Cache, Triage, Triaged, Verdict, crash, plain};
use crate::MutantRuns;
use crate::finding::{Finding, Kind, Location};
use mutagraph_backends::catalog;
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::Pool;

impl Triage {
    pub(super) fn triage_failure(
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
        let Some(model) = cache.model().cloned() else {
            return t;
        };
        // A message that quotes a node places the failure itself.
        t.finding.placed_by_message = !crash::quoted_spans(&t.finding.message).is_empty();
        // The node the library failed on: the one its message names, else the first whose
        // prefix of the model fails.
        let named = crash::named_node(&model, &t.finding.message);
        let (mut node, mut prefix_out) = match named {
            Some(id) => (Some(id), None),
            None => match crash::failing_node(
                pool,
                &faulty,
                &model,
                cache.inputs,
                None,
                None,
                Some(&t.finding.message),
            ) {
                Some(first) => {
                    self.stats.extra_runs += 8;
                    (Some(first.node), first.outputs)
                }
                None => (None, None),
            },
        };
        let Some(named_or_found) = node else {
            return t;
        };
        // When the named node's own inputs already fail, the failure starts further up: the
        // first failing node of its ancestors, with that failure's own message.
        if named.is_some() {
            let before = crash::ancestors(&model, named_or_found);
            if !before.is_empty() {
                self.stats.extra_runs += 1;
                match crash::run_part(pool, &faulty, &model, &before, cache.inputs) {
                    Ok(o) => prefix_out = Some(o),
                    // A failure that the whole model never reaches (the part runs, and
                    // fails, where the whole model fails to compile) is another bug.
                    Err(Some(whole))
                        if crash::stage_rank(&whole) <= crash::stage_rank(&t.finding.message) =>
                    {
                        self.stats.extra_runs += 8;
                        // Only a failure of its own, one the whole model reaches, moves the
                        // blame upstream.
                        if let Some(first) = crash::failing_node(
                            pool,
                            &faulty,
                            &model,
                            cache.inputs,
                            Some(before),
                            Some(whole),
                            None,
                        ) && let Some(m) = first.message
                            && crash::stage_rank(&m) <= crash::stage_rank(&t.finding.message)
                        {
                            node = Some(first.node);
                            prefix_out = first.outputs;
                            t.finding.message = m;
                            t.finding.gap = crash::dtype_gap(library, &t.finding.message);
                            t.finding.placed_by_message =
                                !crash::quoted_spans(&t.finding.message).is_empty();
                        }
                    }
                    Err(_) => {}
                }
            }
        }
        let Some(node) = node else { return t };
        let truth = self
            .reference()
            .map(str::to_string)
            .and_then(|r| self.exposed(pool, cache, &r));
        // The library's own values upstream of the failing node, when it computes them.
        let mut library_values: Option<NamedValues> = None;
        // A wrongly shaped value upstream is the root cause.
        if let Some(truth) = &truth {
            let before = crash::ancestors(&model, node);
            let got = match prefix_out {
                Some(g) => Some(g),
                None if !before.is_empty() => {
                    self.stats.extra_runs += 1;
                    crash::run_part(pool, &faulty, &model, &before, cache.inputs).ok()
                }
                None => None,
            };
            library_values.clone_from(&got);
            if let Some(got) = got
                && let Some((loc, why)) =
                    crash::first_shape_mismatch(&model, &before, truth, &got, &faulty)
            {
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
                    && let Some(hit) = self.undefined_at(&model, id, truth, cache.inputs, true)
                {
                    t.verdict = Verdict::Undefined(hit);
                }
                t.intermediates = Some(truth.clone());
                return t;
            }
        }
        let n = model.graph.node(node).expect("a node of the model");
        t.finding.location = Some(Location {
            op_type: n.op_type.clone(),
            value: n.outputs.first().cloned().unwrap_or_default(),
            attrs: crate::localize::key_attrs(n),
        });
        if let Some(truth) = &truth {
            if let Some(hit) = self.undefined_at(&model, node, truth, cache.inputs, false) {
                t.verdict = Verdict::Undefined(hit);
            } else {
                // A value upstream that ONNX leaves open may reach the failing node as
                // anything (a NaN cast to an integer pad, a size): the failure then follows
                // from a result the spec does not fix, when the library's value there is not
                // the reference's (a type gap does not depend on values).
                let upstream = crash::ancestors(&model, node).into_iter().find_map(|id| {
                    if t.finding.gap.is_some() {
                        return None;
                    }
                    let n = model.graph.node(id)?;
                    if let Some(got) = &library_values
                        && crash::same_values(n, truth, got)
                    {
                        return None;
                    }
                    let hit = self.undefined_at(&model, id, truth, cache.inputs, false)?;
                    Some(format!("upstream {}: {hit}", n.op_type))
                });
                if let Some(hit) = upstream {
                    t.verdict = Verdict::Undefined(hit);
                }
            }
            t.intermediates = Some(truth.clone());
        }
        t
    }
}
