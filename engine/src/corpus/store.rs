//! The corpus's files: where they are, what a trace holds, how an entry is written and read
//! back, and how a trace-only entry's model is rebuilt.
use super::CorpusError;
use mutagraph_ir::Model;
use mutagraph_mutators::mutation::{Record, replay_trace};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The format version of a trace file written now: 1 names its records by hash; a trace
/// without a version (0) holds its records inline and is read as well.
pub const TRACE_VERSION: u32 = 1;

/// The directory of the content-addressed records, inside `corpus/`.
pub const RECORDS_DIR: &str = "records";

/// The trace file of a corpus entry (`corpus/<id>.trace.json`): what rebuilds the mutant from
/// its seed, and what the disk budget needs to know about it without the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Format version ([`TRACE_VERSION`]; 0 when absent).
    #[serde(default)]
    pub version: u32,
    /// Seed name (zoo name or file path as given).
    pub seed: String,
    /// The seed as the campaign used it, relative to the campaign directory.
    pub seed_file: String,
    /// Iteration that made it.
    pub iteration: u64,
    /// Every record from the seed, in order, inline (version 0 traces only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<Record>,
    /// Every record from the seed, in order, as the hashes of `corpus/records/<hash>.json`
    /// (version 1): a mutant's trace is its parent's plus one record, so each record is on disk
    /// once however many descendants share it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<String>,
    /// The coverage items the mutant holds (op types, op pairs, parameter buckets), for culling
    /// entries whose items others hold.
    #[serde(default)]
    pub items: Vec<String>,
    /// SHA-256 of the model's bytes: a rebuilt model is checked against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_sha256: Option<String>,
    /// Size of the model's file in bytes.
    #[serde(default)]
    pub model_size: u64,
    /// Set on an entry imported from another instance of a shared campaign
    /// (`INSTANCE/ID`); instances import only each other's own entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_from: Option<String>,
}

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The name of a record's file: the first 128 bits of the SHA-256 of its JSON.
pub fn record_hash(json: &[u8]) -> String {
    sha256_hex(json)[..32].to_string()
}

/// Whether `h` has the form of a record hash: 32 lowercase hex digits (a trace is data; a
/// record's path is built from it).
pub fn valid_hash(h: &str) -> bool {
    h.len() == 32
        && h.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `corpus/<id>.trace.json`.
pub fn trace_path(corpus: &Path, id: &str) -> PathBuf {
    corpus.join(format!("{id}.trace.json"))
}

/// `corpus/<id>.onnx`.
pub fn model_path(corpus: &Path, id: &str) -> PathBuf {
    corpus.join(format!("{id}.onnx"))
}

/// `corpus/records/<hash>.json`.
pub fn record_path(corpus: &Path, hash: &str) -> PathBuf {
    corpus.join(RECORDS_DIR).join(format!("{hash}.json"))
}

/// The id of a trace file's entry (`m00000012` of `m00000012.trace.json`).
pub fn entry_id(file_name: &str) -> Option<&str> {
    file_name
        .strip_suffix(".trace.json")
        .filter(|s| !s.is_empty() && !s.starts_with('.'))
}

/// A new entry's files, in the order they must reach the disk: its records not yet on disk,
/// the trace, then the model (a kill between two writes leaves at worst records no trace
/// names, or a trace without its model; never a model without the trace that rebuilds it).
pub struct NewEntry {
    /// The trace.
    pub trace: Trace,
    /// Every record as (hash, JSON), in trace order.
    pub records: Vec<(String, Vec<u8>)>,
    /// The model's bytes.
    pub model: Vec<u8>,
}

impl NewEntry {
    /// The entry of a mutant: its seed, the iteration that made it, the records from the seed,
    /// its bytes and coverage items.
    pub fn new(
        seed: &str,
        seed_file: &str,
        iteration: u64,
        records: &[Record],
        model: Vec<u8>,
        items: Vec<String>,
    ) -> Result<NewEntry, CorpusError> {
        let records = records
            .iter()
            .map(|r| {
                let json = serde_json::to_vec(r).map_err(CorpusError::Encode)?;
                Ok((record_hash(&json), json))
            })
            .collect::<Result<Vec<_>, CorpusError>>()?;
        let trace = Trace {
            version: TRACE_VERSION,
            seed: seed.to_string(),
            seed_file: seed_file.to_string(),
            iteration,
            records: Vec::new(),
            refs: records.iter().map(|(h, _)| h.clone()).collect(),
            items,
            model_sha256: Some(sha256_hex(&model)),
            model_size: model.len() as u64,
            imported_from: None,
        };
        Ok(NewEntry {
            trace,
            records,
            model,
        })
    }

    /// The trace's bytes as written.
    pub fn trace_bytes(&self) -> Result<Vec<u8>, CorpusError> {
        serde_json::to_vec_pretty(&self.trace).map_err(CorpusError::Encode)
    }
}

/// Reads an entry's trace.
pub fn read_trace(corpus: &Path, id: &str) -> Result<Trace, CorpusError> {
    let p = trace_path(corpus, id);
    let bytes = std::fs::read(&p).map_err(|err| CorpusError::Io {
        path: p.clone(),
        err,
    })?;
    let t: Trace = serde_json::from_slice(&bytes).map_err(|err| CorpusError::Parse {
        path: p.clone(),
        err: err.to_string(),
    })?;
    if let Some(bad) = t.refs.iter().find(|h| !valid_hash(h)) {
        return Err(CorpusError::Parse {
            path: p,
            err: format!("'{bad}' is not a record hash (32 hex digits)"),
        });
    }
    if t.version > TRACE_VERSION {
        return Err(CorpusError::Parse {
            path: p,
            err: format!(
                "trace format version {} is newer than this mutagraph reads ({TRACE_VERSION})",
                t.version
            ),
        });
    }
    Ok(t)
}

/// A trace's records, in order (inline, or read from `corpus/records/`).
pub fn records(corpus: &Path, id: &str, t: &Trace) -> Result<Vec<Record>, CorpusError> {
    if t.refs.is_empty() {
        return Ok(t.records.clone());
    }
    t.refs
        .iter()
        .map(|h| {
            let p = record_path(corpus, h);
            let bytes = std::fs::read(&p).map_err(|_| CorpusError::MissingRecord {
                id: id.to_string(),
                hash: h.clone(),
            })?;
            serde_json::from_slice(&bytes).map_err(|err| CorpusError::Parse {
                path: p,
                err: err.to_string(),
            })
        })
        .collect()
}

/// An entry's model bytes: its file when the corpus keeps it, else rebuilt from the seed in
/// `campaign` by replaying its records, and checked against the trace's SHA-256.
pub fn model_bytes(campaign: &Path, id: &str) -> Result<Vec<u8>, CorpusError> {
    let corpus = campaign.join("corpus");
    let p = model_path(&corpus, id);
    match std::fs::read(&p) {
        Ok(b) => return Ok(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(CorpusError::Io { path: p, err }),
    }
    let t = read_trace(&corpus, id)?;
    rebuild(campaign, id, &t)
}

/// Rebuilds an entry's model from its seed and records; checks it against the trace's
/// SHA-256 when the trace has one.
pub fn rebuild(campaign: &Path, id: &str, t: &Trace) -> Result<Vec<u8>, CorpusError> {
    let corpus = campaign.join("corpus");
    let recs = records(&corpus, id, t)?;
    // The seed must lie inside the campaign directory (a trace is data, not a path to follow).
    let rel = Path::new(&t.seed_file);
    if rel.as_os_str().is_empty()
        || rel
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(CorpusError::Replay {
            id: id.to_string(),
            what: format!(
                "seed_file '{}' is not a path inside the campaign directory",
                t.seed_file
            ),
        });
    }
    let seed_path = campaign.join(rel);
    let seed = Model::load(&seed_path).map_err(|e| CorpusError::Seed {
        path: seed_path,
        err: e.to_string(),
    })?;
    let (m, skipped) = replay_trace(&seed, &recs, |_| true);
    if !skipped.is_empty() {
        return Err(CorpusError::Replay {
            id: id.to_string(),
            what: format!("records {skipped:?} do not apply"),
        });
    }
    let bytes = m.to_bytes();
    if let Some(want) = &t.model_sha256
        && sha256_hex(&bytes) != *want
    {
        return Err(CorpusError::Replay {
            id: id.to_string(),
            what: "the rebuilt model differs from the one the campaign made (SHA-256)".into(),
        });
    }
    Ok(bytes)
}

/// The entries of a corpus directory (ids of its trace files), in id order.
pub fn entry_ids(corpus: &Path) -> Result<Vec<String>, CorpusError> {
    let rd = match std::fs::read_dir(corpus) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => {
            return Err(CorpusError::Io {
                path: corpus.to_path_buf(),
                err,
            });
        }
    };
    let mut ids: Vec<String> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            entry_id(name.to_str()?).map(String::from)
        })
        .collect();
    ids.sort();
    Ok(ids)
}
