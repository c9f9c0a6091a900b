//! YANHUI: the knowledge base, the distance, clustering at threshold 6, cases from our own
//! findings, the generation prompt, and k generations against the stub server.
use mutagraph_prompts::crossprobe::extract_onnx_text;
use mutagraph_prompts::llm::stub::{StubReply, StubServer};
use mutagraph_prompts::llm::{ChatRequest, HttpLlm, LlmConfig, Provider, sample_k};
use mutagraph_prompts::yanhui::{
    self, Case, Cluster, KnowledgeBase, RULES, THRESHOLD, api_distance, cluster, distance,
    path_distance, type_distance,
};
use std::path::PathBuf;

fn case(id: &str, cat: &str, apis: &[&str], exc: &str, dtypes: &[&str]) -> Case {
    Case {
        id: id.into(),
        project: "p".into(),
        source: "s".into(),
        title: format!("title {id}"),
        category: cat.into(),
        apis: apis.iter().map(|s| s.to_string()).collect(),
        exception: exc.into(),
        dtypes: dtypes.iter().map(|s| s.to_string()).collect(),
        location: "loc".into(),
        reason: "why".into(),
        model: String::new(),
        input: String::new(),
    }
}

#[test]
fn builtin_knowledge_base_is_complete() {
    let kb = KnowledgeBase::builtin().unwrap();
    assert!(kb.cases().len() >= 36, "{} cases", kb.cases().len());
    let mut ids = std::collections::BTreeSet::new();
    for c in kb.cases() {
        assert!(ids.insert(c.id.clone()), "duplicate id {}", c.id);
        for (field, v) in [
            ("project", &c.project),
            ("source", &c.source),
            ("title", &c.title),
            ("category", &c.category),
            ("exception", &c.exception),
            ("location", &c.location),
            ("reason", &c.reason),
            ("input", &c.input),
            ("model", &c.model),
        ] {
            assert!(!v.trim().is_empty(), "{}: empty {field}", c.id);
        }
        assert!(!c.apis.is_empty(), "{}: no API", c.id);
    }
}

/// Every knowledge-base model is a valid model, not only parseable text: the examples teach
/// the model to write, and an invalid one teaches it to write invalid graphs.
#[test]
fn builtin_knowledge_base_models_validate() {
    let kb = KnowledgeBase::builtin().unwrap();
    let mut bad = Vec::new();
    for c in kb.cases() {
        let m = match mutagraph_ir::text::parse_model(&c.model) {
            Ok(m) => m,
            Err(e) => {
                bad.push(format!("{}: the model does not parse: {e}", c.id));
                continue;
            }
        };
        if let Err(e) = mutagraph_ir::validate::validate_declared(&m) {
            bad.push(format!("{}: {e}", c.id));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} models:\n{}",
        bad.len(),
        kb.cases().len(),
        bad.join("\n")
    );
}

#[test]
fn distance_rules() {
    // The paper's example: torch/ao/quantization/experimental vs torch/jit.
    assert_eq!(
        path_distance("torch.ao.quantization.experimental", "torch.jit"),
        3
    );
    assert_eq!(path_distance("onnx.nn.Conv", "onnx.nn.Conv"), 0);
    assert_eq!(path_distance("onnx.nn.Conv", "onnx.nn.Pool"), 1);
    assert_eq!(path_distance("onnx.nn.Conv", "ort.kernel"), 3);
    assert_eq!(
        type_distance(
            "Error/RuntimeError/ShapeError",
            "Error/RuntimeError/IndexError"
        ),
        1
    );
    assert_eq!(
        type_distance(
            "Error/ArithmeticError/ZeroDivisionError",
            "Error/RuntimeError/ShapeError"
        ),
        2
    );
    assert_eq!(
        type_distance("dtype/float/float16", "dtype/float/float16"),
        0
    );
    assert_eq!(type_distance("dtype/float/float16", "dtype/int/int8"), 2);
    let a: Vec<String> = vec!["onnx.nn.Conv".into(), "ort.optimizer.fusion".into()];
    let b: Vec<String> = vec!["onnx.nn.Conv".into()];
    // a→b: 0 + 3; b→a: 0 → 3.
    assert_eq!(api_distance(&a, &b), 3);

    let x = case(
        "x",
        "crash",
        &["onnx.nn.Conv"],
        "Error/RuntimeError/ShapeError",
        &["dtype/float/float32"],
    );
    let y = case(
        "y",
        "wrong",
        &["onnx.nn.Pool"],
        "Error/RuntimeError/IndexError",
        &["dtype/float/float16"],
    );
    // category 1 + api 1 + exception 1 + dtype 1.
    assert_eq!(distance(&x, &y), 4);
    assert_eq!(distance(&y, &x), 4);
    assert_eq!(distance(&x, &x), 0);
}

#[test]
fn clustering_at_threshold_six() {
    assert_eq!(THRESHOLD, 6);
    let kb = KnowledgeBase::with_cases(vec![
        case(
            "a1",
            "crash",
            &["onnx.nn.Conv"],
            "E/R/Shape",
            &["dtype/float/f32"],
        ),
        case(
            "b1",
            "wrong",
            &["ort.optimizer.fusion.x", "onnx.math.Add"],
            "M/Num",
            &["dtype/int/i8"],
        ),
        case(
            "a2",
            "crash",
            &["onnx.nn.Pool"],
            "E/R/Index",
            &["dtype/float/f32"],
        ),
        case(
            "b2",
            "wrong",
            &["ort.optimizer.fusion.y", "onnx.math.Mul"],
            "M/Num",
            &["dtype/int/i8"],
        ),
        // Close to a1 (distance 4) but far from a2 (distance 8): complete linkage keeps it out.
        case(
            "a3",
            "crash",
            &["onnx.nn.Conv"],
            "E/R/Shape",
            &["dtype/int/i8", "dtype/float/f16"],
        ),
    ]);
    assert_eq!(distance(&kb.cases()[0], &kb.cases()[4]), 3);
    let cl = cluster(&kb, THRESHOLD);
    let members: Vec<Vec<&str>> = cl
        .iter()
        .map(|c| c.members.iter().map(|s| s.as_str()).collect())
        .collect();
    assert_eq!(
        members,
        vec![vec!["a1", "a2", "a3"], vec!["b1", "b2"]],
        "{cl:?}"
    );
    assert_eq!(cl[0].id, "c-a1");
    // A tighter threshold splits them.
    assert!(cluster(&kb, 1).len() > 2);

    let kb = KnowledgeBase::builtin().unwrap();
    let cl = cluster(&kb, THRESHOLD);
    assert!(
        cl.len() > 1 && cl.len() < kb.cases().len(),
        "{} clusters",
        cl.len()
    );
    let total: usize = cl.iter().map(|c| c.members.len()).sum();
    assert_eq!(total, kb.cases().len());
    let usable = yanhui::usable(&cl, 2);
    assert!(
        usable.len() >= 4,
        "{} clusters with 2+ members",
        usable.len()
    );
    // Deterministic.
    assert_eq!(cl, cluster(&kb, THRESHOLD));
}

#[test]
fn cases_from_findings() {
    let facts = yanhui::FindingFacts {
        id: "nan-tract-softplus-1234abcd".into(),
        kind: "nan".into(),
        project: "tract".into(),
        backends: vec!["tract".into()],
        stage: String::new(),
        op_type: Some("Softplus".into()),
        symptom: "all".into(),
        message: "4 of 4 elements NaN/Inf where the reference is finite".into(),
        hits: 7,
    };
    let c = yanhui::case_from_finding(&facts, Some("<ir_version: 8> g () => () {}")).unwrap();
    assert_eq!(c.id, "finding-nan-tract-softplus-1234abcd");
    assert_eq!(c.project, "tract");
    assert_eq!(c.category, "numerical-precision");
    assert_eq!(c.exception, "Mismatch/NaNMismatch");
    assert_eq!(c.apis, vec!["onnx.op.Softplus", "tract.run"]);
    assert!(c.reason.contains("NaN/Inf"));
    assert!(c.source.contains("7 hits"));
    // The project is the library's, whatever the backend variant is called.
    let ort = yanhui::FindingFacts {
        kind: "crash".into(),
        project: "onnxruntime".into(),
        backends: vec!["ort-noopt".into()],
        stage: "Load".into(),
        symptom: "error".into(),
        ..facts.clone()
    };
    let c = yanhui::case_from_finding(&ort, None).unwrap();
    assert_eq!(c.project, "onnxruntime");
    assert_eq!(c.exception, "RuntimeError/load-error");
    assert_eq!(c.location, "ort-noopt.load");
    let no_id = yanhui::FindingFacts {
        id: String::new(),
        ..facts
    };
    assert_eq!(
        yanhui::case_from_finding(&no_id, None).unwrap_err(),
        yanhui::FindingError::MissingField("id")
    );
}

fn golden(name: &str, text: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, text).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(text, want, "{} differs (UPDATE_GOLDEN=1)", path.display());
}

fn first_usable(kb: &KnowledgeBase) -> Cluster {
    let cl = cluster(kb, THRESHOLD);
    yanhui::usable(&cl, 3)
        .first()
        .map(|c| (*c).clone())
        .expect("a cluster with 3 members")
}

#[test]
fn generation_prompt() {
    let kb = KnowledgeBase::builtin().unwrap();
    let cl = first_usable(&kb);
    let msgs = yanhui::generate_prompt(&cl, &kb, 3, 0).unwrap();
    assert_eq!(msgs.len(), 2);
    let user = &msgs[1].content;
    assert_eq!(user.matches("### Example").count(), 3);
    for (i, r) in RULES.iter().enumerate() {
        assert!(user.contains(&format!("{}. {r}", i + 1)), "rule {}", i + 1);
    }
    for m in &cl.members[..3] {
        let c = kb.get(m).unwrap();
        assert!(user.contains(&c.title), "{m}");
    }
    golden(
        "yanhui-generate.txt",
        &format!("{}\n-----\n{user}\n", msgs[0].content),
    );
    // Another seed leads with another example; n is clamped to 2..=5 and the cluster size.
    let other = yanhui::generate_prompt(&cl, &kb, 3, 1).unwrap();
    assert_ne!(other[1].content, *user);
    let one = yanhui::generate_prompt(&cl, &kb, 1, 0).unwrap();
    assert_eq!(one[1].content.matches("### Example").count(), 2);
    let many = yanhui::generate_prompt(&cl, &kb, 9, 0).unwrap();
    assert_eq!(
        many[1].content.matches("### Example").count(),
        cl.members.len().min(5)
    );
}

#[test]
fn k_generations_against_the_stub() {
    let graph = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] X) => (float[2] Y) {\n  Y = Softplus (X)\n}";
    let server = StubServer::start(vec![
        StubReply::Answer(format!("```onnx\n{graph}\n```")),
        StubReply::Answer("No idea.".into()),
        StubReply::Answer(format!("Step 1...\n```onnx\n{graph}\n```")),
    ])
    .unwrap();
    let config = LlmConfig {
        provider: Provider::Http,
        base_url: server.base_url(),
        model: "m".into(),
        timeout_secs: 5.0,
        retries: 0,
        ..LlmConfig::default()
    };
    let llm = HttpLlm::new(&config, None).unwrap();
    let kb = KnowledgeBase::builtin().unwrap();
    let cl = first_usable(&kb);
    let mut req = ChatRequest::new(yanhui::generate_prompt(&cl, &kb, 3, 0).unwrap());
    req.seed = Some(10);
    let answers = sample_k(&llm, &req, 3);
    let seeds: Vec<u64> = server
        .requests()
        .iter()
        .map(|r| r.field("seed").and_then(|s| s.as_u64()).unwrap())
        .collect();
    assert_eq!(seeds, vec![10, 11, 12]);
    let graphs: Vec<Option<String>> = answers
        .iter()
        .map(|a| extract_onnx_text(&a.as_ref().unwrap().content))
        .collect();
    assert_eq!(graphs.iter().filter(|g| g.is_some()).count(), 2);
    assert!(server.requests()[0].body.contains("mutation rules"));
}
