//! LLM client: the request and answer types every part of the layer uses, and the `Llm` trait
//! the providers implement (`http`, `replay`, `none`, and `local` behind a cargo feature).
use serde::{Deserialize, Serialize};

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
}

/// A chat model.
pub trait Llm: Send + Sync {
    /// Provider and model, e.g. `http:SmolLM2-135M-Instruct`.
    fn name(&self) -> String;
    /// One answer to one request.
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError>;
}
