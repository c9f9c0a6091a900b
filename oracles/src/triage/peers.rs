//! Judging without the reference. When the reference lacks an op of the model (its run is
//! `unsupported`: a `com.microsoft` kernel, say), the unoptimized variant of a library that
//! runs the model stands in as the ground truth (`ort-noopt` first), and every finding carries
//! its name ([`Finding::ground`]). That oracle is weaker than the reference, so blame is
//! narrower:
//!
//! - **The ground's own library, optimized** (ONNX Runtime with its graph optimizer against
//!   ONNX Runtime without): the optimizer changed what the library's own kernels compute, an
//!   optimizer finding whatever the right values are.
//! - **Another library** is blamed only when a third implementation, at its unoptimized level,
//!   sides with the ground: it ran the model (a failure), or its outputs agree with the
//!   ground's (a numeric finding). One implementation against another decides nothing.
//! - **The ground outvoted** is not filed: nothing tells which side is right.
//!
//! The precision envelope and the catalogue of what ONNX leaves open need the reference's
//! values: without them the campaign's tolerance alone decides, which the finding's ground
//! says. A numeric finding of another library is localized against the ground's intermediates.

use super::{Cache, Triage, Triaged, Verdict, merge_by_library, ours_or_declared, plain};
use crate::MutantRuns;
use crate::checks::{agree, count_new_nonfinite};
use crate::finding::{Finding, Kind, Layer};
use crate::judge_all;
use crate::localize::{Exposed, Verdict as LocVerdict, localize_with};
use mutagraph_backends::catalog;
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Outcome, Pool, RunReport};

impl Triage {
    /// True when the reference is in the run set and lacks an op of the model (not when it
    /// failed otherwise: that is ours).
    pub(super) fn reference_lacks_an_op(&self, runs: &MutantRuns) -> bool {
        runs.reference
            .and_then(|r| runs.runs.get(r))
            .is_some_and(|r| matches!(r.outcome, Outcome::Unsupported { .. }))
    }

    /// Every finding on `runs`, judged against a peer standing in for the reference.
    pub(super) fn judge_by_peers(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        runs: &MutantRuns,
    ) -> Vec<Triaged> {
        let Some(peer) = self.peer_runs(pool, cache, runs) else {
            self.memory().stats.without_ground += 1;
            return Vec::new();
        };
        self.memory().stats.by_peers += 1;
        let ground_run = peer.runs[peer.reference.expect("the ground's slot")].clone();
        let ground = ground_run.backend.clone();
        let raw = judge_all(&self.oracles, &peer);
        let mut out = Vec::new();
        for f in merge_by_library(raw) {
            let mut t = self.triage_by_peer(pool, cache, &peer, f, &ground);
            t.ground_run = Some(ground_run.clone());
            self.memory().stats.count(&t.verdict);
            out.push(t);
        }
        out
    }

    /// The run set with the ground in the reference's slot: the unoptimized variant of the
    /// first library of the set (run now when the set lacks it) that ran the model. `None`
    /// when no library's unoptimized level runs it.
    fn peer_runs(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        runs: &MutantRuns,
    ) -> Option<MutantRuns> {
        runs.reference?;
        let mut candidates: Vec<String> = Vec::new();
        for r in runs.others() {
            let unoptimized = if catalog::is_optimized(&r.backend) {
                catalog::sibling_variants(&r.backend)
                    .into_iter()
                    .filter(|s| !catalog::is_optimized(s))
                    .map(String::from)
                    .collect()
            } else {
                vec![r.backend.clone()]
            };
            for c in unoptimized {
                if !candidates.contains(&c) {
                    candidates.push(c);
                }
            }
        }
        let ground: RunReport = candidates.iter().find_map(|c| {
            self.run_of(pool, cache, runs, c)
                .filter(|g| g.outcome.outputs().is_some())
        })?;
        Some(runs.with_ground(&ground))
    }

    /// One finding's verdict against the `ground` (see the module's doc).
    fn triage_by_peer(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        peer: &MutantRuns,
        mut f: Finding,
        ground: &str,
    ) -> Triaged {
        f.ground = Some(ground.to_string());
        let faulty = f.backends[0].clone();
        if let Some(v) = ours_or_declared(catalog::library(&faulty), &f, cache) {
            return plain(f, v);
        }
        if faulty == ground {
            let why = format!(
                "the other implementations agree against {ground}, which stands in for the \
                 reference (it lacks an op of the model): nothing tells which side is right"
            );
            return plain(f, Verdict::Unwitnessed(why));
        }
        if matches!(f.kind, Kind::Flaky | Kind::Slow) {
            return plain(f, Verdict::Report);
        }
        if f.kind.is_numeric()
            && let Some(why) = self.near_ties(pool, cache, peer, &faulty)
        {
            return plain(f, Verdict::Unstable(why));
        }
        if f.kind.is_numeric()
            && let Some(why) = self.within_ground_rounding(pool, cache, peer, &faulty, ground)
        {
            return plain(f, Verdict::Unstable(why));
        }
        if f.kind.is_numeric()
            && let Some(why) = self.ground_agrees_exposed(pool, cache, peer, &faulty, ground)
        {
            return plain(f, Verdict::Unstable(why));
        }
        if f.kind.is_numeric()
            && let Some(why) = ground_conditioning(pool, cache, peer, &f, ground)
        {
            return plain(f, Verdict::Unstable(why));
        }
        if catalog::family(&faulty) == catalog::family(ground) {
            // The library against its own unoptimized run: nothing localizes the difference
            // (exposing the intermediates undoes the rewrite), so what ONNX leaves open on the
            // way to the output, read from the ground's values, may be all it is (round 13:
            // ONNX Runtime's two MaxPool paths choosing differently in windows holding NaN).
            if f.kind.is_numeric()
                && let Some(why) = self.undefined_before(pool, cache, &f, ground)
            {
                return plain(f, Verdict::Undefined(why));
            }
            f.layer = Some(Layer::Optimizer);
            f.variants = vec![(faulty, true), (ground.to_string(), false)];
            f.witnesses = vec![ground.to_string()];
            return plain(f, Verdict::Report);
        }
        let sides = self.siding_with_ground(peer, &f, ground);
        if sides.is_empty() {
            let why = format!(
                "only {ground} judges it: without the reference (it lacks an op of the model) \
                 a third implementation must side with {ground}"
            );
            return plain(f, Verdict::Unwitnessed(why));
        }
        f.witnesses = std::iter::once(ground.to_string()).chain(sides).collect();
        let mut t = plain(f, Verdict::Report);
        if t.finding.kind.is_numeric() {
            self.localize_by_peer(pool, cache, &mut t, ground);
        }
        if t.verdict == Verdict::Report {
            self.variants(pool, cache, peer, &mut t.finding);
        }
        t
    }

    /// What ONNX leaves open on the way to the output `f` names, the values read from the
    /// ground's own intermediates.
    fn undefined_before(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        f: &Finding,
        ground: &str,
    ) -> Option<String> {
        let seen = self.exposed(pool, cache, ground)?;
        let model = cache.model()?;
        self.undefined_on_way(model, f.named_output(), &seen, cache.inputs)
    }

    /// Why `faulty`'s outputs are within the rounding of the ground's once each value may
    /// carry a few roundings of the largest value on its path, read from the ground's own
    /// intermediates (ONNX Runtime folding an f16 BatchNormalization into the Conv before it,
    /// against its unoptimized self: intermediates of 14 make a step of 0.0078 rounding).
    fn within_ground_rounding(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        peer: &MutantRuns,
        faulty: &str,
        ground: &str,
    ) -> Option<String> {
        let want = peer.reference_outputs()?.clone();
        let got = outputs_of(peer, faulty)?;
        let precision = self.precision(cache, faulty);
        let seen = self.exposed(pool, cache, ground)?;
        let model = cache.model()?;
        let seen = (&seen, cache.inputs);
        super::numeric::within_conditioned(model, &precision, &want, seen, &got).then(|| {
            format!(
                "within a few roundings of the largest value on its path, read from {ground}'s \
                 own intermediates"
            )
        })
    }

    /// Why `faulty`'s outputs are the ground's own once the ground runs with every intermediate
    /// value a graph output: ONNX Runtime's CPU provider keeps a chain of float16 values in
    /// float32 between the casts it inserts, and rounds a value to float16 only where it is an
    /// output; what the ground gives then depends on what it is asked to show (a MatMul's 6e5,
    /// float16's infinity, before a LayerNormalization: NaN as the model's types say, finite
    /// in the chain kept in float32).
    fn ground_agrees_exposed(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        peer: &MutantRuns,
        faulty: &str,
        ground: &str,
    ) -> Option<String> {
        let got = outputs_of(peer, faulty)?;
        let seen = self.exposed(pool, cache, ground)?;
        let want: NamedValues = got
            .iter()
            .map(|(name, _)| seen.iter().find(|(k, _)| k == name).cloned())
            .collect::<Option<_>>()?;
        let same = agree(&want, &got, self.tolerance).is_ok()
            && want
                .iter()
                .zip(&got)
                .all(|((_, w), (_, g))| count_new_nonfinite(w, g) == 0);
        same.then(|| {
            format!(
                "{ground} gives {faulty}'s result once each intermediate value is a graph \
                 output: the ground's own result depends on which values it rounds to their \
                 declared types"
            )
        })
    }

    /// Why `faulty`'s outputs leave the ground's only in indices picked among values within
    /// rounding of each other ([`ties::only_near_ties`], the ranked values read from the
    /// ground's intermediates, run only when every differing output is such indices).
    fn near_ties(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        peer: &MutantRuns,
        faulty: &str,
    ) -> Option<String> {
        let want = peer.reference_outputs()?;
        let got = peer
            .others()
            .find(|r| r.backend == faulty)?
            .outcome
            .outputs()?;
        let names = super::ties::differing_indices(cache.model()?, got, want, self.tolerance)?;
        // Only then the ground's intermediates, where the ranked values are read.
        let ground = peer.runs.get(peer.reference?)?.backend.clone();
        let seen = self.exposed(pool, cache, &ground)?;
        let model = cache.model()?;
        let outputs = (got, want);
        super::ties::only_near_ties(
            model,
            &names,
            outputs,
            &[&seen, cache.inputs],
            self.tolerance,
        )
    }

    /// The unoptimized runs of libraries other than the faulty one's and the ground's that
    /// side with the ground: ran the model (a failure), agree with its outputs (numeric).
    fn siding_with_ground(&self, peer: &MutantRuns, f: &Finding, ground: &str) -> Vec<String> {
        let want = peer.reference_outputs();
        let faulty = catalog::family(&f.backends[0]);
        peer.others()
            .filter(|r| {
                let family = catalog::family(&r.backend);
                family != faulty
                    && family != catalog::family(ground)
                    && !catalog::is_optimized(&r.backend)
                    && !catalog::is_reference(&r.backend)
            })
            .filter(|r| match (r.outcome.outputs(), want) {
                (Some(got), Some(want)) if f.kind.is_numeric() => {
                    agree(want, got, self.tolerance).is_ok()
                        && want
                            .iter()
                            .zip(got)
                            .all(|((_, w), (_, g))| count_new_nonfinite(w, g) == 0)
                }
                (Some(_), _) => !f.kind.is_numeric(),
                (None, _) => false,
            })
            .map(|r| r.backend.clone())
            .collect()
    }

    /// Pins a numeric finding on the first node where the faulty library's intermediates
    /// leave the ground's. The reference checks that node alone where it has its op: rounding
    /// there makes the finding `unstable`, a case ONNX leaves open `undefined`.
    fn localize_by_peer(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        t: &mut Triaged,
        ground: &str,
    ) {
        let faulty = t.finding.backends[0].clone();
        let Some(model) = cache.model() else {
            return;
        };
        let (Some(want), Some(got)) = (
            self.exposed(pool, cache, ground),
            self.exposed(pool, cache, &faulty),
        ) else {
            return;
        };
        let precision = self.precision(cache, &faulty);
        let exposed = Exposed {
            reference: &want,
            native: None,
            backend: &got,
        };
        let l = localize_with(
            model,
            t.finding.kind,
            cache.inputs,
            &exposed,
            &precision,
            pool,
        );
        match l.verdict {
            LocVerdict::Localized => t.finding.location = l.location.clone(),
            LocVerdict::Undefined(ref why) => t.verdict = Verdict::Undefined(why.clone()),
            LocVerdict::Unstable => {
                t.verdict = Verdict::Unstable(format!(
                    "the first node where {faulty} leaves {ground} is rounding amplified or \
                     ill-conditioned"
                ))
            }
            _ => {}
        }
        t.localization = Some(l);
    }
}

/// Why `f` is the model's conditioning as the ground computes it (float outputs only): the
/// ground run on inputs and weights nudged by a few rounding steps moves its result as far as
/// `f`'s error, or turns it NaN or infinite ([`super::numeric::conditioning`]; a square root
/// of a difference that cancels to 4e-7 of terms of 7e-3, whose sign a reordering of the
/// arithmetic flips).
fn ground_conditioning(
    pool: &mut Pool,
    cache: &Cache,
    peer: &MutantRuns,
    f: &Finding,
    ground: &str,
) -> Option<String> {
    let model = cache.model()?;
    let base = peer.reference_outputs()?;
    // indices and counts move by steps, not roundings
    let float =
        |v: &mutagraph_backends::value::Value| v.tensor().is_some_and(|t| t.dtype.is_float());
    if !base.iter().all(|(_, v)| float(v)) {
        return None;
    }
    let backend = catalog::info(ground)?.name;
    let mut runner = crate::localize::StandIn { pool, backend };
    let moves = crate::localize::model_sensitivity(model, cache.inputs, base, &mut runner)?;
    let error = f.metrics.as_ref().map(|m| m.max_abs);
    super::numeric::conditioning(moves, error).map(|why| format!("{why} (read from {ground})"))
}

/// The outputs of `backend`'s run in `runs`, when it ran.
fn outputs_of(runs: &MutantRuns, backend: &str) -> Option<NamedValues> {
    runs.runs
        .iter()
        .find(|r| r.backend == backend)?
        .outcome
        .outputs()
        .cloned()
}
