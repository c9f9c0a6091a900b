//! What a campaign persists: `state.json` (the resume point: the pool, the scheduler, the
//! coverage and the counters) and the summary a session ends with (a corpus entry's trace is
//! in [`crate::corpus`]).
//! `stats.json` and the types it shares with `state.json` are in [`crate::persisted`], where
//! the report reads them too.
use super::*;
pub use crate::persisted::{
    BackendTime, Counters, OpCounters, STATE_VERSION, SessionStart, Slot, Stats, Timings,
};

/// Everything needed to continue a campaign exactly (`state.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Format version ([`STATE_VERSION`]; 0: written before versions). A resume reads older
    /// versions and writes the current one.
    #[serde(default)]
    pub version: u32,
    /// Iterations committed; also the RNG position (streams are derived from it).
    pub iteration: u64,
    /// The master seed the streams are derived from.
    pub rng_seed: u64,
    /// Pool slots.
    pub pool: Vec<Slot>,
    /// Scheduler statistics.
    pub seeds: SeedStats,
    /// Coverage over the campaign universe (seeds and every mutant generated).
    pub coverage: Coverage,
    /// Counters.
    pub counters: Counters,
    /// Phase times.
    pub timings: Timings,
    /// Wall time of the campaign over all sessions, seconds.
    pub elapsed_s: f64,
    /// Deduplicated findings by signature.
    #[serde(default)]
    pub signatures: BTreeMap<String, SigEntry>,
    /// Root causes found by minimization ([`Finding::root_signature`]) → the signature of
    /// the bundle filed for it.
    #[serde(default)]
    pub roots: BTreeMap<String, String>,
    /// The triage's counters.
    #[serde(default)]
    pub triage: TriageStats,
    /// The graph rewrites each backend applied to the mutants it prepared: backend → rewrite
    /// (as the library names it) → mutants it changed.
    #[serde(default)]
    pub rewrites: BTreeMap<String, BTreeMap<String, u64>>,
    /// The combinations of rewrites one backend applied to one mutant, as seen so far
    /// (`backend: A+B+C`): a mutant that shows a new one is credited to the seed that made it.
    #[serde(default)]
    pub rewrite_sets: BTreeSet<String>,
    /// Credits of the rewrite family waiting to reach the seed scores: judged case number →
    /// the MCMC seeds credited. A credit is applied once the search is `Flow::cap` cases past
    /// it, a point the search reaches at the same iteration whatever the timing, so a `-j 1`
    /// campaign stays one path for one seed ([`super::pipeline`]).
    #[serde(default)]
    pub rewrite_credits: BTreeMap<u64, Vec<usize>>,
    /// The crash messages the triage knows (its shortcuts: a resumed campaign takes the same
    /// ones as a campaign that never stopped).
    #[serde(default)]
    pub known_crashes: KnownCrashes,
    /// What the triage learned of numeric findings it does not report, by key.
    #[serde(default)]
    pub known_quiet: KnownQuiet,
    /// Examples of mutagraph's own failures kept under `ours/` (at most [`OURS_KEPT`]).
    #[serde(default)]
    pub ours_kept: BTreeSet<String>,
    /// Where each session started (the first at 0; a resume adds one).
    #[serde(default)]
    pub sessions: Vec<SessionStart>,
    /// What the disk budget deleted from the corpus so far.
    #[serde(default)]
    pub pruned: crate::corpus::Pruned,
    /// An instance of a shared campaign: what it looked at and imported ([`super::sync`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<super::sync::SyncState>,
}

impl Versioned for State {
    const VERSION: u32 = STATE_VERSION;
}

/// How many examples of mutagraph's own failures `ours/` keeps (one per reason and message).
pub const OURS_KEPT: usize = 200;

/// Corpus id of the mutant of an iteration.
pub fn corpus_id(iteration: u64) -> String {
    format!("m{iteration:08}")
}

/// What a finished session reports.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The output directory.
    pub out: PathBuf,
    /// Iterations committed in total.
    pub iterations: u64,
    /// Executions in total.
    pub executions: u64,
    /// Findings in total (every hit).
    pub findings: u64,
    /// Bug bundles under `findings/`.
    pub unique_findings: u64,
    /// Bundles minimized.
    pub minimized: u64,
    /// Minimizations still pending when the session ended (resumed next session).
    pub minimizations_pending: usize,
    /// Campaign wall time over all sessions, seconds.
    pub elapsed_s: f64,
    /// This session's wall time, seconds.
    pub session_s: f64,
    /// The signal that stopped the session early (`SIGINT`, `SIGTERM`), if one did.
    pub stopped_by: Option<String>,
    /// The bug bundles this directory holds, most hits first.
    pub bundles: Vec<BundleLine>,
}

/// One bug bundle, as the summary lists it.
#[derive(Clone, Debug, Serialize)]
pub struct BundleLine {
    /// Its directory.
    pub path: PathBuf,
    /// Its kind (`crash`, `inconsistency`, ...).
    pub kind: String,
    /// Mutants that showed it.
    pub hits: u64,
}

impl BundleLine {
    /// The bundles of `signatures` filed in `out` (not those merged into another, nor those
    /// another instance filed), most hits first.
    pub fn of(out: &std::path::Path, signatures: &BTreeMap<String, SigEntry>) -> Vec<BundleLine> {
        let mut v: Vec<BundleLine> = signatures
            .values()
            .filter(|e| e.alias_of.is_none() && e.filed_by.is_none())
            .map(|e| BundleLine {
                path: out.join("findings").join(&e.id),
                kind: e.kind.name().to_string(),
                hits: e.hits,
            })
            .collect();
        v.sort_by(|a, b| b.hits.cmp(&a.hits).then_with(|| a.path.cmp(&b.path)));
        v
    }
}

impl Summary {
    /// The summary as the command prints it.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "campaign {}: {} iterations, {} executions, {} unique findings (bundles; {} hits: \
             mutants that showed one), {} minimized, {} in total ({} this session)",
            self.out.display(),
            self.iterations,
            self.executions,
            self.unique_findings,
            self.findings,
            self.minimized,
            status::hms(self.elapsed_s),
            status::hms(self.session_s),
        );
        if self.minimizations_pending > 0 {
            s.push_str(&format!(
                "; {} minimizations left for the next session",
                self.minimizations_pending
            ));
        }
        const SHOWN: usize = 10;
        for b in self.bundles.iter().take(SHOWN) {
            s.push_str(&format!(
                "\n  {} ({}, {} hits)",
                b.path.display(),
                b.kind,
                b.hits
            ));
        }
        if self.bundles.len() > SHOWN {
            s.push_str(&format!(
                "\n  ... {} more (`mutagraph report {}` lists them all)",
                self.bundles.len() - SHOWN,
                self.out.display()
            ));
        }
        if let Some(sig) = &self.stopped_by {
            s.push_str(&format!(
                "\nstopped by {sig}: state saved; run the same command to resume"
            ));
        }
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persisted::{StateSessions, from_json};
    use mutagraph_mutators::coverage::Universe;

    #[test]
    fn a_state_reads_back_and_the_report_reads_its_sessions() {
        let universe = Arc::new(Universe::restricted(&["Relu"]).unwrap());
        let sessions = vec![
            SessionStart {
                iteration: 0,
                elapsed_s: 0.0,
            },
            SessionStart {
                iteration: 5,
                elapsed_s: 2.5,
            },
        ];
        let state = State {
            version: STATE_VERSION,
            iteration: 9,
            rng_seed: 1,
            pool: vec![Slot {
                seed: 0,
                corpus: None,
            }],
            seeds: SeedStats::new(1, 2),
            coverage: Coverage::new(universe),
            counters: Counters::default(),
            timings: Timings::default(),
            elapsed_s: 4.0,
            signatures: BTreeMap::new(),
            roots: BTreeMap::new(),
            triage: TriageStats::default(),
            rewrites: BTreeMap::new(),
            rewrite_sets: BTreeSet::new(),
            rewrite_credits: BTreeMap::new(),
            known_crashes: KnownCrashes::default(),
            known_quiet: KnownQuiet::default(),
            ours_kept: BTreeSet::new(),
            sessions: sessions.clone(),
            pruned: Default::default(),
            sync: None,
        };
        let text = serde_json::to_vec_pretty(&state).unwrap();
        assert!(String::from_utf8_lossy(&text).starts_with("{\n  \"version\": "));
        let back: State = from_json(&text).unwrap();
        assert_eq!((back.version, back.iteration), (STATE_VERSION, 9));
        let read: StateSessions = from_json(&text).unwrap();
        assert_eq!(read.version, STATE_VERSION);
        assert_eq!(read.sessions, sessions);
    }
}
