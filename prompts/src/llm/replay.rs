//! The `replay` and `record` providers: exchanges kept as files, one per request.
//!
//! A request's file is `<dir>/<key>.json`, where `<key>` is [`request_key`]: 16 hex digits of
//! FNV-1a 64 over [`canonical_request`], a JSON text written here byte by byte (so the key
//! does not depend on a serializer's version or feature flags). The file is pretty JSON of a
//! [`Recording`]: the request (with the template id it came from), the model name and the
//! answer, for people to read and diff.
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::{ChatRequest, ChatResponse, Llm, LlmError, Role};

/// The `format` field of every recording file.
pub const RECORDING_FORMAT: &str = "mutagraph-llm-exchange/1";

/// FNV-1a, 64 bits.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    mutagraph_ir::hash::fnv1a64(bytes)
}

fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn role_str(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// The canonical text of what decides an answer: keys sorted, no spaces, strings escaped
/// minimally (`"`, `\`, control characters), the temperature in Rust's shortest decimal form,
/// absent seed and token limit as `null`. The template id is not part of it; a constraint is
/// (its [`Constraint::canonical`](super::Constraint::canonical) text, first key of the object),
/// and a request without one keys as it did before constraints existed.
pub fn canonical_request(req: &ChatRequest, model: &str) -> String {
    let mut out = String::with_capacity(256);
    out.push('{');
    if let Some(c) = &req.constraint {
        out.push_str("\"constraint\":");
        out.push_str(&c.canonical());
        out.push(',');
    }
    out.push_str("\"max_tokens\":");
    match req.max_tokens {
        Some(m) => out.push_str(&m.to_string()),
        None => out.push_str("null"),
    }
    out.push_str(",\"messages\":[");
    for (i, m) in req.messages.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"content\":");
        push_json_string(&mut out, &m.content);
        out.push_str(",\"role\":\"");
        out.push_str(role_str(m.role));
        out.push_str("\"}");
    }
    out.push_str("],\"model\":");
    push_json_string(&mut out, model);
    out.push_str(",\"seed\":");
    match req.seed {
        Some(s) => out.push_str(&s.to_string()),
        None => out.push_str("null"),
    }
    out.push_str(",\"temperature\":");
    if req.temperature.is_finite() {
        out.push_str(&format!("{}", req.temperature));
    } else {
        out.push_str("null");
    }
    out.push('}');
    out
}

/// The recording key of a request: `format!("{:016x}", fnv1a64(canonical_request(..)))`.
pub fn request_key(req: &ChatRequest, model: &str) -> String {
    format!("{:016x}", fnv1a64(canonical_request(req, model).as_bytes()))
}

/// One recorded exchange, as stored in its file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recording {
    /// [`RECORDING_FORMAT`].
    pub format: String,
    /// [`request_key`] of `request` and `model`.
    pub key: String,
    /// The model name the request was keyed with (the configured `model`).
    pub model: String,
    /// The provider that answered, e.g. `http:qwen2.5-coder`.
    pub provider: String,
    pub request: ChatRequest,
    pub response: ChatResponse,
}

impl Recording {
    /// Reads and checks a recording file; errors name the file.
    pub fn read(path: &Path) -> Result<Recording, LlmError> {
        let err = |message: String| LlmError::Recording {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read: {e}")))?;
        let rec: Recording =
            serde_json::from_str(&text).map_err(|e| err(format!("not a recording: {e}")))?;
        if rec.format != RECORDING_FORMAT {
            return Err(err(format!(
                "format `{}`, expected `{RECORDING_FORMAT}`",
                rec.format
            )));
        }
        Ok(rec)
    }
}

fn path_for(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.json"))
}

/// Answers from the recordings in a directory.
pub struct ReplayLlm {
    dir: PathBuf,
    model: String,
}

impl ReplayLlm {
    /// Recordings in `dir`, keyed with the model name `model` (the one they were recorded
    /// with).
    pub fn new(dir: impl Into<PathBuf>, model: &str) -> Self {
        ReplayLlm {
            dir: dir.into(),
            model: model.to_string(),
        }
    }

    /// The file that holds (or would hold) the answer to `req`.
    pub fn path_for(&self, req: &ChatRequest) -> PathBuf {
        path_for(&self.dir, &request_key(req, &self.model))
    }
}

impl Llm for ReplayLlm {
    fn name(&self) -> String {
        if self.model.is_empty() {
            format!("replay:{}", self.dir.display())
        } else {
            format!("replay:{}", self.model)
        }
    }

    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let path = self.path_for(req);
        if !path.is_file() {
            return Err(LlmError::NotRecorded(path.display().to_string()));
        }
        let rec = Recording::read(&path)?;
        let want = canonical_request(req, &self.model);
        let have = canonical_request(&rec.request, &rec.model);
        if want != have {
            return Err(LlmError::Recording {
                path: path.display().to_string(),
                message: format!(
                    "holds a different request (edited file or key collision): recorded {have}, \
                     asked {want}"
                ),
            });
        }
        Ok(rec.response)
    }
}

/// Calls another provider and writes each answered exchange to the directory (errors are
/// passed on and not written). An existing recording of the same request is replaced.
pub struct RecordLlm {
    inner: Box<dyn Llm>,
    dir: PathBuf,
    model: String,
}

impl RecordLlm {
    pub fn new(inner: Box<dyn Llm>, dir: impl Into<PathBuf>, model: &str) -> Self {
        RecordLlm {
            inner,
            dir: dir.into(),
            model: model.to_string(),
        }
    }

    /// The file the exchange of `req` is written to.
    pub fn path_for(&self, req: &ChatRequest) -> PathBuf {
        path_for(&self.dir, &request_key(req, &self.model))
    }

    fn write(&self, rec: &Recording) -> Result<PathBuf, LlmError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let path = path_for(&self.dir, &rec.key);
        let err = |p: &Path, message: String| LlmError::Recording {
            path: p.display().to_string(),
            message,
        };
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| err(&self.dir, format!("cannot create directory: {e}")))?;
        let mut text = serde_json::to_string_pretty(rec)
            .map_err(|e| err(&path, format!("cannot serialize: {e}")))?;
        text.push('\n');
        let tmp = self.dir.join(format!(
            ".{}.json.tmp-{}-{}",
            rec.key,
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&tmp, text).map_err(|e| err(&tmp, format!("cannot write: {e}")))?;
        if let Err(e) = std::fs::rename(&tmp, &path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(err(&path, format!("cannot rename {}: {e}", tmp.display())));
        }
        Ok(path)
    }
}

impl Llm for RecordLlm {
    fn name(&self) -> String {
        format!("record:{}", self.inner.name())
    }

    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let response = self.inner.chat(req)?;
        let rec = Recording {
            format: RECORDING_FORMAT.to_string(),
            key: request_key(req, &self.model),
            model: self.model.clone(),
            provider: self.inner.name(),
            request: req.clone(),
            response,
        };
        self.write(&rec)?;
        Ok(rec.response)
    }
}
