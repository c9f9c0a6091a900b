//! Steps 4 to 6 for numeric findings (NaN/Inf, inconsistency): the precision envelope, the
//! witnesses, localization to the first diverging node, and the catalogue of what ONNX leaves
//! open.

use super::{Cache, Triage, Triaged, Verdict, plain};
use crate::MutantRuns;
use crate::envelope::{inside, new_nonfinite};
use crate::finding::{Finding, Kind, Layer};
use crate::localize::{Exposed, Localization, Verdict as LocVerdict, localize_with};
use mutagraph_backends::catalog;
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::Pool;
use mutagraph_ir::graph::NodeId;

impl Triage {
    pub(super) fn triage_numeric(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        runs: &MutantRuns,
        mut f: Finding,
    ) -> Triaged {
        let faulty = f.backends[0].clone();
        let (Some(want), Some(got)) = (
            runs.reference_outputs().cloned(),
            runs.runs
                .iter()
                .find(|r| r.backend == faulty)
                .and_then(|r| r.outcome.outputs().cloned()),
        ) else {
            return plain(f, Verdict::Report);
        };
        let native = self.native(pool, cache);
        let precision = self.precision(cache);
        // The envelope: a result the spec's own evaluation in the model's types gives is no bug.
        let outside = match f.kind {
            Kind::Nan => new_nonfinite(&want, native.as_ref(), &got).0 > 0,
            _ => match inside(&want, native.as_ref(), &got, &precision) {
                Ok(_) => new_nonfinite(&want, native.as_ref(), &got).0 > 0,
                Err((symptom, msg, metrics)) => {
                    f.symptom = symptom;
                    f.message = msg;
                    f.metrics = Some(metrics);
                    true
                }
            },
        };
        let mut t = plain(f, Verdict::Report);
        if !outside {
            t.verdict = Verdict::Unstable(
                "inside the precision envelope (the f64 reference and the spec's evaluation in \
                 the model's element types)"
                    .into(),
            );
            return t;
        }
        t.finding.witnesses = runs
            .others()
            .filter(|r| catalog::library(&r.backend) != catalog::library(&faulty))
            .filter(|r| {
                r.outcome.outputs().is_some_and(|o| {
                    inside(&want, native.as_ref(), o, &precision).is_ok()
                        && new_nonfinite(&want, native.as_ref(), o).0 == 0
                })
            })
            .map(|r| r.backend.clone())
            .collect();
        if let Some(r) = self.reference() {
            t.finding.witnesses.push(r.to_string());
        }
        // The library's other variants (which of them show it: the layer) are run only for a
        // finding that stays a report: most numeric findings of a campaign end as behaviour the
        // spec leaves open or as rounding, which localization alone decides.
        let (Some(model), Some(rname)) =
            (cache.model().cloned(), self.reference().map(str::to_string))
        else {
            self.variants(pool, cache, runs, &mut t.finding);
            return t;
        };
        let truth = self.exposed(pool, cache, &rname);
        let native_ex = if native.is_some() {
            self.exposed(pool, cache, "reference-native")
        } else {
            None
        };
        let faulty_ex = self.exposed(pool, cache, &faulty);
        let l = match (&truth, &faulty_ex) {
            (Some(w), Some(g)) => localize_with(
                &model,
                t.finding.kind,
                cache.inputs,
                &Exposed {
                    reference: w,
                    native: native_ex.as_ref(),
                    backend: g,
                },
                &precision,
                pool,
            ),
            _ => Localization {
                verdict: LocVerdict::Failed("the exposed model did not run on both sides".into()),
                location: None,
                values: Vec::new(),
                max_r: None,
            },
        };
        // Not pinned on a node: behaviour ONNX leaves open anywhere in the model (values
        // taken from the reference) may be the cause; else only an optimizer's rewrite, which
        // exposing the intermediates undoes, explains it.
        let not_pinned = matches!(l.verdict, LocVerdict::NotReproduced | LocVerdict::Failed(_));
        if not_pinned && let Some(w) = &truth {
            let ids: Vec<NodeId> = model.graph.topo_order().unwrap_or_default();
            for id in ids {
                if let Some(hit) = self.undefined_at(&model, id, w, cache.inputs, false) {
                    t.verdict = Verdict::Undefined(hit);
                    break;
                }
            }
        }
        if t.verdict == Verdict::Report
            && !matches!(l.verdict, LocVerdict::Unstable | LocVerdict::Undefined(_))
        {
            self.variants(pool, cache, runs, &mut t.finding);
        }
        if not_pinned && t.verdict == Verdict::Report && t.finding.layer != Some(Layer::Optimizer) {
            t.verdict = Verdict::Unlocalized(format!(
                "the difference does not show with every intermediate exposed ({})",
                match &l.verdict {
                    LocVerdict::Failed(w) => w.clone(),
                    _ => "the outputs then agree".into(),
                }
            ));
        }
        match &l.verdict {
            LocVerdict::Unstable => {
                t.verdict = Verdict::Unstable(format!(
                    "the first diverging node ({}) is rounding amplified, ill-conditioned or at \
                     the edge of the float range",
                    l.location.as_ref().map_or("?", |x| x.op_type.as_str())
                ))
            }
            LocVerdict::Undefined(why) => t.verdict = Verdict::Undefined(why.clone()),
            LocVerdict::Localized => {
                t.finding.location = l.location.clone();
                // The symptom is the blamed node's: NaN or Inf that it makes from finite
                // inputs is a NaN bug even where later nodes turn it into wrong values.
                if t.finding.kind == Kind::Inconsistency
                    && let (Some(loc), Some(w), Some(g)) = (&l.location, &truth, &faulty_ex)
                {
                    let one = |vals: &NamedValues| -> NamedValues {
                        vals.iter()
                            .filter(|(n, _)| *n == loc.value)
                            .cloned()
                            .collect()
                    };
                    let nat = native_ex.as_ref().map(one);
                    let (n, total, _) = new_nonfinite(&one(w), nat.as_ref(), &one(g));
                    if n > 0 {
                        let f = &mut t.finding;
                        f.kind = Kind::Nan;
                        f.symptom = "nan".into();
                        f.message = format!(
                            "{n} of {total} elements NaN/Inf where the reference is finite (first \
                             in '{}', downstream: {})",
                            loc.value, f.message
                        );
                    }
                }
            }
            _ => {}
        }
        t.localization = Some(l);
        t.intermediates = truth;
        t
    }
}
