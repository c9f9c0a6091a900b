//! `mutagraph campaign`: the coverage-guided mutation loop (MEMO Alg. 2) over a seed pool,
//! with every mutant run on every backend in worker processes and judged by the oracles.
//!
//! Output directory:
//! * `campaign.toml`: the effective configuration (a second run on the same directory resumes);
//! * `seeds/<name>.onnx`: the (reduced) seed models the traces start from;
//! * `corpus/<id>.onnx` + `corpus/<id>.trace.json`: every mutant that added coverage, with its
//!   seed and the full list of mutation records from the seed (replayable);
//! * `findings/<iteration>-<kind>-<backend>/`: model, inputs, `report.json`;
//! * `stats.json` (counters, coverage per family, per operator, time split) and
//!   `timeseries.csv` (one row per second);
//! * `state.json`: what resuming needs (RNG state, pool, scheduler statistics, coverage).
//!
//! Every file is written atomically (temporary file + rename; finding directories are renamed
//! into place whole). The state is written last, so a kill at any moment leaves a state that
//! names only files that exist; iterations after the last state are redone identically on
//! resume (the loop is deterministic for a given seed).
pub mod exec;
pub mod mcmc;

use anyhow::{Context, Result, bail};
use exec::{Executor, Job};
use mcmc::{Mcmc, RandomSearch, Scheduler, SeedStats};
use mutagraph_backends::Stage;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Outcome, PoolOptions, RunReport};
use mutagraph_ir::Model;
use mutagraph_ir::model::write_atomic;
use mutagraph_mutators::builder::SplitMix64;
use mutagraph_mutators::coverage::{Coverage, Report};
use mutagraph_mutators::mutation::{Ctx, Limits, Mutator, Outcome as MutOutcome, Record};
use mutagraph_mutators::operators;
use mutagraph_mutators::recipes::Recipes;
use mutagraph_oracles::{Finding, MutantRuns, Oracle};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The effective configuration, saved as `campaign.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// `zoo`, directories of .onnx files, or files.
    pub seeds: Vec<String>,
    /// Backends every mutant runs on.
    pub backends: Vec<String>,
    /// The ground truth among them (`reference`), if any.
    pub reference: Option<String>,
    /// Seed of the campaign's random stream.
    pub seed: u64,
    /// `mcmc` or `random`.
    pub search: String,
    /// The geometric distribution's p (None: [`Mcmc::default_p`]).
    pub mcmc_p: Option<f64>,
    /// Reduce the seeds first (MEMO Alg. 1).
    pub reduce: bool,
    /// Tolerance of the inconsistency oracle.
    pub tolerance: String,
    /// Findings written per (kind, backend, operator); the rest are counted.
    pub findings_per_key: u64,
    /// Size bounds of mutants.
    pub limits: Limits,
}

/// What one invocation does (not saved: may change between resumes).
pub struct RunOptions {
    /// Wall-clock budget of this invocation.
    pub time: Option<Duration>,
    /// Total iterations of the campaign (selections), across resumes.
    pub iterations: Option<u64>,
    /// Mutants in flight.
    pub jobs: usize,
    /// No status line, no summary.
    pub quiet: bool,
    /// Worker pool options.
    pub pool: PoolOptions,
}

/// Campaign-wide counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    /// Seed selections.
    pub iterations: u64,
    /// Mutations that changed the model.
    pub mutated: u64,
    /// Mutations that did not apply.
    pub skipped: u64,
    /// Mutations whose edit failed validation (illegal).
    pub rejected: u64,
    /// Mutants whose inputs could not be generated.
    pub input_errors: u64,
    /// Mutants run on the backends.
    pub executions: u64,
    /// Mutants no backend could load or compile (illegal).
    pub illegal_load: u64,
    /// Mutants that added coverage.
    pub diverse: u64,
    /// Corpus entries written.
    pub corpus: u64,
    /// Findings, all kinds.
    pub findings: u64,
    /// Findings by kind.
    pub findings_by_kind: BTreeMap<String, u64>,
}

/// Per-operator counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpCounters {
    /// Operator name.
    pub name: String,
    /// Times selected.
    pub selected: u64,
    /// Times it changed the model.
    pub mutated: u64,
    /// Times it did not apply.
    pub skipped: u64,
    /// Times its edit failed validation.
    pub rejected: u64,
    /// Mutants of it no backend could load.
    pub illegal_load: u64,
    /// Diverse mutants made with it.
    pub diverse: u64,
    /// Findings on its mutants.
    pub findings: u64,
}

/// Where wall time goes, seconds (cumulative across resumes).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Times {
    /// Seed selection and mutation (validation included).
    pub mutate: f64,
    /// Export to ONNX bytes.
    pub export: f64,
    /// Input generation.
    pub inputs: f64,
    /// Waiting for the backends.
    pub backends: f64,
    /// Oracles.
    pub oracles: f64,
    /// Coverage and scheduler updates.
    pub coverage: f64,
    /// Writing corpus, findings, state, stats.
    pub io: f64,
    /// Wall time of the loop.
    pub wall: f64,
}

/// One model slot of the pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolSlot {
    /// The seed it descends from.
    pub seed: String,
    /// Its corpus id (None: still the seed itself).
    pub id: Option<String>,
}

/// Everything resuming needs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    /// Format version.
    pub format: u32,
    /// RNG state.
    pub rng: u64,
    /// Pool.
    pub pool: Vec<PoolSlot>,
    /// Operator names, in the scheduler's order.
    pub operators: Vec<String>,
    /// Scheduler statistics.
    pub seeds: SeedStats,
    /// Coverage so far.
    pub coverage: Coverage,
    /// Counters.
    pub counters: Counters,
    /// Per operator.
    pub per_operator: Vec<OpCounters>,
    /// Time split.
    pub times: Times,
    /// Findings per key.
    pub finding_keys: BTreeMap<String, u64>,
    /// Length of `timeseries.csv` at the last save.
    pub timeseries_len: u64,
}

/// The trace file of a corpus entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Trace {
    /// Seed name (`seeds/<seed>.onnx`).
    pub seed: String,
    /// Parent corpus id (None: the seed).
    pub parent: Option<String>,
    /// Iteration that made it.
    pub iteration: u64,
    /// What it newly covered.
    pub new_coverage: mutagraph_mutators::coverage::Delta,
    /// Every mutation from the seed, in order.
    pub records: Vec<Record>,
}

struct Member {
    model: Model,
    records: Vec<Record>,
}

/// Paths of the output directory.
pub struct Dirs {
    /// Root.
    pub root: PathBuf,
}

impl Dirs {
    fn file(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
    fn corpus(&self) -> PathBuf {
        self.root.join("corpus")
    }
    fn seeds(&self) -> PathBuf {
        self.root.join("seeds")
    }
    fn findings(&self) -> PathBuf {
        self.root.join("findings")
    }
}

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(v)?;
    write_atomic(path, &bytes).with_context(|| format!("writing {}", path.display()))
}

/// Loads the seed models named by `--seeds`: (name, model), names unique.
pub fn load_seeds(specs: &[String]) -> Result<Vec<(String, Model)>> {
    let mut out: Vec<(String, Model)> = Vec::new();
    let push = |name: String, m: Model, out: &mut Vec<(String, Model)>| {
        let mut n = name.clone();
        let mut k = 2;
        while out.iter().any(|(x, _)| *x == n) {
            n = format!("{name}-{k}");
            k += 1;
        }
        out.push((n, m));
    };
    for s in specs {
        if s == "zoo" {
            for (name, m) in mutagraph_mutators::zoo::all() {
                push(name.to_string(), m, &mut out);
            }
            continue;
        }
        let p = Path::new(s);
        let files: Vec<PathBuf> = if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("{}: cannot list seeds", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "onnx"))
                .collect();
            v.sort();
            if v.is_empty() {
                bail!("{}: no .onnx seed models in this directory", p.display());
            }
            v
        } else {
            vec![p.to_path_buf()]
        };
        for f in files {
            let m = Model::load(&f).map_err(|e| anyhow::anyhow!("seed {}: {e}", f.display()))?;
            mutagraph_ir::validate::validate(&m)
                .map_err(|e| anyhow::anyhow!("seed {}: not a valid model: {e}", f.display()))?;
            let name = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "seed".into());
            push(name, m, &mut out);
        }
    }
    if out.is_empty() {
        bail!("no seed models (use --seeds zoo, a directory or .onnx files)");
    }
    Ok(out)
}

/// Seed reduction (MEMO Alg. 1).
fn reduce_seed(m: &Model) -> Model {
    match mutagraph_mutators::reduce::reduce(m) {
        Ok((r, _)) => r,
        Err(_) => m.clone(),
    }
}

/// The campaign.
pub struct Campaign {
    cfg: Config,
    dirs: Dirs,
    state: State,
    members: Vec<Member>,
    recipes: Recipes,
    ops: Vec<Box<dyn Mutator>>,
    oracles: Vec<Box<dyn Oracle>>,
    scheduler: Box<dyn Scheduler>,
    rng: SplitMix64,
    seed_names: Vec<String>,
}

/// The summary of one invocation.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Iterations done by this invocation.
    pub iterations: u64,
    /// Executions done by this invocation.
    pub executions: u64,
    /// Its wall time, seconds.
    pub seconds: f64,
    /// Coverage at the end.
    pub coverage: Report,
    /// Counters at the end.
    pub counters: Counters,
}

impl Campaign {
    /// Starts a new campaign in `out` or resumes the one there (`cfg` must then match the saved
    /// configuration; pass `None` to take the saved one).
    pub fn open(out: &Path, cfg: Option<Config>) -> Result<Campaign> {
        let dirs = Dirs {
            root: out.to_path_buf(),
        };
        let cfg_path = dirs.file("campaign.toml");
        let state_path = dirs.file("state.json");
        let saved: Option<Config> =
            if cfg_path.exists() {
                let text = std::fs::read_to_string(&cfg_path)
                    .with_context(|| format!("reading {}", cfg_path.display()))?;
                Some(toml::from_str(&text).with_context(|| {
                    format!("{}: not a campaign configuration", cfg_path.display())
                })?)
            } else {
                None
            };
        let cfg = match (saved, cfg) {
            (Some(s), Some(c)) if s != c => bail!(
                "{} holds a campaign with another configuration ({}); use a new --out or the same options",
                out.display(),
                cfg_path.display()
            ),
            (Some(s), _) => s,
            (None, Some(c)) => c,
            (None, None) => bail!("{}: no campaign to resume", out.display()),
        };
        for d in [dirs.corpus(), dirs.seeds(), dirs.findings()] {
            std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
        }
        // Seeds: reduced once, then always read back from seeds/.
        let resuming = state_path.exists();
        let seeds: Vec<(String, Model)> = if resuming {
            let order: Vec<String> = {
                let text = std::fs::read(dirs.file("seeds/index.json"))
                    .context("reading seeds/index.json")?;
                serde_json::from_slice(&text).context("seeds/index.json")?
            };
            let mut v = Vec::new();
            for n in order {
                let p = dirs.seeds().join(format!("{n}.onnx"));
                let m = Model::load(&p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
                v.push((n, m));
            }
            v
        } else {
            let mut v = load_seeds(&cfg.seeds)?;
            if cfg.reduce {
                for (_, m) in v.iter_mut() {
                    *m = reduce_seed(m);
                }
            }
            for (n, m) in &v {
                m.save(dirs.seeds().join(format!("{n}.onnx")))?;
            }
            let names: Vec<&String> = v.iter().map(|(n, _)| n).collect();
            write_json(&dirs.file("seeds/index.json"), &names)?;
            let toml_text = toml::to_string_pretty(&cfg)?;
            write_atomic(&cfg_path, toml_text.as_bytes())?;
            v
        };
        let opset = seeds
            .iter()
            .map(|(_, m)| m.default_opset())
            .min()
            .unwrap_or(17);
        let recipes = Recipes::for_opset(opset);
        let universe = Arc::new(
            recipes
                .universe()
                .map_err(|e| anyhow::anyhow!("coverage universe: {e}"))?,
        );
        let ops = operators::all();
        let scheduler: Box<dyn Scheduler> = match cfg.search.as_str() {
            "mcmc" => Box::new(Mcmc {
                p: cfg
                    .mcmc_p
                    .unwrap_or_else(|| Mcmc::default_p(seeds.len() * ops.len())),
            }),
            "random" => Box::new(RandomSearch),
            s => bail!("unknown search '{s}' (mcmc or random)"),
        };
        let tol = Tolerance::by_name(&cfg.tolerance)
            .with_context(|| format!("unknown tolerance '{}'", cfg.tolerance))?;
        let oracles: Vec<Box<dyn Oracle>> = vec![
            Box::new(mutagraph_oracles::CrashOracle),
            Box::new(mutagraph_oracles::NanOracle),
            Box::new(mutagraph_oracles::InconsistencyOracle { tolerance: tol }),
        ];
        let seed_names: Vec<String> = seeds.iter().map(|(n, _)| n.clone()).collect();
        let (state, members, rng) = if resuming {
            let text = std::fs::read(&state_path)
                .with_context(|| format!("reading {}", state_path.display()))?;
            let mut st: State = serde_json::from_slice(&text)
                .with_context(|| format!("{}: corrupt campaign state", state_path.display()))?;
            st.coverage = st.coverage.rebase(universe.clone());
            let names: Vec<String> = ops.iter().map(|o| o.name().to_string()).collect();
            if st.operators != names {
                bail!(
                    "{} was made with another operator set ({:?}); start a new campaign",
                    state_path.display(),
                    st.operators
                );
            }
            let mut members = Vec::new();
            for slot in &st.pool {
                members.push(match &slot.id {
                    None => {
                        let (_, m) = seeds
                            .iter()
                            .find(|(n, _)| *n == slot.seed)
                            .with_context(|| format!("seed '{}' is missing", slot.seed))?;
                        Member {
                            model: m.clone(),
                            records: Vec::new(),
                        }
                    }
                    Some(id) => {
                        let p = dirs.corpus().join(format!("{id}.onnx"));
                        let model =
                            Model::load(&p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
                        let tp = dirs.corpus().join(format!("{id}.trace.json"));
                        let t: Trace = serde_json::from_slice(
                            &std::fs::read(&tp)
                                .with_context(|| format!("reading {}", tp.display()))?,
                        )
                        .with_context(|| format!("{}: corrupt trace", tp.display()))?;
                        Member {
                            model,
                            records: t.records,
                        }
                    }
                });
            }
            let rng = SplitMix64::new(st.rng);
            (st, members, rng)
        } else {
            let mut rng = SplitMix64::new(cfg.seed);
            let mut coverage = Coverage::new(universe.clone());
            for (_, m) in &seeds {
                coverage.add_model(m);
            }
            let stats = SeedStats::new(seeds.len(), ops.len(), &mut rng);
            let st = State {
                format: 1,
                rng: rng.state(),
                pool: seeds
                    .iter()
                    .map(|(n, _)| PoolSlot {
                        seed: n.clone(),
                        id: None,
                    })
                    .collect(),
                operators: ops.iter().map(|o| o.name().to_string()).collect(),
                seeds: stats,
                coverage,
                counters: Counters::default(),
                per_operator: ops
                    .iter()
                    .map(|o| OpCounters {
                        name: o.name().to_string(),
                        ..Default::default()
                    })
                    .collect(),
                times: Times::default(),
                finding_keys: BTreeMap::new(),
                timeseries_len: 0,
            };
            let members = seeds
                .iter()
                .map(|(_, m)| Member {
                    model: m.clone(),
                    records: Vec::new(),
                })
                .collect();
            (st, members, rng)
        };
        Ok(Campaign {
            cfg,
            dirs,
            state,
            members,
            recipes,
            ops,
            oracles,
            scheduler,
            rng,
            seed_names,
        })
    }

    /// The state (for tests and reports).
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Names of the seeds.
    pub fn seed_names(&self) -> &[String] {
        &self.seed_names
    }

    fn save(&mut self, this_run: &RunClock) -> Result<()> {
        let t = Instant::now();
        self.state.rng = self.rng.state();
        self.state.timeseries_len = std::fs::metadata(self.dirs.file("timeseries.csv"))
            .map(|m| m.len())
            .unwrap_or(0);
        write_json(&self.dirs.file("stats.json"), &self.stats(this_run))?;
        write_json(&self.dirs.file("state.json"), &self.state)?;
        self.state.times.io += t.elapsed().as_secs_f64();
        Ok(())
    }

    fn stats(&self, clock: &RunClock) -> serde_json::Value {
        let c = &self.state.counters;
        let t = &self.state.times;
        let generated = c.mutated + c.rejected;
        let illegal = c.rejected + c.illegal_load;
        let elapsed = clock.started.elapsed().as_secs_f64();
        serde_json::json!({
            "search": self.scheduler.name(),
            "backends": self.cfg.backends,
            "counters": c,
            "generated_mutants": generated,
            "illegal_mutants": illegal,
            "illegal_percent": if generated > 0 { 100.0 * illegal as f64 / generated as f64 } else { 0.0 },
            "this_run": {
                "seconds": elapsed,
                "executions": c.executions - clock.executions0,
                "executions_per_second": if elapsed > 0.0 { (c.executions - clock.executions0) as f64 / elapsed } else { 0.0 },
            },
            "executions_per_second": if t.wall > 0.0 { c.executions as f64 / t.wall } else { 0.0 },
            "coverage": self.state.coverage.report(),
            "operators": self.state.per_operator,
            "time_seconds": t,
            "outside_backends_percent": if t.wall > 0.0 { 100.0 * (1.0 - t.backends / t.wall) } else { 0.0 },
            "pool": self.state.pool,
        })
    }

    fn timeseries_row(&mut self, clock: &RunClock) -> Result<()> {
        let path = self.dirs.file("timeseries.csv");
        let t = Instant::now();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        if f.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
            writeln!(
                f,
                "elapsed_s,iterations,executions,executions_per_s,op_types_pct,op_pairs_pct,params_pct,inputs_pct,findings,illegal_pct,corpus"
            )?;
        }
        let c = &self.state.counters;
        let r = self.state.coverage.report();
        let generated = c.mutated + c.rejected;
        let illegal = if generated > 0 {
            100.0 * (c.rejected + c.illegal_load) as f64 / generated as f64
        } else {
            0.0
        };
        let el = clock.started.elapsed().as_secs_f64();
        let rate = if el > 0.0 {
            (c.executions - clock.executions0) as f64 / el
        } else {
            0.0
        };
        writeln!(
            f,
            "{:.1},{},{},{:.2},{:.2},{:.2},{:.2},{:.2},{},{:.3},{}",
            self.state.times.wall,
            c.iterations,
            c.executions,
            rate,
            r.op_types.percent,
            r.op_pairs.percent,
            r.params.percent,
            r.inputs.percent,
            c.findings,
            illegal,
            c.corpus
        )?;
        self.state.times.io += t.elapsed().as_secs_f64();
        Ok(())
    }

    fn status_line(&self, clock: &RunClock) -> String {
        let c = &self.state.counters;
        let r = self.state.coverage.report();
        let el = clock.started.elapsed().as_secs_f64();
        let rate = if el > 0.0 {
            (c.executions - clock.executions0) as f64 / el
        } else {
            0.0
        };
        let generated = (c.mutated + c.rejected).max(1);
        format!(
            "[{}] execs {} ({:.1}/s) | ops {:.0}% pairs {:.1}% params {:.1}% | corpus {} | findings {} | illegal {:.2}%",
            hms(self.state.times.wall),
            c.executions,
            rate,
            r.op_types.percent,
            r.op_pairs.percent,
            r.params.percent,
            c.corpus,
            c.findings,
            100.0 * (c.rejected + c.illegal_load) as f64 / generated as f64
        )
    }

    /// Runs until the iteration total or the time budget is reached.
    pub fn run(&mut self, opts: &RunOptions) -> Result<Summary> {
        // Repair a time series cut by a kill: back to its length at the last state save.
        let ts = self.dirs.file("timeseries.csv");
        if let Ok(meta) = std::fs::metadata(&ts)
            && meta.len() > self.state.timeseries_len
        {
            let f = std::fs::OpenOptions::new().write(true).open(&ts)?;
            f.set_len(self.state.timeseries_len)?;
        }
        let clock = RunClock {
            started: Instant::now(),
            executions0: self.state.counters.executions,
        };
        let iterations0 = self.state.counters.iterations;
        let wall0 = self.state.times.wall;
        let mut exec = Executor::new(&self.cfg.backends, opts.jobs, &opts.pool);
        let tty = std::io::stderr().is_terminal();
        let mut last_save = Instant::now();
        let mut last_row = Instant::now();
        let mut last_status = Instant::now();
        let done = |st: &State| {
            opts.iterations.is_some_and(|n| st.counters.iterations >= n)
                || opts.time.is_some_and(|t| clock.started.elapsed() >= t)
        };
        if self.state.timeseries_len == 0 {
            self.timeseries_row(&clock)?;
        }
        let mut result = Ok(());
        while !done(&self.state) {
            if let Err(e) = self.batch(&mut exec) {
                result = Err(e);
                break;
            }
            self.state.times.wall = wall0 + clock.started.elapsed().as_secs_f64();
            if last_row.elapsed() >= Duration::from_secs(1) {
                self.timeseries_row(&clock)?;
                last_row = Instant::now();
            }
            if last_save.elapsed() >= Duration::from_millis(250) {
                self.save(&clock)?;
                last_save = Instant::now();
            }
            if !opts.quiet {
                let every = if tty {
                    Duration::from_millis(500)
                } else {
                    Duration::from_secs(10)
                };
                if last_status.elapsed() >= every {
                    let line = self.status_line(&clock);
                    if tty {
                        eprint!("\r{line}\x1b[K");
                    } else {
                        eprintln!("{line}");
                    }
                    last_status = Instant::now();
                }
            }
        }
        self.state.times.wall = wall0 + clock.started.elapsed().as_secs_f64();
        self.timeseries_row(&clock)?;
        self.save(&clock)?;
        if !opts.quiet && tty {
            eprintln!("\r{}\x1b[K", self.status_line(&clock));
        }
        drop(exec);
        result?;
        Ok(Summary {
            iterations: self.state.counters.iterations - iterations0,
            executions: self.state.counters.executions - clock.executions0,
            seconds: clock.started.elapsed().as_secs_f64(),
            coverage: self.state.coverage.report(),
            counters: self.state.counters.clone(),
        })
    }

    /// One batch: select and mutate until `jobs` mutants (or `8 × jobs` selections), run them
    /// together, then process the results in order. A batch depends only on the state at its
    /// start, and runs stop only between batches, so a resumed campaign makes the same batches
    /// as an uninterrupted one (with the same `-j`).
    fn batch(&mut self, exec: &mut Executor) -> Result<()> {
        struct Pending {
            seed: usize,
            model: Model,
            record: Record,
            iteration: u64,
            bytes: Arc<Vec<u8>>,
            inputs: Arc<NamedValues>,
        }
        let n_ops = self.ops.len();
        let mut pending: Vec<Pending> = Vec::new();
        let mut attempts = 0;
        while pending.len() < exec.slots() && attempts < 8 * exec.slots() {
            attempts += 1;
            let t = Instant::now();
            let seed = self.scheduler.select(&mut self.state.seeds, &mut self.rng);
            let (m, o) = (seed / n_ops, seed % n_ops);
            let iteration = self.state.counters.iterations;
            self.state.counters.iterations += 1;
            self.state.per_operator[o].selected += 1;
            let mut model = self.members[m].model.clone();
            let outcome = {
                let mut ctx = Ctx {
                    rng: &mut self.rng,
                    coverage: &self.state.coverage,
                    recipes: &self.recipes,
                    limits: &self.cfg.limits,
                };
                self.ops[o].mutate(&mut model, &mut ctx)
            };
            self.state.times.mutate += t.elapsed().as_secs_f64();
            let record = match outcome {
                MutOutcome::Mutated(r) => r,
                MutOutcome::Skipped(_) => {
                    self.state.counters.skipped += 1;
                    self.state.per_operator[o].skipped += 1;
                    continue;
                }
                MutOutcome::Rejected(_) => {
                    self.state.counters.rejected += 1;
                    self.state.per_operator[o].rejected += 1;
                    continue;
                }
            };
            self.state.counters.mutated += 1;
            self.state.per_operator[o].mutated += 1;
            let t = Instant::now();
            let bytes = Arc::new(model.to_bytes());
            self.state.times.export += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let generated = inputs::generate(&model, iteration, &GenOptions::default());
            self.state.times.inputs += t.elapsed().as_secs_f64();
            let Ok(values) = generated else {
                self.state.counters.input_errors += 1;
                continue;
            };
            pending.push(Pending {
                seed,
                model,
                record,
                iteration,
                bytes,
                inputs: Arc::new(values),
            });
        }
        if pending.is_empty() {
            return Ok(());
        }
        let jobs: Vec<Job> = pending
            .iter()
            .map(|p| Job {
                model: p.bytes.clone(),
                inputs: p.inputs.clone(),
            })
            .collect();
        let t = Instant::now();
        let reports = exec
            .run(&jobs)
            .map_err(|e| anyhow::anyhow!("a backend worker could not be started: {e}"))?;
        self.state.times.backends += t.elapsed().as_secs_f64();
        for (p, runs) in pending.into_iter().zip(reports) {
            self.state.counters.executions += 1;
            let (m, o) = (p.seed / n_ops, p.seed % n_ops);
            let illegal = !runs.is_empty()
                && runs.iter().all(|r| {
                    matches!(
                        &r.outcome,
                        Outcome::Error {
                            stage: Stage::Load | Stage::Compile,
                            ..
                        } | Outcome::Unsupported { .. }
                    )
                })
                && runs
                    .iter()
                    .any(|r| matches!(r.outcome, Outcome::Error { .. }));
            if illegal {
                self.state.counters.illegal_load += 1;
                self.state.per_operator[o].illegal_load += 1;
            }
            // Oracles.
            let t = Instant::now();
            let view = MutantRuns {
                runs: &runs,
                reference: self.cfg.reference.as_deref(),
            };
            let findings: Vec<Finding> = self.oracles.iter().flat_map(|x| x.judge(&view)).collect();
            self.state.times.oracles += t.elapsed().as_secs_f64();
            let mut records = self.members[m].records.clone();
            records.push(p.record.clone());
            for f in &findings {
                self.state.counters.findings += 1;
                self.state.per_operator[o].findings += 1;
                *self
                    .state
                    .counters
                    .findings_by_kind
                    .entry(f.kind.name().to_string())
                    .or_default() += 1;
                let key = format!("{}-{}-{}", f.kind, f.backend, p.record.operator);
                let n = self.state.finding_keys.entry(key).or_default();
                *n += 1;
                if *n <= self.cfg.findings_per_key {
                    let t = Instant::now();
                    self.write_finding(f, &p.bytes, &p.inputs, &runs, m, &records, p.iteration)?;
                    self.state.times.io += t.elapsed().as_secs_f64();
                }
            }
            if illegal {
                continue;
            }
            // Coverage, scheduler, pool.
            let t = Instant::now();
            let delta = self.state.coverage.add_model(&p.model);
            let diverse = delta.is_diverse();
            if diverse {
                self.state.counters.diverse += 1;
                self.state.per_operator[o].diverse += 1;
                self.state.seeds.rewarded(p.seed);
            }
            self.state.times.coverage += t.elapsed().as_secs_f64();
            if diverse {
                let t = Instant::now();
                let id = format!("{:06}", self.state.counters.corpus);
                let trace = Trace {
                    seed: self.state.pool[m].seed.clone(),
                    parent: self.state.pool[m].id.clone(),
                    iteration: p.iteration,
                    new_coverage: delta,
                    records: records.clone(),
                };
                write_atomic(&self.dirs.corpus().join(format!("{id}.onnx")), &p.bytes)?;
                write_json(&self.dirs.corpus().join(format!("{id}.trace.json")), &trace)?;
                self.state.counters.corpus += 1;
                self.state.pool[m].id = Some(id);
                self.members[m] = Member {
                    model: p.model,
                    records,
                };
                self.state.times.io += t.elapsed().as_secs_f64();
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn write_finding(
        &self,
        f: &Finding,
        model: &[u8],
        inputs: &NamedValues,
        runs: &[RunReport],
        member: usize,
        records: &[Record],
        iteration: u64,
    ) -> Result<()> {
        let name = format!("{iteration:08}-{}-{}", f.kind, f.backend);
        let dir = self.dirs.findings().join(&name);
        if dir.exists() {
            // Written before a kill and redone on resume: the same iteration, the same mutant.
            return Ok(());
        }
        let tmp = self.dirs.findings().join(format!(".{name}.tmp"));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp)?;
        std::fs::write(tmp.join("model.onnx"), model)?;
        for (i, (n, v)) in inputs.iter().enumerate() {
            std::fs::write(tmp.join(format!("input_{i}.pb")), v.encode(n))?;
        }
        let runs_summary: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "backend": r.backend,
                    "version": r.version,
                    "status": r.outcome.status(),
                    "detail": r.outcome.detail(),
                    "wall_ms": r.wall_ms,
                })
            })
            .collect();
        let report = serde_json::json!({
            "finding": f,
            "iteration": iteration,
            "seed": self.state.pool[member].seed,
            "inputs": inputs.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            "runs": runs_summary,
            "trace": records,
        });
        std::fs::write(tmp.join("report.json"), serde_json::to_vec_pretty(&report)?)?;
        std::fs::rename(&tmp, &dir)
            .with_context(|| format!("moving finding into {}", dir.display()))?;
        Ok(())
    }
}

struct RunClock {
    started: Instant,
    executions0: u64,
}

fn hms(s: f64) -> String {
    let s = s as u64;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Parses `90`, `90s`, `10m`, `1h`, `1h30m`.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let s = s.trim();
    let mut total = 0.0;
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let v: f64 = num
            .parse()
            .with_context(|| format!("'{s}' is not a duration (e.g. 90s, 10m, 1h)"))?;
        total += v * match c {
            's' => 1.0,
            'm' => 60.0,
            'h' => 3600.0,
            _ => bail!("'{s}' is not a duration (e.g. 90s, 10m, 1h)"),
        };
        num.clear();
    }
    if !num.is_empty() {
        total += num
            .parse::<f64>()
            .with_context(|| format!("'{s}' is not a duration (e.g. 90s, 10m, 1h)"))?;
    }
    if total <= 0.0 {
        bail!("'{s}' is not a positive duration");
    }
    Ok(Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("5x").is_err());
    }
}
