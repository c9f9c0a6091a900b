//! The LLM client against the scripted stub server: request bodies, retries, timeouts, decode
//! errors, sample_k, record/replay, the `none` provider and the environment overlay.
use std::collections::HashMap;
use std::time::Duration;

use mutagraph_prompts::llm::stub::{StubReply, StubServer};
use mutagraph_prompts::llm::{
    self, ChatRequest, Constraint, ConstraintStyle, HttpLlm, Llm, LlmConfig, LlmError, Message,
    Provider, ReplayLlm, canonical_request, fnv1a64, request_key,
};

fn http_config(server: &StubServer) -> LlmConfig {
    LlmConfig {
        provider: Provider::Http,
        base_url: server.base_url(),
        model: "test-model".into(),
        timeout_secs: 5.0,
        retries: 2,
        backoff_ms: 1,
        ..LlmConfig::default()
    }
}

fn request() -> ChatRequest {
    let mut req = ChatRequest::new(vec![
        Message::system("You write ONNX graphs."),
        Message::user("Give a graph with one Relu."),
    ]);
    req.temperature = 0.25;
    req.seed = Some(42);
    req.max_tokens = Some(64);
    req.template = Some("test.v1".into());
    req
}

#[test]
fn http_sends_openai_body_and_auth_header() {
    let server = StubServer::start(vec![StubReply::Answer("Y = Relu(X)".into())]).unwrap();
    let llm = HttpLlm::new(&http_config(&server), Some("sekret".into())).unwrap();
    let answer = llm.chat(&request()).unwrap();
    assert_eq!(answer.content, "Y = Relu(X)");
    assert_eq!(answer.model, "test-model");
    // The stub counts words: 4 + 6 in the prompt, 3 in the answer.
    assert_eq!(answer.prompt_tokens, Some(10));
    assert_eq!(answer.completion_tokens, Some(3));

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer sekret"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let body = r.json.as_ref().expect("JSON body");
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][0]["content"], "You write ONNX graphs.");
    assert_eq!(body["messages"][1]["role"], "user");
    assert_eq!(
        body["messages"][1]["content"],
        "Give a graph with one Relu."
    );
    assert_eq!(body["temperature"].as_f64(), Some(0.25));
    assert_eq!(body["seed"].as_u64(), Some(42));
    assert_eq!(body["max_tokens"].as_u64(), Some(64));
    // The template id is ours, not the server's.
    assert!(body.get("template").is_none());
}

fn yes_no() -> Constraint {
    Constraint::Grammar {
        gbnf: "answer ::= \"yes\" | \"no\"\n".into(),
        root: "answer".into(),
    }
}

#[test]
fn http_sends_constraints_in_the_configured_style() {
    let server = StubServer::start(vec![
        StubReply::Answer("yes".into()),
        StubReply::Answer("yes".into()),
        StubReply::Answer("{}".into()),
    ])
    .unwrap();
    let mut req = request();
    req.constraint = Some(yes_no());
    // llama.cpp's server: `grammar`, started from `root`.
    let llm = HttpLlm::new(&http_config(&server), None).unwrap();
    llm.chat(&req).unwrap();
    // vLLM: `structured_outputs.grammar` and the older `guided_grammar`.
    let vllm = LlmConfig {
        constraints: ConstraintStyle::Vllm,
        ..http_config(&server)
    };
    HttpLlm::new(&vllm, None).unwrap().chat(&req).unwrap();
    // A JSON schema goes as `response_format` whatever the server.
    let mut json_req = request();
    json_req.constraint = Some(Constraint::Json {
        schema: serde_json::json!({"type": "object", "properties": {"final": {"enum": ["a", "b"]}}}),
        gbnf: "root ::= \"{}\"\n".into(),
        root: "root".into(),
    });
    llm.chat(&json_req).unwrap();
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let body = |i: usize| reqs[i].json.clone().expect("JSON body");
    assert_eq!(
        body(0)["grammar"],
        "root ::= answer\nanswer ::= \"yes\" | \"no\"\n"
    );
    assert!(body(0).get("guided_grammar").is_none());
    assert_eq!(body(1)["structured_outputs"]["grammar"], body(0)["grammar"]);
    assert_eq!(body(1)["guided_grammar"], body(0)["grammar"]);
    assert!(body(1).get("grammar").is_none());
    assert_eq!(body(2)["response_format"]["type"], "json_schema");
    assert_eq!(
        body(2)["response_format"]["json_schema"]["schema"]["properties"]["final"]["enum"][1],
        "b"
    );
    assert!(body(2).get("grammar").is_none());

    // OpenAI takes no grammar: a configuration error before anything is sent; `off` sends
    // the request unconstrained.
    let openai = LlmConfig {
        constraints: ConstraintStyle::OpenAi,
        ..http_config(&server)
    };
    match HttpLlm::new(&openai, None).unwrap().chat(&req) {
        Err(LlmError::Config(m)) => assert!(m.contains("off"), "{m}"),
        other => panic!("expected a config error, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 3);
    let off = LlmConfig {
        constraints: ConstraintStyle::Off,
        ..http_config(&server)
    };
    let server2 = StubServer::start(vec![StubReply::Answer("maybe".into())]).unwrap();
    let off = LlmConfig {
        base_url: server2.base_url(),
        ..off
    };
    HttpLlm::new(&off, None).unwrap().chat(&req).unwrap();
    let sent = server2.requests()[0].json.clone().unwrap();
    assert!(sent.get("grammar").is_none() && sent.get("response_format").is_none());
}

#[test]
fn http_without_key_sends_no_auth_and_omits_unset_fields() {
    let server = StubServer::start(vec![StubReply::Answer("ok".into())]).unwrap();
    let mut config = http_config(&server);
    config.model = String::new();
    let llm = HttpLlm::new(&config, None).unwrap();
    let req = ChatRequest::new(vec![Message::user("hi")]);
    llm.chat(&req).unwrap();
    let r = &server.requests()[0];
    assert_eq!(r.header("authorization"), None);
    let body = r.json.as_ref().unwrap();
    assert!(body.get("seed").is_none(), "{body}");
    assert!(body.get("max_tokens").is_none(), "{body}");
    assert!(body.get("model").is_none(), "{body}");
    // f32 0.7 goes out as the nearest f64.
    assert!((body["temperature"].as_f64().unwrap() - 0.7).abs() < 1e-6);
}

#[test]
fn connect_applies_config_temperature_seed_and_max_tokens() {
    let server = StubServer::start(vec![
        StubReply::Answer("a".into()),
        StubReply::Answer("b".into()),
    ])
    .unwrap();
    let mut config = http_config(&server);
    config.temperature = Some(0.0);
    config.seed = Some(7);
    config.max_tokens = Some(99);
    let llm = llm::connect(&config).unwrap();
    assert_eq!(llm.name(), "http:test-model");
    // No seed, no limit in the request: the config fills them in and overrides temperature.
    llm.chat(&ChatRequest::new(vec![Message::user("x")]))
        .unwrap();
    // The request's own seed and limit win.
    llm.chat(&request()).unwrap();
    let reqs = server.requests();
    let b0 = reqs[0].json.as_ref().unwrap();
    assert_eq!(b0["temperature"].as_f64(), Some(0.0));
    assert_eq!(b0["seed"].as_u64(), Some(7));
    assert_eq!(b0["max_tokens"].as_u64(), Some(99));
    let b1 = reqs[1].json.as_ref().unwrap();
    assert_eq!(b1["temperature"].as_f64(), Some(0.0));
    assert_eq!(b1["seed"].as_u64(), Some(42));
    assert_eq!(b1["max_tokens"].as_u64(), Some(64));
}

#[test]
fn retries_after_500_then_succeeds() {
    let server = StubServer::start(vec![
        StubReply::Status(500, "boom".into()),
        StubReply::Status(503, "busy".into()),
        StubReply::Answer("third time".into()),
    ])
    .unwrap();
    let llm = HttpLlm::new(&http_config(&server), None).unwrap();
    let answer = llm.chat(&request()).unwrap();
    assert_eq!(answer.content, "third time");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    // Every attempt sends the same body.
    assert!(reqs.iter().all(|r| r.body == reqs[0].body));
}

#[test]
fn retries_after_429() {
    let server = StubServer::start(vec![
        StubReply::Status(429, "slow down".into()),
        StubReply::Answer("fine".into()),
    ])
    .unwrap();
    let llm = HttpLlm::new(&http_config(&server), None).unwrap();
    assert_eq!(llm.chat(&request()).unwrap().content, "fine");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn gives_up_after_the_retries_with_the_last_status() {
    let server = StubServer::start(vec![
        StubReply::Status(500, "one".into()),
        StubReply::Status(500, "two".into()),
        StubReply::Status(502, "three".into()),
        StubReply::Answer("never reached".into()),
    ])
    .unwrap();
    let llm = HttpLlm::new(&http_config(&server), None).unwrap();
    match llm.chat(&request()) {
        Err(LlmError::Status { status, body }) => {
            assert_eq!(status, 502);
            assert_eq!(body, "three");
        }
        other => panic!("expected HTTP 502, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 3);
    assert_eq!(server.remaining(), 1);
}

#[test]
fn no_retry_on_400() {
    let server = StubServer::start(vec![
        StubReply::Status(400, r#"{"error":{"message":"bad model"}}"#.into()),
        StubReply::Answer("must not be fetched".into()),
    ])
    .unwrap();
    let llm = HttpLlm::new(&http_config(&server), None).unwrap();
    match llm.chat(&request()) {
        Err(LlmError::Status { status: 400, body }) => assert!(body.contains("bad model")),
        other => panic!("expected HTTP 400, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
    assert_eq!(server.remaining(), 1);
}

#[test]
fn timeout_with_a_delayed_reply() {
    let server = StubServer::start(vec![StubReply::Delay(
        Duration::from_secs(3),
        "too late".into(),
    )])
    .unwrap();
    let mut config = http_config(&server);
    config.timeout_secs = 0.2;
    config.retries = 0;
    let llm = HttpLlm::new(&config, None).unwrap();
    match llm.chat(&request()) {
        Err(LlmError::Timeout(d)) => assert_eq!(d, Duration::from_millis(200)),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn timeout_is_retried() {
    let server = StubServer::start(vec![
        StubReply::Delay(Duration::from_secs(3), "too late".into()),
        StubReply::Answer("in time".into()),
    ])
    .unwrap();
    let mut config = http_config(&server);
    config.timeout_secs = 0.2;
    config.retries = 1;
    let llm = HttpLlm::new(&config, None).unwrap();
    assert_eq!(llm.chat(&request()).unwrap().content, "in time");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn garbage_body_is_a_decode_error() {
    let server = StubServer::start(vec![
        StubReply::Garbage("<html>not json".into()),
        StubReply::Garbage(r#"{"choices":[]}"#.into()),
        StubReply::Garbage(r#"{"choices":[{"message":{"role":"assistant"}}]}"#.into()),
    ])
    .unwrap();
    let llm = HttpLlm::new(&http_config(&server), None).unwrap();
    for want in ["not json", "choices[0]", "content missing"] {
        match llm.chat(&request()) {
            Err(LlmError::Decode(msg)) => assert!(msg.contains(want), "{want}: {msg}"),
            other => panic!("expected a decode error, got {other:?}"),
        }
    }
    // Decode errors are not retried.
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn connection_refused_is_a_transport_error() {
    let server = StubServer::start(vec![]).unwrap();
    let mut config = http_config(&server);
    drop(server);
    config.retries = 1;
    let llm = HttpLlm::new(&config, None).unwrap();
    match llm.chat(&request()) {
        Err(LlmError::Transport(msg)) => assert!(msg.contains("/chat/completions"), "{msg}"),
        other => panic!("expected a transport error, got {other:?}"),
    }
}

#[test]
fn bad_base_url_is_a_config_error() {
    let config = LlmConfig {
        provider: Provider::Http,
        base_url: "127.0.0.1:8080/v1".into(),
        ..LlmConfig::default()
    };
    match llm::connect(&config) {
        Err(LlmError::Config(msg)) => assert!(msg.contains("http://"), "{msg}"),
        Err(e) => panic!("expected a config error, got {e:?}"),
        Ok(l) => panic!("expected a config error, got provider {}", l.name()),
    }
}

#[test]
fn sample_k_makes_k_requests_with_distinct_seeds() {
    let server = StubServer::start_fn(|r| {
        let seed = r.field("seed").and_then(|s| s.as_u64()).unwrap_or(u64::MAX);
        StubReply::Answer(format!("answer for seed {seed}"))
    })
    .unwrap();
    let llm = HttpLlm::new(&http_config(&server), None).unwrap();
    let mut req = request();
    req.seed = Some(100);
    let answers = llm::sample_k(&llm, &req, 4);
    let texts: Vec<String> = answers.into_iter().map(|a| a.unwrap().content).collect();
    assert_eq!(
        texts,
        [
            "answer for seed 100",
            "answer for seed 101",
            "answer for seed 102",
            "answer for seed 103"
        ]
    );
    let seeds: Vec<u64> = server
        .requests()
        .iter()
        .map(|r| r.field("seed").unwrap().as_u64().unwrap())
        .collect();
    assert_eq!(seeds, [100, 101, 102, 103]);

    // Without a seed the base is 0.
    req.seed = None;
    let answers = llm::sample_k(&llm, &req, 2);
    assert_eq!(answers[1].as_ref().unwrap().content, "answer for seed 1");
    assert_eq!(server.requests().len(), 6);
}

#[test]
fn sample_k_keeps_each_error_in_place() {
    let server = StubServer::start(vec![
        StubReply::Answer("first".into()),
        StubReply::Status(401, "no".into()),
        StubReply::Answer("third".into()),
    ])
    .unwrap();
    let llm = HttpLlm::new(&http_config(&server), None).unwrap();
    let answers = llm::sample_k(&llm, &request(), 3);
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0].as_ref().unwrap().content, "first");
    assert!(matches!(
        answers[1],
        Err(LlmError::Status { status: 401, .. })
    ));
    assert_eq!(answers[2].as_ref().unwrap().content, "third");
}

#[test]
fn record_then_replay_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let rec_dir = dir.path().join("recordings");
    let server = StubServer::start(vec![
        StubReply::Answer("recorded answer one".into()),
        StubReply::Answer("recorded answer two".into()),
    ])
    .unwrap();
    let mut config = http_config(&server);
    config.provider = Provider::Record;
    config.replay_dir = Some(rec_dir.clone());
    let recorder = llm::connect(&config).unwrap();
    assert_eq!(recorder.name(), "record:http:test-model");
    let req1 = request();
    let mut req2 = request();
    req2.seed = Some(43);
    assert_eq!(recorder.chat(&req1).unwrap().content, "recorded answer one");
    assert_eq!(recorder.chat(&req2).unwrap().content, "recorded answer two");
    drop(recorder);
    drop(server);

    // Two files, named by the key, and no temp files left.
    let mut names: Vec<String> = std::fs::read_dir(&rec_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want = vec![
        format!("{}.json", request_key(&req1, "test-model")),
        format!("{}.json", request_key(&req2, "test-model")),
    ];
    want.sort();
    assert_eq!(names, want);

    // The file is readable JSON holding the request (with its template id) and the answer.
    let text = std::fs::read_to_string(rec_dir.join(&want[0])).unwrap();
    assert!(text.contains("\n  \"request\": {"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["format"], "mutagraph-llm-exchange/1");
    assert_eq!(v["request"]["template"], "test.v1");
    assert_eq!(v["provider"], "http:test-model");

    // Replay answers with the server gone.
    config.provider = Provider::Replay;
    let replay = llm::connect(&config).unwrap();
    assert_eq!(replay.chat(&req1).unwrap().content, "recorded answer one");
    let r2 = replay.chat(&req2).unwrap();
    assert_eq!(r2.content, "recorded answer two");
    assert_eq!(r2.model, "test-model");
    assert!(r2.prompt_tokens.is_some());

    // A request never recorded names the file it looked for.
    let mut req3 = request();
    req3.temperature = 0.5;
    let expected = rec_dir.join(format!("{}.json", request_key(&req3, "test-model")));
    match replay.chat(&req3) {
        Err(LlmError::NotRecorded(path)) => assert_eq!(path, expected.display().to_string()),
        other => panic!("expected NotRecorded, got {other:?}"),
    }
    // So does a request under another model name.
    let other_model = ReplayLlm::new(&rec_dir, "other-model");
    assert!(matches!(
        other_model.chat(&req1),
        Err(LlmError::NotRecorded(_))
    ));
}

#[test]
fn record_does_not_write_failed_exchanges() {
    let dir = tempfile::tempdir().unwrap();
    let server = StubServer::start(vec![StubReply::Status(400, "nope".into())]).unwrap();
    let mut config = http_config(&server);
    config.provider = Provider::Record;
    config.replay_dir = Some(dir.path().to_path_buf());
    let recorder = llm::connect(&config).unwrap();
    assert!(matches!(
        recorder.chat(&request()),
        Err(LlmError::Status { status: 400, .. })
    ));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn replay_rejects_a_broken_or_edited_file_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let req = request();
    let replay = ReplayLlm::new(dir.path(), "m");
    let path = replay.path_for(&req);
    std::fs::write(&path, "{ not json").unwrap();
    match replay.chat(&req) {
        Err(LlmError::Recording { path: p, message }) => {
            assert_eq!(p, path.display().to_string());
            assert!(message.contains("not a recording"), "{message}");
        }
        other => panic!("expected a recording error, got {other:?}"),
    }
    // A well-formed file whose request is another one.
    let mut other = req.clone();
    other.messages[1].content = "something else".into();
    let rec = llm::Recording {
        format: "mutagraph-llm-exchange/1".into(),
        key: request_key(&req, "m"),
        model: "m".into(),
        provider: "hand".into(),
        request: other,
        response: llm::ChatResponse {
            content: "x".into(),
            model: "m".into(),
            prompt_tokens: None,
            completion_tokens: None,
        },
    };
    std::fs::write(&path, serde_json::to_string_pretty(&rec).unwrap()).unwrap();
    match replay.chat(&req) {
        Err(LlmError::Recording { message, .. }) => {
            assert!(message.contains("different request"), "{message}")
        }
        other => panic!("expected a recording error, got {other:?}"),
    }
}

#[test]
fn request_key_is_stable_and_sensitive() {
    // FNV-1a 64 reference values.
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);

    let mut req = ChatRequest::new(vec![
        Message::system("sys \"q\"\n"),
        Message::user("héllo\t\\"),
    ]);
    req.temperature = 0.7;
    req.seed = Some(3);
    assert_eq!(
        canonical_request(&req, "m"),
        r#"{"max_tokens":null,"messages":[{"content":"sys \"q\"\n","role":"system"},{"content":"héllo\t\\","role":"user"}],"model":"m","seed":3,"temperature":0.7}"#
    );
    // The canonical text is JSON that parses back to the same values.
    let v: serde_json::Value = serde_json::from_str(&canonical_request(&req, "m")).unwrap();
    assert_eq!(v["messages"][1]["content"], "héllo\t\\");

    let key = request_key(&req, "m");
    assert_eq!(key.len(), 16);
    assert_eq!(
        key,
        format!("{:016x}", fnv1a64(canonical_request(&req, "m").as_bytes()))
    );
    // The template id does not change the key; everything else does.
    let mut t = req.clone();
    t.template = Some("other.v2".into());
    assert_eq!(request_key(&t, "m"), key);
    let variants = {
        let mut v = Vec::new();
        let mut r = req.clone();
        r.temperature = 0.0;
        v.push(request_key(&r, "m"));
        let mut r = req.clone();
        r.seed = Some(4);
        v.push(request_key(&r, "m"));
        let mut r = req.clone();
        r.seed = None;
        v.push(request_key(&r, "m"));
        let mut r = req.clone();
        r.max_tokens = Some(10);
        v.push(request_key(&r, "m"));
        let mut r = req.clone();
        r.messages[0].role = llm::Role::User;
        v.push(request_key(&r, "m"));
        v.push(request_key(&req, "n"));
        let mut r = req.clone();
        r.constraint = Some(yes_no());
        v.push(request_key(&r, "m"));
        let mut r = req.clone();
        r.constraint = Some(Constraint::Grammar {
            gbnf: "root ::= \"yes\"\n".into(),
            root: "root".into(),
        });
        v.push(request_key(&r, "m"));
        v
    };
    // A constraint is the first key of the canonical text; without one the text (and every
    // recording made before constraints existed) is unchanged.
    let mut r = req.clone();
    r.constraint = Some(yes_no());
    assert!(
        canonical_request(&r, "m").starts_with(r#"{"constraint":{"gbnf":"#),
        "{}",
        canonical_request(&r, "m")
    );
    let mut distinct = variants.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), variants.len(), "{variants:?}");
    for k in &variants {
        assert_ne!(*k, key);
    }
}

#[test]
fn none_provider_explains_how_to_configure() {
    let llm = llm::connect(&LlmConfig::default()).unwrap();
    assert_eq!(llm.name(), "none");
    match llm.chat(&request()) {
        Err(LlmError::Disabled(msg)) => {
            for needle in [
                "MUTAGRAPH_LLM_PROVIDER",
                "MUTAGRAPH_LLM_BASE_URL",
                "MUTAGRAPH_LLM_MODEL",
                "MUTAGRAPH_LLM_REPLAY_DIR",
                "http",
                "replay",
                "local",
            ] {
                assert!(msg.contains(needle), "missing {needle}: {msg}");
            }
        }
        other => panic!("expected Disabled, got {other:?}"),
    }
}

#[cfg(not(feature = "local"))]
#[test]
fn local_without_the_feature_says_how_to_build_it() {
    let config = LlmConfig {
        provider: Provider::Local,
        ..LlmConfig::default()
    };
    match llm::connect(&config) {
        Err(LlmError::Disabled(msg)) => assert!(msg.contains("feature `local`"), "{msg}"),
        Err(e) => panic!("expected Disabled, got {e:?}"),
        Ok(l) => panic!("expected Disabled, got provider {}", l.name()),
    }
}

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

#[test]
fn config_from_env() {
    let config = LlmConfig::from_env_with(env(&[
        ("MUTAGRAPH_LLM_PROVIDER", "HTTP"),
        ("MUTAGRAPH_LLM_BASE_URL", "http://10.1.2.3:11434/v1"),
        ("MUTAGRAPH_LLM_MODEL", "qwen2.5-coder:7b"),
        ("MUTAGRAPH_LLM_API_KEY_ENV", "MY_KEY"),
        ("MUTAGRAPH_LLM_TIMEOUT", "2.5"),
        ("MUTAGRAPH_LLM_RETRIES", "5"),
        ("MUTAGRAPH_LLM_BACKOFF_MS", "10"),
        ("MUTAGRAPH_LLM_TEMPERATURE", "0"),
        ("MUTAGRAPH_LLM_SEED", "1234"),
        ("MUTAGRAPH_LLM_MAX_TOKENS", "300"),
        ("MUTAGRAPH_LLM_REPLAY_DIR", "/tmp/rec"),
        ("MUTAGRAPH_LLM_RECORD_FROM", "local"),
        ("MUTAGRAPH_LLM_GGUF", "/models/x.gguf"),
        ("MUTAGRAPH_LLM_CTX", "4096"),
        ("MUTAGRAPH_LLM_THREADS", "3"),
        ("MUTAGRAPH_LLM_CONSTRAINTS", "vLLM"),
    ]))
    .unwrap();
    let want = LlmConfig {
        provider: Provider::Http,
        base_url: "http://10.1.2.3:11434/v1".into(),
        model: "qwen2.5-coder:7b".into(),
        api_key_env: "MY_KEY".into(),
        timeout_secs: 2.5,
        retries: 5,
        backoff_ms: 10,
        temperature: Some(0.0),
        seed: Some(1234),
        max_tokens: Some(300),
        replay_dir: Some("/tmp/rec".into()),
        record_from: Provider::Local,
        gguf: Some("/models/x.gguf".into()),
        n_ctx: 4096,
        n_threads: Some(3),
        constraints: ConstraintStyle::Vllm,
    };
    assert_eq!(config, want);
    assert_eq!(config.timeout().unwrap(), Duration::from_millis(2500));

    // Nothing set (or set empty): the defaults.
    let d = LlmConfig::from_env_with(env(&[("MUTAGRAPH_LLM_MODEL", "")])).unwrap();
    assert_eq!(d, LlmConfig::default());
    assert_eq!(d.provider, Provider::None);
    assert_eq!(d.api_key_env, "MUTAGRAPH_LLM_API_KEY");

    // Bad values name the variable.
    for (k, v) in [
        ("MUTAGRAPH_LLM_PROVIDER", "gpt"),
        ("MUTAGRAPH_LLM_RETRIES", "many"),
        ("MUTAGRAPH_LLM_TIMEOUT", "-1"),
        ("MUTAGRAPH_LLM_TEMPERATURE", "hot"),
        ("MUTAGRAPH_LLM_CONSTRAINTS", "regex"),
    ] {
        match LlmConfig::from_env_with(env(&[(k, v)])) {
            Err(LlmError::Config(msg)) => {
                assert!(msg.contains(k) || msg.contains(v), "{k}={v} gave {msg}")
            }
            other => panic!("{k}={v}: expected a config error, got {other:?}"),
        }
    }
}

#[test]
fn api_key_lookup_order() {
    let config = LlmConfig::default();
    assert_eq!(
        config.api_key_with(env(&[
            ("MUTAGRAPH_LLM_API_KEY", "mine"),
            ("OPENAI_API_KEY", "openai")
        ])),
        Some("mine".into())
    );
    assert_eq!(
        config.api_key_with(env(&[
            ("MUTAGRAPH_LLM_API_KEY", ""),
            ("OPENAI_API_KEY", "openai")
        ])),
        Some("openai".into())
    );
    assert_eq!(config.api_key_with(env(&[])), None);
    let custom = LlmConfig {
        api_key_env: "MY_KEY".into(),
        ..LlmConfig::default()
    };
    assert_eq!(
        custom.api_key_with(env(&[
            ("MY_KEY", "custom"),
            ("MUTAGRAPH_LLM_API_KEY", "mine")
        ])),
        Some("custom".into())
    );
}

#[test]
fn config_reads_from_toml_with_defaults() {
    let text = r#"
        provider = "replay"
        replay_dir = "tests/recordings"
        model = "smollm2"
        temperature = 0.0
    "#;
    let config: LlmConfig = toml::from_str(text).unwrap();
    assert_eq!(config.provider, Provider::Replay);
    assert_eq!(
        config.replay_dir(),
        std::path::PathBuf::from("tests/recordings")
    );
    assert_eq!(config.temperature, Some(0.0));
    assert_eq!(config.retries, LlmConfig::default().retries);
    // Unknown keys are an error, not silently ignored.
    let bad = toml::from_str::<LlmConfig>("provder = \"http\"");
    assert!(bad.is_err());
}

#[test]
fn stub_records_other_paths_without_using_the_script() {
    let server = StubServer::start(vec![StubReply::Answer("kept".into())]).unwrap();
    let addr = server.addr();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    use std::io::{Read, Write};
    s.write_all(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert!(out.contains("stub-model"), "{out}");
    assert_eq!(server.remaining(), 1);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "GET");
    assert_eq!(reqs[0].path, "/v1/models");
    assert_eq!(reqs[0].header("HOST"), Some("x"));
}
