//! Tests of the views and pages on a synthetic campaign directory.

use super::read::Campaign;
use super::*;
use crate::bundle::Meta;
use crate::findings::Seen;
use crate::minimizer::MinimizedInfo;
use mutagraph_backends::backend::Stage;
use mutagraph_oracles::localize::{Localization, Verdict};
use mutagraph_oracles::{Kind, Layer, Location};
use serde_json::{Value, json};
use std::fs;
use std::path::Path;

const CONFIG: &str = r#"seeds = ["zoo"]
backends = ["reference", "ort", "tract"]
seed = 0
search = "mcmc"
time_s = 30.0
"#;

/// A bundle directory with `meta` as its `meta.json`, written without `version` (as before
/// versions existed).
fn bundle(dir: &Path, meta: &Meta, report_md: Option<&str>) {
    let d = dir.join("findings").join(&meta.id);
    fs::create_dir_all(&d).unwrap();
    let mut v = serde_json::to_value(meta).unwrap();
    v.as_object_mut().unwrap().remove("version");
    fs::write(
        d.join("meta.json"),
        serde_json::to_string_pretty(&v).unwrap(),
    )
    .unwrap();
    if let Some(r) = report_md {
        fs::write(d.join("REPORT.md"), r).unwrap();
    }
}

/// A `meta.json` as the campaign writes it (read back from a written sample bundle), with
/// nothing saying where its finding is (no op, layer, location or hits per op).
fn meta(id: &str, kind: Kind, backends: &[&str], message: &str, hits: u64) -> Meta {
    let t = tempfile::tempdir().unwrap();
    let (b, _, _) = crate::bundle::sample(t.path());
    let mut m = crate::bundle::read_meta(&b).unwrap();
    m.id = id.into();
    m.kind = kind;
    m.backends = backends.iter().map(|b| b.to_string()).collect();
    m.message = message.into();
    m.hits = hits;
    m.op_type = None;
    m.layer = None;
    m.finding.location = None;
    m.finding.layer = None;
    m.ops_seen.clear();
    m
}

fn seen(iteration: u64, elapsed_s: f64) -> Seen {
    Seen {
        iteration,
        elapsed_s,
    }
}

fn at(op: &str, value: &str) -> Option<Location> {
    Some(Location {
        op_type: op.into(),
        value: value.into(),
        attrs: String::new(),
    })
}

fn minimized(nodes_before: usize, nodes_after: usize, op_type: Option<&str>) -> MinimizedInfo {
    MinimizedInfo {
        nodes_before,
        nodes_after,
        op_type: op_type.map(String::from),
        ..Default::default()
    }
}

/// The fixture's bundles (see [`campaign`]).
fn bundles(d: &Path) {
    let mut m = meta(
        "crash-ort-lrn-1",
        Kind::Crash,
        &["ort", "ort-noopt"],
        "LRN failed",
        40,
    );
    (m.layer, m.stage, m.op_type) = (Some(Layer::Kernel), Some(Stage::Run), Some("LRN".into()));
    (m.first_seen, m.last_seen) = (seen(5, 2.0), seen(280, 120.0));
    (m.finding.location, m.finding.placed_by_message) = (at("LRN", "lrn_1"), true);
    (m.minimized, m.trigger) = (Some(minimized(30, 1, Some("LRN"))), vec!["size=2".into()]);
    m.signature = "s1".into();
    let report = "# ONNX Runtime: LRN fails\n\n- Library: ONNX Runtime\n\n| a | b |\n|---|---|\n| <x> | `y` |\n";
    bundle(d, &m, Some(report));

    let mut m = meta(
        "crash-tract-pad-1",
        Kind::Crash,
        &["tract", "tract-opt"],
        "panic: pad",
        5,
    );
    m.layer = Some(Layer::Kernel);
    (m.first_seen, m.last_seen) = (seen(9, 4.0), seen(200, 90.0));
    (m.finding.location, m.signature) = (at("Pad", "pad_1"), "s2".into());
    bundle(d, &m, Some("# tract: Pad panics\n"));

    let message = "output 'y': 3 of 4 elements differ";
    let mut m = meta(
        "inconsistency-tract-1",
        Kind::Inconsistency,
        &["tract", "tract-opt"],
        message,
        3,
    );
    m.layer = Some(Layer::Kernel);
    (m.first_seen, m.last_seen) = (seen(260, 110.0), seen(270, 115.0));
    m.ops_seen = [("GRU".to_string(), 3), ("RNN".to_string(), 1)].into();
    m.localization = Some(Localization {
        verdict: Verdict::NotReproduced,
        location: None,
        values: Vec::new(),
        max_r: None,
    });
    (m.minimized, m.aliases) = (Some(minimized(9, 2, None)), vec!["other".into()]);
    m.signature = "s3".into();
    bundle(d, &m, None);

    let mut m = meta("nan-ort-1", Kind::Nan, &["ort"], "NaN", 2);
    (m.layer, m.signature) = (Some(Layer::Optimizer), "s4".into());
    m.triage = Some("reported upstream as #123".into());
    bundle(d, &m, Some("# NaN\n"));
}

/// Four bundles: an ort crash localized to LRN (minimized), a tract crash placed at Pad (only
/// in `finding.location`, pending), a tract inconsistency localized only through its hits
/// (GRU), an ort NaN with no op anywhere (pending); two sessions in `stats.json`.
fn campaign() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    fs::write(d.join("campaign.toml"), CONFIG).unwrap();
    fs::write(
        d.join("stats.json"),
        json!({
            "iterations": 300, "executions": 290, "findings": 60,
            "findings_by_kind": {"crash": 50, "inconsistency": 8, "nan": 2},
            "elapsed_s": 130.0,
            "timings": {"per_backend": {"ort": {"runs": 290, "wall_s": 3.0}, "tract": {"runs": 288}}},
            "sessions": [{"iteration": 0, "elapsed_s": 0.0}, {"iteration": 250, "elapsed_s": 100.5}]
        })
        .to_string(),
    )
    .unwrap();
    fs::write(
        d.join("timeseries.csv"),
        "elapsed_s,executions,execs_per_s,op_types_pct,op_pairs_pct,params_pct,inputs_pct,findings,illegal\n\
         1.0,10,10.0,10,1,1,1,2,0\n99.0,250,2.5,50,5,5,5,40,0\n101.5,252,2.48,50,5,5,5,41,0\n130.0,290,2.23,60,6,6,6,60,0\n",
    )
    .unwrap();
    bundles(d);
    t
}

#[test]
fn per_backend_counts() {
    let t = campaign();
    let c = Campaign::load(t.path()).unwrap();
    let v = c.backend_view();
    assert_eq!(v.kinds, vec!["crash", "inconsistency", "nan"]);
    let names: Vec<&str> = v.rows.iter().map(|r| r.backend.as_str()).collect();
    assert_eq!(
        names,
        vec!["reference", "ort", "ort-noopt", "tract", "tract-opt"]
    );
    let row = |b: &str| v.rows.iter().find(|r| r.backend == b).unwrap();
    let ort = row("ort");
    assert_eq!((ort.total.bundles, ort.total.hits), (2, 42));
    assert_eq!(ort.runs, Some(290));
    assert_eq!(ort.by_kind["crash"].bundles, 1);
    assert_eq!(ort.by_kind["nan"].hits, 2);
    assert_eq!((ort.minimized, ort.pending, ort.optimizer), (1, 1, 1));
    let tract = row("tract");
    assert_eq!((tract.total.bundles, tract.total.hits), (2, 8));
    assert_eq!((tract.minimized, tract.pending, tract.optimizer), (1, 1, 0));
    assert_eq!(tract.by_kind.get("nan"), None);
    assert_eq!(row("reference").total.bundles, 0);
}

#[test]
fn per_op_counts_and_every_op_found() {
    let t = campaign();
    let c = Campaign::load(t.path()).unwrap();
    let ops: Vec<(&str, Option<&str>)> =
        c.bundles.iter().map(|b| (b.id.as_str(), b.op())).collect();
    assert_eq!(
        ops,
        vec![
            ("crash-ort-lrn-1", Some("LRN")),
            ("crash-tract-pad-1", Some("Pad")),
            ("inconsistency-tract-1", Some("GRU")),
            ("nan-ort-1", None),
        ]
    );
    let v = c.op_view();
    assert_eq!(v.backends, vec!["ort", "ort-noopt", "tract", "tract-opt"]);
    let names: Vec<&str> = v.rows.iter().map(|r| r.op.as_str()).collect();
    // By bundles, then hits; the bundle without an op last.
    assert_eq!(names, vec!["LRN", "Pad", "GRU", "—"]);
    assert_eq!(v.rows[0].by_backend["ort-noopt"].bundles, 1);
    assert_eq!(v.rows[0].by_backend.get("tract"), None);
    assert_eq!(v.rows[2].by_backend["tract"].hits, 3);
    assert!(v.rows[2].inferred && !v.rows[0].inferred);
}

/// The `<tr>` of the findings table for a bundle.
fn row_of<'a>(html: &'a str, id: &str) -> &'a str {
    let at = html
        .find(&format!(">{id}</a><div class=\"files\">"))
        .or_else(|| html.find(&format!(">{id}</span><div class=\"files\">")))
        .unwrap_or_else(|| panic!("no row for {id}"));
    let start = html[..at].rfind("<tr ").unwrap();
    let end = at + html[at..].find("</tr>").unwrap();
    &html[start..end]
}

#[test]
fn html_sections_rows_markers_and_bundle_pages() {
    let t = campaign();
    let r = render(t.path()).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let html = fs::read_to_string(&r.html).unwrap();
    for s in [
        "<h2 id=\"backends\">Findings per backend</h2>",
        "<h2 id=\"ops\">Findings per op type</h2>",
        "id=\"findings-table\"",
        "<select id=\"f-backend\"",
        "<option value=\"tract-opt\">tract-opt</option>",
        "<option value=\"GRU\">GRU</option>",
        "data-sort=\"num\"",
    ] {
        assert!(html.contains(s), "HTML lacks {s:?}");
    }
    // The ort row of the per-backend table: runs 290, 2 bundles, 42 hits, crash 1 (40).
    let ort = html
        .find("data-v=\"ort\">ort</a></td>")
        .map(|i| &html[i..i + html[i..].find("</tr>").unwrap()])
        .unwrap();
    assert!(
        ort.contains(
            "<td class=\"num\">290</td><td class=\"num\">2</td><td class=\"num\">42</td>\
             <td class=\"num\">1 (40)</td><td class=\"num zero\">0</td><td class=\"num\">1 (2)</td>"
        ),
        "{ort}"
    );
    // Every row has its op and triage; the inferred op says so.
    let lrn = row_of(&html, "crash-ort-lrn-1");
    assert!(lrn.contains("data-op=\"LRN\""), "{lrn}");
    assert!(
        lrn.contains("<span class=\"tag\">placed by message</span>"),
        "{lrn}"
    );
    assert!(
        lrn.contains("<span class=\"tag\">needs size=2</span>"),
        "{lrn}"
    );
    let pad = row_of(&html, "crash-tract-pad-1");
    assert!(pad.contains(">Pad</td>"), "{pad}");
    assert!(pad.contains("placed by prefix search"), "{pad}");
    let gru = row_of(&html, "inconsistency-tract-1");
    assert!(
        gru.contains("<td class=\"op inferred\" title=\"not localized"),
        "{gru}"
    );
    assert!(gru.contains(">GRU</td>"), "{gru}");
    assert!(gru.contains("+1 merged"), "{gru}");
    // No REPORT.md: the id is not a link.
    assert!(gru.contains("<span title=\"signature: s3\">inconsistency-tract-1</span>"));
    let nan = row_of(&html, "nan-ort-1");
    assert!(nan.contains("note: reported upstream as #123"), "{nan}");
    assert!(
        nan.contains("<span class=\"tag\">optimizer</span>"),
        "{nan}"
    );
    for id in [
        "crash-ort-lrn-1",
        "crash-tract-pad-1",
        "inconsistency-tract-1",
    ] {
        assert!(
            !row_of(&html, id).contains("<td>—</td><td class=\"num\">"),
            "{id}"
        );
    }

    // One resume marker per chart, at 100.5 s.
    assert_eq!(html.matches("class=\"resume-line\"").count(), 3);
    assert!(html.contains("session 2 resumed at 100.5 s, iteration 250"));
    assert!(html.contains("| sessions | 2 |") || html.contains("<th>sessions</th><td>2</td>"));

    // The bundles' reports as HTML, linked.
    assert_eq!(r.bundle_pages.len(), 3);
    assert!(html.contains("href=\"findings/crash-ort-lrn-1/REPORT.html\""));
    assert!(html.contains("href=\"findings/crash-ort-lrn-1/REPORT.md\">REPORT.md</a>"));
    let page = fs::read_to_string(t.path().join("findings/crash-ort-lrn-1/REPORT.html")).unwrap();
    assert!(page.contains("<h1>ONNX Runtime: LRN fails</h1>"), "{page}");
    assert!(
        page.contains("<td>&lt;x&gt;</td><td><code>y</code></td>"),
        "{page}"
    );
    assert!(
        !t.path()
            .join("findings/inconsistency-tract-1/REPORT.html")
            .exists()
    );

    // The script is inline, in CDATA (the page stays XML).
    assert_eq!(html.matches("<script>").count(), 1);
    assert!(html.contains("<script>//<![CDATA["));

    // Markdown: the same views.
    let md = &r.markdown_text;
    assert!(md.contains("## Per backend"), "{md}");
    assert!(
        md.contains("| ort | 290 | 2 | 42 | 1 (40) | 0 | 1 (2) | 1 | 1 | 1 |"),
        "{md}"
    );
    assert!(
        md.contains("| GRU (inferred) | 1 | 3 | 0 | 0 | 1 | 1 | inconsistency 1 |"),
        "{md}"
    );
    assert!(
        md.contains("- session 2 resumed at 100.5 s, iteration 250"),
        "{md}"
    );

    // Rendering again changes nothing.
    render(t.path()).unwrap();
    assert_eq!(fs::read_to_string(&r.html).unwrap(), html);
}

#[test]
fn without_sessions_no_markers() {
    let t = campaign();
    let stats = t.path().join("stats.json");
    let mut v: Value = serde_json::from_str(&fs::read_to_string(&stats).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("sessions");
    fs::write(&stats, v.to_string()).unwrap();
    let r = render(t.path()).unwrap();
    let html = fs::read_to_string(&r.html).unwrap();
    assert_eq!(html.matches("resume-line").count(), 1, "only the CSS rule");
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
fn files_without_a_version_read_as_the_current_version_does() {
    // The fixture's files carry no version (written before versions): they read, the fields
    // they lack defaulting. With the current version, the same report.
    let t = campaign();
    let before = render(t.path()).unwrap();
    let html = fs::read_to_string(&before.html).unwrap();
    let stats = t.path().join("stats.json");
    let mut v: Value = serde_json::from_str(&fs::read_to_string(&stats).unwrap()).unwrap();
    v["version"] = json!(<crate::persisted::Stats as crate::persisted::Versioned>::VERSION);
    fs::write(&stats, v.to_string()).unwrap();
    let meta = t.path().join("findings/nan-ort-1/meta.json");
    let mut m: Value = serde_json::from_str(&fs::read_to_string(&meta).unwrap()).unwrap();
    m["version"] = json!(<crate::bundle::Meta as crate::persisted::Versioned>::VERSION);
    fs::write(&meta, m.to_string()).unwrap();
    let after = render(t.path()).unwrap();
    assert_eq!(fs::read_to_string(&after.html).unwrap(), html);
    assert_eq!(after.markdown_text, before.markdown_text);
}

#[test]
fn a_newer_format_version_is_refused_naming_the_file() {
    let t = campaign();
    let stats = t.path().join("stats.json");
    let text = fs::read_to_string(&stats).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["version"] = json!(99);
    fs::write(&stats, v.to_string()).unwrap();
    let e = render(t.path()).unwrap_err();
    assert!(
        matches!(e, ReportError::NewerFormat { found: 99, .. }),
        "{e:?}"
    );
    assert_eq!(e.path(), stats);
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("{}: format version 99 is newer", stats.display())),
        "{msg}"
    );
    assert!(!t.path().join("report.html").exists());

    // A bundle's meta.json of a newer version: refused too, naming it.
    fs::write(&stats, text).unwrap();
    let meta = t.path().join("findings/nan-ort-1/meta.json");
    let mut m: Value = serde_json::from_str(&fs::read_to_string(&meta).unwrap()).unwrap();
    m["version"] = json!(7);
    fs::write(&meta, m.to_string()).unwrap();
    let e = render(t.path()).unwrap_err();
    assert!(
        matches!(e, ReportError::NewerFormat { found: 7, .. }),
        "{e:?}"
    );
    assert_eq!(e.path(), meta);
    assert!(e.to_string().contains("nan-ort-1/meta.json"), "{e}");
}

/// A `meta.json` that does not read as the bundle's own reader reads it does not stop the
/// report: a warning naming it and what is wrong, and a row with only the directory name.
#[test]
fn a_meta_json_that_does_not_read_is_a_warning_and_a_row_by_its_directory_name() {
    let t = campaign();
    let meta = t.path().join("findings/nan-ort-1/meta.json");
    fs::write(
        &meta,
        r#"{"id": "nan-ort-1", "kind": "nan", "hits": "many"}"#,
    )
    .unwrap();
    let r = render(t.path()).unwrap();
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert!(
        w.starts_with("findings/nan-ort-1/meta.json: invalid type: string \"many\", expected u64"),
        "{w}"
    );
    let html = fs::read_to_string(&r.html).unwrap();
    assert!(html.contains("<h2>Warnings</h2>"), "{html}");
    let nan = row_of(&html, "nan-ort-1");
    assert!(
        nan.contains("<td class=\"kind\">—</td><td>—</td><td>—</td><td>—</td>"),
        "{nan}"
    );
    assert!(
        nan.contains("href=\"findings/nan-ort-1/REPORT.html\""),
        "{nan}"
    );
    assert!(
        r.markdown_text
            .contains("findings/nan-ort-1/meta.json: invalid type")
    );
}

#[test]
fn a_stats_field_of_another_type_is_an_error_naming_the_file() {
    let t = campaign();
    let stats = t.path().join("stats.json");
    fs::write(&stats, r#"{"iterations": "many"}"#).unwrap();
    let e = render(t.path()).unwrap_err();
    assert!(matches!(e, ReportError::Parse { .. }), "{e:?}");
    assert_eq!(e.path(), stats);
    assert!(e.to_string().contains("line 1"), "{e}");
}

#[test]
fn rewrite_coverage_is_read_against_where_the_known_rewrites_come_from() {
    use crate::persisted::stats::{FROM_PATTERNS, FROM_SUITE, RewriteCoverage};
    let fired: std::collections::BTreeMap<String, u64> =
        [("declutter Add", 3), ("PushSliceUp > Slice EinSum", 1)]
            .into_iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect();
    let known = ["declutter Add", "declutter Mul", "PropConst"];
    let tract = RewriteCoverage::of("tract", &fired, (&known, FROM_SUITE), 2);
    assert_eq!(tract.known_fired, 1);
    assert_eq!(tract.beyond_known(), vec!["PushSliceUp > Slice EinSum"]);
    assert_eq!(
        read::known_words(&tract),
        "; 1 of the 3 rewrites it applies over the ONNX backend test suite, and 1 the suite \
         never makes it apply"
    );
    let ort = RewriteCoverage::of("ort", &fired, (&known, FROM_PATTERNS), 2);
    assert_eq!(
        read::known_words(&ort),
        "; 1 of the 3 rewrites the pattern library is made for"
    );
    // A campaign written before `known_from` (its `targeted` list) reads as the pattern
    // library's.
    let old: RewriteCoverage = serde_json::from_value(json!({
        "backend": "ort", "fired": {"declutter Add": 1}, "targeted": ["declutter Add"],
        "targeted_fired": 1, "combinations": 1
    }))
    .unwrap();
    assert_eq!(
        read::known_words(&old),
        "; 1 of the 1 rewrites the pattern library is made for"
    );
}
