//! The engine side: a pool of warm worker processes, one per backend, with a per-run timeout
//! and memory cap. Workers that crash, hang or blow the cap are killed and respawned on the next
//! request; every run ends as one [`Outcome`].
use super::protocol::{
    Request, Response, RunResult, WireConfig, read_frame, write_frame, write_run,
};
use crate::backend::{Capabilities, Stage};
use crate::catalog::Rewrites;
use crate::value::NamedValues;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::io::{self, BufReader, BufWriter, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    /// The backend produced outputs.
    Ok(NamedValues),
    /// The backend does not implement something the model uses (not a failure).
    Unsupported {
        /// Where.
        stage: Stage,
        /// The backend's message.
        message: String,
    },
    /// The backend reported an error.
    Error {
        /// Where.
        stage: Stage,
        /// The backend's message.
        message: String,
    },
    /// The worker died (signal or unexpected exit) or the backend panicked.
    Crash {
        /// The signal that killed the worker, if any.
        signal: Option<i32>,
        /// The exit status, when it exited instead.
        exit_code: Option<i32>,
        /// The panic message, or the tail of the worker's stderr.
        message: String,
    },
    /// The run did not finish within the timeout; the worker was killed.
    Timeout {
        /// The limit that was exceeded, milliseconds.
        limit_ms: u64,
        /// The step the worker was in when it was killed ([`super::context::PREPARING`],
        /// [`super::context::RUNNING`], an optimizer pass), when it had entered one: not part
        /// of [`Outcome::detail`], so that one hang met at two steps stays one failure.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<String>,
    },
    /// The worker exceeded the memory cap (or its allocator gave up); it was killed.
    OutOfMemory {
        /// The cap, bytes.
        limit: u64,
        /// How it was detected.
        message: String,
    },
}

impl Outcome {
    /// A short status word: `ok`, `unsupported`, `error`, `crash`, `timeout`, `oom`.
    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Ok(_) => "ok",
            Outcome::Unsupported { .. } => "unsupported",
            Outcome::Error { .. } => "error",
            Outcome::Crash { .. } => "crash",
            Outcome::Timeout { .. } => "timeout",
            Outcome::OutOfMemory { .. } => "oom",
        }
    }

    /// The outputs, when the run succeeded.
    pub fn outputs(&self) -> Option<&NamedValues> {
        match self {
            Outcome::Ok(o) => Some(o),
            _ => None,
        }
    }

    /// One line describing a failure (empty for `ok`).
    pub fn detail(&self) -> String {
        match self {
            Outcome::Ok(_) => String::new(),
            Outcome::Unsupported { stage, message } | Outcome::Error { stage, message } => {
                format!("{stage}: {message}")
            }
            Outcome::Crash {
                signal,
                exit_code,
                message,
            } => match (signal, exit_code) {
                (Some(s), _) => format!("signal {s} ({}): {message}", signal_name(*s)),
                (None, Some(c)) => format!("exit status {c}: {message}"),
                (None, None) => format!("panic: {message}"),
            },
            Outcome::Timeout { limit_ms, .. } => format!("{TIMEOUT_DETAIL} {limit_ms} ms"),
            Outcome::OutOfMemory { limit, message } => {
                format!("over the {} MiB cap: {message}", limit >> 20)
            }
        }
    }
}

/// How [`Outcome::detail`] begins for a run past its time limit.
pub const TIMEOUT_DETAIL: &str = "no answer within";

/// Whether a detail of [`Outcome::detail`] is a run past its time limit.
pub fn is_timeout_detail(detail: &str) -> bool {
    detail.starts_with(TIMEOUT_DETAIL)
}

/// The name of a signal number.
pub fn signal_name(s: i32) -> &'static str {
    match s {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        _ => "signal",
    }
}

/// A run with its measurements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// Backend name.
    pub backend: String,
    /// Backend version.
    pub version: String,
    /// What happened.
    pub outcome: Outcome,
    /// Wall time of the whole request seen from the engine (including the protocol),
    /// milliseconds.
    pub wall_ms: f64,
    /// Time of `prepare` inside the worker, milliseconds (0 when cached).
    pub prepare_ms: f64,
    /// Time of `run` inside the worker, milliseconds.
    pub run_ms: f64,
    /// Peak resident memory of the worker during the request, bytes.
    pub peak_rss: u64,
    /// True when the worker reused the model it had prepared for the previous request.
    pub cached: bool,
    /// The rewrites that changed the model while the worker prepared it, in order, as the
    /// library names them (see [`Pool::run_rewriting`]).
    pub rewrites: Vec<String>,
}

/// Errors of the pool itself (not of a backend on a model).
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// The worker executable could not be started.
    #[error("cannot start worker {exe}: {err}")]
    Spawn {
        /// The executable.
        exe: PathBuf,
        /// Why.
        err: io::Error,
    },
    /// The backend could not be created in the worker.
    #[error("{0}")]
    Init(String),
    /// The worker broke the protocol.
    #[error("worker for '{backend}': {problem}")]
    Protocol {
        /// The backend.
        backend: String,
        /// What happened.
        problem: String,
    },
}

/// Options of a pool.
#[derive(Clone, Debug)]
pub struct PoolOptions {
    /// The worker executable (the `mutagraph` binary).
    pub exe: PathBuf,
    /// Arguments that make it a worker (`["worker"]`).
    pub args: Vec<String>,
    /// Per-run time limit.
    pub timeout: Duration,
    /// Limit for starting a worker and creating its backend.
    pub init_timeout: Duration,
    /// Resident memory cap per worker, bytes.
    pub mem_limit: u64,
    /// Backend settings.
    pub config: WireConfig,
    /// Environment variables set for the workers (beside this process's own).
    pub env: Vec<(String, String)>,
}

impl PoolOptions {
    /// Defaults: this executable with `worker`, 10 s per run, 60 s to start, 4 GiB.
    pub fn new(exe: PathBuf) -> PoolOptions {
        PoolOptions {
            exe,
            args: vec!["worker".into()],
            timeout: Duration::from_secs(10),
            init_timeout: Duration::from_secs(60),
            mem_limit: 4 << 30,
            config: WireConfig::default(),
            env: Vec::new(),
        }
    }
}

struct Worker {
    child: Child,
    /// The file in which the worker records the step it is in ([`super::context`]): its path
    /// until the worker has mapped it (then it is unlinked, so that no file outlives a killed
    /// engine), and the engine's own handle, through which it reads the step at the worker's
    /// death.
    step_file: PathBuf,
    step: Option<std::fs::File>,
    stdin: BufWriter<ChildStdin>,
    rx: Receiver<io::Result<Response>>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    stderr_thread: Option<JoinHandle<()>>,
    version: String,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.step_file);
    }
}

/// A step file for the next worker: in the temporary directory, named after this process and a
/// counter, created empty, with the engine's handle to it.
fn new_step_file() -> (PathBuf, Option<std::fs::File>) {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("mutagraph-step-{}-{n}", std::process::id()));
    // Best effort: without the file the worker records no step.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .ok();
    (path, file)
}

const STDERR_KEEP: usize = 16 * 1024;
/// Size asked for the pipes to and from a worker.
#[cfg(target_os = "linux")]
const PIPE_SIZE: usize = 1 << 20;
const POLL: Duration = Duration::from_millis(2);

/// Warm workers by backend name.
pub struct Pool {
    opts: PoolOptions,
    workers: BTreeMap<String, Worker>,
    spawns: BTreeMap<String, u64>,
    fresh_restarts: u64,
    poisoned: u64,
    /// The rewrites of the workers of [`Pool::run_rewriting`], by worker key.
    rewriting: BTreeMap<String, Rewrites>,
}

/// Between a backend's name and its rewrites in the key of a worker of
/// [`Pool::run_rewriting`].
const REWRITING: char = '@';

/// After a backend's name in the key of a worker of [`Pool::run_typed_only`].
const TYPED_ONLY: char = '#';

enum Wait {
    Got(Response),
    Died,
    TimedOut,
    OverMemory(u64),
}

impl Pool {
    /// An empty pool; workers start on first use.
    pub fn new(opts: PoolOptions) -> Pool {
        Pool {
            opts,
            workers: BTreeMap::new(),
            spawns: BTreeMap::new(),
            fresh_restarts: 0,
            poisoned: 0,
            rewriting: BTreeMap::new(),
        }
    }

    /// The options.
    pub fn options(&self) -> &PoolOptions {
        &self.opts
    }

    /// How many worker processes were started for `backend` so far.
    pub fn spawns(&self, backend: &str) -> u64 {
        self.spawns.get(backend).copied().unwrap_or(0)
    }

    /// The name the live worker of `backend` was given for its step file (gone once it
    /// started, so that an engine killed later leaves no file behind).
    pub fn step_file(&self, backend: &str) -> Option<&std::path::Path> {
        self.workers.get(backend).map(|w| w.step_file.as_path())
    }

    /// Process id of the live worker of `backend`, if any.
    pub fn worker_pid(&self, backend: &str) -> Option<u32> {
        self.workers.get(backend).map(|w| w.child.id())
    }

    fn spawn(&mut self, backend: &str) -> Result<(), PoolError> {
        let rewrites = self.rewriting.get(backend).cloned().unwrap_or_default();
        let (step_file, step) = new_step_file();
        let mut cmd = Command::new(&self.opts.exe);
        cmd.args(&self.opts.args)
            .envs(self.opts.env.iter().map(|(k, v)| (k, v)))
            .env(super::context::STEP_FILE_ENV, &step_file)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A process group of its own: the terminal's Ctrl-C (SIGINT to the foreground group)
        // reaches the engine, which stops cleanly, and never a worker in the middle of a run,
        // whose death would read as a crash of its backend.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
            // wgpu (through Vulkan loaders) wants it; lavapipe works with any writable dir.
            cmd.env("XDG_RUNTIME_DIR", std::env::temp_dir());
        }
        let mut child = cmd.spawn().map_err(|err| PoolError::Spawn {
            exe: self.opts.exe.clone(),
            err,
        })?;
        *self.spawns.entry(backend.to_string()).or_default() += 1;
        // Models and exposed intermediates are megabytes: through pipes of 1 MiB (Linux's limit
        // for unprivileged processes) instead of 64 KiB they cost a sixteenth of the context
        // switches. Best effort: a smaller pipe only costs time.
        #[cfg(target_os = "linux")]
        {
            if let Some(p) = child.stdin.as_ref() {
                let _ = rustix::pipe::fcntl_setpipe_size(p, PIPE_SIZE);
            }
            if let Some(p) = child.stdout.as_ref() {
                let _ = rustix::pipe::fcntl_setpipe_size(p, PIPE_SIZE);
            }
        }
        let stdin = BufWriter::new(child.stdin.take().expect("piped"));
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut stderr_pipe = child.stderr.take().expect("piped");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            loop {
                match read_frame::<Response>(&mut stdout) {
                    Ok(Some(r)) => {
                        if tx.send(Ok(r)).is_err() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        break;
                    }
                }
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let sink = stderr.clone();
        let stderr_thread = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut q = sink.lock().unwrap_or_else(|p| p.into_inner());
                q.extend(&buf[..n]);
                let excess = q.len().saturating_sub(STDERR_KEEP);
                q.drain(..excess);
            }
        });
        let mut w = Worker {
            child,
            step_file,
            step,
            stdin,
            rx,
            stderr,
            stderr_thread: Some(stderr_thread),
            version: String::new(),
        };
        let init = Request::Init {
            backend: backend
                .split([REWRITING, TYPED_ONLY])
                .next()
                .unwrap_or(backend)
                .to_string(),
            config: WireConfig {
                rewrites,
                typed_only: backend.ends_with(TYPED_ONLY),
                ..self.opts.config.clone()
            },
        };
        let sent = write_frame(&mut w.stdin, &init);
        let limit = self.opts.init_timeout;
        let reply = if sent.is_ok() {
            wait(&mut w, limit, u64::MAX)
        } else {
            Wait::Died
        };
        match reply {
            Wait::Got(Response::Ready { version, .. }) => {
                // The worker mapped its step file before it answered: the name has served.
                let _ = std::fs::remove_file(&w.step_file);
                w.version = version;
                self.workers.insert(backend.to_string(), w);
                Ok(())
            }
            Wait::Got(Response::InitFailed(m)) => {
                kill(&mut w);
                Err(PoolError::Init(m))
            }
            Wait::Got(other) => {
                kill(&mut w);
                Err(PoolError::Protocol {
                    backend: backend.into(),
                    problem: format!("unexpected answer to Init: {other:?}"),
                })
            }
            Wait::Died => {
                let (status, tail) = reap(&mut w);
                Err(PoolError::Init(format!(
                    "the worker for '{backend}' died while starting ({status}): {tail}"
                )))
            }
            Wait::TimedOut | Wait::OverMemory(_) => {
                kill(&mut w);
                Err(PoolError::Init(format!(
                    "the worker for '{backend}' did not start within {} s",
                    limit.as_secs()
                )))
            }
        }
    }

    fn worker(&mut self, backend: &str) -> Result<&mut Worker, PoolError> {
        let alive = match self.workers.get_mut(backend) {
            Some(w) => matches!(w.child.try_wait(), Ok(None)),
            None => false,
        };
        if !alive {
            if let Some(mut w) = self.workers.remove(backend) {
                kill(&mut w);
            }
            self.spawn(backend)?;
        }
        Ok(self.workers.get_mut(backend).expect("spawned"))
    }

    /// The version of a backend (starts its worker).
    pub fn version(&mut self, backend: &str) -> Result<String, PoolError> {
        Ok(self.worker(backend)?.version.clone())
    }

    /// The capabilities of a backend, as its worker reports them.
    pub fn capabilities(&mut self, backend: &str) -> Result<Capabilities, PoolError> {
        let limit = self.opts.init_timeout * 10;
        let w = self.worker(backend)?;
        let sent = write_frame(&mut w.stdin, &Request::Capabilities);
        let reply = if sent.is_ok() {
            wait(w, limit, u64::MAX)
        } else {
            Wait::Died
        };
        match reply {
            Wait::Got(Response::Capabilities(c)) => Ok(c),
            _ => {
                let mut w = self.workers.remove(backend).expect("present");
                kill(&mut w);
                Err(PoolError::Protocol {
                    backend: backend.into(),
                    problem: "no capabilities answer".into(),
                })
            }
        }
    }

    /// Runs `model` on `inputs` in the worker of `backend`, within the pool's timeout.
    ///
    /// Whatever the backend does (fail, crash, hang, eat memory) comes back as the report's
    /// [`Outcome`]; `Err` only when the worker cannot be started at all.
    pub fn run(
        &mut self,
        backend: &str,
        model: &[u8],
        inputs: &NamedValues,
    ) -> Result<RunReport, PoolError> {
        self.run_within(backend, model, inputs, self.opts.timeout)
    }

    /// [`run`](Pool::run) in a worker started for this run: nothing an earlier model left in
    /// the library's process (a poisoned device, a cache) can take part. The new worker then
    /// serves the later runs of `backend`.
    pub fn run_fresh(
        &mut self,
        backend: &str,
        model: &[u8],
        inputs: &NamedValues,
    ) -> Result<RunReport, PoolError> {
        if let Some(mut w) = self.workers.remove(backend) {
            kill(&mut w);
        }
        self.run(backend, model, inputs)
    }

    /// [`run`](Pool::run) in a worker started for this run whose library applies only the
    /// `rewrites` given, stopped after it; the report says which rewrites changed the model.
    /// To find the rewrite a finding needs: the model run with fewer of them.
    pub fn run_rewriting(
        &mut self,
        backend: &str,
        rewrites: &Rewrites,
        model: &[u8],
        inputs: &NamedValues,
    ) -> Result<RunReport, PoolError> {
        let key = format!("{backend}{REWRITING}{rewrites:?}");
        self.rewriting.insert(key.clone(), rewrites.clone());
        let report = self.run_fresh(&key, model, inputs);
        if let Some(mut w) = self.workers.remove(&key) {
            kill(&mut w);
        }
        self.rewriting.remove(&key);
        let mut report = report?;
        report.backend = backend.to_string();
        Ok(report)
    }

    /// [`run`](Pool::run) in a worker whose library compiles models from their inputs' types
    /// and shapes only ([`crate::catalog::Config::typed_only`]), kept for the next such run.
    pub fn run_typed_only(
        &mut self,
        backend: &str,
        model: &[u8],
        inputs: &NamedValues,
    ) -> Result<RunReport, PoolError> {
        let key = format!("{backend}{TYPED_ONLY}");
        let mut report = self.run(&key, model, inputs)?;
        report.backend = backend.to_string();
        Ok(report)
    }

    /// Sets the time limit of [`run`](Pool::run).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.opts.timeout = timeout;
    }

    /// [`run`](Pool::run) with another time limit for this run (a campaign scales it from
    /// the seed's own time).
    ///
    /// A model the worker cannot run because of what an earlier model left in the library's
    /// process-wide state ([`BackendError::fresh_process`](crate::backend::BackendError)) is
    /// run again, once, in a fresh worker.
    pub fn run_within(
        &mut self,
        backend: &str,
        model: &[u8],
        inputs: &NamedValues,
        timeout: Duration,
    ) -> Result<RunReport, PoolError> {
        let (report, fresh) = self.run_once(backend, model, inputs, timeout)?;
        if !fresh {
            return Ok(report);
        }
        self.fresh_restarts += 1;
        if let Some(mut w) = self.workers.remove(backend) {
            kill(&mut w);
        }
        let (report, fresh) = self.run_once(backend, model, inputs, timeout)?;
        if fresh {
            let problem = match &report.outcome {
                Outcome::Error { message, .. } => message.clone(),
                _ => String::new(),
            };
            return Err(PoolError::Protocol {
                backend: backend.into(),
                problem: format!("a fresh worker still asks for a fresh process: {problem}"),
            });
        }
        Ok(report)
    }

    /// How many workers were ended because a run left their library's process unusable
    /// ([`BackendError::poisoned`](crate::backend::BackendError): a device error).
    pub fn poisoned(&self) -> u64 {
        self.poisoned
    }

    /// How many runs were repeated in a fresh worker (see [`run_within`](Pool::run_within)).
    pub fn fresh_restarts(&self) -> u64 {
        self.fresh_restarts
    }

    /// One run in the current worker; true when the backend asked for a fresh process.
    fn run_once(
        &mut self,
        backend: &str,
        model: &[u8],
        inputs: &NamedValues,
        timeout: Duration,
    ) -> Result<(RunReport, bool), PoolError> {
        let mut fresh = false;
        let mut poisoned = false;
        let mem_limit = self.opts.mem_limit;
        let w = self.worker(backend)?;
        let version = w.version.clone();
        let started = Instant::now();
        let sent = write_run(&mut w.stdin, model, inputs);
        let reply = if sent.is_ok() {
            wait(w, timeout, mem_limit)
        } else {
            Wait::Died
        };
        let wall_ms = started.elapsed().as_secs_f64() * 1e3;
        let mut report = RunReport {
            backend: backend.to_string(),
            version,
            outcome: Outcome::Ok(Vec::new()),
            wall_ms,
            prepare_ms: 0.0,
            run_ms: 0.0,
            peak_rss: 0,
            cached: false,
            rewrites: Vec::new(),
        };
        match reply {
            Wait::Got(Response::Ran {
                result,
                prepare_ns,
                run_ns,
                peak_rss,
                cached,
                rewrites,
            }) => {
                report.rewrites = rewrites;
                report.prepare_ms = prepare_ns as f64 / 1e6;
                report.run_ms = run_ns as f64 / 1e6;
                report.peak_rss = peak_rss;
                report.cached = cached;
                report.outcome = match result {
                    RunResult::Ok(o) => Outcome::Ok(o),
                    RunResult::Err(e) if e.poisoned => {
                        poisoned = true;
                        Outcome::Error {
                            stage: e.stage,
                            message: e.message,
                        }
                    }
                    RunResult::Err(e) if e.fresh_process => {
                        fresh = true;
                        Outcome::Error {
                            stage: e.stage,
                            message: e.message,
                        }
                    }
                    RunResult::Err(e) if e.unsupported => Outcome::Unsupported {
                        stage: e.stage,
                        message: e.message,
                    },
                    RunResult::Err(e) => Outcome::Error {
                        stage: e.stage,
                        message: e.message,
                    },
                    RunResult::Panic(message) => {
                        poisoned = crate::catalog::device_error(backend, &message);
                        Outcome::Crash {
                            signal: None,
                            exit_code: None,
                            message,
                        }
                    }
                };
            }
            Wait::Got(other) => {
                let mut w = self.workers.remove(backend).expect("present");
                kill(&mut w);
                return Err(PoolError::Protocol {
                    backend: backend.into(),
                    problem: format!("unexpected answer to Run: {other:?}"),
                });
            }
            Wait::Died => {
                let mut w = self.workers.remove(backend).expect("present");
                let peak = status_rss(w.child.id());
                let (status, tail) = reap(&mut w);
                // The worker's own stages name no cause of a death: a crash message stays the
                // library's (an optimizer pass is one).
                let step = w
                    .step
                    .as_ref()
                    .and_then(super::context::at_death)
                    .filter(|s| !super::context::is_stage(s));
                report.peak_rss = peak;
                report.outcome = if let Some(line) = oom_line(&tail) {
                    Outcome::OutOfMemory {
                        limit: mem_limit,
                        message: line,
                    }
                } else {
                    Outcome::Crash {
                        signal: status.signal(),
                        exit_code: status.code(),
                        message: death_message(&tail, step),
                    }
                };
            }
            Wait::TimedOut => {
                let mut w = self.workers.remove(backend).expect("present");
                report.peak_rss = status_rss(w.child.id());
                let step = w.step.as_ref().and_then(super::context::at_death);
                kill(&mut w);
                report.outcome = Outcome::Timeout {
                    limit_ms: timeout.as_millis() as u64,
                    step,
                };
            }
            Wait::OverMemory(rss) => {
                let mut w = self.workers.remove(backend).expect("present");
                kill(&mut w);
                report.peak_rss = rss;
                report.outcome = Outcome::OutOfMemory {
                    limit: mem_limit,
                    message: format!("resident memory reached {} MiB", rss >> 20),
                };
            }
        }
        if poisoned {
            // The device is broken for the rest of this process: no later run may meet it.
            self.poisoned += 1;
            if let Some(mut w) = self.workers.remove(backend) {
                kill(&mut w);
            }
        }
        Ok((report, fresh))
    }

    /// Stops every worker.
    pub fn shutdown(&mut self) {
        for (_, mut w) in std::mem::take(&mut self.workers) {
            let _ = write_frame(&mut w.stdin, &Request::Shutdown);
            let deadline = Instant::now() + Duration::from_millis(500);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = w.child.try_wait() {
                    break;
                }
                std::thread::sleep(POLL);
            }
            kill(&mut w);
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn wait(w: &mut Worker, limit: Duration, mem_limit: u64) -> Wait {
    let deadline = Instant::now() + limit;
    let pid = w.child.id();
    loop {
        match w.rx.recv_timeout(POLL) {
            Ok(Ok(r)) => return Wait::Got(r),
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => return Wait::Died,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if mem_limit != u64::MAX {
            let rss = status_rss(pid);
            if rss > mem_limit {
                return Wait::OverMemory(rss);
            }
        }
        if Instant::now() >= deadline {
            return Wait::TimedOut;
        }
    }
}

fn status_rss(pid: u32) -> u64 {
    super::serve::status_kib(&format!("/proc/{pid}/status"), "VmRSS:") * 1024
}

fn kill(w: &mut Worker) {
    let _ = w.child.kill();
    let _ = w.child.wait();
    if let Some(t) = w.stderr_thread.take() {
        let _ = t.join();
    }
}

/// Waits for a dead worker and returns its exit status and the tail of its stderr.
fn reap(w: &mut Worker) -> (std::process::ExitStatus, String) {
    // The reader saw the end of the stream; the process is exiting or already gone.
    let deadline = Instant::now() + Duration::from_secs(2);
    let status = loop {
        match w.child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
            _ => {
                let _ = w.child.kill();
                break w
                    .child
                    .wait()
                    .unwrap_or_else(|_| ExitStatusExt::from_raw(9));
            }
        }
    };
    if let Some(t) = w.stderr_thread.take() {
        let _ = t.join();
    }
    let q = w.stderr.lock().unwrap_or_else(|p| p.into_inner());
    let bytes: Vec<u8> = q.iter().copied().collect();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

/// The line of a dead worker's stderr that says its allocator gave up, if any.
fn oom_line(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .find(|l| {
            l.contains("memory allocation of")
                || l.contains("std::bad_alloc")
                || l.to_ascii_lowercase().contains("out of memory")
        })
        .map(clip)
}

/// What a dead worker's stderr says: its most telling line, and the step it died in when the
/// backend named one (`in ONNX Runtime's optimizer pass NchwcTransformer`).
fn death_message(tail: &str, step: Option<String>) -> String {
    let line = last_line(tail);
    match (step, line.is_empty()) {
        (Some(step), true) => step,
        (Some(step), false) => format!("{line} ({step})"),
        (None, _) => line,
    }
}

/// The most telling line of a dead worker's stderr: a panic or error line if there is one,
/// else the last line that is not backtrace noise.
fn last_line(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    if let Some(l) = lines.iter().rev().find(|l| {
        l.contains("panicked at")
            || l.contains("error")
            || l.contains("Error")
            || l.contains("fatal")
    }) {
        return clip(l);
    }
    lines
        .iter()
        .rev()
        .find(|l| {
            !l.starts_with("note:")
                && !l.trim_start().starts_with(|c: char| c.is_ascii_digit())
                && !l.trim_start().starts_with("at ")
        })
        .map(|l| clip(l))
        .unwrap_or_default()
}

fn clip(l: &str) -> String {
    l.trim().chars().take(500).collect()
}
