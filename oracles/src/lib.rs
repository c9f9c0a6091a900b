//! Test oracles over the runs of one mutant: a backend crashed, hung or ran out of memory; it
//! output NaN/Inf where the reference is finite; its outputs differ from the reference beyond a
//! tolerance.
//!
//! An [`Oracle`] looks at the [`MutantRuns`] (every backend's [`RunReport`] on the same model
//! and inputs) and returns [`Finding`]s: plain data, serialized into the campaign's reports.
pub use mutagraph_ir as ir;

pub mod minimize;

use mutagraph_backends::compare::{CompareOptions, Metrics, Tolerance, compare};
use mutagraph_backends::value::{NamedValues, Value};
use mutagraph_backends::worker::{Outcome, RunReport};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What kind of bug a finding points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The worker died or the backend panicked.
    Crash,
    /// The run did not finish within the time limit.
    Timeout,
    /// The worker went over the memory cap.
    Oom,
    /// NaN / Inf outputs where the reference is finite.
    Nan,
    /// Outputs differ from the reference beyond the tolerance.
    Inconsistency,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 5] = [
        Kind::Crash,
        Kind::Timeout,
        Kind::Oom,
        Kind::Nan,
        Kind::Inconsistency,
    ];

    /// The lowercase name (`crash`, `timeout`, `oom`, `nan`, `inconsistency`).
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

/// One suspected bug.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What kind.
    pub kind: Kind,
    /// The backends it concerns (the one that misbehaved; the reference is implied).
    pub backends: Vec<String>,
    /// What happened, in words.
    pub message: String,
    /// Error metrics against the reference, when outputs were compared.
    pub metrics: Option<Metrics>,
    /// The op type the finding can be pinned on, when the oracle can tell.
    pub op_type: Option<String>,
}

/// The runs of one mutant on every backend of a campaign, on the same model and inputs.
#[derive(Clone, Debug)]
pub struct MutantRuns {
    /// One report per backend, in the campaign's backend order.
    pub runs: Vec<RunReport>,
    /// Index in `runs` of the ground truth (the reference interpreter), if it is in the set.
    pub reference: Option<usize>,
}

impl MutantRuns {
    /// The reference outputs, when the reference ran fine.
    pub fn reference_outputs(&self) -> Option<&NamedValues> {
        self.runs.get(self.reference?)?.outcome.outputs()
    }

    /// The runs other than the reference.
    pub fn others(&self) -> impl Iterator<Item = &RunReport> {
        self.runs
            .iter()
            .enumerate()
            .filter(move |(i, _)| Some(*i) != self.reference)
            .map(|(_, r)| r)
    }
}

/// A test oracle.
pub trait Oracle: Send + Sync {
    /// Its name.
    fn name(&self) -> &'static str;
    /// The findings on one mutant's runs (empty when all is well).
    fn judge(&self, runs: &MutantRuns) -> Vec<Finding>;
}

/// Crash, timeout and out-of-memory outcomes of any backend (the reference included).
pub struct Failures;

impl Oracle for Failures {
    fn name(&self) -> &'static str {
        "failures"
    }

    fn judge(&self, runs: &MutantRuns) -> Vec<Finding> {
        runs.runs
            .iter()
            .filter_map(|r| {
                let kind = match &r.outcome {
                    Outcome::Crash { .. } => Kind::Crash,
                    Outcome::Timeout { .. } => Kind::Timeout,
                    Outcome::OutOfMemory { .. } => Kind::Oom,
                    _ => return None,
                };
                Some(Finding {
                    kind,
                    backends: vec![r.backend.clone()],
                    message: r.outcome.detail(),
                    metrics: None,
                    op_type: None,
                })
            })
            .collect()
    }
}

/// Counts, over all outputs, the elements a backend made NaN / Inf where the reference is finite.
/// Outputs whose shapes differ are left to [`Inconsistency`].
pub fn new_nonfinite(reference: &NamedValues, got: &NamedValues) -> (usize, Option<String>) {
    let mut n = 0;
    let mut first = None;
    for (name, want) in reference {
        let Some((_, have)) = got.iter().find(|(g, _)| g == name) else {
            continue;
        };
        let c = count_new_nonfinite(want, have);
        if c > 0 && first.is_none() {
            first = Some(name.clone());
        }
        n += c;
    }
    (n, first)
}

fn count_new_nonfinite(want: &Value, have: &Value) -> usize {
    let (w, h) = (want.tensors(), have.tensors());
    if w.len() != h.len() {
        return 0;
    }
    w.iter()
        .zip(h)
        .map(|(a, b)| {
            if a.shape != b.shape {
                return 0;
            }
            match (a.to_f64s(), b.to_f64s()) {
                (Some(x), Some(y)) => x
                    .iter()
                    .zip(&y)
                    .filter(|(p, q)| p.is_finite() && !q.is_finite())
                    .count(),
                _ => 0,
            }
        })
        .sum()
}

/// NaN / Inf in a backend's outputs where the reference output is finite.
pub struct NanInf;

impl Oracle for NanInf {
    fn name(&self) -> &'static str {
        "nan-inf"
    }

    fn judge(&self, runs: &MutantRuns) -> Vec<Finding> {
        let Some(want) = runs.reference_outputs() else {
            return Vec::new();
        };
        runs.others()
            .filter_map(|r| {
                let got = r.outcome.outputs()?;
                let (n, output) = new_nonfinite(want, got);
                (n > 0).then(|| Finding {
                    kind: Kind::Nan,
                    backends: vec![r.backend.clone()],
                    message: format!(
                        "{n} NaN/Inf elements where the reference is finite (first in output '{}')",
                        output.unwrap_or_default()
                    ),
                    metrics: None,
                    op_type: None,
                })
            })
            .collect()
    }
}

/// Outputs that differ from the reference beyond a tolerance (non-finite elements that
/// [`NanInf`] reports are not counted twice).
pub struct Inconsistency {
    /// The tolerance of "agrees".
    pub tolerance: Tolerance,
}

impl Default for Inconsistency {
    fn default() -> Self {
        Inconsistency {
            tolerance: Tolerance::APPROXIMATE,
        }
    }
}

impl Oracle for Inconsistency {
    fn name(&self) -> &'static str {
        "inconsistency"
    }

    fn judge(&self, runs: &MutantRuns) -> Vec<Finding> {
        let Some(want) = runs.reference_outputs() else {
            return Vec::new();
        };
        let opts = CompareOptions {
            tolerance: self.tolerance,
            check_dtype: false,
        };
        let mut out = Vec::new();
        for r in runs.others() {
            let Some(got) = r.outcome.outputs() else {
                continue;
            };
            let mut total = Metrics::default();
            let mut reason = None;
            for (name, w) in want {
                let Some((_, h)) = got.iter().find(|(g, _)| g == name) else {
                    reason.get_or_insert(format!("output '{name}' is missing"));
                    continue;
                };
                let c = compare(w, h, opts);
                let fresh = count_new_nonfinite(w, h);
                let m = &c.metrics;
                total.max_abs = total.max_abs.max(m.max_abs);
                total.max_rel = total.max_rel.max(m.max_rel);
                total.nan += m.nan;
                total.inf += m.inf;
                total.nonfinite_mismatch += m.nonfinite_mismatch;
                total.mismatched += m.mismatched;
                total.elements += m.elements;
                // Mismatches that are only the backend's own NaN/Inf belong to `NanInf`.
                let only_nonfinite =
                    m.mismatched == 0 && m.nonfinite_mismatch > 0 && m.nonfinite_mismatch <= fresh;
                if !c.ok && !only_nonfinite && reason.is_none() {
                    reason = Some(format!("output '{name}': {}", c.reason.unwrap_or_default()));
                }
            }
            if let Some(message) = reason {
                out.push(Finding {
                    kind: Kind::Inconsistency,
                    backends: vec![r.backend.clone()],
                    message,
                    metrics: Some(total),
                    op_type: None,
                });
            }
        }
        out
    }
}

/// The default oracles: failures, NaN/Inf, inconsistency at [`Tolerance::APPROXIMATE`].
pub fn default_oracles() -> Vec<Box<dyn Oracle>> {
    vec![
        Box::new(Failures),
        Box::new(NanInf),
        Box::new(Inconsistency::default()),
    ]
}

/// Every oracle's findings on one mutant.
pub fn judge_all(oracles: &[Box<dyn Oracle>], runs: &MutantRuns) -> Vec<Finding> {
    oracles.iter().flat_map(|o| o.judge(runs)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_backends::backend::Stage;
    use mutagraph_backends::value::{Data, HostTensor};

    fn out(v: &[f32]) -> Outcome {
        Outcome::Ok(vec![(
            "y".into(),
            Value::Tensor(HostTensor::new(vec![v.len()], Data::F32(v.to_vec()))),
        )])
    }

    fn report(backend: &str, outcome: Outcome) -> RunReport {
        RunReport {
            backend: backend.into(),
            version: "0".into(),
            outcome,
            wall_ms: 1.0,
            prepare_ms: 0.0,
            run_ms: 0.0,
            peak_rss: 0,
            cached: false,
        }
    }

    fn runs(list: Vec<RunReport>) -> MutantRuns {
        MutantRuns {
            runs: list,
            reference: Some(0),
        }
    }

    #[test]
    fn agreeing_runs_have_no_findings() {
        let r = runs(vec![
            report("reference", out(&[1.0, 2.0])),
            report("ort", out(&[1.0, 2.0000005])),
            report(
                "tract",
                Outcome::Unsupported {
                    stage: Stage::Load,
                    message: "no".into(),
                },
            ),
        ]);
        assert!(judge_all(&default_oracles(), &r).is_empty());
    }

    #[test]
    fn each_kind_is_found_on_its_backend() {
        let r = runs(vec![
            report("reference", out(&[1.0, 2.0])),
            report("ort", out(&[1.0, f32::NAN])),
            report("tract", out(&[1.0, 2.5])),
            report(
                "burn-ndarray",
                Outcome::Crash {
                    signal: Some(11),
                    exit_code: None,
                    message: "boom".into(),
                },
            ),
            report("ort-noopt", Outcome::Timeout { limit_ms: 10 }),
        ]);
        let f = judge_all(&default_oracles(), &r);
        let kinds: Vec<(Kind, &str)> = f.iter().map(|x| (x.kind, x.backends[0].as_str())).collect();
        assert_eq!(
            kinds,
            vec![
                (Kind::Crash, "burn-ndarray"),
                (Kind::Timeout, "ort-noopt"),
                (Kind::Nan, "ort"),
                (Kind::Inconsistency, "tract"),
            ]
        );
        let inc = &f[3];
        assert!((inc.metrics.as_ref().unwrap().max_abs - 0.5).abs() < 1e-9);
        let json = serde_json::to_string(&f).unwrap();
        let back: Vec<Finding> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, f);
        assert!(json.contains("\"inconsistency\""));
    }

    #[test]
    fn nan_where_the_reference_is_nan_is_fine() {
        let r = runs(vec![
            report("reference", out(&[f32::NAN, 2.0])),
            report("ort", out(&[f32::NAN, 2.0])),
        ]);
        assert!(judge_all(&default_oracles(), &r).is_empty());
    }

    #[test]
    fn shape_mismatch_is_an_inconsistency_and_no_reference_means_no_comparison() {
        let r = runs(vec![
            report("reference", out(&[1.0, 2.0])),
            report("ort", out(&[1.0])),
        ]);
        let f = judge_all(&default_oracles(), &r);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, Kind::Inconsistency);
        assert!(f[0].message.contains("shape"), "{}", f[0].message);
        let mut r = r;
        r.reference = None;
        assert!(judge_all(&default_oracles(), &r).is_empty());
    }
}
