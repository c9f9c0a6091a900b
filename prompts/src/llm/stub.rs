//! A scripted OpenAI-compatible server for tests (std only, loopback only).
//!
//! [`StubServer::start`] listens on `127.0.0.1:0` in a background thread and answers each
//! `POST …/chat/completions` with the next [`StubReply`] of its script, recording every request
//! (method, path, headers, body) for assertions. It stops when dropped.
//!
//! ```
//! use mutagraph_prompts::llm::{self, ChatRequest, Llm, LlmConfig, Message, Provider};
//! use mutagraph_prompts::llm::stub::{StubReply, StubServer};
//!
//! let server = StubServer::start(vec![StubReply::Answer("Y = Relu(X)".into())]).unwrap();
//! let config = LlmConfig {
//!     provider: Provider::Http,
//!     base_url: server.base_url(),
//!     ..LlmConfig::default()
//! };
//! let llm = llm::HttpLlm::new(&config, None).unwrap();
//! let answer = llm.chat(&ChatRequest::new(vec![Message::user("a graph")])).unwrap();
//! assert_eq!(answer.content, "Y = Relu(X)");
//! assert_eq!(server.requests().len(), 1);
//! ```
use std::collections::VecDeque;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// A reply computed from the request.
pub type StubFn = Arc<dyn Fn(&RecordedRequest) -> StubReply + Send + Sync>;

/// One scripted reply.
#[derive(Clone)]
pub enum StubReply {
    /// HTTP 200 with a well-formed chat completion whose content is the text.
    Answer(String),
    /// This status with this body, as is.
    Status(u16, String),
    /// Waits, then answers like [`StubReply::Answer`] (the client may have given up by then).
    Delay(Duration, String),
    /// HTTP 200 with this body, as is (not a chat completion).
    Garbage(String),
    /// The reply the function gives for the request.
    Func(StubFn),
}

impl StubReply {
    /// A reply computed from the request ([`StubReply::Func`]).
    pub fn func(f: impl Fn(&RecordedRequest) -> StubReply + Send + Sync + 'static) -> Self {
        StubReply::Func(Arc::new(f))
    }
}

impl fmt::Debug for StubReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StubReply::Answer(s) => f.debug_tuple("Answer").field(s).finish(),
            StubReply::Status(c, s) => f.debug_tuple("Status").field(c).field(s).finish(),
            StubReply::Delay(d, s) => f.debug_tuple("Delay").field(d).field(s).finish(),
            StubReply::Garbage(s) => f.debug_tuple("Garbage").field(s).finish(),
            StubReply::Func(_) => f.write_str("Func(..)"),
        }
    }
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The body parsed as JSON, when it is JSON.
    pub json: Option<Value>,
}

impl RecordedRequest {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A field of the JSON body.
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.json.as_ref().and_then(|j| j.get(key))
    }
}

struct Shared {
    script: Mutex<VecDeque<StubReply>>,
    fallback: Option<StubFn>,
    requests: Mutex<Vec<RecordedRequest>>,
    stop: AtomicBool,
    handlers: Mutex<Vec<JoinHandle<()>>>,
    served: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The server; stops (and joins its threads) when dropped.
pub struct StubServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl StubServer {
    /// Serves the replies in order; once they are used up, each further chat request gets
    /// HTTP 500 `stub: no scripted reply left`.
    pub fn start(replies: Vec<StubReply>) -> io::Result<StubServer> {
        Self::start_inner(replies, None)
    }

    /// Answers every chat request with `f` (for tests that make many requests).
    pub fn start_fn(
        f: impl Fn(&RecordedRequest) -> StubReply + Send + Sync + 'static,
    ) -> io::Result<StubServer> {
        Self::start_inner(Vec::new(), Some(Arc::new(f)))
    }

    fn start_inner(replies: Vec<StubReply>, fallback: Option<StubFn>) -> io::Result<StubServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script: Mutex::new(replies.into()),
            fallback,
            requests: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            handlers: Mutex::new(Vec::new()),
            served: AtomicU64::new(0),
        });
        let sh = Arc::clone(&shared);
        let accept = std::thread::Builder::new()
            .name("llm-stub-accept".into())
            .spawn(move || accept_loop(listener, sh))?;
        Ok(StubServer {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// `http://127.0.0.1:PORT/v1`, the value for `base_url`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// How many scripted replies are not used yet.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.script).len()
    }
}

impl Drop for StubServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
        let handlers: Vec<_> = lock(&self.shared.handlers).drain(..).collect();
        for h in handlers {
            let _ = h.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else { continue };
        let sh = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("llm-stub-conn".into())
            .spawn(move || {
                let _ = handle(stream, &sh);
            });
        if let Ok(h) = spawned {
            let mut hs = lock(&shared.handlers);
            hs.retain(|h| !h.is_finished());
            hs.push(h);
        }
    }
}

fn read_request(stream: &mut TcpStream) -> io::Result<Option<RecordedRequest>> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    if get("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let mut body = Vec::new();
    if get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size_text = line.trim().split(';').next().unwrap_or("");
            let size = usize::from_str_radix(size_text, 16)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
            if size == 0 {
                // Trailers end with an empty line.
                loop {
                    line.clear();
                    if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..])?;
            line.clear();
            reader.read_line(&mut line)?;
        }
    } else if let Some(n) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(n, 0);
        reader.read_exact(&mut body)?;
    }
    let body = String::from_utf8_lossy(&body).into_owned();
    let json = serde_json::from_str(&body).ok();
    Ok(Some(RecordedRequest {
        method,
        path,
        headers,
        body,
        json,
    }))
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn write_response(stream: &mut TcpStream, code: u16, body: &str) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {code} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        reason(code),
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

fn words(s: &str) -> u64 {
    s.split_whitespace().count() as u64
}

fn completion(req: &RecordedRequest, content: &str, n: u64) -> String {
    let model = req
        .field("model")
        .and_then(Value::as_str)
        .unwrap_or("stub-model");
    let prompt_tokens: u64 = req
        .field("messages")
        .and_then(Value::as_array)
        .map(|ms| {
            ms.iter()
                .filter_map(|m| m.get("content").and_then(Value::as_str))
                .map(words)
                .sum()
        })
        .unwrap_or(0);
    let completion_tokens = words(content);
    json!({
        "id": format!("stub-{n}"),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens
        }
    })
    .to_string()
}

fn handle(mut stream: TcpStream, shared: &Shared) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let Some(req) = read_request(&mut stream)? else {
        return Ok(());
    };
    if shared.stop.load(Ordering::SeqCst) {
        return Ok(());
    }
    let is_chat = req.method == "POST" && req.path.ends_with("/chat/completions");
    // Take the reply and record the request under one lock so that both orders agree.
    let reply = {
        let mut requests = lock(&shared.requests);
        requests.push(req.clone());
        if is_chat {
            lock(&shared.script).pop_front().or_else(|| {
                shared
                    .fallback
                    .as_ref()
                    .map(|f| StubReply::Func(Arc::clone(f)))
            })
        } else {
            None
        }
    };
    let n = shared.served.fetch_add(1, Ordering::SeqCst);
    if !is_chat {
        if req.method == "GET" && req.path.ends_with("/models") {
            let body = json!({"object": "list", "data": [{"id": "stub-model", "object": "model"}]});
            return write_response(&mut stream, 200, &body.to_string());
        }
        return write_response(
            &mut stream,
            404,
            r#"{"error":{"message":"stub: not found"}}"#,
        );
    }
    let mut reply = reply.unwrap_or_else(|| {
        StubReply::Status(
            500,
            r#"{"error":{"message":"stub: no scripted reply left"}}"#.into(),
        )
    });
    // A function may answer with another function; follow a few levels at most.
    for _ in 0..8 {
        match reply {
            StubReply::Func(f) => reply = f(&req),
            _ => break,
        }
    }
    match reply {
        StubReply::Answer(text) => write_response(&mut stream, 200, &completion(&req, &text, n)),
        StubReply::Status(code, body) => write_response(&mut stream, code, &body),
        StubReply::Garbage(body) => write_response(&mut stream, 200, &body),
        StubReply::Delay(d, text) => {
            let step = Duration::from_millis(10);
            let mut waited = Duration::ZERO;
            while waited < d && !shared.stop.load(Ordering::SeqCst) {
                std::thread::sleep(step.min(d - waited));
                waited += step;
            }
            write_response(&mut stream, 200, &completion(&req, &text, n))
        }
        StubReply::Func(_) => write_response(
            &mut stream,
            500,
            r#"{"error":{"message":"stub: reply functions nested too deep"}}"#,
        ),
    }
}
