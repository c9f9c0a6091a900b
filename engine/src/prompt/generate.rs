//! `mutagraph prompt generate`: YANHUI over the knowledge base (the shipped cases, plus the
//! findings of campaigns given with `--findings`). Each generation shows 2-5 examples of one
//! cluster with the six mutation rules; the answer goes through the validation loop. An answer
//! is relevant when it is valid and its graph holds one of the cluster's ONNX ops.
use super::judge::{Judge, Judged};
use super::metrics::{Metrics, Target};
use super::session::{self, RunReport, Sampling};
use anyhow::{Context, Result, anyhow, bail};
use mutagraph_prompts::llm::{Llm, Message};
use mutagraph_prompts::yanhui::{self, Cluster, KnowledgeBase, THRESHOLD};
use std::path::{Path, PathBuf};

/// The knowledge base: the shipped cases and the findings of the given directories.
pub fn knowledge(findings: &[PathBuf]) -> Result<KnowledgeBase> {
    let mut kb = KnowledgeBase::builtin().map_err(|e| anyhow!("{e}"))?;
    for d in findings {
        let n = add_findings(&mut kb, d)?;
        eprintln!("{}: {n} findings added to the knowledge base", d.display());
    }
    Ok(kb)
}

/// Adds the findings of a campaign (or `prompt` run) directory to `kb`: each bug bundle under
/// `findings/` (or under `dir` when it is the findings folder itself), read by the bundle's
/// own reader, with the text of its model (the minimized one when there is one). Returns how
/// many were added; a bundle that cannot be read is an error naming its `meta.json`.
pub fn add_findings(kb: &mut KnowledgeBase, dir: &Path) -> Result<usize> {
    let root = if dir.join("findings").is_dir() {
        dir.join("findings")
    } else {
        dir.to_path_buf()
    };
    let rd = std::fs::read_dir(&root).with_context(|| format!("reading {}", root.display()))?;
    let mut dirs: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    dirs.sort();
    let mut n = 0;
    for d in dirs.iter().filter(|d| d.join("meta.json").is_file()) {
        let meta = crate::bundle::read_meta(d)?;
        let model = ["minimized.onnx", "original.onnx"]
            .iter()
            .map(|f| d.join(f))
            .find(|f| f.is_file())
            .and_then(|f| mutagraph_ir::Model::load(&f).ok())
            .map(|m| mutagraph_ir::text::print_model(&m));
        let case = yanhui::case_from_finding(&facts(&meta), model.as_deref())
            .with_context(|| format!("{}", d.join("meta.json").display()))?;
        kb.add(case);
        n += 1;
    }
    Ok(n)
}

/// What YANHUI builds a case from, of a bundle.
fn facts(meta: &crate::bundle::Meta) -> yanhui::FindingFacts {
    yanhui::FindingFacts {
        id: meta.id.clone(),
        kind: meta.kind.name().to_string(),
        project: meta.reproduce.library.clone(),
        backends: meta.backends.clone(),
        stage: meta.stage.map(|s| s.to_string()).unwrap_or_default(),
        op_type: meta.op_type.clone(),
        symptom: meta.symptom.clone(),
        message: meta.message.clone(),
        hits: meta.hits,
    }
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
        let ops = yanhui::cluster_ops(c, kb);
        let case = session::TextCase {
            first: messages(clusters, kb, i, examples, seed)?,
            task: yanhui::generation_task(&ops),
            name: format!("yanhui:{}#{i}", c.id),
            sampling: Sampling {
                seed: seed.wrapping_add(100 * i as u64),
                ..sampling
            },
            template: "yanhui-generate",
        };
        let keeps = |j: &Judged| yanhui::relevant(&ops, j.runs, &j.op_types);
        cases.push(session::run_text_case(llm, judge, case, &keeps)?);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundles_join_the_knowledge_base_and_a_broken_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let findings = dir.path().join("findings");
        let (bundle, id, _) = crate::bundle::sample(&findings);
        let mut kb = KnowledgeBase::builtin().unwrap();
        let before = kb.cases().len();
        assert_eq!(add_findings(&mut kb, dir.path()).unwrap(), 1);
        let case = &kb.cases()[before];
        assert_eq!(case.id, format!("finding-{id}"));
        // The library's project name, as the shipped cases name it (not the backend's).
        assert_eq!(case.project, "onnxruntime");
        assert_eq!(case.apis, vec!["onnx.op.Relu", "onnxruntime.run"]);
        assert!(case.model.contains("Relu"), "{}", case.model);
        // The findings folder itself works too.
        assert_eq!(add_findings(&mut kb, &findings).unwrap(), 1);
        let bad = findings.join("crash-x");
        std::fs::create_dir_all(&bad).unwrap();
        std::fs::write(bad.join("meta.json"), "{not json").unwrap();
        let e = format!("{:#}", add_findings(&mut kb, dir.path()).unwrap_err());
        assert!(e.contains("crash-x/meta.json"), "{e}");
        assert!(bundle.join("meta.json").is_file());
    }
}
