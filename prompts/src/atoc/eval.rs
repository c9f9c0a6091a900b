//! How well ATOC decides: labelled cases (the right `final` known by construction) asked k
//! times each, then scored.
//!
//! - accuracy: cases decided (confidence ≥ [`ACCEPT`](super::ACCEPT)) with the label / cases;
//! - decided share: cases decided / cases;
//! - accuracy among decided: cases decided with the label / cases decided (none decided: none);
//! - parse rate: answers that parse as a JSON verdict / answers received (request errors are
//!   not answers; none received: none). Answers whose `final` is not one of the case's choices
//!   parse but are counted apart (`answers_in_choices`).
use super::{AskError, Asked, Case, Decision, SpecError, SpecSource, ask, normalize_final};
use crate::llm::Llm;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A case whose right answer is known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Labelled {
    /// A stable identifier (`conformance/test_clip_example/ort`, ...).
    pub id: String,
    /// Where the case comes from and how its wrong outputs were made, in words.
    pub source: String,
    /// The right `final`: one of the case's choices (normalized).
    pub label: String,
    pub case: Case,
}

/// The outcome of one labelled case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub id: String,
    pub source: String,
    pub op: String,
    pub label: String,
    /// The most frequent `final`, accepted or not.
    pub leader: Option<String>,
    /// Count of the leader over k.
    pub confidence: f64,
    /// The decision (the leader at ≥ 90 %, else unknown).
    pub decision: Decision,
    /// Decided, and the decision is the label.
    pub correct: bool,
    /// Answers asked for (k).
    pub asked: usize,
    /// Answers received (k less the request errors).
    pub received: usize,
    /// Answers that parse.
    pub parsed: usize,
    /// Parsed answers whose `final` is one of the case's choices.
    pub in_choices: usize,
    /// Votes per `final`.
    pub votes: BTreeMap<String, u64>,
    /// Every raw answer (request errors prefixed with `error: `).
    pub answers: Vec<String>,
}

impl CaseResult {
    /// Whether the vote reached a decision.
    pub fn decided(&self) -> bool {
        matches!(self.decision, Decision::Decided(_))
    }
}

/// The totals over every case.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub cases: usize,
    pub decided: usize,
    /// Decided with the label.
    pub correct: usize,
    /// `correct / cases` (0 without cases).
    pub accuracy: f64,
    /// `decided / cases` (0 without cases).
    pub decided_share: f64,
    /// `correct / decided`; none when nothing was decided.
    pub accuracy_decided: Option<f64>,
    pub answers_asked: usize,
    pub answers_received: usize,
    pub answers_parsed: usize,
    pub answers_in_choices: usize,
    /// `answers_parsed / answers_received`; none when no answer was received.
    pub parse_rate: Option<f64>,
    /// Cases per label.
    pub labels: BTreeMap<String, usize>,
}

/// The whole evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// `oracle-eval`.
    pub command: String,
    /// The model that answered (`provider:model`).
    pub llm: String,
    /// Answers per case.
    pub k: usize,
    /// Seed of the first request of the first case.
    pub seed: u64,
    pub temperature: f32,
    pub summary: Summary,
    pub cases: Vec<CaseResult>,
}

/// Why the evaluation stopped.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The specification of a case's op could not be had.
    #[error("case {case}: {source}")]
    Spec {
        case: String,
        #[source]
        source: SpecError,
    },
    /// The question could not be asked (template, or k > 1 at temperature ≤ 0).
    #[error(transparent)]
    Ask(#[from] AskError),
    /// A case's label is not one of its choices (a bug of whoever built it).
    #[error("case {case}: the label '{label}' is not one of its choices ({choices})")]
    Label {
        case: String,
        label: String,
        choices: String,
    },
}

/// Scores one case from what ATOC answered.
pub fn judge_case(l: &Labelled, asked: &Asked) -> CaseResult {
    let v = &asked.verdict;
    let label = normalize_final(&l.label);
    let choices = l.case.choices();
    let in_choices = v
        .votes
        .iter()
        .filter(|(f, _)| choices.contains(f))
        .map(|(_, n)| *n as usize)
        .sum();
    CaseResult {
        id: l.id.clone(),
        source: l.source.clone(),
        op: l.case.op.clone(),
        correct: v.decision == Decision::Decided(label.clone()),
        label,
        leader: v.leader.clone(),
        confidence: v.confidence,
        decision: v.decision.clone(),
        asked: v.k,
        received: v.k.saturating_sub(asked.request_errors),
        parsed: v.k.saturating_sub(v.failed),
        in_choices,
        votes: v.votes.clone(),
        answers: asked.answers.clone(),
    }
}

/// The totals of some case results.
pub fn summarize(results: &[CaseResult]) -> Summary {
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let cases = results.len();
    let decided = results.iter().filter(|r| r.decided()).count();
    let correct = results.iter().filter(|r| r.correct).count();
    let received: usize = results.iter().map(|r| r.received).sum();
    let parsed: usize = results.iter().map(|r| r.parsed).sum();
    let mut labels = BTreeMap::new();
    for r in results {
        *labels.entry(r.label.clone()).or_default() += 1;
    }
    Summary {
        cases,
        decided,
        correct,
        accuracy: ratio(correct, cases),
        decided_share: ratio(decided, cases),
        accuracy_decided: (decided > 0).then(|| ratio(correct, decided)),
        answers_asked: results.iter().map(|r| r.asked).sum(),
        answers_received: received,
        answers_parsed: parsed,
        answers_in_choices: results.iter().map(|r| r.in_choices).sum(),
        parse_rate: (received > 0).then(|| ratio(parsed, received)),
        labels,
    }
}

/// How each case is asked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Asking {
    /// Answers per case.
    pub k: usize,
    /// Seed of the first request of the first case.
    pub seed: u64,
    pub temperature: f32,
}

/// Asks ATOC about every case, k answers each (case i with seeds `seed + i·k ..`), with each
/// op's specification from `specs` (shortened by `shorten` when given, e.g.
/// `|s| s.brief(600)`), and scores the answers. `progress` sees each case's result as it
/// comes. Refuses k > 1 at temperature ≤ 0 before asking anything.
pub fn evaluate(
    llm: &dyn Llm,
    specs: &dyn SpecSource,
    cases: &[Labelled],
    asking: Asking,
    shorten: &dyn Fn(&super::OpSpecText) -> super::OpSpecText,
    progress: &mut dyn FnMut(&CaseResult),
) -> Result<EvalReport, EvalError> {
    let Asking {
        k,
        seed,
        temperature,
    } = asking;
    super::check_sampling(k, temperature)?;
    let k = k.max(1);
    for l in cases {
        let choices = l.case.choices();
        if !choices.contains(&normalize_final(&l.label)) {
            return Err(EvalError::Label {
                case: l.id.clone(),
                label: l.label.clone(),
                choices: choices.join(", "),
            });
        }
    }
    let mut results = Vec::with_capacity(cases.len());
    for (i, l) in cases.iter().enumerate() {
        let spec = specs
            .spec(&l.case.domain, &l.case.op, l.case.opset)
            .map_err(|source| EvalError::Spec {
                case: l.id.clone(),
                source,
            })?;
        let spec = shorten(&spec);
        let case_seed = seed.wrapping_add((i * k) as u64);
        let asked = ask(llm, &spec, &l.case, k, case_seed, temperature)?;
        let r = judge_case(l, &asked);
        progress(&r);
        results.push(r);
    }
    Ok(EvalReport {
        command: "oracle-eval".into(),
        llm: llm.name(),
        k,
        seed,
        temperature,
        summary: summarize(&results),
        cases: results,
    })
}
