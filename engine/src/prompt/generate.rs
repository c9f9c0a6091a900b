//! `mutagraph prompt generate`: YANHUI over the knowledge base (the shipped cases, plus the
//! findings of campaigns given with `--findings`). Each generation shows 2-5 examples of one
//! cluster with the six mutation rules; the answer goes through the validation loop. An answer
//! is relevant when it is valid and its graph holds one of the cluster's ONNX ops.
use super::judge::{Judge, Judged, LoopSpec};
use super::metrics::{Metrics, Target};
use super::session::{self, RunReport, template_id};
use anyhow::{Result, anyhow, bail};
use mutagraph_prompts::crossprobe::{extract_onnx_text, repair_prompt};
use mutagraph_prompts::llm::{Llm, Message};
use mutagraph_prompts::yanhui::{self, Cluster, KnowledgeBase, THRESHOLD};
use std::path::PathBuf;

/// The knowledge base: the shipped cases and the findings of the given directories.
pub fn knowledge(findings: &[PathBuf]) -> Result<KnowledgeBase> {
    let mut kb = KnowledgeBase::builtin().map_err(|e| anyhow!("{e}"))?;
    for d in findings {
        let n = kb.load_findings(d).map_err(|e| anyhow!("{e}"))?;
        eprintln!("{}: {n} findings added to the knowledge base", d.display());
    }
    Ok(kb)
}

/// The clusters to generate from: the one asked for, else every cluster with 2+ members.
pub fn chosen(kb: &KnowledgeBase, cluster: Option<&str>) -> Result<Vec<Cluster>> {
    let all = yanhui::cluster(kb, THRESHOLD);
    match cluster {
        Some(id) => match all.iter().find(|c| c.id == id) {
            Some(c) => Ok(vec![c.clone()]),
            None => bail!(
                "no cluster '{id}'; `mutagraph prompt clusters` lists them ({})",
                all.iter()
                    .take(8)
                    .map(|c| c.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        None => {
            let v: Vec<Cluster> = yanhui::usable(&all, 2).into_iter().cloned().collect();
            if v.is_empty() {
                bail!("no cluster has two or more cases");
            }
            Ok(v)
        }
    }
}

/// Prints the clusters.
pub fn print_clusters(kb: &KnowledgeBase) -> anyhow::Result<()> {
    let all = yanhui::cluster(kb, THRESHOLD);
    crate::outln!(
        "{} cases, {} clusters at threshold {THRESHOLD} ({} with 2+ cases)",
        kb.cases().len(),
        all.len(),
        yanhui::usable(&all, 2).len()
    );
    for c in &all {
        crate::outln!(
            "{:<14} {} case(s): {}  ops: {}",
            c.id,
            c.members.len(),
            c.members.join(", "),
            yanhui::cluster_ops(c, kb).join(", ")
        );
    }
    Ok(())
}

/// The prompt of generation `i`.
pub fn messages(
    clusters: &[Cluster],
    kb: &KnowledgeBase,
    i: usize,
    examples: usize,
    seed: u64,
) -> Result<Vec<Message>> {
    let c = &clusters[i % clusters.len()];
    yanhui::generate_prompt(c, kb, examples, seed.wrapping_add(i as u64))
        .map_err(|e| anyhow!("{e}"))
}

/// Runs `n` generations and returns the report.
#[allow(clippy::too_many_arguments)]
pub fn run(
    llm: &dyn Llm,
    kb: &KnowledgeBase,
    clusters: &[Cluster],
    n: usize,
    examples: usize,
    judge: &mut Judge<'_>,
    sampling: session::Sampling,
) -> Result<RunReport> {
    let seed = sampling.seed;
    let mut cases = Vec::new();
    for i in 0..n {
        let c = &clusters[i % clusters.len()];
        eprintln!("[{}/{n}] cluster {}", i + 1, c.id);
        let first = messages(clusters, kb, i, examples, seed)?;
        let extract = |a: &str| extract_onnx_text(a);
        let repair = |prev: &str, err: &str, round: u32| -> Result<Vec<Message>> {
            repair_prompt(prev, err, round).map_err(|e| anyhow!("{e}"))
        };
        let case_name = format!("yanhui:{}#{i}", c.id);
        let (constraint, grammar_ops) = session::task_constraint(
            yanhui::generation_task(&yanhui::cluster_ops(c, kb)),
            &case_name,
        );
        let spec = LoopSpec {
            first,
            extract: &extract,
            repair: &repair,
            temperature: sampling.temperature,
            max_tokens: sampling.max_tokens,
            seed: seed.wrapping_add(100 * i as u64),
            constraint,
            template: Some(template_id("yanhui-generate")?),
        };
        let ops = yanhui::cluster_ops(c, kb);
        let keeps = |j: &Judged| yanhui::relevant(&ops, j.runs, &j.op_types);
        let mut report = session::run_case(llm, &spec, judge, &case_name, &keeps);
        report.grammar_ops = grammar_ops;
        cases.push(report);
    }
    let metrics = Metrics::of(&cases, judge.signatures.len() as u64, Target::Relevant);
    Ok(RunReport {
        command: "generate".into(),
        llm: llm.name(),
        seed,
        backends: judge.backends().to_vec(),
        metrics,
        cases,
    })
}
