//! Running a batch: the jobs of one batch, each run on every backend, one thread per (backend,
//! lane), backends concurrently.
use super::*;

/// One mutant of a batch, ready to run.
pub(super) struct Job {
    pub(super) iteration: u64,
    pub(super) op: usize,
    pub(super) seed: usize,
    pub(super) bytes: Vec<u8>,
    /// The time limit of each backend's run.
    pub(super) timeout: Duration,
    /// `None` when the inputs could not be generated (not executed).
    pub(super) inputs: Option<NamedValues>,
    /// The seed the inputs were generated from.
    pub(super) input_seed: u64,
    pub(super) records: Vec<Record>,
    pub(super) diverse: bool,
    /// The coverage items of a diverse mutant (its corpus entry's, for culling).
    pub(super) items: Vec<String>,
}

/// How the mutants of one seed are run, from what admission saw of the seed.
pub(super) struct SeedPlan {
    /// How their inputs are generated.
    pub(super) inputs: GenOptions,
    /// The time limit of each backend's run.
    pub(super) timeout: Duration,
    /// How much slower than the others each backend was on the seed.
    pub(super) slowness: BTreeMap<String, f64>,
}

/// Each job's run on each backend (`None` where the job had no inputs).
pub(super) type BatchRuns = Vec<Vec<Option<RunReport>>>;

/// Runs every job on every backend: one thread per (backend, lane), backends concurrently.
pub(super) fn execute_jobs(
    pools: &mut [Vec<Pool>],
    backends: &[String],
    jobs: &[Job],
) -> Result<Vec<Vec<Option<RunReport>>>> {
    let runnable: Vec<usize> = (0..jobs.len())
        .filter(|&i| jobs[i].inputs.is_some())
        .collect();
    let nb = backends.len();
    let mut results: Vec<Vec<Option<RunReport>>> = vec![vec![None; nb]; jobs.len()];
    let outcome: Vec<Result<Vec<(usize, usize, RunReport)>>> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (b, lanes) in pools.iter_mut().enumerate() {
            let nl = lanes.len();
            for (l, pool) in lanes.iter_mut().enumerate() {
                let name = &backends[b];
                let mine: Vec<usize> = runnable
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|(k, _)| k % nl == l)
                    .map(|(_, i)| i)
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                handles.push(s.spawn(move || -> Result<Vec<(usize, usize, RunReport)>> {
                    let mut v = Vec::new();
                    for i in mine {
                        let r = pool
                            .run_within(
                                name,
                                &jobs[i].bytes,
                                jobs[i].inputs.as_ref().expect("runnable"),
                                jobs[i].timeout,
                            )
                            .map_err(|e| anyhow!("backend '{name}': {e}"))?;
                        v.push((i, b, r));
                    }
                    Ok(v)
                }));
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("executor thread panicked")))
            })
            .collect()
    });
    for r in outcome {
        for (i, b, rep) in r? {
            results[i][b] = Some(rep);
        }
    }
    Ok(results)
}
