//! Bug bundles: the files a maintainer who has never heard of mutagraph needs to reproduce one
//! finding.
//!
//! A bundle is a directory; the caller decides what goes in it and fills the data. This module
//! writes the files:
//!
//! - [`write_npz`] / [`read_npz`]: tensors as NumPy `.npz` archives (`inputs.npz`,
//!   `expected.npz`, `actual.npz`), readable with `numpy.load`;
//! - [`write_pb_inputs`]: the same values as ONNX `TensorProto` files (`input_0.pb`, ...), the
//!   layout of ONNX's backend test suite;
//! - [`render_repro_py`]: `repro.py`, a script that runs the faulty library itself (its own
//!   Python package, or the bundle's cargo project for burn) and says `REPRODUCED` /
//!   `NOT REPRODUCED` (exit status 0 / 1);
//! - [`snippet::python_snippet`]: a few lines of `onnx.helper` and the library's API;
//! - [`render_report_md`]: `REPORT.md`, the text of an upstream issue.
use std::path::PathBuf;

pub mod describe;
pub mod markdown;
pub mod npz;
pub mod repro;
pub mod snippet;

pub use markdown::{
    BackendStatus, Comparison, Minimization, ModelDescription, NodeLine, Provenance, ReportSpec,
    ShownValue, Upstream, ValueLine, render_report_md,
};
pub use npz::{NpzError, decode_key, encode_key, read_npz, write_npz, write_pb_inputs};
pub use repro::{ReproSpec, render_repro_py};

/// What can go wrong while writing or reading the files of a bundle. Each variant names the
/// file.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// Reading or writing the file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The data given cannot be written to this file (an element type the format cannot hold,
    /// a tensor whose element count does not match its shape, a bad or duplicate name).
    #[error("{}: cannot write '{name}': {problem}", path.display())]
    Unwritable {
        /// The file.
        path: PathBuf,
        /// The tensor (or value) concerned.
        name: String,
        /// What is wrong with it.
        problem: npz::NpzError,
    },
    /// The file is not one this module can read (not a zip, compressed, not an `.npy`, a dtype
    /// or layout it does not handle, truncated data, bad checksum).
    #[error("{}: {problem}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: npz::NpzError,
    },
}

impl BundleError {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            BundleError::Io { path, .. }
            | BundleError::Unwritable { path, .. }
            | BundleError::Malformed { path, .. } => path,
        }
    }
}

/// Writes `bytes` atomically with [`mutagraph_ir::model::write_atomic`], mapping its error.
pub(crate) fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), BundleError> {
    mutagraph_ir::model::write_atomic(path, bytes).map_err(|e| match e {
        mutagraph_ir::Error::Io { path, err } => BundleError::Io { path, source: err },
        other => BundleError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(other.to_string()),
        },
    })
}
