//! The campaign's path, in one place:
//!
//! ```text
//! select → mutate → export, inputs       the search (this thread; `Campaign::generate`)
//!   → execute                             stages::execute: -j lanes per backend
//!   → judge → second runs → triage        stages::triage: -j threads, taken in search order
//!   → record (bundles → minimize)         `Campaign::record`; the minimizer's thread
//!   → commit (corpus, state, sync)        `Campaign::commit_state`; the corpus writer's thread
//! ```
//!
//! The search runs ahead of the stages by at most [`Flow::cap`] cases and never waits for a
//! verdict: it does not depend on what the backends did. Cases go to the triage in the order
//! the search made them (a reorder buffer between the lanes and the triage); at `-j 1` one
//! triage thread judges them in that order, so the findings do not depend on timing. A commit stops the search until nothing is in flight, so the
//! committed state never names an iteration whose results are not on disk; commits come at
//! most every [`COMMIT_EVERY`], and further apart when waiting for the stages to empty costs
//! more than a tenth of the time between them.
use super::stages::execute::Execute;
use super::stages::triage::{Case, Triaging};
use super::stages::{Event, Judged, Seq};
use super::*;
use std::sync::mpsc::{RecvTimeoutError, channel};

/// The longest time between two commits when the stages take long to empty.
const COMMIT_AT_MOST: Duration = Duration::from_secs(10);

/// What is in flight between the search and the record.
struct Flow {
    /// Cases generated and not yet recorded.
    in_flight: usize,
    /// The most cases in flight: the search stops generating there.
    cap: usize,
    next_seq: Seq,
    /// Cases on the lanes.
    queued: BTreeMap<Seq, Arc<Job>>,
    /// Executed cases waiting for those before them.
    ready: BTreeMap<Seq, (Arc<Job>, Vec<RunReport>)>,
    /// The next case the triage takes.
    next_out: Seq,
    /// Commits wait for the stages to empty from then on.
    draining_since: Option<Instant>,
    /// The time between commits (see the module documentation).
    commit_every: Duration,
    last_commit: Instant,
}

impl Campaign {
    /// Runs the stages until the campaign stops (its time or iterations, a signal, a full
    /// disk); every iteration generated is judged, recorded and committed.
    pub(super) fn pipeline(&mut self, out: &mut Outputs) -> Result<()> {
        let (events, rx) = channel::<Event>();
        let pools = std::mem::take(&mut self.pools);
        let mut execute = Execute::start(pools, &self.config.backends, events.clone());
        let pools = std::mem::take(&mut self.triage);
        let triaging = Triaging::start(&self.stage, pools, events);
        let jobs = self.config.jobs.max(1);
        let mut flow = Flow {
            in_flight: 0,
            cap: 2 * jobs + 2,
            next_seq: 0,
            queued: BTreeMap::new(),
            ready: BTreeMap::new(),
            next_out: 0,
            draining_since: None,
            commit_every: COMMIT_EVERY,
            last_commit: Instant::now(),
        };
        let result = self.flow(&mut flow, &mut execute, &triaging, &rx, out);
        self.state.timings.backends_busy += execute.run_s / self.runners() as f64;
        // Lanes and triage end with their queues; their pools go back to the campaign.
        let pools = execute.stop();
        self.triage = triaging.stop();
        for mut p in pools {
            p.shutdown();
        }
        result
    }

    /// Worker processes running mutants (lanes × backends).
    fn runners(&self) -> usize {
        self.config.jobs.max(1) * self.config.backends.len().max(1)
    }

    fn flow(
        &mut self,
        flow: &mut Flow,
        execute: &mut Execute,
        triage: &Triaging,
        events: &std::sync::mpsc::Receiver<Event>,
        out: &mut Outputs,
    ) -> Result<()> {
        loop {
            let stopping = out.stop(&self.state);
            let commit_due = flow.last_commit.elapsed() >= flow.commit_every;
            if (stopping || commit_due) && flow.draining_since.is_none() {
                flow.draining_since = Some(Instant::now());
            }
            if flow.draining_since.is_none() {
                self.search(flow, execute)?;
            }
            self.forward(flow, triage);
            if flow.in_flight == 0 && flow.draining_since.is_some() {
                self.commit(flow, out)?;
                if stopping {
                    return Ok(());
                }
                continue;
            }
            let t = Instant::now();
            let ev = events.recv_timeout(out.until_status());
            self.state.timings.backends_wait += t.elapsed().as_secs_f64();
            match ev {
                Ok(Event::Ran {
                    seq,
                    backend,
                    report,
                }) => {
                    let report = report.map_err(|e| anyhow!(e))?;
                    if let Some(runs) = execute.collect(seq, backend, report) {
                        let job = flow.take_job(seq);
                        flow.ready.insert(seq, (job, runs));
                    }
                }
                Ok(Event::Judged(j)) => {
                    flow.in_flight -= 1;
                    self.account(*j)?;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => bail!("the campaign's stages stopped"),
            }
            out.maybe_status(self);
        }
    }

    /// Counts the rewrites each backend applied to a judged case; a combination of rewrites
    /// not seen before credits the case's MCMC seed, `cap` cases later ([`State::rewrite_credits`]).
    fn note_rewrites(&mut self, job: &Job, runs: &[mutagraph_backends::worker::pool::RunReport]) {
        // The number of this case among the judged ones (they are judged in search order).
        let number = self.state.counters.executions;
        let mut novel = false;
        for r in runs.iter().filter(|r| !r.rewrites.is_empty()) {
            let mut once: Vec<&String> = r.rewrites.iter().collect();
            once.sort_unstable();
            once.dedup();
            let set = format!(
                "{}: {}",
                r.backend,
                once.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("+")
            );
            novel |= self.state.rewrite_sets.insert(set);
            let fired = self.state.rewrites.entry(r.backend.clone()).or_default();
            for name in once {
                *fired.entry(name.clone()).or_default() += 1;
            }
        }
        if let (true, Some(selected)) = (novel, job.selected) {
            self.state
                .rewrite_credits
                .entry(number)
                .or_default()
                .push(selected);
        }
    }

    /// Moves the rewrite credits of the judged cases `cap` or more behind the next one to the
    /// seed scores. While the search runs fewer than `cap` cases are in flight, so every case
    /// that far back is judged, whenever its verdict came.
    fn apply_rewrite_credits(&mut self, flow: &Flow) {
        let submitted = self.state.counters.executions + flow.in_flight as u64;
        let due = submitted.saturating_sub(flow.cap as u64);
        while let Some(entry) = self.state.rewrite_credits.first_entry() {
            if *entry.key() > due {
                break;
            }
            for s in entry.remove() {
                self.state.seeds.record_diverse(s);
            }
        }
    }

    /// The search: generates cases until `cap` are in flight, or the campaign stops, and
    /// queues the executable ones on the lanes.
    fn search(&mut self, flow: &mut Flow, execute: &mut Execute) -> Result<()> {
        while flow.in_flight < flow.cap && self.batch_size() > 0 {
            self.apply_rewrite_credits(flow);
            for job in self.generate(1)? {
                // A case without inputs only went to the corpus (written by the search).
                if job.inputs.is_none() {
                    continue;
                }
                let seq = flow.next_seq;
                flow.next_seq += 1;
                flow.in_flight += 1;
                let job = Arc::new(job);
                execute.submit(seq, &job);
                flow.queued.insert(seq, job);
            }
            if crate::interrupt::requested() {
                break;
            }
        }
        Ok(())
    }

    /// Hands the executed cases to the triage in the order the search made them.
    fn forward(&self, flow: &mut Flow, triage: &Triaging) {
        while let Some((job, runs)) = flow.ready.remove(&flow.next_out) {
            let plan = &self.seed_inputs[job.seed];
            triage.submit(Case {
                reference: self.reference,
                slow_baseline: plan.slowness.clone(),
                flaky_sample: mix(self.state.rng_seed, job.iteration, 4)
                    .is_multiple_of(FLAKY_EVERY),
                // Numeric verdicts are learned per seed and operator: mutants of one seed by
                // one operator that keep showing the same rounding are not localized each time.
                context: format!("{}|{}", job.seed, self.ops[job.op].name()),
                runs: Some(runs),
                job,
            });
            flow.next_out += 1;
        }
    }

    /// Counts a judged case and records its findings.
    fn account(&mut self, j: Judged) -> Result<()> {
        let Some(mr) = &j.runs else {
            return Ok(());
        };
        for r in &mr.runs {
            let bt = self
                .state
                .timings
                .per_backend
                .entry(r.backend.clone())
                .or_default();
            bt.runs += 1;
            bt.wall_s += r.wall_ms / 1e3;
            bt.prepare_s += r.prepare_ms / 1e3;
            bt.run_s += r.run_ms / 1e3;
        }
        let c = &mut self.state.counters;
        c.executions += 1;
        c.backend_runs += mr.runs.len() as u64;
        c.reruns += j.reruns;
        let nowhere = mr.runs.iter().all(|r| {
            matches!(
                &r.outcome,
                RunOutcome::Error { stage, .. } | RunOutcome::Unsupported { stage, .. }
                    if *stage != Stage::Run
            )
        });
        if nowhere {
            c.load_failed_everywhere += 1;
            c.per_operator[j.job.op].illegal += 1;
        }
        self.note_rewrites(&j.job, &mr.runs);
        let tm = &mut self.state.timings;
        tm.oracles += j.oracles_s;
        tm.triage += j.triage_s;
        let t = Instant::now();
        for tr in j.triaged {
            self.record(&j.job, tr, mr)?;
        }
        self.state.timings.record += t.elapsed().as_secs_f64();
        Ok(())
    }

    /// A commit, with nothing in flight: the sync directory, the state (with what the triage
    /// learned); the next one is further away when emptying the stages took long.
    fn commit(&mut self, flow: &mut Flow, out: &mut Outputs) -> Result<()> {
        let waited = flow.draining_since.take().map(|t| t.elapsed());
        let waited = waited.unwrap_or_default();
        self.state.timings.drain += waited.as_secs_f64();
        flow.commit_every = (10 * waited).clamp(COMMIT_EVERY, COMMIT_AT_MOST);
        let elapsed = out.elapsed();
        self.state.elapsed_s = elapsed;
        self.sync_import()?;
        let row = out.row_due();
        self.commit_state(elapsed, row)?;
        if row {
            out.row(self, elapsed)?;
        }
        flow.last_commit = Instant::now();
        Ok(())
    }
}

impl Flow {
    /// Takes back the case whose runs are whole.
    fn take_job(&mut self, seq: Seq) -> Arc<Job> {
        self.queued
            .remove(&seq)
            .expect("every case on the lanes is queued")
    }
}
