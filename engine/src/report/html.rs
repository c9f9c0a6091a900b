//! `report.html`: one self-contained page (inline CSS, SVG and script).
//!
//! The page is also well-formed XML (the script sits in a CDATA section), so tests can parse
//! it. Without JavaScript everything is shown and the filter bar stays hidden; with it the
//! findings table sorts by a click on a header (again: the other way) and filters by text,
//! backend, kind and op type; the backend and op names in the per-backend and per-op tables
//! set the filter.

use super::bundles::{Bundle, Minimized, Seen};
use super::charts::{Chart, Line, Marker};
use super::read::{Campaign, FAMILIES, resumes};
use super::{DASH, esc, truncate, url_segment};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Messages longer than this (in characters) are cut in the HTML table (full text in `title`).
const HTML_MESSAGE_CHARS: usize = 200;

pub(crate) const CSS: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:1.5em auto;max-width:1840px;padding:0 1.2em;color:#222;background:#fff}
h1{font-size:1.5em;margin-bottom:.2em}
h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd;padding-bottom:.2em}
.sub{color:#666;margin-top:0}
nav.toc a{margin-right:1em}
.cols{display:flex;flex-wrap:wrap;gap:2em;align-items:flex-start}
table{border-collapse:collapse;font-size:.9em}
caption{font-weight:600;padding-bottom:.2em}
th,td{border:1px solid #ddd;padding:.3em .55em;text-align:left;vertical-align:top}
th{background:#f3f3f3}
tbody tr:nth-child(even){background:#fafafa}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.zero{color:#bbb}
.bar{display:inline-block;width:120px;height:.7em;background:#eee;vertical-align:middle}
.bar span{display:block;height:100%;background:#1f77b4}
.files a{font-size:.85em;margin-right:.5em;white-space:nowrap}
.kind{font-weight:600}
.note{color:#666;font-size:.85em;margin:.3em 0}
.small{color:#666;font-size:.85em}
.nw{white-space:nowrap}
.inferred{font-style:italic;color:#555}
.tag{display:inline-block;background:#eef2f7;border-radius:3px;padding:0 .35em;margin:0 .25em .2em 0;font-size:.85em;overflow-wrap:anywhere}
table.findings{width:100%}
table.findings td.id{min-width:8em;max-width:20em;overflow-wrap:anywhere}
table.findings td.triage{min-width:8em;max-width:15em}
.msg{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em;overflow-wrap:anywhere;word-break:break-word;min-width:18em}
th[data-sort]{cursor:pointer;user-select:none}
th[data-sort]:hover{background:#e6e6e6}
th[aria-sort=ascending]::after{content:' \\25B2'}
th[aria-sort=descending]::after{content:' \\25BC'}
.filters{display:flex;flex-wrap:wrap;gap:.6em;align-items:center;margin:.6em 0}
.filters[hidden]{display:none}
.filters input{min-width:18em}
a.flt{color:inherit}
.charts{display:flex;flex-wrap:wrap;gap:.5em 2em}
.charts figure{flex:1 1 640px;max-width:820px;margin:.5em 0}
.views{display:flex;flex-wrap:wrap;gap:0 3em;align-items:flex-start}
.views section{flex:0 1 auto}
.views .note{max-width:44em}
figcaption{font-weight:600;margin-bottom:.3em}
svg.chart{width:100%;height:auto;font-size:11px}
svg .plot{fill:#fcfcfc;stroke:none}
svg .grid{stroke:#e6e6e6;stroke-width:1}
svg .axis{stroke:#555;stroke-width:1}
svg .tick{fill:#555}
svg .label{fill:#333;font-size:12px}
svg .legend{fill:#333;font-size:12px}
svg .line{fill:none;stroke-width:1.6}
svg .nodata{fill:#999;font-size:16px}
svg .resume-line{stroke:#444;stroke-width:1.2;stroke-dasharray:5 4}
svg .resume-label{fill:#444;font-size:11px}
.warn{color:#8a4b00}
";

/// Sorting and filtering of the findings table; the backend and op links set a filter.
const SCRIPT: &str = r#"(function () {
  var table = document.getElementById('findings-table');
  if (!table) return;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  rows.forEach(function (r, i) {
    r.dataset.index = i;
    var m = r.querySelector('td.msg');
    r.dataset.text = (r.textContent + ' ' + (m ? m.title : '')).toLowerCase();
  });
  function key(r, i, num) {
    var c = r.cells[i];
    var v = c.hasAttribute('data-v') ? c.getAttribute('data-v') : c.textContent.trim();
    if (num) { var f = parseFloat(v); return isNaN(f) ? null : f; }
    return (v === '' || v === '\u2014') ? null : v.toLowerCase();
  }
  function sortBy(i) {
    var th = heads[i];
    var num = th.getAttribute('data-sort') === 'num';
    var now = th.getAttribute('aria-sort');
    var dir = now ? (now === 'ascending' ? -1 : 1) : (num ? -1 : 1);
    heads.forEach(function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
    var keyed = rows.map(function (r) { return [key(r, i, num), +r.dataset.index, r]; });
    keyed.sort(function (a, b) {
      if (a[0] === b[0]) return a[1] - b[1];
      if (a[0] === null) return 1;
      if (b[0] === null) return -1;
      var c = num ? a[0] - b[0] : a[0].localeCompare(b[0]);
      return c * dir || a[1] - b[1];
    });
    keyed.forEach(function (k) { body.appendChild(k[2]); });
  }
  heads.forEach(function (th, i) {
    if (!th.hasAttribute('data-sort')) return;
    th.tabIndex = 0;
    th.title = 'sort by ' + th.textContent.trim();
    th.addEventListener('click', function () { sortBy(i); });
    th.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(i); }
    });
  });
  var bar = document.getElementById('filters');
  var text = document.getElementById('f-text');
  var sel = { backend: document.getElementById('f-backend'),
              kind: document.getElementById('f-kind'),
              op: document.getElementById('f-op') };
  var count = document.getElementById('f-count');
  function apply() {
    var t = text.value.trim().toLowerCase(), n = 0;
    var b = sel.backend.value, k = sel.kind.value, o = sel.op.value;
    rows.forEach(function (r) {
      var ok = (!t || r.dataset.text.indexOf(t) !== -1) &&
        (!b || (' ' + r.dataset.backends + ' ').indexOf(' ' + b + ' ') !== -1) &&
        (!k || r.dataset.kind === k) && (!o || r.dataset.op === o);
      r.hidden = !ok;
      if (ok) n++;
    });
    count.textContent = n + ' of ' + rows.length + ' shown';
  }
  text.addEventListener('input', apply);
  Object.keys(sel).forEach(function (k) { sel[k].addEventListener('change', apply); });
  document.getElementById('f-clear').addEventListener('click', function () {
    text.value = '';
    Object.keys(sel).forEach(function (k) { sel[k].value = ''; });
    apply();
  });
  Array.prototype.forEach.call(document.querySelectorAll('a.flt'), function (a) {
    a.addEventListener('click', function () {
      text.value = '';
      Object.keys(sel).forEach(function (k) { sel[k].value = ''; });
      var s = sel[a.getAttribute('data-f')];
      if (s) s.value = a.getAttribute('data-v');
      apply();
    });
  });
  bar.hidden = false;
  apply();
})();"#;

impl Campaign {
    /// A marker per resumed session.
    fn markers(&self) -> Vec<Marker> {
        resumes(&self.sessions)
            .into_iter()
            .map(|(n, x, title)| Marker {
                x,
                label: format!("S{n}"),
                title,
            })
            .collect()
    }

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
            markers: self.markers(),
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
            markers: self.markers(),
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
                .chain(self.elapsed())
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
            markers: self.markers(),
        }
    }

    pub fn html(&self) -> String {
        let mut h = page_head(&format!("mutagraph campaign report: {}", self.name), "");
        let _ = writeln!(
            h,
            "<p class=\"sub\">{} timeseries rows · {} bug bundles · files: \
             <a href=\"stats.json\">stats.json</a> <a href=\"campaign.toml\">campaign.toml</a> \
             <a href=\"timeseries.csv\">timeseries.csv</a> <a href=\"findings/\">findings/</a></p>",
            self.series.rows(),
            self.bundles.len()
        );
        h.push_str(
            "<nav class=\"toc\"><a href=\"#summary\">Summary</a><a href=\"#backends\">Per backend</a>\
             <a href=\"#ops\">Per op type</a><a href=\"#time\">Over time</a>\
             <a href=\"#findings\">Findings</a></nav>\n",
        );
        self.summary_html(&mut h);
        // The two views side by side where the page is wide enough.
        h.push_str("<div class=\"views\">\n<section>\n");
        self.backends_html(&mut h);
        h.push_str("</section>\n<section>\n");
        self.ops_html(&mut h);
        h.push_str("</section>\n</div>\n");
        self.charts_html(&mut h);
        self.findings_html(&mut h);

        if !self.warnings.is_empty() {
            h.push_str("<h2>Warnings</h2>\n<ul class=\"warn\">\n");
            for w in &self.warnings {
                let _ = writeln!(h, "<li>{}</li>", esc(w));
            }
            h.push_str("</ul>\n");
        }
        if !self.bundles.is_empty() {
            let _ = writeln!(h, "<script>//<![CDATA[\n{SCRIPT}\n//]]></script>");
        }
        h.push_str("</body>\n</html>\n");
        h
    }

    fn summary_html(&self, h: &mut String) {
        h.push_str("<h2 id=\"summary\">Summary</h2>\n<div class=\"cols\">\n");
        kv_table(h, "Campaign", &self.config_rows());
        kv_table(h, "Totals", &self.total_rows());
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
        let optimizer = self.optimizer_lines();
        if !optimizer.is_empty() {
            h.push_str("<div><h3>Optimizer rewrites and contrib ops</h3>\n<ul>\n");
            for l in &optimizer {
                let _ = writeln!(h, "<li>{}</li>", esc(l));
            }
            h.push_str("</ul></div>\n");
        }
        h.push_str("<table>\n<caption>Findings by kind</caption>\n<thead><tr><th>kind</th><th>findings</th><th>bundles</th></tr></thead>\n<tbody>\n");
        let mut kinds: std::collections::BTreeMap<String, (String, usize)> = self
            .findings_by_kind()
            .into_iter()
            .map(|(k, n)| (k, (n, 0)))
            .collect();
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
    }

    fn backends_html(&self, h: &mut String) {
        let v = self.backend_view();
        h.push_str("<h2 id=\"backends\">Findings per backend</h2>\n");
        if v.rows.is_empty() {
            h.push_str("<p>No backends known.</p>\n");
            return;
        }
        h.push_str(
            "<p class=\"note\">Bug bundles (unique findings) per backend, with their hits in \
             parentheses. A bundle counts for every variant that showed it.</p>\n",
        );
        h.push_str(
            "<table class=\"backends\">\n<thead><tr><th>backend</th><th class=\"num\">runs</th>\
             <th class=\"num\">bundles</th><th class=\"num\">hits</th>",
        );
        for k in &v.kinds {
            let _ = write!(h, "<th class=\"num\">{}</th>", esc(k));
        }
        h.push_str(
            "<th class=\"num\">minimized</th><th class=\"num\">pending</th>\
             <th class=\"num\">optimizer</th></tr></thead>\n<tbody>\n",
        );
        for r in &v.rows {
            let name = if r.total.bundles > 0 {
                filter_link("backend", &r.backend)
            } else {
                esc(&r.backend)
            };
            let _ = write!(
                h,
                "<tr><td class=\"kind\">{name}</td>{}{}{}",
                num_cell(r.runs.map(|n| n as usize)),
                num_cell(Some(r.total.bundles)),
                num_cell(Some(r.total.hits as usize)),
            );
            for k in &v.kinds {
                let c = r.by_kind.get(k).copied().unwrap_or_default();
                if c.bundles == 0 {
                    h.push_str("<td class=\"num zero\">0</td>");
                } else {
                    let _ = write!(h, "<td class=\"num\">{} ({})</td>", c.bundles, c.hits);
                }
            }
            let _ = writeln!(
                h,
                "{}{}{}</tr>",
                num_cell(Some(r.minimized)),
                num_cell(Some(r.pending)),
                num_cell(Some(r.optimizer))
            );
        }
        h.push_str("</tbody>\n</table>\n");
    }

    fn ops_html(&self, h: &mut String) {
        let v = self.op_view();
        h.push_str("<h2 id=\"ops\">Findings per op type</h2>\n");
        if v.rows.is_empty() {
            h.push_str("<p>No bug bundles.</p>\n");
            return;
        }
        h.push_str(
            "<p class=\"note\">Bug bundles per op type they are blamed on, per backend that \
             showed them (hits in the tooltip). <span class=\"inferred\">Italic</span>: some \
             were not localized, their op is inferred (see the findings table).</p>\n",
        );
        h.push_str(
            "<table class=\"ops\">\n<thead><tr><th>op type</th><th class=\"num\">bundles</th>\
             <th class=\"num\">hits</th>",
        );
        for b in &v.backends {
            let _ = write!(h, "<th class=\"num\">{}</th>", esc(b));
        }
        h.push_str("<th>kinds</th></tr></thead>\n<tbody>\n");
        for r in &v.rows {
            let name = if r.op == DASH {
                DASH.to_string()
            } else {
                filter_link("op", &r.op)
            };
            let class = if r.inferred { " inferred" } else { "" };
            let _ = write!(
                h,
                "<tr><td class=\"kind{class}\">{name}</td>{}{}",
                num_cell(Some(r.total.bundles)),
                num_cell(Some(r.total.hits as usize))
            );
            for b in &v.backends {
                let c = r.by_backend.get(b).copied().unwrap_or_default();
                if c.bundles == 0 {
                    h.push_str("<td class=\"num zero\">0</td>");
                } else {
                    let _ = write!(
                        h,
                        "<td class=\"num\" title=\"{} hits\">{}</td>",
                        c.hits, c.bundles
                    );
                }
            }
            let kinds: Vec<String> = r
                .by_kind
                .iter()
                .map(|(k, c)| format!("{k} {}", c.bundles))
                .collect();
            let _ = writeln!(h, "<td>{}</td></tr>", esc(&kinds.join(", ")));
        }
        h.push_str("</tbody>\n</table>\n");
    }

    fn charts_html(&self, h: &mut String) {
        h.push_str("<h2 id=\"time\">Over time</h2>\n<div class=\"charts\">\n");
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
        h.push_str("</div>\n");
        let resumes = resumes(&self.sessions);
        if !resumes.is_empty() {
            let list: Vec<String> = resumes
                .iter()
                .map(|(n, _, text)| format!("S{n}: {text}"))
                .collect();
            let _ = writeln!(
                h,
                "<p class=\"note\">{} sessions; dashed lines mark where a session resumed the \
                 campaign ({}).</p>",
                self.sessions.len(),
                esc(&list.join("; "))
            );
        }
    }

    fn findings_html(&self, h: &mut String) {
        let _ = writeln!(
            h,
            "<h2 id=\"findings\">Findings ({} bundles)</h2>",
            self.bundles.len()
        );
        if self.bundles.is_empty() {
            h.push_str("<p>No bug bundles.</p>\n");
            return;
        }
        // The filter bar, shown by the script.
        let options = |values: BTreeSet<String>| {
            let mut o = String::new();
            for v in values {
                let _ = write!(o, "<option value=\"{v}\">{v}</option>", v = esc(&v));
            }
            o
        };
        let backends: BTreeSet<String> = self
            .bundles
            .iter()
            .flat_map(|b| b.backends.iter().cloned())
            .collect();
        let kinds: BTreeSet<String> = self.bundles.iter().filter_map(|b| b.kind.clone()).collect();
        let ops: BTreeSet<String> = self
            .bundles
            .iter()
            .map(|b| b.op().unwrap_or(DASH).to_string())
            .collect();
        let _ = writeln!(
            h,
            "<div class=\"filters\" id=\"filters\" hidden=\"hidden\">\
             <input type=\"search\" id=\"f-text\" placeholder=\"filter: any text (id, message, triage…)\" aria-label=\"filter by text\"/>\
             <select id=\"f-backend\" aria-label=\"backend\"><option value=\"\">all backends</option>{}</select>\
             <select id=\"f-kind\" aria-label=\"kind\"><option value=\"\">all kinds</option>{}</select>\
             <select id=\"f-op\" aria-label=\"op type\"><option value=\"\">all op types</option>{}</select>\
             <button type=\"button\" id=\"f-clear\">clear</button> <span id=\"f-count\" class=\"small\"></span></div>",
            options(backends),
            options(kinds),
            options(ops)
        );
        h.push_str(
            "<table class=\"findings\" id=\"findings-table\">\n<thead><tr>\
             <th data-sort=\"text\">id</th><th data-sort=\"text\">kind</th>\
             <th data-sort=\"text\">backends</th><th data-sort=\"text\">stage</th>\
             <th data-sort=\"text\">op type</th><th data-sort=\"num\" class=\"num\">hits</th>\
             <th data-sort=\"num\">first seen</th><th data-sort=\"num\">last seen</th>\
             <th data-sort=\"num\" title=\"main-graph nodes before → after minimization\">minimized</th><th data-sort=\"text\">triage</th>\
             <th data-sort=\"text\">message</th></tr></thead>\n<tbody>\n",
        );
        for b in &self.bundles {
            finding_row(h, b);
        }
        h.push_str("</tbody>\n</table>\n");
    }
}

/// A link that sets a filter of the findings table (and jumps to it).
fn filter_link(filter: &str, value: &str) -> String {
    format!(
        "<a class=\"flt\" href=\"#findings\" data-f=\"{filter}\" data-v=\"{v}\">{v}</a>",
        v = esc(value)
    )
}

/// A right-aligned count ("—" when unknown, grey when zero).
fn num_cell(n: Option<usize>) -> String {
    match n {
        None => format!("<td class=\"num\">{DASH}</td>"),
        Some(0) => "<td class=\"num zero\">0</td>".to_string(),
        Some(n) => format!("<td class=\"num\">{n}</td>"),
    }
}

/// A first / last seen cell: the time, the iteration below; sorted by time.
fn seen_cell(s: &Seen) -> String {
    let time = s
        .elapsed_s
        .map_or_else(|| DASH.to_string(), |e| format!("{e:.1} s"));
    let iter = s
        .iteration
        .map(|i| format!("<br/><span class=\"small\">iter {i}</span>"))
        .unwrap_or_default();
    let v = s.elapsed_s.map(|e| format!("{e}")).unwrap_or_default();
    format!(
        "<td class=\"nw\" data-v=\"{v}\" title=\"{}\">{time}{iter}</td>",
        esc(&s.text())
    )
}

fn finding_row(h: &mut String, b: &Bundle) {
    let dir = format!("findings/{}/", url_segment(&b.dir));
    let opt = |v: &Option<String>| esc(v.as_deref().unwrap_or(DASH));
    let sig = b
        .signature
        .as_deref()
        .map(|s| format!(" title=\"signature: {}\"", esc(s)))
        .unwrap_or_default();
    let id = if b.has_report_md || b.has_report_html {
        format!(
            "<a href=\"{dir}{}\"{sig}>{}</a>",
            b.report_file(),
            esc(&b.id)
        )
    } else {
        format!("<span{sig}>{}</span>", esc(&b.id))
    };
    let mut files = format!("<a href=\"{dir}\">dir</a>");
    if b.has_report_html && b.has_report_md {
        let _ = write!(files, " <a href=\"{dir}REPORT.md\">REPORT.md</a>");
    }
    for f in &b.files {
        let _ = write!(files, " <a href=\"{dir}{f}\">{f}</a>");
    }
    let op = match &b.blame {
        Some(bl) if bl.localized => format!(
            "<td class=\"op\" title=\"{}\">{}</td>",
            esc(&bl.source),
            esc(&bl.op)
        ),
        Some(bl) => format!(
            "<td class=\"op inferred\" title=\"{}\">{}</td>",
            esc(&bl.source),
            esc(&bl.op)
        ),
        None => format!("<td>{DASH}</td>"),
    };
    let triage = if b.triage.is_empty() {
        DASH.to_string()
    } else {
        b.triage
            .iter()
            .map(|t| format!("<span class=\"tag\">{}</span>", esc(t)))
            .collect()
    };
    let min_v = match &b.minimized {
        Minimized::Done(_, Some(after)) => after.to_string(),
        _ => String::new(),
    };
    let message = b.message.as_deref().unwrap_or(DASH);
    let _ = writeln!(
        h,
        "<tr data-kind=\"{kind}\" data-backends=\"{bes}\" data-op=\"{opv}\">\
         <td class=\"id\">{id}<div class=\"files\">{files}</div></td>\
         <td class=\"kind\">{kind}</td><td>{backends}</td><td>{stage}</td>{op}\
         <td class=\"num\">{hits}</td>{first}{last}<td class=\"nw\" data-v=\"{min_v}\">{min}</td>\
         <td class=\"triage\" title=\"{tdetail}\">{triage}</td>\
         <td class=\"msg\" title=\"{full}\">{short}</td></tr>",
        kind = opt(&b.kind),
        bes = esc(&b.backends.join(" ")),
        opv = esc(b.op().unwrap_or(DASH)),
        backends = if b.backends.is_empty() {
            DASH.to_string()
        } else {
            b.backends
                .iter()
                .map(|x| format!("<span class=\"nw\">{}</span>", esc(x)))
                .collect::<Vec<_>>()
                .join(", ")
        },
        stage = opt(&b.stage),
        hits = b.hits.map_or_else(|| DASH.to_string(), |n| n.to_string()),
        first = seen_cell(&b.first),
        last = seen_cell(&b.last),
        min = esc(&b.minimized.text()),
        tdetail = esc(&b.triage_detail),
        full = esc(message),
        short = esc(&truncate(message, HTML_MESSAGE_CHARS)),
    );
}

/// The start of a report page: doctype, head with the title and [`CSS`] (plus `extra_css`),
/// the body's `<h1>`.
pub(crate) fn page_head(title: &str, extra_css: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
         <title>{t}</title>\n<style>{CSS}{extra_css}</style>\n</head>\n<body>\n<h1>{t}</h1>\n",
        t = esc(title)
    )
}

/// A two-column table with a caption.
pub(crate) fn kv_table(h: &mut String, caption: &str, rows: &[(&str, String)]) {
    let _ = writeln!(h, "<table>\n<caption>{}</caption>\n<tbody>", esc(caption));
    for (k, v) in rows {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    h.push_str("</tbody>\n</table>\n");
}
