//! `mutagraph_engine::report::render` on synthetic campaign directories.

use mutagraph_engine::report::{ReportError, render};
use std::fs;
use std::path::Path;

const CONFIG: &str = r#"seeds = ["zoo"]
backends = ["reference", "ort", "tract"]
seed = 42
search = "mcmc"
mcmc_p = 0.08
operators = ["NLA", "LResh", "WS"]
jobs = 4
iterations = 500
tolerance = "close"
run_timeout_s = 10.0
mem_limit_mib = 2048
"#;

const STATS: &str = r#"{
  "iterations": 480, "executions": 450, "backend_runs": 1350, "mutants": 470,
  "skipped": 10, "rejected": 12, "inputs_failed": 3, "load_failed_everywhere": 5,
  "diverse": 37, "findings": 9,
  "findings_by_kind": { "crash": 2, "inconsistency": 7 },
  "elapsed_s": 3723.5, "execs_per_s": 0.1208, "illegal": 20, "illegal_percent": 4.255,
  "coverage": {
    "models": 500,
    "op_types": { "covered": 61, "total": 140, "percent": 43.571 },
    "op_pairs": { "covered": 300, "total": 9000, "percent": 3.333 },
    "params": { "covered": 210, "total": 700, "percent": 30.0 },
    "inputs": { "covered": 40, "total": 160, "percent": 25.0 },
    "uncovered_op_types": [], "outside_op_types": [], "outside_pairs": 0
  },
  "seed_coverage": {
    "models": 30,
    "op_types": { "covered": 30, "total": 140, "percent": 21.4 },
    "op_pairs": { "covered": 50, "total": 9000, "percent": 0.55 },
    "params": { "covered": 80, "total": 700, "percent": 11.4 },
    "inputs": { "covered": 10, "total": 160, "percent": 6.25 }
  },
  "some_future_field": { "x": 1 }
}"#;

/// Rows with an extra column the report does not know, and a partial last line.
const TIMESERIES: &str = "elapsed_s,executions,execs_per_s,op_types_pct,op_pairs_pct,params_pct,inputs_pct,findings,illegal,future\n\
0.000,0,0.000,21.4,0.55,11.4,6.25,0,0,a\n\
1200.000,150,0.125,30.0,1.5,20.0,15.0,3,7,b\n\
2400.000,300,0.125,40.0,2.9,28.0,22.0,6,13,c\n\
3723.500,450,0.121,43.571,3.333,30.0,25.0,9,20,d\n\
3724.0,451,0.1";

fn meta(
    id: &str,
    kind: &str,
    hits: u64,
    message: &str,
    first: f64,
    minimized: &str,
    signature: &str,
) -> String {
    // A whole `bundle::Meta` (the report reads it with `bundle::read_meta`).
    let v = serde_json::json!({
        "id": id,
        "kind": kind,
        "backends": ["ort"],
        "stage": "Run",
        "symptom": "values",
        "op_type": "Conv",
        "message": message,
        "hits": hits,
        "first_seen": { "iteration": 10, "elapsed_s": first },
        "last_seen": { "iteration": 400, "elapsed_s": 3000.5 },
        "finding": {
            "kind": kind, "backends": ["ort"], "stage": "Run", "symptom": "values",
            "message": message
        },
        "minimized": serde_json::from_str::<serde_json::Value>(minimized).unwrap(),
        "seed": "zoo:test",
        "iteration": 10,
        "input_seed": 0,
        "operators": [],
        "trace": [],
        "backend_versions": {},
        "runs": [],
        "tolerance": "close",
        "config": {},
        "triage": null,
        "signature": signature,
        "new_field_we_ignore": [1, 2, 3],
    });
    serde_json::to_string_pretty(&v).unwrap()
}

fn bundle(dir: &Path, id: &str, meta_text: &str) {
    let d = dir.join("findings").join(id);
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("meta.json"), meta_text).unwrap();
    fs::write(d.join("REPORT.md"), "# report\n").unwrap();
}

/// A campaign directory with three bundles and one bundle still being written.
fn campaign() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    fs::write(d.join("campaign.toml"), CONFIG).unwrap();
    fs::write(d.join("stats.json"), STATS).unwrap();
    fs::write(d.join("timeseries.csv"), TIMESERIES).unwrap();
    bundle(
        d,
        "inconsistency-ort-0",
        &meta(
            "inconsistency-ort-0",
            "inconsistency",
            2,
            "max abs 3.5 > tolerance",
            1100.0,
            r#"{"nodes_before": 40, "nodes_after": 3, "checks": 0, "invalid_candidates": 0,
                "wall_s": 0.0, "passes": []}"#,
            "sig-a",
        ),
    );
    bundle(
        d,
        "inconsistency-ort-1",
        &meta(
            "inconsistency-ort-1",
            "inconsistency",
            5,
            &format!("<script>alert(1)</script> & \"quoted\" {}", "x".repeat(400)),
            2300.0,
            "null",
            "sig-b",
        ),
    );
    bundle(
        d,
        "crash-ort-0",
        &meta(
            "crash-ort-0",
            "crash",
            1,
            "SIGSEGV in Conv",
            50.0,
            "null",
            "sig-c",
        ),
    );
    fs::write(
        d.join("findings").join("crash-ort-0").join("repro.py"),
        "print(1)\n",
    )
    .unwrap();
    // Being written: no meta.json yet.
    fs::create_dir_all(d.join("findings").join("crash-tract-0")).unwrap();
    t
}

fn assert_self_contained(html: &str) {
    for bad in ["http://", "https://", "src=", "<link", "@import", "url("] {
        assert!(!html.contains(bad), "HTML contains {bad:?}");
    }
    // Scripts only inline.
    assert_eq!(
        html.matches("<script").count(),
        html.matches("<script>").count(),
        "a script element with attributes"
    );
}

/// Checks the page is well-formed XML when Python is there (it is not required).
fn xml_check(path: &Path) {
    let ok = std::process::Command::new("python3")
        .args([
            "-c",
            "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])",
        ])
        .arg(path)
        .output();
    match ok {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            if err.contains("No module named") {
                eprintln!("xml.dom.minidom unavailable; well-formedness not checked");
            } else {
                panic!("report.html is not well-formed XML: {err}");
            }
        }
        Err(_) => eprintln!("python3 unavailable; well-formedness not checked"),
    }
}

#[test]
fn full_campaign_renders_html_and_markdown() {
    let t = campaign();
    let r = render(t.path()).unwrap();
    assert_eq!(r.html, t.path().join("report.html"));
    assert_eq!(r.markdown, t.path().join("report.md"));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let html = fs::read_to_string(&r.html).unwrap();
    assert_self_contained(&html);
    assert_eq!(html.matches("<svg").count(), 3, "one SVG per chart");
    assert_eq!(html.matches("</svg>").count(), 3);
    assert!(html.contains("<style>"));

    // Every bundle with a meta.json, linked to its REPORT.md rendered as HTML; the one
    // without is not listed.
    for id in ["inconsistency-ort-0", "inconsistency-ort-1", "crash-ort-0"] {
        assert!(
            html.contains(&format!("href=\"findings/{id}/REPORT.html\"")),
            "{id}"
        );
        let page = t.path().join("findings").join(id).join("REPORT.html");
        assert!(r.bundle_pages.contains(&page), "{id}");
        let page = fs::read_to_string(page).unwrap();
        assert!(page.contains("<h1>report</h1>"), "{page}");
        assert!(page.contains("href=\"../../report.html\""), "{page}");
        assert!(html.contains(&format!("href=\"findings/{id}/\"")), "{id}");
        assert!(
            r.markdown_text
                .contains(&format!("[{id}](findings/{id}/REPORT.md)")),
            "{id}"
        );
    }
    assert!(!html.contains("crash-tract-0"));
    assert!(html.contains("href=\"findings/crash-ort-0/repro.py\""));
    assert!(!html.contains("inconsistency-ort-0/repro.py"));

    // Sorted by kind, then hits descending.
    let pos = |s: &str| html.find(&format!("findings/{s}/REPORT.html")).unwrap();
    assert!(pos("crash-ort-0") < pos("inconsistency-ort-1"));
    assert!(pos("inconsistency-ort-1") < pos("inconsistency-ort-0"));
    let mpos = |s: &str| r.markdown_text.find(&format!("[{s}]")).unwrap();
    assert!(mpos("crash-ort-0") < mpos("inconsistency-ort-1"));
    assert!(mpos("inconsistency-ort-1") < mpos("inconsistency-ort-0"));

    // The message is escaped, cut in the cell, complete in the title.
    assert!(!html.contains("<script>alert"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot;"));
    assert!(html.contains(&format!("{}\">", "x".repeat(400))));
    assert!(html.contains(&format!("{}…</td>", "x".repeat(10))));
    assert!(!html.contains(&format!("{}</td>", "x".repeat(400))));

    // Summary: configuration and totals.
    for s in [
        "reference, ort, tract",
        "mcmc (p = 0.08)",
        "1h 02m 04s",
        "450",
        "0.12",
        "20 (4.3%)",
        "61 / 140",
        "43.6",
        "unbounded",
        "40 → 3",
        "pending",
        "iter 10 · 1100.0 s",
    ] {
        assert!(html.contains(s), "HTML lacks {s:?}");
    }
    // The charts: legends, axis labels (elapsed over an hour: minutes), unique signatures.
    for s in [
        "op types",
        "op pairs",
        "parameters",
        "inputs",
        "elapsed (min)",
        "coverage (%)",
        "executions / s",
        "unique signatures",
        "findings (cumulative)",
    ] {
        assert!(html.contains(s), "HTML lacks {s:?}");
    }
    assert_eq!(html.matches("<circle").count(), 3, "one mark per signature");
    assert!(!html.contains("no data"));

    // Markdown: totals, coverage and findings tables.
    let md = &r.markdown_text;
    assert_eq!(md, &fs::read_to_string(&r.markdown).unwrap());
    assert!(md.contains("| family | covered | total | % | seeds % |"));
    assert!(md.contains("| op types | 61 | 140 | 43.6 | 21.4 |"));
    assert!(md.contains("| id | kind | backends |"));
    assert!(md.contains("| executions | 450 |"));
    assert!(md.contains("crash 2, inconsistency 7"));
    assert!(md.contains("| 5 |"));
    xml_check(&r.html);

    // Deterministic: a second rendering gives the same bytes.
    render(t.path()).unwrap();
    assert_eq!(fs::read_to_string(&r.html).unwrap(), html);
}

#[test]
fn empty_campaign_renders() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("campaign.toml"), CONFIG).unwrap();
    fs::write(
        t.path().join("stats.json"),
        r#"{"iterations": 0, "executions": 0, "findings": 0, "findings_by_kind": {}}"#,
    )
    .unwrap();
    // No timeseries.csv, no findings/.
    let r = render(t.path()).unwrap();
    let html = fs::read_to_string(&r.html).unwrap();
    assert_self_contained(&html);
    assert_eq!(html.matches("<svg").count(), 3);
    assert_eq!(html.matches("no data").count(), 3);
    assert!(html.contains("No bug bundles."));
    assert!(r.markdown_text.contains("No bug bundles."));
    assert!(r.markdown_text.contains("| op types | — | — | — | — |"));
    xml_check(&r.html);

    // A timeseries with only its header, an empty findings directory.
    fs::write(
        t.path().join("timeseries.csv"),
        "elapsed_s,executions,execs_per_s,op_types_pct,op_pairs_pct,params_pct,inputs_pct,findings,illegal\n",
    )
    .unwrap();
    fs::create_dir_all(t.path().join("findings")).unwrap();
    let r = render(t.path()).unwrap();
    let html = fs::read_to_string(&r.html).unwrap();
    assert_eq!(html.matches("no data").count(), 3);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);

    // Fully empty timeseries file.
    fs::write(t.path().join("timeseries.csv"), "").unwrap();
    render(t.path()).unwrap();
}

#[test]
fn corrupt_meta_json_is_a_warning_naming_the_file() {
    let t = campaign();
    let d = t.path().join("findings").join("nan-tract-0");
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("meta.json"), "{\"id\": \"nan-tract-0\", \"kind\": ").unwrap();
    let r = render(t.path()).unwrap();
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].starts_with("findings/nan-tract-0/meta.json: invalid JSON"),
        "{}",
        r.warnings[0]
    );
    let html = fs::read_to_string(&r.html).unwrap();
    assert!(html.contains("<h2>Warnings</h2>"));
    assert!(html.contains("findings/nan-tract-0/meta.json: invalid JSON"));
    assert!(!html.contains("findings/nan-tract-0/REPORT"));
    assert!(r.markdown_text.contains("## Warnings"));
    // The other bundles are still there.
    assert!(html.contains("findings/crash-ort-0/REPORT.html"));
}

#[test]
fn missing_or_corrupt_stats_is_an_error_naming_the_file() {
    let t = campaign();
    let stats = t.path().join("stats.json");
    fs::remove_file(&stats).unwrap();
    let e = render(t.path()).unwrap_err();
    assert!(matches!(e, ReportError::Read { .. }), "{e:?}");
    assert_eq!(e.path(), stats);
    assert!(e.to_string().contains("stats.json"), "{e}");
    assert!(!t.path().join("report.html").exists());

    fs::write(&stats, "{\"iterations\": 3,").unwrap();
    let e = render(t.path()).unwrap_err();
    assert!(matches!(e, ReportError::Parse { .. }), "{e:?}");
    assert!(e.to_string().contains("stats.json"), "{e}");

    fs::write(&stats, "[1, 2]").unwrap();
    let e = render(t.path()).unwrap_err();
    assert!(
        e.to_string().contains("stats.json: expected a JSON object"),
        "{e}"
    );
}

#[test]
fn campaign_toml_missing_is_a_warning_corrupt_is_an_error() {
    let t = campaign();
    let cfg = t.path().join("campaign.toml");
    fs::write(&cfg, "seeds = [\"zoo\"\nbackends = 3").unwrap();
    let e = render(t.path()).unwrap_err();
    assert!(matches!(e, ReportError::Parse { .. }), "{e:?}");
    assert_eq!(e.path(), cfg);

    fs::remove_file(&cfg).unwrap();
    let r = render(t.path()).unwrap();
    assert_eq!(
        r.warnings,
        vec!["campaign.toml: missing; configuration unknown".to_string()]
    );
    assert!(r.markdown_text.contains("| backends | — |"));
}

#[test]
fn missing_directory_is_an_error() {
    let t = tempfile::tempdir().unwrap();
    let gone = t.path().join("nope");
    let e = render(&gone).unwrap_err();
    assert!(matches!(e, ReportError::NotADirectory { .. }), "{e:?}");
    assert_eq!(e.path(), gone);
}

#[test]
fn malformed_timeseries_rows_are_skipped_with_a_warning() {
    let t = campaign();
    fs::write(
        t.path().join("timeseries.csv"),
        "findings,elapsed_s\n0,1.0\nnot-a-number,2.0\n1,3.0\n",
    )
    .unwrap();
    let r = render(t.path()).unwrap();
    assert_eq!(
        r.warnings,
        vec!["timeseries.csv: 1 malformed row(s) skipped".to_string()]
    );
    let html = fs::read_to_string(&r.html).unwrap();
    // Coverage and speed have no column: their charts say so; findings has data.
    assert_eq!(html.matches("no data").count(), 2);
}

/// A tracker API on this machine answering every request with `body`; returns its address and
/// the request lines it received.
fn stub_tracker(body: &'static str) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            log.lock().unwrap().push(line.trim().to_string());
            // The headers, up to the empty line.
            let mut h = String::new();
            while reader.read_line(&mut h).is_ok_and(|n| n > 0) && h.trim() != "" {
                h.clear();
            }
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (addr, seen)
}

#[test]
fn known_upstream_lists_the_trackers_closest_issues_in_the_report() {
    use crate::common::mg;
    // A tract crash: tract 0.23.9 has no f64 IsNaN.
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("isnan.onnxtxt");
    fs::write(
        &text,
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (double[2, 3] x) => (bool[2, 3] y)\n{\n   a = Relu (x)\n   y = IsNaN (a)\n}",
    )
    .unwrap();
    let model = dir.path().join("isnan.onnx");
    assert!(
        mg(&["convert", text.to_str().unwrap(), model.to_str().unwrap()])
            .status
            .success()
    );
    let out = dir.path().join("c");
    let o = mg(&[
        "campaign",
        "--seeds",
        model.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backends",
        "reference,tract",
        "--iterations",
        "1",
        "--no-minimize",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bundle = fs::read_dir(out.join("findings"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let report = || fs::read_to_string(bundle.join("REPORT.md")).unwrap();
    // Off by default: the report says it was not checked.
    assert!(
        report().contains("## Possibly known upstream\n\nNot checked"),
        "{}",
        report()
    );
    let (api, seen) = stub_tracker(
        r#"{"total_count": 1, "items": [{"number": 1234, "title": "IsNaN on f64 fails", "state": "open", "html_url": "https://github.com/sonos/tract/issues/1234"}]}"#,
    );
    let o = mg(&[
        "report",
        out.to_str().unwrap(),
        "--known-upstream",
        "--tracker-api",
        &api,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert!(
        requests[0]
            .starts_with("GET /search/issues?q=repo%3Asonos%2Ftract%20is%3Aissue%20IsNaN%20"),
        "{requests:?}"
    );
    let md = report();
    assert!(
        md.contains(
            "- [#1234](https://github.com/sonos/tract/issues/1234) IsNaN on f64 fails (open)"
        ),
        "{md}"
    );
    let meta: serde_json::Value =
        serde_json::from_slice(&fs::read(bundle.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["upstream"]["issues"][0]["number"], 1234);
    // Without network (nothing listens there): the report says the search failed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let o = mg(&[
        "report",
        out.to_str().unwrap(),
        "--known-upstream",
        "--tracker-api",
        &format!("http://{closed}"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(report().contains("could not be made"), "{}", report());
}
