//! `mutagraph prompt transfer`: CrossProbe over bug snippets. Each snippet (a Python file or a
//! markdown issue) is screened against the alignment database and the backends under test;
//! a transferable one gets the distinction prompt, and the answer's ONNX text goes through the
//! validation loop (repairs included). An answer is functionality-preserving when it is valid
//! and its graph holds an ONNX op aligned with one of the snippet's kept calls.
use super::judge::{Judge, Judged};
use super::metrics::{CaseReport, Metrics, Target};
use super::session::{self, RunReport, Sampling};
use anyhow::{Context, Result, anyhow, bail};
use mutagraph_prompts::crossprobe::{self, AlignmentDb, Screening, Snippet, SupportSource};
use mutagraph_prompts::llm::{Llm, Message};
use std::path::{Path, PathBuf};

/// The snippet files named on the command line: files as given, directories expanded to their
/// `.py` and `.md` files in name order.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("reading {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && f.extension().is_some_and(|e| e == "py" || e == "md"))
                .collect();
            files.sort();
            if files.is_empty() {
                bail!("{}: no .py or .md snippets in this directory", p.display());
            }
            out.extend(files);
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            bail!("{}: no such file or directory", p.display());
        }
    }
    Ok(out)
}

/// The backend families (`ort`, `tract`, `burn`) the screening may count on: those of the
/// backends under test.
pub fn families(backends: &[String]) -> Vec<String> {
    let mut f: Vec<String> = backends
        .iter()
        .filter_map(|b| {
            ["ort", "tract", "burn"]
                .into_iter()
                .find(|fam| b == fam || b.starts_with(&format!("{fam}-")))
                .map(str::to_string)
        })
        .collect();
    f.sort();
    f.dedup();
    f
}

/// The support table restricted to `families`.
pub struct Restricted<'a> {
    inner: &'a dyn SupportSource,
    families: Vec<String>,
}

impl<'a> Restricted<'a> {
    /// Support of `inner`, keeping only the given backend families.
    pub fn new(inner: &'a dyn SupportSource, families: Vec<String>) -> Self {
        Restricted { inner, families }
    }
}

impl SupportSource for Restricted<'_> {
    fn backends(&self, op: &str) -> Vec<String> {
        self.inner
            .backends(op)
            .into_iter()
            .filter(|b| self.families.iter().any(|f| f == b))
            .collect()
    }
}

/// One snippet, loaded and screened.
pub struct Prepared {
    /// The file name, used as the case name.
    pub case: String,
    pub snippet: Snippet,
    pub screening: Screening,
}

/// Loads and screens one snippet file.
pub fn prepare(path: &Path, db: &AlignmentDb, support: &dyn SupportSource) -> Result<Prepared> {
    let snippet = crossprobe::load(path).map_err(|e| anyhow!("{e}"))?;
    let screening = crossprobe::screen(&snippet, db, support);
    let case = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Ok(Prepared {
        case,
        snippet,
        screening,
    })
}

/// The first request of a prepared snippet.
pub fn first_messages(p: &Prepared, db: &AlignmentDb) -> Result<Vec<Message>> {
    crossprobe::transfer_prompt(&p.snippet, &p.screening, db).map_err(|e| anyhow!("{e}"))
}

/// Why a screened snippet is not sent.
pub fn screened_out(s: &Screening) -> String {
    let reasons: Vec<String> = s
        .dropped
        .iter()
        .map(|(c, why)| format!("{}: {why}", c.api))
        .collect();
    if reasons.is_empty() {
        "no call aligned with an ONNX op".into()
    } else {
        format!("nothing transferable ({})", reasons.join("; "))
    }
}

/// Runs the transfer of every snippet and returns the report.
pub fn run(
    llm: &dyn Llm,
    files: &[PathBuf],
    judge: &mut Judge<'_>,
    support: &dyn SupportSource,
    sampling: session::Sampling,
) -> Result<RunReport> {
    let seed = sampling.seed;
    let db = AlignmentDb::builtin().map_err(|e| anyhow!("{e}"))?;
    let mut cases: Vec<CaseReport> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let p = prepare(f, &db, support)?;
        eprintln!(
            "[{}/{}] {}: {} kept, {} dropped",
            i + 1,
            files.len(),
            p.case,
            p.screening.kept.len(),
            p.screening.dropped.len()
        );
        if !p.screening.transferable {
            cases.push(session::skipped(&p.case, screened_out(&p.screening)));
            continue;
        }
        let case = session::TextCase {
            first: first_messages(&p, &db)?,
            task: crossprobe::transfer_task(&p.snippet, &p.screening),
            name: format!("crossprobe:{}", p.case),
            sampling: Sampling {
                seed: seed.wrapping_add(100 * i as u64),
                ..sampling
            },
            template: "crossprobe-transfer",
        };
        let screening = &p.screening;
        let keeps =
            |j: &Judged| crossprobe::preserves_functionality(screening, j.runs, &j.op_types);
        let report = session::run_text_case(llm, judge, case, &keeps)?;
        cases.push(report);
    }
    let metrics = Metrics::of(
        &cases,
        judge.signatures.len() as u64,
        Target::FunctionalityPreserving,
    );
    Ok(RunReport {
        command: "transfer".into(),
        llm: llm.name(),
        seed,
        backends: judge.backends().to_vec(),
        metrics,
        cases,
    })
}
