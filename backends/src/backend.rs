//! The `Backend` trait: one inference library (or one configuration of one) that can load an
//! ONNX model and run it.
use crate::value::NamedValues;
use mutagraph_ir::dtype::DType;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Where in its life a model failed on a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum Stage {
    /// Parsing / importing the model.
    Load,
    /// Type checking, optimization, kernel selection.
    Compile,
    /// Executing it on inputs.
    Run,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Load => "load",
            Stage::Compile => "compile",
            Stage::Run => "run",
        })
    }
}

/// A backend's refusal or failure. Either way it is data about the backend, never an error of
/// ours: the oracles decide what it means.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackendError {
    /// The stage that failed.
    pub stage: Stage,
    /// True when the backend does not implement something the model uses (an op, a dtype, an
    /// attribute value): not a failure.
    pub unsupported: bool,
    /// The backend's own message.
    pub message: String,
    /// True when this process cannot run the model because of state that an earlier model
    /// left in the library for the process's lifetime (burn fixes a device's float type at its
    /// first tensor): the worker pool runs the model again in a fresh worker. Never a finding.
    #[serde(default)]
    pub fresh_process: bool,
    /// True when the failure leaves the library's process unusable (a GPU device error after
    /// which every later launch in the process fails or computes garbage): the worker pool
    /// ends the worker once it has reported this run, and the next run gets a fresh one.
    #[serde(default)]
    pub poisoned: bool,
}

impl BackendError {
    /// A failure at `stage`.
    pub fn failed(stage: Stage, message: impl Into<String>) -> BackendError {
        BackendError {
            stage,
            unsupported: false,
            message: message.into(),
            fresh_process: false,
            poisoned: false,
        }
    }

    /// A failure after which the library's process is unusable (see
    /// [`poisoned`](BackendError::poisoned)).
    pub fn device(stage: Stage, message: impl Into<String>) -> BackendError {
        BackendError {
            poisoned: true,
            ..BackendError::failed(stage, message)
        }
    }

    /// The model needs a process the library has not yet been used in (see
    /// [`fresh_process`](BackendError::fresh_process)).
    pub fn fresh_process(stage: Stage, message: impl Into<String>) -> BackendError {
        BackendError {
            fresh_process: true,
            ..BackendError::failed(stage, message)
        }
    }

    /// A feature the backend does not implement.
    pub fn unsupported(stage: Stage, message: impl Into<String>) -> BackendError {
        BackendError {
            stage,
            unsupported: true,
            message: message.into(),
            fresh_process: false,
            poisoned: false,
        }
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unsupported {
            write!(f, "unsupported at {}: {}", self.stage, self.message)
        } else {
            write!(f, "{} error: {}", self.stage, self.message)
        }
    }
}

impl std::error::Error for BackendError {}

/// What a backend supports: op types (`domain::Op`, default domain written as just `Op`) with
/// the element types it accepts for them. An op absent from `ops` is unsupported.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Backend name and version this was computed for.
    pub backend: String,
    /// Version string.
    pub version: String,
    /// How it was obtained: `static` (the interpreter's own op table) or `probed`.
    pub source: String,
    /// Supported ops and, per op, the dtypes seen to work (empty = not restricted / unknown).
    pub ops: BTreeMap<String, Vec<String>>,
}

impl Capabilities {
    /// Static capabilities from an op list.
    pub fn from_ops(backend: &str, version: &str, ops: &[&str], dtypes: &[DType]) -> Capabilities {
        let names: Vec<String> = dtypes.iter().map(|d| d.name().to_string()).collect();
        Capabilities {
            backend: backend.into(),
            version: version.into(),
            source: "static".into(),
            ops: ops.iter().map(|o| (o.to_string(), names.clone())).collect(),
        }
    }

    /// Key for an op in `ops`.
    pub fn key(domain: &str, op: &str) -> String {
        mutagraph_ir::registry::op_key(domain, op)
    }

    /// True when the op is supported.
    pub fn supports(&self, domain: &str, op: &str) -> bool {
        self.ops.contains_key(&Capabilities::key(domain, op))
    }
}

/// One inference library in one configuration.
///
/// A backend prepares a model from its ONNX bytes (load and compile), then runs the prepared
/// model on inputs as often as asked. All failures are `BackendError`s; panics are caught by the
/// worker and reported as crashes.
pub trait Backend {
    /// Stable name, including the configuration (`ort`, `ort-noopt`, `tract-opt`, ...).
    fn name(&self) -> &str;
    /// Version of the library behind it.
    fn version(&self) -> String;
    /// What it supports (static for interpreters; probed and cached for libraries).
    fn capabilities(&mut self) -> Capabilities;
    /// Loads and compiles a model.
    fn prepare(&mut self, model: &[u8]) -> Result<Box<dyn Prepared>, BackendError>;
}

/// A model prepared by a backend.
pub trait Prepared {
    /// Runs the model. `inputs` are the graph inputs by name; the result holds the graph outputs
    /// by name in graph order.
    fn run(&mut self, inputs: &NamedValues) -> Result<NamedValues, BackendError>;
}
