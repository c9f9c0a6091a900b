//! The findings store's records: when a signature was seen and how often. What happens to a
//! finding before it is filed is the triage stage's ([`mutagraph_oracles::triage`]).
use mutagraph_oracles::{Finding, Kind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// When a signature was seen.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Seen {
    /// Campaign iteration.
    pub iteration: u64,
    /// Campaign wall time, seconds.
    pub elapsed_s: f64,
}

/// One deduplicated bug: its bundle directory and how often it was hit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SigEntry {
    /// Bundle directory name under `findings/`.
    pub id: String,
    /// Kind.
    pub kind: Kind,
    /// Times the oracles reported it.
    pub hits: u64,
    /// First time.
    pub first_seen: Seen,
    /// Last time.
    pub last_seen: Seen,
    /// Hits per set of variants that showed it (`ort+ort-noopt`).
    #[serde(default)]
    pub variants: BTreeMap<String, u64>,
    /// Hits per op the finding was pinned on (a dtype gap lists every op that lacks the type).
    #[serde(default)]
    pub ops: BTreeMap<String, u64>,
}

impl SigEntry {
    /// Counts one more hit's variant set and op.
    pub fn note(&mut self, f: &Finding) {
        *self.variants.entry(f.backends.join("+")).or_default() += 1;
        if let Some(op) = f.op_type() {
            *self.ops.entry(op.to_string()).or_default() += 1;
        }
    }
}

/// The kinds the minimizer works on (hangs, memory and flakiness depend on load; slowness is
/// confirmed by steady-state re-runs and minimized like the others).
pub fn minimizable(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Crash | Kind::Nan | Kind::Inconsistency | Kind::Slow
    )
}
