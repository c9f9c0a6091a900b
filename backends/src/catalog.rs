//! The catalog of backends: names, how to create each one, and which are compiled in.
use crate::backend::Backend;
use std::path::PathBuf;

/// Settings shared by all backends of a run.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Path of `libonnxruntime.so` (else `ORT_DYLIB_PATH`, else found in the Python package).
    pub ort_dylib: Option<PathBuf>,
    /// Intra-op threads for libraries that take it (`None`: 1, for reproducible timings).
    pub threads: Option<usize>,
}

/// Every backend name this tool knows, in report order.
pub const ALL: &[&str] = &[
    "reference",
    "reference-f64",
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

/// The default set for `run`, `conformance` and campaigns: every CPU backend compiled in.
pub fn default_set() -> Vec<&'static str> {
    ALL.iter()
        .copied()
        .filter(|n| {
            is_compiled(n)
                && !matches!(*n, "reference-f64" | "ort-cuda" | "burn-wgpu" | "burn-cuda")
        })
        .collect()
}

/// True when this build contains the backend.
pub fn is_compiled(name: &str) -> bool {
    match name {
        "reference" | "reference-f64" | "fault" => true,
        n if PLANTED.contains(&n) => true,
        "ort" | "ort-noopt" => cfg!(feature = "ort"),
        "ort-cuda" => cfg!(feature = "ort-cuda"),
        "tract" | "tract-opt" => cfg!(feature = "tract"),
        "burn-ndarray" => cfg!(feature = "burn"),
        "burn-wgpu" => cfg!(feature = "wgpu"),
        "burn-cuda" => cfg!(feature = "cuda"),
        _ => false,
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
    let _ = config;
    match name {
        "reference" => Ok(Box::new(crate::reference::Reference::new())),
        "reference-f64" => Ok(Box::new(crate::reference::Reference::new_f64())),
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
