//! Starting a session: a fresh campaign (configuration, seeds, admission) or a resumed one
//! (its stored configuration, state and admission decisions), then the loop.
use super::*;
use crate::cmd::refused;
use config::check_same;
use mutagraph_mutators::coverage::Universe;

/// Each pool slot's current model and the records that made it from its seed.
type Models = Vec<(Model, Vec<Record>)>;

/// Runs (or resumes) a campaign. A start that fails before writing anything but the lock
/// leaves no directory it created behind.
pub fn run(req: Request, pool_opts: PoolOptions) -> Result<Summary> {
    check_request(&req)?;
    let out = req.out.clone();
    let created = !out.exists();
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let ran = run_locked(req, pool_opts);
    if ran.is_err() && created && only_the_lock(&out) {
        let _ = std::fs::remove_dir_all(&out);
    }
    ran
}

/// Whether `out` holds nothing but the lock file (and empty directories).
fn only_the_lock(out: &Path) -> bool {
    fn empty(d: &Path, top: bool) -> bool {
        let Ok(rd) = std::fs::read_dir(d) else {
            return false;
        };
        rd.filter_map(|e| e.ok()).all(|e| {
            let p = e.path();
            if p.is_dir() {
                empty(&p, false)
            } else {
                top && e.file_name() == lock::FILE
            }
        })
    }
    empty(out, true)
}

fn run_locked(req: Request, pool_opts: PoolOptions) -> Result<Summary> {
    let out = req.out.clone();
    let _lock = lock::OutLock::acquire(&out)?;
    let ops = operators::all();
    let op_names: Vec<String> = ops.iter().map(|o| o.name().to_string()).collect();
    let (mut config, cfg_path) = configure(&req, &pool_opts, &out, &op_names)?;
    let seeds = load_seeds(&config.seeds)?;
    let tolerance = mutagraph_backends::compare::Tolerance::by_name(&config.tolerance)
        .ok_or_else(|| anyhow!("unknown tolerance '{}'", config.tolerance))?;

    let mut pools = lane_pools(&config, &pool_opts);
    let reference = config
        .backends
        .iter()
        .position(|b| mutagraph_backends::catalog::is_ground_truth(b));
    let mut stage = Triage::new(&config.backends, tolerance);
    // A crash met again and again is filed as a hit of its bug without the triage's extra runs.
    stage.learn = true;
    let mut triage_pool = Pool::new(pool_opts.clone());
    check_fixed(&seeds, &config)?;
    // Admission: each seed once, as given, on every backend; seeds derived from them (decided
    // once per campaign, recorded and printed).
    let intake = intake::intake(
        &out,
        &config,
        seeds,
        intake::Runs {
            pools: &mut pools,
            stage: &mut stage,
            triage: &mut triage_pool,
            reference,
        },
        req.quiet,
    )?;
    let intake::Intake {
        seeds,
        plans,
        mutated,
        seed_runs,
        refused,
    } = intake;
    if mutated.is_empty() {
        return Err(none_mutated(&refused, &out));
    }
    let n_seeds = mutated.len() * ops.len();
    if config.mcmc_p.is_nan() {
        config.mcmc_p = req.mcmc_p.unwrap_or_else(|| mcmc::default_p(n_seeds));
    }
    let scheduler = mcmc::by_name(&config.search, config.mcmc_p).expect("checked");
    let (recipes, recipes_at, universe) = recipes(&config, &seeds, &mut pools)?;
    let mut seed_cov = Coverage::new(universe.clone());
    for &i in &mutated {
        seed_cov.add_model(&seeds[i].model);
    }
    let seed_coverage = seed_cov.report();

    for d in ["seeds", "corpus", "findings"] {
        std::fs::create_dir_all(out.join(d))
            .with_context(|| format!("creating {}", out.join(d).display()))?;
    }
    let (fresh, mut state, models) =
        load_state(&out, &config, &seeds, &mutated, &op_names, seed_cov)?;
    if !req.quiet {
        say_how_it_runs(&config, &state, fresh, &out);
    }
    write_config_and_seeds(&out, &cfg_path, &config, &seeds)?;
    // The triage's extra runs and the minimizer's wait as long as the slowest seed's mutants may take.
    let floor = pool_opts.timeout;
    let seed_inputs: Vec<SeedPlan> = plans.iter().map(|p| SeedPlan::new(p, floor)).collect();
    // The triage's runs are of mutants (of the mutated seeds); the minimizer's also of the
    // whole models windows come from.
    let limit = |of: &mut dyn Iterator<Item = &SeedPlan>| of.map(|s| s.timeout).max();
    triage_pool.set_timeout(limit(&mut mutated.iter().map(|&i| &seed_inputs[i])).unwrap_or(floor));
    let mut slowest = pool_opts.clone();
    slowest.timeout = limit(&mut seed_inputs.iter()).unwrap_or(floor);
    let minimizer = if req.minimize {
        Some(Minimizer::start(
            slowest,
            config.backends.clone(),
            tolerance,
        ))
    } else {
        None
    };
    if !fresh {
        // The triage goes on where the last session stopped: its counters, and the crash
        // messages it knows (without them a resumed campaign would triage in full what the
        // uninterrupted one files as hits, and end with other verdicts).
        *stage.memory() = Memory {
            stats: state.triage.clone(),
            known: state.known_crashes.clone(),
            quiet: state.known_quiet.clone(),
            // The rewrites found are found again (the same runs give the same answer).
            ..Memory::default()
        };
    }
    let out_dir = out.clone();
    let shared = shared(&config, &out, &mut state, req.sync_every)?;
    let mut corpus_index = crate::corpus::Index::scan(&out.join("corpus"))
        .map_err(|e| anyhow!("reading the corpus: {e}"))?;
    corpus_index
        .delete_orphans()
        .map_err(|e| anyhow!("cleaning the corpus: {e}"))?;
    let mut c = Campaign {
        out,
        seed_inputs,
        stage,
        triage: triage_pools(triage_pool, config.jobs),
        tolerance,
        dirty: BTreeSet::new(),
        stale_docs: BTreeMap::new(),
        minimizer,
        minimize_grace: req.minimize_grace,
        config,
        seeds,
        ops,
        recipes,
        recipes_at,
        limits: Limits::default(),
        scheduler,
        reference,
        state,
        seed_coverage,
        models,
        pools,
        corpus: writer::Writer::new(),
        corpus_index,
        other_bytes: crate::corpus::budget::other_bytes(&out_dir),
        other_measured: Instant::now(),
        warned_over: false,
        disk_full: false,
        shared,
        last_find: None,
    };
    if !fresh {
        c.requeue_unminimized();
    }
    warn_if_seeds_fill_the_budget(c.other_bytes.seeds, c.config.max_disk);
    // The seeds' own bugs are filed before any mutant runs: mutants that show them again
    // count as their hits.
    for (seed, run) in seed_runs {
        c.file_seed_findings(seed, run)?;
    }
    c.state.triage = c.stage.stats();
    c.main_loop(req.quiet, fresh)
}

/// What the user should know before the session starts: that it has no limit, that it
/// resumes a campaign.
fn say_how_it_runs(config: &Config, state: &State, fresh: bool, out: &Path) {
    if config.time_s.is_none() && config.iterations.is_none() {
        eprintln!(
            "no --time or --iterations: the campaign runs until interrupted (Ctrl-C saves its \
             state; the same command resumes it)"
        );
    }
    if !fresh {
        eprintln!(
            "resuming the campaign in {}: {} iterations and {} unique findings so far, {} \
             elapsed",
            out.display(),
            state.iteration,
            state.counters.unique_findings,
            status::hms(state.elapsed_s)
        );
    }
}

/// `seeds/` counts against `--max-disk` but cannot be freed: said when it takes half of it.
fn warn_if_seeds_fill_the_budget(seeds: u64, max_disk: u64) {
    if max_disk > 0 && 2 * seeds >= max_disk {
        eprintln!(
            "warning: seeds/ holds {} MB of the --max-disk of {} MB (the admitted seeds and the \
             seeds derived from them, kept whole): the corpus gets what is left, as trace-only \
             entries once that is spent; a larger --max-disk keeps models",
            seeds / 1_000_000,
            max_disk / 1_000_000
        );
    }
}

/// Worker pools: one per backend and lane (`[backend][lane]`); the first lane answers the
/// capabilities. The lanes yield to the search and the triage, which feed and empty them.
fn lane_pools(config: &Config, pool_opts: &PoolOptions) -> Vec<Vec<Pool>> {
    let mut lane_opts = pool_opts.clone();
    lane_opts.config.nice = LANE_NICE;
    let lanes = || {
        (0..config.jobs)
            .map(|_| Pool::new(lane_opts.clone()))
            .collect()
    };
    config.backends.iter().map(|_| lanes()).collect()
}

/// The triage stage's pools, one per thread: `-j` threads, the first the pool admission used
/// (the others with its options).
fn triage_pools(first: Pool, jobs: usize) -> Vec<Pool> {
    let more: Vec<Pool> = (1..jobs.max(1))
        .map(|_| Pool::new(first.options().clone()))
        .collect();
    std::iter::once(first).chain(more).collect()
}

/// The configuration: the stored one when resuming (the command line may change only the
/// session's limits), else the command line's; checked before anything runs.
fn configure(
    req: &Request,
    pool_opts: &PoolOptions,
    out: &Path,
    op_names: &[String],
) -> Result<(Config, PathBuf)> {
    let cfg_path = out.join("campaign.toml");
    let saved: Option<Config> = if cfg_path.exists() {
        let text = std::fs::read_to_string(&cfg_path)
            .with_context(|| format!("reading {}", cfg_path.display()))?;
        Some(toml::from_str(&text).with_context(|| format!("parsing {}", cfg_path.display()))?)
    } else {
        None
    };
    let timeout_s = pool_opts.timeout.as_secs_f64();
    let mem_mib = pool_opts.mem_limit >> 20;
    let mut config = match saved {
        Some(c) => {
            check_same(
                "--seeds",
                (!req.seeds.is_empty()).then(|| req.seeds.clone()),
                &c.seeds,
            )?;
            check_same(
                "--backends",
                (!req.backends.is_empty()).then(|| req.backends.clone()),
                &c.backends,
            )?;
            check_same("--seed", req.seed, &c.seed)?;
            check_same("--search", req.search.clone(), &c.search)?;
            check_same("--mcmc-p", req.mcmc_p, &c.mcmc_p)?;
            check_same("--free-dim", req.free_dim.map(Some), &c.free_dim)?;
            check_same("--instance", req.instance.clone().map(Some), &c.instance)?;
            check_same(
                "--input-shape/--input-value",
                (!req.fixed.is_empty()).then(|| req.fixed.clone()),
                &c.fixed,
            )?;
            if c.operators != op_names {
                return Err(refused(format!(
                    "the campaign in {} used operators {:?}; this build has {:?}",
                    out.display(),
                    c.operators,
                    op_names
                )));
            }
            c
        }
        None => {
            if req.seeds.is_empty() {
                return Err(refused(format!(
                    "--seeds is required to start a campaign ({} holds none to resume)",
                    out.display()
                )));
            }
            let backends = if req.backends.is_empty() {
                mutagraph_backends::catalog::default_set()
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            } else {
                req.backends.clone()
            };
            Config {
                seeds: req.seeds.clone(),
                backends: backends.clone(),
                seed: req.seed.unwrap_or(0),
                search: req.search.clone().unwrap_or_else(|| "mcmc".into()),
                mcmc_p: f64::NAN, // set once the seed count is known
                operators: op_names.to_vec(),
                jobs: config::default_jobs(backends.len()),
                iterations: None,
                time_s: None,
                tolerance: "approximate".into(),
                run_timeout_s: timeout_s,
                mem_limit_mib: mem_mib,
                free_dim: req.free_dim.map(|n| n.max(1)),
                fixed: req.fixed.clone(),
                max_disk: crate::corpus::DEFAULT_MAX_DISK,
                instance: req.instance.clone(),
            }
        }
    };
    if let Some(j) = req.jobs {
        config.jobs = j;
    }
    // Worker limits change outcomes, never the search: the current command line's apply.
    config.run_timeout_s = timeout_s;
    config.mem_limit_mib = mem_mib;
    if req.iterations.is_some() {
        config.iterations = req.iterations;
    }
    if let Some(t) = req.time {
        config.time_s = Some(t.as_secs_f64());
    }
    if let Some(b) = req.max_disk {
        config.max_disk = b;
    }
    if op_names.is_empty() {
        bail!("no mutation operators in this build");
    }
    Ok((config, cfg_path))
}

/// What the command line asks, checked before a directory is read: a name or value it cannot
/// take is a usage error, never a resume mismatch.
fn check_request(req: &Request) -> Result<()> {
    crate::cmd::backend_list(req.backends.clone())?;
    if let Some(s) = &req.search
        && mcmc::by_name(s, 0.1).is_none()
    {
        return Err(refused(format!(
            "--search must be mcmc or random, not '{s}'"
        )));
    }
    if let Some(p) = req.mcmc_p
        && !(p > 0.0 && p < 1.0)
    {
        return Err(refused(format!("--mcmc-p must be in (0, 1), not {p}")));
    }
    if req.jobs == Some(0) {
        return Err(refused("-j must be at least 1"));
    }
    Ok(())
}

/// Each shape or value the user fixed must fit an input of some seed.
fn check_fixed(seeds: &[Seed], config: &Config) -> Result<()> {
    let fits: Vec<Fixed> = seeds
        .iter()
        .map(|s| admission::fixed_for(&s.model, &config.fixed))
        .collect();
    for name in config.fixed.shapes.keys() {
        if !fits.iter().any(|f| f.shapes.contains_key(name)) {
            let why = seeds
                .iter()
                .find_map(|s| {
                    let one = Fixed {
                        shapes: [(name.clone(), config.fixed.shapes[name].clone())].into(),
                        ..Fixed::default()
                    };
                    mutagraph_ir::solve::solve(&s.model, &one)
                        .err()
                        .filter(|e| !matches!(e, mutagraph_ir::solve::SolveError::NoInput { .. }))
                        .map(|e| format!("{}: {e}", s.name))
                })
                .unwrap_or_else(|| format!("no seed has an input named '{name}'"));
            return Err(refused(format!("--input-shape {name}: {why}")));
        }
    }
    for name in config.fixed.values.keys() {
        if !fits.iter().any(|f| f.values.contains_key(name)) {
            return Err(refused(format!(
                "--input-value {name}: no seed has an input named '{name}'"
            )));
        }
    }
    Ok(())
}

/// Why a campaign none of whose seeds can be mutated does not start (the first reasons).
fn none_mutated(refused: &BTreeMap<String, String>, out: &Path) -> anyhow::Error {
    let why: Vec<String> = refused
        .iter()
        .take(5)
        .map(|(name, why)| format!("seed {name}: {why}"))
        .collect();
    anyhow!(
        "no seed can be mutated: the reference runs none of them ({}{}; see {})",
        why.join("; "),
        if refused.len() > 5 { "; ..." } else { "" },
        out.join(admission::FILE).display()
    )
}

/// The recipes mutants are made from (those some backend under test runs), each seed opset's,
/// and the coverage universe they span.
type Book = (Recipes, BTreeMap<i64, Recipes>, Arc<Universe>);

fn recipes(config: &Config, seeds: &[Seed], pools: &mut [Vec<Pool>]) -> Result<Book> {
    // The generator's ops: those that exist at the seeds' opset (the lowest one).
    let opset = seeds
        .iter()
        .map(|s| s.model.default_opset())
        .min()
        .unwrap_or(17);
    let mut recipes = Recipes::for_opset(opset);
    let mut supported: Vec<mutagraph_backends::backend::Capabilities> = Vec::new();
    let has_other = config
        .backends
        .iter()
        .any(|b| !mutagraph_backends::catalog::is_ground_truth(b));
    for (b, lanes) in config.backends.iter().zip(pools.iter_mut()) {
        if has_other && mutagraph_backends::catalog::is_ground_truth(b) {
            continue;
        }
        let caps = lanes[0].capabilities(b).map_err(|e| {
            anyhow!("backend '{b}': {e}{}", if b.starts_with("ort") {
                " (ONNX Runtime is needed: `pip install onnxruntime==1.31.1`, or pass --ort-dylib)"
            } else {
                ""
            })
        })?;
        supported.push(caps);
    }
    let runnable = |op: &str| supported.iter().any(|c| c.supports("", op));
    recipes.retain(runnable);
    // Each seed's mutants take the ops that exist at its own opset (an op removed since the
    // lowest one, such as Upsample or Scatter, would make an opset-17 mutant invalid).
    let mut recipes_at: BTreeMap<i64, Recipes> = BTreeMap::new();
    for s in seeds {
        let o = s.model.default_opset();
        recipes_at.entry(o).or_insert_with(|| {
            let mut r = Recipes::for_opset(o);
            r.retain(runnable);
            r
        });
    }
    // The universe: the recipes' op types, the pairs they can connect, and the parameter
    // buckets of the attribute versions that exist at the seeds' opset.
    let universe = Arc::new(
        recipes
            .universe()
            .map_err(|e| anyhow!("coverage universe: {e}"))?
            .params_at_opset(opset),
    );
    Ok((recipes, recipes_at, universe))
}

/// The campaign's state and its pool's models: fresh, or as the last session committed them.
fn load_state(
    out: &Path,
    config: &Config,
    seeds: &[Seed],
    mutated: &[usize],
    op_names: &[String],
    seed_cov: Coverage,
) -> Result<(bool, State, Models)> {
    let universe = seed_cov.universe().clone();
    let state_path = out.join("state.json");
    let fresh = !state_path.exists();
    let (state, models) = if fresh {
        let pool: Vec<Slot> = mutated
            .iter()
            .map(|&i| Slot {
                seed: i,
                corpus: None,
            })
            .collect();
        let state = State {
            version: state::STATE_VERSION,
            iteration: 0,
            rng_seed: config.seed,
            pool,
            seeds: SeedStats::new(mutated.len(), op_names.len()),
            coverage: seed_cov,
            counters: Counters {
                per_operator: op_names
                    .iter()
                    .map(|n| OpCounters {
                        name: n.clone(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            },
            timings: Timings::default(),
            elapsed_s: 0.0,
            signatures: BTreeMap::new(),
            roots: BTreeMap::new(),
            triage: TriageStats::default(),
            rewrites: BTreeMap::new(),
            rewrite_sets: BTreeSet::new(),
            rewrite_credits: BTreeMap::new(),
            known_crashes: Default::default(),
            known_quiet: Default::default(),
            ours_kept: BTreeSet::new(),
            sessions: Vec::new(),
            pruned: Default::default(),
            sync: None,
        };
        let models = mutated
            .iter()
            .map(|&i| (seeds[i].model.clone(), Vec::new()))
            .collect();
        (state, models)
    } else {
        let text = std::fs::read(&state_path)
            .with_context(|| format!("reading {}", state_path.display()))?;
        let mut state: State = crate::persisted::from_json(&text)
            .with_context(|| format!("parsing {}", state_path.display()))?;
        // An older state reads with defaults for what it lacks; it is written back current.
        state.version = state::STATE_VERSION;
        // The saved coverage names its items; re-home them in this campaign's universe.
        let mut cov = Coverage::new(universe.clone());
        cov.merge(&state.coverage);
        state.coverage = cov;
        let slots: Vec<usize> = state.pool.iter().map(|s| s.seed).collect();
        if slots.len() != mutated.len()
            || slots.iter().any(|i| !mutated.contains(i))
            || state.seeds.ops != op_names.len()
        {
            bail!(
                "{} does not match the seeds and operators",
                state_path.display()
            );
        }
        let mut models = Vec::new();
        let corpus = out.join("corpus");
        for slot in &state.pool {
            match &slot.corpus {
                None => models.push((seeds[slot.seed].model.clone(), Vec::new())),
                Some(id) => {
                    // The model as the campaign made it: its file, or rebuilt from its trace
                    // (checked against the trace's SHA-256).
                    let resuming = |e: crate::corpus::CorpusError| {
                        anyhow!(
                            "resuming from corpus entry {id} in {}: {e}",
                            corpus.display()
                        )
                    };
                    let bytes = crate::corpus::model_bytes(out, id).map_err(resuming)?;
                    let mut m = Model::from_bytes(&bytes)
                        .with_context(|| format!("resuming from corpus entry {id}"))?;
                    typed(&mut m);
                    let t = crate::corpus::read_trace(&corpus, id).map_err(resuming)?;
                    let records = crate::corpus::records(&corpus, id, &t).map_err(resuming)?;
                    models.push((m, records));
                }
            }
        }
        (state, models)
    };
    Ok((fresh, state, models))
}

/// Writes the effective configuration and the seeds as they are mutated (unchanged files are
/// left alone).
fn write_config_and_seeds(
    out: &Path,
    cfg_path: &Path,
    config: &Config,
    seeds: &[Seed],
) -> Result<()> {
    let cfg_text = toml::to_string(&config)?;
    write_atomic(cfg_path, cfg_text.as_bytes())
        .with_context(|| format!("writing {}", cfg_path.display()))?;
    for s in seeds {
        let p = out.join("seeds").join(&s.file);
        let bytes = s.model.to_bytes();
        if std::fs::read(&p).ok().as_deref() != Some(bytes.as_slice()) {
            write_atomic(&p, &bytes).with_context(|| format!("writing {}", p.display()))?;
        }
    }
    Ok(())
}

/// An instance of a shared campaign: the sync directory is its directory's parent.
fn shared(
    config: &Config,
    out: &Path,
    state: &mut State,
    every: Option<Duration>,
) -> Result<Option<sync::Shared>> {
    Ok(match &config.instance {
        Some(name) => {
            let st = state.sync.get_or_insert_with(Default::default);
            st.instance = name.clone();
            let dir = out
                .canonicalize()
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .ok_or_else(|| anyhow!("{}: no sync directory above it", out.display()))?;
            Some(sync::Shared {
                dir,
                // The first import comes one interval after the start.
                last: Instant::now(),
                every: every.unwrap_or(sync::SYNC_EVERY),
                same_seed: Default::default(),
            })
        }
        None => None,
    })
}
