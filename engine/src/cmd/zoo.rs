//! `mutagraph zoo`: the built-in seed zoo, listed or written as ONNX files.
use anyhow::Context;
use mutagraph_mutators::zoo;
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `mutagraph zoo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Directory to write `<name>.onnx` files into (created if missing).
    #[arg(long, required_unless_present = "list")]
    pub out: Option<PathBuf>,
    /// Only list the models.
    #[arg(long)]
    pub list: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `mutagraph zoo`.
pub fn main(a: Args, g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args { out, list, json } = a;
    let out = if list { None } else { out };
    if let Some(dir) = &out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut rows = Vec::new();
    if !json {
        crate::outln!("{:<20} {:>6} {:>10}", "model", "nodes", "parameters");
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
            crate::outln!("{:<20} {:>6} {:>10}", name, nodes, params);
        }
    }
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&rows)?);
    }
    if let Some(dir) = &out
        && !g.quiet
    {
        eprintln!("wrote {} models to {}", zoo::names().len(), dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
