//! Bug bundles as the report sees them: each `findings/<id>/meta.json` read with
//! [`crate::bundle::read_meta`], the bundle's own reader and the one reader of that file, as
//! a [`Meta`]. One of a newer format version is refused ([`ReportError::NewerFormat`], naming
//! it); one that does not read otherwise (not JSON, not of [`Meta`]'s shape, unreadable) is a
//! warning naming it and the parse error, and its bundle a row with only its directory name.
//! And what the report derives from a [`Meta`]: the op a finding is blamed on ([`Blame`]) and
//! the triage's conclusions as tags.

use super::{DASH, ReportError};
use crate::bundle::{Meta, read_meta};
use crate::persisted::FormatError;
use mutagraph_oracles::finding::Location;
use mutagraph_oracles::localize::Verdict;
use std::path::{Path, PathBuf};

/// When a finding was seen (unknown when its `meta.json` did not read).
#[derive(Clone, Debug, Default)]
pub(super) struct Seen {
    pub iteration: Option<u64>,
    pub elapsed_s: Option<f64>,
}

impl From<&crate::findings::Seen> for Seen {
    fn from(s: &crate::findings::Seen) -> Seen {
        Seen {
            iteration: Some(s.iteration),
            elapsed_s: Some(s.elapsed_s),
        }
    }
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

/// What minimization did, as shown.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Minimized {
    /// Not known (`meta.json` did not read).
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
    /// `id` (the directory name when `meta.json` did not read).
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
    pub fn from_meta(dir: &str, bundle_dir: &Path, meta: &Meta) -> Bundle {
        let minimized = match &meta.minimized {
            None => Minimized::Pending,
            Some(m) => Minimized::Done(Some(m.nodes_before as u64), Some(m.nodes_after as u64)),
        };
        let (triage, triage_detail) = triage_summary(meta);
        Bundle {
            id: meta.id.clone(),
            kind: Some(meta.kind.name().to_string()),
            backends: meta.backends.clone(),
            stage: meta.stage.as_ref().and_then(serde_name),
            blame: blame(meta, bundle_dir),
            message: Some(meta.message.clone()),
            hits: Some(meta.hits),
            first: Seen::from(&meta.first_seen),
            last: Seen::from(&meta.last_seen),
            minimized,
            triage,
            triage_detail,
            signature: Some(meta.signature.clone()),
            ..Bundle::unread(dir, bundle_dir)
        }
    }

    /// The row of a bundle whose `meta.json` did not read: its directory name, its files.
    pub fn unread(dir: &str, bundle_dir: &Path) -> Bundle {
        Bundle {
            dir: dir.to_string(),
            id: dir.to_string(),
            kind: None,
            backends: Vec::new(),
            stage: None,
            blame: None,
            message: None,
            hits: None,
            first: Seen::default(),
            last: Seen::default(),
            minimized: Minimized::Unknown,
            triage: Vec::new(),
            triage_detail: String::new(),
            signature: None,
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

/// How `meta.json` spells a value of a unit enum (`"Run"` for [`Stage::Run`]).
///
/// [`Stage::Run`]: mutagraph_backends::backend::Stage::Run
fn serde_name<T: serde::Serialize>(v: &T) -> Option<String> {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => Some(s),
        _ => None,
    }
}

/// The op a bundle is about, in the order the bundle's own `REPORT.md` uses: localization on
/// the minimized model, then on the original (`op_type`, the finding's location, the
/// localization's); else the node producing the value the finding names, in the bundle's
/// model (the minimized one when there is one); else the minimized model's last node; else
/// the op most hits were seen at.
fn blame(meta: &Meta, bundle_dir: &Path) -> Option<Blame> {
    localized(meta)
        .or_else(|| model_focus(meta, bundle_dir))
        .or_else(|| most_seen(meta))
}

/// The op localization (or the crash's placement) blamed, on the minimized model first.
fn localized(meta: &Meta) -> Option<Blame> {
    const MINIMIZED: &str = "blamed by localization on the minimized model";
    const ORIGINAL: &str = "blamed by localization";
    fn op(l: Option<&Location>) -> Option<&str> {
        l.map(|l| l.op_type.as_str())
    }
    [
        (
            meta.minimized.as_ref().and_then(|m| m.op_type.as_deref()),
            MINIMIZED,
        ),
        (meta.op_type.as_deref(), ORIGINAL),
        (op(meta.finding.location.as_ref()), ORIGINAL),
        (
            op(meta.localization.as_ref().and_then(|l| l.location.as_ref())),
            ORIGINAL,
        ),
        (
            op(meta
                .minimized_finding
                .as_ref()
                .and_then(|f| f.location.as_ref())),
            MINIMIZED,
        ),
    ]
    .into_iter()
    .find_map(|(op, source)| {
        op.filter(|s| !s.is_empty()).map(|op| Blame {
            op: op.to_string(),
            source: source.to_string(),
            localized: true,
        })
    })
}

/// The op most hits were seen at (the first by name among equals).
fn most_seen(meta: &Meta) -> Option<Blame> {
    let (op, n) = meta
        .ops_seen
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
fn model_focus(meta: &Meta, bundle_dir: &Path) -> Option<Blame> {
    let (file, finding) = if bundle_dir.join("minimized.onnx").is_file() {
        (
            "minimized.onnx",
            meta.minimized_finding.as_ref().unwrap_or(&meta.finding),
        )
    } else {
        ("original.onnx", &meta.finding)
    };
    let path = bundle_dir.join(file);
    if std::fs::metadata(&path).ok()?.len() > MODEL_READ_LIMIT {
        return None;
    }
    let value = named_output(&finding.message);
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
fn triage_summary(meta: &Meta) -> (Vec<String>, String) {
    let mut tags = Vec::new();
    let mut detail = Vec::new();
    let f = &meta.finding;
    if let Some(note) = meta.triage.as_deref().filter(|s| !s.trim().is_empty()) {
        tags.push(format!("note: {}", note.trim()));
    }
    if let Some(layer) = meta.layer.or(f.layer) {
        tags.push(layer.name().to_string());
    }
    if let Some(g) = &f.ground {
        tags.push(format!("weaker oracle: against {g}"));
        detail.push(format!(
            "judged by peers: the reference lacks an op of the model, so {g} gave the expected \
             values"
        ));
    }
    placement_tags(meta, &mut tags, &mut detail);
    if let Some(gap) = f.gap.as_deref() {
        tags.push(format!("type gap: {gap}"));
    }
    let trigger = match meta.minimized_finding.as_ref() {
        Some(m) if meta.trigger.is_empty() => &m.trigger,
        _ => &meta.trigger,
    };
    if !trigger.is_empty() {
        tags.push(format!("needs {}", trigger.join(", ")));
    }
    merge_tags(meta, &mut tags, &mut detail);
    if !f.witnesses.is_empty() {
        detail.push(format!("witnesses: {}", f.witnesses.join(", ")));
    }
    if let Some(d) = f.d_mad {
        detail.push(format!("D_MAD {d:.3}"));
    }
    (tags, detail.join("\n"))
}

/// How the node was found: localization's verdict, else how the finding was placed.
fn placement_tags(meta: &Meta, tags: &mut Vec<String>, detail: &mut Vec<String>) {
    match meta.localization.as_ref().map(|l| &l.verdict) {
        Some(Verdict::Localized) => tags.push("localized".into()),
        Some(Verdict::Unstable) => tags.push("unstable".into()),
        Some(Verdict::NotReproduced) => tags.push("not reproduced with intermediates".into()),
        Some(Verdict::Undefined(r)) => tags.push(format!("undefined: {r}")),
        Some(Verdict::Failed(r)) => {
            tags.push("localization failed".into());
            detail.push(format!("localization failed: {r}"));
        }
        None if meta.finding.location.is_none() => {}
        None if meta.finding.placed_by_message => tags.push("placed by message".into()),
        None => tags.push("placed by prefix search".into()),
    }
}

/// Merged signatures, the bundle it was merged into, a fresh run that did not show it.
fn merge_tags(meta: &Meta, tags: &mut Vec<String>, detail: &mut Vec<String>) {
    if !meta.aliases.is_empty() {
        tags.push(format!("+{} merged", meta.aliases.len()));
        detail.push(format!("merged signatures: {}", meta.aliases.join("; ")));
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
}

/// Why a bundle's `meta.json` did not read.
enum Unread {
    /// No `meta.json` (a bundle still being written): no row.
    Absent,
    /// Written by a newer mutagraph: the report is refused.
    Newer { found: u32, supported: u32 },
    /// Anything else, in words (without the path): a warning and a bare row.
    Other(String),
}

impl Unread {
    /// What [`read_meta`]'s error says, by the error it wraps.
    fn of(e: &anyhow::Error) -> Unread {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return match io.kind() {
                std::io::ErrorKind::NotFound => Unread::Absent,
                _ => Unread::Other(format!("cannot read: {io}")),
            };
        }
        match e.downcast_ref::<FormatError>() {
            Some(&FormatError::Newer { found, supported }) => Unread::Newer { found, supported },
            Some(f) => Unread::Other(f.to_string()),
            None => Unread::Other(e.root_cause().to_string()),
        }
    }
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
        let e = match read_meta(&dir) {
            Ok(meta) => {
                bundles.push(Bundle::from_meta(&name, &dir, &meta));
                continue;
            }
            Err(e) => e,
        };
        match Unread::of(&e) {
            Unread::Absent => {}
            // Written by a newer mutagraph: the whole directory is, most likely.
            Unread::Newer { found, supported } => {
                return Err(ReportError::NewerFormat {
                    path: dir.join("meta.json"),
                    found,
                    supported,
                });
            }
            Unread::Other(why) => {
                warnings.push(format!(
                    "findings/{name}/meta.json: {why}; the bundle is shown by its directory \
                     name only"
                ));
                bundles.push(Bundle::unread(&name, &dir));
            }
        }
    }
    bundles.sort_by(Bundle::order);
    Ok(bundles)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minimizer::MinimizedInfo;
    use mutagraph_oracles::Layer;
    use mutagraph_oracles::localize::Localization;

    /// A sample bundle as the campaign writes it (an ONNX Runtime inconsistency localized at
    /// a Relu, pending minimization): its directory (in the returned temporary one) and its
    /// `meta.json` read with [`read_meta`].
    fn written() -> (tempfile::TempDir, PathBuf, Meta) {
        let parent = tempfile::tempdir().unwrap();
        let (b, _, _) = crate::bundle::sample(parent.path());
        let meta = read_meta(&b).unwrap();
        (parent, b, meta)
    }

    /// The sample's `meta.json` with nothing saying where the finding is: no op, layer or
    /// location, no hits per op.
    fn unplaced() -> Meta {
        let (_parent, _, mut m) = written();
        m.op_type = None;
        m.layer = None;
        m.finding.location = None;
        m.finding.layer = None;
        m.ops_seen.clear();
        m
    }

    fn at(op: &str) -> Location {
        Location {
            op_type: op.into(),
            value: "v".into(),
            attrs: String::new(),
        }
    }

    fn localization(verdict: Verdict) -> Localization {
        Localization {
            verdict,
            location: None,
            values: Vec::new(),
            max_r: None,
        }
    }

    #[test]
    fn the_op_comes_from_localization_then_the_model_then_the_hits() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let mut m = unplaced();
        assert_eq!(blame(&m, p), None);
        // Not localized, no model: the op most hits were seen at.
        m.ops_seen = [("Add".to_string(), 2), ("MatMul".to_string(), 7)].into();
        let b = blame(&m, p).unwrap();
        assert_eq!((b.op.as_str(), b.localized), ("MatMul", false));
        assert!(b.source.contains('7'), "{}", b.source);
        // A crash placed by localization: the finding's location.
        m.finding.location = Some(at("Pad"));
        assert_eq!(blame(&m, p).unwrap().op, "Pad");
        // The minimized model's blame first, then the bundle's op_type.
        m.op_type = Some("Conv".into());
        assert_eq!(blame(&m, p).unwrap().op, "Conv");
        m.minimized = Some(MinimizedInfo {
            op_type: Some("Relu".into()),
            ..Default::default()
        });
        let b = blame(&m, p).unwrap();
        assert_eq!((b.op.as_str(), b.localized), ("Relu", true));
        assert!(b.source.contains("minimized"), "{}", b.source);
        assert_eq!(named_output("output 'ln_114': 59 of 64"), Some("ln_114"));
        assert_eq!(named_output("no output here"), None);
    }

    #[test]
    fn not_localized_the_op_is_the_node_producing_the_named_output_in_the_model() {
        let (_parent, b, mut m) = written();
        m.op_type = None;
        m.finding.location = None;
        let blamed = blame(&m, &b).unwrap();
        assert_eq!((blamed.op.as_str(), blamed.localized), ("Relu", false));
        assert_eq!(
            blamed.source,
            "not localized; the node producing 'y' in original.onnx"
        );
    }

    #[test]
    fn triage_tags() {
        let mut m = unplaced();
        m.layer = Some(Layer::Optimizer);
        m.triage = Some("reported upstream".into());
        m.localization = Some(localization(Verdict::NotReproduced));
        m.trigger = vec!["layout=1".into()];
        m.aliases = vec!["a".into(), "b".into()];
        m.finding.gap = Some("bool".into());
        m.finding.witnesses = vec!["tract".into()];
        m.finding.d_mad = Some(0.5);
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
        assert!(detail.contains("D_MAD 0.500"), "{detail}");
        let mut m = unplaced();
        m.localization = Some(localization(Verdict::Undefined("nan-unspecified".into())));
        assert_eq!(triage_summary(&m).0, vec!["undefined: nan-unspecified"]);
        let mut m = unplaced();
        m.finding.location = Some(at("Pad"));
        m.finding.placed_by_message = true;
        assert_eq!(triage_summary(&m).0, vec!["placed by message"]);
        // The trigger minimization found, merged and not shown again.
        let mut m = unplaced();
        let mut f = m.finding.clone();
        f.trigger = vec!["axis=1".into()];
        m.minimized_finding = Some(f);
        m.merged_into = Some("other".into());
        m.not_shown_again = Some(vec!["nan: s".into()]);
        let (tags, detail) = triage_summary(&m);
        assert_eq!(
            tags,
            vec!["needs axis=1", "merged into other", "not shown again"]
        );
        assert_eq!(detail, "a fresh run showed: nan: s");
    }

    /// A bundle the campaign wrote reads through [`read_meta`], the bundle's own reader, into
    /// the row the report shows.
    #[test]
    fn a_written_bundle_reads_through_read_meta_into_its_row() {
        let parent = tempfile::tempdir().unwrap();
        let (b, entry_id, sig) = crate::bundle::sample(parent.path());
        let mut meta = read_meta(&b).unwrap();
        let row = Bundle::from_meta(&entry_id, &b, &meta);
        assert_eq!(
            (row.dir.as_str(), row.id.as_str()),
            (entry_id.as_str(), entry_id.as_str())
        );
        assert_eq!(row.signature.as_deref(), Some(sig.as_str()));
        assert_eq!(row.kind.as_deref(), Some("inconsistency"));
        assert_eq!(row.backends_text(), "ort");
        assert_eq!(row.stage, None);
        let blamed = row.blame.as_ref().unwrap();
        assert_eq!(
            (blamed.op.as_str(), blamed.source.as_str(), blamed.localized),
            ("Relu", "blamed by localization", true)
        );
        assert_eq!(row.message.as_deref(), Some("output 'y'"));
        assert_eq!(row.hits, Some(1));
        assert_eq!(row.first.text(), "iter 3 · 1.5 s");
        assert_eq!(row.last.text(), "iter 3 · 1.5 s");
        assert_eq!(row.minimized.text(), "pending");
        assert_eq!(row.triage_text(), "kernel · placed by prefix search");
        assert_eq!(row.files, vec!["repro.py", "original.onnx"]);
        assert!(row.has_report_md && !row.has_report_html);
        // Minimized, and failed at a stage.
        meta.minimized = Some(MinimizedInfo {
            nodes_before: 5,
            nodes_after: 1,
            ..Default::default()
        });
        meta.stage = Some(mutagraph_backends::backend::Stage::Run);
        let row = Bundle::from_meta(&entry_id, &b, &meta);
        assert_eq!(row.minimized.text(), "5 → 1");
        assert_eq!(row.stage.as_deref(), Some("Run"));
    }

    /// A `meta.json` that does not read is a warning naming it and what is wrong, and its
    /// bundle a row with only its directory name; a directory without one is skipped.
    #[test]
    fn a_meta_json_that_does_not_read_is_a_warning_and_a_bare_row() {
        let dir = tempfile::tempdir().unwrap();
        let findings = dir.path();
        let (_, good, _) = crate::bundle::sample(findings);
        for (name, text) in [
            ("not-json", "{"),
            ("wrong-shape", r#"{"id": "x", "hits": "many"}"#),
            ("an-array", "[1]"),
        ] {
            std::fs::create_dir(findings.join(name)).unwrap();
            std::fs::write(findings.join(name).join("meta.json"), text).unwrap();
        }
        std::fs::create_dir(findings.join("being-written")).unwrap();
        let mut w = Vec::new();
        let bundles = load_bundles(findings, &mut w).unwrap();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w[0].starts_with("findings/an-array/meta.json: expected a JSON object; "),
            "{}",
            w[0]
        );
        assert!(
            w[1].starts_with("findings/not-json/meta.json: invalid JSON: EOF"),
            "{}",
            w[1]
        );
        assert!(
            w[2].starts_with("findings/wrong-shape/meta.json: invalid type: string \"many\""),
            "{}",
            w[2]
        );
        assert!(
            w[2].ends_with("shown by its directory name only"),
            "{}",
            w[2]
        );
        let ids: Vec<&str> = bundles.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![good.as_str(), "an-array", "not-json", "wrong-shape"]
        );
        let bare = &bundles[3];
        assert_eq!(
            (bare.kind.as_ref(), bare.hits, &bare.blame),
            (None, None, &None)
        );
        assert_eq!(bare.backends_text(), DASH);
        assert_eq!(bare.first.text(), DASH);
        assert_eq!(bare.minimized.text(), DASH);
        assert_eq!(bare.triage_text(), DASH);
        assert!(bare.files.is_empty() && !bare.has_report_md);
    }
}
