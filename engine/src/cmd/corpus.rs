//! `mutagraph corpus`: work on a campaign's corpus ([`crate::corpus`]).
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;

/// The subcommands of `mutagraph corpus`.
#[derive(clap::Subcommand, Debug)]
pub enum Args {
    /// Write every corpus entry's model into a directory (`<id>.onnx`): copied where the corpus
    /// keeps it, else rebuilt from its seed and trace and checked against the SHA-256 the
    /// campaign recorded.
    Export {
        /// The campaign's output directory.
        dir: PathBuf,
        /// Where to write the models.
        #[arg(long)]
        out: PathBuf,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `mutagraph corpus`.
pub fn main(a: Args, g: &super::Globals) -> Result<ExitCode> {
    match a {
        Args::Export { dir, out, json } => {
            if !dir.join("corpus").is_dir() {
                return Err(super::refused(format!(
                    "{}: no corpus here: not a campaign directory",
                    dir.display()
                )));
            }
            let r = crate::corpus::export::export(&dir, &out)
                .with_context(|| format!("exporting the corpus of {}", dir.display()))?;
            if json {
                crate::outln!("{}", serde_json::to_string_pretty(&r)?);
            } else if !g.quiet {
                eprintln!(
                    "{}: {} entries: {} models copied, {} rebuilt from their traces, {} failed",
                    out.display(),
                    r.entries,
                    r.copied,
                    r.rebuilt,
                    r.failed.len()
                );
                for (id, why) in &r.failed {
                    eprintln!("  {id}: {why}");
                }
            }
            Ok(if r.failed.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}
