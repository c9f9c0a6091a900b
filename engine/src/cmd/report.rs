//! `mutagraph report DIR`: renders a campaign's report ([`crate::report`]).
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `mutagraph report`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The campaign's output directory.
    pub dir: PathBuf,
    /// Print what was written (and the warnings) as JSON instead of the Markdown.
    #[arg(long)]
    pub json: bool,
}

/// Runs `mutagraph report`.
pub fn main(a: Args, g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args { dir, json } = a;
    let r = crate::report::render(&dir)?;
    for w in &r.warnings {
        tracing::warn!("{w}");
    }
    if json {
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "html": r.html, "markdown": r.markdown, "warnings": r.warnings
            }))?
        );
    } else {
        crate::out!("{}", r.markdown_text);
        if !g.quiet {
            eprintln!("wrote {} and {}", r.html.display(), r.markdown.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
