//! The commands of the `mutagraph` binary, one module each: its arguments (`Args`, parsed by
//! clap in `main.rs`), what it does, and how it prints its result (text, or JSON with
//! `--json`). `main.rs` only parses the command line and dispatches here. What several
//! commands share lives in this module: the global flags, the input-shape and worker-pool
//! arguments, and the backend list.
pub mod campaign;
pub mod conformance;
pub mod consistency;
pub mod convert;
pub mod corpus;
pub mod coverage;
pub mod inspect;
pub mod minimize;
pub mod mutants;
pub mod ops;
pub mod recheck;
pub mod reduce;
pub mod report;
pub mod run;
pub mod zoo;

use anyhow::{Context, Result};
use mutagraph_backends::catalog;
use mutagraph_backends::worker::PoolOptions;
use mutagraph_backends::worker::protocol::WireConfig;
use mutagraph_ir::solve::{self, Fixed};
use std::path::PathBuf;
use std::time::Duration;

/// What a command refuses to start on: a command line it cannot take (an unknown name, a
/// value out of range, a required option missing). With an input that is not there or not a
/// valid model ([`mutagraph_ir::Error::is_input`]) it makes the command exit 2
/// ([`exit_code`]); 1 is for what a command reports (a finding, a failure).
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// A [`Refused`] error with this message.
pub fn refused(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Refused(message.into()))
}

/// Exit 2 for a usage or input error anywhere in `e`'s chain ([`Refused`], an input the IR
/// refused), else 1.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    let input = e.chain().any(|c| {
        c.is::<Refused>()
            || c.downcast_ref::<mutagraph_ir::Error>()
                .is_some_and(mutagraph_ir::Error::is_input)
    });
    if input { 2 } else { 1 }
}

/// The flags every command takes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Globals {
    /// `-q`: errors only, no status screen, no notes of what was written.
    pub quiet: bool,
    /// `-v` given this many times.
    pub verbose: u8,
}

/// A duration on the command line: `90s`, `10m`, `1h30m`, `250ms`, or plain seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    crate::campaign::parse_duration(s).map_err(|e| e.to_string())
}

/// A size on the command line: bytes, or with a `K`, `M`, `G` suffix.
pub fn parse_size(s: &str) -> Result<u64, String> {
    mutagraph_ir::limits::parse_size(s)
        .filter(|&v| v > 0)
        .ok_or_else(|| format!("bad size '{s}' (examples: 512M, 2G, 1000000)"))
}

/// Input shapes and values fixed by the user, shared by the commands that generate inputs.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct InputArgs {
    /// The shape of an input, `NAME:1x3x320x320` (`NAME:` for a scalar); repeatable. Its
    /// symbolic dims take these sizes wherever they appear.
    #[arg(long = "input-shape", value_name = "NAME:SHAPE")]
    pub input_shape: Vec<String>,
    /// Polygraphy's spelling: one or more `NAME:[D1,D2,...]` after one flag.
    #[arg(long = "input-shapes", value_name = "NAME:[SHAPE]", num_args = 1..)]
    pub input_shapes: Vec<String>,
    /// The value of every element of an input, `NAME=16000`; repeatable.
    #[arg(long = "input-value", value_name = "NAME=VALUE")]
    pub input_value: Vec<String>,
}

impl InputArgs {
    /// The shapes and values given.
    pub fn fixed(&self) -> Result<Fixed> {
        let mut f = Fixed::default();
        for s in self.input_shape.iter().chain(&self.input_shapes) {
            let (n, shape) =
                solve::parse_shape(s).map_err(|e| refused(format!("--input-shape {e}")))?;
            if f.shapes.insert(n.clone(), shape).is_some() {
                return Err(refused(format!("--input-shape: '{n}' is given twice")));
            }
        }
        for s in &self.input_value {
            let (n, v) =
                solve::parse_value(s).map_err(|e| refused(format!("--input-value {e}")))?;
            if f.values.insert(n.clone(), v).is_some() {
                return Err(refused(format!("--input-value: '{n}' is given twice")));
            }
        }
        Ok(f)
    }
}

/// The tolerance of "agrees", shared by the commands that compare outputs: a named one, or
/// Polygraphy's `--atol`/`--rtol` over it.
#[derive(clap::Args, Clone, Debug)]
pub struct ToleranceArgs {
    /// Tolerance of "agrees": exact, suite, close, approximate (the campaign's),
    /// very-approximate.
    #[arg(long, default_value = "approximate")]
    pub tolerance: String,
    /// Absolute tolerance (over the named one's).
    #[arg(long)]
    pub atol: Option<f64>,
    /// Relative tolerance (over the named one's).
    #[arg(long)]
    pub rtol: Option<f64>,
}

impl ToleranceArgs {
    /// The tolerance asked for.
    pub fn get(&self) -> Result<mutagraph_backends::compare::Tolerance> {
        use mutagraph_backends::compare::Tolerance;
        let named = Tolerance::by_name(&self.tolerance).ok_or_else(|| {
            refused(format!(
                "--tolerance '{}': not one of {} (or give --atol and --rtol)",
                self.tolerance,
                Tolerance::names()
            ))
        })?;
        for (flag, v) in [("--atol", self.atol), ("--rtol", self.rtol)] {
            if v.is_some_and(|v| !(v >= 0.0 && v.is_finite())) {
                return Err(refused(format!("{flag} must be a finite number >= 0")));
            }
        }
        Ok(named.with(self.atol, self.rtol))
    }
}

/// Worker pool settings shared by the commands that run backends.
#[derive(clap::Args, Clone, Debug)]
pub struct PoolArgs {
    /// Per-run time limit (`10s`, `2m`; a plain number is seconds) [default: 10s].
    #[arg(long, value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Resident memory cap per worker, MiB [default: 4096].
    #[arg(long)]
    pub mem_limit: Option<u64>,
    /// Path of libonnxruntime.so (else ORT_DYLIB_PATH, else the onnxruntime Python package).
    #[arg(long)]
    pub ort_dylib: Option<PathBuf>,
    /// Intra-op threads for backends that take it.
    #[arg(long)]
    pub threads: Option<usize>,
}

impl PoolArgs {
    /// The per-run time limit when none is given.
    const TIMEOUT: Duration = Duration::from_secs(10);
    /// The memory cap when none is given, MiB.
    const MEM_LIMIT_MIB: u64 = 4096;

    /// The pool's options (workers are this executable).
    pub fn options(&self) -> Result<PoolOptions> {
        let timeout = self.timeout.unwrap_or(Self::TIMEOUT);
        if timeout.is_zero() {
            return Err(refused("--timeout must be longer than 0s"));
        }
        let exe = std::env::current_exe().context("locating the mutagraph executable")?;
        let mut o = PoolOptions::new(exe);
        o.timeout = timeout;
        o.mem_limit = self
            .mem_limit
            .unwrap_or(Self::MEM_LIMIT_MIB)
            .saturating_mul(1 << 20);
        o.config = WireConfig {
            ort_dylib: self.ort_dylib.clone(),
            threads: self.threads,
            ..WireConfig::default()
        };
        // Resolve the ONNX Runtime library once here rather than in every worker; when it
        // cannot be found, the worker of an `ort` backend reports why.
        #[cfg(feature = "ort")]
        if o.config.ort_dylib.is_none() {
            let cfg = catalog::Config {
                threads: self.threads,
                ..catalog::Config::default()
            };
            o.config.ort_dylib = mutagraph_backends::ort::find_library(&cfg).ok();
        }
        Ok(o)
    }
}

/// The backends named on the command line (`cpu`: every CPU backend and variant), or the
/// default set when none are; each must be compiled in.
pub fn backend_list(given: Vec<String>) -> Result<Vec<String>> {
    let list: Vec<String> = if given.is_empty() {
        catalog::default_set()
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else if given.len() == 1 && given[0] == "cpu" {
        catalog::cpu_set().iter().map(|s| s.to_string()).collect()
    } else {
        given
    };
    for b in &list {
        if !catalog::is_compiled(b) {
            // Let the catalog say why (unknown, or which feature brings it).
            if let Err(e) = catalog::create(b, &Default::default()) {
                return Err(refused(format!("--backends: {e}")));
            }
        }
    }
    Ok(list)
}

/// Writes a model as protobuf, or as text when the path ends in `.onnxtxt`, atomically.
pub fn save_model(m: &mutagraph_ir::Model, path: &std::path::Path) -> Result<()> {
    let bytes = if mutagraph_ir::text::is_text_path(path) {
        mutagraph_ir::text::print_model(m).into_bytes()
    } else {
        m.to_bytes()
    };
    mutagraph_ir::model::write_atomic(path, &bytes)
        .with_context(|| format!("writing {}", path.display()))
}
