//! LLM client: the request and answer types every part of the layer uses, the `Llm` trait the
//! providers implement, and the providers themselves.
//!
//! # Providers
//!
//! - `none` (the default): every request fails with [`LlmError::Disabled`], whose message says
//!   how to configure a real provider. Nothing touches the network.
//! - `http`: an OpenAI-compatible chat-completions endpoint (`POST {base_url}/chat/completions`),
//!   as served by the llama.cpp server, Ollama, vLLM and hosted APIs. Plain `http://` works in
//!   the default build; `https://` needs the cargo feature `tls`.
//! - `replay`: answers from a directory of recorded exchanges (one pretty JSON file per
//!   request, named by [`request_key`]); a request without a recording fails with
//!   [`LlmError::NotRecorded`] naming the file it looked for. This is what CI uses.
//! - `record`: wraps another provider (`record_from`, `http` by default) and writes every
//!   answered exchange into the replay directory (temp file + rename).
//! - `local` (cargo feature `local`): an embedded llama.cpp model loaded from a GGUF file and
//!   prompted with the model's own chat template. Without the feature, `connect` answers
//!   [`LlmError::Disabled`] saying how to build it.
//!
//! A request may carry a [`Constraint`] (a GBNF grammar or a JSON schema): `local` samples
//! under llama.cpp's grammar sampler, `http` sends it in the fields the configured
//! [`ConstraintStyle`] names, and it is part of the replay key.
//!
//! Several answers to one prompt are k separate requests with seeds `seed, seed + 1, ...`
//! ([`sample_k`]).
//!
//! # Configuration
//!
//! [`LlmConfig`] is plain serde data (TOML/JSON) with defaults; [`LlmConfig::from_env`] starts
//! from the defaults and overlays these environment variables:
//!
//! | variable | field | example |
//! | --- | --- | --- |
//! | `MUTAGRAPH_LLM_PROVIDER` | `provider` | `none`, `http`, `replay`, `record`, `local` |
//! | `MUTAGRAPH_LLM_BASE_URL` | `base_url` | `http://127.0.0.1:8080/v1` |
//! | `MUTAGRAPH_LLM_MODEL` | `model` | `qwen2.5-coder:7b` |
//! | `MUTAGRAPH_LLM_API_KEY_ENV` | `api_key_env` | name of the variable that holds the key |
//! | `MUTAGRAPH_LLM_TIMEOUT` | `timeout_secs` | seconds per attempt, e.g. `60` or `2.5` |
//! | `MUTAGRAPH_LLM_RETRIES` | `retries` | retries after the first attempt, e.g. `2` |
//! | `MUTAGRAPH_LLM_BACKOFF_MS` | `backoff_ms` | first retry delay, doubled each retry |
//! | `MUTAGRAPH_LLM_TEMPERATURE` | `temperature` | overrides every request's temperature |
//! | `MUTAGRAPH_LLM_SEED` | `seed` | seed for requests that carry none |
//! | `MUTAGRAPH_LLM_MAX_TOKENS` | `max_tokens` | limit for requests that carry none |
//! | `MUTAGRAPH_LLM_REPLAY_DIR` | `replay_dir` | directory of recordings |
//! | `MUTAGRAPH_LLM_RECORD_FROM` | `record_from` | provider that `record` wraps |
//! | `MUTAGRAPH_LLM_GGUF` | `gguf` | GGUF model file for `local` |
//! | `MUTAGRAPH_LLM_CTX` | `n_ctx` | largest context in tokens for `local` (0: the model's own) |
//! | `MUTAGRAPH_LLM_THREADS` | `n_threads` | CPU threads for `local` |
//! | `MUTAGRAPH_LLM_CONSTRAINTS` | `constraints` | `llama.cpp` (default), `vllm`, `openai`, `off` |
//!
//! The API key itself is read from the variable named by `api_key_env` (default
//! `MUTAGRAPH_LLM_API_KEY`), falling back to `OPENAI_API_KEY`; it is never stored in the config.
//! With no key the `Authorization` header is left out (local servers need none).
use serde::{Deserialize, Serialize};

mod config;
mod constraint;
mod http;
#[cfg(feature = "local")]
mod local;
mod none;
mod replay;
pub mod stub;

pub use config::{
    DEFAULT_API_KEY_ENV, FALLBACK_API_KEY_ENV, LlmConfig, Provider, find_smollm2_gguf,
};
pub use constraint::{Constraint, ConstraintStyle, SERVER_ROOT};
pub use http::decode_completion;
pub use http::{HttpLlm, agent as http_agent};
#[cfg(feature = "local")]
pub use local::LocalLlm;
pub use none::{NOT_CONFIGURED, NoneLlm};
pub use replay::{RecordLlm, Recording, ReplayLlm, canonical_request, fnv1a64, request_key};

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// One chat-completion request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub temperature: f32,
    /// Sampling seed; k answers are k requests with seeds `seed, seed + 1, ...`.
    pub seed: Option<u64>,
    pub max_tokens: Option<u32>,
    /// The template id (`name.vN`) the prompt was rendered from, recorded with the exchange.
    pub template: Option<String>,
    /// What the answer must look like (a grammar or a JSON schema), enforced while sampling
    /// where the provider can; part of the replay key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<Constraint>,
}

impl ChatRequest {
    /// A request of the given messages at temperature 0.7, no seed, no token limit.
    pub fn new(messages: Vec<Message>) -> Self {
        ChatRequest {
            messages,
            temperature: 0.7,
            seed: None,
            max_tokens: None,
            template: None,
            constraint: None,
        }
    }
}

/// One answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The assistant message's text.
    pub content: String,
    /// The model that answered, as the provider names it.
    pub model: String,
    /// Prompt and completion tokens where the provider reports them.
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

/// Why a request got no answer. An answer that is wrong is not an error; this is for
/// requests that could not be made or answered at all.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The `none` provider, or a provider that is not compiled in.
    #[error("{0}")]
    Disabled(String),
    /// Bad configuration (URL, missing model name, unreadable GGUF file, ...).
    #[error("LLM configuration: {0}")]
    Config(String),
    /// The server answered with an error status.
    #[error("LLM server answered HTTP {status}: {body}")]
    Status { status: u16, body: String },
    /// No answer within the timeout, after the retries.
    #[error("LLM request timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// Connection or protocol failure.
    #[error("LLM transport: {0}")]
    Transport(String),
    /// The answer could not be decoded.
    #[error("LLM answer could not be decoded: {0}")]
    Decode(String),
    /// The replay provider has no recording of this request.
    #[error("no recorded answer for this request (looked for {0})")]
    NotRecorded(String),
    /// A recording file that cannot be read, parsed or written.
    #[error("LLM recording {path}: {message}")]
    Recording { path: String, message: String },
}

impl LlmError {
    /// Whether another attempt may succeed: transport failures, timeouts, HTTP 429 and 5xx.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Transport(_) | LlmError::Timeout(_) => true,
            LlmError::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}

/// A chat model.
pub trait Llm: Send + Sync {
    /// Provider and model, e.g. `http:SmolLM2-135M-Instruct`.
    fn name(&self) -> String;
    /// One answer to one request.
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError>;
}

impl<T: Llm + ?Sized> Llm for Box<T> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        (**self).chat(req)
    }
}

impl<T: Llm + ?Sized> Llm for std::sync::Arc<T> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        (**self).chat(req)
    }
}

/// The provider a configuration names, with the configuration's request defaults applied
/// (`temperature` overrides, `seed` and `max_tokens` fill in where the request has none).
///
/// `http` reads the API key from the environment ([`LlmConfig::api_key`]). `local` without the
/// cargo feature `local` is [`LlmError::Disabled`]; a bad URL or an unreadable GGUF file is
/// [`LlmError::Config`]. `none` connects fine and fails on each request.
pub fn connect(config: &LlmConfig) -> Result<Box<dyn Llm>, LlmError> {
    let inner = connect_provider(config, config.provider)?;
    Ok(Box::new(WithDefaults {
        inner,
        temperature: config.temperature,
        seed: config.seed,
        max_tokens: config.max_tokens,
    }))
}

fn connect_provider(config: &LlmConfig, provider: Provider) -> Result<Box<dyn Llm>, LlmError> {
    match provider {
        Provider::None => Ok(Box::new(NoneLlm)),
        Provider::Http => Ok(Box::new(HttpLlm::new(config, config.api_key())?)),
        Provider::Replay => Ok(Box::new(ReplayLlm::new(config.replay_dir(), &config.model))),
        Provider::Record => {
            if matches!(config.record_from, Provider::Record | Provider::Replay) {
                return Err(LlmError::Config(format!(
                    "record_from = {} cannot be recorded: record wraps http, local or none",
                    config.record_from
                )));
            }
            let inner = connect_provider(config, config.record_from)?;
            Ok(Box::new(RecordLlm::new(
                inner,
                config.replay_dir(),
                &config.model,
            )))
        }
        Provider::Local => connect_local(config),
    }
}

#[cfg(feature = "local")]
fn connect_local(config: &LlmConfig) -> Result<Box<dyn Llm>, LlmError> {
    Ok(Box::new(LocalLlm::load(config)?))
}

#[cfg(not(feature = "local"))]
fn connect_local(_config: &LlmConfig) -> Result<Box<dyn Llm>, LlmError> {
    Err(LlmError::Disabled(
        "the local LLM provider is not compiled in: rebuild with the cargo feature `local` of \
         mutagraph-prompts (it builds llama.cpp; needs cmake and a C++ compiler), or use \
         MUTAGRAPH_LLM_PROVIDER=http against a llama.cpp server or Ollama"
            .to_string(),
    ))
}

/// Applies a configuration's request defaults before handing the request on.
struct WithDefaults {
    inner: Box<dyn Llm>,
    temperature: Option<f32>,
    seed: Option<u64>,
    max_tokens: Option<u32>,
}

impl Llm for WithDefaults {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let mut req = req.clone();
        if let Some(t) = self.temperature {
            req.temperature = t;
        }
        if req.seed.is_none() {
            req.seed = self.seed;
        }
        if req.max_tokens.is_none() {
            req.max_tokens = self.max_tokens;
        }
        self.inner.chat(&req)
    }
}

/// k answers to one request: k separate requests with seeds `base, base + 1, ...` where
/// `base` is the request's seed (0 when it has none). Each answer or error is kept in order.
pub fn sample_k(llm: &dyn Llm, req: &ChatRequest, k: usize) -> Vec<Result<ChatResponse, LlmError>> {
    let base = req.seed.unwrap_or(0);
    (0..k as u64)
        .map(|i| {
            let mut one = req.clone();
            one.seed = Some(base.wrapping_add(i));
            llm.chat(&one)
        })
        .collect()
}
