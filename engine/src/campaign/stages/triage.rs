//! The triage stage: one thread that judges each executed case (the oracles), makes its second
//! runs (slowness, flakiness) and triages its findings (localization, fresh-process checks,
//! what it learned of crashes and numeric noise), in the order the search generated the cases,
//! so its verdicts do not depend on `-j` or on timing. It owns its worker pool; the triage
//! policy ([`Triage`]) is shared with the campaign, which reads what it learned at commits
//! (when no case is in flight).
use super::{Event, Judged};
use crate::campaign::Job;
use mutagraph_backends::worker::{Pool, RunReport};
use mutagraph_oracles::MutantRuns;
use mutagraph_oracles::triage::Triage;
use std::collections::BTreeMap;
use std::sync::mpsc::{Sender, channel};
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

/// The triage's thread and the policy it applies.
pub struct Triaging {
    cases: Sender<Case>,
    thread: JoinHandle<Pool>,
}

impl Triaging {
    /// Starts the thread with its pool; `policy` is the campaign's triage.
    pub fn start(policy: Arc<Mutex<Triage>>, pool: Pool, events: Sender<Event>) -> Triaging {
        let (cases, rx) = channel::<Case>();
        let thread = std::thread::spawn(move || {
            let mut pool = pool;
            for case in rx {
                let judged = judge(&policy, &mut pool, case);
                if events.send(Event::Judged(Box::new(judged))).is_err() {
                    break;
                }
            }
            pool
        });
        Triaging { cases, thread }
    }

    /// Queues a case (cases are judged in the order they are queued).
    pub fn submit(&self, case: Case) {
        // The thread only ends when this stage is stopped.
        let _ = self.cases.send(case);
    }

    /// Ends the thread once the queued cases are judged; returns its pool.
    pub fn stop(self) -> Option<Pool> {
        drop(self.cases);
        self.thread.join().ok()
    }
}

fn judge(policy: &Mutex<Triage>, pool: &mut Pool, case: Case) -> Judged {
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
    let mut reruns =
        mutagraph_oracles::triage::reproduce::confirm_slowness(pool, &job.bytes, inputs, &mut mr);
    if flaky_sample && reruns == 0 {
        let again: Vec<String> = mr.others().map(|r| r.backend.clone()).collect();
        for b in again {
            if let Ok(r) = pool.run(&b, &job.bytes, inputs) {
                mr.reruns.push(r);
                reruns += 1;
            }
        }
    }
    let oracles_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let triaged = policy
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .judge_in(pool, &job.bytes, inputs, &mr, &context);
    Judged {
        job,
        runs: Some(mr),
        triaged,
        reruns,
        oracles_s,
        triage_s: t.elapsed().as_secs_f64(),
    }
}
