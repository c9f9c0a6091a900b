//! "Is it still the same bug?": the predicate of minimization and of bundle re-checks. A
//! candidate model runs on the backends that matter and goes through the same
//! [`Triage`](super::Triage) as the campaign's mutants; it reproduces when a reported finding
//! has the target signature.
use super::{Triage, Triaged, Verdict};
use crate::MutantRuns;
use crate::finding::{Finding, Kind, same_failure, unground};
use crate::minimize::candidate::constants;
use mutagraph_backends::catalog;
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_backends::value::{HostTensor, NamedValues, Value};
use mutagraph_backends::worker::{Outcome, Pool, RunReport};
use mutagraph_ir::Model;
use std::collections::HashMap;

/// Values by name for the inputs of smaller models: the original inputs and every
/// intermediate value the reference computed. A cut that turns an intermediate into a graph
/// input is fed what that value was in the original run, so the bug keeps its trigger.
#[derive(Clone, Debug, Default)]
pub struct ValueMap {
    values: HashMap<String, HostTensor>,
    seed: u64,
}

impl ValueMap {
    /// From the original inputs and the reference's intermediates.
    pub fn new(inputs: &NamedValues, intermediates: Option<&NamedValues>, seed: u64) -> ValueMap {
        let mut values = HashMap::new();
        for (n, v) in inputs.iter().chain(intermediates.into_iter().flatten()) {
            if let Value::Tensor(t) = v {
                values.insert(n.clone(), t.clone());
            }
        }
        ValueMap { values, seed }
    }

    /// The known values also under their new names (`old → new`).
    pub fn alias(&mut self, renames: &[(String, String)]) {
        for (old, new) in renames {
            if let Some(v) = self.values.get(old).cloned() {
                self.values.insert(new.clone(), v);
            }
        }
    }

    /// Inputs for `model`: known values when their shape fits (a leading block when the
    /// model's dims are smaller), generated ones otherwise.
    pub fn inputs_for(&self, model: &Model) -> Option<NamedValues> {
        let generated = inputs::generate(model, self.seed, &GenOptions::default()).ok()?;
        Some(
            generated
                .into_iter()
                .map(|(name, g)| {
                    let Value::Tensor(gt) = &g else {
                        return (name, g);
                    };
                    match self.values.get(&name).and_then(|k| fit(k, gt)) {
                        Some(t) => (name, Value::Tensor(t)),
                        None => (name, g),
                    }
                })
                .collect(),
        )
    }
}

/// `known` cut to the shape of `like` (same dtype and rank, each dim no larger).
pub fn fit(known: &HostTensor, like: &HostTensor) -> Option<HostTensor> {
    if known.dtype != like.dtype || known.shape.len() != like.shape.len() {
        return None;
    }
    if known.shape == like.shape {
        return Some(known.clone());
    }
    if known.shape.iter().zip(&like.shape).any(|(k, l)| l > k) {
        return None;
    }
    let src = known.to_f64s()?;
    let rank = like.shape.len();
    let mut strides = vec![1usize; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * known.shape[d + 1];
    }
    let n: usize = like.shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; rank];
    for _ in 0..n {
        out.push(src[idx.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>()]);
        for d in (0..rank).rev() {
            idx[d] += 1;
            if idx[d] < like.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    HostTensor::from_f64s(like.dtype, like.shape.clone(), &out).ok()
}

/// When some backend is a slowness candidate: runs the candidates again on `bytes`, and when
/// one of them is still slow, every backend but the reference twice more: the second run is
/// steady state (the worker keeps the prepared model, tract its plan), so no backend's plan
/// building is compared with another's inference. Returns the number of runs made.
pub fn confirm_slowness(
    pool: &mut Pool,
    bytes: &[u8],
    inputs: &NamedValues,
    runs: &mut MutantRuns,
) -> u64 {
    let candidates = crate::slow_candidates(runs);
    if !crate::checks::SLOWNESS_MEANINGFUL || candidates.is_empty() {
        return 0;
    }
    let mut n = 0;
    // The candidates once more first: most first-run slowness (a cold cache, the other core
    // busy) is gone on the second run, and the others need not run again then (a real-set
    // campaign spent 11 % of its time re-running the others for 2 % of its mutants).
    for b in &candidates {
        if let Ok(r) = pool.run(b, bytes, inputs) {
            runs.reruns.push(r);
            n += 1;
        }
    }
    if crate::Oracle::judge(&crate::checks::Slow, runs).is_empty() {
        return n;
    }
    // Still slow: every backend twice more, the candidates' fastest against the others'.
    let again: Vec<String> = runs.others().map(|r| r.backend.clone()).collect();
    for b in again {
        for _ in 0..2 {
            if let Ok(r) = pool.run(&b, bytes, inputs) {
                runs.reruns.push(r);
                n += 1;
            }
        }
    }
    n
}

/// "Same bug" for minimization and re-checks.
pub struct Reproducer<'a> {
    /// The pool that runs every backend.
    pub pool: &'a mut Pool,
    /// The triage, over the backends to run (the reference first when there is one).
    pub triage: Triage,
    /// The signature to keep.
    pub target: String,
    /// Input values.
    pub values: ValueMap,
    /// Predicate calls so far.
    pub calls: usize,
    /// The signatures the starting model showed of the target's library ([`Reproducer::start`]):
    /// a candidate that shows another of that library's bugs has drifted to it, and is not
    /// kept (`None`: not checked).
    pub known: Option<std::collections::HashSet<String>>,
    /// The largest error of the target's values on the starting model ([`Reproducer::start`]):
    /// a candidate whose error fell from far beyond the tolerance to its edge shows a trace of
    /// the bug that rounding could explain, and is not kept (`None`: not checked).
    pub start_error: Option<f64>,
    /// The failure the starting model, run whole, showed as the target's message
    /// ([`Reproducer::start`]): a candidate that fails otherwise as a whole (its part still
    /// shows the target, but the model a maintainer runs fails first on something else) is
    /// not kept (`None`: not checked).
    pub whole_failure: Option<String>,
}

/// How many times the tolerance an error must exceed to be far beyond it
/// ([`Reproducer::start_error`]).
pub const EDGE: f64 = 10.0;

/// [`Reproducer::at_the_edge`] for a start error and an absolute tolerance.
fn at_the_edge(start_error: Option<f64>, found: &Finding, atol: f64) -> bool {
    let edge = EDGE * atol;
    match (start_error, &found.metrics) {
        (Some(start), Some(m)) => m.nonfinite_mismatch == 0 && start > edge && m.max_abs <= edge,
        _ => false,
    }
}

/// Whether the whole model's run of `f`'s library (in `runs`) fails with `f`'s failure (the
/// same failure as `f.message`, [`same_failure`]); false for another kind of finding, or when
/// the whole run failed otherwise (the finding was met running a part of the model).
pub fn fails_whole(runs: &MutantRuns, f: &Finding) -> bool {
    if f.kind != Kind::Crash {
        return false;
    }
    let Some(faulty) = f.backends.first() else {
        return false;
    };
    let family = catalog::family(faulty);
    runs.runs
        .iter()
        .filter(|r| &r.backend == faulty && !matches!(r.outcome, Outcome::Ok(_)))
        .any(|r| same_failure(family, &f.message, &r.outcome.detail()))
}

/// The part of `model` made of the node that outputs `value` alone: its inputs become graph
/// inputs (those the model computes from its initializers alone stay constants), its outputs
/// the part's. The model a failure met on that node alone ([`crate::Blame::Alone`]) is
/// minimized from, when the whole model fails first on something else.
pub fn node_alone(model: &Model, value: &str) -> Option<Model> {
    let id = model.graph.producer(value)?;
    super::confirm::carve_part(model, &constants(model), &[id])
}

/// What one check of a candidate found.
pub struct Check {
    /// The runs.
    pub runs: MutantRuns,
    /// The inputs used.
    pub inputs: NamedValues,
    /// The reported finding with the target signature, if it is still there.
    pub found: Option<Triaged>,
    /// Every finding of the check, triaged.
    pub all: Vec<Triaged>,
}

impl<'a> Reproducer<'a> {
    /// A reproducer of `target` (a signature) on `pool`, judging with `triage`, feeding
    /// candidates from `values`; nothing checked yet ([`Reproducer::start`] records what the
    /// starting model showed).
    pub fn new(
        pool: &'a mut Pool,
        triage: Triage,
        target: String,
        values: ValueMap,
    ) -> Reproducer<'a> {
        Reproducer {
            pool,
            triage,
            target,
            values,
            calls: 0,
            known: None,
            start_error: None,
            whole_failure: None,
        }
    }

    /// The backends a finding needs: the reference and the backends that showed it (the
    /// triage runs the library's other variants and the witnesses itself).
    pub fn backends_for(f: &Finding, all: &[String]) -> Vec<String> {
        let mut v: Vec<String> = all
            .iter()
            .filter(|b| catalog::is_reference(b))
            .take(1)
            .cloned()
            .collect();
        v.extend(f.backends.iter().cloned());
        v.dedup();
        v
    }

    /// Runs and judges `model`.
    pub fn check(&mut self, model: &Model) -> Option<Check> {
        self.calls += 1;
        let inputs = self.values.inputs_for(model)?;
        self.check_with(model, inputs)
    }

    /// Runs and judges `model` on `inputs`.
    pub fn check_with(&mut self, model: &Model, inputs: NamedValues) -> Option<Check> {
        let bytes = model.to_bytes();
        let mut runs: Vec<RunReport> = Vec::new();
        for b in self.triage.backends().to_vec() {
            runs.push(self.pool.run(&b, &bytes, &inputs).ok()?);
        }
        let mut mr = MutantRuns {
            runs,
            reference: self.triage.reference_index(),
            reruns: Vec::new(),
            slow_baseline: Default::default(),
        };
        if self.target.starts_with("slow|") {
            confirm_slowness(self.pool, &bytes, &inputs, &mut mr);
        }
        let all = self.triage.judge(self.pool, &bytes, &inputs, &mr);
        let found = all
            .iter()
            .find(|t| {
                t.verdict == Verdict::Report
                    && unground(&t.finding.signature()) == unground(&self.target)
            })
            .cloned();
        Some(Check {
            runs: mr,
            inputs,
            found,
            all,
        })
    }

    /// Records what the starting model's check showed of the target's library, so that
    /// [`Reproducer::reproduces`] refuses candidates that show another of its bugs.
    pub fn start(&mut self, first: &Check) {
        let Some(found) = &first.found else {
            return;
        };
        self.start_error = found
            .finding
            .metrics
            .as_ref()
            .filter(|_| found.finding.kind.is_numeric())
            .map(|m| m.max_abs);
        self.whole_failure =
            fails_whole(&first.runs, &found.finding).then(|| found.finding.message.clone());
        let library = found.finding.library().to_string();
        self.known = Some(
            first
                .all
                .iter()
                .filter(|t| t.verdict == Verdict::Report && t.finding.library() == library)
                .map(|t| unground(&t.finding.signature()))
                .collect(),
        );
    }

    /// True when `found`'s error (finite elements only: a NaN mismatch has no size) is within
    /// [`EDGE`] times the tolerance while the starting model's was beyond it (Selu's 192 fell to
    /// 2.3e-3 in a minimization that kept shrinking its inputs).
    fn at_the_edge(&self, found: &Finding) -> bool {
        at_the_edge(self.start_error, found, self.triage.tolerance.atol)
    }

    /// True when `model` still shows the target bug, and no bug of the target's library that
    /// the starting model did not show ([`Reproducer::start`]): a minimization never drifts
    /// from one bug to another.
    /// Its blame is checked in the worker the candidates run in (the starting model's and the
    /// kept model's checks start a fresh one).
    pub fn reproduces(&mut self, model: &Model) -> bool {
        let fresh = std::mem::replace(&mut self.triage.fresh_blame, false);
        let c = self.check(model);
        self.triage.fresh_blame = fresh;
        let Some(c) = c else {
            return false;
        };
        let Some(found) = &c.found else {
            return false;
        };
        if self.at_the_edge(&found.finding) {
            return false;
        }
        if let Some(whole) = &self.whole_failure {
            let mut target = found.finding.clone();
            target.message = whole.clone();
            if !fails_whole(&c.runs, &target) {
                return false;
            }
        }
        let library = found.finding.library();
        self.known.as_ref().is_none_or(|known| {
            c.all
                .iter()
                .filter(|t| t.verdict == Verdict::Report && t.finding.library() == library)
                .all(|t| known.contains(&unground(&t.finding.signature())))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_backends::value::Data;

    #[test]
    fn an_error_fallen_to_the_tolerance_edge_is_not_the_bug_any_more() {
        let with_error = |max_abs: f64, nonfinite: usize| {
            let mut f = Finding::new(crate::Kind::Inconsistency, "tract", "values", String::new());
            f.metrics = Some(mutagraph_backends::compare::Metrics {
                max_abs,
                nonfinite_mismatch: nonfinite,
                ..Default::default()
            });
            f
        };
        // Selu's 192 fell to 2.3e-3 with a tolerance of 1e-3: rounding could explain it.
        assert!(at_the_edge(Some(192.0), &with_error(2.3e-3, 0), 1e-3));
        // Still far beyond the tolerance: the bug.
        assert!(!at_the_edge(Some(192.0), &with_error(0.5, 0), 1e-3));
        // A NaN where the reference is finite has no size, and a start at the edge is kept.
        assert!(!at_the_edge(Some(192.0), &with_error(0.0, 1), 1e-3));
        assert!(!at_the_edge(Some(5e-3), &with_error(2.3e-3, 0), 1e-3));
        assert!(!at_the_edge(None, &with_error(2.3e-3, 0), 1e-3));
    }

    #[test]
    fn known_values_are_cut_to_smaller_shapes() {
        let k = HostTensor::new(vec![2, 3], Data::F32(vec![0., 1., 2., 3., 4., 5.]));
        let like = HostTensor::new(vec![1, 2], Data::F32(vec![9., 9.]));
        assert_eq!(fit(&k, &like).unwrap().to_f64s().unwrap(), vec![0., 1.]);
        let like = HostTensor::new(vec![2, 2], Data::F32(vec![9.; 4]));
        assert_eq!(
            fit(&k, &like).unwrap().to_f64s().unwrap(),
            vec![0., 1., 3., 4.]
        );
        let bigger = HostTensor::new(vec![3, 3], Data::F32(vec![9.; 9]));
        assert!(fit(&k, &bigger).is_none());
    }
}
