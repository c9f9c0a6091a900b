//! Test oracles over the runs of one mutant.
//!
//! An [`Oracle`] looks at the runs of one model on every backend of a campaign
//! ([`MutantRuns`]) and returns [`Finding`]s: plain data, never errors. This crate has the
//! first three oracles of the campaign loop: [`CrashOracle`] (crash, timeout, out of memory),
//! [`NanOracle`] (NaN / Inf where the reference is finite) and [`InconsistencyOracle`]
//! (outputs that differ from the reference beyond a named tolerance).
use mutagraph_backends::compare::{CompareOptions, Tolerance, compare};
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Outcome, RunReport};
use serde::{Deserialize, Serialize};
use std::fmt;

pub use mutagraph_ir as ir;

/// What kind of bug a finding suggests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The backend's worker died or the backend panicked.
    Crash,
    /// The backend did not answer within the time limit.
    Timeout,
    /// The backend exceeded the memory cap.
    Oom,
    /// NaN or Inf in an output where the reference output is finite.
    Nan,
    /// Outputs differ from the reference beyond the tolerance.
    Inconsistency,
}

impl Kind {
    /// Lower-case name (`crash`, `nan`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Crash => "crash",
            Kind::Timeout => "timeout",
            Kind::Oom => "oom",
            Kind::Nan => "nan",
            Kind::Inconsistency => "inconsistency",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One suspected bug: which backend, what kind, in words, with numbers where they apply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Kind.
    pub kind: Kind,
    /// The backend that misbehaved.
    pub backend: String,
    /// Its version.
    pub version: String,
    /// What happened, one line.
    pub message: String,
    /// Largest absolute difference to the reference (inconsistency), if measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_abs: Option<f64>,
    /// Largest relative difference to the reference (inconsistency), if measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rel: Option<f64>,
}

/// The runs of one mutant.
pub struct MutantRuns<'a> {
    /// Every backend's report, in the campaign's backend order.
    pub runs: &'a [RunReport],
    /// The name of the reference backend among them, if any.
    pub reference: Option<&'a str>,
}

impl MutantRuns<'_> {
    /// The reference's outputs, when it ran successfully.
    pub fn reference_outputs(&self) -> Option<&NamedValues> {
        let r = self.reference?;
        self.runs.iter().find(|x| x.backend == r)?.outcome.outputs()
    }

    /// The runs of the backends under test (all but the reference).
    pub fn under_test(&self) -> impl Iterator<Item = &RunReport> {
        self.runs
            .iter()
            .filter(move |r| Some(r.backend.as_str()) != self.reference)
    }
}

/// Judges the runs of one mutant.
pub trait Oracle: Send + Sync {
    /// Short name.
    fn name(&self) -> &'static str;
    /// The findings (empty when nothing is suspicious).
    fn judge(&self, runs: &MutantRuns<'_>) -> Vec<Finding>;
}

fn finding(kind: Kind, r: &RunReport, message: String) -> Finding {
    Finding {
        kind,
        backend: r.backend.clone(),
        version: r.version.clone(),
        message,
        max_abs: None,
        max_rel: None,
    }
}

/// Crashes, timeouts and out-of-memory kills, on any backend (the reference included: a crash
/// of ours is a bug too).
pub struct CrashOracle;

impl Oracle for CrashOracle {
    fn name(&self) -> &'static str {
        "crash"
    }
    fn judge(&self, runs: &MutantRuns<'_>) -> Vec<Finding> {
        runs.runs
            .iter()
            .filter_map(|r| {
                let kind = match r.outcome {
                    Outcome::Crash { .. } => Kind::Crash,
                    Outcome::Timeout { .. } => Kind::Timeout,
                    Outcome::OutOfMemory { .. } => Kind::Oom,
                    _ => return None,
                };
                Some(finding(kind, r, r.outcome.detail()))
            })
            .collect()
    }
}

fn nonfinite(v: &NamedValues) -> Vec<(String, usize)> {
    v.iter()
        .filter_map(|(n, val)| {
            let c: usize = val
                .tensors()
                .iter()
                .map(|t| {
                    let (a, b) = t.nan_inf_counts();
                    a + b
                })
                .sum();
            (c > 0).then(|| (n.clone(), c))
        })
        .collect()
}

/// NaN / Inf in an output of a backend under test where the reference's output is all finite
/// (MEMO's NaN bugs). Without a reference, NaN / Inf on some backends but not on others.
pub struct NanOracle;

impl Oracle for NanOracle {
    fn name(&self) -> &'static str {
        "nan"
    }
    fn judge(&self, runs: &MutantRuns<'_>) -> Vec<Finding> {
        let reference = runs.reference_outputs();
        let clean: Vec<String> = match reference {
            Some(r) => r
                .iter()
                .filter(|(n, _)| !nonfinite(r).iter().any(|(m, _)| m == n))
                .map(|(n, _)| n.clone())
                .collect(),
            None => {
                // Outputs that are finite on at least one backend.
                let mut v = Vec::new();
                for r in runs.runs {
                    if let Some(o) = r.outcome.outputs() {
                        let bad = nonfinite(o);
                        for (n, _) in o {
                            if !bad.iter().any(|(m, _)| m == n) && !v.contains(n) {
                                v.push(n.clone());
                            }
                        }
                    }
                }
                v
            }
        };
        let mut out = Vec::new();
        for r in runs.under_test() {
            let Some(o) = r.outcome.outputs() else {
                continue;
            };
            let bad: Vec<(String, usize)> = nonfinite(o)
                .into_iter()
                .filter(|(n, _)| clean.contains(n))
                .collect();
            if let Some((name, count)) = bad.first() {
                out.push(finding(
                    Kind::Nan,
                    r,
                    format!("output '{name}' has {count} NaN/Inf values where it should be finite"),
                ));
            }
        }
        out
    }
}

/// Outputs of a backend under test that differ from the reference's beyond a tolerance
/// (elements where both sides are NaN/Inf alike agree; a NaN on one side only is left to the
/// [`NanOracle`]).
pub struct InconsistencyOracle {
    /// The tolerance.
    pub tolerance: Tolerance,
}

impl Oracle for InconsistencyOracle {
    fn name(&self) -> &'static str {
        "inconsistency"
    }
    fn judge(&self, runs: &MutantRuns<'_>) -> Vec<Finding> {
        let Some(reference) = runs.reference_outputs() else {
            return Vec::new();
        };
        let ref_bad = nonfinite(reference);
        let mut out = Vec::new();
        for r in runs.under_test() {
            let Some(o) = r.outcome.outputs() else {
                continue;
            };
            let bad = nonfinite(o);
            let mut worst: Option<(String, String, f64, f64)> = None;
            for (name, want) in reference {
                // NaN/Inf on this side only is the NaN oracle's.
                if bad.iter().any(|(n, _)| n == name) != ref_bad.iter().any(|(n, _)| n == name) {
                    continue;
                }
                let Some((_, have)) = o.iter().find(|(n, _)| n == name) else {
                    worst.get_or_insert((name.clone(), "output is missing".into(), 0.0, 0.0));
                    continue;
                };
                let c = compare(
                    want,
                    have,
                    CompareOptions {
                        tolerance: self.tolerance,
                        check_dtype: false,
                    },
                );
                if !c.ok {
                    let m = c.metrics;
                    if worst.as_ref().is_none_or(|w| m.max_abs > w.2) {
                        worst = Some((
                            name.clone(),
                            c.reason.unwrap_or_default(),
                            m.max_abs,
                            m.max_rel,
                        ));
                    }
                }
            }
            if let Some((name, reason, abs, rel)) = worst {
                let mut f = finding(
                    Kind::Inconsistency,
                    r,
                    format!(
                        "output '{name}' differs from {} ({} tolerance): {reason}",
                        runs.reference.unwrap_or("the reference"),
                        self.tolerance.name
                    ),
                );
                f.max_abs = Some(abs);
                f.max_rel = Some(rel);
                out.push(f);
            }
        }
        out
    }
}

/// The campaign's default oracles.
pub fn defaults() -> Vec<Box<dyn Oracle>> {
    vec![
        Box::new(CrashOracle),
        Box::new(NanOracle),
        Box::new(InconsistencyOracle {
            tolerance: Tolerance::APPROXIMATE,
        }),
    ]
}
