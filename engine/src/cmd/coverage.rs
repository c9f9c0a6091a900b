//! `mutagraph coverage`: what a set of models covers of the op type, op pair, parameter and
//! input universes (see `mutagraph_mutators::coverage`).
use anyhow::Result;
use mutagraph_ir::Model;
use mutagraph_mutators::coverage::{Coverage, Report, Universe};
use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// The arguments of `mutagraph coverage`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Model files.
    #[arg(required = true)]
    pub models: Vec<PathBuf>,
    /// Restrict the universe to these op types (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub ops: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `mutagraph coverage`.
pub fn main(a: Args, g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args { models, ops, json } = a;
    // `-v` (the global flag) also lists the uncovered op types.
    let verbose = g.verbose > 0;
    let r = coverage_of(&models, &ops)?.report();
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        crate::out!("{}", to_text(&r, verbose));
    }
    Ok(ExitCode::SUCCESS)
}

/// The coverage of `models` over the full universe, or over `ops` when given.
pub fn coverage_of(models: &[PathBuf], ops: &[String]) -> Result<Coverage> {
    let universe = if ops.is_empty() {
        Universe::full()
    } else {
        Arc::new(Universe::restricted(ops).map_err(|e| super::refused(format!("--ops: {e}")))?)
    };
    let mut cov = Coverage::new(universe);
    for p in models {
        let m = Model::load(p)?;
        cov.add_model(&m);
    }
    Ok(cov)
}

/// The text form of a report: one `covered / total (pct%)` line per family; with `verbose`,
/// the uncovered op types and the op types seen outside the universe.
pub fn to_text(r: &Report, verbose: bool) -> String {
    let mut s = format!("{r}\n");
    if r.outside_pairs > 0 {
        let _ = writeln!(s, "pairs seen outside the universe: {}", r.outside_pairs);
    }
    if verbose {
        let _ = writeln!(
            s,
            "uncovered op types ({}): {}",
            r.uncovered_op_types.len(),
            r.uncovered_op_types.join(" ")
        );
        if !r.outside_op_types.is_empty() {
            let _ = writeln!(
                s,
                "op types outside the universe ({}): {}",
                r.outside_op_types.len(),
                r.outside_op_types.join(" ")
            );
        }
    }
    s
}
