//! The `mutagraph` command line: a thin layer over the library crates.
use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use mutagraph_backends::catalog;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::conformance::Allowlist;
use mutagraph_backends::inputs as mg_inputs;
use mutagraph_backends::worker::protocol::WireConfig;
use mutagraph_backends::worker::{Pool, PoolOptions};
use mutagraph_engine::inspect::inspect_file;
use mutagraph_engine::{conformcmd, out, outln, runcmd};
use mutagraph_ir::model::write_atomic;
use mutagraph_ir::solve::{self, Fixed};
use mutagraph_ir::{Model, Registry, text, validate};
use mutagraph_mutators::zoo;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "mutagraph",
    version,
    about = "Find bugs in DL inference libraries by mutating ONNX model graphs"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// More log output (-v: debug, -vv: trace; `coverage -v` also lists the uncovered op
    /// types); RUST_LOG, when set, decides instead.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Less output: errors only, no status screen.
    #[arg(short, long, global = true)]
    quiet: bool,
    /// The largest model file any command reads (`512M`, `2G`; default 1G, or
    /// MUTAGRAPH_MAX_MODEL_BYTES).
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_size)]
    max_model_size: Option<u64>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    mutagraph_ir::limits::parse_size(s)
        .filter(|&v| v > 0)
        .ok_or_else(|| format!("bad size '{s}' (examples: 512M, 2G, 1000000)"))
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    mutagraph_engine::campaign::parse_duration(s).map_err(|e| e.to_string())
}

#[derive(Subcommand)]
enum Cmd {
    /// Show a model: opsets, inputs/outputs, op histogram, parameters, every value's inferred type.
    Inspect {
        /// The model file.
        model: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Show the model even when it fails validation (exit code stays 1).
        #[arg(long)]
        no_fail: bool,
        #[command(flatten)]
        given: InputArgs,
    },
    /// Re-export a model through the IR (validated first). Files ending in `.onnxtxt` are
    /// read or written in ONNX's textual syntax, any other file as protobuf. Tensors the input
    /// keeps in side files go to `OUTPUT.data` beside the output.
    Convert {
        /// Input model (`.onnxtxt`: text).
        input: PathBuf,
        /// Output model, written atomically (`.onnxtxt`: text).
        output: PathBuf,
        /// Write even when validation fails.
        #[arg(long)]
        force: bool,
        /// Print what was written as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the ops of the registry with their opsets.
    Ops {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run a model on backends, each in an isolated worker, against the f64 reference.
    Run {
        /// The model file.
        model: PathBuf,
        /// Backends, comma-separated (default: reference, ort, tract, burn-ndarray as compiled
        /// in; `cpu`: every CPU backend and variant).
        #[arg(long, value_delimiter = ',')]
        backends: Vec<String>,
        /// Input values: an .npz archive (as bundles ship them), one .pb TensorProto file, a
        /// directory of input_N.pb files, or a bug bundle directory.
        #[arg(long, conflicts_with = "seed")]
        inputs: Option<PathBuf>,
        /// Seed of the generated inputs.
        #[arg(long)]
        seed: Option<u64>,
        /// One size for every symbolic / unknown input dim of generated inputs, batches too
        /// (default: sizes solved from the graph, as `inspect` shows them).
        #[arg(long)]
        free_dim: Option<usize>,
        #[command(flatten)]
        given: InputArgs,
        /// Tolerance for "agrees": exact, suite, close, approximate, very-approximate.
        #[arg(long, default_value = "close")]
        tolerance: String,
        /// The ground-truth backend (`reference-f64`: the f64 interpreter keeping f64 outputs),
        /// or `none` to run only the given backends.
        #[arg(long, default_value = "reference-f64")]
        reference: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Exit 0 even when a backend fails or disagrees with the reference (by default such
        /// a run exits 1).
        #[arg(long)]
        no_fail: bool,
        #[command(flatten)]
        pool: PoolArgs,
    },
    /// Run the ONNX backend test suite (Debian libonnx-testdata) on backends.
    Conformance {
        /// Part of the suite.
        #[arg(long, default_value = "all", value_parser = ["node", "pytorch-converted", "pytorch-operator", "simple", "all"])]
        suite: String,
        /// Backends, comma-separated (default: reference, ort, tract, burn-ndarray as compiled
        /// in; `cpu`: every CPU backend and variant).
        #[arg(long, value_delimiter = ',')]
        backends: Vec<String>,
        /// Only tests whose id (part/test_name) contains this.
        #[arg(long)]
        filter: Option<String>,
        /// Write the machine-readable report here (JSON, atomically).
        #[arg(long, default_value = "conformance-report.json")]
        report: PathBuf,
        /// Also print the per-op table.
        #[arg(long)]
        per_op: bool,
        /// Exit with status 1 when a backend fails a test its allowlist does not name.
        #[arg(long)]
        check: bool,
        /// Write each backend's current failures as its allowlist into this directory.
        #[arg(long)]
        write_allowlist: Option<PathBuf>,
        /// Print the summary as JSON (the full report goes to --report).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        pool: PoolArgs,
    },
    /// Coverage of models: op types, connectable op pairs, parameter buckets, input cells.
    Coverage {
        /// Model files.
        #[arg(required = true)]
        models: Vec<PathBuf>,
        /// Restrict the universe to these op types (comma-separated).
        #[arg(long, value_delimiter = ',')]
        ops: Vec<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Reduce a seed model (MEMO Alg. 1): drop repeated ops and blocks, keeping op type, op pair
    /// and parameter coverage.
    Reduce {
        /// The model to reduce.
        input: PathBuf,
        /// Where to write the reduced model.
        output: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write the built-in seed zoo (classic architectures, fixed seeds, random weights).
    Zoo {
        /// Directory to write `<name>.onnx` files into (created if missing).
        #[arg(long, required_unless_present = "list")]
        out: Option<PathBuf>,
        /// Only list the models.
        #[arg(long)]
        list: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run a coverage-guided mutation campaign (MEMO MCMC search); resumes an existing --out.
    Campaign(CampaignArgs),
    /// Minimize a failing model: a bug bundle (findings/<id>/) keeping its signature, a model
    /// keeping its first finding, or any model with --check CMD.
    Minimize {
        /// A bug bundle directory or an .onnx model.
        target: PathBuf,
        /// External interestingness test: CMD gets the candidate's path appended (also in
        /// $MUTAGRAPH_MODEL); exit status 0 = still interesting.
        #[arg(long)]
        check: Option<String>,
        /// Backends (default: the bundle's campaign backends, or reference, ort, tract,
        /// burn-ndarray as compiled in).
        #[arg(long, value_delimiter = ',')]
        backends: Vec<String>,
        /// Where the minimized model goes (default: BUNDLE/minimized.onnx with the rest of the
        /// bundle updated, or MODEL.min.onnx).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Budget: predicate calls.
        #[arg(long, default_value_t = 400)]
        max_checks: usize,
        /// Budget: wall time (`90s`, `2m`, `1h30m`).
        #[arg(long, value_parser = parse_duration)]
        time_limit: Option<Duration>,
        /// Seed of generated inputs (model files).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[command(flatten)]
        given: InputArgs,
        /// Keep the finding of this kind (crash, nan, inconsistency, hang).
        #[arg(long)]
        kind: Option<String>,
        /// Keep the finding on this backend.
        #[arg(long)]
        backend: Option<String>,
        /// Tolerance of the inconsistency oracle.
        #[arg(long, default_value = "approximate")]
        tolerance: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        pool: PoolArgs,
    },
    /// Render a campaign's report: OUT_DIR/report.html (self-contained, with plots and the
    /// findings table) and OUT_DIR/report.md (printed).
    Report {
        /// The campaign's output directory.
        dir: PathBuf,
        /// Print what was written (and the warnings) as JSON instead of the Markdown.
        #[arg(long)]
        json: bool,
    },
    /// The LLM layer: CrossProbe transfer of bug snippets, YANHUI generation from bug history,
    /// ATOC oracles, and `render` to see any prompt without calling a model. Model options
    /// (and the worker options) go before the subcommand.
    Prompt {
        #[command(subcommand)]
        cmd: mutagraph_engine::prompt::cli::PromptCmd,
        #[command(flatten)]
        llm: mutagraph_engine::prompt::LlmArgs,
        #[command(flatten)]
        pool: PoolArgs,
    },
    /// Run bug bundles again from their files, in fresh worker processes, through the
    /// campaign's triage: exit 0 when every bundle reproduces.
    Recheck {
        /// Bundle directories, or directories of bundles (a campaign or its `findings/`).
        #[arg(required = true)]
        bundles: Vec<PathBuf>,
        /// Backends (default: the campaign's).
        #[arg(long, value_delimiter = ',')]
        backends: Vec<String>,
        /// Also run each bundle's `repro.py` (the library's own Python package) and require
        /// it to say REPRODUCED where the library has one.
        #[arg(long)]
        repro: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        pool: PoolArgs,
    },
    /// Write generated mutants without running them (the input of the validity cross-check
    /// against onnx.checker).
    #[command(hide = true)]
    Mutants {
        /// Seeds: `zoo`, directories of .onnx files, or .onnx files.
        #[arg(long, value_delimiter = ',', num_args = 1..)]
        seeds: Vec<String>,
        /// How many mutants.
        #[arg(long, default_value_t = 1000)]
        count: usize,
        /// Random seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Serve one backend over the worker protocol on stdin/stdout (used by the engine).
    #[command(hide = true)]
    Worker,
}

/// Arguments of `campaign`.
#[derive(clap::Args)]
struct CampaignArgs {
    /// Seeds: `zoo` (the built-in zoo), directories of .onnx files, or .onnx files.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    seeds: Vec<String>,
    /// Output directory; an existing campaign there is resumed.
    #[arg(long)]
    out: PathBuf,
    /// A configuration to start from: the `campaign.toml` a campaign writes (flags given on
    /// the command line override its values).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Time limit of this session (`90s`, `10m`, `1h30m`).
    #[arg(long, value_parser = parse_duration)]
    time: Option<Duration>,
    /// Total iterations of the campaign.
    #[arg(long)]
    iterations: Option<u64>,
    /// Mutants in flight (default 1).
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<usize>,
    /// Backends, comma-separated (default: reference, ort, tract, burn-ndarray as compiled in;
    /// `cpu`: every CPU backend and variant).
    #[arg(long, value_delimiter = ',')]
    backends: Vec<String>,
    /// Master random seed (default 0).
    #[arg(long)]
    seed: Option<u64>,
    /// Seed selection: mcmc (MEMO Metropolis-Hastings) or random (uniform).
    #[arg(long, value_parser = ["mcmc", "random"])]
    search: Option<String>,
    /// MH parameter p (default: 1/|seeds × operators| clipped to [0.02, 0.5]).
    #[arg(long)]
    mcmc_p: Option<f64>,
    /// Size of the dynamic dims of generated inputs, fixed for the campaign (default: found per
    /// seed at admission, the smallest of 1, 2, 4, ... 224 the reference runs it at, batch-named
    /// dims staying 1). Seeds the reference cannot run are not mutated.
    #[arg(long)]
    free_dim: Option<usize>,
    #[command(flatten)]
    given: InputArgs,
    /// Print the session's summary as JSON on standard output.
    #[arg(long)]
    json: bool,
    /// Do not minimize new findings in the background.
    #[arg(long)]
    no_minimize: bool,
    /// How long the end of a session waits for pending minimizations (left ones are
    /// resumed by the next session).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    minimize_grace: Duration,
    #[command(flatten)]
    pool: PoolArgs,
}

/// Input shapes and values fixed by the user, shared by the commands that generate inputs.
#[derive(clap::Args, Clone, Default)]
struct InputArgs {
    /// The shape of an input, `NAME:1x3x320x320` (`NAME:` for a scalar); repeatable. Its
    /// symbolic dims take these sizes wherever they appear.
    #[arg(long = "input-shape", value_name = "NAME:SHAPE")]
    input_shape: Vec<String>,
    /// The value of every element of an input, `NAME=16000`; repeatable.
    #[arg(long = "input-value", value_name = "NAME=VALUE")]
    input_value: Vec<String>,
}

impl InputArgs {
    fn fixed(&self) -> Result<Fixed> {
        let mut f = Fixed::default();
        for s in &self.input_shape {
            let (n, shape) =
                solve::parse_shape(s).map_err(|e| anyhow::anyhow!("--input-shape {e}"))?;
            if f.shapes.insert(n.clone(), shape).is_some() {
                bail!("--input-shape: '{n}' is given twice");
            }
        }
        for s in &self.input_value {
            let (n, v) = solve::parse_value(s).map_err(|e| anyhow::anyhow!("--input-value {e}"))?;
            if f.values.insert(n.clone(), v).is_some() {
                bail!("--input-value: '{n}' is given twice");
            }
        }
        Ok(f)
    }
}

/// Worker pool settings shared by the commands that run backends.
#[derive(clap::Args, Clone)]
struct PoolArgs {
    /// Per-run time limit (`10s`, `2m`; a plain number is seconds) [default: 10s].
    #[arg(long, value_parser = parse_duration)]
    timeout: Option<Duration>,
    /// Resident memory cap per worker, MiB [default: 4096].
    #[arg(long)]
    mem_limit: Option<u64>,
    /// Path of libonnxruntime.so (else ORT_DYLIB_PATH, else the onnxruntime Python package).
    #[arg(long)]
    ort_dylib: Option<PathBuf>,
    /// Intra-op threads for backends that take it.
    #[arg(long)]
    threads: Option<usize>,
}

impl PoolArgs {
    /// The per-run time limit when none is given.
    const TIMEOUT: Duration = Duration::from_secs(10);
    /// The memory cap when none is given, MiB.
    const MEM_LIMIT_MIB: u64 = 4096;

    fn options(&self) -> Result<PoolOptions> {
        let timeout = self.timeout.unwrap_or(Self::TIMEOUT);
        if timeout.is_zero() {
            bail!("--timeout must be longer than 0s");
        }
        let exe = std::env::current_exe().context("locating the mutagraph executable")?;
        let mut o = PoolOptions::new(exe);
        o.timeout = timeout;
        o.mem_limit = self
            .mem_limit
            .unwrap_or(Self::MEM_LIMIT_MIB)
            .saturating_mul(1 << 20);
        o.config = WireConfig {
            ort_dylib: self.ort_dylib.clone(),
            threads: self.threads,
            nice: 0,
        };
        // Resolve the ONNX Runtime library once here rather than in every worker; when it
        // cannot be found, the worker of an `ort` backend reports why.
        #[cfg(feature = "ort")]
        if o.config.ort_dylib.is_none() {
            let cfg = catalog::Config {
                ort_dylib: None,
                threads: self.threads,
            };
            o.config.ort_dylib = mutagraph_backends::ort::find_library(&cfg).ok();
        }
        Ok(o)
    }
}

/// The backends named on the command line, or `fallback` (a catalog set) when none are.
fn backend_list(given: Vec<String>, fallback: fn() -> Vec<&'static str>) -> Result<Vec<String>> {
    let list: Vec<String> = if given.is_empty() {
        fallback().iter().map(|s| s.to_string()).collect()
    } else if given.len() == 1 && given[0] == "cpu" {
        catalog::cpu_set().iter().map(|s| s.to_string()).collect()
    } else {
        given
    };
    for b in &list {
        if !catalog::is_compiled(b) {
            // Let the catalog say why (unknown, or which feature brings it).
            if let Err(e) = catalog::create(b, &Default::default()) {
                bail!("{e}");
            }
        }
    }
    Ok(list)
}

/// Whether a bundle's library has a Python package `repro.py` runs (ONNX Runtime, tract).
fn needs_python(dir: &Path) -> bool {
    mutagraph_engine::bundle::read_meta(dir)
        .is_ok_and(|m| matches!(m.reproduce.library.as_str(), "onnxruntime" | "tract"))
}

fn run(cli: Cli) -> Result<ExitCode> {
    let quiet = cli.quiet;
    let verbose_flag = cli.verbose;
    match cli.cmd {
        Cmd::Minimize {
            target,
            check,
            backends,
            out,
            max_checks,
            time_limit,
            seed,
            given,
            kind,
            backend,
            tolerance,
            json,
            pool,
        } => {
            let tol = mutagraph_backends::compare::Tolerance::by_name(&tolerance)
                .ok_or_else(|| anyhow::anyhow!("unknown tolerance '{tolerance}'"))?;
            let req = mutagraph_engine::minimizecmd::Request {
                target: target.clone(),
                check,
                backends,
                out,
                max_checks,
                time_limit,
                seed,
                fixed: given.fixed()?,
                kind,
                backend,
                tolerance: tol,
            };
            let o = mutagraph_engine::minimizecmd::run(req, pool.options()?)?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&o)?);
            } else {
                out!("{}", o.to_text(&target));
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Prompt { cmd, llm, pool } => {
            mutagraph_engine::prompt::cli::run(cmd, &llm, pool.options()?)
        }
        Cmd::Recheck {
            bundles,
            backends,
            repro,
            json,
            pool,
        } => {
            let opts = pool.options()?;
            let dirs = mutagraph_engine::recheck::bundles(&bundles)?;
            let mut all = Vec::new();
            let mut failed = 0usize;
            for d in &dirs {
                let r = mutagraph_engine::recheck::recheck(d, &backends, &opts, repro)?;
                let py_ok = r
                    .repro_py
                    .as_ref()
                    .is_none_or(|l| l.starts_with("REPRODUCED") || !needs_python(d));
                if !(r.reproduced && py_ok) {
                    failed += 1;
                }
                if !json {
                    outln!(
                        "{} {}: {} ({})",
                        if r.reproduced {
                            "REPRODUCED"
                        } else {
                            "NOT REPRODUCED"
                        },
                        d.display(),
                        r.signature,
                        r.model
                    );
                    if !r.reproduced {
                        outln!("  {}", r.detail);
                    }
                    if let Some(l) = &r.repro_py {
                        outln!("  repro.py: {l}");
                    }
                }
                all.push(r);
            }
            if json {
                outln!("{}", serde_json::to_string_pretty(&all)?);
            } else {
                outln!(
                    "{} of {} bundles reproduce",
                    dirs.len() - failed,
                    dirs.len()
                );
            }
            Ok(if failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Cmd::Mutants {
            seeds,
            count,
            seed,
            out,
            json,
        } => {
            let w = mutagraph_engine::mutantscmd::run(&seeds, count, seed, &out)?;
            if json {
                outln!(
                    "{}",
                    serde_json::json!({
                        "out": out, "mutants": w.mutants, "iterations": w.iterations,
                        "skipped": w.skipped, "refused": w.rejected
                    })
                );
                return Ok(ExitCode::SUCCESS);
            }
            outln!(
                "wrote {} mutants to {} ({} iterations, {} skipped, {} refused)",
                w.mutants,
                out.display(),
                w.iterations,
                w.skipped,
                w.rejected
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Report { dir, json } => {
            let r = mutagraph_engine::report::render(&dir)?;
            for w in &r.warnings {
                tracing::warn!("{w}");
            }
            if json {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "html": r.html, "markdown": r.markdown, "warnings": r.warnings
                    }))?
                );
            } else {
                out!("{}", r.markdown_text);
                if !quiet {
                    eprintln!("wrote {} and {}", r.html.display(), r.markdown.display());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Reduce {
            input,
            output,
            json,
        } => {
            let m = Model::load(&input)?;
            let (r, report) = mutagraph_mutators::reduce::reduce(&m)
                .map_err(|e| anyhow::anyhow!("{}: {e}", input.display()))?;
            save_model(&r, &output)?;
            if json {
                let mut v = serde_json::to_value(report)?;
                v["input"] = serde_json::json!(input);
                v["output"] = serde_json::json!(output);
                outln!("{}", serde_json::to_string_pretty(&v)?);
                return Ok(ExitCode::SUCCESS);
            }
            outln!(
                "{}: nodes {} -> {}, parameters {} -> {}",
                input.display(),
                report.nodes_before,
                report.nodes_after,
                report.params_before,
                report.params_after
            );
            outln!(
                "  {} blocks; {} ops removed inside blocks, {} repeated blocks removed; written to {}",
                report.blocks,
                report.intra_removed,
                report.blocks_removed,
                output.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Coverage { models, ops, json } => {
            // `-v` (the global flag) also lists the uncovered op types.
            let verbose = verbose_flag > 0;
            let r = mutagraph_engine::coveragecmd::coverage_of(&models, &ops)?.report();
            if json {
                outln!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                out!("{}", mutagraph_engine::coveragecmd::to_text(&r, verbose));
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Run {
            model,
            backends,
            inputs,
            seed,
            free_dim,
            given,
            tolerance,
            reference,
            json,
            no_fail,
            pool,
        } => {
            let fixed = given.fixed()?;
            let tol = Tolerance::by_name(&tolerance)
                .with_context(|| format!("unknown tolerance '{tolerance}'"))?;
            // A bundle directory stands for its model, run on its own inputs.
            let (model, inputs) = if mutagraph_engine::inputs::is_bundle(&model) {
                let m = mutagraph_engine::inputs::bundle_model(&model);
                (m, inputs.or(Some(model)))
            } else {
                (model, inputs)
            };
            let m = Model::load(&model)?;
            // Backends get the model as checked, one self-contained buffer (text, and tensors
            // kept in side files, become one protobuf).
            validate::validate(&m).map_err(|e| anyhow::anyhow!("{}: {e}", model.display()))?;
            let bytes = m.to_bytes();
            for note in mutagraph_ir::import::declared_dim_notes(&m.graph) {
                tracing::warn!("{}: {note}", model.display());
            }
            let (values, source) = match &inputs {
                Some(p) => (
                    mutagraph_engine::inputs::read(&m, &model, p)?,
                    format!("from {}", p.display()),
                ),
                None => {
                    let seed = seed.unwrap_or(0);
                    let opts = mg_inputs::GenOptions::for_model(&m, free_dim, &fixed)
                        .map_err(|e| anyhow::anyhow!("{}: {e}", model.display()))?;
                    (
                        mg_inputs::generate(&m, seed, &opts)
                            .map_err(|e| anyhow::anyhow!("{}: {e}", model.display()))?,
                        format!("generated, seed {seed}"),
                    )
                }
            };
            let backends = backend_list(backends, catalog::default_set)?;
            let mut p = Pool::new(pool.options()?);
            let name = model.display().to_string();
            let summary = runcmd::run_model(
                &mut p,
                runcmd::RunRequest {
                    model_name: &name,
                    model: &bytes,
                    inputs: &values,
                    input_source: source,
                    reference: (reference != "none").then_some(reference.as_str()),
                    backends: &backends,
                    tolerance: tol,
                },
            )?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&summary)?);
            } else {
                out!("{}", summary.to_text());
            }
            let problems = summary.problems();
            if problems.is_empty() || no_fail {
                return Ok(ExitCode::SUCCESS);
            }
            if !quiet {
                eprintln!(
                    "{}: {} of {} backends failed or disagree (--no-fail to exit 0):",
                    model.display(),
                    problems.len(),
                    summary.runs.len()
                );
                for p in &problems {
                    eprintln!("  {p}");
                }
            }
            Ok(ExitCode::from(1))
        }
        Cmd::Conformance {
            suite,
            backends,
            filter,
            report,
            per_op,
            check,
            write_allowlist,
            json,
            pool,
        } => {
            let parts: Vec<&str> = if suite == "all" {
                mutagraph_backends::suite::PARTS.to_vec()
            } else {
                vec![suite.as_str()]
            };
            let backends = backend_list(backends, catalog::default_set)?;
            let cases = conformcmd::load_cases(&parts, filter.as_deref())?;
            tracing::info!(
                "conformance: {} tests ({}) on {}; {} tests with random expected outputs left out",
                cases.len(),
                parts.join(", "),
                backends.join(", "),
                mutagraph_backends::suite::NONDETERMINISTIC.len()
            );
            let mut rep = conformcmd::run_all(&pool.options()?, &backends, cases, true)?;
            rep.parts = parts.iter().map(|s| s.to_string()).collect();
            let bytes = serde_json::to_vec_pretty(&rep)?;
            if json {
                outln!("{}", String::from_utf8_lossy(&bytes));
            } else {
                out!("{}", conformcmd::failures_text(&rep));
                if per_op {
                    out!("\n{}", conformcmd::per_op_text(&rep));
                }
                out!("\n{}", conformcmd::summary_text(&rep));
            }
            mutagraph_ir::model::write_atomic(&report, &bytes)
                .with_context(|| format!("writing {}", report.display()))?;
            tracing::info!("report: {}", report.display());
            if let Some(dir) = write_allowlist {
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                for b in &rep.backends {
                    let path = dir.join(format!("{}.txt", b.backend));
                    mutagraph_ir::model::write_atomic(&path, Allowlist::render(b).as_bytes())
                        .with_context(|| format!("writing {}", path.display()))?;
                }
                tracing::info!("allowlists written to {}", dir.display());
            }
            let regressions: usize = rep
                .backends
                .iter()
                .map(|b| b.drift(&Allowlist::builtin(&b.backend)).new_failures.len())
                .sum();
            Ok(if check && regressions > 0 {
                eprintln!("error: {regressions} failures are not in the allowlists");
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Cmd::Zoo { out, list, json } => {
            let out = if list { None } else { out };
            if let Some(dir) = &out {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            let mut rows = Vec::new();
            if !json {
                outln!("{:<20} {:>6} {:>10}", "model", "nodes", "parameters");
            }
            for (name, m) in zoo::all() {
                let (nodes, params) = (m.graph.node_count(), zoo::parameter_count(&m));
                let path = out.as_ref().map(|d| d.join(format!("{name}.onnx")));
                if let Some(path) = &path {
                    m.save(path)
                        .with_context(|| format!("writing {}", path.display()))?;
                }
                if json {
                    rows.push(serde_json::json!({
                        "model": name, "nodes": nodes, "parameters": params, "file": path
                    }));
                } else {
                    outln!("{:<20} {:>6} {:>10}", name, nodes, params);
                }
            }
            if json {
                outln!("{}", serde_json::to_string_pretty(&rows)?);
            }
            if let Some(dir) = &out
                && !quiet
            {
                eprintln!("wrote {} models to {}", zoo::names().len(), dir.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Campaign(a) => {
            let json = a.json;
            let (req, pool) = campaign_request(a, quiet)?;
            mutagraph_engine::interrupt::install().context("installing the signal handlers")?;
            let s = mutagraph_engine::campaign::run(req, pool.options()?)?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&s)?);
            } else if !quiet {
                eprint!("{}", s.to_text());
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Worker => {
            mutagraph_backends::worker::serve().context("worker protocol")?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Inspect {
            model,
            json,
            no_fail,
            given,
        } => {
            let fixed = given.fixed()?;
            let ins = inspect_file(&model, &fixed)?;
            if !ins.errors.is_empty() && !no_fail {
                bail!("{}: {}", model.display(), ins.errors.join("; "));
            }
            if json {
                outln!("{}", serde_json::to_string_pretty(&ins)?);
            } else {
                out!("{}", ins.to_text());
            }
            Ok(if ins.errors.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Cmd::Convert {
            input,
            output,
            force,
            json,
        } => {
            let (m, external) = mutagraph_ir::external::load(&input)?;
            if let Err(e) = validate::validate(&m) {
                if !force {
                    bail!("{}: {e} (use --force to write it anyway)", input.display());
                }
                tracing::warn!("{}: {e}", input.display());
            }
            let nodes = m.graph.node_count();
            let mut data_file = None;
            let encode = |m: &Model| {
                if text::is_text_path(&output) {
                    text::print_model(m).into_bytes()
                } else {
                    m.to_bytes()
                }
            };
            if external.is_empty() {
                write_atomic(&output, &encode(&m))
                    .with_context(|| format!("writing {}", output.display()))?;
            } else {
                // The tensors the input kept in side files go to one data file beside the
                // output (the text syntax writes external data for initializers only).
                let ordinals: std::collections::HashSet<usize> =
                    external.iter().map(|r| r.place.ordinal).collect();
                let text_out = text::is_text_path(&output);
                let select = |p: &mutagraph_ir::external::Place| {
                    ordinals.contains(&p.ordinal) && (p.initializer || !text_out)
                };
                if let Some(data) = mutagraph_ir::external::save(m, &output, &select, &encode)
                    .with_context(|| format!("writing {}", output.display()))?
                {
                    data_file = Some(data);
                }
            }
            if json {
                outln!(
                    "{}",
                    serde_json::json!({"input": input, "output": output, "nodes": nodes, "data": data_file})
                );
            } else if !quiet {
                if let Some(d) = &data_file {
                    eprintln!("wrote {} (the tensor data)", d.display());
                }
                eprintln!("wrote {} ({nodes} nodes)", output.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Ops { json } => {
            let reg = Registry::global();
            if json {
                let specs: Vec<_> = reg.iter().collect();
                outln!("{}", serde_json::to_string_pretty(&specs)?);
            } else {
                outln!(
                    "{:<36} {:<10} {:<24} {:>7} {:>7} {:>6} {:>8}",
                    "op",
                    "category",
                    "opsets",
                    "inputs",
                    "outputs",
                    "attrs",
                    "buckets"
                );
                for s in reg.iter() {
                    let name = if s.domain.is_empty() {
                        s.op_type.to_string()
                    } else {
                        format!("{}.{}", s.domain, s.op_type)
                    };
                    let vers: Vec<String> = s.versions.iter().map(|v| v.to_string()).collect();
                    let (ilo, ihi) = s.input_arity();
                    let (olo, ohi) = s.output_arity();
                    let ar = |lo: usize, hi: Option<usize>| match hi {
                        Some(h) if h == lo => lo.to_string(),
                        Some(h) => format!("{lo}-{h}"),
                        None => format!("{lo}+"),
                    };
                    outln!(
                        "{:<36} {:<10} {:<24} {:>7} {:>7} {:>6} {:>8}",
                        name,
                        format!("{:?}", s.category),
                        vers.join(","),
                        ar(ilo, ihi),
                        ar(olo, ohi),
                        s.attrs.len(),
                        s.bucket_count()
                    );
                }
                outln!("{} ops", reg.len());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    if let Some(n) = cli.max_model_size {
        mutagraph_ir::limits::set_max_model_bytes(n);
    }
    match run(cli) {
        Ok(code) => code,
        // A reader that closed the pipe (`| head -1`) has all it wanted.
        Err(e) if mutagraph_engine::out::is_closed_stdout(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_text(&e));
            ExitCode::from(1)
        }
    }
}

/// An error and its causes on one line, each cause once: a cause whose text the line already
/// holds (a wrapper that prints its source) is left out.
fn error_text(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for c in e.chain() {
        let t = c.to_string();
        if line.contains(&t) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&t);
    }
    line
}

/// Logs go to standard error through `tracing`: warnings and notes by default, errors only
/// with `-q`, debug with `-v`, trace with `-vv`; `RUST_LOG` (for example
/// `RUST_LOG=mutagraph_engine=debug`) decides instead when set.
fn init_logging(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "info",
        (false, 1) => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// Writes a model as protobuf, or as text when the path ends in `.onnxtxt`.
fn save_model(m: &Model, path: &Path) -> Result<()> {
    let bytes = if text::is_text_path(path) {
        text::print_model(m).into_bytes()
    } else {
        m.to_bytes()
    };
    write_atomic(path, &bytes).with_context(|| format!("writing {}", path.display()))
}

/// The campaign's request: the command line over `--config` (a `campaign.toml`).
fn campaign_request(
    a: CampaignArgs,
    quiet: bool,
) -> Result<(mutagraph_engine::campaign::Request, PoolArgs)> {
    let mut pool = a.pool;
    let mut req = mutagraph_engine::campaign::Request {
        seeds: a.seeds,
        out: a.out,
        time: a.time,
        iterations: a.iterations,
        jobs: a.jobs,
        backends: a.backends,
        seed: a.seed,
        search: a.search,
        mcmc_p: a.mcmc_p,
        quiet,
        minimize: !a.no_minimize,
        free_dim: a.free_dim,
        fixed: a.given.fixed()?,
        minimize_grace: a.minimize_grace,
    };
    if req.backends.len() == 1 && req.backends[0] == "cpu" {
        req.backends = catalog::cpu_set().iter().map(|s| s.to_string()).collect();
    }
    if let Some(path) = &a.config {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let c: mutagraph_engine::campaign::Config = toml::from_str(&text)
            .with_context(|| format!("{}: not a campaign.toml", path.display()))?;
        if req.seeds.is_empty() {
            req.seeds = c.seeds;
        }
        if req.backends.is_empty() {
            req.backends = c.backends;
        }
        req.seed = req.seed.or(Some(c.seed));
        req.search = req.search.or(Some(c.search));
        if c.mcmc_p.is_finite() {
            req.mcmc_p = req.mcmc_p.or(Some(c.mcmc_p));
        }
        req.jobs = req.jobs.or(Some(c.jobs));
        req.iterations = req.iterations.or(c.iterations);
        req.time = req.time.or(c.time_s.map(Duration::from_secs_f64));
        req.free_dim = req.free_dim.or(c.free_dim);
        if req.fixed.is_empty() {
            req.fixed = c.fixed;
        }
        pool.timeout = pool
            .timeout
            .or(Some(Duration::from_secs_f64(c.run_timeout_s)));
        pool.mem_limit = pool.mem_limit.or(Some(c.mem_limit_mib));
    }
    Ok((req, pool))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap's own consistency checks over every command (a flag defined twice, as a global
    /// flag and again by a command, panics at parse time otherwise).
    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
