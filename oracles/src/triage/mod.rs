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
//!    ([`Layer`](crate::finding::Layer)).
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
//!
//! This module holds the policy (step 1, the known crashes, the counters); `extra` the runs
//! made beyond the campaign's (variants, witnesses, the native reference, exposed
//! intermediates), `failure` steps 3–4 for failures, `numeric` steps 4–6 for numeric findings,
//! and [`crash`] what a failure message and the model's prefixes say.
mod confirm;
pub mod crash;
mod extra;
mod failure;
mod numeric;
mod peers;
pub mod reproduce;
mod rewrite;
mod ties;
pub mod trigger;

pub use reproduce::{Reproducer, ValueMap};

use crate::finding::{Finding, Kind, core_message, normalize_message};
use crate::localize::Localization;
use crate::{Mutant, MutantRuns, Oracle, judge_all};
use mutagraph_backends::catalog::{self, Library};
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::value::{HostTensor, NamedValues};
use mutagraph_backends::worker::{Pool, RunReport};
use mutagraph_ir::graph::NodeId;
use mutagraph_ir::model::Model;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

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
    /// The run that stood in for the reference, when the finding was judged by peers
    /// ([`Finding::ground`]): the bundle's expected values are its outputs.
    pub ground_run: Option<RunReport>,
    /// The values of the blamed node's inputs on which the node alone showed the finding
    /// ([`Blame::Alone`](crate::finding::Blame)): the library's own, or the reference's for a
    /// failure where the library computed none upstream. A reproduction of the node alone is
    /// fed these.
    pub blamed_inputs: Option<NamedValues>,
}

/// A triaged finding with its verdict alone (no localization, no values).
fn plain(finding: Finding, verdict: Verdict) -> Triaged {
    Triaged {
        finding,
        verdict,
        localization: None,
        intermediates: None,
        native: None,
        ground_run: None,
        blamed_inputs: None,
    }
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
    /// Numeric findings given the verdict they had every time before without the triage's
    /// runs ([`KnownQuiet`]).
    #[serde(default)]
    pub quiet_hits: u64,
    /// Full triages of such a finding made to check the shortcut, and how many of them ended
    /// differently (each ends the shortcut for its key).
    #[serde(default)]
    pub quiet_spot_checks: u64,
    /// See [`quiet_spot_checks`](TriageStats::quiet_spot_checks).
    #[serde(default)]
    pub quiet_spot_check_changes: u64,
    /// Mutants judged by peers (the reference lacks an op of theirs), and how many of them no
    /// library's unoptimized level ran (nothing judged them).
    #[serde(default)]
    pub by_peers: u64,
    /// See [`by_peers`](TriageStats::by_peers).
    #[serde(default)]
    pub without_ground: u64,
}

impl TriageStats {
    /// Counts a verdict (by name, and by reason class or catalogue entry).
    fn count(&mut self, verdict: &Verdict) {
        *self.verdicts.entry(verdict.name().into()).or_default() += 1;
        match verdict {
            Verdict::Ours(why) => *self.ours.entry(ours_class(why)).or_default() += 1,
            Verdict::Undefined(why) => {
                let id = why.split(' ').next().unwrap_or_default().to_string();
                *self.undefined.entry(id).or_default() += 1;
            }
            _ => {}
        }
    }
}

/// Full triages of one crash message, all reported under one signature, after which the
/// message is a known crash ([`Triage::learn`]).
pub const LEARN_AFTER: u32 = 3;

/// One known-crash hit in this many is triaged in full again.
pub const SPOT_CHECK: u64 = 16;

/// What the full triages of one crash message ended in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

/// What the triage knows of crash messages ([`Triage::learn`]), by message key: part of a
/// campaign's resume state, so that a resumed campaign takes the same shortcuts as one that
/// never stopped.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KnownCrashes(BTreeMap<String, Learned>);

/// What the full triages of one numeric finding of one context ended in, when they did not
/// report it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Quiet {
    /// The first verdict (`unstable`, `undefined`, ...).
    verdict: Verdict,
    /// Full triages in a row that ended in that verdict's kind.
    streak: u32,
    /// Some full triage ended otherwise: never a shortcut.
    mixed: bool,
    /// Findings given the verdict without triage.
    hits: u64,
}

/// What the triage learned of numeric findings that it does not report (unstable, undefined,
/// unlocalized), by key: the campaign's context (the seed and the mutation operator), the
/// backends, the kind and symptom class and the message with names and numbers aside. After
/// [`LEARN_AFTER`] full triages in a row ended in the same kind of verdict, the finding gets
/// that verdict without the triage's runs, except one in [`SPOT_CHECK`], which is triaged in
/// full; a spot check that ends otherwise (a report) ends the shortcut for that key, so a bug
/// behind a key is found at its first spot check at the latest. Part of the resume state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KnownQuiet(BTreeMap<String, Quiet>);

/// What a campaign's triage counts and learns: shared by its triage threads (each a
/// [`Triage`] of the same policy, [`Triage::sharing`]), each holding it only while it looks
/// up or records a verdict, never during a run. Part of a campaign's resume state.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    /// Counters.
    pub stats: TriageStats,
    /// What the full triages of each crash message ended in (see [`Triage::learn`]).
    pub known: KnownCrashes,
    /// What the full triages of numeric findings not reported ended in ([`KnownQuiet`]).
    pub quiet: KnownQuiet,
    /// The rewrite each part of a model showing a finding needs, by library, finding class and
    /// the part's op types and key attributes (`None`: none).
    pub rewrites: std::collections::HashMap<String, Option<String>>,
}

impl Memory {
    /// The finding a known crash of message `key` is filed as without the triage's runs
    /// (`None`: triage it in full: unknown, mixed, or this hit's spot check).
    fn known_hit(&mut self, key: &str) -> Option<Finding> {
        let l = self.known.0.get_mut(key)?;
        if l.mixed || l.streak < LEARN_AFTER {
            return None;
        }
        l.hits += 1;
        if l.hits.is_multiple_of(SPOT_CHECK) {
            self.stats.spot_checks += 1;
            return None;
        }
        self.stats.known_hits += 1;
        Some(l.finding.clone())
    }

    /// Records what a full triage of a crash of message `key` ended in.
    fn learn_crash(&mut self, key: String, t: &Triaged) {
        let l = self.known.0.entry(key).or_insert_with(|| Learned {
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
    }

    /// The verdict a numeric finding of `key` gets without the triage's runs (`None`: triage
    /// it in full).
    fn quiet_hit(&mut self, key: &str) -> Option<Verdict> {
        let q = self.quiet.0.get_mut(key)?;
        if q.mixed || q.streak < LEARN_AFTER {
            return None;
        }
        q.hits += 1;
        if q.hits.is_multiple_of(SPOT_CHECK) {
            self.stats.quiet_spot_checks += 1;
            return None;
        }
        self.stats.quiet_hits += 1;
        Some(q.verdict.clone())
    }

    /// Records what a full triage of a numeric finding of `key` ended in.
    fn learn_quiet(&mut self, key: String, verdict: &Verdict) {
        let quiet = !matches!(verdict, Verdict::Report | Verdict::Ours(_));
        match self.quiet.0.get_mut(&key) {
            Some(q) if q.verdict.name() == verdict.name() => q.streak += 1,
            Some(q) => {
                if q.streak >= LEARN_AFTER && !q.mixed {
                    self.stats.quiet_spot_check_changes += 1;
                }
                q.mixed = true;
            }
            // Reported the first time: this key is never a shortcut.
            None => {
                let q = Quiet {
                    verdict: verdict.clone(),
                    streak: u32::from(quiet),
                    mixed: !quiet,
                    hits: 0,
                };
                self.quiet.0.insert(key, q);
            }
        }
    }
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
    /// File a crash met again and again as a hit of its known signature without the extra
    /// runs (see the module's doc; off unless set: minimization and re-checks judge every
    /// model in full).
    pub learn: bool,
    /// Check every blame on the blamed node alone ([`confirm`]; on unless turned off).
    pub check_blame: bool,
    /// Run those checks in a fresh worker of the library (on unless turned off: minimization
    /// turns it off for its candidates, and on for the model it starts from and the one it
    /// keeps).
    pub fresh_blame: bool,
    /// Its counters and what it learned, shared with the triages of [`Triage::sharing`].
    memory: Arc<Mutex<Memory>>,
    /// The campaign's context of the runs being judged ([`Triage::judge_in`]).
    context: Option<String>,
}

/// The default oracle set of the triage.
pub fn oracles(tolerance: Tolerance) -> Vec<Box<dyn Oracle>> {
    crate::checks::default_oracles(tolerance)
}

/// Runs made for one mutant beyond the campaign's own, shared by its findings.
struct Cache<'a> {
    mutant: &'a Mutant,
    inputs: &'a NamedValues,
    extra: Vec<RunReport>,
    native: Option<Option<NamedValues>>,
    exposed: HashMap<String, Option<NamedValues>>,
    exposed_model: Option<Option<Vec<u8>>>,
}

impl<'a> Cache<'a> {
    fn new(mutant: &'a Mutant, inputs: &'a NamedValues) -> Cache<'a> {
        Cache {
            mutant,
            inputs,
            extra: Vec::new(),
            native: None,
            exposed: HashMap::new(),
            exposed_model: None,
        }
    }

    fn model(&self) -> Option<&'a Model> {
        self.mutant.model()
    }

    fn bytes(&self) -> &'a [u8] {
        self.mutant.bytes()
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
            learn: false,
            check_blame: true,
            fresh_blame: true,
            memory: Arc::default(),
            context: None,
        }
    }

    /// A triage of the same policy that counts and learns into the same [`Memory`] (for
    /// another thread of one campaign's triage).
    pub fn sharing(&self) -> Triage {
        Triage {
            extra_runs: self.extra_runs,
            learn: self.learn,
            check_blame: self.check_blame,
            fresh_blame: self.fresh_blame,
            memory: self.memory.clone(),
            ..Triage::new(&self.backends, self.tolerance)
        }
    }

    /// Its counters and what it learned (shared with the triages of [`Triage::sharing`]).
    pub fn memory(&self) -> MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Its counters.
    pub fn stats(&self) -> TriageStats {
        self.memory().stats.clone()
    }

    /// [`Triage::judge`] in a context of the campaign (the seed and the mutation operator),
    /// under which numeric verdicts are learned ([`KnownQuiet`]; with [`Triage::learn`]).
    pub fn judge_in(
        &mut self,
        pool: &mut Pool,
        mutant: &Mutant,
        inputs: &NamedValues,
        runs: &MutantRuns,
        context: &str,
    ) -> Vec<Triaged> {
        self.context = Some(context.to_string());
        let out = self.judge_mutant(pool, mutant, inputs, runs);
        self.context = None;
        out
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
        self.judge_mutant(pool, &Mutant::new(bytes.to_vec()), inputs, runs)
    }

    /// [`Triage::judge`] of a mutant whose decoded model and precision may be known already
    /// (and are kept in it for the stages after).
    pub fn judge_mutant(
        &mut self,
        pool: &mut Pool,
        mutant: &Mutant,
        inputs: &NamedValues,
        runs: &MutantRuns,
    ) -> Vec<Triaged> {
        let mut cache = Cache::new(mutant, inputs);
        if self.reference_lacks_an_op(runs) {
            return self.judge_by_peers(pool, &mut cache, runs);
        }
        let raw = judge_all(&self.oracles, runs);
        if raw.is_empty() {
            return Vec::new();
        }
        let reference_failed = self
            .reference
            .and_then(|r| runs.runs.get(r))
            .filter(|r| r.outcome.outputs().is_none())
            .map(|r| r.outcome.detail());
        let mut out = Vec::new();
        for f in merge_by_library(raw) {
            let t = self.triage_one(pool, &mut cache, runs, f, reference_failed.as_deref());
            self.memory().stats.count(&t.verdict);
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
        if let Some(v) = ours_or_declared(library, &f, cache) {
            return plain(f, v);
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
                if let Some(known) = self.memory().known_hit(&key) {
                    return plain(known, Verdict::Report);
                }
                let t = self.triage_failure(pool, cache, runs, f);
                self.memory().learn_crash(key, &t);
                t
            }
            Kind::Crash | Kind::Hang | Kind::Memory => self.triage_failure(pool, cache, runs, f),
            Kind::Nan | Kind::Inconsistency => match self.context.clone() {
                Some(ctx) if self.learn => self.triage_numeric_learned(&ctx, pool, cache, runs, f),
                _ => self.triage_numeric(pool, cache, runs, f),
            },
            Kind::Slow => {
                self.variants(pool, cache, runs, &mut f);
                f.witnesses = self.witnesses(pool, cache, runs, &faulty);
                plain(f, Verdict::Report)
            }
            Kind::Flaky => plain(f, Verdict::Report),
        }
    }

    /// [`Triage::triage_numeric`] with the shortcut of [`KnownQuiet`].
    fn triage_numeric_learned(
        &mut self,
        ctx: &str,
        pool: &mut Pool,
        cache: &mut Cache,
        runs: &MutantRuns,
        f: Finding,
    ) -> Triaged {
        let key = format!("{ctx}|{:?}|{}", f.kind, learn_key(&f));
        if let Some(verdict) = self.memory().quiet_hit(&key) {
            return plain(f, verdict);
        }
        let t = self.triage_numeric(pool, cache, runs, f);
        self.memory().learn_quiet(key, &t.verdict);
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
}

/// What a failure's message (with the model it is about) decides: a failure of our own
/// code (a binding's panic, our interpreter over burn refusing the model), a gap the library
/// declares in words, or a limit of it known upstream.
fn ours_or_declared(library: Library, f: &Finding, cache: &Cache) -> Option<Verdict> {
    if let Some(why) = crash::ours(library, &f.message) {
        return Some(Verdict::Ours(why));
    }
    if f.kind != Kind::Crash {
        return None;
    }
    if library == Library::Burn
        && let Some(why) = crash::burn_refusal(&f.message)
    {
        return Some(Verdict::Ours(why));
    }
    if library == Library::Tract
        && f.message.contains("Impossible to unify")
        && let Some(why) = cache
            .model()
            .and_then(|m| crash::declared_symbol_clash(&f.message, m))
    {
        return Some(Verdict::Unsupported(why));
    }
    crash::declared_limitation(&f.message).map(Verdict::Unsupported)
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
