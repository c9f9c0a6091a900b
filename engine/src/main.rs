//! The `mutagraph` command line: it parses the arguments and dispatches to the command's
//! module in `mutagraph_engine::cmd`, which does the work and prints the result.
use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use mutagraph_engine::cmd;
use std::process::ExitCode;

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
    /// Less output: errors and the result only (no status screen, no notes).
    #[arg(short, long, global = true)]
    quiet: bool,
    /// The largest model file any command reads (`512M`, `2G`; default 1G, or
    /// MUTAGRAPH_MAX_MODEL_BYTES).
    #[arg(long, global = true, value_name = "SIZE", value_parser = cmd::parse_size)]
    max_model_size: Option<u64>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Show a model: opsets, inputs/outputs, op histogram, parameters, every value's inferred type.
    Inspect(cmd::inspect::Args),
    /// Re-export a model through the IR (validated first). Files ending in `.onnxtxt` are
    /// read or written in ONNX's textual syntax, any other file as protobuf. Tensors the input
    /// keeps in side files go to `OUTPUT.data` beside the output.
    Convert(cmd::convert::Args),
    /// List the ops of the registry with their opsets.
    Ops(cmd::ops::Args),
    /// Run a model on backends, each in an isolated worker, against the f64 reference.
    Run(cmd::run::Args),
    /// Run the ONNX backend test suite (Debian libonnx-testdata) on backends.
    Conformance(cmd::conformance::Args),
    /// Coverage of models: op types, connectable op pairs, parameter buckets, input cells.
    Coverage(cmd::coverage::Args),
    /// Reduce a seed model (MEMO Alg. 1): drop repeated ops and blocks, keeping op type, op pair
    /// and parameter coverage.
    Reduce(cmd::reduce::Args),
    /// Write the built-in seed zoo (classic architectures, fixed seeds, random weights).
    Zoo(cmd::zoo::Args),
    /// Run a coverage-guided mutation campaign (MEMO MCMC search); resumes an existing --out.
    Campaign(cmd::campaign::Args),
    /// Work on a campaign's corpus: `export` writes every entry's model (rebuilding the
    /// trace-only ones).
    #[command(subcommand)]
    Corpus(cmd::corpus::Args),
    /// Minimize a failing model: a bug bundle (findings/<id>/) keeping its signature, a model
    /// keeping its first finding, or any model with --check CMD.
    Minimize(cmd::minimize::Args),
    /// Render a campaign's report: OUT_DIR/report.html (self-contained, with plots and the
    /// findings table) and OUT_DIR/report.md (printed).
    Report(cmd::report::Args),
    /// The LLM layer: CrossProbe transfer of bug snippets, YANHUI generation from bug history,
    /// ATOC oracles, and `render` to see any prompt without calling a model. Model options
    /// (and the worker options) go before the subcommand.
    Prompt {
        #[command(subcommand)]
        cmd: mutagraph_engine::prompt::cli::PromptCmd,
        #[command(flatten)]
        llm: mutagraph_engine::prompt::LlmArgs,
        #[command(flatten)]
        pool: cmd::PoolArgs,
    },
    /// The consistency benchmark: run models on every backend of a set and report how often
    /// each pair agrees (a matrix), disagreement per op type and latency per backend, into
    /// OUT/consistency.{json,md,html}.
    Consistency(cmd::consistency::Args),
    /// Run bug bundles again from their files, in fresh worker processes, through the
    /// campaign's triage: exit 0 when every bundle reproduces.
    Recheck(cmd::recheck::Args),
    /// Write generated mutants without running them (the input of the validity cross-check
    /// against onnx.checker).
    #[command(hide = true)]
    Mutants(cmd::mutants::Args),
    /// Serve one backend over the worker protocol on stdin/stdout (used by the engine).
    #[command(hide = true)]
    Worker,
}

/// Runs the command the line names.
fn dispatch(cli: Cli) -> Result<ExitCode> {
    let g = cmd::Globals {
        quiet: cli.quiet,
        verbose: cli.verbose,
    };
    match cli.cmd {
        Cmd::Inspect(a) => cmd::inspect::main(a, &g),
        Cmd::Convert(a) => cmd::convert::main(a, &g),
        Cmd::Ops(a) => cmd::ops::main(a, &g),
        Cmd::Run(a) => cmd::run::main(a, &g),
        Cmd::Conformance(a) => cmd::conformance::main(a, &g),
        Cmd::Coverage(a) => cmd::coverage::main(a, &g),
        Cmd::Reduce(a) => cmd::reduce::main(a, &g),
        Cmd::Zoo(a) => cmd::zoo::main(a, &g),
        Cmd::Campaign(a) => cmd::campaign::main(a, &g),
        Cmd::Corpus(a) => cmd::corpus::main(a, &g),
        Cmd::Minimize(a) => cmd::minimize::main(a, &g),
        Cmd::Report(a) => cmd::report::main(a, &g),
        Cmd::Recheck(a) => cmd::recheck::main(a, &g),
        Cmd::Consistency(a) => cmd::consistency::main(a, &g),
        Cmd::Mutants(a) => cmd::mutants::main(a, &g),
        Cmd::Prompt { cmd, llm, pool } => {
            mutagraph_engine::prompt::cli::run(cmd, &llm, pool.options()?)
        }
        Cmd::Worker => {
            mutagraph_backends::worker::serve().context("worker protocol")?;
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
    match dispatch(cli) {
        Ok(code) => code,
        // A reader that closed the pipe (`| head -1`) has all it wanted.
        Err(e) if mutagraph_engine::out::is_closed_stdout(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_text(&e));
            ExitCode::from(cmd::exit_code(&e))
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
