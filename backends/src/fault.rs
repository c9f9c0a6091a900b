//! A fault-injection backend for tests of the worker pool. It is named `fault` and never part of
//! the default backend set. The model tells it what to do: the op type of its first node in the
//! domain `mutagraph.fault` is the fault (`Abort`, `Segfault`, `Panic`, `Hang`, `Alloc`,
//! `Error`, `Unsupported`, `Exit`); a model without such a node is run as identity (graph input
//! `k` is returned as graph output `k`).
//!
//! With [`WRONG_ONCE`] naming a directory, a model without a fault node is run as identity only
//! the first time any process prepares it (a marker file per model under that directory), and
//! by the reference interpreter after that: a finding that a fresh process does not show.
//!
//! With [`COMPUTE`] set to `reference`, a model without a fault node is run by the reference
//! interpreter, and after a `DeviceError` or a `Poison` fault in the same process (a device
//! left broken, as a GPU's after a failed launch) by the reference with every float output
//! moved by one: `DeviceError` says so ([`BackendError::device`]), `Poison` does not.
//!
//! Its sibling [`Sleep`] (named `sleep`) takes every op and only waits: each run sleeps
//! [`SLEEP_MS`] milliseconds (20 by default) and returns no outputs, using no CPU. Alone in a
//! campaign's backend set it measures how the campaign itself scales with `-j`.
use crate::backend::{Backend, BackendError, Capabilities, Prepared, Stage};
use crate::value::NamedValues;
use mutagraph_ir::model::Model;

/// The domain of fault ops.
pub const DOMAIN: &str = "mutagraph.fault";

/// The fault-injection backend.
pub struct Fault;

/// Environment variable: a directory where the fault backend marks the models it has run
/// wrongly once (see the module documentation).
pub const WRONG_ONCE: &str = "MUTAGRAPH_FAULT_WRONG_ONCE";

/// Environment variable: `reference` makes the fault backend compute models without a fault
/// node as the reference does (see the module documentation).
pub const COMPUTE: &str = "MUTAGRAPH_FAULT_COMPUTE";

/// Set by a `DeviceError` or `Poison` fault: this process's "device" is broken.
static POISONED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether models without a fault node are computed (see [`COMPUTE`]).
fn computes() -> bool {
    std::env::var(COMPUTE).is_ok_and(|v| v == "reference")
}

/// What a broken device makes of the reference's outputs: every float element moved by one.
fn garbled(out: NamedValues) -> NamedValues {
    use crate::value::Value;
    out.into_iter()
        .map(|(n, v)| match v {
            Value::Tensor(t) => match t.to_f64s().filter(|_| t.dtype.is_float()) {
                Some(x) => {
                    let moved: Vec<f64> = x.iter().map(|e| e + 1.0).collect();
                    let g = crate::value::HostTensor::from_f64s(t.dtype, t.shape.clone(), &moved)
                        .unwrap_or(t);
                    (n, Value::Tensor(g))
                }
                None => (n, Value::Tensor(t)),
            },
            other => (n, other),
        })
        .collect()
}

/// Whether `model` was prepared before under the [`WRONG_ONCE`] directory (marking it now if
/// not); `None` when the variable is not set.
fn seen_before(model: &[u8]) -> Option<bool> {
    use std::hash::{Hash, Hasher};
    let dir = std::path::PathBuf::from(std::env::var_os(WRONG_ONCE)?);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    model.hash(&mut h);
    let marker = dir.join(format!("{:016x}", h.finish()));
    Some(
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(marker)
            .is_err(),
    )
}

/// What the model asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Identity.
    Identity,
    /// `std::process::abort()`.
    Abort,
    /// A write through a null pointer (SIGSEGV).
    Segfault,
    /// A Rust panic.
    Panic,
    /// Sleeps forever.
    Hang,
    /// Allocates and touches memory without bound.
    Alloc,
    /// One huge allocation that the allocator refuses.
    AllocHuge,
    /// A run-stage error.
    Error,
    /// An unsupported op.
    Unsupported,
    /// Exits the process with status 3 in the middle of a run.
    Exit,
    /// A device error that leaves the process's device broken ([`BackendError::device`]).
    DeviceError,
    /// Breaks the process's device without a word (identity otherwise).
    Poison,
}

impl Mode {
    fn parse(op: &str) -> Option<Mode> {
        Some(match op {
            "Abort" => Mode::Abort,
            "Segfault" => Mode::Segfault,
            "Panic" => Mode::Panic,
            "Hang" => Mode::Hang,
            "Alloc" => Mode::Alloc,
            "AllocHuge" => Mode::AllocHuge,
            "Error" => Mode::Error,
            "Unsupported" => Mode::Unsupported,
            "Exit" => Mode::Exit,
            "DeviceError" => Mode::DeviceError,
            "Poison" => Mode::Poison,
            _ => return None,
        })
    }
}

impl Backend for Fault {
    fn name(&self) -> &str {
        "fault"
    }
    fn version(&self) -> String {
        "1".into()
    }
    fn capabilities(&mut self) -> Capabilities {
        Capabilities::from_ops("fault", "1", &["Identity"], &[])
    }
    fn prepare(&mut self, model: &[u8]) -> Result<Box<dyn Prepared>, BackendError> {
        let m = Model::from_bytes(model)
            .map_err(|e| BackendError::failed(Stage::Load, e.to_string()))?;
        let mut mode = Mode::Identity;
        for n in m.graph.nodes() {
            if n.domain() == DOMAIN {
                mode = Mode::parse(&n.op_type).ok_or_else(|| {
                    BackendError::unsupported(Stage::Load, format!("unknown fault {}", n.op_type))
                })?;
                break;
            }
        }
        if mode == Mode::Identity && computes() {
            let inner = crate::reference::Reference::new().prepare(model)?;
            return Ok(Box::new(OnDevice { inner }));
        }
        if mode == Mode::Identity && seen_before(model) == Some(true) {
            return crate::reference::Reference::new().prepare(model);
        }
        let outputs = m
            .graph
            .outputs
            .iter()
            .map(|o| o.name.clone().unwrap_or_default())
            .collect();
        Ok(Box::new(FaultModel { mode, outputs }))
    }
}

struct FaultModel {
    mode: Mode,
    outputs: Vec<String>,
}

/// A model computed as the reference does, on a device a fault may have broken.
struct OnDevice {
    inner: Box<dyn Prepared>,
}

impl Prepared for OnDevice {
    fn run(&mut self, inputs: &NamedValues) -> Result<NamedValues, BackendError> {
        let out = self.inner.run(inputs)?;
        Ok(if POISONED.load(std::sync::atomic::Ordering::Relaxed) {
            garbled(out)
        } else {
            out
        })
    }
}

#[allow(unsafe_code)]
fn segfault() {
    // SAFETY: none; this is the fault being injected.
    unsafe { std::ptr::null_mut::<u64>().write_volatile(0xdead) };
}

impl Prepared for FaultModel {
    fn run(&mut self, inputs: &NamedValues) -> Result<NamedValues, BackendError> {
        match self.mode {
            Mode::Identity => {}
            Mode::Abort => std::process::abort(),
            Mode::Segfault => segfault(),
            Mode::Panic => panic!("injected panic in the fault backend"),
            Mode::Hang => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            Mode::Alloc => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 64 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            Mode::AllocHuge => {
                let n = std::hint::black_box(1usize << 46);
                let v = vec![7u8; n];
                std::hint::black_box(&v);
            }
            Mode::Error => return Err(BackendError::failed(Stage::Run, "injected run error")),
            Mode::Unsupported => {
                return Err(BackendError::unsupported(
                    Stage::Run,
                    "injected unsupported op",
                ));
            }
            Mode::Exit => std::process::exit(3),
            Mode::DeviceError => {
                POISONED.store(true, std::sync::atomic::Ordering::Relaxed);
                return Err(BackendError::device(
                    Stage::Run,
                    "injected device error: CUDA_ERROR_INVALID_VALUE",
                ));
            }
            Mode::Poison => POISONED.store(true, std::sync::atomic::Ordering::Relaxed),
        }
        Ok(self
            .outputs
            .iter()
            .zip(inputs)
            .map(|(o, (_, v))| (o.clone(), v.clone()))
            .collect())
    }
}

/// The name of the sleeping backend.
pub const SLEEP: &str = "sleep";

/// Environment variable: the milliseconds each run of the [`Sleep`] backend takes (20).
pub const SLEEP_MS: &str = "MUTAGRAPH_SLEEP_MS";

/// A backend whose runs only wait (see the module documentation).
pub struct Sleep {
    run: std::time::Duration,
}

impl Sleep {
    /// Runs of [`SLEEP_MS`] milliseconds, 20 when it is unset or not a number.
    pub fn from_env() -> Sleep {
        let ms = std::env::var(SLEEP_MS)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(20);
        Sleep {
            run: std::time::Duration::from_millis(ms),
        }
    }
}

impl Backend for Sleep {
    fn name(&self) -> &str {
        SLEEP
    }
    fn version(&self) -> String {
        "1".into()
    }
    /// Every op the reference has, so a campaign on it alone mutates as on the default set.
    fn capabilities(&mut self) -> Capabilities {
        let mut caps = crate::reference::Reference::new().capabilities();
        caps.backend = SLEEP.into();
        caps
    }
    fn prepare(&mut self, _model: &[u8]) -> Result<Box<dyn Prepared>, BackendError> {
        Ok(Box::new(Sleeping { run: self.run }))
    }
}

struct Sleeping {
    run: std::time::Duration,
}

impl Prepared for Sleeping {
    fn run(&mut self, _inputs: &NamedValues) -> Result<NamedValues, BackendError> {
        std::thread::sleep(self.run);
        Ok(NamedValues::default())
    }
}
