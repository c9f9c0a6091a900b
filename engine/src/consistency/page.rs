//! `consistency.md` and `consistency.html` from a [`Report`]. The page is self-contained (the
//! campaign report's page head and style, [`crate::report::page_head`]; no script, no external resource): the
//! agreement matrix as a heatmap table (colour by rate, with the counts), disagreement per op
//! type and latency per backend as bars, outcomes, and one row per model.
use super::Report;
use super::aggregate::{Cell, OpStat};
use super::measure::{BackendRun, ModelRow};
use crate::report::{DASH, esc, human_duration, kv_table, md_cell, page_head, truncate};
use std::fmt::Write as _;

/// What the campaign report's style lacks: heatmap cells, red bars, a latency bar with its p90.
const EXTRA_CSS: &str = "
table.matrix td.heat{text-align:center;min-width:6.5em;font-variant-numeric:tabular-nums}
table.matrix td.heat b{display:block;font-size:1.05em}
table.matrix th.row{text-align:right}
.bar.wide{width:220px}
.bar span.ref{background:#d62728}
.bar span.p90{background:#aec7e8}
.bar span.p90 span{background:#1f77b4}
td.bad{color:#b00020}
td.st{white-space:nowrap}
.legend-box{display:inline-block;width:1em;height:.8em;vertical-align:middle;margin:0 .2em 0 .6em;border:1px solid #ccc}
";

/// Messages longer than this are cut in the page's tables (the full text in `title`).
const MESSAGE_CHARS: usize = 160;

/// A rate as a percentage, `—` when there is none.
fn pct(r: Option<f64>) -> String {
    r.map_or_else(|| DASH.to_string(), |r| format!("{:.1}%", r * 100.0))
}

/// Milliseconds, `—` when there are none.
fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| DASH.to_string(), |v| format!("{v:.2}"))
}

/// The background of a matrix cell: red at 0 through yellow to green at 1, grey without data.
fn heat(rate: Option<f64>) -> String {
    match rate {
        Some(r) => format!("hsl({:.0},65%,78%)", 120.0 * r.clamp(0.0, 1.0)),
        None => "#f0f0f0".into(),
    }
}

/// The first line of the page and of the Markdown: what was run.
fn headline(r: &Report) -> String {
    format!(
        "{} models run{} on {} backends ({}); reference: {}; tolerance '{}' (atol {:e}, rtol {:e}); \
         input seed {}; {} run(s) per backend and model; {}",
        r.models_run,
        if r.refused.is_empty() {
            String::new()
        } else {
            format!(", {} not run", r.refused.len())
        },
        r.backends.len(),
        r.backends.join(", "),
        r.reference.as_deref().unwrap_or("none in the set"),
        r.tolerance.name,
        r.tolerance.atol,
        r.tolerance.rtol,
        r.seed,
        r.repeat,
        human_duration(r.elapsed_s)
    )
}

/// The machine the times come from, with a warning for a debug build.
fn machine_line(r: &Report) -> String {
    let m = &r.machine;
    let mut s = format!("{} build, {} CPUs", m.build, m.cpus);
    if let Some(l) = m.load_avg {
        s.push_str(&format!(", load average {l:.2} at the start"));
    }
    if m.build == "debug" {
        s.push_str(
            "; a debug build runs the Rust backends (reference, tract, burn) unoptimized: \
             their latencies say little (build with --release to measure)",
        );
    }
    s
}

/// What the op table's attributed column means.
fn attribution_note(r: &Report) -> String {
    match (r.attribution.as_str(), &r.reference) {
        ("localization", Some(reference)) => format!(
            "Attribution: localization. \"blamed\" counts the models on which a library's \
             first node diverging from {reference} (every intermediate value exposed, the \
             campaign's localization) is of this op type; {} disagreement(s) with the \
             reference were not pinned on a node. \"vs reference\" counts every model \
             containing the op on which some library disagreed with {reference}.",
            r.tables.unattributed
        ),
        (_, Some(reference)) => format!(
            "Attribution: containment. \"vs reference\" counts the models containing the op \
             on which some library disagreed with {reference}."
        ),
        _ => "Attribution: containment. Without the reference in the set, a disagreement \
              counts for every op of the model."
            .into(),
    }
}

/// The attributed count and rate of an op: blame, else against the reference.
fn attributed(o: &OpStat) -> (Option<usize>, Option<f64>) {
    match o.blamed {
        Some(n) => (Some(n), o.blamed_rate),
        None => (o.vs_reference, o.vs_reference_rate),
    }
}

/// `Report` as Markdown.
pub fn markdown(r: &Report) -> String {
    let mut s = String::from("# mutagraph consistency\n\n");
    let _ = writeln!(s, "{}.\n\nMachine: {}.\n", headline(r), machine_line(r));
    s.push_str("## Agreement matrix\n\nModels on which two backends' outputs agree, of the models both were given: a model either one failed on counts against the pair (the failures are listed under \"Failures\").\n\n|");
    for b in &r.backends {
        let _ = write!(s, " | {}", md_cell(b));
    }
    s.push_str(" |\n|---|");
    s.push_str(&"---:|".repeat(r.backends.len()));
    s.push('\n');
    for (i, a) in r.backends.iter().enumerate() {
        let _ = write!(s, "| **{}**", md_cell(a));
        for c in &r.tables.matrix[i] {
            let _ = write!(s, " | {}", cell_counts(c));
        }
        s.push_str(" |\n");
    }
    s.push_str("\n## Outcomes and latency per backend\n\nLatency: each model's median `run` time over its runs; median, p90 and total over the models the backend ran, ms.\n\n");
    s.push_str("| backend | version | ok | unsupported | error | crash | timeout | oom | median ms | p90 ms | total ms | prepare ms (median) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (o, l) in r.tables.outcomes.iter().zip(&r.tables.latency) {
        let n = |k: &str| o.status.get(k).copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} |",
            md_cell(&o.backend),
            md_cell(r.versions.get(&o.backend).map_or(DASH, |v| v.as_str())),
            n("ok"),
            n("unsupported"),
            n("error"),
            n("crash"),
            n("timeout"),
            n("oom"),
            ms(l.median_ms),
            ms(l.p90_ms),
            l.total_ms,
            ms(l.prepare_median_ms)
        );
    }
    s.push_str("\n## Disagreement per op type\n\n");
    let _ = writeln!(s, "{}\n", attribution_note(r));
    let label = if r.attribution == "localization" {
        "blamed"
    } else {
        "vs reference"
    };
    let _ = writeln!(
        s,
        "| op type | models | some pair disagreed | {label} | blamed on | some backend failed |\n|---|---:|---:|---:|---|---:|"
    );
    for o in &r.tables.ops {
        let (n, rate) = attributed(o);
        let _ = writeln!(
            s,
            "| {} | {} | {} ({}) | {} | {} | {} |",
            md_cell(&o.op),
            o.models,
            o.disagree,
            pct(Some(o.disagree_rate)),
            n.map_or_else(|| DASH.to_string(), |n| format!("{n} ({})", pct(rate))),
            md_cell(&blamed_by(o)),
            o.failed
        );
    }
    s.push_str("\n## Models\n\n| model | nodes | ran | pairs agree | disagreements | first diverging node |\n|---|---:|---:|---:|---|---|\n");
    for m in &r.models {
        let ran = m.runs.iter().filter(|x| x.ran()).count();
        let agree = m.pairs.iter().filter(|p| p.agree).count();
        let _ = writeln!(
            s,
            "| {} | {} | {ran}/{} | {agree}/{} | {} | {} |",
            md_cell(&m.model),
            m.nodes,
            m.runs.len(),
            m.pairs.len(),
            md_cell(&disagreements(m)),
            md_cell(&blame_text(m))
        );
    }
    let failures = failures(r);
    if !failures.is_empty() {
        s.push_str(
            "\n## Failures\n\n| model | backend | status | what it said |\n|---|---|---|---|\n",
        );
        for (m, x) in &failures {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                md_cell(&m.model),
                md_cell(&x.backend),
                md_cell(&status_text(x)),
                md_cell(&truncate(&x.detail, MESSAGE_CHARS))
            );
        }
    }
    if !r.refused.is_empty() {
        s.push_str("\n## Not run\n\n");
        for x in &r.refused {
            let _ = writeln!(s, "- {}: {}", x.model, x.reason.replace('\n', " "));
        }
    }
    s
}

/// `ort 1, tract 2`.
fn blamed_by(o: &OpStat) -> String {
    o.blamed_by
        .iter()
        .map(|(b, n)| format!("{b} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `ort≠tract, reference≠tract` (or `—`).
/// `88% (22/25, 2 failed)`: the rate, agreeing of given, and failures when any.
fn cell_counts(c: &Cell) -> String {
    let failed = if c.failed > 0 {
        format!(", {} failed", c.failed)
    } else {
        String::new()
    };
    format!("{} ({}/{}{failed})", pct(c.rate), c.agree, c.models)
}

/// Every backend run that did not end `ok`, model by model.
fn failures(r: &Report) -> Vec<(&ModelRow, &BackendRun)> {
    r.models
        .iter()
        .flat_map(|m| m.runs.iter().filter(|x| !x.ran()).map(move |x| (m, x)))
        .collect()
}

/// `error (compile)`: a run's status with its stage.
fn status_text(x: &BackendRun) -> String {
    match &x.stage {
        Some(s) => format!("{} ({s})", x.status),
        None => x.status.clone(),
    }
}

/// The pairs that disagree and the backends that failed (`ort≠tract, burn-ndarray: crash`).
fn disagreements(m: &ModelRow) -> String {
    let v: Vec<String> = m
        .pairs
        .iter()
        .filter(|p| !p.agree)
        .map(|p| format!("{}≠{}", p.a, p.b))
        .chain(
            m.runs
                .iter()
                .filter(|x| !x.ran())
                .map(|x| format!("{}: {}", x.backend, x.status)),
        )
        .collect();
    if v.is_empty() {
        DASH.into()
    } else {
        v.join(", ")
    }
}

/// `tract: Softmax (localized)`, per blamed library.
fn blame_text(m: &ModelRow) -> String {
    let v: Vec<String> = m
        .blame
        .iter()
        .map(|b| {
            format!(
                "{}: {} ({})",
                b.backend,
                b.op.as_deref().unwrap_or(DASH),
                b.verdict
            )
        })
        .collect();
    if v.is_empty() {
        DASH.into()
    } else {
        v.join("; ")
    }
}

/// `Report` as one self-contained HTML page (also well-formed XML).
pub fn html(r: &Report) -> String {
    let mut h = page_head("mutagraph consistency", EXTRA_CSS);
    let _ = writeln!(h, "<p class=\"sub\">{}</p>", esc(&headline(r)));
    h.push_str(
        "<nav class=\"toc\"><a href=\"#matrix\">Agreement</a><a href=\"#latency\">Latency</a>\
         <a href=\"#ops\">Per op type</a><a href=\"#models\">Models</a><a href=\"#failures\">Failures</a></nav>\n",
    );
    h.push_str("<div class=\"views\">\n<section>\n");
    matrix_html(&mut h, r);
    h.push_str("</section>\n<section>\n");
    let versions: Vec<(&str, String)> = r
        .backends
        .iter()
        .map(|b| (b.as_str(), r.versions.get(b).cloned().unwrap_or_default()))
        .collect();
    h.push_str("<h2>Backends</h2>\n");
    kv_table(&mut h, "Versions", &versions);
    h.push_str("</section>\n</div>\n");
    latency_html(&mut h, r);
    ops_html(&mut h, r);
    models_html(&mut h, r);
    failures_html(&mut h, r);
    if !r.refused.is_empty() {
        let _ = writeln!(
            h,
            "<h2 id=\"refused\">Not run ({})</h2>\n<ul class=\"warn\">",
            r.refused.len()
        );
        for x in &r.refused {
            let _ = writeln!(h, "<li><b>{}</b>: {}</li>", esc(&x.model), esc(&x.reason));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// The runs that did not end `ok`, with what the backend said, in full.
fn failures_html(h: &mut String, r: &Report) {
    let failures = failures(r);
    if failures.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<h2 id=\"failures\">Failures ({})</h2>\n<table>\n<thead><tr><th>model</th>\
         <th>backend</th><th>status</th><th>what it said</th></tr></thead>\n<tbody>\n",
        failures.len()
    );
    for (m, x) in failures {
        let _ = writeln!(
            h,
            "<tr><td class=\"id\">{}</td><td>{}</td><td class=\"st bad\">{}</td>\
             <td class=\"msg\">{}</td></tr>",
            esc(&m.model),
            esc(&x.backend),
            esc(&status_text(x)),
            esc(&x.detail)
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

fn matrix_html(h: &mut String, r: &Report) {
    h.push_str(
        "<h2 id=\"matrix\">Agreement matrix</h2>\n<p class=\"note\">Share of the models both \
         backends were given on which both ran and their outputs agree within the tolerance \
         (agreeing / given); a model either one failed on counts against the pair (see \
         Failures). \
         Colour: <span class=\"legend-box\" style=\"background:hsl(0,65%,78%)\"></span>0% \
         <span class=\"legend-box\" style=\"background:hsl(60,65%,78%)\"></span>50% \
         <span class=\"legend-box\" style=\"background:hsl(120,65%,78%)\"></span>100% \
         <span class=\"legend-box\" style=\"background:#f0f0f0\"></span>no model in common.</p>\n\
         <table class=\"matrix\">\n<thead><tr><th></th>",
    );
    for b in &r.backends {
        let _ = write!(h, "<th>{}</th>", esc(b));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for (i, a) in r.backends.iter().enumerate() {
        let _ = write!(h, "<tr><th class=\"row\">{}</th>", esc(a));
        for (j, c) in r.tables.matrix[i].iter().enumerate() {
            let Cell {
                models,
                agree,
                failed,
                rate,
                ..
            } = c;
            let failed_note = if *failed > 0 {
                format!(", {failed} failed")
            } else {
                String::new()
            };
            let _ = write!(
                h,
                "<td class=\"heat\" style=\"background:{}\" title=\"{} vs {}: {agree} of {models} models agree{failed_note}\"><b>{}</b>\
                 <span class=\"small\">{agree}/{models}{failed_note}</span></td>",
                heat(*rate),
                esc(a),
                esc(&r.backends[j]),
                pct(*rate)
            );
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
}

fn latency_html(h: &mut String, r: &Report) {
    let _ = write!(
        h,
        "<h2 id=\"latency\">Outcomes and latency per backend</h2>\n<p class=\"note\">Latency: \
         each model's median run time (model prepared; the first run's prepare \
         time apart), over the models the backend ran. Bar: median (dark) and p90 (light), \
         on one scale for all backends. Machine: {}.</p>\n<table>\n<thead><tr><th>backend</th>\
         <th class=\"num\">ok</th><th class=\"num\">unsupported</th><th class=\"num\">error</th>\
         <th class=\"num\">crash</th><th class=\"num\">timeout</th><th class=\"num\">oom</th>\
         <th class=\"num\">median ms</th><th class=\"num\">p90 ms</th><th></th>\
         <th class=\"num\">total ms</th><th class=\"num\">prepare ms</th></tr></thead>\n<tbody>\n",
        esc(&machine_line(r))
    );
    let scale = r
        .tables
        .latency
        .iter()
        .filter_map(|l| l.p90_ms)
        .fold(0.0, f64::max);
    for (o, l) in r.tables.outcomes.iter().zip(&r.tables.latency) {
        let _ = write!(h, "<tr><td class=\"kind\">{}</td>", esc(&o.backend));
        for k in ["ok", "unsupported", "error", "crash", "timeout", "oom"] {
            let n = o.status.get(k).copied().unwrap_or(0);
            let class = if n == 0 {
                "num zero"
            } else if k == "ok" {
                "num"
            } else {
                "num bad"
            };
            let stages: Vec<String> = o
                .stages
                .iter()
                .filter(|(s, _)| s.starts_with(&format!("{k}/")))
                .map(|(s, n)| format!("{s}: {n}"))
                .collect();
            let _ = write!(
                h,
                "<td class=\"{class}\" title=\"{}\">{n}</td>",
                esc(&stages.join(", "))
            );
        }
        let (p90, med) = (l.p90_ms.unwrap_or(0.0), l.median_ms.unwrap_or(0.0));
        let outer = if scale > 0.0 {
            p90 / scale * 100.0
        } else {
            0.0
        };
        let inner = if p90 > 0.0 { med / p90 * 100.0 } else { 0.0 };
        let _ = writeln!(
            h,
            "<td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td><span class=\"bar wide\"><span class=\"p90\" style=\"width:{outer:.1}%\">\
             <span style=\"width:{inner:.1}%\"></span></span></span></td>\
             <td class=\"num\">{:.1}</td><td class=\"num\">{}</td></tr>",
            ms(l.median_ms),
            ms(l.p90_ms),
            l.total_ms,
            ms(l.prepare_median_ms)
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

fn ops_html(h: &mut String, r: &Report) {
    let label = if r.attribution == "localization" {
        "blamed"
    } else {
        "vs reference"
    };
    let _ = writeln!(
        h,
        "<h2 id=\"ops\">Disagreement per op type</h2>\n<p class=\"note\">Of the models \
         containing each op type: the share on which some pair of backends disagreed (blue) \
         and the share attributed to the op (red). {}</p>",
        esc(&attribution_note(r))
    );
    if r.tables.ops.is_empty() {
        h.push_str("<p>No model ran.</p>\n");
        return;
    }
    let _ = writeln!(
        h,
        "<table class=\"ops\">\n<thead><tr><th>op type</th><th class=\"num\">models</th>\
         <th class=\"num\">some pair disagreed</th><th></th><th class=\"num\">{label}</th><th></th>\
         <th>blamed on</th><th class=\"num\">some backend failed</th></tr></thead>\n<tbody>"
    );
    for o in &r.tables.ops {
        let (n, rate) = attributed(o);
        let _ = writeln!(
            h,
            "<tr><td class=\"kind\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{} ({})</td><td><span class=\"bar\"><span style=\"width:{:.1}%\"></span></span></td>\
             <td class=\"num\">{}</td><td><span class=\"bar\"><span class=\"ref\" style=\"width:{:.1}%\"></span></span></td>\
             <td>{}</td><td class=\"num{}\">{}</td></tr>",
            esc(&o.op),
            o.models,
            o.disagree,
            pct(Some(o.disagree_rate)),
            o.disagree_rate * 100.0,
            n.map_or_else(|| DASH.to_string(), |n| format!("{n} ({})", pct(rate))),
            rate.unwrap_or(0.0) * 100.0,
            esc(&blamed_by(o)),
            if o.failed == 0 { " zero" } else { "" },
            o.failed
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

fn models_html(h: &mut String, r: &Report) {
    let _ = write!(
        h,
        "<h2 id=\"models\">Models ({})</h2>\n<p class=\"note\">Per backend: the median run time \
         in ms, or how the run ended (the message in the tooltip).</p>\n\
         <table class=\"findings\">\n<thead><tr><th>model</th><th class=\"num\">nodes</th><th>inputs</th>",
        r.models.len()
    );
    for b in &r.backends {
        let _ = write!(h, "<th class=\"num\">{}</th>", esc(b));
    }
    h.push_str("<th>disagreements</th><th>first diverging node</th></tr></thead>\n<tbody>\n");
    for m in &r.models {
        let _ = write!(
            h,
            "<tr><td class=\"id\">{}</td><td class=\"num\">{}</td><td class=\"small\">{}</td>",
            esc(&m.model),
            m.nodes,
            esc(&m.inputs.join(", "))
        );
        for b in &r.backends {
            match m.runs.iter().find(|x| &x.backend == b) {
                Some(x) if x.ran() => {
                    let _ = write!(
                        h,
                        "<td class=\"num\" title=\"{}\">{}</td>",
                        esc(&x.outputs.join(", ")),
                        ms(x.run_ms)
                    );
                }
                Some(x) => {
                    let _ = write!(
                        h,
                        "<td class=\"st bad\" title=\"{}\">{}</td>",
                        esc(&x.detail),
                        esc(&status_text(x))
                    );
                }
                None => h.push_str("<td></td>"),
            }
        }
        let reasons: Vec<String> = m
            .pairs
            .iter()
            .filter(|p| !p.agree)
            .map(|p| format!("{}≠{}: {}", p.a, p.b, p.reason.as_deref().unwrap_or("")))
            .collect();
        let _ = writeln!(
            h,
            "<td class=\"msg\" title=\"{}\">{}</td><td>{}</td></tr>",
            esc(&reasons.join("\n")),
            esc(&truncate(&disagreements(m), MESSAGE_CHARS)),
            esc(&blame_text(m))
        );
    }
    h.push_str("</tbody>\n</table>\n");
}
