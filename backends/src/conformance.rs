//! Conformance: the ONNX backend test suite run on backends (each in its worker pool), judged
//! against the suite's expected outputs, summarized per backend and per op, and checked against
//! the allowlist of known failures checked in under `backends/conformance/<backend>.txt`.
use crate::compare::{CompareOptions, compare};
use crate::suite::Case;
use crate::worker::{Outcome, Pool, PoolError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The verdict of one test on one backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every output of every data set matched.
    Pass,
    /// Outputs differ from the expected ones.
    Mismatch,
    /// The backend reported an error (load, compile or run).
    Error,
    /// The worker crashed or the backend panicked.
    Crash,
    /// No answer within the time limit.
    Timeout,
    /// Over the memory cap.
    Oom,
    /// The backend does not implement something the test uses.
    Unsupported,
}

impl Verdict {
    /// True for the verdicts that count as failures.
    pub fn is_failure(self) -> bool {
        !matches!(self, Verdict::Pass | Verdict::Unsupported)
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Mismatch => "mismatch",
            Verdict::Error => "error",
            Verdict::Crash => "crash",
            Verdict::Timeout => "timeout",
            Verdict::Oom => "oom",
            Verdict::Unsupported => "unsupported",
        }
    }
}

/// One test on one backend.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseResult {
    /// `part/test_name`.
    pub id: String,
    /// Op types the test's model uses.
    pub ops: Vec<String>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, for anything but a pass.
    pub detail: String,
    /// Wall time of all its runs, milliseconds.
    pub ms: f64,
    /// The rewrites the library applied to its model, each once ([`crate::rewrites`]).
    #[serde(default)]
    pub rewrites: Vec<String>,
}

/// Counts of verdicts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Tests.
    pub total: usize,
    /// Passed.
    pub pass: usize,
    /// Failed (mismatch, error, crash, timeout, oom).
    pub fail: usize,
    /// Unsupported.
    pub unsupported: usize,
    /// Of the failures: crashes.
    pub crash: usize,
    /// Of the failures: timeouts and out-of-memory.
    pub timeout_oom: usize,
}

impl Totals {
    fn add(&mut self, v: Verdict) {
        self.total += 1;
        match v {
            Verdict::Pass => self.pass += 1,
            Verdict::Unsupported => self.unsupported += 1,
            Verdict::Crash => {
                self.fail += 1;
                self.crash += 1
            }
            Verdict::Timeout | Verdict::Oom => {
                self.fail += 1;
                self.timeout_oom += 1
            }
            _ => self.fail += 1,
        }
    }

    /// Passes over all tests, percent.
    pub fn pass_rate(&self) -> f64 {
        pct(self.pass, self.total)
    }

    /// Passes over the tests the backend supports, percent.
    pub fn supported_pass_rate(&self) -> f64 {
        pct(self.pass, self.pass + self.fail)
    }
}

fn pct(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

/// All results of one backend.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BackendReport {
    /// Backend name.
    pub backend: String,
    /// Its version.
    pub version: String,
    /// Results in case order.
    pub results: Vec<CaseResult>,
    /// Worker processes started (1 + respawns after crashes, timeouts, OOM).
    pub worker_spawns: u64,
}

impl BackendReport {
    /// Verdict counts.
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for r in &self.results {
            t.add(r.verdict);
        }
        t
    }

    /// The rewrites its runs applied over the suite, each once.
    pub fn rewrites(&self) -> BTreeSet<&str> {
        self.results
            .iter()
            .flat_map(|r| r.rewrites.iter().map(String::as_str))
            .collect()
    }

    /// The rewrites its runs applied against its checked-in list
    /// ([`crate::catalog::BackendInfo::suite_rewrites`]); `None` for a backend without one.
    pub fn rewrite_drift(&self) -> Option<Drift> {
        let listed = crate::catalog::info(&self.backend)?.suite_rewrites;
        if listed.is_empty() {
            return None;
        }
        let listed: BTreeSet<&str> = list_entries(listed).collect();
        let applied = self.rewrites();
        Some(Drift {
            new_failures: applied.difference(&listed).map(|s| s.to_string()).collect(),
            fixed: listed.difference(&applied).map(|s| s.to_string()).collect(),
        })
    }

    /// Its rewrites in the list format, with the count of tests that applied each.
    pub fn render_rewrites(&self) -> String {
        let mut s = format!(
            "# The rewrites {} {} applies over the ONNX backend test suite (libonnx-testdata),\n\
             # named as mutagraph_backends::rewrites::rule_name words them, with the number of \
             tests whose model each changed.\n\
             # The known rewrites of its campaign coverage; regenerate with \
             `mutagraph conformance --backends {} --write-rewrites backends/conformance/rewrites`.\n",
            self.backend, self.version, self.backend
        );
        for r in self.rewrites() {
            let n = self
                .results
                .iter()
                .filter(|c| c.rewrites.iter().any(|x| x == r))
                .count();
            s.push_str(&format!("{r}  # {n}\n"));
        }
        s
    }

    /// Failures compared with the allowlist of known failures.
    pub fn drift(&self, allow: &Allowlist) -> Drift {
        let failing: BTreeSet<&str> = self
            .results
            .iter()
            .filter(|r| r.verdict.is_failure())
            .map(|r| r.id.as_str())
            .collect();
        let ran: BTreeSet<&str> = self.results.iter().map(|r| r.id.as_str()).collect();
        Drift {
            new_failures: failing
                .iter()
                .filter(|id| !allow.ids.contains(**id))
                .map(|s| s.to_string())
                .collect(),
            fixed: allow
                .ids
                .iter()
                .filter(|id| ran.contains(id.as_str()) && !failing.contains(id.as_str()))
                .cloned()
                .collect(),
        }
    }
}

/// Differences between a run and a checked-in list: the allowlist (failures), or the list of
/// rewrites ([`BackendReport::rewrite_drift`]: a rewrite applied that the list lacks is new,
/// one listed that none applied is fixed).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Drift {
    /// Failing tests that the allowlist does not name (regressions).
    pub new_failures: Vec<String>,
    /// Tests the allowlist names that do not fail any more.
    pub fixed: Vec<String>,
}

/// The entries of a checked-in list: one per line, `#` starts a comment.
pub fn list_entries(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
}

/// Known failures of one backend: one `part/test_name` per line, `#` starts a comment.
#[derive(Clone, Debug, Default)]
pub struct Allowlist {
    /// The ids.
    pub ids: BTreeSet<String>,
}

impl Allowlist {
    /// Parses the file format.
    pub fn parse(text: &str) -> Allowlist {
        Allowlist {
            ids: list_entries(text).map(str::to_string).collect(),
        }
    }

    /// The checked-in allowlist of a backend on the device it runs on here (empty for
    /// backends without one; [`crate::catalog::allowlist_here`]).
    pub fn builtin(backend: &str) -> Allowlist {
        Allowlist::parse(crate::catalog::allowlist_here(backend))
    }

    /// Renders the failures of a report in the file format, with the verdict and detail of each
    /// as a comment.
    pub fn render(report: &BackendReport) -> String {
        let mut s = format!(
            "# Known conformance failures of {} {} (ONNX backend test suite, libonnx-testdata).\n\
             # One test id per line; regenerate with `mutagraph conformance --write-allowlist DIR`.\n",
            report.backend, report.version
        );
        for r in report.results.iter().filter(|r| r.verdict.is_failure()) {
            let detail: String = r.detail.replace('\n', " ").chars().take(160).collect();
            s.push_str(&format!("{}  # {}: {}\n", r.id, r.verdict.name(), detail));
        }
        s
    }
}

/// Runs every case on `backend` through `pool`. `progress` is called after each case.
pub fn run_backend(
    pool: &mut Pool,
    backend: &str,
    cases: &[Case],
    progress: &mut dyn FnMut(usize, &CaseResult),
) -> Result<BackendReport, PoolError> {
    let version = pool.version(backend)?;
    let spawns_before = pool.spawns(backend);
    let mut results = Vec::with_capacity(cases.len());
    for (i, case) in cases.iter().enumerate() {
        let r = run_case(pool, backend, case)?;
        progress(i, &r);
        results.push(r);
    }
    Ok(BackendReport {
        backend: backend.to_string(),
        version,
        results,
        worker_spawns: pool.spawns(backend) - spawns_before + 1,
    })
}

/// Runs one case (all its data sets) on `backend`.
pub fn run_case(pool: &mut Pool, backend: &str, case: &Case) -> Result<CaseResult, PoolError> {
    let mut ms = 0.0;
    let mut verdict = Verdict::Pass;
    let mut detail = String::new();
    let mut rewrites = BTreeSet::new();
    for (k, set) in case.sets.iter().enumerate() {
        let rep = pool.run(backend, &case.model_bytes, &set.inputs)?;
        ms += rep.wall_ms;
        rewrites.extend(rep.rewrites);
        let (v, d) = judge(&rep.outcome, &set.outputs);
        if v != Verdict::Pass {
            verdict = v;
            detail = if case.sets.len() > 1 {
                format!("data set {k}: {d}")
            } else {
                d
            };
            break;
        }
    }
    Ok(CaseResult {
        id: case.case.id(),
        ops: case.op_types(),
        verdict,
        detail,
        ms,
        rewrites: rewrites.into_iter().collect(),
    })
}

/// Judges one run against the expected outputs.
pub fn judge(outcome: &Outcome, expected: &crate::value::NamedValues) -> (Verdict, String) {
    let got = match outcome {
        Outcome::Ok(o) => o,
        Outcome::Unsupported { .. } => return (Verdict::Unsupported, outcome.detail()),
        Outcome::Error { .. } => return (Verdict::Error, outcome.detail()),
        Outcome::Crash { .. } => return (Verdict::Crash, outcome.detail()),
        Outcome::Timeout { .. } => return (Verdict::Timeout, outcome.detail()),
        Outcome::OutOfMemory { .. } => return (Verdict::Oom, outcome.detail()),
    };
    for (name, want) in expected {
        let Some((_, have)) = got.iter().find(|(n, _)| n == name) else {
            return (Verdict::Mismatch, format!("output '{name}' is missing"));
        };
        let c = compare(want, have, CompareOptions::default());
        if !c.ok {
            return (
                Verdict::Mismatch,
                format!("output '{name}': {}", c.reason.unwrap_or_default()),
            );
        }
    }
    (Verdict::Pass, String::new())
}

/// The whole report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// Suite root.
    pub suite: String,
    /// Parts run.
    pub parts: Vec<String>,
    /// Per backend.
    pub backends: Vec<BackendReport>,
}

impl Report {
    /// Per op (over tests of the `node` part, where each test exercises one op), verdict
    /// counts per backend.
    pub fn per_op(&self) -> BTreeMap<String, BTreeMap<String, Totals>> {
        let mut out: BTreeMap<String, BTreeMap<String, Totals>> = BTreeMap::new();
        for b in &self.backends {
            for r in b.results.iter().filter(|r| r.id.starts_with("node/")) {
                for op in &r.ops {
                    out.entry(op.clone())
                        .or_default()
                        .entry(b.backend.clone())
                        .or_default()
                        .add(r.verdict);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_are_checked_against_the_backends_list() {
        let listed: Vec<&str> =
            list_entries(crate::catalog::info("tract").unwrap().suite_rewrites).collect();
        assert!(listed.len() >= 30, "{listed:?}");
        let case = |rewrites: &[&str]| CaseResult {
            id: "node/t".into(),
            ops: vec![],
            verdict: Verdict::Pass,
            detail: String::new(),
            ms: 0.0,
            rewrites: rewrites.iter().map(|s| s.to_string()).collect(),
        };
        let mut results: Vec<CaseResult> = listed[1..].iter().map(|r| case(&[r])).collect();
        results.push(case(&["declutter Imaginary"]));
        let rep = BackendReport {
            backend: "tract".into(),
            version: "v".into(),
            results,
            worker_spawns: 1,
        };
        let d = rep.rewrite_drift().unwrap();
        assert_eq!(d.new_failures, vec!["declutter Imaginary".to_string()]);
        assert_eq!(d.fixed, vec![listed[0].to_string()]);
        let rendered = rep.render_rewrites();
        assert!(
            rendered.contains("declutter Imaginary  # 1\n"),
            "{rendered}"
        );
        let again: Vec<&str> = list_entries(&rendered).collect();
        assert_eq!(again.len(), listed.len());
        // A backend without a list has no drift.
        let ort = BackendReport {
            backend: "ort".into(),
            ..rep
        };
        assert!(ort.rewrite_drift().is_none());
    }

    #[test]
    fn allowlist_format_and_drift() {
        let a = Allowlist::parse("# header\nnode/test_a  # mismatch: x\n\nnode/test_b\n");
        assert_eq!(a.ids.len(), 2);
        let mk = |id: &str, v| CaseResult {
            id: id.into(),
            ops: vec![],
            verdict: v,
            detail: "d".into(),
            ms: 0.0,
            rewrites: vec![],
        };
        let rep = BackendReport {
            backend: "x".into(),
            version: "1".into(),
            results: vec![
                mk("node/test_a", Verdict::Mismatch),
                mk("node/test_b", Verdict::Pass),
                mk("node/test_c", Verdict::Crash),
                mk("node/test_d", Verdict::Unsupported),
            ],
            worker_spawns: 1,
        };
        let d = rep.drift(&a);
        assert_eq!(d.new_failures, vec!["node/test_c"]);
        assert_eq!(d.fixed, vec!["node/test_b"]);
        let t = rep.totals();
        assert_eq!((t.pass, t.fail, t.unsupported, t.crash), (1, 2, 1, 1));
        let text = Allowlist::render(&rep);
        let back = Allowlist::parse(&text);
        assert_eq!(
            back.ids.into_iter().collect::<Vec<_>>(),
            vec!["node/test_a", "node/test_c"]
        );
    }
}
