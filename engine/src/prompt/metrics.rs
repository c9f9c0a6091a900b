//! Metrics of one LLM run, as CrossProbe (Table 4) and YANHUI (Tables 4-6) count them:
//! outputs, syntactically valid, functionality-preserving, valid on every backend, bugs.
use super::judge::{Class, LoopResult};
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
    /// Whether the final graph holds the op the case is about.
    pub functionality_preserving: bool,
}

/// The totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Cases considered.
    pub cases: u64,
    /// Cases not sent to the model (screened out).
    pub screened_out: u64,
    /// Answers received (first answers and repairs).
    pub outputs: u64,
    /// Requests that failed (no answer).
    pub request_errors: u64,
    /// Cases whose final graph parses.
    pub syntactically_valid: u64,
    /// Cases whose final graph parses only thanks to a repair round.
    pub repaired: u64,
    /// Cases whose final graph validates and runs on at least one backend.
    pub semantically_valid: u64,
    /// Cases whose final graph holds the case's aligned / clustered op.
    pub functionality_preserving: u64,
    /// Cases whose final graph runs and agrees everywhere.
    pub valid: u64,
    /// Cases ending as a duplicate of an earlier graph.
    pub duplicates: u64,
    /// Cases ending as a bug candidate.
    pub bug_candidates: u64,
    /// Distinct finding signatures over the run.
    pub unique_bugs: u64,
    /// Final classes, counted.
    pub final_classes: BTreeMap<String, u64>,
}

impl Metrics {
    /// Totals over `cases`; `unique_bugs` is the number of distinct signatures the judge saw.
    pub fn of(cases: &[CaseReport], unique_bugs: u64) -> Metrics {
        let mut m = Metrics {
            cases: cases.len() as u64,
            unique_bugs,
            ..Metrics::default()
        };
        for c in cases {
            let Some(r) = &c.result else {
                m.screened_out += 1;
                continue;
            };
            m.outputs += r.rounds.iter().filter(|x| x.error.is_none()).count() as u64;
            m.request_errors += r.rounds.iter().filter(|x| x.error.is_some()).count() as u64;
            let Some(class) = r.class() else { continue };
            *m.final_classes
                .entry(format!("{class:?}").to_lowercase())
                .or_default() += 1;
            if class != Class::Syntax {
                m.syntactically_valid += 1;
                let first_parsed = r
                    .rounds
                    .first()
                    .and_then(|x| x.judged.as_ref())
                    .is_some_and(|j| j.class != Class::Syntax);
                if !first_parsed {
                    m.repaired += 1;
                }
            }
            if matches!(class, Class::Valid | Class::Bug | Class::Duplicate) {
                m.semantically_valid += 1;
            }
            if c.functionality_preserving {
                m.functionality_preserving += 1;
            }
            match class {
                Class::Valid => m.valid += 1,
                Class::Bug => m.bug_candidates += 1,
                Class::Duplicate => m.duplicates += 1,
                _ => {}
            }
        }
        m
    }
}
