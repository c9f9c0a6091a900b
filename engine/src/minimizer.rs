//! The minimization stage, a peer of the campaign: a background thread with its own worker pool
//! that takes each new finding, delta-debugs its model while the signature stays the same
//! ([`mutagraph_oracles::triage::Reproducer`]: the campaign's own triage on every candidate)
//! and hands the result back to the thread that asked (the campaign's main thread, the only
//! writer of its output directory). `mutagraph minimize` runs the same [`minimize_one`] in the
//! foreground.
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{BACKGROUND_NICE, Pool, PoolOptions, lower_priority};
use mutagraph_ir::Model;
use mutagraph_mutators::mutation::{Record, replay_trace};
use mutagraph_oracles::localize::Localization;
use mutagraph_oracles::minimize::{self, Options};
use mutagraph_oracles::triage::crash;
use mutagraph_oracles::triage::reproduce::{self, Check};
use mutagraph_oracles::triage::trigger::{trigger_attributes, without_unneeded_nonfinite};
use mutagraph_oracles::triage::{Reproducer, Triage, Triaged, ValueMap};
use mutagraph_oracles::{Blame, Finding, Kind, MutantRuns};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Budget of one minimization: predicate calls.
pub const MAX_CHECKS: usize = 400;
/// Budget of one minimization: wall time.
pub const TIME_LIMIT: Duration = Duration::from_secs(120);
/// The shortest time limit of each run while a hang is minimized: a fifth of the campaign's
/// (scaled from the seed's own time, 10 s at least), and no less than this. A candidate that
/// still hangs costs the whole limit, and the campaign's would leave a handful of candidates in
/// [`TIME_LIMIT`]. A hang that is a loop (tract's declutter cycling over a pattern) never
/// finishes; a slow seed's parts get the same share of its longer limit.
pub const HANG_PROBE: Duration = Duration::from_secs(2);

/// A finding to minimize.
pub struct MinimizeJob {
    /// Its signature.
    pub signature: String,
    /// Its bundle.
    pub dir: PathBuf,
    /// The finding as first seen.
    pub finding: Finding,
    /// The model that showed it.
    pub model: Vec<u8>,
    /// Its inputs.
    pub inputs: NamedValues,
    /// The reference's intermediate values on it, when known.
    pub intermediates: Option<NamedValues>,
    /// The seed of generated inputs.
    pub input_seed: u64,
    /// The seed model the mutant was made from, and the mutation records that made it: the
    /// first pass drops records (replaying the rest on the seed) while the bug stays.
    pub trace: Option<(Vec<u8>, Vec<Record>)>,
    /// For a finding on a seed derived from a user's seed: the same mutations on the user's
    /// whole model, checked once there ([`shows_on_whole`]).
    pub whole: Option<WholeModel>,
}

/// The user's whole model with a derived seed's mutations replayed on it, and its inputs.
pub struct WholeModel {
    /// The model.
    pub model: Vec<u8>,
    /// Its inputs.
    pub inputs: NamedValues,
}

/// Whether `finding` (a kind of misbehaviour of one library) shows on `whole` too: the model
/// run once on every backend and triaged; in words, for `meta.json`.
pub fn shows_on_whole(
    pool: &mut Pool,
    backends: &[String],
    tolerance: Tolerance,
    finding: &Finding,
    whole: &WholeModel,
) -> String {
    let mut runs = Vec::new();
    for b in backends {
        match pool.run(b, &whole.model, &whole.inputs) {
            Ok(r) => runs.push(r),
            Err(e) => return format!("not checked: {b} could not be started: {e}"),
        }
    }
    let mr = MutantRuns {
        reference: backends
            .iter()
            .position(|b| mutagraph_backends::catalog::is_ground_truth(b)),
        runs,
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let judged = Triage::new(backends, tolerance).judge(pool, &whole.model, &whole.inputs, &mr);
    let reported =
        |t: &&mutagraph_oracles::Triaged| t.verdict == mutagraph_oracles::Verdict::Report;
    match judged
        .iter()
        .filter(reported)
        .find(|t| same_bug(&t.finding, finding))
    {
        Some(t) => format!("shows too ({})", t.finding.signature()),
        None if judged.is_empty() => "does not show: every backend agrees there".to_string(),
        None => {
            let seen: Vec<String> = judged
                .iter()
                .map(|t| match &t.verdict {
                    mutagraph_oracles::Verdict::Report => t.finding.signature(),
                    v => format!("{} {}", t.finding.kind.name(), v.name()),
                })
                .collect();
            format!("does not show as such (there: {})", seen.join(", "))
        }
    }
}

/// Whether `there` (found on the whole model) is the bug `finding` is: the same signature or
/// root cause, or the same kind and symptom of the same library on the same op type. Another
/// failure of the same library (the whole model failing for its own reasons) is not.
fn same_bug(there: &Finding, finding: &Finding) -> bool {
    there.signature() == finding.signature()
        || there.root_signature() == finding.root_signature()
        || (there.kind == finding.kind
            && there.library() == finding.library()
            && there.symptom_class() == finding.symptom_class()
            && there.op_type().is_some()
            && there.op_type() == finding.op_type())
}

/// What minimization did, as recorded in `meta.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MinimizedInfo {
    /// Main-graph nodes before.
    pub nodes_before: usize,
    /// Main-graph nodes after.
    pub nodes_after: usize,
    /// Predicate calls (each runs the backends).
    pub checks: usize,
    /// Candidates that failed validation (never run).
    pub invalid_candidates: usize,
    /// Wall time, seconds.
    pub wall_s: f64,
    /// Per pass: name, checks, nodes removed.
    pub passes: Vec<(String, usize, usize)>,
    /// The op type localization blames on the minimized model.
    pub op_type: Option<String>,
}

/// A finished minimization.
pub struct Done {
    /// The bundle.
    pub dir: PathBuf,
    /// The signature.
    pub signature: String,
    /// The minimized model.
    pub model: Vec<u8>,
    /// Its inputs.
    pub inputs: NamedValues,
    /// Its runs.
    pub runs: MutantRuns,
    /// The finding on it.
    pub finding: Finding,
    /// The native-precision reference's outputs on it, when computed.
    pub native: Option<NamedValues>,
    /// Localization on it.
    pub localization: Option<Localization>,
    /// The library's own values of the blamed node's inputs, when the node alone showed the
    /// finding on them.
    pub blamed_inputs: Option<NamedValues>,
    /// The statistics.
    pub info: MinimizedInfo,
    /// What the job's mutations showed on the user's whole model ([`shows_on_whole`]).
    pub whole_model: Option<String>,
}

/// What became of one minimization job.
pub enum Finished {
    /// The finding showed again and was minimized.
    Minimized(Box<Done>),
    /// The original model, run again in the minimizer's own worker processes on the inputs
    /// the campaign used, did not show the finding: not confirmed, so not filed.
    NotShown(NotShown),
}

/// A finding a fresh run of its own model and inputs did not show.
#[derive(Clone, Debug)]
pub struct NotShown {
    /// The bundle.
    pub dir: PathBuf,
    /// The signature.
    pub signature: String,
    /// What the fresh run showed instead: each finding's verdict and signature.
    pub shown: Vec<String>,
}

/// Minimizes one finding's model with `pool`. `None` when the job could not be run (its
/// model does not load, a worker failed, or `stop` was set); [`Finished::NotShown`] when the
/// original model, on the campaign's own inputs, does not show the finding's signature (then
/// nothing is minimized).
pub fn minimize_one(
    pool: &mut Pool,
    backends: &[String],
    tolerance: Tolerance,
    job: &MinimizeJob,
    opts: &Options,
    stop: &AtomicBool,
) -> Option<Finished> {
    let mut limited = RunLimit::new(pool, job.finding.kind);
    let pool = &mut *limited;
    let model = Model::from_bytes(&job.model).ok()?;
    let run_on = Reproducer::backends_for(&job.finding, backends);
    let mut rep = Reproducer::new(
        pool,
        Triage::new(&run_on, tolerance),
        job.signature.clone(),
        ValueMap::default(),
    );
    // The original, on the inputs the campaign used: what the campaign saw must show again.
    let first = rep.check_with(&model, job.inputs.clone())?;
    rep.start(&first);
    let Some(seen) = first.found.clone() else {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        return Some(Finished::NotShown(NotShown {
            dir: job.dir.clone(),
            signature: job.signature.clone(),
            shown: first
                .all
                .iter()
                .map(|t| format!("{}: {}", t.verdict.name(), t.finding.signature()))
                .collect(),
        }));
    };
    // The reference's intermediate values feed the inputs that cuts create.
    let intermediates = job.intermediates.clone().or(seen.intermediates.clone());
    rep.values = ValueMap::new(&job.inputs, intermediates.as_ref(), job.input_seed);
    let t = Instant::now();
    let mut invalid = 0usize;
    // A failure met on its node alone that the whole model does not show (it fails first on
    // something else) is minimized from that node: the bundle's model must fail its way.
    let part = from_the_part(&mut rep, &model, &seen, &first, job.input_seed);
    let from_part = part.is_some();
    let mut model = part.unwrap_or(model);
    // Pass 0: drop mutation records, one at a time, latest first (a later record may build on
    // an earlier one).
    let (record_checks, dropped) = match &job.trace {
        Some(trace) if !from_part => drop_records(&mut rep, trace, &mut model, opts, stop),
        _ => (0, 0),
    };
    let nodes_before = job_nodes(&job.model);
    let (small, report) = {
        let mut pred = |m: &Model| !stop.load(Ordering::Relaxed) && rep.reproduces(m);
        match minimize::minimize(&model, opts, &mut pred) {
            Ok((m, r)) => (m, Some(r)),
            Err(e) => {
                tracing::warn!("{}: not minimized: {e}", job.dir.display());
                invalid += 1;
                (model.clone(), None)
            }
        }
    };
    let small = plain_names(&mut rep, small, stop);
    let mut check = rep.check(&small)?;
    check.found.as_ref()?;
    if !stop.load(Ordering::Relaxed) {
        check = without_unneeded_nonfinite(&mut rep, &small, check);
    }
    let found = check.found?;
    let (mut finding, localization, native) = (found.finding, found.localization, found.native);
    if finding.kind == Kind::Hang
        && finding.location.is_none()
        && !stop.load(Ordering::Relaxed)
        && let Some((at, blame)) =
            crash::place_hang(rep.pool, &finding.backends[0], &small, &check.inputs)
    {
        finding.location = Some(at);
        finding.blame = Some(blame);
    }
    let blamed_inputs = found.blamed_inputs;
    // The attributes the bug needs name its root cause.
    if !stop.load(Ordering::Relaxed) {
        finding.trigger = trigger_attributes(&mut rep, &small, &check.inputs, &finding);
    }
    let first_pass = if from_part {
        "the blamed node alone (the whole model fails first otherwise)".to_string()
    } else {
        format!("records ({dropped} dropped)")
    };
    let mut passes: Vec<(String, usize, usize)> = vec![(
        first_pass,
        record_checks + usize::from(from_part),
        nodes_before.saturating_sub(model.graph.node_count()),
    )];
    passes.extend(
        report
            .iter()
            .flat_map(|r| &r.passes)
            .map(|p| (p.name.clone(), p.checks, p.nodes_removed)),
    );
    let info = MinimizedInfo {
        nodes_before,
        nodes_after: small.graph.node_count(),
        checks: report.as_ref().map_or(0, |r| r.checks) + record_checks,
        invalid_candidates: report.as_ref().map_or(0, |r| r.invalid_candidates) + invalid,
        wall_s: t.elapsed().as_secs_f64(),
        passes,
        op_type: finding.op_type().map(String::from),
    };
    let whole_model = job
        .whole
        .as_ref()
        .filter(|_| !stop.load(Ordering::Relaxed))
        .map(|w| shows_on_whole(rep.pool, backends, tolerance, &job.finding, w));
    Some(Finished::Minimized(Box::new(Done {
        dir: job.dir.clone(),
        signature: job.signature.clone(),
        model: small.to_bytes(),
        inputs: check.inputs,
        runs: check.runs,
        finding,
        native,
        localization,
        blamed_inputs,
        info,
        whole_model,
    })))
}

/// The pool with each run limited to a fifth of its limit ([`HANG_PROBE`] at least) while a hang
/// is minimized; the campaign's limit again once dropped.
struct RunLimit<'a> {
    pool: &'a mut Pool,
    limit: Duration,
}

impl<'a> RunLimit<'a> {
    fn new(pool: &'a mut Pool, kind: Kind) -> RunLimit<'a> {
        let limit = pool.options().timeout;
        if kind == Kind::Hang {
            pool.set_timeout((limit / 5).max(HANG_PROBE).min(limit));
        }
        RunLimit { pool, limit }
    }
}

impl std::ops::Deref for RunLimit<'_> {
    type Target = Pool;
    fn deref(&self) -> &Pool {
        self.pool
    }
}

impl std::ops::DerefMut for RunLimit<'_> {
    fn deref_mut(&mut self) -> &mut Pool {
        self.pool
    }
}

impl Drop for RunLimit<'_> {
    fn drop(&mut self) {
        self.pool.set_timeout(self.limit);
    }
}

/// Replays `trace` (the seed's bytes and the mutation records) without each record in turn,
/// latest first, keeping every model that still reproduces in `model`: the checks made and
/// the records dropped.
fn drop_records(
    rep: &mut Reproducer,
    (seed_bytes, records): &(Vec<u8>, Vec<Record>),
    model: &mut Model,
    opts: &Options,
    stop: &AtomicBool,
) -> (usize, usize) {
    let (mut checks, mut dropped) = (0usize, 0usize);
    let Ok(seed) = Model::from_bytes(seed_bytes) else {
        return (0, 0);
    };
    if records.len() < 2 {
        return (0, 0);
    }
    let mut keep = vec![true; records.len()];
    for i in (0..records.len()).rev() {
        if stop.load(Ordering::Relaxed) || checks >= opts.max_checks / 4 {
            break;
        }
        keep[i] = false;
        let (mut m, skipped) = replay_trace(&seed, records, |k| keep[k]);
        mutagraph_ir::infer::infer_model(&mut m, Default::default());
        let ok = skipped.is_empty() && mutagraph_ir::validate::validate(&m).is_ok() && {
            checks += 1;
            rep.reproduces(&m)
        };
        if ok {
            dropped += 1;
            *model = m;
        } else {
            keep[i] = true;
        }
    }
    (checks, dropped)
}

/// The blamed node of `seen` alone, fed the values that reached it, when the finding is a
/// failure that node shows alone ([`Blame::Alone`]) while the whole model's run (`first`)
/// fails otherwise, and the part shows the finding again: `rep` then starts from it.
fn from_the_part(
    rep: &mut Reproducer,
    model: &Model,
    seen: &Triaged,
    first: &Check,
    seed: u64,
) -> Option<Model> {
    let f = &seen.finding;
    if f.kind != Kind::Crash
        || f.blame != Some(Blame::Alone)
        || reproduce::fails_whole(&first.runs, f)
    {
        return None;
    }
    let fed = seen.blamed_inputs.as_ref()?;
    let part = reproduce::node_alone(model, &f.location.as_ref()?.value)?;
    let inputs: NamedValues = part
        .graph
        .real_inputs()
        .iter()
        .map(|vi| {
            let name = vi.name.as_deref()?;
            fed.iter().find(|(k, _)| k == name).cloned()
        })
        .collect::<Option<_>>()?;
    let check = rep.check_with(&part, inputs.clone())?;
    check.found.as_ref()?;
    rep.start(&check);
    rep.values = ValueMap::new(&inputs, None, seed);
    Some(part)
}

/// The background thread.
pub struct Minimizer {
    tx: Option<Sender<MinimizeJob>>,
    rx: Receiver<Finished>,
    pending: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Minimizer {
    /// Starts the thread.
    pub fn start(pool_opts: PoolOptions, backends: Vec<String>, tolerance: Tolerance) -> Minimizer {
        let (tx, jobs) = channel::<MinimizeJob>();
        let (done_tx, rx) = channel::<Finished>();
        let pending = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (pending.clone(), stop.clone());
        let jobs = Mutex::new(jobs);
        let handle = std::thread::spawn(move || {
            // Minimization is background work: the campaign's own runs go first.
            lower_priority(BACKGROUND_NICE);
            let mut pool_opts = pool_opts;
            pool_opts.config.nice = BACKGROUND_NICE;
            let mut pool = Pool::new(pool_opts);
            let opts = Options {
                max_checks: MAX_CHECKS,
                time_limit: Some(TIME_LIMIT),
                ..Options::default()
            };
            while let Ok(job) = jobs.lock().expect("one reader").recv() {
                if !s.load(Ordering::Relaxed) {
                    let mut o = opts.clone();
                    o.focus = job.finding.location.as_ref().map(|l| l.value.clone());
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        minimize_one(&mut pool, &backends, tolerance, &job, &o, &s)
                    }));
                    if let Ok(Some(done)) = r {
                        let _ = done_tx.send(done);
                    }
                }
                p.fetch_sub(1, Ordering::SeqCst);
            }
            pool.shutdown();
        });
        Minimizer {
            tx: Some(tx),
            rx,
            pending,
            stop,
            handle: Some(handle),
        }
    }

    /// Queues a job.
    pub fn submit(&self, job: MinimizeJob) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        if let Some(tx) = &self.tx
            && tx.send(job).is_err()
        {
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Finished jobs since the last call.
    pub fn results(&self) -> Vec<Finished> {
        self.rx.try_iter().collect()
    }

    /// Jobs queued or running.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }

    /// Waits until nothing is pending or `grace` has passed.
    pub fn wait_idle(&self, grace: Duration) {
        let t = Instant::now();
        while self.pending() > 0 && t.elapsed() < grace {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the thread (the running minimization ends at its next check) and joins it; the
    /// results stay readable.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.tx = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// `small` with plain names for what the mutators named (`retuned_1` for
/// `retuned_m3b17de67_5`: [`mutagraph_ir::names`]) when it still shows the bug, else `small`.
fn plain_names(rep: &mut Reproducer<'_>, small: Model, stop: &AtomicBool) -> Model {
    let Some((mut named, renames)) = mutagraph_ir::names::plain(&small) else {
        return small;
    };
    mutagraph_ir::infer::infer_model(&mut named, Default::default());
    if stop.load(Ordering::Relaxed) || mutagraph_ir::validate::validate(&named).is_err() {
        return small;
    }
    rep.values.alias(&renames);
    if rep.reproduces(&named) { named } else { small }
}

fn job_nodes(bytes: &[u8]) -> usize {
    Model::from_bytes(bytes).map_or(0, |m| m.graph.node_count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_oracles::{Kind, Location};

    fn crash(backend: &str, op: &str, message: &str) -> Finding {
        let mut f = Finding::new(Kind::Crash, backend, "error", message.into());
        f.location = Some(Location {
            op_type: op.into(),
            value: format!("{op}_out"),
            attrs: String::new(),
        });
        f
    }

    #[test]
    fn the_whole_model_failing_for_its_own_reasons_is_not_the_same_bug() {
        let slice = crash(
            "tract",
            "Slice",
            "Condition failed: start <= end (112 vs 101)",
        );
        let own = crash(
            "tract",
            "Conv",
            "Impossible to unify Sym(DynamicDimension.0) with Val(1)",
        );
        assert!(!same_bug(&own, &slice));
        let again = crash("tract", "Slice", "Condition failed: start <= end (5 vs 3)");
        assert!(same_bug(&again, &slice), "the same op failing the same way");
        assert!(same_bug(&slice.clone(), &slice));
        let ort = crash(
            "ort",
            "Slice",
            "Condition failed: start <= end (112 vs 101)",
        );
        assert!(!same_bug(&ort, &slice), "another library");
    }
}
