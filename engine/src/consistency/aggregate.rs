//! From the per-model rows to the benchmark's tables: the backend × backend agreement matrix,
//! each backend's outcomes and latency, and disagreement per op type. Pure functions of the
//! rows, so the numbers follow from `consistency.json`'s own `models`.
use super::measure::ModelRow;
pub use super::stats::{median, percentile};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One cell of the agreement matrix. A model one of the two backends failed on (error,
/// unsupported, crash, timeout, oom) is a disagreement: the rate is 100 % only when both
/// ran every model and agreed on each.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Models both backends were given (on the diagonal: the models the backend was given).
    #[serde(default)]
    pub models: usize,
    /// Of those, the models both ran (on the diagonal: the backend ran).
    pub both_ran: usize,
    /// Of those, the models on which their outputs agree.
    pub agree: usize,
    /// Models one of the two (or both) failed on: `models - both_ran`.
    #[serde(default)]
    pub failed: usize,
    /// `agree / models`; `None` when they were given no model in common.
    pub rate: Option<f64>,
}

impl Cell {
    fn new(models: usize, both_ran: usize, agree: usize) -> Cell {
        Cell {
            models,
            both_ran,
            agree,
            failed: models - both_ran,
            rate: (models > 0).then(|| agree as f64 / models as f64),
        }
    }
}

/// The agreement of one unordered pair of backends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairStat {
    /// The backend earlier in the set.
    pub a: String,
    /// The other.
    pub b: String,
    /// The counts and the rate.
    #[serde(flatten)]
    pub cell: Cell,
}

/// How a backend's runs ended, over the models.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcomes {
    /// The backend.
    pub backend: String,
    /// Models per status (`ok`, `unsupported`, `error`, `crash`, `timeout`, `oom`).
    pub status: BTreeMap<String, usize>,
    /// Failures (error, unsupported) per stage: `error/compile`, `unsupported/load`, ...
    pub stages: BTreeMap<String, usize>,
}

/// A backend's latency over the models it ran: statistics of each model's median run time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// The backend.
    pub backend: String,
    /// Models it ran.
    pub models: usize,
    /// Median of the per-model median run times, ms.
    pub median_ms: Option<f64>,
    /// 90th percentile (nearest rank) of them, ms.
    pub p90_ms: Option<f64>,
    /// Their sum, ms.
    pub total_ms: f64,
    /// Median of the per-model prepare times (first run), ms.
    pub prepare_median_ms: Option<f64>,
}

/// Disagreement on the models that contain one op type.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpStat {
    /// The op type.
    pub op: String,
    /// Models (run, not refused) containing it.
    pub models: usize,
    /// Of those, models on which some pair of backends disagreed.
    pub disagree: usize,
    /// `disagree / models`.
    pub disagree_rate: f64,
    /// Models on which some library disagreed with the reference (by containment: the op is
    /// in the model); `None` without a reference.
    pub vs_reference: Option<usize>,
    /// `vs_reference / models`.
    pub vs_reference_rate: Option<f64>,
    /// Models on which localization named a node of this op type as where a library first
    /// diverges from the reference; `None` without localization.
    pub blamed: Option<usize>,
    /// `blamed / models`.
    pub blamed_rate: Option<f64>,
    /// Models blamed on this op type, per library.
    pub blamed_by: BTreeMap<String, usize>,
    /// Models on which some backend did not run (error, unsupported, crash, timeout, oom).
    pub failed: usize,
}

/// Everything aggregated from the rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tables {
    /// `matrix[i][j]`: backends `i` and `j` of the set (symmetric; the diagonal is 1).
    pub matrix: Vec<Vec<Cell>>,
    /// The unordered pairs, in set order.
    pub pairs: Vec<PairStat>,
    /// Per backend.
    pub outcomes: Vec<Outcomes>,
    /// Per backend.
    pub latency: Vec<Latency>,
    /// Per op type, the highest share of disagreement first.
    pub ops: Vec<OpStat>,
    /// Disagreements with the reference that localization did not pin on a node.
    pub unattributed: usize,
}

fn rate(n: usize, d: usize) -> f64 {
    if d == 0 { 0.0 } else { n as f64 / d as f64 }
}

/// The tables of `rows` over `backends` (`reference`: the ground truth's index in it;
/// `localized`: whether the rows carry localization).
pub fn tables(
    rows: &[ModelRow],
    backends: &[String],
    reference: Option<usize>,
    localized: bool,
) -> Tables {
    let n = backends.len();
    let idx = |b: &str| backends.iter().position(|x| x == b);
    let mut given = vec![vec![0usize; n]; n];
    let mut both = vec![vec![0usize; n]; n];
    let mut agree = vec![vec![0usize; n]; n];
    let mut outcomes: Vec<Outcomes> = backends
        .iter()
        .map(|b| Outcomes {
            backend: b.clone(),
            ..Outcomes::default()
        })
        .collect();
    let mut times: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); n];
    for row in rows {
        let present: Vec<usize> = row.runs.iter().filter_map(|r| idx(&r.backend)).collect();
        for &i in &present {
            for &j in &present {
                given[i][j] += 1;
            }
        }
        for r in &row.runs {
            let Some(i) = idx(&r.backend) else { continue };
            *outcomes[i].status.entry(r.status.clone()).or_default() += 1;
            if let Some(s) = &r.stage {
                *outcomes[i]
                    .stages
                    .entry(format!("{}/{s}", r.status))
                    .or_default() += 1;
            }
            if r.ran() {
                both[i][i] += 1;
                agree[i][i] += 1;
                if let Some(t) = r.run_ms {
                    times[i].0.push(t);
                    times[i].1.push(r.prepare_ms);
                }
            }
        }
        for p in &row.pairs {
            let (Some(i), Some(j)) = (idx(&p.a), idx(&p.b)) else {
                continue;
            };
            for (x, y) in [(i, j), (j, i)] {
                both[x][y] += 1;
                agree[x][y] += usize::from(p.agree);
            }
        }
    }
    let matrix: Vec<Vec<Cell>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| Cell::new(given[i][j], both[i][j], agree[i][j]))
                .collect()
        })
        .collect();
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            pairs.push(PairStat {
                a: backends[i].clone(),
                b: backends[j].clone(),
                cell: matrix[i][j].clone(),
            });
        }
    }
    let latency = backends
        .iter()
        .zip(&times)
        .map(|(b, (run, prep))| Latency {
            backend: b.clone(),
            models: run.len(),
            median_ms: median(run),
            p90_ms: percentile(run, 90.0),
            total_ms: run.iter().sum(),
            prepare_median_ms: median(prep),
        })
        .collect();
    let (ops, unattributed) = op_stats(rows, reference.map(|r| backends[r].as_str()), localized);
    Tables {
        matrix,
        pairs,
        outcomes,
        latency,
        ops,
        unattributed,
    }
}

/// Per op type: the models containing it and how many of those disagreed; sorted by the
/// share of disagreement attributed to the op (localization when there is one, else the
/// share against the reference, else between any pair), then by name.
fn op_stats(rows: &[ModelRow], reference: Option<&str>, localized: bool) -> (Vec<OpStat>, usize) {
    let mut ops: BTreeMap<String, OpStat> = BTreeMap::new();
    let mut unattributed = 0;
    for row in rows {
        let any = row.pairs.iter().any(|p| !p.agree);
        let vs_ref =
            reference.map(|r| row.pairs.iter().any(|p| !p.agree && (p.a == r || p.b == r)));
        let failed = row.runs.iter().any(|r| !r.ran());
        let mut blamed: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for b in &row.blame {
            match b.attributed() {
                Some(op) => blamed.entry(op).or_default().push(&b.backend),
                None => unattributed += 1,
            }
        }
        for op in &row.ops {
            let s = ops.entry(op.clone()).or_insert_with(|| OpStat {
                op: op.clone(),
                vs_reference: reference.map(|_| 0),
                blamed: localized.then_some(0),
                ..OpStat::default()
            });
            s.models += 1;
            s.disagree += usize::from(any);
            s.failed += usize::from(failed);
            if let (Some(n), Some(v)) = (s.vs_reference.as_mut(), vs_ref) {
                *n += usize::from(v);
            }
            if let Some(libs) = blamed.get(op.as_str()) {
                if let Some(n) = s.blamed.as_mut() {
                    *n += 1;
                }
                for l in libs {
                    *s.blamed_by.entry(l.to_string()).or_default() += 1;
                }
            }
        }
    }
    let mut v: Vec<OpStat> = ops
        .into_values()
        .map(|mut s| {
            s.disagree_rate = rate(s.disagree, s.models);
            s.vs_reference_rate = s.vs_reference.map(|n| rate(n, s.models));
            s.blamed_rate = s.blamed.map(|n| rate(n, s.models));
            s
        })
        .collect();
    let key = |s: &OpStat| {
        s.blamed_rate
            .or(s.vs_reference_rate)
            .unwrap_or(s.disagree_rate)
    };
    v.sort_by(|x, y| {
        key(y)
            .total_cmp(&key(x))
            .then(y.disagree_rate.total_cmp(&x.disagree_rate))
            .then(x.op.cmp(&y.op))
    });
    (v, unattributed)
}

#[cfg(test)]
mod tests {
    use super::super::measure::{BackendRun, Blame, PairResult};
    use super::*;

    fn run(backend: &str, ok: bool, ms: f64) -> BackendRun {
        BackendRun {
            backend: backend.into(),
            status: if ok { "ok" } else { "error" }.into(),
            stage: (!ok).then(|| "compile".to_string()),
            detail: String::new(),
            outputs: Vec::new(),
            nonfinite: 0,
            prepare_ms: 1.0,
            run_ms: ok.then_some(ms),
            runs_ms: vec![ms],
            peak_rss: 0,
        }
    }

    fn pair(a: &str, b: &str, agree: bool) -> PairResult {
        PairResult {
            a: a.into(),
            b: b.into(),
            agree,
            reason: None,
            max_abs: 0.0,
            max_rel: 0.0,
        }
    }

    fn row(name: &str, ops: &[&str], runs: Vec<BackendRun>, pairs: Vec<PairResult>) -> ModelRow {
        ModelRow {
            model: name.into(),
            nodes: ops.len(),
            ops: ops.iter().map(|s| s.to_string()).collect(),
            inputs: Vec::new(),
            sizes: Vec::new(),
            runs,
            pairs,
            blame: Vec::new(),
        }
    }

    fn set() -> Vec<String> {
        ["reference", "x", "y"].map(String::from).to_vec()
    }

    /// Three models: all agree; y disagrees with both; x fails.
    fn rows() -> Vec<ModelRow> {
        let mut bad = row(
            "m2",
            &["Conv", "Softmax"],
            vec![
                run("reference", true, 2.0),
                run("x", true, 1.0),
                run("y", true, 30.0),
            ],
            vec![
                pair("reference", "x", true),
                pair("reference", "y", false),
                pair("x", "y", false),
            ],
        );
        bad.blame = vec![Blame {
            backend: "y".into(),
            verdict: "localized".into(),
            op: Some("Softmax".into()),
            value: Some("s".into()),
            detail: None,
        }];
        vec![
            row(
                "m1",
                &["Conv", "Relu"],
                vec![
                    run("reference", true, 4.0),
                    run("x", true, 2.0),
                    run("y", true, 10.0),
                ],
                vec![
                    pair("reference", "x", true),
                    pair("reference", "y", true),
                    pair("x", "y", true),
                ],
            ),
            bad,
            row(
                "m3",
                &["Relu"],
                vec![
                    run("reference", true, 6.0),
                    run("x", false, 0.0),
                    run("y", true, 20.0),
                ],
                vec![pair("reference", "y", true)],
            ),
        ]
    }

    #[test]
    fn the_matrix_is_symmetric_and_counts_the_rows() {
        let t = tables(&rows(), &set(), Some(0), true);
        for i in 0..3 {
            // The diagonal: the models a backend ran, of those it was given.
            let c = &t.matrix[i][i];
            assert_eq!(c.rate, Some(c.both_ran as f64 / 3.0));
            for j in 0..3 {
                assert_eq!(t.matrix[i][j], t.matrix[j][i]);
            }
        }
        assert_eq!(t.matrix[0][0].both_ran, 3);
        assert_eq!(t.matrix[1][1].both_ran, 2, "x failed on m3");
        // A model one of the pair failed on counts against it.
        assert_eq!(t.matrix[0][1], Cell::new(3, 2, 2));
        assert_eq!(t.matrix[0][1].failed, 1);
        assert_eq!(t.matrix[0][2], Cell::new(3, 3, 2));
        assert_eq!(t.matrix[1][2], Cell::new(3, 2, 1));
        assert_eq!(t.pairs.len(), 3);
        assert_eq!((t.pairs[2].a.as_str(), t.pairs[2].b.as_str()), ("x", "y"));
        assert_eq!(t.outcomes[1].status["error"], 1);
        assert_eq!(t.outcomes[1].stages["error/compile"], 1);
    }

    #[test]
    fn ops_are_attributed_by_localization_and_containment() {
        let t = tables(&rows(), &set(), Some(0), true);
        let op = |n: &str| t.ops.iter().find(|o| o.op == n).unwrap().clone();
        let softmax = op("Softmax");
        assert_eq!((softmax.models, softmax.disagree), (1, 1));
        assert_eq!(softmax.blamed, Some(1));
        assert_eq!(softmax.blamed_by["y"], 1);
        let conv = op("Conv");
        assert_eq!(
            (conv.models, conv.disagree, conv.vs_reference),
            (2, 1, Some(1))
        );
        assert_eq!(conv.blamed, Some(0), "contained, not blamed");
        let relu = op("Relu");
        assert_eq!((relu.models, relu.disagree, relu.failed), (2, 0, 1));
        assert_eq!(t.ops[0].op, "Softmax", "the most blamed first");
        // Without a reference there is neither containment against it nor blame.
        let t = tables(&rows(), &set(), None, false);
        assert!(
            t.ops
                .iter()
                .all(|o| o.vs_reference.is_none() && o.blamed.is_none())
        );
        assert_eq!(t.ops[0].op, "Softmax", "then by any pair's disagreement");
    }

    #[test]
    fn latency_statistics() {
        let t = tables(&rows(), &set(), Some(0), true);
        let y = &t.latency[2];
        assert_eq!(y.models, 3);
        assert_eq!(y.median_ms, Some(20.0));
        assert_eq!(y.p90_ms, Some(30.0));
        assert_eq!(y.total_ms, 60.0);
        assert_eq!(t.latency[1].models, 2, "failed runs have no time");
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(
            percentile(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0], 90.0),
            Some(9.0)
        );
        assert_eq!(percentile(&[5.0], 90.0), Some(5.0));
    }
}
