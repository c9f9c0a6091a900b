//! Input values given to `run --inputs`: an `.npz` archive (the format bug bundles ship and
//! `numpy.savez` writes), one `.pb` TensorProto file, a directory of `input_<i>.pb` files (the
//! ONNX test suite's layout), or a bug bundle directory (its `inputs.npz`, or
//! `minimized_inputs.npz` when the model run is the bundle's minimized one).

use anyhow::{Result, bail};
use mutagraph_backends::inputs as mg_inputs;
use mutagraph_backends::value::{NamedValues, Value};
use mutagraph_ir::Model;
use std::path::{Path, PathBuf};

/// A bundle directory holds this file.
const BUNDLE_MARK: &str = "meta.json";

/// Whether `dir` is a bug bundle.
pub fn is_bundle(dir: &Path) -> bool {
    dir.is_dir() && dir.join(BUNDLE_MARK).is_file()
}

/// The model a bundle directory stands for: its minimized model when it has one, else the
/// original.
pub fn bundle_model(dir: &Path) -> PathBuf {
    let min = dir.join("minimized.onnx");
    if min.is_file() {
        min
    } else {
        dir.join("original.onnx")
    }
}

/// Reads the values at `path` for `model` (read from `model_path`); what does not read or
/// fit the model is a usage error ([`crate::cmd::Refused`]).
pub fn read(model: &Model, model_path: &Path, path: &Path) -> Result<NamedValues> {
    read_values(model, model_path, path).map_err(|e| crate::cmd::refused(format!("{e:#}")))
}

fn read_values(model: &Model, model_path: &Path, path: &Path) -> Result<NamedValues> {
    if is_bundle(path) {
        let minimized = model_path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("minimized"));
        let npz = if minimized {
            path.join("minimized_inputs.npz")
        } else {
            path.join("inputs.npz")
        };
        return read_npz(model, &npz);
    }
    if path.extension().is_some_and(|e| e == "npz") {
        return read_npz(model, path);
    }
    mg_inputs::read(model, path).map_err(anyhow::Error::from)
}

/// The arrays of an `.npz`, one per real input of `model`, matched by name.
fn read_npz(model: &Model, path: &Path) -> Result<NamedValues> {
    let arrays = mutagraph_oracles::bundle::read_npz(path)?;
    let mut out = Vec::new();
    for vi in model.graph.real_inputs() {
        let name = vi.name.clone().unwrap_or_default();
        let Some((_, t)) = arrays.iter().find(|(n, _)| *n == name) else {
            let have: Vec<&str> = arrays.iter().map(|(n, _)| n.as_str()).collect();
            bail!(
                "{}: no array for the model's input '{name}' (the archive has: {})",
                path.display(),
                have.join(", ")
            );
        };
        out.push((name, Value::Tensor(t.clone())));
    }
    if out.len() < arrays.len() {
        let extra: Vec<&str> = arrays
            .iter()
            .filter(|(n, _)| !out.iter().any(|(o, _)| o == n))
            .map(|(n, _)| n.as_str())
            .collect();
        tracing::warn!(
            "{}: arrays that are not inputs of the model are left out: {}",
            path.display(),
            extra.join(", ")
        );
    }
    Ok(out)
}
