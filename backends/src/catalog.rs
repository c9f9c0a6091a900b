//! The catalog of backends: names, how to create each one, and which are compiled in.
use crate::backend::Backend;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Settings shared by all backends of a run.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Path of `libonnxruntime.so` (else `ORT_DYLIB_PATH`, else found in the Python package).
    pub ort_dylib: Option<PathBuf>,
    /// Intra-op threads for libraries that take it, and for the reference's Conv (`None`: 1,
    /// for reproducible timings).
    pub threads: Option<usize>,
}

/// The library a backend runs: variants of one library (`ort` and `ort-noopt`) share their
/// kernels, so they are one witness against another backend, and one bug of the library shows up
/// in several of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Library {
    /// mutagraph's own f64 interpreter: the ground truth, never a faulty library.
    Reference,
    /// ONNX Runtime.
    OnnxRuntime,
    /// tract.
    Tract,
    /// burn (through mutagraph's interpreter over burn's tensor API).
    Burn,
    /// A test-only backend (fault injection, planted bugs): each is its own library.
    Test,
}

impl Library {
    /// The library's name in reports (`ONNX Runtime`, `tract`, `burn`).
    pub fn display(self) -> &'static str {
        match self {
            Library::Reference => "mutagraph reference",
            Library::OnnxRuntime => "ONNX Runtime",
            Library::Tract => "tract",
            Library::Burn => "burn",
            Library::Test => "test backend",
        }
    }

    /// A short key for signatures and file names (`ort`, `tract`, `burn`).
    pub fn key(self) -> &'static str {
        match self {
            Library::Reference => "reference",
            Library::OnnxRuntime => "ort",
            Library::Tract => "tract",
            Library::Burn => "burn",
            Library::Test => "test",
        }
    }
}

/// One backend of the catalog.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BackendInfo {
    /// Its name (`ort-noopt`).
    pub name: &'static str,
    /// The library it runs.
    pub library: Library,
    /// True when it runs the library's graph optimizer (`ort`, `tract-opt`): such a variant
    /// that runs a model is no witness that the model is runnable (an optimizer may delete the
    /// very node another backend fails on).
    pub optimized: bool,
    /// True for accelerator backends (their kernels differ from the CPU ones).
    pub gpu: bool,
    /// The cargo feature that compiles it in (`None`: always).
    pub feature: Option<&'static str>,
    /// In the default set of `run`, `campaign`, `minimize` and the LLM commands.
    pub default: bool,
}

const fn entry(
    name: &'static str,
    library: Library,
    optimized: bool,
    gpu: bool,
    feature: Option<&'static str>,
    default: bool,
) -> BackendInfo {
    BackendInfo {
        name,
        library,
        optimized,
        gpu,
        feature,
        default,
    }
}

/// Every backend this tool knows, in report order (test-only backends are in [`TEST_TABLE`]).
/// The default set holds the reference and one CPU variant of each library; the triage runs a
/// library's other variants on demand to tell a kernel bug from an optimizer bug.
pub const TABLE: &[BackendInfo] = &[
    entry("reference", Library::Reference, false, false, None, true),
    entry(
        "reference-f64",
        Library::Reference,
        false,
        false,
        None,
        false,
    ),
    entry(
        "reference-native",
        Library::Reference,
        false,
        false,
        None,
        false,
    ),
    entry("ort", Library::OnnxRuntime, true, false, Some("ort"), true),
    entry(
        "ort-noopt",
        Library::OnnxRuntime,
        false,
        false,
        Some("ort"),
        false,
    ),
    entry(
        "ort-cuda",
        Library::OnnxRuntime,
        true,
        true,
        Some("ort-cuda"),
        false,
    ),
    entry("tract", Library::Tract, false, false, Some("tract"), true),
    entry(
        "tract-opt",
        Library::Tract,
        true,
        false,
        Some("tract"),
        false,
    ),
    entry(
        "burn-ndarray",
        Library::Burn,
        false,
        false,
        Some("burn"),
        true,
    ),
    entry("burn-wgpu", Library::Burn, false, true, Some("wgpu"), false),
    entry("burn-cuda", Library::Burn, false, true, Some("cuda"), false),
];

/// The test-only backends: fault injection and the planted bugs ([`crate::planted`]), the
/// reference with one op carrying a known bug. Always compiled in, never in a default set.
pub const TEST_TABLE: &[BackendInfo] = &[
    entry("fault", Library::Test, false, false, None, false),
    entry(
        crate::planted::CONV_PAD,
        Library::Test,
        false,
        false,
        None,
        false,
    ),
    entry(
        crate::planted::SOFTMAX,
        Library::Test,
        false,
        false,
        None,
        false,
    ),
    entry(
        crate::planted::REDUCE_MEAN,
        Library::Test,
        false,
        false,
        None,
        false,
    ),
    entry(
        crate::planted::MAXPOOL_SAME,
        Library::Test,
        false,
        false,
        None,
        false,
    ),
    entry(
        crate::planted::RNN_CLIP,
        Library::Test,
        false,
        false,
        None,
        false,
    ),
];

/// Every backend name this tool knows (not the test-only ones), in report order.
pub const ALL: &[&str] = &[
    "reference",
    "reference-f64",
    "reference-native",
    "ort",
    "ort-noopt",
    "ort-cuda",
    "tract",
    "tract-opt",
    "burn-ndarray",
    "burn-wgpu",
    "burn-cuda",
];

/// The planted-bug backends ([`crate::planted`]): the reference with one op carrying a known
/// bug, for testing that campaigns find, localize and minimize bugs. Always compiled in, never
/// in the default set (nor in [`ALL`]).
pub const PLANTED: &[&str] = crate::planted::NAMES;

/// What the catalog knows of a backend name (test-only backends included).
pub fn info(name: &str) -> Option<&'static BackendInfo> {
    TABLE.iter().chain(TEST_TABLE).find(|b| b.name == name)
}

/// The library of a backend; an unknown name is its own test library.
pub fn library(name: &str) -> Library {
    info(name).map_or(Library::Test, |b| b.library)
}

/// The key that groups variants of one library (`ort` for `ort` and `ort-noopt`); a test-only
/// backend is its own group.
pub fn family(name: &str) -> &str {
    match info(name) {
        Some(b) if b.library != Library::Test => b.library.key(),
        _ => name,
    }
}

/// True for the reference interpreter (in any of its precisions).
pub fn is_reference(name: &str) -> bool {
    library(name) == Library::Reference
}

/// True when the backend runs a graph optimizer.
pub fn is_optimized(name: &str) -> bool {
    info(name).is_some_and(|b| b.optimized)
}

/// The other compiled CPU variants of `name`'s library (for `ort`: `ort-noopt`), in table order.
pub fn sibling_variants(name: &str) -> Vec<&'static str> {
    let Some(me) = info(name) else {
        return Vec::new();
    };
    if matches!(me.library, Library::Reference | Library::Test) {
        return Vec::new();
    }
    TABLE
        .iter()
        .filter(|b| b.library == me.library && b.name != name && !b.gpu && is_compiled(b.name))
        .map(|b| b.name)
        .collect()
}

/// The unoptimized CPU variant of each library other than `name`'s, compiled in: the backends
/// that can witness that a model `name` fails on is runnable.
pub fn witnesses_for(name: &str) -> Vec<&'static str> {
    let mine = library(name);
    TABLE
        .iter()
        .filter(|b| {
            !b.optimized
                && !b.gpu
                && b.library != mine
                && !matches!(b.library, Library::Reference | Library::Test)
                && is_compiled(b.name)
        })
        .map(|b| b.name)
        .collect()
}

/// The default set for `run`, `campaign`, `minimize` and the LLM commands: the reference and
/// one CPU variant of each library, those compiled in.
pub fn default_set() -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|b| b.default && is_compiled(b.name))
        .map(|b| b.name)
        .collect()
}

/// Every CPU backend compiled in but the reference's other precisions (`conformance`, benches).
pub fn cpu_set() -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|b| {
            !b.gpu
                && is_compiled(b.name)
                && !(b.library == Library::Reference && b.name != "reference")
        })
        .map(|b| b.name)
        .collect()
}

/// True when this build contains the backend.
pub fn is_compiled(name: &str) -> bool {
    match info(name) {
        Some(BackendInfo {
            feature: Some(f), ..
        }) => match *f {
            "ort" => cfg!(feature = "ort"),
            "ort-cuda" => cfg!(feature = "ort-cuda"),
            "tract" => cfg!(feature = "tract"),
            "burn" => cfg!(feature = "burn"),
            "wgpu" => cfg!(feature = "wgpu"),
            "cuda" => cfg!(feature = "cuda"),
            _ => false,
        },
        Some(_) => true,
        None => false,
    }
}

/// Why a backend could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// No backend has this name.
    #[error("unknown backend '{0}' (known: {known})", known = ALL.join(", "))]
    Unknown(String),
    /// The backend exists but this build does not contain it.
    #[error("backend '{name}' is not compiled in: rebuild with `--features {feature}`")]
    NotCompiled {
        /// The backend.
        name: String,
        /// The cargo feature that brings it.
        feature: &'static str,
    },
    /// The library behind it could not be initialized.
    #[error("backend '{name}': {problem}")]
    Init {
        /// The backend.
        name: String,
        /// What went wrong, with what to install.
        problem: String,
    },
}

/// Creates a backend by name.
pub fn create(name: &str, config: &Config) -> Result<Box<dyn Backend>, CreateError> {
    let not_compiled = |feature| CreateError::NotCompiled {
        name: name.to_string(),
        feature,
    };
    if library(name) == Library::Reference {
        crate::reference::set_threads(config.threads.unwrap_or(1));
    }
    match name {
        "reference" => Ok(Box::new(crate::reference::Reference::new())),
        "reference-f64" => Ok(Box::new(crate::reference::Reference::new_f64())),
        "reference-native" => Ok(Box::new(crate::reference::Reference::new_native())),
        "fault" => Ok(Box::new(crate::fault::Fault)),
        n if PLANTED.contains(&n) => match crate::planted::by_name(n) {
            Some(b) => Ok(Box::new(b)),
            None => Err(CreateError::Unknown(n.to_string())),
        },
        "ort" | "ort-noopt" | "ort-cuda" => {
            #[cfg(feature = "ort")]
            {
                if name == "ort-cuda" && !cfg!(feature = "ort-cuda") {
                    return Err(not_compiled("ort-cuda"));
                }
                crate::ort::OrtBackend::create(name, config)
                    .map(|b| Box::new(b) as Box<dyn Backend>)
            }
            #[cfg(not(feature = "ort"))]
            Err(not_compiled(if name == "ort-cuda" {
                "ort-cuda"
            } else {
                "ort"
            }))
        }
        "tract" | "tract-opt" => {
            #[cfg(feature = "tract")]
            {
                Ok(Box::new(crate::tract::TractBackend::new(
                    name == "tract-opt",
                )))
            }
            #[cfg(not(feature = "tract"))]
            Err(not_compiled("tract"))
        }
        "burn-ndarray" => {
            #[cfg(feature = "burn")]
            {
                Ok(crate::burn::ndarray())
            }
            #[cfg(not(feature = "burn"))]
            Err(not_compiled("burn"))
        }
        "burn-wgpu" => {
            #[cfg(feature = "wgpu")]
            {
                crate::burn::wgpu()
            }
            #[cfg(not(feature = "wgpu"))]
            Err(not_compiled("wgpu"))
        }
        "burn-cuda" => {
            #[cfg(feature = "cuda")]
            {
                crate::burn::cuda()
            }
            #[cfg(not(feature = "cuda"))]
            Err(not_compiled("cuda"))
        }
        other => Err(CreateError::Unknown(other.to_string())),
    }
}
