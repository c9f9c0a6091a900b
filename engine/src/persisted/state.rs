//! What of `state.json` is read outside a resume: its version and where each session started.
//! The file itself is [`crate::campaign::State`], which a resume reads whole.
use super::Versioned;
use super::stats::SessionStart;
use serde::Deserialize;

/// The format version of `state.json` ([`crate::campaign::State`]) this build writes and reads.
pub const STATE_VERSION: u32 = 1;

/// The fields of `state.json` ([`crate::campaign::State`]) the report reads, by the same names and
/// types: reading the whole state (the coverage, every signature) only for these would be
/// slow, and would fail on a state written before the other fields existed.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StateSessions {
    /// Format version (0: written before versions).
    pub version: u32,
    /// Where each session started ([`crate::campaign::State::sessions`]).
    pub sessions: Vec<SessionStart>,
}

impl Versioned for StateSessions {
    const VERSION: u32 = STATE_VERSION;
}
