//! What every generating `prompt` command shares: the judge over the backends, one loop per
//! case, the run's report (`<out>/<command>-report.json`, written atomically) and the summary
//! printed at the end.
use super::judge::{Judge, Judged, LoopResult, LoopSpec, run_loop};
use super::metrics::{CaseReport, Metrics};
use anyhow::{Context, Result};
use mutagraph_prompts::crossprobe;
use mutagraph_prompts::grammar::onnx_text::{self, Task};
use mutagraph_prompts::llm::{Constraint, Llm, Message};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How answers are sampled.
#[derive(Clone, Copy, Debug)]
pub struct Sampling {
    /// Seed of the first request.
    pub seed: u64,
    pub temperature: f32,
    /// Most tokens per answer.
    pub max_tokens: u32,
}

/// The report of one run of a generating command.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunReport {
    /// `transfer` or `generate`.
    pub command: String,
    /// The model that answered (`provider:model`).
    pub llm: String,
    /// Seed of the first request.
    pub seed: u64,
    /// Backends the graphs ran on.
    pub backends: Vec<String>,
    /// Totals.
    pub metrics: Metrics,
    /// Every case.
    pub cases: Vec<CaseReport>,
}

/// One case whose answer is ONNX text: what is asked first, the task whose grammar constrains
/// the answers (`None`: unconstrained), the case's name, the sampling with this case's seed,
/// and the prompt template it comes from.
pub struct TextCase<'a> {
    pub first: Vec<Message>,
    pub task: Option<Task>,
    pub name: String,
    pub sampling: Sampling,
    pub template: &'a str,
}

/// Runs the loop for a [`TextCase`]: answers extracted and repaired as CrossProbe's prompts
/// say, constrained by the task's grammar when it has one; `on_target` as in [`run_case`].
pub fn run_text_case(
    llm: &dyn Llm,
    judge: &mut Judge<'_>,
    case: TextCase<'_>,
    on_target: &dyn Fn(&Judged) -> bool,
) -> Result<CaseReport> {
    let extract = |a: &str| crossprobe::extract_onnx_text(a);
    let repair = |prev: &str, err: &str, round: u32| -> Result<Vec<Message>> {
        crossprobe::repair_prompt(prev, err, round).map_err(|e| anyhow::anyhow!("{e}"))
    };
    let (constraint, grammar_ops) = task_constraint(case.task, &case.name);
    let spec = LoopSpec {
        first: case.first,
        extract: &extract,
        repair: &repair,
        temperature: case.sampling.temperature,
        max_tokens: case.sampling.max_tokens,
        seed: case.sampling.seed,
        constraint,
        template: Some(template_id(case.template)?),
    };
    let mut report = run_case(llm, &spec, judge, &case.name, on_target);
    report.grammar_ops = grammar_ops;
    Ok(report)
}

/// Runs the loop for one case and reports it; `on_target` says whether an answer keeps what
/// the case is about (functionality-preserving, relevant: [`super::metrics`]).
pub fn run_case(
    llm: &dyn Llm,
    spec: &LoopSpec<'_>,
    judge: &mut Judge<'_>,
    case: &str,
    on_target: &dyn Fn(&Judged) -> bool,
) -> CaseReport {
    judge.origin = case.to_string();
    let result: LoopResult = run_loop(llm, spec, judge);
    let on_target = result
        .rounds
        .iter()
        .map(|r| r.judged.as_ref().is_some_and(on_target))
        .collect();
    CaseReport {
        case: case.to_string(),
        skipped: None,
        result: Some(result),
        on_target,
        grammar_ops: None,
    }
}

/// The constraint of a case's grammar task, and the ops it holds; `(None, None)` when the
/// case has no task (no op with a grammar) or its grammar cannot be built (said on stderr:
/// the case is then asked unconstrained).
pub fn task_constraint(
    task: Option<Task>,
    case: &str,
) -> (Option<Constraint>, Option<Vec<String>>) {
    let Some(task) = task else {
        eprintln!("  {case}: no op of this case has a grammar; asked unconstrained");
        return (None, None);
    };
    match onnx_text::grammar(&task).and_then(|g| Constraint::grammar(&g)) {
        Ok(c) => (Some(c), Some(task.ops)),
        Err(e) => {
            eprintln!("  {case}: no grammar ({e}); asked unconstrained");
            (None, None)
        }
    }
}

/// The id (`name.vN`) of the newest version of a prompt template, recorded with requests.
pub fn template_id(name: &str) -> Result<String> {
    Ok(mutagraph_prompts::template::get(name)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .id())
}

/// A case that was not sent to the model, with the reason.
pub fn skipped(case: &str, why: String) -> CaseReport {
    CaseReport {
        case: case.to_string(),
        skipped: Some(why),
        result: None,
        on_target: Vec::new(),
        grammar_ops: None,
    }
}

/// One line per case, then the totals.
pub fn print_summary(report: &RunReport) -> anyhow::Result<()> {
    for c in &report.cases {
        let what = match (&c.skipped, &c.result) {
            (Some(why), _) => format!("skipped: {why}"),
            (None, Some(r)) => {
                let class = r
                    .class()
                    .map(|c| format!("{c:?}").to_lowercase())
                    .unwrap_or_else(|| "no answer".into());
                let detail = r
                    .last()
                    .map(|j| first_line(&j.detail))
                    .or_else(|| r.rounds.last().and_then(|x| x.error.clone()))
                    .unwrap_or_default();
                format!(
                    "{class} after {} round(s){}{}",
                    r.rounds.len(),
                    if c.final_on_target() {
                        format!(", {}", report.metrics.target.name().replace('_', "-"))
                    } else {
                        String::new()
                    },
                    if detail.is_empty() {
                        String::new()
                    } else {
                        format!(": {detail}")
                    }
                )
            }
            (None, None) => "not run".into(),
        };
        crate::outln!("{:<40} {what}", c.case);
    }
    let m = &report.metrics;
    crate::outln!(
        "\n{} cases ({} screened out, {} sent): {} outputs, {} request errors, {} unique bugs\n",
        m.cases,
        m.screened_out,
        m.sent,
        m.outputs,
        m.request_errors,
        m.unique_bugs
    );
    crate::outln!("{}", m.table().trim_end());
    Ok(())
}

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("");
    if l.chars().count() > 100 {
        format!("{}...", l.chars().take(100).collect::<String>())
    } else {
        l.to_string()
    }
}

/// Writes `<out>/<command>-report.json` atomically and returns its path.
pub fn write_report(out: &Path, report: &RunReport) -> Result<PathBuf> {
    write_json(out, &format!("{}-report.json", report.command), report)
}

/// Writes `value` as pretty JSON to `<out>/<file>` atomically (temp file + rename), creating
/// `out`; returns the path.
pub fn write_json<T: Serialize>(out: &Path, file: &str, value: &T) -> Result<PathBuf> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let path = out.join(file);
    let text = serde_json::to_string_pretty(value)?;
    mutagraph_ir::model::write_atomic(&path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}
