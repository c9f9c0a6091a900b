//! The oracles, one type per symptom.
use crate::finding::{Finding, Kind};
use crate::{MutantRuns, Oracle};
use mutagraph_backends::backend::Stage;
use mutagraph_backends::compare::{CompareOptions, Comparison, Metrics, Tolerance, compare};
use mutagraph_backends::value::{NamedValues, Value};
use mutagraph_backends::worker::pool::signal_name;
use mutagraph_backends::worker::{Outcome, RunReport};

/// A backend crashed, panicked, exited or reported an error (at load, compile or run) while
/// some other backend ran the model. Unsupported ops are not findings; a model no backend can
/// run is an invalid mutant, not a finding.
pub struct Crash;

impl Oracle for Crash {
    fn name(&self) -> &'static str {
        "crash"
    }

    fn judge(&self, runs: &MutantRuns) -> Vec<Finding> {
        let mut out = Vec::new();
        for r in &runs.runs {
            if !runs.someone_else_ran(&r.backend) {
                continue;
            }
            let Some((symptom, stage)) = crash_symptom(&r.outcome) else {
                continue;
            };
            let mut f = Finding::new(Kind::Crash, &r.backend, &symptom, r.outcome.detail());
            f.stage = stage;
            out.push(f);
        }
        out
    }
}

/// A crash's symptom and the stage that failed, for an outcome that is a crash: a signal, an
/// exit, a panic or an error the library reported.
pub fn crash_symptom(outcome: &Outcome) -> Option<(String, Option<Stage>)> {
    Some(match outcome {
        Outcome::Crash {
            signal: Some(s), ..
        } => (format!("signal-{}", signal_name(*s)), None),
        Outcome::Crash {
            exit_code: Some(_), ..
        } => ("exit".to_string(), None),
        Outcome::Crash { .. } => ("panic".to_string(), None),
        Outcome::Error { stage, .. } => ("error".to_string(), Some(*stage)),
        _ => return None,
    })
}

/// A backend timed out where some other backend finished, and the time it was given is
/// [`SLOW_RATIO`] times the longest run of the others that finished (the libraries'; the
/// reference's only when no library finished): a backend that would have finished a little
/// after the limit is slow, not hung (burn at 10 s where tract took 2.8 s).
pub struct Hang;

impl Oracle for Hang {
    fn name(&self) -> &'static str {
        "hang"
    }

    fn judge(&self, runs: &MutantRuns) -> Vec<Finding> {
        let finished = |libraries: bool| {
            runs.runs
                .iter()
                .enumerate()
                .filter(|(i, r)| {
                    r.outcome.outputs().is_some() && (Some(*i) != runs.reference) == libraries
                })
                .map(|(_, r)| r.wall_ms)
                .fold(None, |a: Option<f64>, t| Some(a.map_or(t, |a| a.max(t))))
        };
        let Some(longest) = finished(true).or_else(|| finished(false)) else {
            return Vec::new();
        };
        runs.runs
            .iter()
            .filter(|r| {
                matches!(r.outcome, Outcome::Timeout { limit_ms, .. } if limit_ms as f64 >= SLOW_RATIO * longest)
            })
            .map(|r| Finding::new(Kind::Hang, &r.backend, "timeout", r.outcome.detail()))
            .collect()
    }
}

/// A backend went over the memory cap where some other backend finished, or its peak
/// resident memory is [`Memory::ratio`] times the median of the other backends' and at least
/// [`Memory::min_excess`] bytes above it.
pub struct Memory {
    /// How many times the others' median peak.
    pub ratio: f64,
    /// Bytes above the others' median peak.
    pub min_excess: u64,
}

impl Default for Memory {
    fn default() -> Self {
        Memory {
            ratio: 4.0,
            min_excess: 512 << 20,
        }
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    Some(v[v.len() / 2])
}

impl Oracle for Memory {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn judge(&self, runs: &MutantRuns) -> Vec<Finding> {
        let mut out = Vec::new();
        for r in &runs.runs {
            if matches!(r.outcome, Outcome::OutOfMemory { .. }) && runs.someone_else_ran(&r.backend)
            {
                out.push(Finding::new(
                    Kind::Memory,
                    &r.backend,
                    "over-cap",
                    r.outcome.detail(),
                ));
            }
        }
        for r in runs.others().filter(|r| r.outcome.outputs().is_some()) {
            let peers: Vec<f64> = runs
                .others()
                .filter(|o| o.backend != r.backend && o.outcome.outputs().is_some())
                .map(|o| o.peak_rss as f64)
                .collect();
            let Some(m) = median(peers) else { continue };
            let p = r.peak_rss as f64;
            if p >= self.ratio * m && p - m >= self.min_excess as f64 {
                out.push(Finding::new(
                    Kind::Memory,
                    &r.backend,
                    "peak",
                    format!(
                        "peak resident memory {} MiB, the other backends' median {} MiB",
                        r.peak_rss >> 20,
                        (m as u64) >> 20
                    ),
                ));
            }
        }
        out
    }
}

/// Ratio of run time to the other backends' median above which a backend is a slowness
/// candidate (re-run to confirm).
pub const SLOW_RATIO: f64 = 10.0;
/// Run time (milliseconds) below which nothing is called slow.
pub const SLOW_MIN_MS: f64 = 50.0;

/// Backends (not the reference) whose run took [`SLOW_RATIO`] times the median of the other
/// backends' and at least [`SLOW_MIN_MS`]: the engine re-runs them and the others, and
/// [`Slow`] judges with the re-runs.
///
/// A backend that was already slow on the unmutated seed ([`MutantRuns::slow_baseline`]) is a
/// candidate only when the mutant is [`SLOW_RATIO`] times slower still, relative to the others:
/// the slowness of the seed is not the mutation's finding.
pub fn slow_candidates(runs: &MutantRuns) -> Vec<String> {
    slowness(runs)
        .into_iter()
        .filter(|(b, ratio, ms)| *ms >= SLOW_MIN_MS && *ratio >= slow_threshold(runs, b))
        .map(|(b, _, _)| b)
        .collect()
}

/// The ratio a backend's time must reach over the others' median to be slow on these runs.
fn slow_threshold(runs: &MutantRuns, backend: &str) -> f64 {
    SLOW_RATIO
        * runs
            .slow_baseline
            .get(backend)
            .copied()
            .unwrap_or(1.0)
            .max(1.0)
}

/// For each backend (not the reference) that ran: its run time over the median of the other
/// backends' (first runs), and its run time in ms.
pub fn slowness(runs: &MutantRuns) -> Vec<(String, f64, f64)> {
    let ok: Vec<&RunReport> = runs
        .others()
        .filter(|r| r.outcome.outputs().is_some())
        .collect();
    ok.iter()
        .filter_map(|r| {
            let peers: Vec<f64> = ok
                .iter()
                .filter(|o| o.backend != r.backend)
                .map(|o| o.run_ms)
                .collect();
            let m = median(peers)?;
            Some((r.backend.clone(), r.run_ms / m.max(1e-3), r.run_ms))
        })
        .collect()
}

/// A backend much slower than the others, confirmed: its fastest run (first run and re-runs)
/// is still [`SLOW_RATIO`] times the median of the other backends' fastest runs. Without
/// re-runs of the candidate there is no finding.
pub struct Slow;

impl Oracle for Slow {
    fn name(&self) -> &'static str {
        "slow"
    }

    fn judge(&self, runs: &MutantRuns) -> Vec<Finding> {
        let fastest = |b: &str| -> Option<f64> {
            runs.runs
                .iter()
                .chain(&runs.reruns)
                .filter(|r| r.backend == b && r.outcome.outputs().is_some())
                .map(|r| r.run_ms)
                .min_by(|a, b| a.total_cmp(b))
        };
        let mut out = Vec::new();
        for b in slow_candidates(runs) {
            if !runs.reruns.iter().any(|r| r.backend == b) {
                continue;
            }
            let Some(mine) = fastest(&b) else { continue };
            let peers: Vec<f64> = runs
                .others()
                .filter(|o| o.backend != b)
                .filter_map(|o| fastest(&o.backend))
                .collect();
            let Some(m) = median(peers) else { continue };
            if mine >= SLOW_MIN_MS && mine >= slow_threshold(runs, &b) * m {
                out.push(Finding::new(
                    Kind::Slow,
                    &b,
                    "slower",
                    format!(
                        "fastest run {mine:.1} ms, {:.0}x the other backends' median {m:.2} ms",
                        mine / m.max(1e-9)
                    ),
                ));
            }
        }
        out
    }
}

/// Counts, over all outputs, the elements a backend made NaN / Inf where the ground truth is
/// finite, the elements of those outputs, and the first such output.
pub fn new_nonfinite(reference: &NamedValues, got: &NamedValues) -> (usize, usize, Option<String>) {
    let mut n = 0;
    let mut total = 0;
    let mut first = None;
    for (name, want) in reference {
        let Some((_, have)) = got.iter().find(|(g, _)| g == name) else {
            continue;
        };
        let c = count_new_nonfinite(want, have);
        if c > 0 {
            first.get_or_insert_with(|| name.clone());
            total += have
                .tensors()
                .iter()
                .map(|t| t.num_elements())
                .sum::<usize>();
        }
        n += c;
    }
    (n, total, first)
}

/// NaN / Inf elements of `have` where `want` is finite (tensors of equal shapes only).
pub fn count_new_nonfinite(want: &Value, have: &Value) -> usize {
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

/// NaN / Inf in a backend's outputs where the reference output is finite; `partial` when some
/// elements of the affected outputs are still finite, `all` when none is.
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
                let (n, total, output) = new_nonfinite(want, got);
                (n > 0).then(|| {
                    let symptom = if n == total { "all" } else { "partial" };
                    Finding::new(
                        Kind::Nan,
                        &r.backend,
                        symptom,
                        format!(
                            "{n} of {total} elements NaN/Inf where the reference is finite (first in output '{}')",
                            output.unwrap_or_default()
                        ),
                    )
                })
            })
            .collect()
    }
}

/// Mean absolute difference between two output sets over the elements both hold as finite
/// numbers in tensors of equal shapes (CRADLE's δ, MEMO Eq. 5); `None` when nothing is
/// comparable.
pub fn mean_abs_diff(want: &NamedValues, got: &NamedValues) -> Option<f64> {
    let mut sum = 0.0;
    let mut n = 0usize;
    for (name, w) in want {
        let Some((_, h)) = got.iter().find(|(g, _)| g == name) else {
            continue;
        };
        for (a, b) in w.tensors().iter().zip(h.tensors()) {
            if a.shape != b.shape {
                continue;
            }
            if let (Some(x), Some(y)) = (a.to_f64s(), b.to_f64s()) {
                for (p, q) in x.iter().zip(&y) {
                    if p.is_finite() && q.is_finite() {
                        sum += (p - q).abs();
                        n += 1;
                    }
                }
            }
        }
    }
    (n > 0).then(|| sum / n as f64)
}

/// CRADLE's D_MAD (MEMO Eq. 6) of two backends' distances to the ground truth: 0 when they are
/// equally far, 1 when one of them holds all the error.
pub fn d_mad(delta_y: f64, delta_y2: f64) -> f64 {
    let s = delta_y + delta_y2;
    if s == 0.0 {
        0.0
    } else {
        (delta_y - delta_y2).abs() / s
    }
}

/// Compares two output sets output by output: `Ok(metrics)` when they agree, else the symptom
/// (`values`, `shape`, `dtype`, `missing-output`), a message and the metrics. Mismatches that
/// are only the second set's own new NaN/Inf are left to [`NanInf`].
pub fn agree(
    want: &NamedValues,
    got: &NamedValues,
    tolerance: Tolerance,
) -> Result<Metrics, (String, String, Metrics)> {
    let opts = CompareOptions {
        tolerance,
        check_dtype: false,
    };
    compare_outputs(want, got, |_, w, h| {
        (compare(w, h, opts), count_new_nonfinite(w, h))
    })
}

/// The loop behind [`agree`] and [`crate::envelope::inside`]: each output of `want` compared
/// with `got`'s by `cmp` (the comparison, and how many of `got`'s NaN/Inf in it are its own
/// new ones), the metrics summed, the first disagreement kept as symptom and message. An
/// output whose only fault is `got`'s own new NaN/Inf is left to [`NanInf`].
pub(crate) fn compare_outputs(
    want: &NamedValues,
    got: &NamedValues,
    mut cmp: impl FnMut(&str, &Value, &Value) -> (Comparison, usize),
) -> Result<Metrics, (String, String, Metrics)> {
    let mut total = Metrics::default();
    let mut bad: Option<(String, String)> = None;
    for (name, w) in want {
        let Some((_, h)) = got.iter().find(|(g, _)| g == name) else {
            bad.get_or_insert((
                "missing-output".into(),
                format!("output '{name}' is missing"),
            ));
            continue;
        };
        let (c, fresh) = cmp(name, w, h);
        let m = &c.metrics;
        total.absorb(m);
        let only_nonfinite =
            m.mismatched == 0 && m.nonfinite_mismatch > 0 && m.nonfinite_mismatch <= fresh;
        if !c.ok && !only_nonfinite && bad.is_none() {
            let reason = c.reason.unwrap_or_default();
            let symptom = if reason.contains("shape") {
                "shape"
            } else if reason.contains("type") {
                "dtype"
            } else {
                "values"
            };
            bad = Some((symptom.into(), format!("output '{name}': {reason}")));
        }
    }
    match bad {
        None => Ok(total),
        Some((s, m)) => Err((s, m, total)),
    }
}

/// Outputs that differ from the reference beyond a named tolerance (widened per element type
/// for f16 / bf16). The reference decides who is wrong, with one exception: when at least two
/// other backends agree with each other and all of them disagree with the reference, the
/// reference is named. Each finding carries D_MAD against the closest other backend.
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
        let ran: Vec<(&RunReport, &NamedValues)> = runs
            .others()
            .filter_map(|r| Some((r, r.outcome.outputs()?)))
            .collect();
        let deltas: Vec<Option<f64>> = ran.iter().map(|(_, o)| mean_abs_diff(want, o)).collect();
        let verdicts: Vec<_> = ran
            .iter()
            .map(|(_, o)| agree(want, o, self.tolerance))
            .collect();
        let bad: Vec<usize> = (0..ran.len()).filter(|&i| verdicts[i].is_err()).collect();
        // Two variants of one library (ort and ort-noopt) share their kernels: they count as
        // one witness against the reference, not two.
        let libraries: std::collections::BTreeSet<&str> = bad
            .iter()
            .map(|&i| mutagraph_backends::catalog::family(&ran[i].0.backend))
            .collect();
        if libraries.len() >= 2
            && bad.len() == ran.len()
            && bad[1..]
                .iter()
                .all(|&i| agree(ran[bad[0]].1, ran[i].1, self.tolerance).is_ok())
        {
            let names: Vec<&str> = ran.iter().map(|(r, _)| r.backend.as_str()).collect();
            let (symptom, msg, metrics) = verdicts[bad[0]].clone().unwrap_err();
            let mut f = Finding::new(
                Kind::Inconsistency,
                runs.runs[runs.reference.expect("has outputs")]
                    .backend
                    .as_str(),
                &symptom,
                format!(
                    "{} agree with each other against the reference ({msg})",
                    names.join(", ")
                ),
            );
            f.metrics = Some(metrics);
            f.d_mad = Some(1.0);
            return vec![f];
        }
        bad.into_iter()
            .map(|i| {
                let (symptom, msg, metrics) = verdicts[i].clone().unwrap_err();
                let mut f = Finding::new(Kind::Inconsistency, &ran[i].0.backend, &symptom, msg);
                f.metrics = Some(metrics);
                let closest = (0..ran.len())
                    .filter(|&j| j != i)
                    .filter_map(|j| deltas[j])
                    .min_by(|a, b| a.total_cmp(b))
                    .unwrap_or(0.0);
                f.d_mad = deltas[i].map(|d| d_mad(d, closest));
                f
            })
            .collect()
    }
}

/// The same backend twice on the same model and inputs: a different outcome (ok / error /
/// crash; timeouts and memory are left out, they depend on load) or outputs that differ beyond
/// `tolerance` (NaN equal to NaN). Bitwise differences within it are left out: a threaded
/// reduction summing in another order each run is how every library computes, not a bug.
pub struct Flaky {
    /// The campaign's tolerance.
    pub tolerance: Tolerance,
}

impl Oracle for Flaky {
    fn name(&self) -> &'static str {
        "flaky"
    }

    fn judge(&self, runs: &MutantRuns) -> Vec<Finding> {
        let volatile = |o: &Outcome| {
            matches!(
                o,
                Outcome::Timeout { .. } | Outcome::OutOfMemory { .. } | Outcome::Unsupported { .. }
            )
        };
        let mut out: Vec<Finding> = Vec::new();
        for again in &runs.reruns {
            let Some(first) = runs.runs.iter().find(|r| r.backend == again.backend) else {
                continue;
            };
            if out.iter().any(|f| f.backends[0] == again.backend)
                || volatile(&first.outcome)
                || volatile(&again.outcome)
            {
                continue;
            }
            match (first.outcome.outputs(), again.outcome.outputs()) {
                (Some(a), Some(b)) => {
                    if let Err((_, msg, _)) = agree(a, b, self.tolerance) {
                        out.push(Finding::new(
                            Kind::Flaky,
                            &again.backend,
                            "values",
                            format!("a second run differs from the first: {msg}"),
                        ));
                    }
                }
                (None, None) => {}
                _ => out.push(Finding::new(
                    Kind::Flaky,
                    &again.backend,
                    "outcome",
                    format!(
                        "first run {}, second run {}",
                        first.outcome.status(),
                        again.outcome.status()
                    ),
                )),
            }
        }
        out
    }
}

/// The default oracles: crash, hang, memory, NaN/Inf, inconsistency at `tolerance`, slow
/// (in optimized builds only), flaky at `tolerance`.
pub fn default_oracles(tolerance: Tolerance) -> Vec<Box<dyn Oracle>> {
    let mut v: Vec<Box<dyn Oracle>> = vec![
        Box::new(Crash),
        Box::new(Hang),
        Box::new(Memory::default()),
        Box::new(NanInf),
        Box::new(Inconsistency { tolerance }),
    ];
    if SLOWNESS_MEANINGFUL {
        v.push(Box::new(Slow));
    }
    v.push(Box::new(Flaky { tolerance }));
    v
}

/// Whether run times compare libraries: not in a debug build, where the libraries linked into
/// the binary (tract, burn) run unoptimized and would be "slow" by our build, not their code.
pub const SLOWNESS_MEANINGFUL: bool = !cfg!(debug_assertions);
