//! The values of a bundle on disk: `.npz` archives, `.pb` tensors, JSON.
use super::*;

pub(super) fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(v)?;
    write_atomic(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))
}

pub(super) fn tensors(values: &NamedValues) -> Vec<(String, HostTensor)> {
    values
        .iter()
        .filter_map(|(n, v)| Some((n.clone(), v.tensor()?.clone())))
        .collect()
}

pub(super) fn write_npz(path: &Path, values: &NamedValues) -> Result<()> {
    mutagraph_oracles::bundle::write_npz(path, &tensors(values))?;
    Ok(())
}

pub(super) fn w(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// Writes inputs and every backend's outputs: `<prefix>inputs.npz`, `<prefix>inputs/`,
/// `<prefix>expected.npz`, `<prefix>expected_native.npz`, `<prefix>actual.npz`,
/// `<prefix>outputs/<backend>/`.
pub(super) fn write_values(
    dir: &Path,
    prefix: &str,
    inputs: &NamedValues,
    runs: &MutantRuns,
    native: Option<&NamedValues>,
    faulty: &str,
) -> Result<()> {
    write_npz(&dir.join(format!("{prefix}inputs.npz")), inputs)?;
    let idir = dir.join(format!("{prefix}inputs"));
    std::fs::create_dir_all(&idir).with_context(|| format!("creating {}", idir.display()))?;
    for (i, (name, v)) in inputs.iter().enumerate() {
        w(&idir.join(format!("input_{i}.pb")), &v.encode(name))?;
    }
    if let Some(o) = runs.reference_outputs() {
        write_npz(&dir.join(format!("{prefix}expected.npz")), o)?;
    }
    if let Some(n) = native {
        write_npz(&dir.join(format!("{prefix}expected_native.npz")), n)?;
    }
    for r in &runs.runs {
        if let Some(o) = r.outcome.outputs() {
            let d = dir.join(format!("{prefix}outputs")).join(&r.backend);
            std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
            for (i, (name, v)) in o.iter().enumerate() {
                w(&d.join(format!("output_{i}.pb")), &v.encode(name))?;
            }
            if r.backend == faulty {
                write_npz(&dir.join(format!("{prefix}actual.npz")), o)?;
            }
        }
    }
    Ok(())
}

/// Writes `<prefix>blamed_inputs.npz` (the library's own values of the blamed node's inputs,
/// on which the node alone showed the finding), or removes one an earlier writing left.
pub(super) fn write_blamed_inputs(
    dir: &Path,
    prefix: &str,
    values: Option<&NamedValues>,
) -> Result<()> {
    let path = dir.join(format!("{prefix}blamed_inputs.npz"));
    match values {
        Some(v) => write_npz(&path, v),
        None if path.exists() => {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))
        }
        None => Ok(()),
    }
}

/// Reads an `.npz` of the bundle as named values (missing file: `None`).
pub(super) fn npz_values(path: &Path) -> Option<NamedValues> {
    if !path.exists() {
        return None;
    }
    let arrays = mutagraph_oracles::bundle::read_npz(path).ok()?;
    Some(
        arrays
            .into_iter()
            .map(|(n, t)| (n, Value::Tensor(t)))
            .collect(),
    )
}
