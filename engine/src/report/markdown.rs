//! `report.md`: the totals and tables of the HTML report in Markdown, for a terminal.

use super::read::{Campaign, resumes};
use super::{DASH, HTML_FILE, md_cell, one_line, truncate, url_segment};
use std::fmt::Write as _;

/// Messages longer than this are cut in the Markdown table.
const MD_MESSAGE_CHARS: usize = 120;

impl Campaign {
    pub fn markdown(&self) -> String {
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
        let resumes = resumes(&self.sessions);
        if !resumes.is_empty() {
            m.push('\n');
            for (_, _, text) in &resumes {
                let _ = writeln!(m, "- {}", md_cell(text));
            }
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
        let optimizer = self.optimizer_lines();
        if !optimizer.is_empty() {
            m.push_str("\n## Optimizer rewrites and contrib ops\n\n");
            for l in &optimizer {
                let _ = writeln!(m, "- {}", md_cell(l));
            }
        }
        self.markdown_views(&mut m);
        self.markdown_findings(&mut m);
        if !self.warnings.is_empty() {
            m.push_str("\n## Warnings\n\n");
            for w in &self.warnings {
                let _ = writeln!(m, "- {}", w.replace('\n', " "));
            }
        }
        let _ = writeln!(m, "\nHTML report: {HTML_FILE}");
        m
    }

    /// The per-backend and per-op tables (only when there are bundles).
    fn markdown_views(&self, m: &mut String) {
        if self.bundles.is_empty() {
            return;
        }
        let v = self.backend_view();
        m.push_str("\n## Per backend\n\nBundles per backend (hits in parentheses); a bundle counts for every variant that showed it.\n\n| backend | runs | bundles | hits |");
        for k in &v.kinds {
            let _ = write!(m, " {} |", md_cell(k));
        }
        m.push_str(" minimized | pending | optimizer |\n|---|---:|---:|---:|");
        m.push_str(&"---:|".repeat(v.kinds.len()));
        m.push_str("---:|---:|---:|\n");
        for r in &v.rows {
            let _ = write!(
                m,
                "| {} | {} | {} | {} |",
                md_cell(&r.backend),
                r.runs.map_or_else(|| DASH.to_string(), |n| n.to_string()),
                r.total.bundles,
                r.total.hits
            );
            for k in &v.kinds {
                let c = r.by_kind.get(k).copied().unwrap_or_default();
                if c.bundles == 0 {
                    m.push_str(" 0 |");
                } else {
                    let _ = write!(m, " {} ({}) |", c.bundles, c.hits);
                }
            }
            let _ = writeln!(m, " {} | {} | {} |", r.minimized, r.pending, r.optimizer);
        }

        let v = self.op_view();
        m.push_str("\n## Per op type\n\nBundles per op type they are blamed on, per backend that showed them.\n\n| op type | bundles | hits |");
        for b in &v.backends {
            let _ = write!(m, " {} |", md_cell(b));
        }
        m.push_str(" kinds |\n|---|---:|---:|");
        m.push_str(&"---:|".repeat(v.backends.len()));
        m.push_str("---|\n");
        for r in &v.rows {
            let _ = write!(
                m,
                "| {}{} | {} | {} |",
                md_cell(&r.op),
                if r.inferred { " (inferred)" } else { "" },
                r.total.bundles,
                r.total.hits
            );
            for b in &v.backends {
                let n = r.by_backend.get(b).map_or(0, |c| c.bundles);
                let _ = write!(m, " {n} |");
            }
            let kinds: Vec<String> = r
                .by_kind
                .iter()
                .map(|(k, c)| format!("{k} {}", c.bundles))
                .collect();
            let _ = writeln!(m, " {} |", md_cell(&kinds.join(", ")));
        }
    }

    fn markdown_findings(&self, m: &mut String) {
        let _ = writeln!(m, "\n## Findings ({} bundles)\n", self.bundles.len());
        if self.bundles.is_empty() {
            m.push_str("No bug bundles.\n");
            return;
        }
        m.push_str(
            "| id | kind | backends | stage | op type | hits | first seen | last seen | minimized | triage | message |\n\
             |---|---|---|---|---|---:|---|---|---|---|---|\n",
        );
        for b in &self.bundles {
            let o = |v: &Option<String>| md_cell(v.as_deref().unwrap_or(DASH));
            let op = match &b.blame {
                Some(bl) if bl.localized => md_cell(&bl.op),
                Some(bl) => format!("{} (inferred)", md_cell(&bl.op)),
                None => DASH.to_string(),
            };
            let id = md_cell(&b.id).replace(['[', ']'], "");
            let id = if b.has_report_md {
                format!("[{id}](findings/{}/REPORT.md)", url_segment(&b.dir))
            } else {
                id
            };
            let _ = writeln!(
                m,
                "| {id} | {} | {} | {} | {op} | {} | {} | {} | {} | {} | {} |",
                o(&b.kind),
                md_cell(&b.backends_text()),
                o(&b.stage),
                b.hits.map_or_else(|| DASH.to_string(), |n| n.to_string()),
                md_cell(&b.first.text()),
                md_cell(&b.last.text()),
                md_cell(&b.minimized.text()),
                md_cell(&b.triage_text()),
                md_cell(&truncate(&one_line(b.message.as_deref()), MD_MESSAGE_CHARS)),
            );
        }
    }
}
