//! `mutagraph corpus export`: every entry's model written out, rebuilt from its trace where the
//! corpus keeps only the trace.
use super::{CorpusError, store};
use serde::Serialize;
use std::path::Path;

/// What an export did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Exported {
    /// Entries in the corpus.
    pub entries: usize,
    /// Models copied from the corpus.
    pub copied: usize,
    /// Models rebuilt from their traces (each checked against its SHA-256).
    pub rebuilt: usize,
    /// Entries that could not be written, with the reason.
    pub failed: Vec<(String, String)>,
}

/// Writes `<id>.onnx` for every entry of the campaign directory `campaign` into `to`
/// (atomically, file by file); an entry that does not rebuild is listed, not fatal.
pub fn export(campaign: &Path, to: &Path) -> Result<Exported, CorpusError> {
    let corpus = campaign.join("corpus");
    if !corpus.is_dir() {
        return Err(CorpusError::Io {
            path: corpus,
            err: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no corpus here: not a campaign directory",
            ),
        });
    }
    std::fs::create_dir_all(to).map_err(|err| CorpusError::Io {
        path: to.to_path_buf(),
        err,
    })?;
    let mut out = Exported::default();
    for id in store::entry_ids(&corpus)? {
        out.entries += 1;
        let kept = store::model_path(&corpus, &id).exists();
        let bytes = match store::model_bytes(campaign, &id) {
            Ok(b) => b,
            Err(e) => {
                out.failed.push((id, e.to_string()));
                continue;
            }
        };
        let dst = to.join(format!("{id}.onnx"));
        mutagraph_ir::model::write_atomic(&dst, &bytes).map_err(|e| CorpusError::Io {
            path: dst.clone(),
            err: std::io::Error::other(e.to_string()),
        })?;
        if kept {
            out.copied += 1;
        } else {
            out.rebuilt += 1;
        }
    }
    Ok(out)
}
