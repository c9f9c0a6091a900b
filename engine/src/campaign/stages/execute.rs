//! The execute stage: every case runs on every backend of the set, each backend in `-j` lanes.
//! A lane is a thread with its own worker pool; the lanes of one backend take cases from one
//! queue, so a fast backend never waits for a slow one and a slow case never holds a lane of
//! another backend. Cases leave the stage whole (a report from every backend).
use super::{Event, Seq};
use crate::campaign::Job;
use mutagraph_backends::worker::{Pool, RunReport};
use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The lanes of every backend, and the runs of the cases not yet whole.
pub struct Execute {
    /// One queue per backend.
    queues: Vec<Sender<(Seq, Arc<Job>)>>,
    lanes: Vec<JoinHandle<Pool>>,
    /// Reports of the cases in flight, by backend.
    partial: HashMap<Seq, Vec<Option<RunReport>>>,
    backends: usize,
    /// Wall seconds of every run, summed.
    pub run_s: f64,
}

impl Execute {
    /// Starts the lanes: `pools[b]` are backend `b`'s (one per lane), `names[b]` its name.
    pub fn start(pools: Vec<Vec<Pool>>, names: &[String], events: Sender<Event>) -> Execute {
        let mut queues = Vec::new();
        let mut lanes = Vec::new();
        for (b, pools) in pools.into_iter().enumerate() {
            let (tx, rx) = channel::<(Seq, Arc<Job>)>();
            let rx = Arc::new(Mutex::new(rx));
            for pool in pools {
                let (rx, events, name) = (rx.clone(), events.clone(), names[b].clone());
                lanes.push(std::thread::spawn(move || {
                    lane(pool, b, &name, &rx, &events)
                }));
            }
            queues.push(tx);
        }
        Execute {
            queues,
            lanes,
            partial: HashMap::new(),
            backends: names.len(),
            run_s: 0.0,
        }
    }

    /// Queues case `seq` on every backend.
    pub fn submit(&mut self, seq: Seq, job: &Arc<Job>) {
        self.partial.insert(seq, vec![None; self.backends]);
        for q in &self.queues {
            // A lane only ends when its queue is closed (in `stop`).
            let _ = q.send((seq, job.clone()));
        }
    }

    /// Takes one backend's report; returns the case's reports once every backend has given one.
    pub fn collect(&mut self, seq: Seq, backend: usize, r: RunReport) -> Option<Vec<RunReport>> {
        self.run_s += r.wall_ms / 1e3;
        let runs = self.partial.get_mut(&seq)?;
        runs[backend] = Some(r);
        if runs.iter().any(Option::is_none) {
            return None;
        }
        self.partial
            .remove(&seq)
            .map(|v| v.into_iter().flatten().collect())
    }

    /// Closes the queues and waits for the lanes; returns their pools, by backend and lane.
    pub fn stop(self) -> Vec<Pool> {
        drop(self.queues);
        self.lanes
            .into_iter()
            .filter_map(|h| h.join().ok())
            .collect()
    }
}

fn lane(
    mut pool: Pool,
    backend: usize,
    name: &str,
    queue: &Mutex<Receiver<(Seq, Arc<Job>)>>,
    events: &Sender<Event>,
) -> Pool {
    loop {
        let next = match queue.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => break,
        };
        let Ok((seq, job)) = next else { break };
        let inputs = job
            .inputs
            .as_ref()
            .expect("only executable cases are queued");
        let report = pool
            .run_within(name, job.mutant.bytes(), inputs, job.timeout)
            .map_err(|e| format!("backend '{name}': {e}"));
        if events
            .send(Event::Ran {
                seq,
                backend,
                report,
            })
            .is_err()
        {
            break;
        }
    }
    pool
}
