//! The report of a shared campaign: `mutagraph report SYNC` over a sync directory
//! ([`crate::campaign::sync`]) renders each instance's own report in its directory, then
//! `SYNC/report.html` and `SYNC/report.md` with the whole campaign: per instance and merged
//! (executions summed, coverage as the union of the instances' covered items read from their
//! `state.json`, bug bundles listed once each since a signature is filed by one instance),
//! and coverage, executions and findings over time, per instance and merged.
use super::charts::{Chart, Line};
use super::html::{kv_table, page_head};
use super::read::Campaign;
use super::{DASH, HTML_FILE, RenderedReport, ReportError, esc, url_segment};
use crate::campaign::sync::{SyncState, instances};
use mutagraph_mutators::coverage::{Family, Report};
use std::collections::{BTreeMap, BTreeSet};

/// The coverage families as `state.json` saves them (item keys per family).
const FAMILIES: [&str; 4] = ["op_types", "op_pairs", "params", "inputs"];
use std::fmt::Write as _;
use std::path::Path;

/// Whether `dir` is a sync directory: no campaign of its own, instances below it.
pub fn is_sync_dir(dir: &Path) -> bool {
    !dir.join("stats.json").exists()
        && !dir.join("campaign.toml").exists()
        && !instances(dir).is_empty()
}

/// One instance as the shared report shows it.
struct Instance {
    name: String,
    campaign: Campaign,
    /// The covered items per family, as `state.json` names them.
    coverage: Option<BTreeMap<&'static str, BTreeSet<String>>>,
    sync: Option<SyncState>,
    /// Hits this instance counted under other instances' bundles, by `INSTANCE/ID`.
    hits_elsewhere: BTreeMap<String, u64>,
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
];

fn load_instance(name: String, dir: &Path, warnings: &mut Vec<String>) -> Option<Instance> {
    let campaign = match Campaign::load(dir) {
        Ok(c) => c,
        Err(e) => {
            warnings.push(format!("{name}: {e}"));
            return None;
        }
    };
    let state: Option<serde_json::Value> = std::fs::read(dir.join("state.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let coverage = state.as_ref().and_then(|s| {
        FAMILIES
            .iter()
            .map(|f| {
                let items = s["coverage"][*f].as_array()?;
                Some((
                    *f,
                    items
                        .iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect(),
                ))
            })
            .collect::<Option<BTreeMap<_, BTreeSet<String>>>>()
    });
    if coverage.is_none() {
        warnings.push(format!(
            "{name}/state.json: no coverage; the merged coverage leaves it out"
        ));
    }
    let sync = state
        .as_ref()
        .and_then(|s| serde_json::from_value::<SyncState>(s["sync"].clone()).ok());
    let mut hits_elsewhere = BTreeMap::new();
    if let Some(sigs) = state.as_ref().and_then(|s| s["signatures"].as_object()) {
        for e in sigs.values() {
            if let (Some(by), Some(h)) = (e["filed_by"].as_str(), e["hits"].as_u64()) {
                *hits_elsewhere.entry(by.to_string()).or_insert(0) += h;
            }
        }
    }
    Some(Instance {
        name,
        campaign,
        coverage,
        sync,
        hits_elsewhere,
    })
}

/// Renders every instance's report, then the shared one.
pub fn render(dir: &Path) -> Result<RenderedReport, ReportError> {
    let mut warnings = Vec::new();
    let mut bundle_pages = Vec::new();
    let mut list = Vec::new();
    for (name, path) in instances(dir) {
        match super::render(&path) {
            Ok(r) => {
                warnings.extend(r.warnings.into_iter().map(|w| format!("{name}: {w}")));
                bundle_pages.extend(r.bundle_pages);
            }
            Err(e) => warnings.push(format!("{name}: {e}")),
        }
        if let Some(i) = load_instance(name, &path, &mut warnings) {
            list.push(i);
        }
    }
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    let shared = Shared {
        name,
        instances: list,
        warnings,
    };
    let markdown_text = shared.markdown();
    let (html, markdown) = super::write_pages(dir, &shared.html(), &markdown_text)?;
    Ok(RenderedReport {
        html,
        markdown,
        markdown_text,
        warnings: shared.warnings,
        bundle_pages,
    })
}

struct Shared {
    name: String,
    instances: Vec<Instance>,
    warnings: Vec<String>,
}

/// The value at time `t` of a step series (the last point at or before `t`; 0 before the first).
fn at(points: &[(f64, f64)], t: f64) -> f64 {
    match points.partition_point(|p| p.0 <= t) {
        0 => 0.0,
        i => points[i - 1].1,
    }
}

/// One point at every time any line has one: `f` over the lines' values at that time.
fn combine(lines: &[Line], f: impl Fn(&mut dyn Iterator<Item = f64>) -> f64) -> Vec<(f64, f64)> {
    let mut ts: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .collect();
    ts.sort_by(f64::total_cmp);
    ts.dedup();
    ts.iter()
        .map(|&t| (t, f(&mut lines.iter().map(|l| at(&l.points, t)))))
        .collect()
}

impl Shared {
    /// The union of the instances' covered items, over the universe of the first instance's
    /// `stats.json` (instances of one campaign share seeds and universe).
    fn union(&self) -> Option<Report> {
        let base = self
            .instances
            .iter()
            .find_map(|i| i.campaign.stats.coverage.clone())?;
        let mut sets: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for i in &self.instances {
            for (f, items) in i.coverage.as_ref()? {
                sets.entry(f)
                    .or_default()
                    .extend(items.iter().map(String::as_str));
            }
        }
        let fam = |old: &Family, f: &str| {
            let covered = sets.get(f).map_or(0, BTreeSet::len);
            Family {
                covered,
                total: old.total,
                percent: if old.total > 0 {
                    100.0 * covered as f64 / old.total as f64
                } else {
                    0.0
                },
            }
        };
        let ops = sets.get("op_types");
        Some(Report {
            models: self
                .instances
                .iter()
                .filter_map(|i| i.campaign.stats.coverage.as_ref())
                .map(|r| r.models)
                .sum(),
            op_types: fam(&base.op_types, "op_types"),
            op_pairs: fam(&base.op_pairs, "op_pairs"),
            params: fam(&base.params, "params"),
            inputs: fam(&base.inputs, "inputs"),
            uncovered_op_types: base
                .uncovered_op_types
                .iter()
                .filter(|o| !ops.is_some_and(|s| s.contains(o.as_str())))
                .cloned()
                .collect(),
            outside_op_types: base.outside_op_types.clone(),
            outside_pairs: base.outside_pairs,
        })
    }

    fn executions(&self) -> u64 {
        self.instances
            .iter()
            .map(|i| i.campaign.stats.counters.executions)
            .sum()
    }

    fn bundles(&self) -> usize {
        self.instances
            .iter()
            .map(|i| i.campaign.bundles.len())
            .sum()
    }

    /// Per instance: (name, executions, execs/s, iterations, bundles, imported, filed
    /// elsewhere, coverage).
    fn rows(&self) -> Vec<[String; 10]> {
        let pct = |r: Option<&Report>, f: fn(&Report) -> f64| {
            r.map_or(DASH.to_string(), |r| format!("{:.2}", f(r)))
        };
        let mut rows: Vec<[String; 10]> = self
            .instances
            .iter()
            .map(|i| {
                let s = &i.campaign.stats;
                let r = s.coverage.as_ref();
                [
                    i.name.clone(),
                    s.counters.executions.to_string(),
                    format!("{:.1}", s.execs_per_s),
                    s.counters.iterations.to_string(),
                    i.campaign.bundles.len().to_string(),
                    i.sync
                        .as_ref()
                        .map_or(DASH.into(), |x| x.imported.to_string()),
                    i.sync
                        .as_ref()
                        .map_or(DASH.into(), |x| x.filed_elsewhere.to_string()),
                    pct(r, |r| r.op_types.percent),
                    pct(r, |r| r.op_pairs.percent),
                    pct(r, |r| r.params.percent),
                ]
            })
            .collect();
        let u = self.union();
        let rate: f64 = self
            .instances
            .iter()
            .map(|i| i.campaign.stats.execs_per_s)
            .sum();
        rows.push([
            "merged".into(),
            self.executions().to_string(),
            format!("{rate:.1}"),
            self.instances
                .iter()
                .map(|i| i.campaign.stats.counters.iterations)
                .sum::<u64>()
                .to_string(),
            self.bundles().to_string(),
            DASH.into(),
            DASH.into(),
            pct(u.as_ref(), |r| r.op_types.percent),
            pct(u.as_ref(), |r| r.op_pairs.percent),
            pct(u.as_ref(), |r| r.params.percent),
        ]);
        rows
    }

    const HEADERS: [&'static str; 10] = [
        "instance",
        "executions",
        "exec/s",
        "iterations",
        "bug bundles",
        "imported",
        "filed elsewhere",
        "op types %",
        "op pairs %",
        "params %",
    ];

    /// Per instance, and merged by summing each instance's latest value at every time point.
    fn chart(
        &self,
        id: &'static str,
        title: &'static str,
        column: &str,
        y: &'static str,
        merge: bool,
    ) -> Chart<'static> {
        let mut lines: Vec<Line> = self
            .instances
            .iter()
            .enumerate()
            .map(|(k, i)| Line {
                label: i.name.clone(),
                color: COLORS[k % COLORS.len()],
                points: i.campaign.series.points(column),
                step: merge,
                marks: Vec::new(),
                right: false,
            })
            .collect();
        if !merge && lines.len() > 1 {
            // The union over time is not recorded; the best instance is a lower bound of it
            // (each instance imports the others' coverage-adding entries).
            let points = combine(&lines, |v| v.fold(0.0, f64::max));
            lines.push(Line {
                label: "merged (best instance: the union is at least this)".into(),
                color: "#d62728",
                points,
                step: false,
                marks: Vec::new(),
                right: false,
            });
        }
        if merge && lines.len() > 1 {
            let points = combine(&lines, |v| v.sum());
            lines.push(Line {
                label: "merged (sum)".into(),
                color: "#d62728",
                points,
                step: true,
                marks: Vec::new(),
                right: false,
            });
        }
        Chart {
            id,
            title,
            y_label: y,
            y_cap: (!merge).then_some(100.0),
            integer_y: merge,
            right_label: None,
            lines,
            markers: Vec::new(),
        }
    }

    fn html(&self) -> String {
        let mut h = page_head(
            &format!("mutagraph shared campaign report: {}", self.name),
            "",
        );
        let links: Vec<String> = self
            .instances
            .iter()
            .map(|i| {
                format!(
                    "<a href=\"{n}/{HTML_FILE}\">{e}</a>",
                    n = url_segment(&i.name),
                    e = esc(&i.name)
                )
            })
            .collect();
        let _ = writeln!(
            h,
            "<p class=\"sub\">{} instances sharing this directory · each instance's own report: {}</p>",
            self.instances.len(),
            links.join(" ")
        );
        let u = self.union();
        kv_table(
            &mut h,
            "The whole campaign",
            &[
                ("instances", self.instances.len().to_string()),
                ("executions", self.executions().to_string()),
                (
                    "bug bundles (each signature filed once)",
                    self.bundles().to_string(),
                ),
                (
                    "coverage (union of the instances')",
                    u.map_or(DASH.into(), |r| r.to_string()),
                ),
            ],
        );
        h.push_str("<table>\n<caption>Per instance</caption>\n<thead><tr>");
        for c in Self::HEADERS {
            let _ = write!(h, "<th>{}</th>", esc(c));
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for r in self.rows() {
            h.push_str("<tr>");
            for c in &r {
                let _ = write!(h, "<td>{}</td>", esc(c));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody>\n</table>\n<h2 id=\"time\">Over time</h2>\n");
        for c in [
            self.chart(
                "cov",
                "Op-pair coverage per instance",
                "op_pairs_pct",
                "op pairs (%)",
                false,
            ),
            self.chart("execs", "Executions", "executions", "executions", true),
            self.chart(
                "findings",
                "Findings (every hit)",
                "findings",
                "findings",
                true,
            ),
        ] {
            h.push_str(&c.svg());
        }
        h.push_str(
            "<h2 id=\"findings\">Bug bundles</h2>\n<table>\n<thead><tr><th>instance</th>\
                    <th>bundle</th><th>kind</th><th>backends</th><th>op</th><th>hits</th>\
                    <th>hits by other instances</th></tr></thead>\n<tbody>\n",
        );
        for i in &self.instances {
            for b in &i.campaign.bundles {
                let key = format!("{}/{}", i.name, b.id);
                let elsewhere: u64 = self
                    .instances
                    .iter()
                    .filter_map(|o| o.hits_elsewhere.get(&key))
                    .sum();
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td><a href=\"{}/findings/{}/{}\">{}</a></td><td>{}</td>\
                     <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&i.name),
                    url_segment(&i.name),
                    url_segment(&b.dir),
                    b.report_file(),
                    esc(&b.id),
                    esc(b.kind.as_deref().unwrap_or(DASH)),
                    esc(&b.backends_text()),
                    esc(b.op().unwrap_or(DASH)),
                    b.hits.map_or(DASH.into(), |x| x.to_string()),
                    elsewhere
                );
            }
        }
        h.push_str("</tbody>\n</table>\n");
        if !self.warnings.is_empty() {
            h.push_str("<h2>Warnings</h2>\n<ul>\n");
            for w in &self.warnings {
                let _ = writeln!(h, "<li>{}</li>", esc(w));
            }
            h.push_str("</ul>\n");
        }
        h.push_str("</body>\n</html>\n");
        h
    }

    fn markdown(&self) -> String {
        let mut m = String::new();
        let _ = writeln!(m, "# mutagraph shared campaign report: {}\n", self.name);
        let _ = writeln!(
            m,
            "{} instances · {} executions · {} bug bundles (each signature filed once)\n\n\
             Coverage, the union of the instances':\n\n```\n{}\n```\n",
            self.instances.len(),
            self.executions(),
            self.bundles(),
            self.union()
                .map_or(DASH.to_string(), |r| r.to_string().trim_end().to_string())
        );
        let _ = writeln!(m, "| {} |", Self::HEADERS.join(" | "));
        let _ = writeln!(m, "|{}", "---|".repeat(Self::HEADERS.len()));
        for r in self.rows() {
            let _ = writeln!(m, "| {} |", r.join(" | "));
        }
        if !self.warnings.is_empty() {
            m.push_str("\n## Warnings\n\n");
            for w in &self.warnings {
                let _ = writeln!(m, "- {w}");
            }
        }
        m
    }
}
