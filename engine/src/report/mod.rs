//! `mutagraph report OUT_DIR`: a campaign report built from a campaign output directory (or,
//! over a sync directory shared by instances, [`sync`]'s report of the whole campaign).
//!
//! [`render`] reads what a campaign wrote (`campaign.toml`, `stats.json`, `timeseries.csv`,
//! `findings/<id>/meta.json`, and `state.json` for the list of sessions when `stats.json`
//! lacks it) and writes, each file atomically:
//!
//! * `report.html`: one self-contained page (inline CSS, inline SVG charts drawn here, a small
//!   inline script, no external resource): the campaign configuration and totals; findings per
//!   backend and per op type; coverage per family, executions per second and findings over
//!   time, with a marker where each resumed session started; one row per bug bundle in a table
//!   that sorts by any column (click its header) and filters by text, backend, kind and op type.
//! * `report.md`: the same totals and tables in Markdown, for a terminal.
//! * `findings/<id>/REPORT.html` beside each bundle's `REPORT.md`: that document as HTML
//!   ([`md2html`], through `pulldown-cmark`), which the findings table links to (a browser
//!   shows a `.md` file as raw text).
//!
//! The JSON files are read as the types their writer uses ([`crate::persisted`]): `stats.json`
//! as [`persisted::Stats`], whose every field defaults (a file written before a field existed
//! reads with its default, 0 for a counter; coverage it lacks shows as "—"); `meta.json` as
//! `bundle::Meta`, with the bundle's own reader `bundle::read_meta` (the one reader of that
//! file); `state.json`, for the sessions, as [`persisted::StateSessions`]. Each carries a
//! format `version`: files without one (written before versions) read as above; a newer
//! version than this build knows is refused. The rest: `campaign.toml` as a `toml::Table`
//! (values shown as TOML writes them), CSV columns looked up by header name. What is required
//! and what is only warned about:
//!
//! * `stats.json` missing, not a JSON object, or with a field of another type:
//!   [`ReportError`] naming the file.
//! * `stats.json` or a `meta.json` of a newer format version: [`ReportError::NewerFormat`]
//!   naming the file; a `state.json` of a newer version: a warning and no session markers.
//! * `campaign.toml` missing: a warning and an unknown configuration; unparsable: an error.
//! * `timeseries.csv` missing or empty: charts that say "no data". A partial last line (no
//!   final newline: the campaign is writing it) is ignored silently; other malformed rows are
//!   skipped with one warning.
//! * `findings/<id>/` without `meta.json`: ignored (a bundle still being written). A
//!   `meta.json` that cannot be read, is not JSON or not of `bundle::Meta`'s shape does not
//!   stop the report: it becomes a warning naming it and what is wrong, listed in the report's
//!   "Warnings" section and in [`RenderedReport::warnings`], and the bundle gets a row with
//!   only its directory name ("—" elsewhere). A `REPORT.html` that cannot be written is a
//!   warning too (the row then links to `REPORT.md`).
//!
//! Every row gets an op type where one can be found: the op localization blamed (on the
//! minimized model, else on the original), else the node producing the output the finding
//! names (read from the bundle's model), else the op of the minimized model, else the op most
//! hits were seen at; the cell's tooltip says which. The triage column summarises what the
//! triage established: the layer (kernel or optimizer), how the node was found (localization's
//! verdict, or the crash message), the attributes the bug needs, merged signatures, a type gap,
//! a hand-written note (`triage` in `meta.json`).
//!
//! Sessions: a campaign can be stopped and resumed; the campaign time (`elapsed_s`) runs on
//! across sessions. Where each session started is read from `sessions` in `stats.json` (else
//! in `state.json`): a list of `{"iteration": …, "elapsed_s": …}`, one per session. A campaign
//! that does not record it gets no markers.
//!
//! The output depends only on the directory's contents (no clock, no absolute paths in the
//! HTML beyond the directory's name), so rendering twice gives the same bytes.

mod bundles;
mod charts;
mod html;
mod markdown;
pub mod md2html;
mod read;
pub mod sync;
mod views;

/// The page style and table helper, for the other self-contained pages (`consistency.html`).
pub(crate) use html::{kv_table, page_head};

use crate::persisted;
use mutagraph_ir::model::write_atomic;
use read::Campaign;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Name of the HTML report inside the campaign directory.
pub const HTML_FILE: &str = "report.html";
/// Name of the Markdown report inside the campaign directory.
pub const MARKDOWN_FILE: &str = "report.md";
/// Name of a bundle's report rendered as HTML, beside its `REPORT.md`.
pub const BUNDLE_HTML_FILE: &str = "REPORT.html";

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
    /// The file was written by a newer mutagraph, in a format version this one does not read
    /// ([`crate::persisted`]).
    #[error(
        "{}: format version {found} is newer than this mutagraph reads (up to {supported}); \
         render the report with the mutagraph that wrote it",
        path.display()
    )]
    NewerFormat {
        /// The file.
        path: PathBuf,
        /// Its `version`.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
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
            | ReportError::NewerFormat { path, .. }
            | ReportError::Write { path, .. } => path,
        }
    }

    /// The error of reading the persisted file `path`.
    fn format(path: &Path, e: persisted::FormatError) -> ReportError {
        match e {
            persisted::FormatError::Newer { found, supported } => ReportError::NewerFormat {
                path: path.to_path_buf(),
                found,
                supported,
            },
            e => ReportError::Parse {
                path: path.to_path_buf(),
                problem: e.to_string(),
            },
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
    /// The bundles' `REPORT.html` files written (or already up to date).
    pub bundle_pages: Vec<PathBuf>,
}

/// Reads the campaign output directory `out_dir` and writes `report.html`, `report.md` and
/// each bundle's `REPORT.html` (each atomically: temporary file, then rename). See the module
/// documentation for what is required and what is tolerated.
pub fn render(out_dir: &Path) -> Result<RenderedReport, ReportError> {
    if sync::is_sync_dir(out_dir) {
        return sync::render(out_dir);
    }
    let mut campaign = Campaign::load(out_dir)?;
    let bundle_pages = write_bundle_pages(out_dir, &mut campaign);
    let (html, markdown) = write_pages(out_dir, &campaign.html(), &campaign.markdown())?;
    Ok(RenderedReport {
        html,
        markdown,
        markdown_text: campaign.markdown(),
        warnings: campaign.warnings,
        bundle_pages,
    })
}

/// Writes `report.html` and `report.md` into `dir` (each atomically); returns their paths.
fn write_pages(dir: &Path, html: &str, markdown: &str) -> Result<(PathBuf, PathBuf), ReportError> {
    let html_path = dir.join(HTML_FILE);
    let md_path = dir.join(MARKDOWN_FILE);
    for (path, text) in [(&html_path, html), (&md_path, markdown)] {
        write_atomic(path, text.as_bytes()).map_err(|source| ReportError::Write {
            path: path.clone(),
            source,
        })?;
    }
    Ok((html_path, md_path))
}

/// Renders each bundle's `REPORT.md` to `REPORT.html` beside it (left alone when already the
/// same bytes); a bundle whose page could not be written keeps linking to `REPORT.md`.
fn write_bundle_pages(out_dir: &Path, campaign: &mut Campaign) -> Vec<PathBuf> {
    let mut written = Vec::new();
    for b in &mut campaign.bundles {
        if !b.has_report_md {
            continue;
        }
        let dir = out_dir.join("findings").join(&b.dir);
        let shown = format!("findings/{}/REPORT.md", b.dir);
        let text = match std::fs::read(dir.join("REPORT.md")) {
            Ok(t) => String::from_utf8_lossy(&t).into_owned(),
            Err(e) => {
                campaign
                    .warnings
                    .push(format!("{shown}: cannot read: {e}; linked as is"));
                continue;
            }
        };
        let page = md2html::page(&text, &b.id, &b.files);
        let path = dir.join(BUNDLE_HTML_FILE);
        let same = std::fs::read(&path).is_ok_and(|old| old == page.as_bytes());
        if !same && let Err(e) = write_atomic(&path, page.as_bytes()) {
            campaign.warnings.push(format!(
                "findings/{}/{BUNDLE_HTML_FILE}: cannot write: {e}; REPORT.md linked instead",
                b.dir
            ));
            continue;
        }
        b.has_report_html = true;
        written.push(path);
    }
    written
}

// ---------------------------------------------------------------------------------------------
// Text helpers shared by the renderers
// ---------------------------------------------------------------------------------------------

pub(crate) const DASH: &str = "—";

/// Escapes text for HTML content and attribute values (also valid XML).
pub(crate) fn esc(s: &str) -> String {
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
pub(crate) fn truncate(s: &str, n: usize) -> String {
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
pub(crate) fn md_cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// `1h 02m 03s`, `4m 05s`, `6.2s`.
pub(crate) fn human_duration(s: f64) -> String {
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

#[cfg(test)]
mod tests;
