//! The `http` provider: OpenAI-compatible `POST {base_url}/chat/completions`.
use std::time::Duration;

use serde_json::{Value, json};

use super::{ChatRequest, ChatResponse, ConstraintStyle, Llm, LlmConfig, LlmError};

/// The longest wait between two attempts, whatever the backoff or `Retry-After` says.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Error bodies are cut to this many characters in [`LlmError::Status`].
const MAX_ERROR_BODY: usize = 2000;

/// A client of one OpenAI-compatible endpoint.
pub struct HttpLlm {
    agent: ureq::Agent,
    url: String,
    model: String,
    api_key: Option<String>,
    timeout: Duration,
    retries: u32,
    backoff: Duration,
    constraints: ConstraintStyle,
}

impl HttpLlm {
    /// A client for `config.base_url` with the given API key (`None`: no `Authorization`
    /// header). [`connect`](super::connect) passes [`LlmConfig::api_key`].
    pub fn new(config: &LlmConfig, api_key: Option<String>) -> Result<Self, LlmError> {
        let base = config.base_url.trim().trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "base_url `{}` must start with http:// or https:// (e.g. http://127.0.0.1:8080/v1)",
                config.base_url
            )));
        }
        if base.starts_with("https://") && !cfg!(feature = "tls") {
            return Err(LlmError::Config(format!(
                "base_url `{}` needs TLS, which this build lacks: rebuild with the cargo feature \
                 `tls` of mutagraph-prompts, or use a plain http:// endpoint",
                config.base_url
            )));
        }
        let timeout = config.timeout()?;
        Ok(HttpLlm {
            agent: agent(base, timeout),
            url: format!("{base}/chat/completions"),
            model: config.model.clone(),
            api_key,
            timeout,
            retries: config.retries,
            backoff: Duration::from_millis(config.backoff_ms),
            constraints: config.constraints,
        })
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The JSON body sent for `req`: its constraint in the fields of the configured
    /// [`ConstraintStyle`]; an error when that style cannot carry it (a grammar for OpenAI).
    pub fn request_body(&self, req: &ChatRequest) -> Result<Value, LlmError> {
        let mut body = json!({
            "messages": req.messages,
            "temperature": req.temperature,
            "stream": false,
        });
        if !self.model.is_empty() {
            body["model"] = json!(self.model);
        }
        if let Some(seed) = req.seed {
            body["seed"] = json!(seed);
        }
        if let Some(max) = req.max_tokens {
            body["max_tokens"] = json!(max);
        }
        if let Some(c) = &req.constraint {
            c.add_to_body(&mut body, self.constraints)?;
        }
        Ok(body)
    }

    /// One attempt; on failure also the server's `Retry-After` delay if it sent one.
    fn attempt(&self, body: &str) -> Result<ChatResponse, (LlmError, Option<Duration>)> {
        let mut call = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json");
        if let Some(key) = &self.api_key {
            call = call.header("Authorization", format!("Bearer {key}"));
        }
        let mut resp = call.send(body).map_err(|e| (self.map_error(e), None))?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = resp
            .body_mut()
            .read_to_string()
            .map_err(|e| (self.map_error(e), None))?;
        if !(200..300).contains(&status) {
            let body: String = text.chars().take(MAX_ERROR_BODY).collect();
            return Err((LlmError::Status { status, body }, retry_after));
        }
        decode_completion(&text, &self.model).map_err(|e| (e, None))
    }

    fn map_error(&self, e: ureq::Error) -> LlmError {
        match e {
            ureq::Error::Timeout(_) => LlmError::Timeout(self.timeout),
            ureq::Error::Io(io)
                if matches!(
                    io.kind(),
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                ) =>
            {
                LlmError::Timeout(self.timeout)
            }
            ureq::Error::StatusCode(status) => LlmError::Status {
                status,
                body: String::new(),
            },
            other => LlmError::Transport(format!("{}: {other}", self.url)),
        }
    }
}

impl Llm for HttpLlm {
    fn name(&self) -> String {
        if self.model.is_empty() {
            format!("http:{}", self.url)
        } else {
            format!("http:{}", self.model)
        }
    }

    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let body = self.request_body(req)?.to_string();
        let mut attempt = 0u32;
        loop {
            match self.attempt(&body) {
                Ok(r) => return Ok(r),
                Err((e, retry_after)) => {
                    if attempt >= self.retries || !e.is_retryable() {
                        return Err(e);
                    }
                    let backoff = self
                        .backoff
                        .saturating_mul(1u32.checked_shl(attempt).unwrap_or(u32::MAX));
                    let wait = retry_after.unwrap_or(backoff).min(MAX_BACKOFF);
                    std::thread::sleep(wait);
                    attempt += 1;
                }
            }
        }
    }
}

/// Whether the URL's host is this machine (`localhost`, `127.x.y.z`, `[::1]`).
/// mutagraph's HTTP client for requests to `base`: at most `timeout` per request, statuses
/// returned rather than raised, proxies from the environment for remote servers only (never
/// for this machine). The LLM layer and `report --known-upstream` use it.
pub fn agent(base: &str, timeout: Duration) -> ureq::Agent {
    let mut builder = ureq::Agent::config_builder();
    if is_loopback(base) {
        builder = builder.proxy(None);
    }
    builder
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .user_agent(concat!("mutagraph/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    if host_port.starts_with("[::1]") {
        return true;
    }
    let host = host_port.split(':').next().unwrap_or("");
    host.eq_ignore_ascii_case("localhost") || host.starts_with("127.")
}

/// Decodes an OpenAI chat-completion body: `choices[0].message.content` and `usage`.
/// `fallback_model` names the model when the body does not.
pub fn decode_completion(text: &str, fallback_model: &str) -> Result<ChatResponse, LlmError> {
    let short = |s: &str| -> String { s.chars().take(200).collect() };
    let v: Value = serde_json::from_str(text)
        .map_err(|e| LlmError::Decode(format!("{e} in body {:?}", short(text))))?;
    if let Some(err) = v.get("error") {
        return Err(LlmError::Decode(format!(
            "the server answered with an error object: {}",
            short(&err.to_string())
        )));
    }
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| LlmError::Decode(format!("no choices[0] in {:?}", short(text))))?;
    let content = match choice.get("message").and_then(|m| m.get("content")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => {
            return Err(LlmError::Decode(format!(
                "choices[0].message.content missing in {:?}",
                short(text)
            )));
        }
        Some(other) => {
            return Err(LlmError::Decode(format!(
                "choices[0].message.content is not a string: {}",
                short(&other.to_string())
            )));
        }
    };
    let model = v
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(fallback_model)
        .to_string();
    let usage = v.get("usage");
    let tokens = |k: &str| usage.and_then(|u| u.get(k)).and_then(Value::as_u64);
    Ok(ChatResponse {
        content,
        model,
        prompt_tokens: tokens("prompt_tokens"),
        completion_tokens: tokens("completion_tokens"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost/v1",
            "http://LOCALHOST:11434",
            "http://[::1]:8000/v1",
            "http://user:pw@127.0.0.2:1/v1",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "https://api.example.com/v1",
            "http://10.0.0.1:8080/v1",
            "http://127example.com/v1",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    #[test]
    fn decode_reads_content_model_and_usage() {
        let body = r#"{"model":"m1","choices":[{"message":{"role":"assistant","content":"hi"}}],
                       "usage":{"prompt_tokens":3,"completion_tokens":1}}"#;
        let r = decode_completion(body, "fallback").unwrap();
        assert_eq!(r.content, "hi");
        assert_eq!(r.model, "m1");
        assert_eq!(r.prompt_tokens, Some(3));
        assert_eq!(r.completion_tokens, Some(1));
        let r = decode_completion(r#"{"choices":[{"message":{"content":""}}]}"#, "fb").unwrap();
        assert_eq!(r.model, "fb");
        assert_eq!(r.prompt_tokens, None);
        let e = decode_completion(r#"{"error":{"message":"overloaded"}}"#, "fb").unwrap_err();
        assert!(e.to_string().contains("overloaded"), "{e}");
    }
}
