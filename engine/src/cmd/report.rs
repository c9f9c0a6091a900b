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
    /// Search each bundle's op and message in its library's issue tracker first, and list the
    /// closest issues in its REPORT.md under "Possibly known upstream" (needs network access;
    /// GitHub's API over https needs a build with `--features tls`).
    #[arg(long)]
    pub known_upstream: bool,
    /// The GitHub API the searches go to.
    #[arg(long, default_value = crate::bundle::upstream::GITHUB_API, value_name = "URL")]
    pub tracker_api: String,
    /// Longest wait for one search.
    #[arg(long, default_value = "20s", value_parser = crate::cmd::parse_duration, value_name = "DURATION")]
    pub tracker_timeout: std::time::Duration,
}

/// Runs `mutagraph report`.
pub fn main(a: Args, g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args {
        dir,
        json,
        known_upstream,
        tracker_api,
        tracker_timeout,
    } = a;
    if known_upstream {
        search_upstream(&dir, &tracker_api, tracker_timeout, g)?;
    }
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

/// `--known-upstream`: every bundle under `DIR/findings` searched in its library's tracker.
fn search_upstream(
    dir: &std::path::Path,
    api: &str,
    timeout: std::time::Duration,
    g: &super::Globals,
) -> anyhow::Result<()> {
    let findings = dir.join("findings");
    let Ok(entries) = std::fs::read_dir(&findings) else {
        return Ok(());
    };
    let mut bundles: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("meta.json").is_file())
        .collect();
    bundles.sort();
    for b in bundles {
        let found = crate::bundle::note_upstream(&b, api, timeout)?;
        if g.quiet {
            continue;
        }
        match found {
            Some(s) if s.error.is_some() => eprintln!(
                "{}: search failed: {}",
                b.display(),
                s.error.unwrap_or_default()
            ),
            Some(s) => eprintln!("{}: {} issues for {}", b.display(), s.issues.len(), s.query),
            None => {}
        }
    }
    Ok(())
}
