//! Metrics of one LLM run in CrossProbe's (Table 4) and YANHUI's (Tables 2, 4-6) terms, each
//! with its denominator:
//!
//! - `per_output`: every answer received (first answers and repair rounds), as both papers
//!   count "outputs";
//! - `per_case.first_answer`: the first answer of each case sent to the model (what the papers
//!   measure: they have no repair rounds);
//! - `per_case.after_repairs`: the last answer of each case sent (the loop stops at the first
//!   answer that is not `syntax` or `invalid`).
//!
//! Each counts, out of `n`:
//! - `syntactically_valid`: the answer holds ONNX text that parses (CrossProbe's "syntactically
//!   valid" also ran the code and excluded NameError and the like: that is `valid` here);
//! - `valid`: it validates (declared types included) and at least one backend runs it
//!   (YANHUI's "valid": the code runs without NameError, SyntaxError, ModuleNotFoundError);
//! - `functionality_preserving` (CrossProbe, `transfer`): valid and holding an ONNX op aligned
//!   with one of the snippet's kept calls
//!   ([`preserves_functionality`](mutagraph_prompts::crossprobe::preserves_functionality));
//! - `relevant` (YANHUI, `generate`): valid and holding one of the cluster's ops
//!   ([`relevant`](mutagraph_prompts::yanhui::relevant));
//! - `bug_candidates`: the oracles report a finding (class `bug`).
//!
//! A request that failed is no output; a case whose request failed counts in the per-case `n`
//! with nothing valid.
use super::judge::{Class, Judged, LoopResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One case of a run (a snippet, a cluster prompt, an oracle case).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseReport {
    /// What it was (file name, cluster id).
    pub case: String,
    /// Screening verdict or why it was not sent (empty when sent).
    pub skipped: Option<String>,
    /// The loop, when a model was asked.
    pub result: Option<LoopResult>,
    /// Per round of `result`: whether that answer is on target (functionality-preserving for
    /// `transfer`, relevant for `generate`); false for a failed request.
    #[serde(default)]
    pub on_target: Vec<bool>,
    /// The ops of the grammar every answer was sampled under (none: unconstrained, because
    /// no op of the case has a grammar or none was asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar_ops: Option<Vec<String>>,
}

impl CaseReport {
    /// The index of the last round with a judgement (the case's final answer).
    fn last_judged(&self) -> Option<usize> {
        let r = self.result.as_ref()?;
        r.rounds.iter().rposition(|x| x.judged.is_some())
    }

    /// Whether the case's final answer is on target.
    pub fn final_on_target(&self) -> bool {
        self.last_judged()
            .is_some_and(|i| self.on_target.get(i).copied().unwrap_or(false))
    }
}

/// What "on target" means in a run: the name its count has in the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// CrossProbe (`transfer`): valid and holding an op aligned with the snippet's calls.
    FunctionalityPreserving,
    /// YANHUI (`generate`): valid and holding one of the cluster's ops.
    Relevant,
}

impl Target {
    /// The name of the count in the report and the summary.
    pub fn name(self) -> &'static str {
        match self {
            Target::FunctionalityPreserving => "functionality_preserving",
            Target::Relevant => "relevant",
        }
    }
}

/// A count and its share of the denominator (`None` when the denominator is 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Count {
    pub count: u64,
    pub rate: Option<f64>,
}

impl Count {
    fn of(count: u64, n: u64) -> Count {
        Count {
            count,
            rate: (n > 0).then(|| count as f64 / n as f64),
        }
    }
}

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.rate {
            Some(r) => write!(f, "{} ({:.1}%)", self.count, 100.0 * r),
            None => write!(f, "{} (-)", self.count),
        }
    }
}

/// Counts out of `n` answers or cases (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    /// The denominator.
    pub n: u64,
    pub syntactically_valid: Count,
    pub valid: Count,
    /// `transfer` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub functionality_preserving: Option<Count>,
    /// `generate` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevant: Option<Count>,
    pub bug_candidates: Count,
}

impl Rates {
    /// The on-target count, whichever its name.
    pub fn on_target(&self) -> Option<Count> {
        self.functionality_preserving.or(self.relevant)
    }
}

/// Tallies of answers, turned into [`Rates`] at the end.
#[derive(Default)]
struct Tally {
    n: u64,
    parses: u64,
    valid: u64,
    on_target: u64,
    bugs: u64,
}

impl Tally {
    /// Counts one answer (`None`: a failed request, or no answer at all).
    fn add(&mut self, j: Option<&Judged>, on_target: bool) {
        self.n += 1;
        let Some(j) = j else { return };
        self.parses += u64::from(j.class != Class::Syntax);
        self.valid += u64::from(j.runs);
        self.on_target += u64::from(on_target);
        self.bugs += u64::from(j.class == Class::Bug);
    }

    fn rates(&self, target: Target) -> Rates {
        let on = Count::of(self.on_target, self.n);
        Rates {
            n: self.n,
            syntactically_valid: Count::of(self.parses, self.n),
            valid: Count::of(self.valid, self.n),
            functionality_preserving: (target == Target::FunctionalityPreserving).then_some(on),
            relevant: (target == Target::Relevant).then_some(on),
            bug_candidates: Count::of(self.bugs, self.n),
        }
    }
}

/// Per case: the first answer and the answer after the repair rounds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerCase {
    pub first_answer: Rates,
    pub after_repairs: Rates,
}

/// The totals of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// What the on-target count is.
    pub target: Target,
    /// Cases considered.
    pub cases: u64,
    /// Cases not sent to the model (screened out).
    pub screened_out: u64,
    /// Cases sent to the model: the per-case denominator.
    pub sent: u64,
    /// Answers received (first answers and repairs): the per-output denominator.
    pub outputs: u64,
    /// Requests that failed (no answer).
    pub request_errors: u64,
    /// Every answer.
    pub per_output: Rates,
    /// Every case sent.
    pub per_case: PerCase,
    /// Distinct finding signatures over the run.
    pub unique_bugs: u64,
    /// The cases' final classes, counted.
    pub final_classes: BTreeMap<String, u64>,
}

impl Metrics {
    /// Totals over `cases`; `unique_bugs` is the number of distinct signatures the judge saw.
    pub fn of(cases: &[CaseReport], unique_bugs: u64, target: Target) -> Metrics {
        let (mut outputs, mut first, mut after) =
            (Tally::default(), Tally::default(), Tally::default());
        let mut m = Metrics {
            target,
            cases: cases.len() as u64,
            screened_out: 0,
            sent: 0,
            outputs: 0,
            request_errors: 0,
            per_output: Rates::default(),
            per_case: PerCase::default(),
            unique_bugs,
            final_classes: BTreeMap::new(),
        };
        for c in cases {
            let Some(r) = &c.result else {
                m.screened_out += 1;
                continue;
            };
            m.sent += 1;
            let on = |i: usize| c.on_target.get(i).copied().unwrap_or(false);
            for (i, x) in r.rounds.iter().enumerate() {
                match &x.judged {
                    Some(j) => outputs.add(Some(j), on(i)),
                    None => m.request_errors += 1,
                }
            }
            let first_judged = r.rounds.first().and_then(|x| x.judged.as_ref());
            first.add(first_judged, on(0));
            after.add(r.last(), c.final_on_target());
            if let Some(class) = r.class() {
                *m.final_classes
                    .entry(format!("{class:?}").to_lowercase())
                    .or_default() += 1;
            }
        }
        m.outputs = outputs.n;
        m.per_output = outputs.rates(target);
        m.per_case = PerCase {
            first_answer: first.rates(target),
            after_repairs: after.rates(target),
        };
        m
    }

    /// The summary table: one row per denominator.
    pub fn table(&self) -> String {
        let target = self.target.name().replace('_', "-");
        let mut out = format!(
            "{:<24} {:>5}  {:<16} {:<16} {:<26} {}\n",
            "", "n", "syntax-valid", "valid", target, "bug candidates"
        );
        for (label, r) in [
            ("every output", &self.per_output),
            ("cases, first answer", &self.per_case.first_answer),
            ("cases, after repairs", &self.per_case.after_repairs),
        ] {
            out += &format!(
                "{label:<24} {:>5}  {:<16} {:<16} {:<26} {}\n",
                r.n,
                r.syntactically_valid.to_string(),
                r.valid.to_string(),
                r.on_target().unwrap_or_default().to_string(),
                r.bug_candidates
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::judge::Round;

    fn judged(class: Class, runs: bool) -> Judged {
        Judged {
            class,
            detail: String::new(),
            op_types: Vec::new(),
            signatures: Vec::new(),
            bundles: Vec::new(),
            text: None,
            runs,
        }
    }

    fn case(rounds: Vec<Option<Judged>>, on_target: Vec<bool>) -> CaseReport {
        CaseReport {
            case: "c".into(),
            skipped: None,
            result: Some(LoopResult {
                rounds: rounds
                    .into_iter()
                    .enumerate()
                    .map(|(i, j)| Round {
                        round: i as u32,
                        answer: String::new(),
                        error: j.is_none().then(|| "timeout".to_string()),
                        judged: j,
                    })
                    .collect(),
            }),
            on_target,
            grammar_ops: None,
        }
    }

    #[test]
    fn each_count_has_its_denominator() {
        let cases = vec![
            // Syntax, then invalid, then valid and on target after two repairs.
            case(
                vec![
                    Some(judged(Class::Syntax, false)),
                    Some(judged(Class::Invalid, false)),
                    Some(judged(Class::Valid, true)),
                ],
                vec![false, false, true],
            ),
            // A bug candidate at once, off target.
            case(vec![Some(judged(Class::Bug, true))], vec![false]),
            // The request failed.
            case(vec![None], vec![false]),
            CaseReport {
                case: "screened".into(),
                skipped: Some("no aligned op".into()),
                result: None,
                on_target: Vec::new(),
                grammar_ops: None,
            },
        ];
        let m = Metrics::of(&cases, 1, Target::FunctionalityPreserving);
        assert_eq!((m.cases, m.screened_out, m.sent), (4, 1, 3));
        assert_eq!((m.outputs, m.request_errors), (4, 1));
        let count = |c: Count| c.count;
        let o = &m.per_output;
        assert_eq!(o.n, 4);
        assert_eq!(count(o.syntactically_valid), 3);
        assert_eq!(count(o.valid), 2);
        assert_eq!(o.functionality_preserving.map(count), Some(1));
        assert_eq!(o.relevant, None);
        assert_eq!(count(o.bug_candidates), 1);
        assert_eq!(o.valid.rate, Some(0.5));
        let f = &m.per_case.first_answer;
        assert_eq!(f.n, 3);
        assert_eq!(
            (count(f.syntactically_valid), count(f.valid)),
            (1, 1),
            "{f:?}"
        );
        assert_eq!(f.functionality_preserving.map(count), Some(0));
        let a = &m.per_case.after_repairs;
        assert_eq!(a.n, 3);
        assert_eq!((count(a.syntactically_valid), count(a.valid)), (2, 2));
        assert_eq!(a.functionality_preserving.map(count), Some(1));
        assert_eq!(count(a.bug_candidates), 1);
        assert_eq!(m.final_classes.get("valid"), Some(&1));
        // The report names the YANHUI count "relevant".
        let y = Metrics::of(&cases, 1, Target::Relevant);
        let v = serde_json::to_value(&y).unwrap();
        assert_eq!(v["per_case"]["after_repairs"]["relevant"]["count"], 1);
        assert!(v["per_output"].get("functionality_preserving").is_none());
        assert!(y.table().contains("relevant"), "{}", y.table());
        // No case sent: rates are null, not NaN.
        let none = Metrics::of(&[], 0, Target::Relevant);
        assert_eq!(none.per_output.valid.rate, None);
    }
}
