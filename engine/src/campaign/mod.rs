//! `mutagraph campaign`: the coverage-guided mutation campaign (MEMO Algorithm 2).
//!
//! Each iteration selects a seed ⟨pool model, operator⟩ ([`mcmc`]), applies the operator to a
//! copy of the model, exports the mutant, generates seeded inputs, runs it on every backend of
//! the set (each backend in its own worker, backends concurrently: [`executor`]), judges the
//! runs through the triage and records what it finds ([`record`]), and updates the coverage and
//! the scheduler. A mutant that covers a new op type, op pair or parameter bucket is *diverse*:
//! it replaces its parent in the pool and goes to the corpus.
//!
//! The search never depends on what the backends did: it is a pure function of `--seed`, the
//! seeds and the operators, so results do not depend on `-j`, on timing, or on how often the
//! campaign was stopped and resumed. Every random stream of iteration `i` is derived from
//! `(--seed, i)`, so the "RNG state" saved in `state.json` is the iteration counter.
//!
//! The rooms: [`config`] (settings and resume checks), [`seeds`] (loading and reducing seeds),
//! [`admission`] (each seed's first run), [`start`] (a fresh or resumed session), this module
//! (the loop: generate, run, judge, commit), [`executor`], [`record`], [`state`] (what is
//! persisted), [`timeseries`], [`status`], [`writer`] (corpus files off the main thread),
//! [`lock`] (one campaign per directory), [`sync`] (instances sharing a sync directory);
//! the corpus's files and disk budget are [`crate::corpus`]; minimization is the peer stage
//! [`crate::minimizer`].
//!
//! Output directory (every file written atomically: temporary file, fsync, rename; corpus
//! entries on the [`writer`]'s thread, on disk before the state that names them):
//! * `campaign.toml`: the effective configuration; `admission.json`: each seed's first run.
//! * `seeds/<name>.onnx`: the seed models (as admitted: their input shapes declared), and the
//!   seeds derived from them (`<name>.reduced.onnx`, `<name>.window-K.onnx` with the captured
//!   inputs in `<name>.window-K.inputs.npz`).
//! * `corpus/<id>.onnx` + `corpus/<id>.trace.json`: diverse mutants, with the seed name and every
//!   mutation record from the seed (`mutation::replay_trace` rebuilds the exact bytes).
//! * `findings/<kind>-<library>-<op>-<hash>/`: one bug bundle per signature
//!   ([`crate::bundle`]); `merged/`, `unconfirmed/` and `ours/` beside it.
//! * `stats.json` and a `timeseries.csv` row about once a second; `state.json`, the resume
//!   point, written last in each commit (every [`COMMIT_EVERY`], after the batch crossing it).
//!   `stats.json`, `state.json` and `meta.json` carry a format version
//!   ([`crate::persisted`]).
pub mod admission;
mod case;
pub mod config;
mod derive;
mod intake;
pub mod lock;
pub mod mcmc;
mod pipeline;
mod stages;

mod record;
pub mod seeds;
mod session;
mod start;
pub mod state;
pub mod status;
pub mod sync;
mod timeseries;
pub mod writer;

use case::{Job, SeedPlan};
pub use config::{Config, Request, parse_duration};
use seeds::typed;
pub use seeds::{Seed, load_seeds};
use session::Outputs;
pub use start::run;
pub use state::{
    BackendTime, Counters, OURS_KEPT, OpCounters, SessionStart, Slot, State, Stats, Summary,
    Timings, corpus_id,
};
use timeseries::open_timeseries;

use crate::bundle;
use crate::findings::{Seen, SigEntry};
use crate::minimizer::{Finished, MinimizeJob, Minimizer, NotShown, WholeModel};
use crate::persisted::Versioned;
use anyhow::{Context, Result, anyhow, bail};
use mcmc::{Scheduler, SeedStats};
use mutagraph_backends::backend::Stage;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{LANE_NICE, Outcome as RunOutcome, Pool, PoolOptions, RunReport};
use mutagraph_ir::model::write_atomic;
use mutagraph_ir::solve::Fixed;
use mutagraph_ir::{Model, validate};
use mutagraph_mutators::builder::SplitMix64;
use mutagraph_mutators::coverage::{Coverage, Report};
use mutagraph_mutators::mutation::{Ctx, Limits, Mutator, Outcome, Record};
use mutagraph_mutators::operators;
use mutagraph_mutators::recipes::Recipes;
use mutagraph_mutators::zoo;
use mutagraph_oracles::triage::{
    KnownCrashes, KnownQuiet, Memory, Triage, TriageStats, Triaged, Verdict,
};
use mutagraph_oracles::{Mutant, MutantRuns};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The state is committed at most this often (after the batch that crosses it): each commit
/// costs fsyncs. A kill loses only uncommitted iterations, which the resumed run redoes
/// identically (the search is deterministic).
pub const COMMIT_EVERY: Duration = Duration::from_millis(1000);

/// One executed mutant in this many is run a second time on every backend (flakiness).
pub const FLAKY_EVERY: u64 = 64;

/// The campaign stops (cleanly, resumable) when its filesystem has less than this free.
pub const MIN_FREE: u64 = 256_000_000;

/// How often the directory outside the corpus is measured (a walk of `findings/` and the rest),
/// and the filesystem's free space checked.
const OTHER_EVERY: Duration = Duration::from_secs(10);

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(v)?;
    write_atomic(path, &bytes).with_context(|| format!("writing {}", path.display()))
}

fn mix(seed: u64, iteration: u64, stream: u64) -> u64 {
    let mut r = SplitMix64::new(
        seed ^ iteration.wrapping_mul(0xD1B5_4A32_D192_ED03)
            ^ stream.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7),
    );
    r.next_u64()
}

/// The campaign in memory.
struct Campaign {
    out: PathBuf,
    /// How each seed's (and its mutants') inputs are generated and run, as admission chose.
    seed_inputs: Vec<SeedPlan>,
    config: Config,
    seeds: Vec<Seed>,
    ops: Vec<Box<dyn Mutator>>,
    recipes: Recipes,
    /// The recipes of each seed opset (a mutant takes those of its model's opset).
    recipes_at: BTreeMap<i64, Recipes>,
    limits: Limits,
    scheduler: Box<dyn Scheduler>,
    /// The triage policy: oracles, verdicts, and the memory of what it learned, which the
    /// triage stage's threads share.
    stage: Triage,
    reference: Option<usize>,
    state: State,
    seed_coverage: Report,
    /// Current model and trace of each pool slot.
    models: Vec<(Model, Vec<Record>)>,
    /// Worker pools: `[backend][lane]`.
    pools: Vec<Vec<Pool>>,
    /// The pools of re-runs and the triage's runs, one per triage thread (one worker per
    /// backend it needs; the triage stage holds them while the pipeline runs).
    triage: Vec<Pool>,
    /// The named tolerance of the inconsistency oracle and localization.
    tolerance: Tolerance,
    /// Signatures whose `meta.json` must be rewritten at the next commit.
    dirty: BTreeSet<String>,
    /// Signatures whose documents lag their `meta.json`, and since when
    /// ([`bundle::DOCS_EVERY`]).
    stale_docs: BTreeMap<String, Instant>,
    /// The background minimizer.
    minimizer: Option<Minimizer>,
    /// Seconds the end of a session waits for pending minimizations.
    minimize_grace: Duration,
    /// Writes the corpus entries off the main thread.
    corpus: writer::Writer,
    /// What the corpus holds on disk, for the disk budget.
    corpus_index: crate::corpus::Index,
    /// Bytes of the campaign directory outside the corpus, as last measured.
    other_bytes: crate::corpus::budget::Other,
    /// When `other_bytes` was measured.
    other_measured: Instant,
    /// Whether the warning that the directory is over its budget was printed.
    warned_over: bool,
    /// Whether the campaign stopped because its filesystem was nearly full.
    disk_full: bool,
    /// The sync directory shared with other instances (`--sync-dir`).
    shared: Option<sync::Shared>,
    /// Campaign time of this session's last new unique finding (the status shows it).
    last_find: Option<f64>,
}

impl Campaign {
    fn main_loop(&mut self, quiet: bool, fresh: bool) -> Result<Summary> {
        let elapsed0 = self.state.elapsed_s;
        self.state.sessions.push(SessionStart {
            iteration: self.state.iteration,
            elapsed_s: elapsed0,
        });
        let mut out = Outputs::open(self, quiet, fresh)?;
        if fresh {
            self.commit_state(elapsed0, true)?;
        }
        let ran = self.pipeline(&mut out);
        let mut pending_min = 0;
        if !quiet && self.minimizer.as_ref().is_some_and(|m| m.pending() > 0) {
            out.status_now(self);
        }
        if let Some(m) = &mut self.minimizer {
            m.wait_idle(self.minimize_grace);
            pending_min = m.pending();
            m.stop();
        }
        ran?;
        let elapsed = out.elapsed();
        self.state.elapsed_s = elapsed;
        self.commit_state(elapsed, true)?;
        self.renew_stale_docs(true)?;
        out.row(self, elapsed)?;
        self.minimizer = None;
        for p in &mut self.triage {
            p.shutdown();
        }
        if !quiet {
            out.status_now(self);
        }
        Ok(Summary {
            out: self.out.clone(),
            iterations: self.state.iteration,
            executions: self.state.counters.executions,
            findings: self.state.counters.findings,
            unique_findings: self.state.counters.unique_findings,
            minimized: self.state.counters.minimized,
            minimizations_pending: pending_min,
            elapsed_s: elapsed,
            session_s: out.session(),
            stopped_by: if self.disk_full {
                Some("low disk space".into())
            } else {
                crate::interrupt::which().map(String::from)
            },
            bundles: state::BundleLine::of(&self.out, &self.state.signatures),
        })
    }

    /// Iterations of the next batch (`-j`, or what is left of `--iterations`).
    fn batch_size(&self) -> u64 {
        let remaining = match self.config.iterations {
            Some(n) => n.saturating_sub(self.state.iteration),
            None => u64::MAX,
        };
        (self.config.jobs as u64).min(remaining)
    }

    /// Selects, mutates, exports and prepares inputs for `n` iterations; updates the search
    /// (scheduler, pool, coverage) as it goes.
    fn generate(&mut self, n: u64) -> Result<Vec<Job>> {
        let mut jobs = Vec::new();
        for k in 0..n {
            let it = self.state.iteration + k;
            let seed_master = self.state.rng_seed;
            let t = Instant::now();
            let mut sel_rng = SplitMix64::new(mix(seed_master, it, 1));
            let seed = self.scheduler.select(&mut self.state.seeds, &mut sel_rng);
            let (slot, op) = self.state.seeds.split(seed);
            let tm = &mut self.state.timings;
            tm.select += t.elapsed().as_secs_f64();
            let counters = &mut self.state.counters;
            counters.iterations += 1;
            counters.per_operator[op].selected += 1;

            // A slot whose model has grown far toward the node limit starts again from its
            // seed: operators that add ops would mostly be skipped on it.
            let seed_nodes = self.seeds[self.state.pool[slot].seed]
                .model
                .graph
                .node_count();
            let limits = self.limits.for_seed(seed_nodes);
            if self
                .limits
                .grown_out(seed_nodes, self.models[slot].0.graph.node_count())
            {
                let seed_model = self.seeds[self.state.pool[slot].seed].model.clone();
                self.models[slot] = (seed_model, Vec::new());
                self.state.pool[slot].corpus = None;
                self.state.counters.pool_resets += 1;
            }
            let tm = &mut self.state.timings;
            let counters = &mut self.state.counters;
            let t = Instant::now();
            let mut model = self.models[slot].0.clone();
            let mut mrng = SplitMix64::new(mix(seed_master, it, 2));
            let outcome = {
                let mut ctx = Ctx {
                    rng: &mut mrng,
                    coverage: &self.state.coverage,
                    recipes: self
                        .recipes_at
                        .get(&model.default_opset())
                        .unwrap_or(&self.recipes),
                    limits: &limits,
                };
                // An operator that panics (a bug of ours) costs one illegal mutant, not the
                // campaign; the copy it worked on is dropped.
                let mutator = &self.ops[op];
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    mutator.mutate(&mut model, &mut ctx)
                }))
                .unwrap_or_else(|_| Outcome::Rejected(format!("{} panicked", mutator.name())))
            };
            tm.mutate += t.elapsed().as_secs_f64();
            let record = match outcome {
                Outcome::Skipped(_) => {
                    counters.skipped += 1;
                    counters.per_operator[op].skipped += 1;
                    continue;
                }
                Outcome::Rejected(_) => {
                    counters.rejected += 1;
                    counters.per_operator[op].illegal += 1;
                    continue;
                }
                Outcome::Mutated(r) => r,
            };
            counters.mutants += 1;
            counters.per_operator[op].mutated += 1;
            let t = Instant::now();
            let mutant = Mutant::new(model.to_bytes());
            tm.export += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let input_seed = mix(seed_master, it, 3);
            let plan = &self.seed_inputs[self.state.pool[slot].seed];
            let (gen_opts, timeout) = (&plan.inputs, &plan.timeout);
            let ins = inputs::generate(&model, input_seed, gen_opts);
            tm.inputs += t.elapsed().as_secs_f64();
            let t = Instant::now();
            // Every generated mutant joins M' (Alg. 2 line 12); it is diverse when it grew a
            // MEMO family (types, pairs, parameters).
            let delta = self.state.coverage.add_model(&model);
            let diverse = delta.is_diverse();
            // A diverse mutant's own items, which its corpus entry lists for culling.
            let items = if diverse {
                let mut own = Coverage::new(self.state.coverage.universe().clone());
                own.add_model(&model);
                own.item_keys()
            } else {
                Vec::new()
            };
            let mut records = self.models[slot].1.clone();
            records.push(record);
            if diverse {
                self.state.seeds.record_diverse(seed);
                counters.diverse += 1;
                counters.per_operator[op].diverse += 1;
                // UpdateSeeds: the mutant replaces its parent (as it will be reloaded from the
                // corpus on resume, so both paths mutate the same model).
                let reloaded = mutant.model().cloned().unwrap_or_else(|| model.clone());
                self.models[slot] = (reloaded, records.clone());
                self.state.pool[slot].corpus = Some(corpus_id(it));
            }
            tm.coverage += t.elapsed().as_secs_f64();
            let inputs = match ins {
                Ok(v) => Some(v),
                Err(_) => {
                    counters.inputs_failed += 1;
                    counters.per_operator[op].illegal += 1;
                    None
                }
            };
            if inputs.is_some() || diverse {
                jobs.push(Job {
                    iteration: it,
                    op,
                    seed: self.state.pool[slot].seed,
                    selected: Some(seed),
                    mutant,
                    timeout: *timeout,
                    inputs,
                    input_seed,
                    records,
                    diverse,
                    items,
                });
            }
        }
        self.state.iteration += n;
        // The corpus entries are written now (while the backends run the previous batch);
        // the state that names them is committed only after this batch is judged.
        let t = Instant::now();
        for job in jobs.iter().filter(|j| j.diverse) {
            self.write_corpus(job)?;
        }
        self.state.timings.io += t.elapsed().as_secs_f64();
        Ok(jobs)
    }

    fn write_corpus(&mut self, job: &Job) -> Result<()> {
        let seed = &self.seeds[job.seed];
        let entry = crate::corpus::NewEntry::new(
            &seed.name,
            &format!("seeds/{}", seed.file),
            job.iteration,
            &job.records,
            job.mutant.bytes().to_vec(),
            job.items.clone(),
        )?;
        self.write_entry(&corpus_id(job.iteration), entry)
    }

    /// Queues a corpus entry's files on the writer, in their order (records not yet on disk,
    /// trace, model: see [`crate::corpus::NewEntry`]), and counts it in the index.
    fn write_entry(&mut self, id: &str, entry: crate::corpus::NewEntry) -> Result<()> {
        use crate::corpus::store::{model_path, record_path, trace_path};
        let dir = self.out.join("corpus");
        let trace = entry.trace_bytes()?;
        let mut new_records = Vec::new();
        for (hash, json) in &entry.records {
            if self.corpus_index.has_record(hash) || new_records.iter().any(|(h, _)| h == hash) {
                continue;
            }
            new_records.push((hash.clone(), json.len() as u64));
            self.corpus
                .write(writer::File {
                    path: record_path(&dir, hash),
                    bytes: json.clone(),
                })
                .map_err(|e| anyhow!(e))?;
        }
        let trace_size = trace.len() as u64;
        let files = [
            writer::File {
                path: trace_path(&dir, id),
                bytes: trace,
            },
            writer::File {
                path: model_path(&dir, id),
                bytes: entry.model,
            },
        ];
        for f in files {
            self.corpus.write(f).map_err(|e| anyhow!(e))?;
        }
        self.corpus_index
            .add(id, &entry.trace, trace_size, &new_records);
        Ok(())
    }

    /// After a commit: measures the directory now and then, brings it back under `--max-disk`
    /// (never touching the entries the pool holds), and stops the campaign when its filesystem
    /// is nearly full.
    fn enforce_disk(&mut self) -> Result<()> {
        if self.other_measured.elapsed() >= OTHER_EVERY {
            self.other_bytes = crate::corpus::budget::other_bytes(&self.out);
            self.other_measured = Instant::now();
            if let Some(free) = crate::corpus::budget::free_bytes(&self.out)
                && free < MIN_FREE
                && !crate::interrupt::requested()
            {
                eprintln!(
                    "stopping: only {} MB free on the filesystem of {} (the campaign stops \
                     below {} MB; resume it once there is space)",
                    free / 1_000_000,
                    self.out.display(),
                    MIN_FREE / 1_000_000
                );
                self.disk_full = true;
                crate::interrupt::request();
            }
        }
        let budget = self.config.max_disk;
        if budget == 0 {
            return Ok(());
        }
        let keep: BTreeSet<String> = self
            .state
            .pool
            .iter()
            .filter_map(|s| s.corpus.clone())
            .collect();
        let still_over = self
            .corpus_index
            .enforce(
                budget,
                self.other_bytes.bytes,
                &keep,
                &mut self.state.pruned,
            )
            .map_err(|e| anyhow!("enforcing --max-disk: {e}"))?;
        if still_over && !self.warned_over {
            self.warned_over = true;
            eprintln!(
                "warning: {} is over its --max-disk of {} MB with only the entries the \
                 campaign needs left in its corpus (findings and the rest use {} MB, of which \
                 seeds/ {} MB)",
                self.out.display(),
                budget / 1_000_000,
                self.other_bytes.bytes / 1_000_000,
                self.other_bytes.seeds / 1_000_000
            );
        }
        Ok(())
    }

    fn stats(&self, elapsed: f64) -> Stats {
        let c = &self.state.counters;
        let tm = &self.state.timings;
        Stats {
            version: Stats::VERSION,
            counters: c.clone(),
            elapsed_s: elapsed,
            execs_per_s: if elapsed > 0.0 {
                c.executions as f64 / elapsed
            } else {
                0.0
            },
            illegal: c.illegal(),
            illegal_percent: c.illegal_percent(),
            coverage: Some(self.state.coverage.report()),
            seed_coverage: Some(self.seed_coverage.clone()),
            timings: tm.clone(),
            outside_backends_percent: if elapsed > 0.0 {
                (100.0 * (1.0 - (tm.backends_busy + tm.triage) / elapsed)).max(0.0)
            } else {
                0.0
            },
            pool: self.state.pool.clone(),
            triage: self.state.triage.clone(),
            sessions: self.state.sessions.clone(),
            corpus: Some(self.corpus_stats()),
            rewrites: self.rewrite_coverage(),
            contrib_ops: self.contrib_coverage(),
        }
    }

    /// The rewrites each backend applied, against its known ones ([`known_rewrites`]).
    fn rewrite_coverage(&self) -> Vec<crate::persisted::stats::RewriteCoverage> {
        self.state
            .rewrites
            .iter()
            .map(|(b, fired)| {
                let prefix = format!("{b}: ");
                let combinations = self
                    .state
                    .rewrite_sets
                    .iter()
                    .filter(|s| s.starts_with(&prefix))
                    .count();
                let (known, from) = known_rewrites(b);
                crate::persisted::stats::RewriteCoverage::of(b, fired, (&known, from), combinations)
            })
            .collect()
    }

    /// The `com.microsoft` ops of the universe, covered or not (`None` when it has none: no
    /// backend under test runs them).
    fn contrib_coverage(&self) -> Option<crate::persisted::stats::ContribCoverage> {
        let u = self.state.coverage.universe();
        let (covered, uncovered): (Vec<String>, Vec<String>) = u
            .op_types()
            .filter(|o| o.starts_with("com.microsoft::"))
            .map(String::from)
            .partition(|o| self.state.coverage.has_op(o));
        (!covered.is_empty() || !uncovered.is_empty())
            .then_some(crate::persisted::stats::ContribCoverage { covered, uncovered })
    }

    /// Stats (when `with_stats`), then state: the state is the commit point (the corpus files
    /// and findings of the committed iterations are already on disk).
    fn commit_state(&mut self, elapsed: f64, with_stats: bool) -> Result<()> {
        let t = Instant::now();
        self.corpus.flush().map_err(|e| anyhow!(e))?;
        self.flush_findings()?;
        if with_stats {
            write_json(&self.out.join("stats.json"), &self.stats(elapsed))?;
        }
        {
            // Nothing is in flight at a commit: the triage stage holds no case.
            let memory = self.stage.memory();
            self.state.triage = memory.stats.clone();
            self.state.known_crashes = memory.known.clone();
            self.state.known_quiet = memory.quiet.clone();
        }
        write_json(&self.out.join("state.json"), &self.state)?;
        // Deletions only after the commit: the committed state names no entry they touch (the
        // pool's are kept). What they did is committed at once when they did anything (a kill
        // in between loses only those counts, never a file the state names).
        let before = self.state.pruned.clone();
        self.enforce_disk()?;
        if self.state.pruned != before {
            if with_stats {
                write_json(&self.out.join("stats.json"), &self.stats(elapsed))?;
            }
            write_json(&self.out.join("state.json"), &self.state)?;
        }
        self.state.timings.io += t.elapsed().as_secs_f64();
        Ok(())
    }

    fn corpus_stats(&self) -> crate::corpus::CorpusStats {
        self.corpus_index.stats(
            self.other_bytes,
            (self.config.max_disk > 0).then_some(self.config.max_disk),
            &self.state.pruned,
        )
    }
}

/// The known rewrites of a backend, and where they come from: its list of rewrites over the
/// ONNX backend test suite where the catalog has one (tract's), else, for ONNX Runtime, the
/// rewrites the pattern library is made for; none for other backends.
fn known_rewrites(backend: &str) -> (Vec<&'static str>, &'static str) {
    use mutagraph_backends::catalog::{self, Library};
    let listed = catalog::info(backend).map_or("", |b| b.suite_rewrites);
    if !listed.is_empty() {
        let known = mutagraph_backends::conformance::list_entries(listed).collect();
        return (known, crate::persisted::stats::FROM_SUITE);
    }
    match catalog::library(backend) {
        Library::OnnxRuntime => (
            mutagraph_mutators::patterns::targeted_rewrites(),
            crate::persisted::stats::FROM_PATTERNS,
        ),
        _ => (Vec::new(), ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_iteration_and_stream() {
        assert_ne!(mix(1, 0, 1), mix(1, 1, 1));
        assert_ne!(mix(1, 0, 1), mix(1, 0, 2));
        assert_ne!(mix(1, 0, 1), mix(2, 0, 1));
        assert_eq!(mix(7, 9, 3), mix(7, 9, 3));
    }
}
