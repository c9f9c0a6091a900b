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
    /// Set when minimization showed this signature to be another bundle's root cause: the
    /// signature of that bundle, which takes this one's hits from then on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias_of: Option<String>,
    /// The signatures merged into this bundle (one root cause seen under several).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Set when another instance of a shared campaign filed this signature first
    /// (`INSTANCE/BUNDLE_ID`): this instance counts its hits but writes no bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filed_by: Option<String>,
}

impl SigEntry {
    /// The entry of a signature first seen now, with `f` as its first hit.
    pub fn first(id: String, f: &Finding, seen: Seen) -> SigEntry {
        let mut e = SigEntry {
            id,
            kind: f.kind,
            hits: 1,
            first_seen: seen.clone(),
            last_seen: seen,
            variants: BTreeMap::new(),
            ops: BTreeMap::new(),
            alias_of: None,
            aliases: Vec::new(),
            filed_by: None,
        };
        e.note(f);
        e
    }

    /// Takes `other`'s hits, variant and op counts and first/last sightings (a signature
    /// merged into this one).
    pub fn absorb(&mut self, other: &SigEntry) {
        self.hits += other.hits;
        for (k, v) in &other.variants {
            *self.variants.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.ops {
            *self.ops.entry(k.clone()).or_default() += v;
        }
        if other.first_seen.elapsed_s < self.first_seen.elapsed_s {
            self.first_seen = other.first_seen.clone();
        }
        if other.last_seen.elapsed_s > self.last_seen.elapsed_s {
            self.last_seen = other.last_seen.clone();
        }
    }

    /// Counts one more hit's variant set and op.
    pub fn note(&mut self, f: &Finding) {
        *self.variants.entry(f.backends.join("+")).or_default() += 1;
        if let Some(op) = f.op_type() {
            *self.ops.entry(op.to_string()).or_default() += 1;
        }
    }
}

/// The kinds the minimizer works on (memory and flakiness depend on load; slowness is
/// confirmed by steady-state re-runs and minimized like the others; a hang is minimized with a
/// short time limit per run (a fifth of the campaign's, [`crate::minimizer::HANG_PROBE`] at
/// least), and placed on the minimized
/// model).
pub fn minimizable(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Crash | Kind::Nan | Kind::Inconsistency | Kind::Slow | Kind::Hang
    )
}
