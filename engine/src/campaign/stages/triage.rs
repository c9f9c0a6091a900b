//! The triage stage: threads that judge each executed case (the oracles), make its second
//! runs (slowness, flakiness) and triage its findings (localization, fresh-process checks,
//! what the campaign learned of crashes and numeric noise). They take the cases in the order
//! the search generated them; at `-j 1` one thread judges them one after the other, so its
//! verdicts do not depend on timing. Each thread owns its worker pool and a [`Triage`] of the
//! campaign's policy; they share its memory ([`Triage::sharing`]), which the campaign reads
//! at commits (when no case is in flight).
use super::{Event, Judged};
use crate::campaign::Job;
use mutagraph_backends::worker::{Pool, RunReport};
use mutagraph_oracles::MutantRuns;
use mutagraph_oracles::triage::Triage;
use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// One case for the triage.
pub struct Case {
    pub job: Arc<Job>,
    /// Its reports, in the campaign's backend order (`None`: not executed).
    pub runs: Option<Vec<RunReport>>,
    /// Index of the reference in the runs.
    pub reference: Option<usize>,
    /// How much slower than the others each backend was on the unmutated seed.
    pub slow_baseline: BTreeMap<String, f64>,
    /// Whether this case is one of those run twice on every backend (flakiness).
    pub flaky_sample: bool,
    /// What numeric verdicts are learned under (seed and operator).
    pub context: String,
}

/// The triage's threads, one per pool, taking cases from one queue.
pub struct Triaging {
    cases: Sender<Case>,
    threads: Vec<JoinHandle<Pool>>,
}

impl Triaging {
    /// Starts one thread per pool, each applying `policy` (and sharing its memory).
    pub fn start(policy: &Triage, pools: Vec<Pool>, events: Sender<Event>) -> Triaging {
        let (cases, rx) = channel::<Case>();
        let rx = Arc::new(Mutex::new(rx));
        let threads = pools
            .into_iter()
            .map(|mut pool| {
                let (rx, events, mut policy) = (rx.clone(), events.clone(), policy.sharing());
                std::thread::spawn(move || {
                    while let Some(case) = next(&rx) {
                        let judged = judge(&mut policy, &mut pool, case);
                        if events.send(Event::Judged(Box::new(judged))).is_err() {
                            break;
                        }
                    }
                    pool
                })
            })
            .collect();
        Triaging { cases, threads }
    }

    /// Queues a case (cases are taken in the order they are queued).
    pub fn submit(&self, case: Case) {
        // The threads only end when this stage is stopped.
        let _ = self.cases.send(case);
    }

    /// Ends the threads once the queued cases are judged; returns their pools.
    pub fn stop(self) -> Vec<Pool> {
        drop(self.cases);
        self.threads
            .into_iter()
            .filter_map(|t| t.join().ok())
            .collect()
    }
}

/// The next case of the queue (`None`: the stage is stopping).
fn next(rx: &Mutex<Receiver<Case>>) -> Option<Case> {
    rx.lock().unwrap_or_else(|e| e.into_inner()).recv().ok()
}

fn judge(policy: &mut Triage, pool: &mut Pool, case: Case) -> Judged {
    let Case {
        job,
        runs,
        reference,
        slow_baseline,
        flaky_sample,
        context,
    } = case;
    let (Some(runs), Some(inputs)) = (runs, job.inputs.as_ref()) else {
        return Judged {
            job,
            runs: None,
            triaged: Vec::new(),
            reruns: 0,
            oracles_s: 0.0,
            triage_s: 0.0,
        };
    };
    let t = Instant::now();
    let mut mr = MutantRuns {
        runs,
        reference,
        reruns: Vec::new(),
        slow_baseline,
    };
    // Second runs: slowness candidates (confirmed by steady-state runs), and the sampled
    // cases on every backend but the reference (flakiness).
    let mut reruns = mutagraph_oracles::triage::reproduce::confirm_slowness(
        pool,
        job.mutant.bytes(),
        inputs,
        &mut mr,
    );
    if flaky_sample && reruns == 0 {
        let again: Vec<String> = mr.others().map(|r| r.backend.clone()).collect();
        for b in again {
            if let Ok(r) = pool.run(&b, job.mutant.bytes(), inputs) {
                mr.reruns.push(r);
                reruns += 1;
            }
        }
    }
    let oracles_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let triaged = policy.judge_in(pool, &job.mutant, inputs, &mr, &context);
    Judged {
        job,
        runs: Some(mr),
        triaged,
        reruns,
        oracles_s,
        triage_s: t.elapsed().as_secs_f64(),
    }
}
