//! `mutagraph convert IN OUT`: a model imported, validated and exported again (protobuf or
//! `.onnxtxt` either way; tensors kept in side files go to `OUT.data`).
use anyhow::{Context, bail};
use mutagraph_ir::model::write_atomic;
use mutagraph_ir::{Model, text, validate};
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `mutagraph convert`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Input model (`.onnxtxt`: text).
    pub input: PathBuf,
    /// Output model, written atomically (`.onnxtxt`: text).
    pub output: PathBuf,
    /// Write even when validation fails.
    #[arg(long)]
    pub force: bool,
    /// Print what was written as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `mutagraph convert`.
pub fn main(a: Args, g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args {
        input,
        output,
        force,
        json,
    } = a;
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
        crate::outln!(
            "{}",
            serde_json::json!({"input": input, "output": output, "nodes": nodes, "data": data_file})
        );
    } else if !g.quiet {
        if let Some(d) = &data_file {
            eprintln!("wrote {} (the tensor data)", d.display());
        }
        eprintln!("wrote {} ({nodes} nodes)", output.display());
    }
    Ok(ExitCode::SUCCESS)
}
