//! `mutagraph report OUT_DIR`: a campaign report built from a campaign output directory.
//!
//! [`render`] reads what a campaign wrote (`campaign.toml`, `stats.json`, `timeseries.csv`,
//! `findings/<id>/meta.json`) and writes two files into the same directory, each atomically:
//!
//! * `report.html`: one self-contained page (inline CSS, inline SVG charts drawn here, no
//!   script, no external resource): coverage per family, executions per second and findings
//!   over time, the campaign configuration and totals, and one row per bug bundle.
//! * `report.md`: the same totals and tables in Markdown, for a terminal.
//!
//! Inputs are read tolerantly, field by field (`serde_json::Value`, `toml::Table`, CSV columns
//! looked up by header name), so the report survives fields being added: a missing optional
//! field shows as "—". What is required and what is only warned about:
//!
//! * `stats.json` missing or not a JSON object: [`ReportError`] naming the file.
//! * `campaign.toml` missing: a warning and an unknown configuration; unparsable: an error.
//! * `timeseries.csv` missing or empty: charts that say "no data". A partial last line (no
//!   final newline: the campaign is writing it) is ignored silently; other malformed rows are
//!   skipped with one warning.
//! * `findings/<id>/` without `meta.json`: ignored (a bundle still being written). A
//!   `meta.json` that cannot be read or is not a JSON object does not stop the report: it
//!   becomes a warning, listed in the report's "Warnings" section and in
//!   [`RenderedReport::warnings`], and the bundle gets no row.
//!
//! The output depends only on the directory's contents (no clock, no absolute paths in the
//! HTML beyond the directory's name), so rendering twice gives the same bytes.

use mutagraph_ir::model::write_atomic;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Name of the HTML report inside the campaign directory.
pub const HTML_FILE: &str = "report.html";
/// Name of the Markdown report inside the campaign directory.
pub const MARKDOWN_FILE: &str = "report.md";

/// Messages longer than this (in characters) are cut in the HTML table (full text in `title`).
const HTML_MESSAGE_CHARS: usize = 200;
/// Messages longer than this are cut in the Markdown table.
const MD_MESSAGE_CHARS: usize = 120;

/// Why a report could not be rendered. Every variant names the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The campaign directory does not exist or is not a directory.
    #[error("{}: not a campaign output directory", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// A required file could not be read (missing, permissions, not UTF-8).
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A required file could not be parsed.
    #[error("{}: {problem}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// Writing `report.html` or `report.md` failed.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The error of the atomic write.
        source: mutagraph_ir::Error,
    },
}

impl ReportError {
    /// The file (or directory) the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReportError::NotADirectory { path }
            | ReportError::Read { path, .. }
            | ReportError::Parse { path, .. }
            | ReportError::Write { path, .. } => path,
        }
    }
}

/// What [`render`] wrote.
#[derive(Clone, Debug)]
pub struct RenderedReport {
    /// `OUT_DIR/report.html`.
    pub html: PathBuf,
    /// `OUT_DIR/report.md`.
    pub markdown: PathBuf,
    /// The contents of `report.md` (for printing).
    pub markdown_text: String,
    /// Problems that did not stop the report (`file: problem`), also listed in both files.
    pub warnings: Vec<String>,
}

/// Reads the campaign output directory `out_dir` and writes `report.html` and `report.md`
/// into it (each atomically: temporary file, then rename). See the module documentation for
/// what is required and what is tolerated.
pub fn render(out_dir: &Path) -> Result<RenderedReport, ReportError> {
    let campaign = Campaign::load(out_dir)?;
    let html = campaign.html();
    let markdown_text = campaign.markdown();
    let html_path = out_dir.join(HTML_FILE);
    let md_path = out_dir.join(MARKDOWN_FILE);
    for (path, text) in [(&html_path, &html), (&md_path, &markdown_text)] {
        write_atomic(path, text.as_bytes()).map_err(|source| ReportError::Write {
            path: path.clone(),
            source,
        })?;
    }
    Ok(RenderedReport {
        html: html_path,
        markdown: md_path,
        markdown_text,
        warnings: campaign.warnings,
    })
}

// ---------------------------------------------------------------------------------------------
// Reading the campaign directory
// ---------------------------------------------------------------------------------------------

/// Everything the report shows, read from the directory.
struct Campaign {
    /// The directory's name (for titles).
    name: String,
    /// `campaign.toml`, when present.
    config: Option<toml::Table>,
    /// `stats.json` (an object).
    stats: Value,
    /// `timeseries.csv`.
    series: Series,
    /// One per `findings/<id>/meta.json`, in report order.
    bundles: Vec<Bundle>,
    /// `file: problem` for what was skipped.
    warnings: Vec<String>,
}

impl Campaign {
    fn load(dir: &Path) -> Result<Campaign, ReportError> {
        if !dir.is_dir() {
            return Err(ReportError::NotADirectory {
                path: dir.to_path_buf(),
            });
        }
        let mut warnings = Vec::new();

        let stats_path = dir.join("stats.json");
        let text = std::fs::read_to_string(&stats_path).map_err(|source| ReportError::Read {
            path: stats_path.clone(),
            source,
        })?;
        let stats: Value = serde_json::from_str(&text).map_err(|e| ReportError::Parse {
            path: stats_path.clone(),
            problem: format!("invalid JSON: {e}"),
        })?;
        if !stats.is_object() {
            return Err(ReportError::Parse {
                path: stats_path,
                problem: "expected a JSON object".into(),
            });
        }

        let config_path = dir.join("campaign.toml");
        let config = match read_optional(&config_path)? {
            Some(text) => {
                Some(
                    toml::from_str::<toml::Table>(&text).map_err(|e| ReportError::Parse {
                        path: config_path.clone(),
                        problem: format!("invalid TOML: {}", e.message()),
                    })?,
                )
            }
            None => {
                warnings.push("campaign.toml: missing; configuration unknown".to_string());
                None
            }
        };

        let series = match read_optional(&dir.join("timeseries.csv"))? {
            Some(text) => Series::parse(&text, &mut warnings),
            None => Series::default(),
        };

        let bundles = load_bundles(&dir.join("findings"), &mut warnings)?;

        let name = dir
            .canonicalize()
            .ok()
            .as_deref()
            .and_then(Path::file_name)
            .or_else(|| dir.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());

        Ok(Campaign {
            name,
            config,
            stats,
            series,
            bundles,
            warnings,
        })
    }

    /// A config value as text ("—" when absent).
    fn config_value(&self, key: &str) -> String {
        match self.config.as_ref().and_then(|c| c.get(key)) {
            None => DASH.to_string(),
            Some(toml::Value::String(s)) => s.clone(),
            Some(toml::Value::Array(a)) if a.is_empty() => DASH.to_string(),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => s.clone(),
                    v => v.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", "),
            Some(v) => v.to_string(),
        }
    }

    /// The configuration rows shown (label, value).
    fn config_rows(&self) -> Vec<(&'static str, String)> {
        let operators = match self.config.as_ref().and_then(|c| c.get("operators")) {
            Some(toml::Value::Array(a)) => a.len().to_string(),
            _ => DASH.to_string(),
        };
        let mut search = self.config_value("search");
        if search == "mcmc" {
            let p = self.config_value("mcmc_p");
            if p != DASH {
                search = format!("mcmc (p = {p})");
            }
        }
        let limit = |key: &str, unit: &str| match self.config.as_ref().and_then(|c| c.get(key)) {
            Some(_) => format!("{}{unit}", self.config_value(key)),
            None if self.config.is_some() => "unbounded".to_string(),
            None => DASH.to_string(),
        };
        vec![
            ("seeds", self.config_value("seeds")),
            ("backends", self.config_value("backends")),
            ("seed", self.config_value("seed")),
            ("search", search),
            ("operators", operators),
            ("jobs", self.config_value("jobs")),
            ("iterations", limit("iterations", "")),
            ("time limit", limit("time_s", " s")),
            ("tolerance", self.config_value("tolerance")),
        ]
    }

    /// The totals shown (label, value).
    fn total_rows(&self) -> Vec<(&'static str, String)> {
        let s = &self.stats;
        let elapsed = match num(s, &["elapsed_s"]) {
            Some(e) => format!("{} ({e:.1} s)", human_duration(e)),
            None => DASH.to_string(),
        };
        let signatures = self.unique_signatures().len();
        vec![
            ("elapsed", elapsed),
            ("iterations", int_text(s, &["iterations"])),
            ("executions", int_text(s, &["executions"])),
            ("backend runs", int_text(s, &["backend_runs"])),
            ("executions / s", float_text(s, &["execs_per_s"], 2, "")),
            ("diverse mutants (corpus)", int_text(s, &["diverse"])),
            (
                "illegal mutants",
                match (int(s, &["illegal"]), num(s, &["illegal_percent"])) {
                    (Some(n), Some(p)) => format!("{n} ({p:.1}%)"),
                    (None, Some(p)) => format!("{p:.1}%"),
                    (Some(n), None) => n.to_string(),
                    (None, None) => DASH.to_string(),
                },
            ),
            ("findings", int_text(s, &["findings"])),
            (
                "of them known crashes (not re-triaged)",
                int_text(s, &["triage", "known_hits"]),
            ),
            ("bug bundles", self.bundles.len().to_string()),
            ("unique signatures", signatures.to_string()),
        ]
    }

    /// Findings per kind from `stats.json` (kind, count), by kind name.
    fn findings_by_kind(&self) -> Vec<(String, String)> {
        match self.stats.get("findings_by_kind") {
            Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), value_text(v))).collect(),
            _ => Vec::new(),
        }
    }

    /// Coverage rows: family label, covered, total, percent, seed percent.
    fn coverage_rows(&self) -> Vec<CoverageRow> {
        FAMILIES
            .iter()
            .map(|f| {
                let path = ["coverage", f.key];
                let seed = ["seed_coverage", f.key];
                CoverageRow {
                    label: f.label,
                    covered: int(&self.stats, &[&path[..], &["covered"]].concat()),
                    total: int(&self.stats, &[&path[..], &["total"]].concat()),
                    percent: num(&self.stats, &[&path[..], &["percent"]].concat()),
                    seed_percent: num(&self.stats, &[&seed[..], &["percent"]].concat()),
                }
            })
            .collect()
    }

    /// Earliest `first_seen.elapsed_s` per signature (the id when a bundle has none), with the
    /// ids of the bundles of that signature; sorted by time.
    fn unique_signatures(&self) -> Vec<(f64, String)> {
        let mut first: BTreeMap<&str, (Option<f64>, Vec<&str>)> = BTreeMap::new();
        for b in &self.bundles {
            let key = b.signature.as_deref().unwrap_or(&b.id);
            let e = first.entry(key).or_insert((None, Vec::new()));
            e.1.push(&b.id);
            if let Some(t) = b.first.elapsed_s.filter(|t| t.is_finite()) {
                e.0 = Some(e.0.map_or(t, |x: f64| x.min(t)));
            }
        }
        let mut v: Vec<(f64, String)> = first
            .into_values()
            .filter_map(|(t, ids)| t.map(|t| (t, ids.join(", "))))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        v
    }
}

/// Reads a file that may be absent (`None`); other read errors are errors.
fn read_optional(path: &Path) -> Result<Option<String>, ReportError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ReportError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

struct CoverageRow {
    label: &'static str,
    covered: Option<u64>,
    total: Option<u64>,
    percent: Option<f64>,
    seed_percent: Option<f64>,
}

/// A coverage family: key in `stats.json`, column of `timeseries.csv`, label, chart color.
struct FamilySpec {
    key: &'static str,
    column: &'static str,
    label: &'static str,
    color: &'static str,
}

const FAMILIES: [FamilySpec; 4] = [
    FamilySpec {
        key: "op_types",
        column: "op_types_pct",
        label: "op types",
        color: "#1f77b4",
    },
    FamilySpec {
        key: "op_pairs",
        column: "op_pairs_pct",
        label: "op pairs",
        color: "#d62728",
    },
    FamilySpec {
        key: "params",
        column: "params_pct",
        label: "parameters",
        color: "#2ca02c",
    },
    FamilySpec {
        key: "inputs",
        column: "inputs_pct",
        label: "inputs",
        color: "#9467bd",
    },
];

const DASH: &str = "—";

/// The value at a path of object keys.
fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    at(v, path)
        .and_then(Value::as_f64)
        .filter(|x| x.is_finite())
}

fn int(v: &Value, path: &[&str]) -> Option<u64> {
    let v = at(v, path)?;
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0 && x.fract() == 0.0 && *x < 1.8e19)
            .map(|x| x as u64)
    })
}

fn string(v: &Value, path: &[&str]) -> Option<String> {
    match at(v, path)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        v => Some(v.to_string()),
    }
}

fn int_text(v: &Value, path: &[&str]) -> String {
    int(v, path).map_or_else(|| DASH.to_string(), |n| n.to_string())
}

fn float_text(v: &Value, path: &[&str], decimals: usize, unit: &str) -> String {
    num(v, path).map_or_else(|| DASH.to_string(), |x| format!("{x:.decimals$}{unit}"))
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => DASH.to_string(),
        v => v.to_string(),
    }
}

/// `1h 02m 03s`, `4m 05s`, `6.2s`.
fn human_duration(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return DASH.to_string();
    }
    if s < 60.0 {
        return format!("{s:.1}s");
    }
    let t = s.round() as u64;
    let (h, m, sec) = (t / 3600, (t / 60) % 60, t % 60);
    if h > 0 {
        format!("{h}h {m:02}m {sec:02}s")
    } else {
        format!("{m}m {sec:02}s")
    }
}

// ---------------------------------------------------------------------------------------------
// timeseries.csv
// ---------------------------------------------------------------------------------------------

/// The columns the report uses; others are ignored.
const USED_COLUMNS: [&str; 9] = [
    "elapsed_s",
    "executions",
    "execs_per_s",
    "op_types_pct",
    "op_pairs_pct",
    "params_pct",
    "inputs_pct",
    "findings",
    "illegal",
];

/// The used columns of `timeseries.csv`, row-aligned.
#[derive(Default)]
struct Series {
    columns: BTreeMap<&'static str, Vec<f64>>,
}

impl Series {
    fn parse(text: &str, warnings: &mut Vec<String>) -> Series {
        // A last line without its newline is being written: drop it.
        let complete = match text.rfind('\n') {
            Some(i) => &text[..=i],
            None => "",
        };
        let mut lines = complete.lines().map(|l| l.trim_end_matches('\r'));
        let Some(header) = lines.next() else {
            return Series::default();
        };
        let names: Vec<&str> = header.split(',').map(str::trim).collect();
        let used: Vec<(usize, &'static str)> = USED_COLUMNS
            .iter()
            .filter_map(|&c| names.iter().position(|n| *n == c).map(|i| (i, c)))
            .collect();
        if !used.iter().any(|(_, c)| *c == "elapsed_s") {
            warnings.push("timeseries.csv: no elapsed_s column; no charts".into());
            return Series::default();
        }
        let mut columns: BTreeMap<&'static str, Vec<f64>> =
            used.iter().map(|&(_, c)| (c, Vec::new())).collect();
        let mut bad = 0usize;
        for line in lines {
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').collect();
            if fields.len() != names.len() {
                bad += 1;
                continue;
            }
            let parsed: Option<Vec<f64>> = used
                .iter()
                .map(|&(i, _)| fields[i].trim().parse::<f64>().ok())
                .collect();
            match parsed {
                Some(vals) => {
                    for (&(_, c), v) in used.iter().zip(vals) {
                        columns.get_mut(c).expect("column").push(v);
                    }
                }
                None => bad += 1,
            }
        }
        if bad > 0 {
            warnings.push(format!("timeseries.csv: {bad} malformed row(s) skipped"));
        }
        Series { columns }
    }

    /// `(elapsed_s, column)` points with finite values; empty when the column is absent.
    fn points(&self, column: &str) -> Vec<(f64, f64)> {
        match (self.columns.get("elapsed_s"), self.columns.get(column)) {
            (Some(x), Some(y)) => x
                .iter()
                .zip(y)
                .map(|(&x, &y)| (x, y))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Executions per second between consecutive rows (`Δexecutions / Δelapsed`).
    fn interval_rates(&self) -> Vec<(f64, f64)> {
        let p = self.points("executions");
        p.windows(2)
            .filter_map(|w| {
                let (dt, de) = (w[1].0 - w[0].0, w[1].1 - w[0].1);
                (dt > 0.0 && de >= 0.0).then_some((w[1].0, de / dt))
            })
            .collect()
    }

    fn last_elapsed(&self) -> Option<f64> {
        self.columns
            .get("elapsed_s")?
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .reduce(f64::max)
    }
}

// ---------------------------------------------------------------------------------------------
// Bug bundles
// ---------------------------------------------------------------------------------------------

/// When a finding was seen.
#[derive(Default)]
struct Seen {
    iteration: Option<u64>,
    elapsed_s: Option<f64>,
}

impl Seen {
    fn from(v: Option<&Value>) -> Seen {
        match v {
            Some(v) => Seen {
                iteration: int(v, &["iteration"]),
                elapsed_s: num(v, &["elapsed_s"]),
            },
            None => Seen::default(),
        }
    }

    fn text(&self) -> String {
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

/// One `findings/<dir>/meta.json`.
struct Bundle {
    /// The directory name (links use it).
    dir: String,
    /// `id` (the directory name when absent).
    id: String,
    kind: Option<String>,
    backends: Vec<String>,
    stage: Option<String>,
    op_type: Option<String>,
    message: Option<String>,
    hits: Option<u64>,
    first: Seen,
    last: Seen,
    /// `minimized` as shown: "pending", "12 → 3", or "—".
    minimized: String,
    triage: Option<String>,
    signature: Option<String>,
    /// Bundle files that exist, besides `REPORT.md` (always linked).
    files: Vec<&'static str>,
}

/// Files of a bundle linked from the table when present.
const BUNDLE_FILES: [&str; 3] = ["repro.py", "minimized.onnx", "original.onnx"];

impl Bundle {
    fn from_meta(dir: &str, bundle_dir: &Path, meta: &Value) -> Bundle {
        let backends = match meta.get("backends") {
            Some(Value::Array(a)) => a.iter().map(value_text).collect(),
            Some(Value::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        };
        let minimized = match meta.get("minimized") {
            None => DASH.to_string(),
            Some(Value::Null) => "pending".to_string(),
            Some(m) => {
                let n = |k: &str| int(m, &[k]).map_or_else(|| DASH.to_string(), |n| n.to_string());
                format!("{} → {}", n("nodes_before"), n("nodes_after"))
            }
        };
        Bundle {
            dir: dir.to_string(),
            id: string(meta, &["id"]).unwrap_or_else(|| dir.to_string()),
            kind: string(meta, &["kind"]),
            backends,
            stage: string(meta, &["stage"]),
            op_type: string(meta, &["op_type"]),
            message: string(meta, &["message"]),
            hits: int(meta, &["hits"]),
            first: Seen::from(meta.get("first_seen")),
            last: Seen::from(meta.get("last_seen")),
            minimized,
            triage: string(meta, &["triage"]),
            signature: string(meta, &["signature"]),
            files: BUNDLE_FILES
                .into_iter()
                .filter(|f| bundle_dir.join(f).is_file())
                .collect(),
        }
    }

    fn backends_text(&self) -> String {
        if self.backends.is_empty() {
            DASH.to_string()
        } else {
            self.backends.join(", ")
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

fn load_bundles(findings: &Path, warnings: &mut Vec<String>) -> Result<Vec<Bundle>, ReportError> {
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
        match serde_json::from_str::<Value>(&text) {
            Ok(v) if v.is_object() => bundles.push(Bundle::from_meta(&name, &dir, &v)),
            Ok(_) => warnings.push(format!("{shown}: not a JSON object; bundle skipped")),
            Err(e) => warnings.push(format!("{shown}: invalid JSON: {e}; bundle skipped")),
        }
    }
    bundles.sort_by(Bundle::order);
    Ok(bundles)
}

// ---------------------------------------------------------------------------------------------
// Escaping
// ---------------------------------------------------------------------------------------------

/// Escapes text for HTML content and attribute values (also valid XML).
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            // Control characters are not allowed in XML; show them as a replacement mark.
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' && c != '\r' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

/// Percent-encodes a path segment for an `href`.
fn url_segment(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            o.push(b as char);
        } else {
            let _ = write!(o, "%{b:02X}");
        }
    }
    o
}

/// The first `n` characters of `s`, with "…" when cut.
fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Whitespace runs as single spaces ("—" for none).
fn one_line(s: Option<&str>) -> String {
    match s {
        Some(s) if !s.trim().is_empty() => s.split_whitespace().collect::<Vec<_>>().join(" "),
        _ => DASH.to_string(),
    }
}

/// A Markdown table cell: one line, `|` escaped.
fn md_cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

// ---------------------------------------------------------------------------------------------
// SVG line charts
// ---------------------------------------------------------------------------------------------

/// One line of a chart.
struct Line {
    label: String,
    color: &'static str,
    /// `(elapsed seconds, value)`, in time order.
    points: Vec<(f64, f64)>,
    /// Draw as a step function (counts) instead of straight segments.
    step: bool,
    /// Marked points with a hover text.
    marks: Vec<(f64, f64, String)>,
    /// Scaled on the chart's right-hand axis ([`Chart::right_label`]).
    right: bool,
}

/// A line chart over elapsed time.
struct Chart<'a> {
    /// `id` prefix of the SVG's title element.
    id: &'a str,
    title: &'a str,
    y_label: &'a str,
    /// The y axis never goes above this (percentages).
    y_cap: Option<f64>,
    /// The y ticks are whole numbers (counts), on both axes.
    integer_y: bool,
    /// Label of the right-hand axis, for lines of another scale (`Line::right`).
    right_label: Option<&'a str>,
    lines: Vec<Line>,
}

const W: f64 = 760.0;
const H: f64 = 300.0;
const LEFT: f64 = 64.0;
/// Right margin without and with a right-hand axis.
const RIGHT: f64 = 20.0;
const RIGHT_AXIS: f64 = 60.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 46.0;

/// A step of 1, 2 or 5 × 10^k giving about `target` intervals over `range`.
fn nice_step(range: f64, target: f64) -> f64 {
    let raw = (range / target).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// An axis from 0: (upper end, tick step), covering `max`.
fn axis(max: f64, integer: bool, cap: Option<f64>) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let mut step = nice_step(max, 5.0);
    if integer {
        step = step.max(1.0).round();
    }
    let mut hi = (max / step).ceil() * step;
    if let Some(cap) = cap.filter(|&c| hi > c) {
        hi = cap;
        step = nice_step(cap, 5.0);
    }
    (hi, step)
}

/// A tick label with as many decimals as the step needs.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    format!("{v:.decimals$}")
}

/// Keeps, per pixel column, the first, lowest, highest and last point (in order), so long
/// series stay small without losing their envelope.
fn decimate(points: &[(f64, f64)], px: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut i = 0;
    while i < points.len() {
        let col = px(points[i].0).floor();
        let mut j = i;
        while j < points.len() && px(points[j].0).floor() == col {
            j += 1;
        }
        let group = &points[i..j];
        let lo = (0..group.len())
            .min_by(|&a, &b| group[a].1.total_cmp(&group[b].1))
            .unwrap_or(0);
        let hi = (0..group.len())
            .max_by(|&a, &b| group[a].1.total_cmp(&group[b].1))
            .unwrap_or(0);
        let mut keep = vec![0, lo, hi, group.len() - 1];
        keep.sort_unstable();
        keep.dedup();
        out.extend(keep.into_iter().map(|k| group[k]));
        i = j;
    }
    out
}

impl Chart<'_> {
    fn svg(&self) -> String {
        let right_label = self
            .right_label
            .filter(|_| self.lines.iter().any(|l| l.right));
        let pw = W
            - LEFT
            - if right_label.is_some() {
                RIGHT_AXIS
            } else {
                RIGHT
            };
        let ph = H - TOP - BOTTOM;
        let all = || self.lines.iter().flat_map(|l| l.points.iter());
        let side = |right: bool| {
            self.lines
                .iter()
                .filter(move |l| l.right == right)
                .flat_map(|l| l.points.iter())
        };
        let has_data = all().next().is_some();
        let x_max = all().map(|p| p.0).fold(0.0, f64::max);
        let y_max = side(false).map(|p| p.1).fold(0.0, f64::max);
        let r_max = side(true).map(|p| p.1).fold(0.0, f64::max);

        // Time unit by range, so tick labels stay short.
        let (unit, unit_name) = if x_max >= 7200.0 {
            (3600.0, "h")
        } else if x_max >= 600.0 {
            (60.0, "min")
        } else {
            (1.0, "s")
        };
        let (x_hi, x_step) = axis(x_max / unit, false, None);
        let (y_hi, y_step) = axis(y_max, self.integer_y, self.y_cap);
        let sx = |x: f64| LEFT + (x / unit / x_hi) * pw;
        let (r_hi, r_step) = axis(r_max, self.integer_y, self.y_cap);
        let sy = |y: f64| TOP + ph - (y.clamp(0.0, y_hi) / y_hi) * ph;
        let sr = |y: f64| TOP + ph - (y.clamp(0.0, r_hi) / r_hi) * ph;

        let mut s = String::new();
        let _ = write!(
            s,
            "<svg class=\"chart\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" \
             role=\"img\" aria-labelledby=\"{id}-title\">\n<title id=\"{id}-title\">{t}</title>\n",
            id = self.id,
            t = esc(self.title)
        );
        let _ = writeln!(
            s,
            "<rect class=\"plot\" x=\"{LEFT}\" y=\"{TOP}\" width=\"{pw}\" height=\"{ph}\"/>"
        );

        // Grid and ticks.
        let mut k = 0.0;
        while k * y_step <= y_hi + y_step * 1e-9 {
            let v = k * y_step;
            let y = sy(v);
            let _ = writeln!(
                s,
                "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\
                 <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                tick_label(v, y_step)
            );
            k += 1.0;
        }
        if let Some(label) = right_label {
            let color = self
                .lines
                .iter()
                .find(|l| l.right)
                .map_or("#555", |l| l.color);
            let xr = LEFT + pw;
            let mut k = 0.0;
            while k * r_step <= r_hi + r_step * 1e-9 {
                let v = k * r_step;
                let y = sr(v);
                let _ = writeln!(
                    s,
                    "<line class=\"axis\" x1=\"{xr:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\
                     <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" style=\"fill:{color}\">{}</text>",
                    xr + 4.0,
                    xr + 6.0,
                    y + 4.0,
                    tick_label(v, r_step)
                );
                k += 1.0;
            }
            let _ = writeln!(
                s,
                "<line class=\"axis\" x1=\"{xr:.1}\" y1=\"{TOP}\" x2=\"{xr:.1}\" y2=\"{:.1}\"/>\
                 <text class=\"label\" transform=\"translate({:.1} {:.1}) rotate(90)\" \
                 text-anchor=\"middle\">{}</text>",
                TOP + ph,
                W - 12.0,
                TOP + ph / 2.0,
                esc(label)
            );
        }
        let mut k = 0.0;
        while k * x_step <= x_hi + x_step * 1e-9 {
            let v = k * x_step;
            let x = LEFT + v / x_hi * pw;
            let _ = writeln!(
                s,
                "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>\
                 <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                TOP + ph,
                TOP + ph + 16.0,
                tick_label(v, x_step)
            );
            k += 1.0;
        }
        // Axes and their labels.
        let _ = writeln!(
            s,
            "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\"/>\
             <line class=\"axis\" x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{b:.1}\"/>",
            b = TOP + ph,
            r = LEFT + pw
        );
        let _ = writeln!(
            s,
            "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">elapsed ({unit_name})</text>",
            LEFT + pw / 2.0,
            H - 8.0
        );
        let _ = writeln!(
            s,
            "<text class=\"label\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            TOP + ph / 2.0,
            esc(self.y_label)
        );

        // Lines.
        for l in &self.lines {
            if l.points.is_empty() {
                continue;
            }
            let scale_y = |y: f64| if l.right { sr(y) } else { sy(y) };
            let pts = decimate(&l.points, sx);
            let mut d = String::new();
            for (i, &(x, y)) in pts.iter().enumerate() {
                let (x, y) = (sx(x), scale_y(y));
                if i == 0 {
                    let _ = write!(d, "M{x:.1} {y:.1}");
                } else if l.step {
                    let _ = write!(d, " H{x:.1} V{y:.1}");
                } else {
                    let _ = write!(d, " L{x:.1} {y:.1}");
                }
            }
            let _ = writeln!(
                s,
                "<path class=\"line\" d=\"{d}\" stroke=\"{}\"><title>{}</title></path>",
                l.color,
                esc(&l.label)
            );
            for (x, y, text) in &l.marks {
                let _ = writeln!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{}\"><title>{}</title></circle>",
                    sx(*x),
                    scale_y(*y),
                    l.color,
                    esc(text)
                );
            }
        }
        if !has_data {
            let _ = writeln!(
                s,
                "<text class=\"nodata\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">no data</text>",
                LEFT + pw / 2.0,
                TOP + ph / 2.0
            );
        }

        // Legend, left to right above the plot.
        let mut x = LEFT;
        for l in &self.lines {
            let label = if l.right && right_label.is_some() {
                format!("{} (right axis)", l.label)
            } else {
                l.label.clone()
            };
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" y1=\"16\" x2=\"{:.1}\" y2=\"16\" stroke=\"{}\" stroke-width=\"3\"/>\
                 <text class=\"legend\" x=\"{:.1}\" y=\"20\">{}</text>",
                x + 18.0,
                l.color,
                x + 23.0,
                esc(&label)
            );
            x += 23.0 + 7.0 * label.chars().count() as f64 + 18.0;
        }
        s.push_str("</svg>");
        s
    }
}

// ---------------------------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------------------------

const CSS: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222;background:#fff}
h1{font-size:1.5em;margin-bottom:.2em}
h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd;padding-bottom:.2em}
.sub{color:#666;margin-top:0}
.cols{display:flex;flex-wrap:wrap;gap:2em;align-items:flex-start}
table{border-collapse:collapse;font-size:.9em}
th,td{border:1px solid #ddd;padding:.3em .55em;text-align:left;vertical-align:top}
th{background:#f3f3f3}
tbody tr:nth-child(even){background:#fafafa}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:inline-block;width:120px;height:.7em;background:#eee;vertical-align:middle}
.bar span{display:block;height:100%;background:#1f77b4}
.files a{font-size:.85em;margin-right:.5em}
.kind{font-weight:600}
.msg{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em;word-break:break-word;min-width:28em;max-width:40em}
figure{margin:1em 0}
figcaption{font-weight:600;margin-bottom:.3em}
svg.chart{width:100%;max-width:760px;height:auto;font-size:11px}
svg .plot{fill:#fcfcfc;stroke:none}
svg .grid{stroke:#e6e6e6;stroke-width:1}
svg .axis{stroke:#555;stroke-width:1}
svg .tick{fill:#555}
svg .label{fill:#333;font-size:12px}
svg .legend{fill:#333;font-size:12px}
svg .line{fill:none;stroke-width:1.6}
svg .nodata{fill:#999;font-size:16px}
.warn{color:#8a4b00}
";

impl Campaign {
    fn coverage_chart(&self) -> Chart<'static> {
        Chart {
            id: "coverage",
            title: "Coverage over time",
            y_label: "coverage (%)",
            y_cap: Some(100.0),
            integer_y: false,
            right_label: None,
            lines: FAMILIES
                .iter()
                .map(|f| Line {
                    label: f.label.to_string(),
                    color: f.color,
                    points: self.series.points(f.column),
                    step: false,
                    marks: Vec::new(),
                    right: false,
                })
                .collect(),
        }
    }

    fn speed_chart(&self) -> Chart<'static> {
        Chart {
            id: "speed",
            title: "Executions per second over time",
            y_label: "executions / s",
            y_cap: None,
            integer_y: false,
            right_label: None,
            lines: vec![
                Line {
                    label: "per interval".into(),
                    color: "#aec7e8",
                    points: self.series.interval_rates(),
                    step: false,
                    marks: Vec::new(),
                    right: false,
                },
                Line {
                    label: "average since start".into(),
                    color: "#1f77b4",
                    points: self.series.points("execs_per_s"),
                    step: false,
                    marks: Vec::new(),
                    right: false,
                },
            ],
        }
    }

    fn findings_chart(&self) -> Chart<'static> {
        let mut lines = vec![Line {
            label: "findings (cumulative)".into(),
            color: "#d62728",
            points: self.series.points("findings"),
            step: true,
            marks: Vec::new(),
            right: false,
        }];
        let sigs = self.unique_signatures();
        if !sigs.is_empty() {
            let end = self
                .series
                .last_elapsed()
                .into_iter()
                .chain(num(&self.stats, &["elapsed_s"]))
                .chain(sigs.last().map(|s| s.0))
                .fold(0.0, f64::max);
            let mut points = vec![(0.0, 0.0)];
            let mut marks = Vec::new();
            for (i, (t, ids)) in sigs.iter().enumerate() {
                let n = (i + 1) as f64;
                points.push((*t, n));
                marks.push((*t, n, format!("{ids} ({t:.1} s)")));
            }
            points.push((end, sigs.len() as f64));
            lines.push(Line {
                label: "unique signatures".into(),
                color: "#ff7f0e",
                points,
                step: true,
                marks,
                right: true,
            });
        }
        Chart {
            id: "findings",
            title: "Findings over time",
            y_label: "findings",
            y_cap: None,
            integer_y: true,
            right_label: Some("unique signatures"),
            lines,
        }
    }

    fn html(&self) -> String {
        let mut h = String::new();
        let title = format!("mutagraph campaign report: {}", self.name);
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
             <title>{t}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{t}</h1>\n",
            t = esc(&title)
        );
        let _ = writeln!(
            h,
            "<p class=\"sub\">{} timeseries rows · {} bug bundles · files: \
             <a href=\"stats.json\">stats.json</a> <a href=\"campaign.toml\">campaign.toml</a> \
             <a href=\"timeseries.csv\">timeseries.csv</a> <a href=\"findings/\">findings/</a></p>",
            self.series.columns.get("elapsed_s").map_or(0, Vec::len),
            self.bundles.len()
        );

        // Summary.
        h.push_str("<h2>Summary</h2>\n<div class=\"cols\">\n");
        kv_table(&mut h, "Campaign", &self.config_rows());
        kv_table(&mut h, "Totals", &self.total_rows());
        h.push_str("<table>\n<caption>Coverage</caption>\n<thead><tr><th>family</th><th>covered / total</th><th>%</th><th></th><th>seeds %</th></tr></thead>\n<tbody>\n");
        for r in self.coverage_rows() {
            let ct = match (r.covered, r.total) {
                (None, None) => DASH.to_string(),
                (c, t) => format!(
                    "{} / {}",
                    c.map_or_else(|| DASH.to_string(), |c| c.to_string()),
                    t.map_or_else(|| DASH.to_string(), |t| t.to_string())
                ),
            };
            let pct = r
                .percent
                .map_or_else(|| DASH.to_string(), |p| format!("{p:.1}"));
            let bar = r.percent.unwrap_or(0.0).clamp(0.0, 100.0);
            let seed = r
                .seed_percent
                .map_or_else(|| DASH.to_string(), |p| format!("{p:.1}"));
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td><span class=\"bar\"><span style=\"width:{bar:.1}%\"></span></span></td>\
                 <td class=\"num\">{}</td></tr>",
                esc(r.label),
                esc(&ct),
                esc(&pct),
                esc(&seed)
            );
        }
        h.push_str("</tbody>\n</table>\n");
        let by_kind = self.findings_by_kind();
        h.push_str("<table>\n<caption>Findings by kind</caption>\n<thead><tr><th>kind</th><th>findings</th><th>bundles</th></tr></thead>\n<tbody>\n");
        let mut kinds: BTreeMap<String, (String, usize)> =
            by_kind.into_iter().map(|(k, n)| (k, (n, 0))).collect();
        for b in &self.bundles {
            let k = b.kind.clone().unwrap_or_else(|| DASH.to_string());
            kinds.entry(k).or_insert_with(|| (DASH.to_string(), 0)).1 += 1;
        }
        if kinds.is_empty() {
            h.push_str("<tr><td colspan=\"3\">no findings</td></tr>\n");
        }
        for (k, (n, b)) in &kinds {
            let _ = writeln!(
                h,
                "<tr><td class=\"kind\">{}</td><td class=\"num\">{}</td><td class=\"num\">{b}</td></tr>",
                esc(k),
                esc(n)
            );
        }
        h.push_str("</tbody>\n</table>\n</div>\n");

        // Charts.
        h.push_str("<h2>Over time</h2>\n");
        for chart in [
            self.coverage_chart(),
            self.speed_chart(),
            self.findings_chart(),
        ] {
            let _ = writeln!(
                h,
                "<figure>\n<figcaption>{}</figcaption>\n{}\n</figure>",
                esc(chart.title),
                chart.svg()
            );
        }

        // Findings.
        let _ = writeln!(h, "<h2>Findings ({} bundles)</h2>", self.bundles.len());
        if self.bundles.is_empty() {
            h.push_str("<p>No bug bundles.</p>\n");
        } else {
            h.push_str(
                "<table class=\"findings\">\n<thead><tr><th>id</th><th>kind</th><th>backends</th>\
                 <th>stage</th><th>op type</th><th>hits</th><th>first seen</th><th>last seen</th>\
                 <th>minimized nodes</th><th>triage</th><th>message</th></tr></thead>\n<tbody>\n",
            );
            for b in &self.bundles {
                self.finding_row(&mut h, b);
            }
            h.push_str("</tbody>\n</table>\n");
        }

        if !self.warnings.is_empty() {
            h.push_str("<h2>Warnings</h2>\n<ul class=\"warn\">\n");
            for w in &self.warnings {
                let _ = writeln!(h, "<li>{}</li>", esc(w));
            }
            h.push_str("</ul>\n");
        }
        h.push_str("</body>\n</html>\n");
        h
    }

    fn finding_row(&self, h: &mut String, b: &Bundle) {
        let dir = format!("findings/{}/", url_segment(&b.dir));
        let opt = |v: &Option<String>| esc(v.as_deref().unwrap_or(DASH));
        let sig = b
            .signature
            .as_deref()
            .map(|s| format!(" title=\"signature: {}\"", esc(s)))
            .unwrap_or_default();
        let mut files = format!("<a href=\"{dir}\">dir</a>");
        for f in &b.files {
            let _ = write!(files, " <a href=\"{dir}{f}\">{f}</a>");
        }
        let message = b.message.as_deref().unwrap_or(DASH);
        let _ = writeln!(
            h,
            "<tr><td><a href=\"{dir}REPORT.md\"{sig}>{id}</a><div class=\"files\">{files}</div></td>\
             <td class=\"kind\">{kind}</td><td>{backends}</td><td>{stage}</td><td>{op}</td>\
             <td class=\"num\">{hits}</td><td>{first}</td><td>{last}</td><td>{min}</td>\
             <td>{triage}</td><td class=\"msg\" title=\"{full}\">{short}</td></tr>",
            id = esc(&b.id),
            kind = opt(&b.kind),
            backends = esc(&b.backends_text()),
            stage = opt(&b.stage),
            op = opt(&b.op_type),
            hits = b.hits.map_or_else(|| DASH.to_string(), |n| n.to_string()),
            first = esc(&b.first.text()),
            last = esc(&b.last.text()),
            min = esc(&b.minimized),
            triage = opt(&b.triage),
            full = esc(message),
            short = esc(&truncate(message, HTML_MESSAGE_CHARS)),
        );
    }

    // -----------------------------------------------------------------------------------------
    // Markdown
    // -----------------------------------------------------------------------------------------

    fn markdown(&self) -> String {
        let mut m = String::new();
        let _ = writeln!(m, "# mutagraph campaign report: {}\n", md_cell(&self.name));
        m.push_str("## Campaign\n\n| setting | value |\n|---|---|\n");
        for (k, v) in self.config_rows() {
            let _ = writeln!(m, "| {k} | {} |", md_cell(&v));
        }
        m.push_str("\n## Totals\n\n| total | value |\n|---|---|\n");
        for (k, v) in self.total_rows() {
            let _ = writeln!(m, "| {k} | {} |", md_cell(&v));
        }
        let by_kind = self.findings_by_kind();
        if !by_kind.is_empty() {
            let text: Vec<String> = by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
            let _ = writeln!(m, "| findings by kind | {} |", md_cell(&text.join(", ")));
        }
        m.push_str(
            "\n## Coverage\n\n| family | covered | total | % | seeds % |\n|---|---:|---:|---:|---:|\n",
        );
        for r in self.coverage_rows() {
            let o = |v: Option<u64>| v.map_or_else(|| DASH.to_string(), |v| v.to_string());
            let p = |v: Option<f64>| v.map_or_else(|| DASH.to_string(), |v| format!("{v:.1}"));
            let _ = writeln!(
                m,
                "| {} | {} | {} | {} | {} |",
                r.label,
                o(r.covered),
                o(r.total),
                p(r.percent),
                p(r.seed_percent)
            );
        }
        let _ = writeln!(m, "\n## Findings ({} bundles)\n", self.bundles.len());
        if self.bundles.is_empty() {
            m.push_str("No bug bundles.\n");
        } else {
            m.push_str(
                "| id | kind | backends | stage | op type | hits | first seen | last seen | minimized | message |\n\
                 |---|---|---|---|---|---:|---|---|---|---|\n",
            );
            for b in &self.bundles {
                let o = |v: &Option<String>| md_cell(v.as_deref().unwrap_or(DASH));
                let _ = writeln!(
                    m,
                    "| [{}](findings/{}/REPORT.md) | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    md_cell(&b.id).replace(['[', ']'], ""),
                    url_segment(&b.dir),
                    o(&b.kind),
                    md_cell(&b.backends_text()),
                    o(&b.stage),
                    o(&b.op_type),
                    b.hits.map_or_else(|| DASH.to_string(), |n| n.to_string()),
                    md_cell(&b.first.text()),
                    md_cell(&b.last.text()),
                    md_cell(&b.minimized),
                    md_cell(&truncate(&one_line(b.message.as_deref()), MD_MESSAGE_CHARS)),
                );
            }
        }
        if !self.warnings.is_empty() {
            m.push_str("\n## Warnings\n\n");
            for w in &self.warnings {
                let _ = writeln!(m, "- {}", w.replace('\n', " "));
            }
        }
        let _ = writeln!(m, "\nHTML report: {HTML_FILE}");
        m
    }
}

/// A two-column table with a caption.
fn kv_table(h: &mut String, caption: &str, rows: &[(&str, String)]) {
    let _ = writeln!(h, "<table>\n<caption>{}</caption>\n<tbody>", esc(caption));
    for (k, v) in rows {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    h.push_str("</tbody>\n</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_axes() {
        assert_eq!(axis(87.0, false, Some(100.0)), (100.0, 20.0));
        assert_eq!(axis(3.0, true, None), (3.0, 1.0));
        assert_eq!(axis(0.0, true, None), (1.0, 1.0));
        assert_eq!(axis(12.3, false, None), (15.0, 5.0));
        let (hi, step) = axis(0.37, false, None);
        assert!((hi - 0.4).abs() < 1e-12 && (step - 0.1).abs() < 1e-12);
        assert_eq!(tick_label(0.30000000000000004, 0.1), "0.3");
        assert_eq!(tick_label(40.0, 20.0), "40");
    }

    #[test]
    fn decimation_keeps_the_envelope() {
        let pts: Vec<(f64, f64)> = (0..10_000)
            .map(|i| (i as f64 / 100.0, if i == 5000 { 99.0 } else { 1.0 }))
            .collect();
        let d = decimate(&pts, |x| x);
        assert!(d.len() <= 4 * 101, "{}", d.len());
        assert!(d.contains(&(50.0, 99.0)));
        assert_eq!(d.first(), pts.first());
        assert_eq!(d.last(), pts.last());
    }

    #[test]
    fn long_campaigns_use_hours_and_a_right_axis_when_asked() {
        let line = |right| Line {
            label: "l".into(),
            color: "#000",
            points: vec![(0.0, 0.0), (10_000.0, 3.0)],
            step: true,
            marks: Vec::new(),
            right,
        };
        let chart = |right| Chart {
            id: "t",
            title: "t",
            y_label: "y",
            y_cap: None,
            integer_y: true,
            right_label: Some("r"),
            lines: vec![line(false), line(right)],
        };
        let svg = chart(true).svg();
        assert!(svg.contains("elapsed (h)"));
        assert!(svg.contains("rotate(90)"), "right axis label");
        assert!(svg.contains("l (right axis)"));
        let svg = chart(false).svg();
        assert!(
            !svg.contains("rotate(90)"),
            "no right-hand line, no right axis"
        );
    }

    #[test]
    fn escaping_and_truncation() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(truncate("héllo", 2), "hé…");
        assert_eq!(truncate("hé", 2), "hé");
        assert_eq!(url_segment("crash-ort 1/é"), "crash-ort%201%2F%C3%A9");
        assert_eq!(md_cell("a|b\nc"), "a\\|b c");
        assert_eq!(human_duration(3723.0), "1h 02m 03s");
        assert_eq!(human_duration(65.0), "1m 05s");
    }

    #[test]
    fn timeseries_by_header_with_partial_last_line() {
        let mut w = Vec::new();
        let s = Series::parse(
            "extra,elapsed_s,findings\nx,1.0,0\ny,2.0,1\nbad\nz,3.0,",
            &mut w,
        );
        assert_eq!(s.points("findings"), vec![(1.0, 0.0), (2.0, 1.0)]);
        assert!(s.points("executions").is_empty());
        assert_eq!(
            w,
            vec!["timeseries.csv: 1 malformed row(s) skipped".to_string()]
        );
    }
}
