//! Runs mutants on every backend at once: one thread per (slot, backend), each with its own
//! worker pool, so the backends of one mutant run concurrently and `-j N` mutants are in
//! flight together.
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Pool, PoolOptions, RunReport};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

/// One mutant to run.
#[derive(Clone)]
pub struct Job {
    /// ONNX bytes.
    pub model: Arc<Vec<u8>>,
    /// Inputs.
    pub inputs: Arc<NamedValues>,
}

type Reply = (usize, Result<RunReport, String>);

struct Slot {
    senders: Vec<Sender<Job>>,
    replies: Receiver<Reply>,
    threads: Vec<JoinHandle<()>>,
}

/// The executor: `jobs` slots × the backends.
pub struct Executor {
    backends: Vec<String>,
    slots: Vec<Slot>,
}

impl Executor {
    /// Starts `jobs` slots of one worker thread per backend (the worker processes start on
    /// first use).
    pub fn new(backends: &[String], jobs: usize, opts: &PoolOptions) -> Executor {
        let mut slots = Vec::new();
        for _ in 0..jobs.max(1) {
            let (reply_tx, replies) = channel::<Reply>();
            let mut senders = Vec::new();
            let mut threads = Vec::new();
            for (i, b) in backends.iter().enumerate() {
                let (tx, rx) = channel::<Job>();
                let reply = reply_tx.clone();
                let backend = b.clone();
                let opts = opts.clone();
                threads.push(std::thread::spawn(move || {
                    let mut pool = Pool::new(opts);
                    while let Ok(job) = rx.recv() {
                        let r = pool
                            .run(&backend, &job.model, &job.inputs)
                            .map_err(|e| format!("{backend}: {e}"));
                        if reply.send((i, r)).is_err() {
                            break;
                        }
                    }
                    pool.shutdown();
                }));
                senders.push(tx);
            }
            slots.push(Slot {
                senders,
                replies,
                threads,
            });
        }
        Executor {
            backends: backends.to_vec(),
            slots,
        }
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Runs up to `slots()` jobs at once; per job, the reports in backend order. `Err` when a
    /// worker could not be started at all (an installation problem, not a finding).
    pub fn run(&mut self, jobs: &[Job]) -> Result<Vec<Vec<RunReport>>, String> {
        assert!(jobs.len() <= self.slots.len(), "more jobs than slots");
        for (job, slot) in jobs.iter().zip(&self.slots) {
            for s in &slot.senders {
                s.send(job.clone())
                    .map_err(|_| "a backend thread stopped".to_string())?;
            }
        }
        let mut out = Vec::with_capacity(jobs.len());
        let mut first_err = None;
        for slot in self.slots.iter().take(jobs.len()) {
            let mut reports: Vec<Option<RunReport>> = vec![None; self.backends.len()];
            for _ in 0..self.backends.len() {
                let (i, r) = slot
                    .replies
                    .recv()
                    .map_err(|_| "a backend thread stopped".to_string())?;
                match r {
                    Ok(rep) => reports[i] = Some(rep),
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
            out.push(reports.into_iter().flatten().collect());
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        for slot in &mut self.slots {
            slot.senders.clear();
            for t in slot.threads.drain(..) {
                let _ = t.join();
            }
        }
    }
}
