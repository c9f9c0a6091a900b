//! The runs the triage makes beyond the campaign's own, once per mutant and shared by its
//! findings: a backend's run, the native-precision reference, every intermediate exposed, the
//! library's other variants and the witnesses of a failure.

use super::{Cache, Triage};
use crate::MutantRuns;
use crate::envelope::{Precision, inside, new_nonfinite};
use crate::finding::{Finding, Kind, Layer};
use mutagraph_backends::catalog;
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Outcome, Pool, RunReport};
use mutagraph_ir::slice::expose_all;

impl Triage {
    /// A run of `backend` on the mutant: the campaign's, or one made now.
    pub(super) fn run_of<'c>(
        &mut self,
        pool: &mut Pool,
        cache: &'c mut Cache,
        runs: &'c MutantRuns,
        backend: &str,
    ) -> Option<RunReport> {
        if let Some(r) = runs.runs.iter().find(|r| r.backend == backend) {
            return Some(r.clone());
        }
        if let Some(r) = cache.extra.iter().find(|r| r.backend == backend) {
            return Some(r.clone());
        }
        if !self.extra_runs || !catalog::is_compiled(backend) {
            return None;
        }
        let r = pool.run(backend, cache.bytes(), cache.inputs).ok()?;
        self.memory().stats.extra_runs += 1;
        cache.extra.push(r.clone());
        Some(r)
    }

    /// The native-precision reference's outputs on the mutant (run once per mutant).
    pub(super) fn native(&mut self, pool: &mut Pool, cache: &mut Cache) -> Option<NamedValues> {
        if cache.native.is_none() {
            let got = if self.extra_runs && self.reference.is_some() {
                self.memory().stats.extra_runs += 1;
                pool.run("reference-native", cache.bytes(), cache.inputs)
                    .ok()
                    .and_then(|r| r.outcome.outputs().cloned())
            } else {
                None
            };
            cache.native = Some(got);
        }
        cache.native.clone().flatten()
    }

    /// The precision envelope of the mutant's values as `backend` computes them: the
    /// campaign's tolerance along each value's path, and the arithmetic the backend's kernels
    /// may compute in besides (its catalog row's [`Arithmetic`]).
    ///
    /// [`Arithmetic`]: mutagraph_backends::catalog::Arithmetic
    pub(super) fn precision(&mut self, cache: &mut Cache, backend: &str) -> Precision {
        let p = cache.mutant.precision(self.tolerance);
        let modes = mutagraph_backends::catalog::info(backend).map_or(&[][..], |b| b.arithmetic);
        match cache.mutant.model() {
            Some(m) if !modes.is_empty() => p.for_arithmetic(m, modes),
            _ => p,
        }
    }

    /// Every node output of the mutant as `backend` computes it (run once per backend).
    pub(super) fn exposed(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        backend: &str,
    ) -> Option<NamedValues> {
        if let Some(v) = cache.exposed.get(backend) {
            return v.clone();
        }
        if cache.exposed_model.is_none() {
            let b = cache
                .model()
                .and_then(|m| expose_all(m).ok())
                .map(|(m, _)| m.to_bytes());
            cache.exposed_model = Some(b);
        }
        let got = match cache.exposed_model.clone().flatten() {
            Some(bytes) => {
                self.memory().stats.extra_runs += 1;
                pool.run(backend, &bytes, cache.inputs)
                    .ok()
                    .and_then(|r| r.outcome.outputs().cloned())
            }
            None => None,
        };
        cache.exposed.insert(backend.to_string(), got.clone());
        got
    }

    /// Whether `r` shows finding `f`'s symptom (a sibling variant's run).
    fn shows(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        runs: &MutantRuns,
        f: &Finding,
        r: &RunReport,
    ) -> bool {
        match f.kind {
            Kind::Crash => matches!(r.outcome, Outcome::Error { .. } | Outcome::Crash { .. }),
            Kind::Hang => matches!(r.outcome, Outcome::Timeout { .. }),
            Kind::Memory => matches!(r.outcome, Outcome::OutOfMemory { .. }),
            Kind::Slow => f.backends.contains(&r.backend),
            Kind::Flaky => f.backends.contains(&r.backend),
            Kind::Nan | Kind::Inconsistency => {
                let (Some(want), Some(got)) = (runs.reference_outputs(), r.outcome.outputs())
                else {
                    return false;
                };
                let (want, got) = (want.clone(), got.clone());
                let native = self.native(pool, cache);
                let p = self.precision(cache, &r.backend);
                match f.kind {
                    Kind::Nan => new_nonfinite(&want, native.as_ref(), &got).0 > 0,
                    _ => inside(&want, native.as_ref(), &got, &p).is_err(),
                }
            }
        }
    }

    /// Runs the finding's library's other variants and records which show it; sets the layer
    /// and the backends that show it. Returns what an unoptimized variant that does not
    /// support the model said, if one did.
    pub(super) fn variants(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        runs: &MutantRuns,
        f: &mut Finding,
    ) -> Option<String> {
        let first = f.backends[0].clone();
        let mut names: Vec<String> = vec![first.clone()];
        names.extend(
            catalog::sibling_variants(&first)
                .into_iter()
                .map(String::from),
        );
        // Variants the campaign ran that are not CPU siblings (a GPU variant in the set).
        for r in &runs.runs {
            if catalog::family(&r.backend) == catalog::family(&first) && !names.contains(&r.backend)
            {
                names.push(r.backend.clone());
            }
        }
        let mut seen: Vec<(String, bool)> = Vec::new();
        let mut unsupported = None;
        for name in names {
            let shows = if f.backends.contains(&name) {
                true
            } else {
                match self.run_of(pool, cache, runs, &name) {
                    Some(r) => {
                        if matches!(r.outcome, Outcome::Unsupported { .. }) {
                            if !catalog::is_optimized(&name) && unsupported.is_none() {
                                unsupported = Some(format!("{name}: {}", r.outcome.detail()));
                            }
                            continue;
                        }
                        self.shows(pool, cache, runs, f, &r)
                    }
                    None => continue,
                }
            };
            seen.push((name, shows));
        }
        let unopt_shows = seen.iter().any(|(n, s)| *s && !catalog::is_optimized(n));
        let unopt_clean = seen.iter().any(|(n, s)| !*s && !catalog::is_optimized(n));
        f.layer = if unopt_shows {
            Some(Layer::Kernel)
        } else if unopt_clean {
            Some(Layer::Optimizer)
        } else {
            None
        };
        let mut showing: Vec<String> = f.backends.clone();
        for (n, s) in &seen {
            if *s && !showing.contains(n) {
                showing.push(n.clone());
            }
        }
        f.backends = showing;
        f.variants = seen;
        unsupported
    }

    /// The backends that ran the mutant fine at their unoptimized level, other libraries only
    /// (the reference last); the library's witnesses are run when the campaign lacks them.
    pub(super) fn witnesses(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        runs: &MutantRuns,
        faulty: &str,
    ) -> Vec<String> {
        let mine = catalog::library(faulty);
        let ok = |r: &RunReport| r.outcome.outputs().is_some();
        let mut w: Vec<String> = runs
            .runs
            .iter()
            .chain(&cache.extra)
            .filter(|r| {
                ok(r)
                    && catalog::library(&r.backend) != mine
                    && !catalog::is_optimized(&r.backend)
                    && !catalog::is_reference(&r.backend)
            })
            .map(|r| r.backend.clone())
            .collect();
        if w.is_empty() {
            for b in catalog::witnesses_for(faulty) {
                if let Some(r) = self.run_of(pool, cache, runs, b)
                    && ok(&r)
                {
                    w.push(b.to_string());
                }
            }
        }
        w.dedup();
        if let Some(r) = self.reference
            && runs.runs.get(r).is_some_and(ok)
        {
            w.push(self.backends[r].clone());
        }
        w
    }
}
