//! The worker side: the loop run by the hidden `mutagraph worker` subcommand.
use super::protocol::{Request, Response, RunResult, read_frame, write_frame};
use crate::backend::{Backend, Prepared};
use crate::catalog::{self, Config};
use std::cell::RefCell;
use std::io::{self, BufReader, BufWriter};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Serves requests on stdin/stdout until `Shutdown` or the end of stdin.
///
/// The original stdout becomes the protocol channel; file descriptor 1 is pointed at stderr so
/// that whatever a library prints cannot corrupt the frames.
pub fn serve() -> io::Result<()> {
    watch_parent();
    super::context::enable();
    let channel = rustix::io::dup(io::stdout())?;
    rustix::stdio::dup2_stdout(io::stderr())?;
    let mut out = BufWriter::new(std::fs::File::from(channel));
    let mut input = BufReader::new(io::stdin().lock());
    std::panic::set_hook(Box::new(|info| {
        let msg = match info.payload().downcast_ref::<&str>() {
            Some(s) => s.to_string(),
            None => match info.payload().downcast_ref::<String>() {
                Some(s) => s.clone(),
                None => "panic with a non-string payload".to_string(),
            },
        };
        let full = match info.location() {
            Some(l) => format!("{msg} (at {}:{})", l.file(), l.line()),
            None => msg,
        };
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(full));
    }));

    let mut backend: Option<Box<dyn Backend>> = None;
    let mut name = String::new();
    let mut config = Config::default();
    let mut cached: Option<(Vec<u8>, Box<dyn Prepared>)> = None;
    while let Some(req) = read_frame::<Request>(&mut input)? {
        match req {
            Request::Init {
                backend: b,
                config: c,
            } => {
                config = Config {
                    ort_dylib: c.ort_dylib,
                    threads: c.threads,
                    rewrites: c.rewrites,
                    typed_only: c.typed_only,
                };
                // Before the backend starts its threads: they inherit it.
                super::lower_priority(c.nice);
                name = b;
                let resp = match catch_unwind(AssertUnwindSafe(|| catalog::create(&name, &config)))
                {
                    Ok(Ok(be)) => {
                        let r = Response::Ready {
                            name: be.name().to_string(),
                            version: be.version(),
                        };
                        backend = Some(be);
                        r
                    }
                    Ok(Err(e)) => Response::InitFailed(e.to_string()),
                    Err(_) => Response::InitFailed(format!(
                        "creating backend '{name}' panicked: {}",
                        take_panic()
                    )),
                };
                write_frame(&mut out, &resp)?;
            }
            Request::Capabilities => {
                let caps = match backend.as_mut() {
                    Some(b) => {
                        catch_unwind(AssertUnwindSafe(|| b.capabilities())).unwrap_or_default()
                    }
                    None => Default::default(),
                };
                write_frame(&mut out, &Response::Capabilities(caps))?;
            }
            Request::Run { model, inputs } => {
                let Some(be) = backend.as_mut() else {
                    write_frame(
                        &mut out,
                        &Response::InitFailed("no backend: send Init first".into()),
                    )?;
                    continue;
                };
                reset_peak_rss();
                let mut prepare_ns = 0;
                let mut run_ns = 0;
                let reuse = matches!(&cached, Some((m, _)) if *m == model);
                let mut panicked = false;
                // What an earlier request's model was rewritten with is not this one's.
                super::context::take_rewrites();
                let result = if !reuse {
                    cached = None;
                    let t = Instant::now();
                    super::context::enter(super::context::PREPARING);
                    let r = catch_unwind(AssertUnwindSafe(|| be.prepare(&model)));
                    super::context::leave();
                    prepare_ns = t.elapsed().as_nanos() as u64;
                    match r {
                        Ok(Ok(p)) => {
                            cached = Some((model, p));
                            None
                        }
                        Ok(Err(e)) => Some(RunResult::Err(e)),
                        Err(_) => {
                            panicked = true;
                            Some(RunResult::Panic(take_panic()))
                        }
                    }
                } else {
                    None
                };
                let result = match result {
                    Some(r) => r,
                    None => {
                        let (_, p) = cached.as_mut().expect("prepared above");
                        let t = Instant::now();
                        super::context::enter(super::context::RUNNING);
                        let r = catch_unwind(AssertUnwindSafe(|| p.run(&inputs)));
                        super::context::leave();
                        run_ns = t.elapsed().as_nanos() as u64;
                        match r {
                            Ok(Ok(o)) => RunResult::Ok(o),
                            Ok(Err(e)) => RunResult::Err(e),
                            Err(_) => {
                                panicked = true;
                                RunResult::Panic(take_panic())
                            }
                        }
                    }
                };
                if panicked {
                    // The library's state is suspect after a panic: start it afresh.
                    cached = None;
                    backend = catalog::create(&name, &config).ok();
                }
                write_frame(
                    &mut out,
                    &Response::Ran {
                        result,
                        prepare_ns,
                        run_ns,
                        peak_rss: peak_rss(),
                        cached: reuse,
                        rewrites: super::context::take_rewrites(),
                    },
                )?;
            }
            Request::Shutdown => break,
        }
    }
    Ok(())
}

fn take_panic() -> String {
    LAST_PANIC
        .with(|p| p.borrow_mut().take())
        .unwrap_or_else(|| "panic".to_string())
}

/// Resets the kernel's high-water mark of resident memory for this process (Linux ≥ 4.0).
fn reset_peak_rss() {
    // Failure only makes the peak cover the worker's lifetime instead of this request.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The high-water mark of resident memory (`VmHWM`), bytes.
pub fn peak_rss() -> u64 {
    status_kib("/proc/self/status", "VmHWM:") * 1024
}

/// A `kB` field of a `/proc/<pid>/status` file (0 when unreadable).
pub fn status_kib(path: &str, field: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// How often a worker checks that the engine that started it is alive.
const PARENT_CHECK: std::time::Duration = std::time::Duration::from_millis(100);

/// Ends this worker when its parent dies, within [`PARENT_CHECK`], even in the middle of a
/// run (a worker reading its next request sees the closed pipe at once; one running a model
/// would otherwise finish it first). `PR_SET_PDEATHSIG` does not fit: it fires when the parent
/// *thread* that spawned the worker ends, and the engine spawns workers from threads that end
/// while the worker lives on (the executor of one batch, the minimizer).
fn watch_parent() {
    let parent = rustix::process::getppid();
    let _ = std::thread::Builder::new()
        .name("parent-watch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(PARENT_CHECK);
                if rustix::process::getppid() != parent {
                    std::process::exit(EXIT_ORPHANED);
                }
            }
        });
}

/// Exit status of a worker whose parent died.
const EXIT_ORPHANED: i32 = 3;
