//! `mutagraph consistency`: the consistency benchmark ([`crate::consistency`]): its
//! arguments, the run, and what it prints.
use super::{Globals, InputArgs, PoolArgs};
use crate::campaign::admission::Sizing;
use crate::consistency::{self, Options};
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `mutagraph consistency`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Models: `zoo` (the built-in zoo), .onnx / .onnxtxt files, directories of them (walked
    /// recursively), campaign output directories (their seeds and corpus).
    #[arg(required = true, value_name = "zoo|DIR|FILE")]
    pub models: Vec<String>,
    /// Output directory (created if missing): consistency.json, consistency.md,
    /// consistency.html.
    #[arg(long)]
    pub out: PathBuf,
    /// Backends, comma-separated (default: reference, ort, tract, burn-ndarray as compiled
    /// in; `cpu`: every CPU backend and variant).
    #[arg(long, value_delimiter = ',')]
    pub backends: Vec<String>,
    /// Seed of the generated inputs (the same for every model).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// One size for every dynamic input dim, batches too (default: sizes solved from the
    /// graph, as a campaign's admission chooses them).
    #[arg(long)]
    pub free_dim: Option<usize>,
    #[command(flatten)]
    pub given: InputArgs,
    #[command(flatten)]
    pub tolerance: super::ToleranceArgs,
    /// Runs per backend and model; the median run time is its latency.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Do not localize disagreements with the reference (op types are then attributed by
    /// containment).
    #[arg(long)]
    pub no_localize: bool,
    /// Print the result (consistency.json) on standard output instead of the Markdown.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub pool: PoolArgs,
}

/// Runs `mutagraph consistency`.
pub fn main(a: Args, g: &Globals) -> Result<ExitCode> {
    let tolerance = a.tolerance.get()?;
    if a.repeat == 0 {
        return Err(super::refused("--repeat must be at least 1"));
    }
    let opts = Options {
        backends: super::backend_list(a.backends)?,
        seed: a.seed,
        sizing: match a.free_dim {
            Some(n) => Sizing::Uniform(n.max(1)),
            None => Sizing::Solved,
        },
        fixed: a.given.fixed()?,
        tolerance,
        repeat: a.repeat,
        localize: !a.no_localize,
    };
    // A path that is not there, or holds no model: the command line is wrong.
    let entries = consistency::collect(&a.models).map_err(|e| match e {
        consistency::Error::Input { .. } => super::refused(e.to_string()),
        e => anyhow::Error::from(e),
    })?;
    let report = consistency::run(&a.models, &entries, &opts, a.pool.options()?)?;
    let written = consistency::write(&report, &a.out)?;
    if a.json {
        crate::outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        crate::out!("{}", consistency::page::markdown(&report));
    }
    if !g.quiet {
        eprintln!(
            "wrote {}, {} and {}",
            written.json.display(),
            written.markdown.display(),
            written.html.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
