//! `mutagraph prompt oracle-eval` against the stub server, whose scripted answers imply the
//! accuracy, decided share and parse rate the command must report. Needs the ONNX backend test
//! suite (`apt-get install -y libonnx-testdata`) and Python 3 with `pip install onnx` (the
//! specifications).
use mutagraph_engine::prompt::oracle_eval;
use mutagraph_prompts::llm::stub::{StubReply, StubServer};
use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn labels() -> Vec<String> {
    let cases =
        oracle_eval::cases(&mutagraph_backends::suite::root()).unwrap_or_else(|e| panic!("{e:#}"));
    cases.into_iter().map(|c| c.label).collect()
}

fn mg(server: &StubServer, cache: &Path, args: &[&str]) -> Output {
    crate::common::mg_prompt(server, Some(cache), args)
}

fn answer(fin: &str) -> String {
    format!("{{\"result\": [1], \"score\": 90, \"final\": \"{fin}\", \"explanation\": \"x\"}}")
}

/// A server whose request n gets `reply(n)`.
fn counting(reply: impl Fn(usize) -> String + Send + Sync + 'static) -> StubServer {
    let n = Arc::new(AtomicUsize::new(0));
    StubServer::start_fn(move |_| StubReply::Answer(reply(n.fetch_add(1, Ordering::SeqCst))))
        .unwrap()
}

fn report(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("oracle-eval-report.json")).unwrap())
        .unwrap()
}

fn close(v: &serde_json::Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 1e-6)
}

#[test]
fn oracle_eval_scores_scripted_answers() {
    let labels = labels();
    let n = labels.len();
    assert!(n >= 30, "{n} labelled cases");
    let all_wrong = labels.iter().filter(|l| *l == "all-wrong").count();
    assert!(all_wrong >= 5, "{all_wrong} all-wrong cases");
    let cache = tempfile::tempdir().unwrap();

    // Always the label, k = 3 (temperature 0.7 by default): everything right.
    let k = 3;
    let ls = labels.clone();
    let server = counting(move |i| answer(&ls[i / k]));
    let out = tempfile::tempdir().unwrap();
    let o = mg(
        &server,
        cache.path(),
        &[
            "oracle-eval",
            "-k",
            "3",
            "--out",
            out.path().to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "{stderr} (needs libonnx-testdata and `pip install onnx`)"
    );
    let r = report(out.path());
    let s = &r["summary"];
    assert_eq!(s["cases"], n, "{s}");
    assert!(close(&s["accuracy"], 1.0), "{s}");
    assert!(close(&s["decided_share"], 1.0), "{s}");
    assert!(close(&s["accuracy_decided"], 1.0), "{s}");
    assert!(close(&s["parse_rate"], 1.0), "{s}");
    assert_eq!(s["answers_received"], 3 * n);
    assert_eq!(r["cases"].as_array().unwrap().len(), n);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3 * n);
    for q in &reqs {
        assert!(close(q.field("temperature").unwrap(), 0.7), "{}", q.body);
        let chars: usize = q
            .field("messages")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap().chars().count())
            .sum();
        assert!(chars < 3000, "a prompt of {chars} characters: {}", q.body);
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("accuracy 100.0 %"), "{stdout}");

    // A constant `all-wrong`, one answer each (temperature 0 by default): right exactly on
    // the all-wrong cases, every case decided.
    let server = counting(|_| answer("all-wrong"));
    let o = mg(
        &server,
        cache.path(),
        &[
            "oracle-eval",
            "-k",
            "1",
            "--out",
            out.path().to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = report(out.path());
    let s = &r["summary"];
    let share = all_wrong as f64 / n as f64;
    assert!(close(&s["accuracy"], share), "{s}");
    assert!(close(&s["decided_share"], 1.0), "{s}");
    assert!(close(&s["accuracy_decided"], share), "{s}");
    assert_eq!(s["correct"], all_wrong);
    assert_eq!(server.requests().len(), n);
    assert!(close(
        server.requests()[0].field("temperature").unwrap(),
        0.0
    ));

    // k = 2: the label, then prose without JSON. Half the answers parse, no case reaches
    // 90 %: nothing decided, no accuracy among decided.
    let ls = labels.clone();
    let server = counting(move |i| {
        if i % 2 == 0 {
            answer(&ls[i / 2])
        } else {
            "I think the first one.".into()
        }
    });
    let o = mg(
        &server,
        cache.path(),
        &[
            "--temperature",
            "0.5",
            "oracle-eval",
            "-k",
            "2",
            "--out",
            out.path().to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = report(out.path());
    let s = &r["summary"];
    assert!(close(&s["parse_rate"], 0.5), "{s}");
    assert!(close(&s["decided_share"], 0.0), "{s}");
    assert!(close(&s["accuracy"], 0.0), "{s}");
    assert!(s["accuracy_decided"].is_null(), "{s}");
    assert!(close(&r["cases"][0]["confidence"], 0.5));
    assert_eq!(r["cases"][0]["leader"], labels[0].as_str());
    assert!(close(&r["temperature"], 0.5));

    // k > 1 at temperature 0: refused before anything is asked.
    let server = counting(|_| answer("ort"));
    let o = mg(
        &server,
        cache.path(),
        &["--temperature", "0", "oracle-eval", "-k", "3"],
    );
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("temperature"), "{stderr}");
    assert_eq!(server.requests().len(), 0);

    // --list: the cases and their labels, nothing asked.
    let o = mg(&server, cache.path(), &["oracle-eval", "--list"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(&format!("{n} cases: all-wrong {all_wrong}")),
        "{stdout}"
    );
    assert!(
        stdout.contains("planted/test_softmax_large_number"),
        "{stdout}"
    );
    assert_eq!(server.requests().len(), 0);
}

#[test]
fn oracle_eval_cases_are_deterministic_and_labelled_by_construction() {
    let root = mutagraph_backends::suite::root();
    let a = oracle_eval::cases(&root).unwrap_or_else(|e| panic!("{e:#}"));
    let b = oracle_eval::cases(&root).unwrap();
    assert_eq!(a, b);
    for l in &a {
        assert!(l.case.choices().contains(&l.label), "{}", l.id);
        assert_eq!(l.case.outputs.len(), 2, "{}", l.id);
        let (x, y) = (&l.case.outputs[0].1, &l.case.outputs[1].1);
        assert_ne!(x, y, "{}: the two outputs differ", l.id);
        assert!(
            !l.case.model.contains("test_"),
            "{}: the test's name is hidden",
            l.id
        );
    }
    // The right backend rotates.
    for b in oracle_eval::BACKENDS {
        assert!(a.iter().filter(|l| l.label == b).count() >= 5, "{b}");
    }
    assert!(a.iter().any(|l| l.id.starts_with("planted/")));
}

#[test]
fn oracle_refuses_k_answers_at_temperature_zero() {
    let server = counting(|_| answer("ort"));
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("case.json");
    std::fs::write(
        &case,
        serde_json::json!({
            "op": "Relu", "opset": 17, "model": "m",
            "inputs": [["X", "float[2] [-1, 1]"]],
            "outputs": [["ort", "[0, 1]"], ["tract", "[-1, 1]"]]
        })
        .to_string(),
    )
    .unwrap();
    let o = mg(
        &server,
        dir.path(),
        &[
            "--temperature",
            "0",
            "oracle",
            case.to_str().unwrap(),
            "-k",
            "5",
        ],
    );
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("5 answers at temperature 0"), "{stderr}");
    assert_eq!(server.requests().len(), 0);
}
