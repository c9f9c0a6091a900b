//! ONNX Runtime through the `ort` crate, with the shared library loaded at run time.
//!
//! # Which library is loaded
//!
//! The first of these that names something is used:
//!
//! 1. [`Config::ort_dylib`];
//! 2. the environment variable `ORT_DYLIB_PATH`;
//! 3. the `onnxruntime` Python package: `python3` is asked where the package lives and its
//!    `capi/libonnxruntime.so*` is taken; when `python3` is absent or does not know the package,
//!    the usual `site-packages` / `dist-packages` directories are scanned for the same file.
//!
//! A path given explicitly (1 or 2) that does not exist is an error: the search does not go on
//! past it. When nothing is found, [`CreateError::Init`] says what to install
//! (`pip install onnxruntime==1.31.1`).
//!
//! A process holds one ONNX Runtime library and one ONNX Runtime environment: the first backend
//! created loads it, later ones share it. Asking for a different library file in the same process
//! is an `Init` error.
//!
//! # Identity
//!
//! [`Backend::version`] is the version of the loaded library (read from its build information,
//! else from the library's file name, e.g. `libonnxruntime.so.1.31.1`).
//!
//! # Configurations
//!
//! - `ort`: all graph optimizations (`GraphOptimizationLevel::All`), CPU.
//! - `ort-noopt`: graph optimizations disabled, CPU.
//! - `ort-cuda` (feature `ort-cuda`): all optimizations with the CUDA execution provider,
//!   registered so that a missing GPU or CUDA library fails session creation instead of silently
//!   falling back to the CPU.
//!
//! Sessions use [`Config::threads`] intra-op threads (1 when unset). ONNX Runtime's own logging
//! is routed to a logger that drops its messages, so failed runs do not flood stderr (the
//! failures themselves come back as [`BackendError`]s), but for one: an optimized session logs
//! verbosely, and each graph transformer it starts is marked in a worker
//! ([`crate::worker::context`]), so that a process that dies in one says which.
//!
//! # Values
//!
//! Tensors of every element type of [`Data`] except `Raw` (float8, 4-bit, complex) go in and come
//! out. Sequences of tensors go in (when not empty) and come out. An optional input holding a
//! value is fed as that value; an empty optional input is left out. An optional output is
//! returned as what ONNX Runtime hands back (its content). Maps and anything else are
//! `unsupported`.
use crate::backend::{Backend, BackendError, Capabilities, Prepared, Stage};
use crate::catalog::{self, BackendInfo, Config, CreateError, Library, Rewrites};
use crate::value::{Data, HostTensor, NamedValues, Value};
use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::{DynValue, Sequence, Tensor, TensorElementType, ValueType};
use std::borrow::Cow;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What to install when the library is missing.
pub const INSTALL_HINT: &str =
    "install it with `pip install onnxruntime==1.31.1` or set ORT_DYLIB_PATH";

/// Why the ONNX Runtime library cannot be found or loaded (a backend that needs it reports
/// this as [`CreateError::Init`]).
#[derive(Debug, thiserror::Error)]
pub enum OrtError {
    /// A path given explicitly names no file.
    #[error(
        "the ONNX Runtime library {} named by {named_by} does not exist: {INSTALL_HINT}",
        .path.display()
    )]
    Missing {
        /// The path given.
        path: PathBuf,
        /// Where it was given (the configuration, `ORT_DYLIB_PATH`).
        named_by: &'static str,
    },
    /// No path was given and the Python package holds no library.
    #[error("the ONNX Runtime library (libonnxruntime.so) was not found: {INSTALL_HINT}")]
    NotFound,
    /// Another library file is already loaded in this process.
    #[error(
        "ONNX Runtime is already loaded from {} in this process; {} (from {named_by}) cannot be loaded beside it",
        .loaded.display(),
        .path.display()
    )]
    AlreadyLoaded {
        /// The library loaded.
        loaded: PathBuf,
        /// The library asked for.
        path: PathBuf,
        /// Where that one was named.
        named_by: &'static str,
    },
    /// The library file does not load.
    #[error(
        "could not load the ONNX Runtime library {} (from {named_by}): {err}; {INSTALL_HINT}",
        .path.display()
    )]
    Load {
        /// The library.
        path: PathBuf,
        /// Where it was named.
        named_by: &'static str,
        /// Why it does not load.
        err: ort::LoadDynamicError,
    },
    /// The library loaded but its environment cannot be created.
    #[error("could not create the ONNX Runtime environment: {0}")]
    Environment(ort::Error),
}

/// The process-wide ONNX Runtime: the loaded library and its environment.
struct Runtime {
    env: Environment,
    path: PathBuf,
    version: String,
}

/// The runtime, once loaded. A failed load leaves it empty so that a later attempt (with another
/// path) may succeed.
static RUNTIME: Mutex<Option<Arc<Runtime>>> = Mutex::new(None);

/// Where a library path came from (for messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Config,
    EnvVar,
    Python,
}

impl Origin {
    fn describe(self) -> &'static str {
        match self {
            Origin::Config => "the configuration (ort_dylib)",
            Origin::EnvVar => "ORT_DYLIB_PATH",
            Origin::Python => "the onnxruntime Python package",
        }
    }
}

/// Finds the ONNX Runtime library from an explicit path, the value of `ORT_DYLIB_PATH` and,
/// failing both, the Python package (`python_dirs` lists the package directories to look in).
fn locate_in(
    explicit: Option<&Path>,
    env_value: Option<OsString>,
    python_dirs: impl FnOnce() -> Vec<PathBuf>,
) -> Result<(PathBuf, Origin), OrtError> {
    let given = explicit
        .map(|p| (p.to_path_buf(), Origin::Config))
        .or_else(|| {
            env_value
                .filter(|v| !v.is_empty())
                .map(|v| (PathBuf::from(v), Origin::EnvVar))
        });
    if let Some((path, origin)) = given {
        return if path.is_file() {
            Ok((path, origin))
        } else {
            Err(OrtError::Missing {
                path,
                named_by: origin.describe(),
            })
        };
    }
    for dir in python_dirs() {
        if let Some(lib) = library_in_package(&dir) {
            return Ok((lib, Origin::Python));
        }
    }
    Err(OrtError::NotFound)
}

/// `capi/libonnxruntime.so*` inside an `onnxruntime` package directory (the most specific name
/// first, so that `libonnxruntime.so.1.31.1` is preferred over a bare `libonnxruntime.so`).
fn library_in_package(pkg: &Path) -> Option<PathBuf> {
    let capi = pkg.join("capi");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&capi)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("libonnxruntime.so"))
        })
        .collect();
    found.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    found.into_iter().next()
}

/// Candidate `onnxruntime` package directories: what `python3` says first, then the usual
/// site-packages locations.
fn python_package_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let asked = std::process::Command::new("python3")
        .args([
            "-c",
            // find_spec locates the package without importing it (importing costs ~0.3 s).
            "import importlib.util as u; s = u.find_spec('onnxruntime'); \
             print(s.submodule_search_locations[0] if s and s.submodule_search_locations else '')",
        ])
        .stderr(std::process::Stdio::null())
        .output();
    if let Ok(o) = asked
        && o.status.success()
    {
        let s = String::from_utf8_lossy(&o.stdout);
        let line = s.trim();
        if !line.is_empty() {
            out.push(PathBuf::from(line));
        }
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(home) = std::env::var_os("HOME") {
        let home = PathBuf::from(home);
        roots.push(home.join(".local/lib"));
        // pyenv installs each interpreter under its own prefix.
        if let Ok(rd) = std::fs::read_dir(home.join(".pyenv/versions")) {
            roots.extend(rd.flatten().map(|e| e.path().join("lib")));
        }
    }
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        roots.push(PathBuf::from(venv).join("lib"));
    }
    roots.extend(["/usr/local/lib", "/usr/lib", "/opt/conda/lib"].map(PathBuf::from));
    for root in roots {
        let Ok(rd) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("python3"))
            })
            .collect();
        pythons.sort();
        for py in pythons.into_iter().rev() {
            for sub in ["site-packages", "dist-packages"] {
                out.push(py.join(sub).join("onnxruntime"));
            }
        }
    }
    out
}

/// The library path `config` resolves to (see the module documentation for the order). The
/// engine resolves it once and hands it to every worker it starts.
pub fn find_library(config: &Config) -> Result<PathBuf, OrtError> {
    locate(config).map(|(p, _)| p)
}

/// Finds the library for `config` (see the module documentation for the order).
fn locate(config: &Config) -> Result<(PathBuf, Origin), OrtError> {
    locate_in(
        config.ort_dylib.as_deref(),
        std::env::var_os("ORT_DYLIB_PATH"),
        python_package_dirs,
    )
}

/// The version of ONNX Runtime from the build information string
/// (`... git-branch=rel-1.31.1, ...`), else from the library's file name.
fn library_version(path: &Path) -> String {
    let info = ort::info();
    if let Some(rest) = info.split("git-branch=rel-").nth(1) {
        let v: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        if v.contains('.') {
            return v.trim_end_matches('.').to_string();
        }
    }
    version_from_file_name(path).unwrap_or_else(|| "unknown".into())
}

/// `1.31.1` from `libonnxruntime.so.1.31.1`.
fn version_from_file_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let v = name.strip_prefix("libonnxruntime.so.")?;
    (!v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.')).then(|| v.to_string())
}

/// The process-wide runtime, loading it on first use.
fn runtime(config: &Config) -> Result<Arc<Runtime>, OrtError> {
    let (path, origin) = locate(config)?;
    let mut slot = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(rt) = slot.as_ref() {
        let same = match (path.canonicalize(), rt.path.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => path == rt.path,
        };
        // The Python package is a fallback: whatever is loaded already serves.
        if same || origin == Origin::Python {
            return Ok(rt.clone());
        }
        return Err(OrtError::AlreadyLoaded {
            loaded: rt.path.clone(),
            path,
            named_by: origin.describe(),
        });
    }
    let builder = ort::init_from(&path).map_err(|err| OrtError::Load {
        path: path.clone(),
        named_by: origin.describe(),
        err,
    })?;
    // Every message of ONNX Runtime goes to this logger, which keeps quiet (failures are reported
    // through the errors returned by the API) but for the graph transformer being applied: a
    // worker that dies in one says which.
    let quiet: ort::logging::LoggerFunction = Arc::new(|_level, _category, _id, _location, msg| {
        if let Some(name) = transformer_applied(msg) {
            let step = crate::worker::context::optimizer_pass(Library::OnnxRuntime.display(), name);
            crate::worker::context::enter(&step);
        } else if let Some(name) = transformer_modified(msg) {
            crate::worker::context::rewrote(name);
        }
    });
    let env = builder
        .with_name("mutagraph")
        .with_telemetry(false)
        .with_logger(quiet)
        .build()
        .map_err(OrtError::Environment)?;
    env.set_log_level(ort::logging::LogLevel::Fatal);
    let version = library_version(&path);
    let rt = Arc::new(Runtime { env, path, version });
    *slot = Some(rt.clone());
    Ok(rt)
}

/// ONNX Runtime in one configuration: its catalog row says which (graph optimizer on when
/// `optimized`, the CUDA execution provider when `gpu`).
pub struct OrtBackend {
    info: &'static BackendInfo,
    runtime: Arc<Runtime>,
    threads: usize,
    /// The graph transformers and rules left out (`disabled_optimizers`).
    disabled: Vec<String>,
}

impl OrtBackend {
    /// Creates `ort`, `ort-noopt` or `ort-cuda`, loading the library if this process has not
    /// loaded it yet.
    pub fn create(name: &str, config: &Config) -> Result<OrtBackend, CreateError> {
        let init = |problem: String| CreateError::Init {
            name: name.to_string(),
            problem,
        };
        let info = catalog::info(name)
            .filter(|b| b.library == Library::OnnxRuntime)
            .ok_or_else(|| CreateError::Unknown(name.into()))?;
        if !catalog::is_compiled(name) {
            return Err(CreateError::NotCompiled {
                name: name.into(),
                feature: info.feature.unwrap_or("ort"),
            });
        }
        let runtime = runtime(config).map_err(|e| init(e.to_string()))?;
        let backend = OrtBackend {
            info,
            runtime,
            threads: config.threads.unwrap_or(1).max(1),
            disabled: match &config.rewrites {
                Rewrites::Without(names) => names
                    .iter()
                    .flat_map(|n| crate::catalog::ort_transformer_names(n))
                    .collect(),
                _ => Vec::new(),
            },
        };
        if info.gpu {
            // Registering the execution provider fails without the CUDA build of ONNX Runtime
            // (the `onnxruntime-gpu` wheel), the CUDA libraries or a GPU: say so now rather than
            // on every model.
            backend.builder().map_err(|e| {
                init(format!(
                    "the CUDA execution provider is not available: {e} (it needs the onnxruntime-gpu build of ONNX Runtime, CUDA and a GPU)"
                ))
            })?;
        }
        Ok(backend)
    }

    /// The library file in use.
    pub fn library_path(&self) -> &Path {
        &self.runtime.path
    }

    fn builder(&self) -> ort::Result<ort::session::builder::SessionBuilder> {
        let level = if self.info.optimized {
            GraphOptimizationLevel::All
        } else {
            GraphOptimizationLevel::Disable
        };
        // The optimizer's verbose messages name each graph transformer it applies.
        let log = if self.info.optimized {
            ort::logging::LogLevel::Verbose
        } else {
            ort::logging::LogLevel::Fatal
        };
        let b = Session::builder(&self.runtime.env)?
            .with_optimization_level(level)?
            .with_intra_threads(self.threads)?
            .with_log_level(log)?;
        let b = if self.disabled.is_empty() {
            b
        } else {
            b.with_disabled_optimizers(self.disabled.join(";"))?
        };
        #[cfg(feature = "ort-cuda")]
        let b = if self.info.gpu {
            b.with_execution_providers([ort::ep::CUDA::default().build().error_on_failure()])?
        } else {
            b
        };
        Ok(b)
    }
}

impl Backend for OrtBackend {
    fn name(&self) -> &str {
        self.info.name
    }

    fn version(&self) -> String {
        self.runtime.version.clone()
    }

    fn capabilities(&mut self) -> Capabilities {
        crate::probe::cached(self)
    }

    fn prepare(&mut self, model: &[u8]) -> Result<Box<dyn Prepared>, BackendError> {
        let mut builder = self
            .builder()
            .map_err(|e| classify(&e, Stage::Load, "configuring the session"))?;
        let session = builder.commit_from_memory(model);
        crate::worker::context::leave();
        let session = session.map_err(|e| classify(&e, session_stage(&e), ""))?;
        let inputs = session
            .inputs()
            .iter()
            .map(|i| (i.name().to_string(), i.dtype().clone()))
            .collect();
        let outputs = session
            .outputs()
            .iter()
            .map(|o| o.name().to_string())
            .collect();
        Ok(Box::new(OrtModel {
            session,
            inputs,
            outputs,
        }))
    }
}

/// A session and what it takes and gives.
struct OrtModel {
    session: Session,
    inputs: Vec<(String, ValueType)>,
    outputs: Vec<String>,
}

impl Prepared for OrtModel {
    fn run(&mut self, inputs: &NamedValues) -> Result<NamedValues, BackendError> {
        // The values are kept here until the outputs have been read: ONNX Runtime does not copy
        // tensors created over our buffers, and an output (an element of an output sequence, for
        // one) may still point into them.
        let mut owned: Vec<(String, DynValue)> = Vec::new();
        for (name, value) in inputs {
            if !self.inputs.iter().any(|(n, _)| n == name) {
                return Err(BackendError::failed(
                    Stage::Run,
                    format!("the model has no input named '{name}'"),
                ));
            }
            if let Some(v) = to_ort(value).map_err(|m| with_name(m, name))? {
                owned.push((name.clone(), v));
            }
        }
        let feed: Vec<(Cow<'_, str>, ort::session::SessionInputValue<'_>)> = owned
            .iter()
            .map(|(n, v)| (Cow::Borrowed(n.as_str()), v.into()))
            .collect();
        let mut out = self
            .session
            .run(feed)
            .map_err(|e| classify(&e, Stage::Run, ""))?;
        let mut result = Vec::with_capacity(self.outputs.len());
        for name in &self.outputs {
            let v = out.remove(name.as_str()).ok_or_else(|| {
                BackendError::failed(Stage::Run, format!("no value for output '{name}'"))
            })?;
            let v = from_ort(&v).map_err(|m| with_name(m, name))?;
            result.push((name.clone(), v));
        }
        Ok(result)
    }
}

/// The graph transformer a verbose message of ONNX Runtime's optimizer says it starts
/// (`Applying graph transformer NchwcTransformer on step 1.`).
fn transformer_applied(msg: &str) -> Option<&str> {
    let rest = msg.strip_prefix("Applying graph transformer ")?;
    let name = rest.split_whitespace().next()?;
    (!name.is_empty()).then_some(name)
}

/// The graph transformer that changed the model, from ONNX Runtime's message after it applied
/// one (`GraphTransformer SkipLayerNormFusion modified: 1 with status: OK`).
fn transformer_modified(msg: &str) -> Option<&str> {
    let rest = msg.strip_prefix("GraphTransformer ")?;
    let (name, after) = rest.split_once(' ')?;
    after.starts_with("modified: 1").then_some(name)
}

fn with_name(mut e: BackendError, name: &str) -> BackendError {
    e.message = format!("value '{name}': {}", e.message);
    e
}

/// Session creation: kernel construction and graph transforms fail during initialization, the
/// rest (protobuf, checker, type and shape inference) while loading.
fn session_stage(e: &ort::Error) -> Stage {
    let m = e.message();
    if matches!(e.code(), ort::ErrorCode::ExecutionProviderFailure)
        || m.contains("Exception during initialization")
        || m.contains("SessionState")
        || m.contains("Failed to initialize")
    {
        Stage::Compile
    } else {
        Stage::Load
    }
}

/// An `ort` error as a [`BackendError`]: missing kernels and types are `unsupported`.
fn classify(e: &ort::Error, stage: Stage, context: &str) -> BackendError {
    let msg = if context.is_empty() {
        e.message().to_string()
    } else {
        format!("{context}: {}", e.message())
    };
    let lower = msg.to_lowercase();
    let unsupported = matches!(e.code(), ort::ErrorCode::NotImplemented)
        || lower.contains("could not find an implementation")
        || lower.contains("not implemented")
        || lower.contains("not supported")
        || lower.contains("is not a registered function/op")
        || lower.contains("unsupported");
    if unsupported {
        BackendError::unsupported(stage, msg)
    } else {
        BackendError::failed(stage, msg)
    }
}

fn unsupported(msg: impl Into<String>) -> BackendError {
    BackendError::unsupported(Stage::Run, msg)
}

fn shape_i64(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

/// Our value as an `ort` value (`None` for an empty optional, which is left out of the feed).
fn to_ort(v: &Value) -> Result<Option<DynValue>, BackendError> {
    match v {
        Value::Tensor(t) => tensor_to_ort(t).map(Some),
        Value::Optional(None) => Ok(None),
        Value::Optional(Some(inner)) => to_ort(inner),
        Value::Sequence(items) => {
            if items.is_empty() {
                return Err(unsupported(
                    "ONNX Runtime's API cannot create an empty sequence",
                ));
            }
            let mut tensors = Vec::with_capacity(items.len());
            for item in items {
                let Value::Tensor(t) = item else {
                    return Err(unsupported(format!(
                        "sequence element {} (only sequences of tensors can be fed)",
                        item.describe()
                    )));
                };
                let dt = tensor_to_ort(t)?
                    .downcast::<ort::value::DynTensorValueType>()
                    .map_err(|e| classify(&e, Stage::Run, "sequence element"))?;
                tensors.push(dt);
            }
            let s = Sequence::new(tensors).map_err(|e| classify(&e, Stage::Run, "sequence"))?;
            Ok(Some(s.into_dyn()))
        }
    }
}

fn tensor_to_ort(t: &HostTensor) -> Result<DynValue, BackendError> {
    fn prim<T>(shape: &[usize], v: &[T]) -> ort::Result<DynValue>
    where
        T: ort::value::PrimitiveTensorElementType + Clone + std::fmt::Debug + 'static,
    {
        // An empty tensor gets a real allocation, as numpy gives one: an ONNX Runtime kernel
        // that reads an empty input's first element (InstanceNormalization over a spatial size
        // of 0) would read an empty Vec's dangling pointer and crash where ONNX Runtime's own
        // Python package, and its users, do not.
        let mut data = Vec::with_capacity(v.len().max(1));
        data.extend_from_slice(v);
        Ok(Tensor::from_array((shape_i64(shape), data))?.into_dyn())
    }
    let s = &t.shape;
    let r = match &t.data {
        Data::F32(v) => prim(s, v),
        Data::F64(v) => prim(s, v),
        Data::F16(v) => prim(s, v),
        Data::BF16(v) => prim(s, v),
        Data::I8(v) => prim(s, v),
        Data::I16(v) => prim(s, v),
        Data::I32(v) => prim(s, v),
        Data::I64(v) => prim(s, v),
        Data::U8(v) => prim(s, v),
        Data::U16(v) => prim(s, v),
        Data::U32(v) => prim(s, v),
        Data::U64(v) => prim(s, v),
        Data::Bool(v) => prim(s, v),
        Data::String(v) => {
            let mut strings = Vec::with_capacity(v.len());
            for b in v {
                match String::from_utf8(b.clone()) {
                    Ok(x) if !x.contains('\0') => strings.push(x),
                    _ => {
                        return Err(unsupported(
                            "string elements that are not UTF-8 or hold NUL bytes",
                        ));
                    }
                }
            }
            Tensor::from_string_array((shape_i64(s), &strings[..])).map(|t| t.into_dyn())
        }
        Data::Raw(_) => {
            return Err(unsupported(format!(
                "{} tensors cannot be fed through the ort crate",
                t.dtype
            )));
        }
    };
    r.map_err(|e| classify(&e, Stage::Run, "creating an input tensor"))
}

/// An `ort` value as ours.
fn from_ort(v: &DynValue) -> Result<Value, BackendError> {
    match v.dtype() {
        ValueType::Tensor { ty, .. } => tensor_from_ort(v, *ty).map(Value::Tensor),
        ValueType::Sequence(_) => {
            let items = v
                .try_extract_sequence::<ort::value::DynValueTypeMarker>()
                .map_err(|e| classify(&e, Stage::Run, "reading a sequence output"))?;
            let mut out = Vec::with_capacity(items.len());
            for item in &items {
                out.push(from_ort(item)?);
            }
            Ok(Value::Sequence(out))
        }
        other => Err(unsupported(format!(
            "{other} outputs cannot be read through the ort crate"
        ))),
    }
}

fn tensor_from_ort(v: &DynValue, ty: TensorElementType) -> Result<HostTensor, BackendError> {
    fn prim<T>(v: &DynValue) -> ort::Result<(Vec<usize>, Vec<T>)>
    where
        T: ort::value::PrimitiveTensorElementType + Clone,
    {
        let (shape, data) = v.try_extract_tensor::<T>()?;
        Ok((shape.iter().map(|&d| d as usize).collect(), data.to_vec()))
    }
    let read = |e: ort::Error| classify(&e, Stage::Run, "reading an output tensor");
    let (shape, data) = match ty {
        TensorElementType::Float32 => prim(v).map(|(s, d)| (s, Data::F32(d))),
        TensorElementType::Float64 => prim(v).map(|(s, d)| (s, Data::F64(d))),
        TensorElementType::Float16 => prim(v).map(|(s, d)| (s, Data::F16(d))),
        TensorElementType::Bfloat16 => prim(v).map(|(s, d)| (s, Data::BF16(d))),
        TensorElementType::Int8 => prim(v).map(|(s, d)| (s, Data::I8(d))),
        TensorElementType::Int16 => prim(v).map(|(s, d)| (s, Data::I16(d))),
        TensorElementType::Int32 => prim(v).map(|(s, d)| (s, Data::I32(d))),
        TensorElementType::Int64 => prim(v).map(|(s, d)| (s, Data::I64(d))),
        TensorElementType::Uint8 => prim(v).map(|(s, d)| (s, Data::U8(d))),
        TensorElementType::Uint16 => prim(v).map(|(s, d)| (s, Data::U16(d))),
        TensorElementType::Uint32 => prim(v).map(|(s, d)| (s, Data::U32(d))),
        TensorElementType::Uint64 => prim(v).map(|(s, d)| (s, Data::U64(d))),
        TensorElementType::Bool => prim(v).map(|(s, d)| (s, Data::Bool(d))),
        TensorElementType::String => v.try_extract_strings().map(|(s, d)| {
            (
                s.iter().map(|&x| x as usize).collect(),
                Data::String(d.into_iter().map(String::into_bytes).collect()),
            )
        }),
        other => {
            return Err(unsupported(format!(
                "{other} outputs cannot be read through the ort crate"
            )));
        }
    }
    .map_err(read)?;
    let dtype = data.dtype().expect("raw outputs are refused above");
    let n: usize = shape.iter().product();
    if n != data.len() {
        return Err(BackendError::failed(
            Stage::Run,
            format!(
                "output shape {shape:?} does not match its {} elements",
                data.len()
            ),
        ));
    }
    Ok(HostTensor { dtype, shape, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_missing_path_is_a_clear_error() {
        let missing = Path::new("/nonexistent/libonnxruntime.so.1.31.1");
        let e = locate_in(Some(missing), None, Vec::new)
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
        assert!(e.contains("pip install onnxruntime==1.31.1"), "{e}");
        assert!(e.contains("ORT_DYLIB_PATH"), "{e}");
    }

    #[test]
    fn env_var_missing_path_is_a_clear_error_and_stops_the_search() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("onnxruntime");
        std::fs::create_dir_all(pkg.join("capi")).unwrap();
        std::fs::write(pkg.join("capi/libonnxruntime.so.1.31.1"), b"").unwrap();
        let e = locate_in(None, Some("/nonexistent/libonnxruntime.so".into()), || {
            vec![pkg.clone()]
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("ORT_DYLIB_PATH"), "{e}");
        assert!(e.contains("pip install onnxruntime==1.31.1"), "{e}");
    }

    #[test]
    fn python_package_is_searched_last() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("onnxruntime");
        std::fs::create_dir_all(pkg.join("capi")).unwrap();
        std::fs::write(pkg.join("capi/libonnxruntime.so.1.31.1"), b"").unwrap();
        std::fs::write(pkg.join("capi/libonnxruntime_providers_shared.so"), b"").unwrap();
        let (p, origin) = locate_in(None, Some("".into()), || {
            vec![dir.path().join("nothing"), pkg.clone()]
        })
        .unwrap();
        assert_eq!(origin, Origin::Python);
        assert_eq!(p, pkg.join("capi/libonnxruntime.so.1.31.1"));
        let e = locate_in(None, None, Vec::new).unwrap_err().to_string();
        assert!(e.contains("pip install onnxruntime==1.31.1"), "{e}");
    }

    #[test]
    fn version_from_the_file_name() {
        assert_eq!(
            version_from_file_name(Path::new("/x/libonnxruntime.so.1.31.1")).as_deref(),
            Some("1.31.1")
        );
        assert_eq!(
            version_from_file_name(Path::new("/x/libonnxruntime.so")),
            None
        );
    }

    #[cfg(feature = "ort-cuda")]
    #[test]
    fn cuda_without_a_gpu_is_a_clear_init_error() {
        if std::process::Command::new("nvidia-smi").output().is_ok() {
            return;
        }
        match OrtBackend::create("ort-cuda", &Config::default()) {
            Err(CreateError::Init { problem, .. }) => {
                assert!(problem.contains("CUDA execution provider"), "{problem}");
                eprintln!("{problem}");
            }
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("ort-cuda created without a GPU"),
        }
    }

    #[test]
    fn create_with_a_missing_library_is_an_init_error() {
        let config = Config {
            ort_dylib: Some("/nonexistent/libonnxruntime.so".into()),
            ..Config::default()
        };
        match OrtBackend::create("ort", &config) {
            Err(CreateError::Init { name, problem }) => {
                assert_eq!(name, "ort");
                assert!(
                    problem.contains("pip install onnxruntime==1.31.1"),
                    "{problem}"
                );
            }
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("created a backend from a missing library"),
        }
    }
}
