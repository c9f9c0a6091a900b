//! A campaign's corpus (`corpus/` in its directory): the diverse mutants, each an entry that
//! rebuilds it from its seed.
//!
//! * `corpus/<id>.trace.json`: the entry ([`Trace`]): seed, iteration, the hashes of its
//!   mutation records in order, the coverage items the mutant holds, the model's size and
//!   SHA-256;
//! * `corpus/records/<hash>.json`: one mutation record, content-addressed: a mutant's trace is
//!   its parent's plus one record, so a record is stored once for all its descendants;
//! * `corpus/<id>.onnx`: the model itself, while the disk budget allows ([`budget`]); without
//!   it the entry is *trace-only* and [`model_bytes`] rebuilds the model (`mutagraph corpus
//!   export` writes them all).
//!
//! [`store`] holds the file formats and reading back; [`budget`] the index of what is on disk
//! and the `--max-disk` policy (demote, cull, evict); [`export`] the `corpus export` command's
//! work.
pub mod budget;
pub mod export;
pub mod store;

pub use budget::{CorpusStats, DEFAULT_MAX_DISK, Index, Pruned};
pub use store::{NewEntry, Trace, model_bytes, read_trace, records};

use std::path::PathBuf;

/// Why a corpus file could not be read, written or rebuilt.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    /// A file could not be read, written or deleted.
    #[error("{}: {err}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        err: std::io::Error,
    },
    /// A file does not parse.
    #[error("{}: {err}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        err: String,
    },
    /// A record could not be encoded.
    #[error("encoding a corpus file: {0}")]
    Encode(serde_json::Error),
    /// A trace names a record whose file is missing.
    #[error("entry {id}: record {hash} is missing from corpus/records/")]
    MissingRecord {
        /// The entry.
        id: String,
        /// The record's hash.
        hash: String,
    },
    /// The seed a trace names does not load.
    #[error("seed {}: {err}", path.display())]
    Seed {
        /// The seed's file.
        path: PathBuf,
        /// Why it does not load.
        err: String,
    },
    /// Replaying the records does not rebuild the model.
    #[error("entry {id} does not rebuild: {what}")]
    Replay {
        /// The entry.
        id: String,
        /// What went wrong.
        what: String,
    },
}
