//! The files of a campaign output directory that are read back, as the types both their
//! writer and their readers use, and the format version they carry.
//!
//! | file | written from | read back by |
//! |---|---|---|
//! | `stats.json` | [`Stats`] (the campaign, about once a second) | the report, as [`Stats`] |
//! | `state.json` | [`crate::campaign::State`] (the resume point) | a resume, as [`crate::campaign::State`]; the report, as [`StateSessions`] (the same fields) |
//! | `findings/<id>/meta.json` | [`crate::bundle::Meta`] | the bundle's own updates and commands, and the report, as [`crate::bundle::Meta`] with its one reader, [`crate::bundle::read_meta`] |
//! | `timeseries.csv` | a row per interval, under [`timeseries::HEADER`] | the report, by the names of [`timeseries::COLUMNS`] |
//!
//! # Versions
//!
//! Each JSON file carries `version` ([`Versioned::VERSION`] of its type, written first). A
//! file without one was written before versions existed and reads as version 0. A reader
//! ([`from_json`]) takes any version up to the one it knows, the fields an older file lacks
//! taking their defaults (`#[serde(default)]`), and refuses a newer one before reading its
//! fields ([`FormatError::Newer`]), since a newer writer may have changed what they mean. A
//! change a reader of the previous version would misread (a field renamed, retyped or given
//! another meaning) raises the type's `VERSION`; adding a field that defaults does not.

pub mod state;
pub mod stats;
pub mod timeseries;

pub use state::{STATE_VERSION, StateSessions};
pub use stats::{BackendTime, Counters, OpCounters, SessionStart, Slot, Stats, Timings};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A persisted JSON document with a format version.
pub trait Versioned {
    /// The version this build writes, and the newest it reads.
    const VERSION: u32;
}

/// Why a persisted JSON document could not be read. The callers name the file.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Not JSON.
    #[error("invalid JSON: {0}")]
    Syntax(#[source] serde_json::Error),
    /// JSON, but not an object.
    #[error("expected a JSON object")]
    NotAnObject,
    /// Written by a newer mutagraph, in a format this one does not know.
    #[error(
        "format version {found} is newer than this mutagraph reads (up to {supported}); \
         read it with the mutagraph that wrote it"
    )]
    Newer {
        /// The file's `version`.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
    /// A field of the wrong type (`version` included).
    #[error("{0}")]
    Fields(#[source] serde_json::Error),
}

/// `version` alone (0 when absent).
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    version: u32,
}

/// Reads a versioned JSON document: an object whose `version` is at most `T::VERSION`, then
/// its fields as `T`.
pub fn from_json<T: Versioned + DeserializeOwned>(bytes: &[u8]) -> Result<T, FormatError> {
    let value: Value = serde_json::from_slice(bytes).map_err(FormatError::Syntax)?;
    if !value.is_object() {
        return Err(FormatError::NotAnObject);
    }
    let Probe { version } = Probe::deserialize(&value).map_err(FormatError::Fields)?;
    if version > T::VERSION {
        return Err(FormatError::Newer {
            found: version,
            supported: T::VERSION,
        });
    }
    serde_json::from_value(value).map_err(|e| {
        // Read again from the text for an error that says where.
        FormatError::Fields(serde_json::from_slice::<T>(bytes).err().unwrap_or(e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_up_to_the_known_one_read_newer_ones_are_refused() {
        let s: Stats = from_json(br#"{"iterations": 3, "elapsed_s": 1.5}"#).unwrap();
        assert_eq!((s.version, s.counters.iterations, s.elapsed_s), (0, 3, 1.5));
        assert!(s.coverage.is_none() && s.sessions.is_empty());
        let current = format!(r#"{{"version": {}, "iterations": 4}}"#, Stats::VERSION);
        let s: Stats = from_json(current.as_bytes()).unwrap();
        assert_eq!((s.version, s.counters.iterations), (Stats::VERSION, 4));
        let newer = format!(
            r#"{{"version": {}, "iterations": "x"}}"#,
            Stats::VERSION + 1
        );
        let e = from_json::<Stats>(newer.as_bytes()).unwrap_err();
        assert!(
            matches!(e, FormatError::Newer { found, supported }
                if found == Stats::VERSION + 1 && supported == Stats::VERSION),
            "{e:?}"
        );
        assert!(e.to_string().contains("newer"), "{e}");
        assert!(matches!(
            from_json::<Stats>(b"[1]"),
            Err(FormatError::NotAnObject)
        ));
        assert!(matches!(
            from_json::<Stats>(b"{\"version\": \"1\"}"),
            Err(FormatError::Fields(_))
        ));
        assert!(matches!(
            from_json::<Stats>(b"{"),
            Err(FormatError::Syntax(_))
        ));
    }

    #[test]
    fn what_the_writer_writes_reads_back_the_same() {
        let mut s = Stats {
            version: Stats::VERSION,
            elapsed_s: 12.5,
            execs_per_s: 2.0,
            sessions: vec![SessionStart {
                iteration: 7,
                elapsed_s: 3.25,
            }],
            ..Default::default()
        };
        s.counters.iterations = 30;
        s.counters.findings_by_kind.insert("crash".into(), 2);
        s.timings.per_backend.insert(
            "ort".into(),
            BackendTime {
                runs: 9,
                ..Default::default()
            },
        );
        let text = serde_json::to_vec_pretty(&s).unwrap();
        assert!(
            String::from_utf8_lossy(&text)
                .starts_with(&format!("{{\n  \"version\": {}", Stats::VERSION)),
            "version first"
        );
        let back: Stats = from_json(&text).unwrap();
        assert_eq!(serde_json::to_vec_pretty(&back).unwrap(), text);
    }
}
