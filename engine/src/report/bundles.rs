//! Bug bundles as the report sees them: each `findings/<id>/meta.json` read through
//! [`MetaView`], a typed view of [`Meta`] whose every field is optional and read on its own (a
//! field of an unexpected shape is only absent; a file of a newer format version than
//! [`Meta`]'s is refused), and what the report derives from it: the op a finding is blamed on
//! ([`Blame`]) and the triage's conclusions as tags.

use super::read::lenient;
use super::{DASH, ReportError};
use crate::bundle::Meta;
use crate::persisted::{self, FormatError, Versioned};
use mutagraph_oracles::Layer;
use mutagraph_oracles::finding::Location;
use mutagraph_oracles::localize::{Localization, Verdict};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// When a finding was seen.
#[derive(Clone, Debug, Default, Deserialize)]
pub(super) struct Seen {
    #[serde(default, deserialize_with = "lenient")]
    pub iteration: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub elapsed_s: Option<f64>,
}

impl Seen {
    pub fn text(&self) -> String {
        match (self.iteration, self.elapsed_s) {
            (None, None) => DASH.to_string(),
            (i, e) => format!(
                "iter {} · {}",
                i.map_or_else(|| DASH.to_string(), |i| i.to_string()),
                e.map_or_else(|| DASH.to_string(), |e| format!("{e:.1} s"))
            ),
        }
    }
}

/// The part of a finding (`finding`, `minimized_finding` in `meta.json`) the report uses.
#[derive(Clone, Debug, Default, Deserialize)]
pub(super) struct FindingView {
    #[serde(default, deserialize_with = "lenient")]
    location: Option<Location>,
    #[serde(default, deserialize_with = "lenient")]
    layer: Option<Layer>,
    #[serde(default, deserialize_with = "lenient")]
    gap: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    witnesses: Option<Vec<String>>,
    #[serde(default, deserialize_with = "lenient")]
    d_mad: Option<f64>,
    #[serde(default, deserialize_with = "lenient")]
    placed_by_message: Option<bool>,
    #[serde(default, deserialize_with = "lenient")]
    trigger: Option<Vec<String>>,
    #[serde(default, deserialize_with = "lenient")]
    message: Option<String>,
}

/// `minimized` of `meta.json` (`MinimizedInfo`), the fields the report uses.
#[derive(Clone, Debug, Default, Deserialize)]
pub(super) struct MinimizedView {
    #[serde(default, deserialize_with = "lenient")]
    nodes_before: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    nodes_after: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    op_type: Option<String>,
}

/// A bundle's `meta.json` ([`Meta`]) as the report reads it: the fields of [`Meta`] the
/// report uses, by the same names and of the same types (or their text), every one optional
/// and read on its own, so old bundles and hand-edited files still get a row. Its version is
/// [`Meta`]'s.
#[derive(Clone, Debug, Default, Deserialize)]
pub(super) struct MetaView {
    #[serde(default, deserialize_with = "lenient")]
    id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    signature: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    backends: Option<OneOrMany>,
    #[serde(default, deserialize_with = "lenient")]
    layer: Option<Layer>,
    #[serde(default, deserialize_with = "lenient")]
    stage: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    op_type: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    message: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    hits: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    first_seen: Option<Seen>,
    #[serde(default, deserialize_with = "lenient")]
    last_seen: Option<Seen>,
    #[serde(default, deserialize_with = "lenient")]
    ops_seen: Option<BTreeMap<String, u64>>,
    #[serde(default, deserialize_with = "lenient")]
    finding: Option<FindingView>,
    #[serde(default, deserialize_with = "lenient")]
    localization: Option<Localization>,
    /// Absent: unknown; `null`: pending.
    #[serde(default, deserialize_with = "lenient")]
    minimized: Option<Option<MinimizedView>>,
    #[serde(default, deserialize_with = "lenient")]
    minimized_finding: Option<FindingView>,
    #[serde(default, deserialize_with = "lenient")]
    triage: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    trigger: Option<Vec<String>>,
    #[serde(default, deserialize_with = "lenient")]
    aliases: Option<Vec<String>>,
    #[serde(default, deserialize_with = "lenient")]
    merged_into: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    not_shown_again: Option<Vec<String>>,
}

impl Versioned for MetaView {
    const VERSION: u32 = Meta::VERSION;
}

/// A list that an old file may hold as one string.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    Many(Vec<String>),
    One(String),
}

/// What minimization did, as shown.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Minimized {
    /// `meta.json` does not say.
    Unknown,
    /// Not minimized yet.
    Pending,
    /// Node counts before and after.
    Done(Option<u64>, Option<u64>),
}

impl Minimized {
    pub fn text(&self) -> String {
        let n = |v: &Option<u64>| v.map_or_else(|| DASH.to_string(), |n| n.to_string());
        match self {
            Minimized::Unknown => DASH.to_string(),
            Minimized::Pending => "pending".to_string(),
            Minimized::Done(b, a) => format!("{} → {}", n(b), n(a)),
        }
    }
}

/// The op a finding is blamed on, and where that came from.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Blame {
    pub op: String,
    /// How it was found, in words (the cell's tooltip).
    pub source: String,
    /// Localization (or the crash's placement) named it; otherwise it is inferred.
    pub localized: bool,
}

/// One `findings/<dir>/meta.json`.
pub(super) struct Bundle {
    /// The directory name (links use it).
    pub dir: String,
    /// `id` (the directory name when absent).
    pub id: String,
    pub kind: Option<String>,
    pub backends: Vec<String>,
    pub stage: Option<String>,
    pub blame: Option<Blame>,
    pub message: Option<String>,
    pub hits: Option<u64>,
    pub first: Seen,
    pub last: Seen,
    pub minimized: Minimized,
    /// The triage summary, as short tags (`kernel`, `localized`, `needs layout=1`).
    pub triage: Vec<String>,
    /// More about the triage, for the tooltip.
    pub triage_detail: String,
    pub signature: Option<String>,
    /// Bundle files that exist, besides the report (linked from the row).
    pub files: Vec<&'static str>,
    /// `REPORT.md` exists.
    pub has_report_md: bool,
    /// `REPORT.html` was written by this rendering.
    pub has_report_html: bool,
}

/// Files of a bundle linked from the table when present.
pub(super) const BUNDLE_FILES: [&str; 3] = ["repro.py", "minimized.onnx", "original.onnx"];

/// Models larger than this are not read to find the op a finding is about.
const MODEL_READ_LIMIT: u64 = 64 << 20;

impl Bundle {
    pub fn from_meta(dir: &str, bundle_dir: &Path, meta: &MetaView) -> Bundle {
        let backends = match &meta.backends {
            Some(OneOrMany::Many(v)) => v.clone(),
            Some(OneOrMany::One(s)) => vec![s.clone()],
            None => Vec::new(),
        };
        let minimized = match &meta.minimized {
            None => Minimized::Unknown,
            Some(None) => Minimized::Pending,
            Some(Some(m)) => Minimized::Done(m.nodes_before, m.nodes_after),
        };
        let (triage, triage_detail) = triage_summary(meta);
        Bundle {
            dir: dir.to_string(),
            id: meta.id.clone().unwrap_or_else(|| dir.to_string()),
            kind: meta.kind.clone(),
            backends,
            stage: meta.stage.clone(),
            blame: blame(meta, bundle_dir),
            message: meta.message.clone(),
            hits: meta.hits,
            first: meta.first_seen.clone().unwrap_or_default(),
            last: meta.last_seen.clone().unwrap_or_default(),
            minimized,
            triage,
            triage_detail,
            signature: meta.signature.clone(),
            files: BUNDLE_FILES
                .into_iter()
                .filter(|f| bundle_dir.join(f).is_file())
                .collect(),
            has_report_md: bundle_dir.join("REPORT.md").is_file(),
            has_report_html: false,
        }
    }

    pub fn backends_text(&self) -> String {
        if self.backends.is_empty() {
            DASH.to_string()
        } else {
            self.backends.join(", ")
        }
    }

    pub fn op(&self) -> Option<&str> {
        self.blame.as_ref().map(|b| b.op.as_str())
    }

    pub fn triage_text(&self) -> String {
        if self.triage.is_empty() {
            DASH.to_string()
        } else {
            self.triage.join(" · ")
        }
    }

    /// The bundle's report, as linked: `REPORT.html` when written, else `REPORT.md`.
    pub fn report_file(&self) -> &'static str {
        if self.has_report_html {
            super::BUNDLE_HTML_FILE
        } else {
            "REPORT.md"
        }
    }

    /// Report order: kind (by name; none last), hits descending, then id.
    fn order(a: &Bundle, b: &Bundle) -> std::cmp::Ordering {
        let kind = |x: &Bundle| (x.kind.is_none(), x.kind.clone());
        kind(a)
            .cmp(&kind(b))
            .then_with(|| b.hits.unwrap_or(0).cmp(&a.hits.unwrap_or(0)))
            .then_with(|| a.id.cmp(&b.id))
            .then_with(|| a.dir.cmp(&b.dir))
    }
}

/// The op a bundle is about, in the order the bundle's own `REPORT.md` uses: localization on
/// the minimized model, then on the original (`op_type`, the finding's location, the
/// localization's); else the node producing the value the finding names, in the bundle's
/// model (the minimized one when there is one); else the minimized model's last node; else
/// the op most hits were seen at.
fn blame(meta: &MetaView, bundle_dir: &Path) -> Option<Blame> {
    let localized = |op: &Option<String>, source: &str| {
        op.as_deref().filter(|s| !s.is_empty()).map(|op| Blame {
            op: op.to_string(),
            source: source.to_string(),
            localized: true,
        })
    };
    let loc_op = |f: &Option<FindingView>| {
        f.as_ref()
            .and_then(|f| f.location.as_ref())
            .map(|l| l.op_type.clone())
    };
    let min = meta.minimized.as_ref().and_then(Option::as_ref);
    if let Some(b) = localized(
        &min.and_then(|m| m.op_type.clone()),
        "blamed by localization on the minimized model",
    )
    .or_else(|| localized(&meta.op_type, "blamed by localization"))
    .or_else(|| localized(&loc_op(&meta.finding), "blamed by localization"))
    .or_else(|| {
        localized(
            &meta
                .localization
                .as_ref()
                .and_then(|l| l.location.as_ref())
                .map(|l| l.op_type.clone()),
            "blamed by localization",
        )
    })
    .or_else(|| {
        localized(
            &loc_op(&meta.minimized_finding),
            "blamed by localization on the minimized model",
        )
    }) {
        return Some(b);
    }
    if let Some(b) = model_focus(meta, bundle_dir) {
        return Some(b);
    }
    let ops = meta.ops_seen.as_ref()?;
    let (op, n) = ops
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))?;
    Some(Blame {
        op: op.clone(),
        source: format!("not localized; the op {n} of the hits were seen at"),
        localized: false,
    })
}

/// The value a finding's message names (`output 'y': …`).
fn named_output(message: &str) -> Option<&str> {
    let rest = &message[message.find("output '")? + "output '".len()..];
    let name = &rest[..rest.find('\'')?];
    (!name.is_empty()).then_some(name)
}

/// The op of the node producing the value the finding names, in the bundle's model (the
/// minimized one when there is one); else, for a minimized model, its last node.
fn model_focus(meta: &MetaView, bundle_dir: &Path) -> Option<Blame> {
    let (file, finding) = if bundle_dir.join("minimized.onnx").is_file() {
        (
            "minimized.onnx",
            meta.minimized_finding.as_ref().or(meta.finding.as_ref()),
        )
    } else {
        ("original.onnx", meta.finding.as_ref())
    };
    let path = bundle_dir.join(file);
    if std::fs::metadata(&path).ok()?.len() > MODEL_READ_LIMIT {
        return None;
    }
    let message = finding
        .and_then(|f| f.message.as_deref())
        .or(meta.message.as_deref())
        .unwrap_or("");
    let value = named_output(message);
    let model = mutagraph_ir::Model::from_bytes(&std::fs::read(&path).ok()?).ok()?;
    if let Some(v) = value
        && let Some(n) = model
            .graph
            .nodes()
            .find(|n| n.outputs.iter().any(|o| o == v))
    {
        return Some(Blame {
            op: n.op_type.clone(),
            source: format!("not localized; the node producing '{v}' in {file}"),
            localized: false,
        });
    }
    if file != "minimized.onnx" {
        return None;
    }
    let n = mutagraph_oracles::bundle::describe::focus(&model, None)?;
    Some(Blame {
        op: n.op_type.clone(),
        source: format!("not localized; the last node of {file}"),
        localized: false,
    })
}

/// The triage's conclusions as short tags, and more detail for a tooltip.
fn triage_summary(meta: &MetaView) -> (Vec<String>, String) {
    let mut tags = Vec::new();
    let mut detail = Vec::new();
    if let Some(note) = meta.triage.as_deref().filter(|s| !s.trim().is_empty()) {
        tags.push(format!("note: {}", note.trim()));
    }
    let f = meta.finding.as_ref();
    if let Some(layer) = meta.layer.or(f.and_then(|f| f.layer)) {
        tags.push(layer.name().to_string());
    }
    match meta.localization.as_ref().map(|l| &l.verdict) {
        Some(Verdict::Localized) => tags.push("localized".into()),
        Some(Verdict::Unstable) => tags.push("unstable".into()),
        Some(Verdict::NotReproduced) => tags.push("not reproduced with intermediates".into()),
        Some(Verdict::Undefined(r)) => tags.push(format!("undefined: {r}")),
        Some(Verdict::Failed(r)) => {
            tags.push("localization failed".into());
            detail.push(format!("localization failed: {r}"));
        }
        None => {
            if f.and_then(|f| f.location.as_ref()).is_some() {
                if f.and_then(|f| f.placed_by_message) == Some(true) {
                    tags.push("placed by message".into());
                } else {
                    tags.push("placed by prefix search".into());
                }
            }
        }
    }
    if let Some(gap) = f.and_then(|f| f.gap.as_deref()) {
        tags.push(format!("type gap: {gap}"));
    }
    let trigger = meta
        .trigger
        .clone()
        .filter(|t| !t.is_empty())
        .or_else(|| {
            meta.minimized_finding
                .as_ref()
                .and_then(|f| f.trigger.clone())
        })
        .unwrap_or_default();
    if !trigger.is_empty() {
        tags.push(format!("needs {}", trigger.join(", ")));
    }
    if let Some(a) = meta.aliases.as_ref().filter(|a| !a.is_empty()) {
        tags.push(format!("+{} merged", a.len()));
        detail.push(format!("merged signatures: {}", a.join("; ")));
    }
    if let Some(into) = &meta.merged_into {
        tags.push(format!("merged into {into}"));
    }
    if let Some(shown) = &meta.not_shown_again {
        tags.push("not shown again".into());
        if !shown.is_empty() {
            detail.push(format!("a fresh run showed: {}", shown.join("; ")));
        }
    }
    if let Some(w) = f
        .and_then(|f| f.witnesses.as_ref())
        .filter(|w| !w.is_empty())
    {
        detail.push(format!("witnesses: {}", w.join(", ")));
    }
    if let Some(d) = f.and_then(|f| f.d_mad) {
        detail.push(format!("D_MAD {d:.3}"));
    }
    (tags, detail.join("\n"))
}

pub(super) fn load_bundles(
    findings: &Path,
    warnings: &mut Vec<String>,
) -> Result<Vec<Bundle>, ReportError> {
    let entries = match std::fs::read_dir(findings) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ReportError::Read {
                path: findings.to_path_buf(),
                source,
            });
        }
    };
    let mut dirs: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            Some((name, p))
        })
        .collect();
    dirs.sort();
    let mut bundles = Vec::new();
    for (name, dir) in dirs {
        let meta_path = dir.join("meta.json");
        let shown = format!("findings/{name}/meta.json");
        let text = match std::fs::read_to_string(&meta_path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                warnings.push(format!("{shown}: cannot read: {e}; bundle skipped"));
                continue;
            }
        };
        match persisted::from_json::<MetaView>(text.as_bytes()) {
            Ok(meta) => bundles.push(Bundle::from_meta(&name, &dir, &meta)),
            Err(FormatError::Syntax(e)) => {
                warnings.push(format!("{shown}: invalid JSON: {e}; bundle skipped"))
            }
            Err(FormatError::NotAnObject) => {
                warnings.push(format!("{shown}: not a JSON object; bundle skipped"))
            }
            // Written by a newer mutagraph: the whole directory is, most likely.
            Err(e @ FormatError::Newer { .. }) => return Err(ReportError::format(&meta_path, e)),
            Err(e @ FormatError::Fields(_)) => {
                warnings.push(format!("{shown}: {e}; bundle skipped"))
            }
        }
    }
    bundles.sort_by(Bundle::order);
    Ok(bundles)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn view(v: Value) -> MetaView {
        MetaView::deserialize(&v).unwrap()
    }

    #[test]
    fn a_field_of_another_shape_is_only_absent() {
        let m = view(json!({
            "id": "x", "kind": "crash", "hits": "many", "backends": "ort",
            "minimized": null, "layer": "sideways", "first_seen": {"iteration": 3}
        }));
        assert_eq!(m.id.as_deref(), Some("x"));
        assert_eq!(m.hits, None);
        assert!(matches!(m.backends, Some(OneOrMany::One(_))));
        assert!(matches!(m.minimized, Some(None)), "null is pending");
        assert_eq!(m.layer, None);
        assert_eq!(m.first_seen.unwrap().iteration, Some(3));
        assert!(view(json!({})).minimized.is_none(), "absent is unknown");
    }

    #[test]
    fn the_op_comes_from_localization_then_the_model_then_the_hits() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        // The minimized model's blame first, then the bundle's op_type.
        let m = view(json!({"op_type": "Conv", "minimized": {"op_type": "Relu"}}));
        let b = blame(&m, p).unwrap();
        assert_eq!((b.op.as_str(), b.localized), ("Relu", true));
        // A crash placed by localization: the finding's location.
        let m =
            view(json!({"finding": {"location": {"op_type": "Pad", "value": "v", "attrs": ""}}}));
        assert_eq!(blame(&m, p).unwrap().op, "Pad");
        // Not localized, no model: the op most hits were seen at.
        let m = view(json!({"ops_seen": {"Add": 2, "MatMul": 7}}));
        let b = blame(&m, p).unwrap();
        assert_eq!((b.op.as_str(), b.localized), ("MatMul", false));
        assert!(b.source.contains("7"), "{}", b.source);
        assert_eq!(blame(&view(json!({})), p), None);
        assert_eq!(named_output("output 'ln_114': 59 of 64"), Some("ln_114"));
        assert_eq!(named_output("no output here"), None);
    }

    #[test]
    fn triage_tags() {
        let m = view(json!({
            "layer": "optimizer",
            "triage": "reported upstream",
            "localization": {"verdict": "not-reproduced", "location": null, "values": [], "max_r": null},
            "trigger": ["layout=1"],
            "aliases": ["a", "b"],
            "finding": {"gap": "bool", "witnesses": ["tract"], "d_mad": 0.5}
        }));
        let (tags, detail) = triage_summary(&m);
        assert_eq!(
            tags,
            vec![
                "note: reported upstream",
                "optimizer",
                "not reproduced with intermediates",
                "type gap: bool",
                "needs layout=1",
                "+2 merged"
            ]
        );
        assert!(detail.contains("witnesses: tract"), "{detail}");
        let m = view(json!({
            "localization": {"verdict": {"undefined": "nan-unspecified"}, "location": null, "values": [], "max_r": null}
        }));
        assert_eq!(triage_summary(&m).0, vec!["undefined: nan-unspecified"]);
        let m = view(json!({"finding": {"placed_by_message": true,
            "location": {"op_type": "Pad", "value": "v", "attrs": ""}}}));
        assert_eq!(triage_summary(&m).0, vec!["placed by message"]);
    }

    /// The view reads what the bundle writer writes: every field a new bundle's `meta.json`
    /// holds arrives, so the lenient view cannot drift from [`Meta`] unnoticed.
    #[test]
    fn a_written_bundle_reads_whole_through_the_view() {
        use crate::bundle::{Found, write_new};
        use crate::findings::{Seen as FoundAt, SigEntry};
        use mutagraph_backends::compare::Tolerance;
        use mutagraph_backends::value::{Data, HostTensor, Value as V};
        use mutagraph_backends::worker::{Outcome, RunReport};
        use mutagraph_oracles::{Finding, Kind, MutantRuns};
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
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path().join(&entry.id);
        let sig = f.signature();
        write_new(
            &b,
            &Found {
                finding: &f,
                signature: &sig,
                entry: &entry,
                localization: None,
                model: &model,
                inputs: &vec![("x".to_string(), t(&[-1.0, 1.0, 3.0]))],
                input_seed: 0,
                derived_from: None,
                whole_model: None,
                runs: &runs,
                native: None,
                seed: "zoo:test",
                iteration: 3,
                trace: &[],
                config: json!({"backends": ["reference", "ort"]}),
                tolerance: Tolerance::APPROXIMATE,
            },
        )
        .unwrap();
        let text = std::fs::read(b.join("meta.json")).unwrap();
        let m: MetaView = persisted::from_json(&text).unwrap();
        assert_eq!(m.id.as_deref(), Some(entry.id.as_str()));
        assert_eq!(m.signature.as_deref(), Some(sig.as_str()));
        assert_eq!(m.kind.as_deref(), Some("inconsistency"));
        assert!(matches!(m.backends, Some(OneOrMany::Many(ref v)) if v == &["ort"]));
        assert_eq!(m.layer, Some(Layer::Kernel));
        assert_eq!(m.op_type.as_deref(), Some("Relu"));
        assert_eq!(m.message.as_deref(), Some("output 'y'"));
        assert_eq!(m.hits, Some(1));
        assert_eq!(m.first_seen.and_then(|s| s.iteration), Some(3));
        assert_eq!(m.last_seen.and_then(|s| s.elapsed_s), Some(1.5));
        assert!(m.ops_seen.is_some());
        assert!(m.finding.is_some_and(|f| f.location.is_some()));
        assert!(matches!(m.minimized, Some(None)), "pending minimization");
    }
}
