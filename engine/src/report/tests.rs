//! Tests of the views and pages on a synthetic campaign directory.

use super::read::Campaign;
use super::*;
use serde_json::{Value, json};
use std::fs;
use std::path::Path;

const CONFIG: &str = r#"seeds = ["zoo"]
backends = ["reference", "ort", "tract"]
seed = 0
search = "mcmc"
time_s = 30.0
"#;

fn bundle(dir: &Path, name: &str, meta: Value, report_md: Option<&str>) {
    let d = dir.join("findings").join(name);
    fs::create_dir_all(&d).unwrap();
    fs::write(
        d.join("meta.json"),
        serde_json::to_string_pretty(&meta).unwrap(),
    )
    .unwrap();
    if let Some(r) = report_md {
        fs::write(d.join("REPORT.md"), r).unwrap();
    }
}

/// Four bundles: an ort crash localized to LRN (minimized), a tract crash placed at Pad (only
/// in `finding.location`, pending), a tract inconsistency localized only through its hits
/// (GRU), an ort NaN with no op anywhere; two sessions in `stats.json`.
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
    bundle(
        d,
        "crash-ort-lrn-1",
        json!({
            "id": "crash-ort-lrn-1", "kind": "crash", "backends": ["ort", "ort-noopt"],
            "layer": "kernel", "stage": "Run", "op_type": "LRN", "message": "LRN failed",
            "hits": 40, "first_seen": {"iteration": 5, "elapsed_s": 2.0},
            "last_seen": {"iteration": 280, "elapsed_s": 120.0},
            "finding": {"location": {"op_type": "LRN", "value": "lrn_1", "attrs": ""},
                        "placed_by_message": true},
            "minimized": {"nodes_before": 30, "nodes_after": 1, "op_type": "LRN"},
            "trigger": ["size=2"], "triage": null, "signature": "s1"
        }),
        Some(
            "# ONNX Runtime: LRN fails\n\n- Library: ONNX Runtime\n\n| a | b |\n|---|---|\n| <x> | `y` |\n",
        ),
    );
    bundle(
        d,
        "crash-tract-pad-1",
        json!({
            "id": "crash-tract-pad-1", "kind": "crash", "backends": ["tract", "tract-opt"],
            "layer": "kernel", "stage": null, "op_type": null, "message": "panic: pad",
            "hits": 5, "first_seen": {"iteration": 9, "elapsed_s": 4.0},
            "last_seen": {"iteration": 200, "elapsed_s": 90.0},
            "finding": {"location": {"op_type": "Pad", "value": "pad_1", "attrs": ""}},
            "minimized": null, "signature": "s2"
        }),
        Some("# tract: Pad panics\n"),
    );
    bundle(
        d,
        "inconsistency-tract-1",
        json!({
            "id": "inconsistency-tract-1", "kind": "inconsistency",
            "backends": ["tract", "tract-opt"], "layer": "kernel", "op_type": null,
            "message": "output 'y': 3 of 4 elements differ", "hits": 3,
            "first_seen": {"iteration": 260, "elapsed_s": 110.0},
            "last_seen": {"iteration": 270, "elapsed_s": 115.0},
            "ops_seen": {"GRU": 3, "RNN": 1},
            "localization": {"verdict": "not-reproduced", "location": null, "values": [], "max_r": null},
            "minimized": {"nodes_before": 9, "nodes_after": 2, "op_type": null},
            "aliases": ["other"], "signature": "s3"
        }),
        None,
    );
    bundle(
        d,
        "nan-ort-1",
        json!({
            "id": "nan-ort-1", "kind": "nan", "backends": ["ort"], "layer": "optimizer",
            "message": "NaN", "hits": 2, "signature": "s4",
            "triage": "reported upstream as #123"
        }),
        Some("# NaN\n"),
    );
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
    assert_eq!((ort.minimized, ort.pending, ort.optimizer), (1, 0, 1));
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
        md.contains("| ort | 290 | 2 | 42 | 1 (40) | 0 | 1 (2) | 1 | 0 | 1 |"),
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
