//! `mutagraph reduce IN OUT`: seed reduction (MEMO Alg. 1) of one model.

use mutagraph_ir::Model;
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `mutagraph reduce`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model to reduce.
    pub input: PathBuf,
    /// Where to write the reduced model.
    pub output: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `mutagraph reduce`.
pub fn main(a: Args, _g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args {
        input,
        output,
        json,
    } = a;
    let m = Model::load(&input)?;
    let (r, report) = mutagraph_mutators::reduce::reduce(&m)
        .map_err(|e| anyhow::anyhow!("{}: {e}", input.display()))?;
    super::save_model(&r, &output)?;
    if json {
        let mut v = serde_json::to_value(report)?;
        v["input"] = serde_json::json!(input);
        v["output"] = serde_json::json!(output);
        crate::outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    crate::outln!(
        "{}: nodes {} -> {}, parameters {} -> {}",
        input.display(),
        report.nodes_before,
        report.nodes_after,
        report.params_before,
        report.params_after
    );
    crate::outln!(
        "  {} blocks; {} ops removed inside blocks, {} repeated blocks removed; written to {}",
        report.blocks,
        report.intra_removed,
        report.blocks_removed,
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}
