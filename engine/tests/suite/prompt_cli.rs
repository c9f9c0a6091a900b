//! `mutagraph prompt transfer | generate | oracle | clusters | render` through the binary,
//! against the std-only OpenAI-compatible stub server with scripted replies.
use mutagraph_prompts::llm::stub::{RecordedRequest, StubReply, StubServer};
use std::path::PathBuf;
use std::process::{Command, Output};

fn snippets() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../prompts/data/snippets")
}

fn mg(server: &StubServer, args: &[&str]) -> Output {
    crate::common::mg_prompt(server, None, args)
}

const SOFTMAX: &str = "<ir_version: 8, opset_import: [\"\" : 17]>\nt (float[1,3] X) => (float[1,3] Y) {\n  Y = Softmax <axis = -1> (X)\n}";
const CLIP: &str = "<ir_version: 8, opset_import: [\"\" : 17]>\nt (float[3] X) => (float[3] Y)\n<float lo = {-1.0}, float hi = {1.0}>\n{\n  Y = Clip (X, lo, hi)\n}";

fn body(r: &RecordedRequest) -> String {
    r.body.clone()
}

#[test]
fn transfer_screens_repairs_and_reports() {
    // Softmax: a good graph at once. Clamp: broken text first, then the repair.
    let server = StubServer::start_fn(|r| {
        let b = body(r);
        if b.contains("attempt 1") {
            StubReply::Answer(format!("Fixed:\n```onnx\n{CLIP}\n```"))
        } else if b.contains("torch.clamp") {
            StubReply::Answer(
                "```onnx\nt (float[3] X) => (float[3] Y) {\n  Y = Clip(X,\n}\n```".into(),
            )
        } else {
            StubReply::Answer(format!("```onnx\n{SOFTMAX}\n```"))
        }
    })
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = snippets();
    let o = mg(
        &server,
        &[
            "transfer",
            dir.join("01-softmax-large.py").to_str().unwrap(),
            dir.join("15-clamp-nan.py").to_str().unwrap(),
            dir.join("28-tf-unsupported.py").to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("28-tf-unsupported.py"), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("transfer-report.json")).unwrap(),
    )
    .unwrap();
    let m = &report["metrics"];
    assert_eq!(m["cases"], 3, "{m}");
    assert_eq!(m["screened_out"], 1, "{m}");
    assert_eq!(m["sent"], 2, "{m}");
    assert_eq!(m["outputs"], 3, "two first answers and one repair: {m}");
    // Each count with its denominator: every output, and per case the first answer and the
    // answer after repairs (the clamp snippet's first answer does not parse).
    let count = |path: &str, what: &str| {
        let r = &m[path.split('.').next().unwrap()];
        let r = path.split('.').skip(1).fold(r, |v, k| &v[k]);
        (r["n"].as_u64().unwrap(), r[what]["count"].as_u64().unwrap())
    };
    assert_eq!(count("per_output", "syntactically_valid"), (3, 2), "{m}");
    assert_eq!(count("per_output", "valid"), (3, 2), "{m}");
    assert_eq!(
        count("per_output", "functionality_preserving"),
        (3, 2),
        "{m}"
    );
    let first = "per_case.first_answer";
    assert_eq!(count(first, "syntactically_valid"), (2, 1), "{m}");
    assert_eq!(count(first, "functionality_preserving"), (2, 1), "{m}");
    let after = "per_case.after_repairs";
    assert_eq!(count(after, "syntactically_valid"), (2, 2), "{m}");
    assert_eq!(count(after, "valid"), (2, 2), "{m}");
    assert_eq!(count(after, "functionality_preserving"), (2, 2), "{m}");
    assert!(m["per_output"].get("relevant").is_none(), "{m}");
    assert_eq!(m["per_output"]["valid"]["rate"].as_f64(), Some(2.0 / 3.0));
    // The summary table names the counts and the denominators.
    assert!(
        stdout.contains("cases, after repairs") && stdout.contains("functionality-preserving"),
        "{stdout}"
    );
    assert_eq!(report["llm"], "http:stub");
    // The repair request carried the parser's position.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let repair = reqs.iter().find(|r| r.body.contains("attempt 1")).unwrap();
    assert!(
        repair.body.contains("2:") || repair.body.contains("3:"),
        "line:column in {}",
        repair.body
    );
    // The softmax graph is valid everywhere (a stable softmax on small inputs).
    let cases = report["cases"].as_array().unwrap();
    let softmax = cases
        .iter()
        .find(|c| c["case"] == "crossprobe:01-softmax-large.py")
        .unwrap();
    let last = softmax["result"]["rounds"]
        .as_array()
        .unwrap()
        .last()
        .unwrap();
    assert_ne!(last["judged"]["class"], "syntax");
    // Every request carried its snippet's grammar (llama.cpp's `grammar` field): the aligned
    // op and the snippet's trigger values (1000.0 for softmax, NaN for clamp).
    for r in &reqs {
        let j = r.json.as_ref().unwrap();
        let g = j["grammar"].as_str().expect("a grammar in every request");
        assert!(g.starts_with("root ::="), "{g}");
        let user = j["messages"][1]["content"].as_str().unwrap();
        if user.contains("torch.clamp") {
            assert!(g.contains("Clip") && g.contains("nan"), "{g}");
        } else {
            assert!(g.contains("Softmax") && g.contains("1000.0"), "{g}");
        }
    }
    assert_eq!(softmax["grammar_ops"], serde_json::json!(["Softmax"]));
}

#[test]
fn render_shows_a_cases_grammar() {
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["prompt", "render", "transfer", "--grammar"])
        .arg(snippets().join("15-clamp-nan.py"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.starts_with("# ops: Clip\n"), "{stdout}");
    assert!(
        stdout.contains("root ::= ") && stdout.contains("nan"),
        "{stdout}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["prompt", "render", "generate", "--grammar", "--index", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("root ::= "));
}

#[test]
fn generate_and_clusters() {
    let server =
        StubServer::start_fn(|_| StubReply::Answer(format!("```onnx\n{SOFTMAX}\n```"))).unwrap();
    let o = mg(&server, &["clusters"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("clusters at threshold 6"), "{text}");
    assert!(text.contains("c-ker-03"), "{text}");

    let out = tempfile::tempdir().unwrap();
    let o = mg(
        &server,
        &[
            "generate",
            "--cluster",
            "c-ker-03",
            "-n",
            "2",
            "--out",
            out.path().to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("generate-report.json")).unwrap(),
    )
    .unwrap();
    let m = &report["metrics"];
    assert_eq!(m["cases"], 2);
    let after = &m["per_case"]["after_repairs"];
    assert_eq!(after["n"], 2, "{m}");
    assert_eq!(after["syntactically_valid"]["count"], 2, "{m}");
    // c-ker-03 holds Softmax: the generated graph is valid and keeps the cluster's op, the
    // duplicate too (the first one ran).
    assert_eq!(after["relevant"]["count"], 2, "{m}");
    assert_eq!(m["per_output"]["relevant"]["count"], 2, "{m}");
    assert!(after.get("functionality_preserving").is_none(), "{m}");
    // The second generation judged the same graph: a duplicate.
    assert_eq!(m["final_classes"]["duplicate"], 1, "{m}");
    let seeds: Vec<u64> = server
        .requests()
        .iter()
        .map(|r| r.field("seed").and_then(|s| s.as_u64()).unwrap())
        .collect();
    assert_eq!(seeds, vec![0, 100]);
    assert!(server.requests()[0].body.contains("### Example"));

    let o = mg(&server, &["generate", "--cluster", "c-nope"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no cluster 'c-nope'"));
}

/// Needs Python 3 with `pip install onnx` (`.ci/setup` installs it): the specification is
/// read from the onnx package.
#[test]
fn oracle_votes_on_a_case_file() {
    let answer = "{\"result\": [[0.5, 0.5]], \"score\": 0.9, \"final\": \"ort\", \"explanation\": \"stable softmax\"}";
    let server = StubServer::start_fn(move |_| StubReply::Answer(answer.into())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("case.json");
    std::fs::write(
        &case,
        serde_json::json!({
            "op": "Softmax", "opset": 17, "model": SOFTMAX,
            "inputs": [["X", "float[1,2] [1000, 1000]"]],
            "outputs": [["ort", "[0.5, 0.5]"], ["burn-ndarray", "[nan, nan]"]]
        })
        .to_string(),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args([
            "prompt",
            "--provider",
            "http",
            "--base-url",
            &server.base_url(),
            "--model",
            "stub",
            "oracle",
            case.to_str().unwrap(),
            "-k",
            "3",
        ])
        .env("XDG_CACHE_HOME", dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr} (needs `pip install onnx`)");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"]["decision"]["decided"], "ort", "{v}");
    assert_eq!(v["verdict"]["confidence"], 1.0);
    assert_eq!(server.requests().len(), 3);
    assert!(
        dir.path()
            .join("mutagraph/onnx-spec/ai.onnx-Softmax-17.json")
            .is_file()
    );
    // A bad case file is named in the error.
    std::fs::write(&case, "{}").unwrap();
    let o = mg(&server, &["oracle", case.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("case.json"));
}
