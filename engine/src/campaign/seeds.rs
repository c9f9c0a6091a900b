//! Seed models: the built-in zoo, a directory or files, each read, checked and typed as given;
//! what a file contains never stops the campaign. Seeds derived from them (reduced by MEMO
//! Alg. 1, windows of a heavy model) are made after admission ([`super::derive`]), recorded
//! and printed: a seed is never changed silently.
use super::*;

/// A seed of the campaign: a model the user gave (or a zoo model), or one derived from such a
/// seed after its admission.
pub struct Seed {
    /// Name (zoo name or path; a derived seed's is its origin's with `#reduced`, `#window-K`).
    pub name: String,
    /// File name under `seeds/`.
    pub file: String,
    /// The model, typed (once admitted: with the shapes it was admitted at declared).
    pub model: Model,
    /// What the user gave, byte for byte: the file's bytes when it is a self-contained
    /// protobuf model, else the model exported whole (text syntax, tensors in side files);
    /// `None` for a derived seed. Seed findings are filed with these bytes.
    pub given: Option<Vec<u8>>,
    /// Where a derived seed came from (its findings name it).
    pub origin: Option<crate::bundle::DerivedFrom>,
}

/// Reads, checks and types one seed file. A panic of ours on a strange seed is an error of
/// that seed, never the end of the campaign.
fn load_one(path: &Path) -> Result<(Model, Vec<u8>)> {
    let m = Model::load(path).map_err(|e| anyhow!("seed {e}"))?;
    let checked = validate::validate(&m).map_err(|e| anyhow!("seed {}: {e}", path.display()))?;
    // Admitted with what validation could not hold against it (ONNX Runtime's own schemas in
    // the default domain, ops without a spec) said.
    for w in checked.warnings {
        tracing::warn!("seed {}: {w}", path.display());
    }
    let given = std::fs::read(path)
        .ok()
        .filter(|raw| Model::from_bytes(raw).is_ok())
        .unwrap_or_else(|| m.to_bytes());
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut m = m;
        typed(&mut m);
        m
    }))
    .map(|m| (m, given))
    .map_err(|p| {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        anyhow!(
            "seed {}: mutagraph failed on it (a bug of ours, please report it): {msg}",
            path.display()
        )
    })
}

/// Whether a file in a seed directory is a model (`.onnx`, or `.onnxtxt` text).
fn is_model_file(f: &Path) -> bool {
    f.extension().is_some_and(|x| x == "onnx") || mutagraph_ir::text::is_text_path(f)
}

/// Runs shape inference on a model read from bytes: the operators choose their sites by the
/// inferred types of values.
pub(super) fn typed(m: &mut Model) {
    mutagraph_ir::infer::infer_model(m, Default::default());
}

/// Loads the seeds: `zoo`, a directory (its `*.onnx`, sorted), or a file.
pub fn load_seeds(specs: &[String]) -> Result<Vec<Seed>> {
    let mut out: Vec<(String, (Model, Vec<u8>))> = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    for s in specs {
        if s == "zoo" {
            out.extend(zoo::all().into_iter().map(|(n, mut m)| {
                typed(&mut m);
                let bytes = m.to_bytes();
                (n.to_string(), (m, bytes))
            }));
            continue;
        }
        let p = Path::new(s);
        if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("reading seed directory {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| is_model_file(f))
                .collect();
            files.sort();
            if files.is_empty() {
                bail!(
                    "seed directory {} has no .onnx or .onnxtxt file",
                    p.display()
                );
            }
            // One broken file of a directory does not stop the campaign: it is named and left
            // out (a file named on its own is an error).
            for f in files {
                match load_one(&f) {
                    Ok(m) => out.push((f.display().to_string(), m)),
                    Err(e) => {
                        tracing::warn!("{e:#}; not used");
                        refused.push(format!("{e:#}"));
                    }
                }
            }
        } else if !p.exists() {
            bail!("seed {}: no such file or directory", p.display());
        } else {
            // What a seed file contains never stops the campaign: the seed is named and left
            // out, and the campaign goes on with the others.
            match load_one(p) {
                Ok(m) => out.push((s.clone(), m)),
                Err(e) => {
                    tracing::warn!("{e:#}; not used");
                    refused.push(format!("{e:#}"));
                }
            }
        }
    }
    if out.is_empty() {
        bail!(
            "no usable seed model; refused: {}",
            refused
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    Ok(out
        .into_iter()
        .map(|(name, (m, given))| {
            let stem = Path::new(&name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "seed".into());
            let stem: String = stem
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let n = used.entry(stem.clone()).or_default();
            let file = if *n == 0 {
                format!("{stem}.onnx")
            } else {
                format!("{stem}-{n}.onnx")
            };
            *n += 1;
            Seed {
                name,
                file,
                model: m,
                given: Some(given),
                origin: None,
            }
        })
        .collect())
}
