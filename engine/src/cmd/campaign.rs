//! `mutagraph campaign`: the command line of a campaign ([`crate::campaign`]): its arguments
//! over an optional `--config campaign.toml`, the signal handlers, and the session's summary.
use super::{Globals, InputArgs, PoolArgs, parse_duration};
use crate::campaign::{Config, Request};
use anyhow::{Context, Result};
use mutagraph_backends::catalog;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The arguments of `mutagraph campaign`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seeds: `zoo` (the built-in zoo), directories of .onnx files, or .onnx files.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub seeds: Vec<String>,
    /// Output directory; an existing campaign there is resumed.
    #[arg(
        long,
        required_unless_present = "sync_dir",
        conflicts_with = "sync_dir"
    )]
    pub out: Option<PathBuf>,
    /// A directory shared by the instances of one campaign (on this machine, or on a shared
    /// filesystem): this instance writes into `SYNC/NAME`, imports the other instances'
    /// coverage-adding corpus entries every 30 s, and files a finding's signature only when no
    /// other instance filed it. Needs `--instance`.
    #[arg(long, value_name = "SYNC", requires = "instance")]
    pub sync_dir: Option<PathBuf>,
    /// This instance's name in the sync directory (letters, digits, `-`, `_`, `.`).
    #[arg(long, value_name = "NAME", requires = "sync_dir")]
    pub instance: Option<String>,
    /// How often an instance imports the others' entries (default 30s).
    #[arg(long, value_parser = parse_duration, requires = "sync_dir")]
    pub sync_every: Option<Duration>,
    /// A configuration to start from: the `campaign.toml` a campaign writes (flags given on
    /// the command line override its values).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Time limit of this session (`90s`, `10m`, `1h30m`).
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,
    /// Total iterations of the campaign.
    #[arg(long)]
    pub iterations: Option<u64>,
    /// Lanes: each backend runs this many mutants at once (default: the cores shared by the
    /// backends, at least 1).
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    /// Backends, comma-separated (default: reference, ort, tract, burn-ndarray as compiled in;
    /// `cpu`: every CPU backend and variant).
    #[arg(long, value_delimiter = ',')]
    pub backends: Vec<String>,
    /// Master random seed (default 0).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Seed selection: mcmc (MEMO Metropolis-Hastings) or random (uniform).
    #[arg(long, value_parser = ["mcmc", "random"])]
    pub search: Option<String>,
    /// MH parameter p (default: 1/|seeds × operators| clipped to [0.02, 0.5]).
    #[arg(long)]
    pub mcmc_p: Option<f64>,
    /// Size of the dynamic dims of generated inputs, fixed for the campaign (default: found per
    /// seed at admission, the smallest of 1, 2, 4, ... 224 the reference runs it at, batch-named
    /// dims staying 1). Seeds the reference cannot run are not mutated.
    #[arg(long)]
    pub free_dim: Option<usize>,
    #[command(flatten)]
    pub given: InputArgs,
    /// Print the session's summary as JSON on standard output.
    #[arg(long)]
    pub json: bool,
    /// Do not minimize new findings in the background.
    #[arg(long)]
    pub no_minimize: bool,
    /// Disk budget of the output directory (`500M`, `2G`; `none`: unbounded; default 500 MB).
    /// Over 90 % of it, corpus models become trace-only (rebuilt by `mutagraph corpus
    /// export`), then entries whose coverage others hold are culled.
    #[arg(long, value_parser = parse_max_disk, value_name = "SIZE")]
    pub max_disk: Option<u64>,
    /// How long the end of a session waits for pending minimizations (left ones are
    /// resumed by the next session).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub minimize_grace: Duration,
    #[command(flatten)]
    pub pool: PoolArgs,
}

/// `--max-disk`: a size, or `none` for no budget (0).
fn parse_max_disk(s: &str) -> Result<u64, String> {
    match s.trim() {
        "none" | "unlimited" => Ok(0),
        _ => super::parse_size(s),
    }
}

/// Runs `mutagraph campaign`.
pub fn main(a: Args, g: &Globals) -> Result<ExitCode> {
    let json = a.json;
    let (req, pool) = request(a, g.quiet)?;
    crate::interrupt::install().context("installing the signal handlers")?;
    let s = crate::campaign::run(req, pool.options()?)?;
    // The result is printed even with -q, which silences the status screen and notes.
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        eprint!("{}", s.to_text());
    }
    Ok(ExitCode::SUCCESS)
}

/// The campaign's request: the command line over `--config` (a `campaign.toml`), whose
/// worker settings fill the pool's where the command line gives none.
fn request(a: Args, quiet: bool) -> Result<(Request, PoolArgs)> {
    let mut pool = a.pool;
    let out = match (&a.sync_dir, &a.instance, a.out) {
        (Some(sync), Some(name), _) => {
            if !crate::campaign::sync::valid_instance(name) {
                return Err(super::refused(format!(
                    "--instance '{name}': use letters, digits, '-', '_' and '.' (not first), \
                     at most 64"
                )));
            }
            std::fs::create_dir_all(sync)
                .with_context(|| format!("creating {}", sync.display()))?;
            sync.join(name)
        }
        (_, _, Some(out)) => out,
        _ => {
            return Err(super::refused(
                "--out or --sync-dir with --instance is required",
            ));
        }
    };
    let mut req = Request {
        seeds: a.seeds,
        out,
        instance: a.instance,
        sync_every: a.sync_every,
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
        max_disk: a.max_disk,
    };
    if req.backends.len() == 1 && req.backends[0] == "cpu" {
        req.backends = catalog::cpu_set().iter().map(|s| s.to_string()).collect();
    }
    if let Some(path) = &a.config {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let c: Config = toml::from_str(&text)
            .with_context(|| format!("{}: not a campaign.toml", path.display()))?;
        pool.timeout = pool
            .timeout
            .or(Some(Duration::from_secs_f64(c.run_timeout_s)));
        pool.mem_limit = pool.mem_limit.or(Some(c.mem_limit_mib));
        req.fill_from(c);
    }
    Ok((req, pool))
}
