//! The validation loop of LLM-written tests: parse → validate and infer → run on every
//! backend → classify, with repair prompts for syntax errors and invalid graphs.
//!
//! Classes, in the order they are decided:
//! - `syntax`: the answer holds no graph, or the ONNX text does not parse (the error carries
//!   line and column);
//! - `invalid`: it parses but fails validation / shape inference, declares a type that
//!   inference contradicts ([`mutagraph_ir::validate::declared_contradictions`]: a wrong dtype,
//!   rank or dim on an output, a value_info entry or an input's initializer), declares an
//!   output without a type that inference cannot find, or no backend runs it;
//! - `duplicate`: the same graph (printed canonically) was judged before in this run;
//! - `bug`: the oracles report a finding (backends disagree, one crashes, NaN, hang): the
//!   bug candidate goes to the findings store (a bundle under `findings/`);
//! - `valid`: every backend agrees with the reference.
//!
//! Graph outputs written without a type (`=> (Y)`) are declared with the type inference finds
//! before anything runs or is written, so that bundles hold complete models.
//!
//! A `syntax` or `invalid` answer gets a repair prompt (the error, with line and column where
//! there is one) for at most [`MAX_REPAIRS`] rounds.
use crate::bundle::{self, Found};
use crate::findings::{Seen, SigEntry};
use anyhow::Result;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_backends::worker::Pool;
use mutagraph_ir::Model;
use mutagraph_oracles::triage::{Triage, Verdict};
use mutagraph_oracles::{Finding, Mutant, MutantRuns};
use mutagraph_prompts::llm::{ChatRequest, Constraint, Llm, Message, Role};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// Repair rounds after the first answer.
pub const MAX_REPAIRS: u32 = 3;

/// What an answer turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// No graph, or ONNX text that does not parse.
    Syntax,
    /// Parses, but is not a valid model, or no backend runs it.
    Invalid,
    /// A graph already judged in this run.
    Duplicate,
    /// The oracles report a finding.
    Bug,
    /// Runs everywhere and agrees with the reference.
    Valid,
}

impl Class {
    /// Whether a repair prompt is worth sending.
    pub fn repairable(self) -> bool {
        matches!(self, Class::Syntax | Class::Invalid)
    }
}

/// The judgement of one answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Judged {
    /// The class.
    pub class: Class,
    /// The error (syntax, validation, every backend's failure) or a summary of the findings.
    pub detail: String,
    /// The graph's op types (empty unless it parsed).
    pub op_types: Vec<String>,
    /// The findings' signatures (class `bug`).
    pub signatures: Vec<String>,
    /// Bundle directories written for new signatures.
    pub bundles: Vec<PathBuf>,
    /// The ONNX text that was judged.
    pub text: Option<String>,
    /// Whether the graph validates and at least one backend runs it (classes `valid` and
    /// `bug`; for a `duplicate`, whether the first one did).
    #[serde(default)]
    pub runs: bool,
}

impl Judged {
    fn new(class: Class, detail: impl Into<String>) -> Judged {
        Judged {
            class,
            detail: detail.into(),
            op_types: Vec::new(),
            signatures: Vec::new(),
            bundles: Vec::new(),
            text: None,
            runs: false,
        }
    }
}

/// Runs graphs on the backends and judges them; remembers graphs and signatures across calls.
pub struct Judge<'p> {
    pool: &'p mut Pool,
    backends: Vec<String>,
    triage: Triage,
    tolerance: Tolerance,
    input_seed: u64,
    /// Graphs judged so far (printed canonically), with whether they ran.
    seen_graphs: HashMap<String, bool>,
    /// Signatures found so far, with hits.
    pub signatures: BTreeMap<String, u64>,
    /// Where bug bundles go (`<out>/findings/<id>/`); none: not written.
    pub findings_dir: Option<PathBuf>,
    /// Recorded in each bundle's meta.json as the "seed" (e.g. `crossprobe:03-conv.py`).
    pub origin: String,
    judged: u64,
}

impl<'p> Judge<'p> {
    /// A judge over `backends` (the reference, if listed, is the ground truth).
    pub fn new(pool: &'p mut Pool, backends: Vec<String>, tolerance: Tolerance) -> Judge<'p> {
        Judge {
            pool,
            triage: Triage::new(&backends, tolerance),
            backends,
            tolerance,
            input_seed: 1,
            seen_graphs: HashMap::new(),
            signatures: BTreeMap::new(),
            findings_dir: None,
            origin: String::new(),
            judged: 0,
        }
    }

    /// The backends graphs run on.
    pub fn backends(&self) -> &[String] {
        &self.backends
    }

    /// Judges one ONNX text graph.
    pub fn judge_text(&mut self, text: &str) -> Judged {
        let mut model = match mutagraph_ir::text::parse_model(text) {
            Ok(m) => m,
            Err(e) => {
                let mut j = Judged::new(Class::Syntax, e.to_string());
                j.text = Some(text.to_string());
                return j;
            }
        };
        let mut j = self.judge_model(&mut model);
        j.text = Some(text.to_string());
        j
    }

    /// Judges a parsed model.
    pub fn judge_model(&mut self, model: &mut Model) -> Judged {
        self.judged += 1;
        mutagraph_ir::infer::infer_model(model, Default::default());
        let op_types: Vec<String> = model.graph.nodes().map(|n| n.op_type.clone()).collect();
        let with_ops = |mut j: Judged| {
            j.op_types = op_types.clone();
            j
        };
        let untyped = mutagraph_ir::infer::declare_output_types(&mut model.graph);
        if !untyped.is_empty() {
            return with_ops(Judged::new(
                Class::Invalid,
                format!(
                    "graph output(s) {} declared without a type, and inference cannot find \
                     one: declare their element type and shape",
                    untyped.join(", ")
                ),
            ));
        }
        match mutagraph_ir::validate::validate_declared(model) {
            Err(e) => return with_ops(Judged::new(Class::Invalid, e.to_string())),
            // A case ONNX defines inconsistently or not at all (its checker accepts what its
            // operator text forbids): what backends do there is no bug, so such a test is
            // not one either.
            Ok(d) if !d.ambiguous.is_empty() => {
                return with_ops(Judged::new(
                    Class::Invalid,
                    format!(
                        "ONNX leaves this case open, so no backend can be wrong on it: {}",
                        d.ambiguous.join("; ")
                    ),
                ));
            }
            Ok(_) => {}
        }
        let canonical = mutagraph_ir::text::print_model(model);
        if let Some(&runs) = self.seen_graphs.get(&canonical) {
            let mut j = Judged::new(Class::Duplicate, "the same graph was judged before");
            j.runs = runs;
            return with_ops(j);
        }
        let j = with_ops(self.run_new(model));
        self.seen_graphs.insert(canonical, j.runs);
        j
    }

    /// Runs a valid model not judged before on every backend and judges the runs.
    fn run_new(&mut self, model: &Model) -> Judged {
        // Graph inputs, including weights declared without values, get generated values kept
        // in each reading op's domain.
        let ins = match inputs::generate(model, self.input_seed, &GenOptions::default()) {
            Ok(i) => i,
            Err(e) => return Judged::new(Class::Invalid, format!("inputs: {e}")),
        };
        let bytes = model.to_bytes();
        let mut runs = Vec::new();
        for b in &self.backends {
            match self.pool.run(b, &bytes, &ins) {
                Ok(r) => runs.push(r),
                Err(e) => {
                    return Judged::new(
                        Class::Invalid,
                        format!("backend '{b}' could not be started: {e}"),
                    );
                }
            }
        }
        let mr = MutantRuns {
            runs,
            reference: self.triage.reference_index(),
            reruns: Vec::new(),
            slow_baseline: Default::default(),
        };
        if mr.runs.iter().all(|r| r.outcome.outputs().is_none()) {
            let why: Vec<String> = mr
                .runs
                .iter()
                .map(|r| format!("{}: {}", r.backend, outcome_text(&r.outcome)))
                .collect();
            return Judged::new(
                Class::Invalid,
                format!("no backend runs it: {}", why.join("; ")),
            );
        }
        let mut findings: Vec<Finding> = Vec::new();
        let mut bundles = Vec::new();
        let mutant = Mutant::new(bytes);
        for t in self.triage.judge_mutant(self.pool, &mutant, &ins, &mr) {
            // Rounding, behaviour ONNX leaves open, our own failures: not bug candidates.
            if t.verdict != Verdict::Report {
                continue;
            }
            let (mut f, loc, native) = (t.finding, t.localization, t.native);
            let sig = f.signature();
            let hits = self.signatures.entry(sig.clone()).or_default();
            *hits += 1;
            if *hits == 1
                && let Some(dir) = &self.findings_dir
            {
                let seen = Seen {
                    iteration: self.judged,
                    elapsed_s: 0.0,
                };
                let entry = SigEntry::first(f.signature_id(), &f, seen);
                let bdir = dir.join(&entry.id);
                let found = Found {
                    finding: &f,
                    signature: &sig,
                    entry: &entry,
                    localization: loc.as_ref(),
                    model: &mutant,
                    inputs: &ins,
                    input_seed: self.input_seed,
                    runs: &mr,
                    native: native.as_ref(),
                    blamed_inputs: None,
                    seed: &self.origin,
                    seed_file: None,
                    derived_from: None,
                    whole_model: None,
                    iteration: self.judged,
                    trace: &[],
                    config: serde_json::json!({ "backends": self.backends, "origin": self.origin }),
                    tolerance: self.tolerance,
                };
                // A bundle that cannot be written is reported in the detail, not fatal.
                match bundle::write_new(&bdir, &found) {
                    Ok(()) => bundles.push(bdir),
                    Err(e) => f.message.push_str(&format!(" (bundle not written: {e:#})")),
                }
            }
            findings.push(f);
        }
        let mut j = if findings.is_empty() {
            Judged::new(Class::Valid, "every backend agrees")
        } else {
            let mut j = Judged::new(Class::Bug, describe(&findings));
            j.signatures = findings.iter().map(|f| f.signature()).collect();
            j.bundles = bundles;
            j
        };
        j.runs = true;
        j
    }
}

fn outcome_text(o: &mutagraph_backends::worker::Outcome) -> String {
    use mutagraph_backends::worker::Outcome as O;
    let short = |m: &str| m.chars().take(300).collect::<String>();
    match o {
        O::Unsupported { message, .. } | O::Error { message, .. } => {
            format!("{}: {}", o.status(), short(message))
        }
        O::Crash { message, .. } | O::OutOfMemory { message, .. } => {
            format!("{}: {}", o.status(), short(message))
        }
        _ => o.status().to_string(),
    }
}

fn describe(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| {
            format!(
                "{} on {}: {}",
                f.kind.name(),
                f.backends.join("+"),
                f.message
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// One exchange of a loop.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Round {
    /// 0 for the first answer, then the repair rounds.
    pub round: u32,
    /// The model's answer (empty when the request failed).
    pub answer: String,
    /// Its judgement (`None` when the request failed).
    pub judged: Option<Judged>,
    /// The request's error, if it failed.
    pub error: Option<String>,
}

/// A whole loop: the first answer and its repairs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LoopResult {
    /// Every round.
    pub rounds: Vec<Round>,
}

impl LoopResult {
    /// The last judgement, if any request succeeded.
    pub fn last(&self) -> Option<&Judged> {
        self.rounds.iter().rev().find_map(|r| r.judged.as_ref())
    }
    /// The class of the last judgement.
    pub fn class(&self) -> Option<Class> {
        self.last().map(|j| j.class)
    }
}

/// Builds the repair request from (previous answer, error, round).
pub type RepairFn<'a> = dyn Fn(&str, &str, u32) -> Result<Vec<Message>> + 'a;

/// How an answer's graph is taken out of the text and how a repair is asked for.
pub struct LoopSpec<'a> {
    /// The first request's messages.
    pub first: Vec<Message>,
    /// Extracts the ONNX text from an answer.
    pub extract: &'a dyn Fn(&str) -> Option<String>,
    /// The repair messages for (previous answer, error, round).
    pub repair: &'a RepairFn<'a>,
    /// Sampling.
    pub temperature: f32,
    /// Seed of the first request (repairs use seed + round).
    pub seed: u64,
    /// Template id, recorded with the request.
    pub template: Option<String>,
    /// Most tokens per answer.
    pub max_tokens: u32,
    /// What every answer must look like (the task's grammar), when constrained.
    pub constraint: Option<Constraint>,
}

/// The temperature of round `round` (0: the first answer): the loop's own, then
/// [`REPAIR_TEMPERATURE_STEP`] more per repair, at most [`REPAIR_TEMPERATURE_MAX`] (never
/// lowered). Under a grammar a small model otherwise writes the graph it was told is wrong
/// again: at one temperature, 6 of the 14 repair answers of a SmolLM2 transfer run (8 of 10
/// in a generation run) repeated a graph already judged.
pub fn repair_temperature(base: f32, round: u32) -> f32 {
    if round == 0 || base.is_nan() {
        return base;
    }
    (base + REPAIR_TEMPERATURE_STEP * round as f32)
        .min(REPAIR_TEMPERATURE_MAX)
        .max(base)
}

/// See [`repair_temperature`].
pub const REPAIR_TEMPERATURE_STEP: f32 = 0.25;
/// See [`repair_temperature`].
pub const REPAIR_TEMPERATURE_MAX: f32 = 1.2;

/// Asks, judges, and repairs up to [`MAX_REPAIRS`] times.
pub fn run_loop(llm: &dyn Llm, spec: &LoopSpec<'_>, judge: &mut Judge<'_>) -> LoopResult {
    let mut rounds = Vec::new();
    let mut messages = spec.first.clone();
    for round in 0..=MAX_REPAIRS {
        let req = ChatRequest {
            messages: messages.clone(),
            temperature: repair_temperature(spec.temperature, round),
            seed: Some(spec.seed + u64::from(round)),
            max_tokens: Some(spec.max_tokens),
            template: spec.template.clone(),
            constraint: spec.constraint.clone(),
        };
        let answer = match llm.chat(&req) {
            Ok(a) => a.content,
            Err(e) => {
                rounds.push(Round {
                    round,
                    answer: String::new(),
                    judged: None,
                    error: Some(e.to_string()),
                });
                break;
            }
        };
        let judged = match (spec.extract)(&answer) {
            Some(text) => judge.judge_text(&text),
            None => Judged::new(
                Class::Syntax,
                "the answer holds no ONNX text graph (expected a ```onnx fenced block)",
            ),
        };
        let repair = judged.class.repairable() && round < MAX_REPAIRS;
        let err = judged.detail.clone();
        rounds.push(Round {
            round,
            answer: answer.clone(),
            judged: Some(judged),
            error: None,
        });
        if !repair {
            break;
        }
        match (spec.repair)(&answer, &err, round + 1) {
            Ok(m) => {
                // The conversation so far, then the repair request.
                messages.push(Message::assistant(answer));
                messages.extend(m.into_iter().filter(|m| m.role != Role::System));
            }
            Err(_) => break,
        }
    }
    LoopResult { rounds }
}

#[cfg(test)]
mod tests {
    use super::repair_temperature;

    #[test]
    fn repairs_sample_hotter() {
        assert_eq!(repair_temperature(0.7, 0), 0.7);
        assert_eq!(repair_temperature(0.7, 1), 0.95);
        assert_eq!(repair_temperature(0.7, 3), 1.2);
        assert_eq!(repair_temperature(0.0, 2), 0.5);
        // Never lowered: a run hotter than the cap keeps its temperature.
        assert_eq!(repair_temperature(1.5, 2), 1.5);
    }
}
