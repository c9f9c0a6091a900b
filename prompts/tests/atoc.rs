//! ATOC: answer parsing, the confidence vote, the oracle prompt, the specification read from
//! the installed `onnx` package (and its cache), and k requests against the stub server.
use mutagraph_prompts::atoc::eval::{self, Asking, Labelled};
use mutagraph_prompts::atoc::{
    self, ACCEPT, AskError, Case, Decision, FixedSpecs, OpSpecText, SpecCache, SpecError,
    SpecSource, answer_schema, parse_answer, read_score, vote,
};
use mutagraph_prompts::llm::stub::{StubReply, StubServer};
use mutagraph_prompts::llm::{HttpLlm, LlmConfig, Provider};
use std::path::PathBuf;

fn fake_spec() -> OpSpecText {
    // Written for this test; not ONNX's text.
    serde_json::from_value(serde_json::json!({
        "op": "Softmax", "domain": "", "opset": 17, "since_version": 13,
        "onnx_version": "test",
        "doc": "TEST-DOC: exp of each element over the sum of exps along `axis`.",
        "attributes": [{"name": "axis", "type": "int", "required": false, "default": -1}],
        "inputs": [{"name": "input", "type_str": "T", "option": "single"}],
        "outputs": [{"name": "output", "type_str": "T", "option": "single"}],
        "type_constraints": [{"param": "T", "allowed": ["tensor(float)", "tensor(double)"]}]
    }))
    .unwrap()
}

fn case() -> Case {
    Case {
        op: "Softmax".into(),
        domain: String::new(),
        opset: 17,
        model: "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1,2] X) => (float[1,2] Y) {\n  Y = Softmax <axis = -1> (X)\n}".into(),
        inputs: vec![("X".into(), "float[1,2] [[1000.0, 1000.0]]".into())],
        outputs: vec![
            ("ort".into(), "Y = [[0.5, 0.5]]".into()),
            ("burn-ndarray".into(), "Y = [[nan, nan]]".into()),
        ],
        question: String::new(),
    }
}

fn answer(fin: &str) -> String {
    format!(
        "```json\n{{\"result\": [[0.5, 0.5]], \"score\": 0.8, \"final\": \"{fin}\", \"explanation\": \"x\"}}\n```"
    )
}

#[test]
fn parses_answer_shapes() {
    let a = parse_answer(&answer("ORT")).unwrap();
    assert_eq!(a.final_, "ort");
    // 0.8 can only be a 0-1 score: read as 80 of 100.
    assert!((a.score - 80.0).abs() < 1e-9, "{}", a.score);
    assert_eq!(a.result, serde_json::json!([[0.5, 0.5]]));
    // Bare object.
    let a = parse_answer(r#"{"result": "error", "score": 1, "final": "error-expected", "explanation": "axis out of range"}"#).unwrap();
    assert_eq!(a.final_, "error-expected");
    assert_eq!(a.explanation, "axis out of range");
    // Prose around, braces inside strings.
    let a = parse_answer(
        "Let me think. The sum {is} 1.\nAnswer: {\"final\": \" Burn-NdArray. \", \"explanation\": \"a {b} c\"} Done.",
    );
    // The first balanced object is `{is}`, which is not JSON: the answer is refused rather
    // than misread.
    assert!(a.is_err());
    let a = parse_answer(
        "Answer: {\"final\": \" Burn-NdArray. \", \"explanation\": \"a {b} c\", \"score\": \"0.5\"} Done.",
    )
    .unwrap();
    assert_eq!(a.final_, "burn-ndarray");
    assert_eq!(a.score, 50.0);
    assert_eq!(a.explanation, "a {b} c");
    // Single quotes and a trailing comma.
    let a = parse_answer("{'result': [1, 2,], 'final': 'all-wrong', 'explanation': \"it's\",}")
        .unwrap();
    assert_eq!(a.final_, "all-wrong");
    assert_eq!(a.result, serde_json::json!([1, 2]));
    // Failures.
    assert!(parse_answer("no json here").is_err());
    assert!(parse_answer("{\"result\": 1}").is_err(), "no final");
    assert!(parse_answer("{\"final\": \"  \"}").is_err(), "empty final");
    assert!(parse_answer("{\"final\": \"ort\"").is_err(), "unbalanced");
}

fn votes(spec: &[&str], failures: usize) -> Vec<Result<atoc::Answer, String>> {
    let mut v: Vec<Result<atoc::Answer, String>> = spec
        .iter()
        .map(|f| parse_answer(&answer(f)).map_err(|e| e.to_string()))
        .collect();
    v.extend((0..failures).map(|_| Err("timeout".to_string())));
    v
}

#[test]
fn confidence_vote() {
    assert_eq!(ACCEPT, 0.9);
    let v = vote(&votes(&["ort"; 10], 0));
    assert_eq!(v.decision, Decision::Decided("ort".into()));
    assert_eq!(v.confidence, 1.0);
    let mut nine = vec!["ort"; 9];
    nine.push("burn-ndarray");
    let v = vote(&votes(&nine, 0));
    assert_eq!(v.decision, Decision::Decided("ort".into()));
    assert!((v.confidence - 0.9).abs() < 1e-12);
    assert_eq!(v.votes["burn-ndarray"], 1);
    let mut eight = vec!["ort"; 8];
    eight.extend(["all-wrong", "all-wrong"]);
    let v = vote(&votes(&eight, 0));
    assert_eq!(v.decision, Decision::Unknown);
    assert!((v.confidence - 0.8).abs() < 1e-12);
    assert_eq!(v.leader.as_deref(), Some("ort"));
    // Failures count in k and never win: 9 agreeing + 1 failure is still 0.9; 8 + 2 is not.
    let v = vote(&votes(&["tract"; 9], 1));
    assert_eq!(v.decision, Decision::Decided("tract".into()));
    assert_eq!((v.k, v.failed), (10, 1));
    let v = vote(&votes(&["tract"; 8], 2));
    assert_eq!(v.decision, Decision::Unknown);
    // All failed.
    let v = vote(&votes(&[], 3));
    assert_eq!(
        (v.decision, v.confidence, v.leader),
        (Decision::Unknown, 0.0, None)
    );
    // A tie.
    let v = vote(&votes(&["ort", "tract"], 0));
    assert_eq!(v.decision, Decision::Unknown);
    assert_eq!(v.confidence, 0.5);
    // Case and punctuation do not split the vote.
    let v = vote(&votes(&["ORT", "ort.", " Ort "], 0));
    assert_eq!(v.decision, Decision::Decided("ort".into()));
}

fn golden(name: &str, text: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to write it)",
            path.display()
        )
    });
    assert_eq!(
        text,
        want,
        "{} differs (UPDATE_GOLDEN=1 rewrites it)",
        path.display()
    );
}

#[test]
fn oracle_prompt_golden() {
    let msgs = atoc::oracle_prompt(&fake_spec(), &case()).unwrap();
    assert_eq!(msgs.len(), 2);
    let text = format!("{}\n-----\n{}", msgs[0].content, msgs[1].content);
    assert!(text.contains("TEST-DOC"));
    assert!(text.contains("- axis (int), default -1"));
    assert!(text.contains("- burn-ndarray: Y = [[nan, nan]]"));
    assert!(text.contains("ort, burn-ndarray, all-wrong, error-expected"));
    assert!(text.contains("Which implementation computes Softmax correctly"));
    assert!(text.contains("an integer from 0 to 100"), "v2 asks 0-100");
    assert_eq!(
        atoc::oracle_request(&fake_spec(), &case(), 0, 0.7)
            .unwrap()
            .template
            .as_deref(),
        Some("atoc-oracle.v2")
    );
    golden("atoc-oracle.txt", &text);
}

#[test]
fn fixed_specs_pick_the_version_in_force() {
    let mut old = fake_spec();
    old.since_version = 1;
    old.doc = "OLD".into();
    let specs = FixedSpecs(vec![old, fake_spec()]);
    assert_eq!(specs.spec("", "Softmax", 12).unwrap().doc, "OLD");
    assert_eq!(specs.spec("", "Softmax", 17).unwrap().since_version, 13);
    assert!(matches!(
        specs.spec("", "Relu", 17),
        Err(SpecError::UnknownOp(_))
    ));
}

/// Needs Python 3 with `pip install onnx` (`.ci/setup` installs it).
#[test]
fn reads_the_installed_onnx_schema_and_caches_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = SpecCache::new(dir.path()).with_python("python3");
    let s = match cache.spec("", "Softmax", 17) {
        Ok(s) => s,
        Err(e) => panic!("{e} — run `pip install onnx` (bash .ci/setup installs it)"),
    };
    assert_eq!(s.op, "Softmax");
    assert_eq!(s.since_version, 13);
    assert!(s.doc.len() > 100, "the doc text is read");
    let axis = s.attributes.iter().find(|a| a.name == "axis").unwrap();
    assert_eq!(axis.kind, "int");
    assert_eq!(axis.default, Some(serde_json::json!(-1)));
    assert!(
        s.type_constraints[0]
            .allowed
            .contains(&"tensor(float)".to_string())
    );
    let file = cache.file("", "Softmax", 17);
    assert!(file.is_file(), "{} is written", file.display());
    // The second read comes from the cache: no Python needed.
    let offline = SpecCache::new(dir.path()).with_python("/nonexistent/python3");
    assert_eq!(offline.spec("", "Softmax", 17).unwrap(), s);
    // Not cached and no Python: a message saying what to install.
    let e = offline.spec("", "Relu", 17).unwrap_err();
    assert!(matches!(e, SpecError::NoPython { .. }));
    assert!(e.to_string().contains("pip install onnx"), "{e}");
    // Unknown op.
    let e = cache.spec("", "NoSuchOp", 17).unwrap_err();
    assert!(matches!(e, SpecError::UnknownOp(_)), "{e}");
    assert!(e.to_string().contains("NoSuchOp"));
}

#[test]
fn ask_votes_over_k_seeded_requests() {
    let replies = vec![
        StubReply::Answer(answer("ort")),
        StubReply::Answer(format!("Sure!\n{}", answer("ort"))),
        StubReply::Answer(answer("ort")),
        StubReply::Answer(answer("ort")),
        StubReply::Answer(answer("ort")),
    ];
    let server = StubServer::start(replies).unwrap();
    let config = LlmConfig {
        provider: Provider::Http,
        base_url: server.base_url(),
        model: "test-model".into(),
        timeout_secs: 5.0,
        retries: 0,
        backoff_ms: 1,
        ..LlmConfig::default()
    };
    let llm = HttpLlm::new(&config, None).unwrap();
    let asked = atoc::ask(&llm, &fake_spec(), &case(), 5, 40, 0.8).unwrap();
    assert_eq!(asked.verdict.decision, Decision::Decided("ort".into()));
    assert_eq!(asked.verdict.confidence, 1.0);
    assert_eq!(asked.answers.len(), 5);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    let seeds: Vec<u64> = reqs
        .iter()
        .map(|r| r.field("seed").and_then(|s| s.as_u64()).unwrap())
        .collect();
    assert_eq!(seeds, vec![40, 41, 42, 43, 44]);
    let body = &reqs[0].body;
    assert!(
        body.contains("TEST-DOC"),
        "the specification reaches the prompt"
    );
    assert!(body.contains("1000.0"), "the inputs reach the prompt");

    // A split vote: 3 of 5 is 0.6, unknown; an unparsable answer and a server error count.
    let server = StubServer::start(vec![
        StubReply::Answer(answer("ort")),
        StubReply::Answer(answer("burn-ndarray")),
        StubReply::Answer("I am not sure.".into()),
        StubReply::Status(500, "boom".into()),
        StubReply::Answer(answer("ort")),
    ])
    .unwrap();
    let config = LlmConfig {
        base_url: server.base_url(),
        ..config
    };
    let llm = HttpLlm::new(&config, None).unwrap();
    let asked = atoc::ask(&llm, &fake_spec(), &case(), 5, 0, 0.8).unwrap();
    assert_eq!(asked.verdict.decision, Decision::Unknown);
    assert_eq!(asked.verdict.failed, 2);
    assert!(
        (asked.verdict.confidence - 0.4).abs() < 1e-12,
        "{:?}",
        asked.verdict
    );
    assert!(asked.answers[3].starts_with("error: "));
}

#[test]
fn scores_are_read_on_0_to_100() {
    use serde_json::json;
    // The 0-100 scale, as written.
    assert_eq!(read_score(&json!(85)), 85.0);
    assert_eq!(read_score(&json!(100)), 100.0);
    assert_eq!(read_score(&json!("85")), 85.0);
    assert_eq!(read_score(&json!("85 %")), 85.0);
    assert_eq!(read_score(&json!(42.5)), 42.5);
    // Strictly between 0 and 1: an old 0-1 answer, scaled.
    assert!((read_score(&json!(0.85)) - 85.0).abs() < 1e-9);
    assert!((read_score(&json!("0.5")) - 50.0).abs() < 1e-9);
    // 0 and 1 hold on both scales: read as written.
    assert_eq!(read_score(&json!(0)), 0.0);
    assert_eq!(read_score(&json!(1)), 1.0);
    assert_eq!(read_score(&json!(1.0)), 1.0);
    // Out of range: clamped; not a number: 0.
    assert_eq!(read_score(&json!(250)), 100.0);
    assert_eq!(read_score(&json!(-3)), 0.0);
    assert_eq!(read_score(&json!("high")), 0.0);
    assert_eq!(read_score(&json!(null)), 0.0);
    let a = parse_answer(r#"{"final": "ort", "score": 95}"#).unwrap();
    assert_eq!(a.score, 95.0);
    let a = parse_answer(r#"{"final": "ort"}"#).unwrap();
    assert_eq!(a.score, 0.0);
}

#[test]
fn answer_schema_draws_final_from_the_choices() {
    let c = case();
    let s = answer_schema(&c);
    assert_eq!(s["type"], "object");
    assert_eq!(s["additionalProperties"], false);
    let order = serde_json::json!(["result", "score", "final", "explanation"]);
    assert_eq!(s["required"], order);
    assert_eq!(s["propertyOrdering"], order);
    let p = &s["properties"];
    assert_eq!(p.as_object().unwrap().len(), 4);
    assert_eq!(
        p["final"],
        serde_json::json!({"type": "string", "enum": ["ort", "burn-ndarray", "all-wrong", "error-expected"]})
    );
    assert_eq!(p["final"]["enum"], serde_json::json!(c.choices()));
    assert_eq!(p["score"]["type"], "integer");
    assert_eq!(
        (
            p["score"]["minimum"].as_u64(),
            p["score"]["maximum"].as_u64()
        ),
        (Some(0), Some(100))
    );
    assert_eq!(p["explanation"]["type"], "string");
    assert_eq!(p["explanation"]["maxLength"], 300);
    let result = p["result"]["anyOf"].as_array().unwrap();
    assert_eq!(
        result[0],
        serde_json::json!({"type": "string", "enum": ["error"]})
    );
    assert_eq!(result[1]["type"], "array");
    assert_eq!(result[1]["maxItems"], 12);
    assert_eq!(result[1]["items"]["type"], "number");
    // Another case, other backends: other choices.
    let mut other = case();
    other.outputs = vec![("tract".into(), "[1]".into())];
    assert_eq!(
        answer_schema(&other)["properties"]["final"]["enum"],
        serde_json::json!(["tract", "all-wrong", "error-expected"])
    );
    // An answer that follows the schema parses, with its values.
    let a = parse_answer(
        r#"{"result": [[0.5, 0.5]], "score": 90, "final": "ort", "explanation": "stable"}"#,
    )
    .unwrap();
    assert_eq!((a.final_.as_str(), a.score), ("ort", 90.0));
}

#[test]
fn ask_refuses_k_answers_at_temperature_zero() {
    // Nothing is served: a refusal must not ask.
    let server = StubServer::start(vec![]).unwrap();
    let config = LlmConfig {
        provider: Provider::Http,
        base_url: server.base_url(),
        model: "test-model".into(),
        timeout_secs: 5.0,
        retries: 0,
        backoff_ms: 1,
        ..LlmConfig::default()
    };
    let llm = HttpLlm::new(&config, None).unwrap();
    for t in [0.0, -1.0, f32::NAN] {
        let e = atoc::ask(&llm, &fake_spec(), &case(), 5, 0, t).unwrap_err();
        assert!(matches!(e, AskError::Deterministic { k: 5, .. }), "{e}");
        assert!(e.to_string().contains("temperature"), "{e}");
    }
    assert_eq!(server.requests().len(), 0);
    let e = eval::evaluate(
        &llm,
        &FixedSpecs(vec![fake_spec()]),
        &[],
        Asking {
            k: 3,
            seed: 0,
            temperature: 0.0,
        },
        &|s| s.clone(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            eval::EvalError::Ask(AskError::Deterministic { k: 3, .. })
        ),
        "{e}"
    );
    // One answer at temperature 0 is fine.
    let server = StubServer::start(vec![StubReply::Answer(answer("ort"))]).unwrap();
    let config = LlmConfig {
        base_url: server.base_url(),
        ..config
    };
    let llm = HttpLlm::new(&config, None).unwrap();
    let asked = atoc::ask(&llm, &fake_spec(), &case(), 1, 0, 0.0).unwrap();
    assert_eq!(asked.verdict.decision, Decision::Decided("ort".into()));
    assert_eq!(asked.request_errors, 0);
}

#[test]
fn brief_spec_stops_at_the_examples() {
    let mut s = fake_spec();
    s.doc =
        "First sentence here. Second sentence is longer than that.\nExample 1:\n```\nx\n```".into();
    let b = s.brief(1000);
    assert_eq!(
        b.doc,
        "First sentence here. Second sentence is longer than that."
    );
    assert!(b.type_constraints.is_empty());
    assert_eq!(b.attributes, s.attributes);
    let b = s.brief(40);
    assert_eq!(b.doc, "First sentence here. ...");
    assert!(!b.to_prompt_text().contains("tensor(double)"));
}

#[test]
fn eval_scores_labelled_cases() {
    // Three cases labelled ort, burn-ndarray, all-wrong. The scripted model answers: case 0
    // ort ×3 (right), case 1 ort, ort, garbage (2/3, unknown), case 2 all-wrong ×2 and one
    // request error (2/3, unknown).
    let labelled = |label: &str| Labelled {
        id: format!("c-{label}"),
        source: "test".into(),
        label: label.into(),
        case: case(),
    };
    let cases = vec![
        labelled("ort"),
        labelled("burn-ndarray"),
        labelled("all-wrong"),
    ];
    let server = StubServer::start(vec![
        StubReply::Answer(answer("ort")),
        StubReply::Answer(answer("ort")),
        StubReply::Answer(answer("ort")),
        StubReply::Answer(answer("ort")),
        StubReply::Answer(answer("ort")),
        StubReply::Answer("no idea".into()),
        StubReply::Answer(answer("all-wrong")),
        StubReply::Status(500, "boom".into()),
        StubReply::Answer(answer("all-wrong")),
    ])
    .unwrap();
    let config = LlmConfig {
        provider: Provider::Http,
        base_url: server.base_url(),
        model: "test-model".into(),
        timeout_secs: 5.0,
        retries: 0,
        backoff_ms: 1,
        ..LlmConfig::default()
    };
    let llm = HttpLlm::new(&config, None).unwrap();
    let mut seen = Vec::new();
    let r = eval::evaluate(
        &llm,
        &FixedSpecs(vec![fake_spec()]),
        &cases,
        Asking {
            k: 3,
            seed: 10,
            temperature: 0.7,
        },
        &|s| s.brief(100),
        &mut |c| seen.push(c.id.clone()),
    )
    .unwrap();
    assert_eq!(seen, vec!["c-ort", "c-burn-ndarray", "c-all-wrong"]);
    let s = &r.summary;
    assert_eq!((s.cases, s.decided, s.correct), (3, 1, 1));
    assert!((s.accuracy - 1.0 / 3.0).abs() < 1e-12);
    assert!((s.decided_share - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(s.accuracy_decided, Some(1.0));
    assert_eq!(
        (s.answers_asked, s.answers_received, s.answers_parsed),
        (9, 8, 7)
    );
    assert!((s.parse_rate.unwrap() - 7.0 / 8.0).abs() < 1e-12);
    assert_eq!(s.answers_in_choices, 7);
    assert_eq!(s.labels["all-wrong"], 1);
    assert!(r.cases[0].correct && !r.cases[1].correct && !r.cases[2].correct);
    assert_eq!(r.cases[1].leader.as_deref(), Some("ort"));
    assert_eq!(r.cases[2].decision, Decision::Unknown);
    // Case i asks with seeds seed + i·k ...
    let seeds: Vec<u64> = server
        .requests()
        .iter()
        .map(|r| r.field("seed").and_then(|s| s.as_u64()).unwrap())
        .collect();
    assert_eq!(seeds, (10..19).collect::<Vec<u64>>());
    // A label outside the choices is refused before asking.
    let e = eval::evaluate(
        &llm,
        &FixedSpecs(vec![fake_spec()]),
        &[labelled("tract")],
        Asking {
            k: 1,
            seed: 0,
            temperature: 0.0,
        },
        &|s| s.clone(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(e, eval::EvalError::Label { .. }), "{e}");
    // Nothing decided: no accuracy among decided; nothing received: no parse rate.
    let none = eval::summarize(&[]);
    assert_eq!(
        (none.accuracy, none.accuracy_decided, none.parse_rate),
        (0.0, None, None)
    );
}
