//! Bug bundles: one directory per finding signature under `findings/`.
//!
//! `original.onnx`, `inputs.npz` + `inputs/input_<i>.pb`, `outputs/<backend>/output_<i>.pb`,
//! `expected.npz` (the f64 reference), `expected_native.npz` (the reference in the model's own
//! float types, for numeric findings), `actual.npz` (the faulty library), `meta.json`,
//! `repro.py` (runs the library itself), `snippet.py` (a few lines of `onnx.helper` and the
//! library's API), `repro/` (burn: a cargo project calling burn's tensor API), `REPORT.md`;
//! after minimization also `minimized.onnx` with `minimized_*` values, and the documents then
//! describe the minimized model.
//!
//! A new bundle is written in a temporary directory renamed into place; later files are
//! written atomically, `meta.json` last. The documents are rendered from the files on disk
//! ([`render_docs`]); `meta.json` follows every hit, the documents (whose rendering reads and
//! types the whole model) at most every [`DOCS_EVERY`] and at the end of a session.
mod docs;
mod files;
mod meta;
pub mod upstream;

use crate::minimizer::{Done, MinimizedInfo};
pub use docs::{describe_model, render_docs, render_docs_of};
use files::*;
use meta::*;
pub use meta::{DerivedFrom, Meta, Reproduce, RunLine};

use crate::environment::{self, Environment};
use crate::findings::{Seen, SigEntry};
use crate::persisted::Versioned;
use anyhow::{Context, Result};
use mutagraph_backends::backend::Stage;
use mutagraph_backends::catalog::{self, Library};
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::value::{HostTensor, NamedValues, Value};
use mutagraph_ir::Model;
use mutagraph_ir::model::write_atomic;
use mutagraph_mutators::mutation::Record;
use mutagraph_oracles::bundle::describe::{focus, shown_values, trigger_facts};
use mutagraph_oracles::bundle::snippet::{Api, python_snippet};
use mutagraph_oracles::bundle::{
    BackendStatus, Comparison, Minimization, ModelDescription, NodeLine, Provenance, ReportSpec,
    ReproSpec, ValueLine, render_report_md, render_repro_py,
};
use mutagraph_oracles::envelope::Precision;
use mutagraph_oracles::localize::Localization;
use mutagraph_oracles::{Blame, Finding, Kind, Layer, Mutant, MutantRuns, key_phrase};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A bundle's documents are renewed for new hits at most this often during a campaign.
pub const DOCS_EVERY: Duration = Duration::from_secs(60);

/// A new finding, as the campaign knows it.
pub struct Found<'a> {
    /// The finding.
    pub finding: &'a Finding,
    /// Its signature.
    pub signature: &'a str,
    /// The dedup record.
    pub entry: &'a SigEntry,
    /// Localization.
    pub localization: Option<&'a Localization>,
    /// The mutant (its typed model and precision, when the triage computed them).
    pub model: &'a Mutant,
    /// Its inputs.
    pub inputs: &'a NamedValues,
    /// Their seed.
    pub input_seed: u64,
    /// The runs.
    pub runs: &'a MutantRuns,
    /// The native-precision reference's outputs, when computed.
    pub native: Option<&'a NamedValues>,
    /// The library's own values of the blamed node's inputs, when the node alone showed the
    /// finding on them (`blamed_inputs.npz`).
    pub blamed_inputs: Option<&'a NamedValues>,
    /// Seed model name.
    pub seed: &'a str,
    /// Its file under the campaign's `seeds/`.
    pub seed_file: Option<&'a str>,
    /// The user's seed it was derived from, if it was.
    pub derived_from: Option<&'a DerivedFrom>,
    /// What the finding's mutations showed on the user's whole model, when checked.
    pub whole_model: Option<String>,
    /// Iteration.
    pub iteration: u64,
    /// Mutation trace from the seed.
    pub trace: &'a [Record],
    /// The campaign configuration.
    pub config: serde_json::Value,
    /// The tolerance.
    pub tolerance: Tolerance,
}

/// Removes what [`write_new`] left of a bundle it could not finish (its temporary directory).
pub fn discard_new(dir: &Path) {
    let _ = std::fs::remove_dir_all(tmp_dir(dir));
}

/// The directory [`write_new`] fills before renaming it to `dir`.
fn tmp_dir(dir: &Path) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.with_file_name(format!(".tmp-{name}"))
}

/// A new bundle, written in a temporary directory renamed to `dir`.
pub fn write_new(dir: &Path, f: &Found) -> Result<()> {
    let tmp = tmp_dir(dir);
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).with_context(|| format!("removing {}", tmp.display()))?;
    }
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    w(&tmp.join("original.onnx"), f.model.bytes())?;
    let faulty = f.finding.backends[0].as_str();
    write_values(&tmp, "", f.inputs, f.runs, f.native, faulty)?;
    write_blamed_inputs(&tmp, "", f.blamed_inputs)?;
    let meta = Meta {
        version: Meta::VERSION,
        id: f.entry.id.clone(),
        signature: f.signature.to_string(),
        kind: f.finding.kind,
        backends: f.finding.backends.clone(),
        library: catalog::library(faulty).display().to_string(),
        layer: f.finding.layer,
        stage: f.finding.stage,
        symptom: f.finding.symptom.clone(),
        op_type: f.finding.op_type().map(String::from),
        message: f.finding.message.clone(),
        hits: f.entry.hits,
        first_seen: f.entry.first_seen.clone(),
        last_seen: f.entry.last_seen.clone(),
        variants_seen: f.entry.variants.clone(),
        ops_seen: f.entry.ops.clone(),
        finding: f.finding.clone(),
        localization: f.localization.cloned(),
        minimized: None,
        minimized_runs: Vec::new(),
        minimized_finding: None,
        seed: f.seed.to_string(),
        seed_file: f.seed_file.map(String::from),
        derived_from: f.derived_from.cloned(),
        whole_model: f.whole_model.clone(),
        iteration: f.iteration,
        input_seed: f.input_seed,
        operators: f.trace.iter().map(|r| r.operator.clone()).collect(),
        trace: f.trace.to_vec(),
        backend_versions: f
            .runs
            .runs
            .iter()
            .map(|r| (r.backend.clone(), r.version.clone()))
            .collect(),
        runs: run_lines(f.runs),
        tolerance: f.tolerance.name.to_string(),
        reproduce: reproduce_info(f.finding, &f.model.precision(f.tolerance), f.runs),
        environment: environment::current().clone(),
        config: f.config.clone(),
        triage: None,
        root_signature: None,
        trigger: Vec::new(),
        aliases: Vec::new(),
        merged_into: None,
        not_shown_again: None,
        upstream: None,
    };
    render_docs_of(&tmp, &meta, f.model.model())?;
    write_json(&tmp.join("meta.json"), &meta)?;
    if dir.exists() {
        // A bundle of an iteration a kill kept from being committed: this one replaces it.
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::rename(&tmp, dir).with_context(|| format!("renaming {}", tmp.display()))
}

/// Reads a bundle's `meta.json`: one of a newer format version is refused; an older one reads
/// with defaults for what it lacks and is brought to the current version (written so when
/// next saved).
pub fn read_meta(dir: &Path) -> Result<Meta> {
    let p = dir.join("meta.json");
    let text = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
    let mut meta: Meta =
        crate::persisted::from_json(&text).with_context(|| format!("parsing {}", p.display()))?;
    meta.version = Meta::VERSION;
    Ok(meta)
}

/// Updates hit counts, variants, ops and last-seen time, and renders the documents again.
pub fn update_hits(dir: &Path, e: &SigEntry) -> Result<()> {
    let mut meta = read_meta(dir)?;
    meta.hits = e.hits;
    meta.last_seen = e.last_seen.clone();
    meta.variants_seen = e.variants.clone();
    meta.ops_seen = e.ops.clone();
    meta.aliases = e.aliases.clone();
    write_json(&dir.join("meta.json"), &meta)
}

/// Renders a bundle's documents again from its files (after [`update_hits`]: the hits they
/// show).
pub fn renew_docs(dir: &Path) -> Result<()> {
    render_docs(dir, &read_meta(dir)?)
}

/// Marks a bundle as merged into the bundle `into` (same root cause, `root`).
pub fn note_merged(dir: &Path, into: &str, root: &str) -> Result<()> {
    let mut meta = read_meta(dir)?;
    meta.merged_into = Some(into.to_string());
    meta.root_signature = Some(root.to_string());
    write_json(&dir.join("meta.json"), &meta)
}

/// Records in a bundle's `meta.json` that a fresh run of its model and inputs did not show
/// the finding, and what that run showed instead.
pub fn note_not_shown(dir: &Path, shown: &[String]) -> Result<()> {
    let mut meta = read_meta(dir)?;
    meta.not_shown_again = Some(shown.to_vec());
    write_json(&dir.join("meta.json"), &meta)
}

/// Searches the library's issue tracker for a bundle ([`upstream`]) through `api`, records
/// the search in its `meta.json` and renders its documents again. `None` when its library has
/// no tracker here.
pub fn note_upstream(
    dir: &Path,
    api: &str,
    timeout: std::time::Duration,
) -> Result<Option<upstream::Search>> {
    let mut meta = read_meta(dir)?;
    let Some(query) = upstream::query(&meta) else {
        return Ok(None);
    };
    let found = upstream::search(api, &query, timeout);
    meta.upstream = Some(found.clone());
    render_docs(dir, &meta)?;
    write_json(&dir.join("meta.json"), &meta)?;
    Ok(Some(found))
}

/// Files a minimization result.
pub fn write_minimized(dir: &Path, d: &Done) -> Result<()> {
    let mut meta = read_meta(dir)?;
    w(&dir.join("minimized.onnx"), &d.model)?;
    write_values(
        dir,
        "minimized_",
        &d.inputs,
        &d.runs,
        d.native.as_ref(),
        &meta.backends[0],
    )?;
    write_blamed_inputs(dir, "minimized_", d.blamed_inputs.as_ref())?;
    meta.minimized = Some(d.info.clone());
    meta.minimized_runs = run_lines(&d.runs);
    meta.minimized_finding = Some(d.finding.clone());
    meta.trigger = d.finding.trigger.clone();
    meta.root_signature = Some(d.finding.root_signature());
    if d.whole_model.is_some() {
        meta.whole_model = d.whole_model.clone();
    }
    let tol = Tolerance::by_name(&meta.tolerance).unwrap_or(Tolerance::APPROXIMATE);
    let minimized = Mutant::new(d.model.clone());
    let mut repro = reproduce_info(&d.finding, &minimized.precision(tol), &d.runs);
    if repro.expect_error.is_none() {
        repro.expect_error = meta.reproduce.expect_error.clone();
    }
    meta.reproduce = repro;
    render_docs_of(dir, &meta, minimized.model())?;
    write_json(&dir.join("meta.json"), &meta)
}

/// Writes a sample bundle into `parent` (an ONNX Runtime inconsistency localized at a Relu,
/// seen at iteration 3), as the campaign writes one; returns its directory, id and signature.
#[cfg(test)]
pub(crate) fn sample(parent: &Path) -> (PathBuf, String, String) {
    use crate::findings::{Seen as FoundAt, SigEntry};
    use mutagraph_backends::compare::Tolerance;
    use mutagraph_backends::value::{Data, HostTensor, Value as V};
    use mutagraph_backends::worker::{Outcome, RunReport};
    use mutagraph_oracles::finding::Location;
    use serde_json::json;
    let t = |v: &[f32]| V::Tensor(HostTensor::new(vec![v.len()], Data::F32(v.to_vec())));
    let run = |backend: &str, v: &[f32]| RunReport {
        backend: backend.into(),
        version: "1".into(),
        outcome: Outcome::Ok(vec![("y".into(), t(v))]),
        wall_ms: 1.0,
        prepare_ms: 0.0,
        run_ms: 1.0,
        peak_rss: 0,
        cached: false,
        rewrites: Vec::new(),
    };
    let model = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[3] x) => (float[3] y) { y = Relu (x) }",
    )
    .unwrap()
    .to_bytes();
    let runs = MutantRuns {
        runs: vec![
            run("reference", &[0.0, 1.0, 3.0]),
            run("ort", &[5.0, 1.0, 3.0]),
        ],
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    let mut f = Finding::new(Kind::Inconsistency, "ort", "values", "output 'y'".into());
    f.location = Some(Location {
        op_type: "Relu".into(),
        value: "y".into(),
        attrs: String::new(),
    });
    f.layer = Some(Layer::Kernel);
    let at = FoundAt {
        iteration: 3,
        elapsed_s: 1.5,
    };
    let entry = SigEntry::first("inconsistency-ort-relu-00000000".into(), &f, at);
    let b = parent.join(&entry.id);
    let sig = f.signature();
    write_new(
        &b,
        &Found {
            finding: &f,
            signature: &sig,
            entry: &entry,
            localization: None,
            model: &mutagraph_oracles::Mutant::new(model),
            inputs: &vec![("x".to_string(), t(&[-1.0, 1.0, 3.0]))],
            input_seed: 0,
            seed_file: None,
            derived_from: None,
            whole_model: None,
            runs: &runs,
            native: None,
            blamed_inputs: None,
            seed: "zoo:test",
            iteration: 3,
            trace: &[],
            config: json!({"backends": ["reference", "ort"]}),
            tolerance: Tolerance::APPROXIMATE,
        },
    )
    .unwrap();
    (b, entry.id, sig)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meta_json_of_a_newer_version_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("meta.json");
        std::fs::write(&p, format!(r#"{{"version": {}}}"#, Meta::VERSION + 1)).unwrap();
        let e = format!("{:#}", read_meta(dir.path()).unwrap_err());
        assert!(e.contains(&p.display().to_string()), "{e}");
        assert!(e.contains("newer"), "{e}");
    }
}
