//! A bug bundle's REPORT.md as `bundle::ReportSpec` renders it: every section, the optional
//! ones left out, Markdown in text escaped, only safe upstream links.
use mutagraph_oracles::bundle::*;

fn full_report() -> ReportSpec {
    ReportSpec {
        title: "tract: Conv gives wrong values (pads=[1, 1, 1, 1])".into(),
        summary: "tract returns values that differ from ONNX's definition beyond rounding.".into(),
        facts: vec![
            ("Library".into(), "tract 0.23.9".into()),
            (
                "Configurations".into(),
                "tract: shows it; tract-opt: correct".into(),
            ),
        ],
        spec: vec!["Conv, as defined at opset 17".into()],
        snippet: Some(("python".into(), "import numpy as np\nprint(1)".into())),
        values: vec![ShownValue {
            role: "input".into(),
            name: "x".into(),
            ty: "f32[1, 1, 4, 4]".into(),
            text: "[1, 2]".into(),
        }],
        environment: vec![("OS".into(), "Linux x86_64".into())],
        others: vec![BackendStatus {
            name: "ort".into(),
            version: "1.22.0".into(),
            status: "runs it | fine".into(),
        }],
        model: ModelDescription {
            file: "minimized.onnx".into(),
            opset: "17".into(),
            inputs: vec![ValueLine {
                name: "x".into(),
                ty: "float32[1, 1, 4, 4]".into(),
            }],
            outputs: vec![ValueLine {
                name: "conv_1".into(),
                ty: "float32[1, 1, 4, 4]".into(),
            }],
            nodes: vec![NodeLine {
                op_type: "Conv".into(),
                inputs: vec!["x".into(), "w".into()],
                outputs: vec!["conv_1".into()],
                attributes: "kernel_shape=[3, 3], pads=[1, 1, 1, 1]".into(),
            }],
        },
        comparisons: vec![Comparison {
            output: "a|b".into(),
            expected: "[0] 1.0 | more".into(),
            actual: "[0] 9.0".into(),
            max_abs: Some(7.0),
            wrong: Some((1, 2)),
        }],
        error: Some("thread panicked at ```src/x.rs```".into()),
        steps: vec![(
            "With tract's Python package".into(),
            "pip install tract numpy onnx\npython repro.py".into(),
        )],
        provenance: Some(Provenance {
            seed: "resnet_block".into(),
            derived: None,
            iteration: 1234,
            operators: vec!["LMerge".into(), "CShape".into()],
            hits: 7,
            first_seen: "iteration 1234".into(),
            last_seen: "iteration 5000".into(),
            variants: vec![("tract".into(), 7)],
            ops: vec![],
        }),
        minimization: Some(Minimization {
            nodes_before: 40,
            nodes_after: 1,
        }),
        upstream: Upstream::Searched {
            query: "repo:sonos/tract is:issue Conv in:title".into(),
            issues: vec![
                (
                    12,
                    "Conv with pads <wrong>".into(),
                    "open".into(),
                    "https://github.com/sonos/tract/issues/12".into(),
                ),
                (
                    13,
                    "odd".into(),
                    "closed".into(),
                    "javascript:alert(1)".into(),
                ),
            ],
        },
    }
}

#[test]
fn the_upstream_section_links_only_safe_addresses() {
    let md = render_report_md(&full_report());
    assert!(md.contains("## Possibly known upstream\n"), "{md}");
    assert!(
        md.contains(
            "- [#12](https://github.com/sonos/tract/issues/12) Conv with pads \\<wrong> (open)\n"
        ),
        "{md}"
    );
    assert!(md.contains("- #13 odd (closed)\n"), "{md}");
    let mut spec = full_report();
    spec.upstream = Upstream::NotChecked;
    assert!(
        render_report_md(&spec).contains("Not checked: searching"),
        "not checked"
    );
}

#[test]
fn report_renders_every_section() {
    let md = render_report_md(&full_report());
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(
        headings,
        [
            "# tract: Conv gives wrong values (pads=[1, 1, 1, 1])",
            "## What the ONNX specification says",
            "## Reproduce in a few lines",
            "## Expected vs actual",
            "## Error",
            "## The model",
            "## Steps to reproduce (with this bundle's files)",
            "## Environment",
            "## Other libraries on the same model and inputs",
            "## Possibly known upstream",
            "## How it was found",
        ]
    );
    assert!(md.contains("- Library: tract 0.23.9"), "{md}");
    assert!(
        md.contains("conv_1 = Conv(x, w)  {kernel_shape=[3, 3], pads=[1, 1, 1, 1]}"),
        "{md}"
    );
    assert!(md.contains("input  x: float32[1, 1, 4, 4]"), "{md}");
    assert!(
        md.contains("| `a\\|b` | [0] 1.0 \\| more | [0] 9.0 | 1 of 2 | 7.000e0 |"),
        "{md}"
    );
    assert!(md.contains("| `ort` | 1.22.0 | runs it \\| fine |"), "{md}");
    // Every table row has the header's number of unescaped cell separators.
    for line in md.lines().filter(|l| l.starts_with('|')) {
        let cells = line.replace("\\|", "").matches('|').count();
        assert!(cells == 4 || cells == 6, "{line}");
    }
    assert!(
        md.contains("   ```sh\n   pip install tract numpy onnx\n   python repro.py\n   ```"),
        "{md}"
    );
    // The error text holds ``` so its fence is longer.
    assert!(
        md.contains("````text\nthread panicked at ```src/x.rs```\n````"),
        "{md}"
    );
    assert!(md.contains("minimized from 40 nodes"), "{md}");
    assert!(
        md.contains("after the mutations `LMerge`, `CShape`"),
        "{md}"
    );
    assert!(md.contains("- Hits: 7"), "{md}");
}

#[test]
fn report_omits_optional_sections() {
    let mut spec = full_report();
    spec.comparisons.clear();
    spec.error = None;
    spec.minimization = None;
    spec.provenance = None;
    spec.snippet = None;
    spec.others.clear();
    let md = render_report_md(&spec);
    for absent in [
        "## Expected vs actual",
        "## Error",
        "## How it was found",
        "## Reproduce in a few lines",
        "## Other libraries",
        "minimized from",
    ] {
        assert!(!md.contains(absent), "{absent} in\n{md}");
    }
    for present in ["## The model", "## Environment", "## Steps to reproduce"] {
        assert!(md.contains(present), "{present} missing in\n{md}");
    }
}

#[test]
fn report_escapes_markdown_in_text() {
    let mut spec = full_report();
    spec.title = "Op<T> *fails* on [x] | y".into();
    spec.summary = "a_b\nsecond".into();
    let md = render_report_md(&spec);
    assert!(
        md.starts_with("# Op\\<T> \\*fails\\* on [x] \\| y\n"),
        "{md}"
    );
    spec.title = "see [here](http://x)".into();
    assert!(render_report_md(&spec).starts_with("# see \\[here](http://x)\n"));
    assert!(md.contains("a\\_b second"), "{md}");
}
