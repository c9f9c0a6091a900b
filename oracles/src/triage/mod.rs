//! The triage stage: what happens to the oracles' findings on one mutant before anything is
//! filed. The campaign, `mutagraph minimize` (its "same bug?" predicate), the LLM judge and
//! bundle re-checks all go through [`Triage::judge`], so they share one oracle set, one verdict
//! policy, and one place that knows which backend is the reference and which backends are
//! variants of one library ([`mutagraph_backends::catalog`]).
//!
//! For each finding, in order:
//!
//! 1. **Ours.** A failure of the reference, the other backends agreeing against the reference,
//!    a panic inside mutagraph's interpreter or the `ort` binding crate, a burn failure that is
//!    not a panic inside burn (the interpreter refusing the model) or is a gap burn declares,
//!    ONNX's own shape inference rejecting the model: counted as mutagraph's failures, never
//!    filed.
//! 2. **One library, one finding.** Findings of variants of one library (`ort`, `ort-noopt`)
//!    with the same symptom are one finding. The library's other CPU variants are run when the
//!    campaign did not run them, so the finding records which variants show the bug: an
//!    unoptimized variant showing it makes it a kernel bug, only optimized ones an optimizer bug
//!    ([`Layer`]).
//!    A failure in which the library declares in words that it does not implement what the
//!    model asks (`only supported for`, `not implemented`) is `unsupported`, not filed.
//! 3. **Witnesses.** A failure (crash, hang, memory) is blamed only when an independent
//!    implementation runs the model at its unoptimized level: another library's unoptimized
//!    variant (run on demand when the campaign lacks one) or, failing any, the reference alone
//!    (the report then names the spec). An optimizer that deletes the failing node is no
//!    witness.
//! 4. **Where.** A failure is pinned on the node the library failed on (named in its message,
//!    else found by bisecting the model's prefixes); a wrongly shaped value upstream of it makes
//!    it that node's shape inconsistency. A missing element type is one finding per library and
//!    type. A numeric finding is localized to its first diverging node.
//! 5. **Envelope.** Numeric results are judged against the envelope of the f64 reference and
//!    the native-precision reference ([`crate::envelope`]), each value with the tolerance of the
//!    narrowest float type on its path: inside is `unstable`, not a bug.
//! 6. **Undefined.** The blamed node, fed the values that reached it, is looked up in the
//!    catalogue of what ONNX leaves open ([`crate::undefined`]): a hit is `undefined`.
//!
//! Only [`Verdict::Report`] findings are filed.
//!
//! **Known crashes** ([`Triage::learn`], on in campaigns): a crash whose backend, stage and
//! message (names and numbers aside) were triaged [`LEARN_AFTER`] times in a row to one reported
//! signature, and never to anything else, is filed as a hit of that signature without the extra
//! runs of steps 2–6; one in [`SPOT_CHECK`] is triaged in full again, and a different outcome
//! ends the shortcut for that message. A hit of a known bug changes its count, never what is
//! filed.
pub mod crash;
pub mod reproduce;
pub mod trigger;

pub use reproduce::{Reproducer, ValueMap};

use crate::envelope::{Precision, inside, new_nonfinite};
use crate::finding::{Finding, Kind, Layer, Location, core_message, normalize_message};
use crate::localize::{Exposed, Localization, Verdict as LocVerdict, localize_with};
use crate::{MutantRuns, Oracle, judge_all};
use mutagraph_backends::catalog::{self, Library};
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::intermediates::expose_all;
use mutagraph_backends::value::{HostTensor, NamedValues};
use mutagraph_backends::worker::{Outcome, Pool, RunReport};
use mutagraph_ir::graph::NodeId;
use mutagraph_ir::model::Model;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// What the triage concluded about one finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", content = "why", rename_all = "kebab-case")]
pub enum Verdict {
    /// A misbehaviour of the library on a valid model: filed under its signature.
    Report,
    /// Rounding: inside the precision envelope, amplified by the op, ill-conditioned, or at
    /// the edge of the float range.
    Unstable(String),
    /// The blamed node got values for which ONNX leaves the result open (catalogue entry id
    /// first).
    Undefined(String),
    /// No independent implementation runs the model: nothing says the model is runnable.
    Unwitnessed(String),
    /// Only an optimized variant fails, and the library's unoptimized level does not
    /// implement the model: the failure is the gap showing through the optimizer.
    Unsupported(String),
    /// A numeric difference that does not show with every intermediate exposed, outside an
    /// optimizer: nothing pins it on an op.
    Unlocalized(String),
    /// mutagraph's own failure (the reference, our interpreter, a binding, the generator).
    Ours(String),
}

impl Verdict {
    /// The verdict's name (`report`, `unstable`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Report => "report",
            Verdict::Unstable(_) => "unstable",
            Verdict::Undefined(_) => "undefined",
            Verdict::Unwitnessed(_) => "unwitnessed",
            Verdict::Unsupported(_) => "unsupported",
            Verdict::Unlocalized(_) => "unlocalized",
            Verdict::Ours(_) => "ours",
        }
    }
}

/// One finding after triage.
#[derive(Clone, Debug)]
pub struct Triaged {
    /// The finding (merged over variants, located, with its layer, witnesses and gap).
    pub finding: Finding,
    /// The verdict.
    pub verdict: Verdict,
    /// Localization, for numeric findings.
    pub localization: Option<Localization>,
    /// The reference's value of every node output, when it was computed (minimization feeds
    /// cut models with it).
    pub intermediates: Option<NamedValues>,
    /// The native-precision reference's outputs, when they were computed (numeric findings):
    /// with the f64 reference's they bound the envelope a reproduction checks against.
    pub native: Option<NamedValues>,
}

/// Counters of the triage's own work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TriageStats {
    /// Runs made beyond the campaign's (variants, witnesses, the native reference, exposed
    /// models, prefixes).
    pub extra_runs: u64,
    /// Verdicts by name.
    pub verdicts: BTreeMap<String, u64>,
    /// `ours` verdicts by reason class.
    pub ours: BTreeMap<String, u64>,
    /// `undefined` verdicts by catalogue entry.
    pub undefined: BTreeMap<String, u64>,
    /// Crashes filed as hits of a known signature without extra runs ([`Triage::learn`]).
    #[serde(default)]
    pub known_hits: u64,
    /// Full triages of a known crash made to check the shortcut, and how many of them ended
    /// differently (each ends the shortcut for its message).
    #[serde(default)]
    pub spot_checks: u64,
    /// See [`spot_checks`](TriageStats::spot_checks).
    #[serde(default)]
    pub spot_check_changes: u64,
}

/// Full triages of one crash message, all reported under one signature, after which the
/// message is a known crash ([`Triage::learn`]).
pub const LEARN_AFTER: u32 = 3;

/// One known-crash hit in this many is triaged in full again.
pub const SPOT_CHECK: u64 = 16;

/// What the full triages of one crash message ended in.
struct Learned {
    /// The first reported finding (the one filed).
    finding: Finding,
    /// Its signature.
    signature: String,
    /// Full triages reported under `signature`.
    streak: u32,
    /// Some full triage ended otherwise: never a shortcut.
    mixed: bool,
    /// Hits filed without triage.
    hits: u64,
}

/// The policy and memory of the triage for one set of backends.
pub struct Triage {
    /// The run set, in `MutantRuns` order.
    backends: Vec<String>,
    /// Index of the reference in `backends`.
    reference: Option<usize>,
    /// The campaign's named tolerance.
    pub tolerance: Tolerance,
    oracles: Vec<Box<dyn Oracle>>,
    /// Run variants, witnesses and the native reference when the run set lacks them (on in
    /// campaigns; tests may turn it off).
    pub extra_runs: bool,
    /// Counters.
    pub stats: TriageStats,
    /// File a crash met again and again as a hit of its known signature without the extra
    /// runs (see the module's doc; off unless set: minimization and re-checks judge every
    /// model in full).
    pub learn: bool,
    learned: HashMap<String, Learned>,
}

/// The default oracle set of the triage.
pub fn oracles(tolerance: Tolerance) -> Vec<Box<dyn Oracle>> {
    crate::checks::default_oracles(tolerance)
}

/// Runs made for one mutant beyond the campaign's own, shared by its findings.
struct Cache<'a> {
    bytes: &'a [u8],
    inputs: &'a NamedValues,
    model: Option<Model>,
    model_failed: bool,
    extra: Vec<RunReport>,
    native: Option<Option<NamedValues>>,
    exposed: HashMap<String, Option<NamedValues>>,
    exposed_model: Option<Option<Vec<u8>>>,
    precision: Option<Precision>,
}

impl<'a> Cache<'a> {
    fn model(&mut self) -> Option<&Model> {
        if self.model.is_none() && !self.model_failed {
            match Model::from_bytes(self.bytes) {
                Ok(mut m) => {
                    mutagraph_ir::infer::infer_model(&mut m, Default::default());
                    self.model = Some(m);
                }
                Err(_) => self.model_failed = true,
            }
        }
        self.model.as_ref()
    }
}

impl Triage {
    /// A triage for runs on `backends` (the reference, if listed, is the ground truth).
    pub fn new(backends: &[String], tolerance: Tolerance) -> Triage {
        Triage {
            backends: backends.to_vec(),
            reference: backends.iter().position(|b| catalog::is_reference(b)),
            tolerance,
            oracles: oracles(tolerance),
            extra_runs: true,
            stats: TriageStats::default(),
            learn: false,
            learned: HashMap::new(),
        }
    }

    /// The backends of the run set.
    pub fn backends(&self) -> &[String] {
        &self.backends
    }

    /// The reference's name, if it is in the run set.
    pub fn reference(&self) -> Option<&str> {
        self.reference.map(|r| self.backends[r].as_str())
    }

    /// Index of the reference in the run set.
    pub fn reference_index(&self) -> Option<usize> {
        self.reference
    }

    /// Judges the runs of one mutant (`bytes`, on `inputs`) and triages every finding.
    pub fn judge(
        &mut self,
        pool: &mut Pool,
        bytes: &[u8],
        inputs: &NamedValues,
        runs: &MutantRuns,
    ) -> Vec<Triaged> {
        let raw = judge_all(&self.oracles, runs);
        if raw.is_empty() {
            return Vec::new();
        }
        let mut cache = Cache {
            bytes,
            inputs,
            model: None,
            model_failed: false,
            extra: Vec::new(),
            native: None,
            exposed: HashMap::new(),
            exposed_model: None,
            precision: None,
        };
        let reference_failed = self
            .reference
            .and_then(|r| runs.runs.get(r))
            .filter(|r| r.outcome.outputs().is_none())
            .map(|r| r.outcome.detail());
        let mut out = Vec::new();
        for f in merge_by_library(raw) {
            let t = self.triage_one(pool, &mut cache, runs, f, reference_failed.as_deref());
            *self
                .stats
                .verdicts
                .entry(t.verdict.name().into())
                .or_default() += 1;
            match &t.verdict {
                Verdict::Ours(why) => {
                    *self.stats.ours.entry(ours_class(why)).or_default() += 1;
                }
                Verdict::Undefined(why) => {
                    let id = why.split(' ').next().unwrap_or_default().to_string();
                    *self.stats.undefined.entry(id).or_default() += 1;
                }
                _ => {}
            }
            out.push(t);
        }
        out
    }

    fn triage_one(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        runs: &MutantRuns,
        mut f: Finding,
        reference_failed: Option<&str>,
    ) -> Triaged {
        let plain = |f: Finding, verdict: Verdict| Triaged {
            finding: f,
            verdict,
            localization: None,
            intermediates: None,
            native: None,
        };
        let faulty = f.backends[0].clone();
        let library = catalog::library(&faulty);
        // 1. Ours.
        if library == Library::Reference {
            let why = match f.kind {
                Kind::Inconsistency | Kind::Nan => {
                    "the other backends agree with each other against the reference"
                }
                _ => "the reference failed where a library ran the model",
            };
            return plain(f.clone(), Verdict::Ours(format!("{why}: {}", f.message)));
        }
        if let Some(why) = crash::ours(library, &f.message) {
            return plain(f, Verdict::Ours(why));
        }
        if library == Library::Burn
            && f.kind == Kind::Crash
            && let Some(why) = crash::burn_refusal(&f.message)
        {
            return plain(f, Verdict::Ours(why));
        }
        if f.kind == Kind::Crash
            && let Some(why) = crash::declared_limitation(&f.message)
        {
            return plain(f, Verdict::Unsupported(why));
        }
        if let Some(why) = reference_failed
            && !matches!(f.kind, Kind::Flaky | Kind::Slow)
        {
            return plain(
                f,
                Verdict::Unwitnessed(format!("the reference fails on this model too ({why})")),
            );
        }
        match f.kind {
            Kind::Crash if self.learn => {
                let key = learn_key(&f);
                if let Some(l) = self.learned.get_mut(&key)
                    && !l.mixed
                    && l.streak >= LEARN_AFTER
                {
                    l.hits += 1;
                    if !l.hits.is_multiple_of(SPOT_CHECK) {
                        self.stats.known_hits += 1;
                        return plain(l.finding.clone(), Verdict::Report);
                    }
                    self.stats.spot_checks += 1;
                }
                let t = self.triage_failure(pool, cache, runs, f);
                let l = self.learned.entry(key).or_insert_with(|| Learned {
                    finding: t.finding.clone(),
                    signature: t.finding.signature(),
                    streak: 0,
                    mixed: false,
                    hits: 0,
                });
                if t.verdict == Verdict::Report && t.finding.signature() == l.signature {
                    l.streak += 1;
                } else {
                    if l.streak >= LEARN_AFTER && !l.mixed {
                        self.stats.spot_check_changes += 1;
                    }
                    l.mixed = true;
                }
                t
            }
            Kind::Crash | Kind::Hang | Kind::Memory => self.triage_failure(pool, cache, runs, f),
            Kind::Nan | Kind::Inconsistency => self.triage_numeric(pool, cache, runs, f),
            Kind::Slow => {
                self.variants(pool, cache, runs, &mut f);
                f.witnesses = self.witnesses(pool, cache, runs, &faulty);
                plain(f, Verdict::Report)
            }
            Kind::Flaky => plain(f, Verdict::Report),
        }
    }

    /// A run of `backend` on the mutant: the campaign's, or one made now.
    fn run_of<'c>(
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
        let r = pool.run(backend, cache.bytes, cache.inputs).ok()?;
        self.stats.extra_runs += 1;
        cache.extra.push(r.clone());
        Some(r)
    }

    /// The native-precision reference's outputs on the mutant (run once per mutant).
    fn native(&mut self, pool: &mut Pool, cache: &mut Cache) -> Option<NamedValues> {
        if cache.native.is_none() {
            let got = if self.extra_runs && self.reference.is_some() {
                self.stats.extra_runs += 1;
                pool.run("reference-native", cache.bytes, cache.inputs)
                    .ok()
                    .and_then(|r| r.outcome.outputs().cloned())
            } else {
                None
            };
            cache.native = Some(got);
        }
        cache.native.clone().flatten()
    }

    fn precision(&mut self, cache: &mut Cache) -> Precision {
        if cache.precision.is_none() {
            let p = match cache.model() {
                Some(m) => Precision::of(m, self.tolerance),
                None => Precision::flat(self.tolerance),
            };
            cache.precision = Some(p);
        }
        cache.precision.clone().expect("set above")
    }

    /// Every node output of the mutant as `backend` computes it (run once per backend).
    fn exposed(
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
                self.stats.extra_runs += 1;
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
                let p = self.precision(cache);
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
    fn variants(
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
    fn witnesses(
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

    fn triage_failure(
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
            return Triaged {
                finding: f,
                verdict: Verdict::Unsupported(format!(
                    "the unoptimized level does not implement the model ({why})"
                )),
                localization: None,
                intermediates: None,
                native: None,
            };
        }
        f.witnesses = self.witnesses(pool, cache, runs, &faulty);
        let mut t = Triaged {
            finding: f,
            verdict: Verdict::Report,
            localization: None,
            intermediates: None,
            native: None,
        };
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

    /// The undefined-behaviour catalogue's verdict on node `id`, fed the reference's values
    /// of its inputs and outputs (`shape`: only the entries that leave shapes open).
    fn undefined_at(
        &self,
        model: &Model,
        id: NodeId,
        values: &NamedValues,
        inputs: &NamedValues,
        shape: bool,
    ) -> Option<String> {
        let node = model.graph.node(id)?;
        let mut seen: Vec<(String, HostTensor)> = Vec::new();
        let outputs = node.outputs.iter().filter(|o| !o.is_empty());
        for i in node.present_inputs().chain(outputs.map(String::as_str)) {
            let v = values
                .iter()
                .chain(inputs.iter())
                .find(|(n, _)| n == i)
                .and_then(|(_, v)| v.tensor().cloned())
                .or_else(|| {
                    model
                        .graph
                        .initializers
                        .get(i)
                        .and_then(|t| HostTensor::from_proto(t).ok())
                });
            if let Some(v) = v {
                seen.push((i.to_string(), v));
            }
        }
        crate::undefined::classify_for(node, &seen, shape).map(|h| h.describe())
    }

    fn triage_numeric(
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
            return Triaged {
                finding: f,
                verdict: Verdict::Report,
                localization: None,
                intermediates: None,
                native: None,
            };
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
        let mut t = Triaged {
            finding: f,
            verdict: Verdict::Report,
            localization: None,
            intermediates: None,
            native: None,
        };
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

/// The class of an `ours` reason, for counting.
fn ours_class(why: &str) -> String {
    if why.starts_with("the reference failed") {
        "reference-failed".into()
    } else if why.starts_with("the other backends agree") {
        "reference-outvoted".into()
    } else if why.contains("`ort` crate") {
        "binding-panic".into()
    } else if why.contains("mutagraph's own code") {
        "interpreter-panic".into()
    } else if why.contains("interpreter over burn refused") || why.contains("burn declares") {
        "interpreter-refusal".into()
    } else if why.contains("shape inference") {
        "invalid-model".into()
    } else {
        "other".into()
    }
}

/// Merges findings of variants of one library that are the same failure: same kind and
/// symptom class, and for failures the same core message. The first backend stays first.
pub fn merge_by_library(findings: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    'next: for f in findings {
        for g in out.iter_mut() {
            if g.kind == f.kind
                && g.symptom_class() == f.symptom_class()
                && g.library() == f.library()
                && (g.kind.is_numeric() || core_message(&g.message) == core_message(&f.message))
            {
                for b in &f.backends {
                    if !g.backends.contains(b) {
                        g.backends.push(b.clone());
                    }
                }
                continue 'next;
            }
        }
        out.push(f);
    }
    out
}

/// The key of a crash for [`Triage::learn`]: its backend, stage and whole message, names and
/// numbers aside.
fn learn_key(f: &Finding) -> String {
    format!(
        "{}|{:?}|{}",
        f.backends.join(","),
        f.stage,
        normalize_message(&f.message)
    )
}
