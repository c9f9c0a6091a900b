//! The `mutagraph prompt` subcommands.
use super::LlmArgs;
use super::judge::Judge;
use anyhow::{Result, anyhow, bail};
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::worker::{Pool, PoolOptions};
use mutagraph_prompts::llm::Message;
use mutagraph_prompts::template;
use std::path::PathBuf;
use std::process::ExitCode;

/// `mutagraph prompt ...`.
#[derive(clap::Subcommand, Debug)]
pub enum PromptCmd {
    /// Show a prompt without calling a model: `template NAME [--var k=v]...`, `list`, or the
    /// prompt another subcommand would send (`transfer FILE`, `generate [--cluster ID]`,
    /// `oracle CASE`).
    Render {
        #[command(subcommand)]
        what: RenderWhat,
    },
}

/// What `prompt render` shows.
#[derive(clap::Subcommand, Debug)]
pub enum RenderWhat {
    /// Every template with its version and variables.
    List,
    /// One template file, rendered with the given variables.
    Template {
        /// `name` (newest version) or `name.vN`.
        name: String,
        /// Variables, `key=value` (repeatable; `key=@FILE` reads the value from FILE).
        #[arg(long = "var", value_parser = parse_var)]
        vars: Vec<(String, String)>,
    },
}

fn parse_var(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not key=value"))?;
    let v = match v.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?,
        None => v.to_string(),
    };
    Ok((k.to_string(), v))
}

/// Prints messages as a chat transcript.
pub fn print_messages(messages: &[Message]) {
    for m in messages {
        println!("=== {:?} ===", m.role);
        println!("{}", m.content.trim_end());
    }
}

/// Runs a `prompt` subcommand.
pub fn run(cmd: PromptCmd, _llm: &LlmArgs, _pool: PoolOptions) -> Result<ExitCode> {
    match cmd {
        PromptCmd::Render { what } => match what {
            RenderWhat::List => {
                for t in template::all() {
                    println!("{}  variables: {}", t.id(), t.variables().join(", "));
                }
                Ok(ExitCode::SUCCESS)
            }
            RenderWhat::Template { name, vars } => {
                let t = template::get(&name).map_err(|e| anyhow!("{e}"))?;
                let text = t
                    .render(&vars.into_iter().collect())
                    .map_err(|e| anyhow!("{e}"))?;
                print!("{text}");
                Ok(ExitCode::SUCCESS)
            }
        },
    }
}

/// A judge over the default backends, writing bug bundles under `out/findings/`.
pub fn judge_for<'p>(
    pool: &'p mut Pool,
    backends: &[String],
    out: Option<&PathBuf>,
) -> Result<Judge<'p>> {
    if backends.is_empty() {
        bail!("no backends");
    }
    let mut j = Judge::new(pool, backends.to_vec(), Tolerance::APPROXIMATE);
    j.findings_dir = out.map(|o| o.join("findings"));
    Ok(j)
}
