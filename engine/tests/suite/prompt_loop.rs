//! The validation loop of LLM-written tests: parse → validate → run on every backend →
//! classify, with repair rounds for syntax errors and invalid graphs. The model is scripted.
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::worker::{Pool, PoolOptions};
use mutagraph_engine::prompt::judge::{Class, Judge, LoopSpec, MAX_REPAIRS, run_loop};
use mutagraph_prompts::llm::{ChatRequest, ChatResponse, Llm, LlmError, Message};
use std::path::PathBuf;
use std::sync::Mutex;

/// Answers from a script, one per request; records the requests.
struct Scripted {
    answers: Mutex<Vec<String>>,
    seen: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    fn new(answers: &[&str]) -> Scripted {
        Scripted {
            answers: Mutex::new(answers.iter().rev().map(|s| s.to_string()).collect()),
            seen: Mutex::new(Vec::new()),
        }
    }
}

impl Llm for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.seen.lock().unwrap().push(req.clone());
        let content = self
            .answers
            .lock()
            .unwrap()
            .pop()
            .ok_or_else(|| LlmError::Transport("script exhausted".into()))?;
        Ok(ChatResponse {
            content,
            model: "scripted".into(),
            prompt_tokens: None,
            completion_tokens: None,
        })
    }
}

fn pool() -> Pool {
    Pool::new(PoolOptions::new(PathBuf::from(env!(
        "CARGO_BIN_EXE_mutagraph"
    ))))
}

fn fenced(graph: &str) -> String {
    format!("Here is the test.\n```onnx\n{graph}\n```\n")
}

fn extract(answer: &str) -> Option<String> {
    let start = answer.find("```onnx\n")? + "```onnx\n".len();
    let end = answer[start..].find("```")? + start;
    Some(answer[start..end].to_string())
}

const HEADER: &str = r#"<ir_version: 8, opset_import: ["" : 17]>"#;

fn relu() -> String {
    format!("{HEADER}\ng (float[2,3] X) => (float[2,3] Y) {{\n  Y = Relu(X)\n}}")
}

#[test]
fn syntax_errors_are_repaired_with_line_and_column_then_judged_valid() {
    let broken = format!("{HEADER}\ng (float[2,3] X) => (float[2,3] Y) {{\n  Y = Relu(X\n}}");
    let llm = Scripted::new(&["I cannot write ONNX.", &fenced(&broken), &fenced(&relu())]);
    let mut pool = pool();
    let mut judge = Judge::new(
        &mut pool,
        vec!["reference".into(), "ort".into()],
        Tolerance::APPROXIMATE,
    );
    let repairs = Mutex::new(Vec::new());
    let repair = |prev: &str, err: &str, round: u32| {
        repairs
            .lock()
            .unwrap()
            .push((prev.to_string(), err.to_string(), round));
        Ok(vec![Message::user(format!(
            "Round {round}: fix this error: {err}"
        ))])
    };
    let spec = LoopSpec {
        constraint: None,
        first: vec![Message::user("write a Relu test")],
        extract: &extract,
        repair: &repair,
        temperature: 0.0,
        seed: 11,
        template: Some("test.v1".into()),
        max_tokens: 1024,
    };
    let r = run_loop(&llm, &spec, &mut judge);
    let classes: Vec<Class> = r
        .rounds
        .iter()
        .filter_map(|x| x.judged.as_ref().map(|j| j.class))
        .collect();
    assert_eq!(
        classes,
        vec![Class::Syntax, Class::Syntax, Class::Valid],
        "{r:#?}"
    );
    let repairs = repairs.into_inner().unwrap();
    assert_eq!(repairs.len(), 2);
    assert!(
        repairs[0].1.contains("no ONNX text graph"),
        "{}",
        repairs[0].1
    );
    // The parser's error names the line and column (the unclosed call ends at line 4's '}').
    assert!(repairs[1].1.starts_with("4:1:"), "{}", repairs[1].1);
    assert_eq!(repairs[1].2, 2);
    // Every request carried the conversation and a distinct seed.
    let seen = llm.seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!(
        seen.iter().map(|r| r.seed.unwrap()).collect::<Vec<_>>(),
        vec![11, 12, 13]
    );
    assert!(seen[2].messages.len() > seen[1].messages.len());
    assert_eq!(r.last().unwrap().op_types, vec!["Relu".to_string()]);
}

#[test]
fn repairs_stop_after_three_rounds() {
    let llm = Scripted::new(&["no", "no", "no", "no", "never asked"]);
    let mut pool = pool();
    let mut judge = Judge::new(&mut pool, vec!["reference".into()], Tolerance::APPROXIMATE);
    let repair = |_: &str, e: &str, _: u32| Ok(vec![Message::user(e.to_string())]);
    let spec = LoopSpec {
        constraint: None,
        first: vec![Message::user("x")],
        extract: &extract,
        repair: &repair,
        temperature: 0.7,
        seed: 0,
        template: None,
        max_tokens: 1024,
    };
    let r = run_loop(&llm, &spec, &mut judge);
    assert_eq!(r.rounds.len() as u32, 1 + MAX_REPAIRS);
    assert_eq!(r.class(), Some(Class::Syntax));
    assert_eq!(
        llm.answers.lock().unwrap().len(),
        1,
        "the fifth answer is never requested"
    );
}

#[test]
fn invalid_duplicate_and_bug_candidates_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let mut pool = pool();
    let mut judge = Judge::new(
        &mut pool,
        vec!["reference".into(), "planted-conv-pad".into()],
        Tolerance::APPROXIMATE,
    );
    judge.findings_dir = Some(dir.path().join("findings"));
    judge.origin = "test".into();
    // Type error: Add of float and int64.
    let invalid =
        format!("{HEADER}\ng (float[2] A, int64[2] B) => (float[2] C) {{\n  C = Add(A, B)\n}}");
    let j = judge.judge_text(&invalid);
    assert_eq!(j.class, Class::Invalid, "{}", j.detail);
    // Valid, then the same graph again.
    assert_eq!(judge.judge_text(&relu()).class, Class::Valid);
    assert_eq!(judge.judge_text(&relu()).class, Class::Duplicate);
    // A padded Conv: the planted backend shifts its padding: a bug candidate with a bundle.
    let conv = format!(
        "{HEADER}\ng (float[1,1,5,5] X, float[1,1,3,3] W) => (float[1,1,5,5] Y) {{\n  Y = Conv <pads: ints = [1, 1, 1, 1]> (X, W)\n}}"
    );
    let j = judge.judge_text(&conv);
    assert_eq!(j.class, Class::Bug, "{}", j.detail);
    assert_eq!(j.bundles.len(), 1);
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(j.bundles[0].join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["backends"][0], "planted-conv-pad");
    assert_eq!(meta["op_type"], "Conv");
    assert!(j.bundles[0].join("repro.py").exists());
    assert_eq!(judge.signatures.len(), 1);
}

#[test]
fn declared_types_inference_contradicts_are_invalid_never_a_bug() {
    let mut pool = pool();
    let mut judge = Judge::new(
        &mut pool,
        vec!["reference".into(), "ort".into()],
        Tolerance::APPROXIMATE,
    );
    // A Conv whose output is declared int64: ONNX Runtime refuses the file, which made it a
    // "crash on ort" bug candidate.
    let conv = format!(
        "{HEADER}\ng (float[1,3,8,8] X, float[4,3,3,3] W) => (int64[1,4,8,8] Y) {{\n  Y = Conv <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (X, W)\n}}"
    );
    let j = judge.judge_text(&conv);
    assert_eq!(j.class, Class::Invalid, "{}", j.detail);
    assert!(!j.runs);
    assert!(
        j.detail.contains("output 'Y'")
            && j.detail.contains("int64[1, 4, 8, 8]")
            && j.detail.contains("float[1, 4, 8, 8]"),
        "{}",
        j.detail
    );
    // A value_info entry of the wrong shape.
    let vi = format!(
        "{HEADER}\ng (float[2,3] X) => (float[2,3] Y)\n<float[3,2] T>\n{{\n  T = Relu (X)\n  Y = Neg (T)\n}}"
    );
    let j = judge.judge_text(&vi);
    assert_eq!(j.class, Class::Invalid, "{}", j.detail);
    assert!(j.detail.contains("value_info 'T'"), "{}", j.detail);
    assert!(judge.signatures.is_empty());
}

#[test]
fn cases_onnx_leaves_open_are_invalid_never_a_bug() {
    // A Range whose delta is a one-element vector: the operator asks for scalars, onnx's
    // checker and ONNX Runtime accept it, tract refuses it. SmolLM2 wrote it, and tract's
    // refusal became a "crash on tract" bug candidate.
    let mut pool = pool();
    let mut judge = Judge::new(
        &mut pool,
        vec!["reference".into(), "ort".into(), "tract".into()],
        Tolerance::APPROXIMATE,
    );
    let range = format!(
        "{HEADER}\nmain (float[1] delta) => (Y) <float start = {{1.0}}, float limit = {{1.0}}>\n{{\n  Y = Range (start, limit, delta)\n}}"
    );
    let j = judge.judge_text(&range);
    assert_eq!(j.class, Class::Invalid, "{}", j.detail);
    assert!(j.detail.contains("leaves this case open"), "{}", j.detail);
    assert!(judge.signatures.is_empty());
    // With scalars it is an ordinary test.
    let scalar = format!(
        "{HEADER}\nmain () => (Y) <float start = {{1.0}}, float limit = {{4.0}}, float delta = {{1.0}}>\n{{\n  Y = Range (start, limit, delta)\n}}"
    );
    let j = judge.judge_text(&scalar);
    assert_ne!(j.class, Class::Invalid, "{}", j.detail);
}

#[test]
fn outputs_written_without_a_type_are_declared_before_running() {
    let mut pool = pool();
    let mut judge = Judge::new(&mut pool, vec!["reference".into()], Tolerance::APPROXIMATE);
    let text = format!("{HEADER}\ng (float[2,3] X) => (Y) {{\n  Y = Relu(X)\n}}");
    let mut model = mutagraph_ir::text::parse_model(&text).unwrap();
    assert!(model.graph.outputs[0].r#type.is_none());
    let j = judge.judge_model(&mut model);
    assert_eq!(j.class, Class::Valid, "{}", j.detail);
    assert!(j.runs);
    let declared = model.graph.outputs[0].r#type.as_ref().unwrap();
    assert_eq!(
        mutagraph_ir::ValueType::from_proto(declared).to_string(),
        "f32[2,3]"
    );
    // An output whose type inference cannot find is invalid, with the reason.
    let unknown = format!("{HEADER}\ng (X) => (Y) {{\n  Y = Relu(X)\n}}");
    let j = judge.judge_text(&unknown);
    assert_eq!(j.class, Class::Invalid, "{}", j.detail);
    assert!(j.detail.contains("without a type"), "{}", j.detail);
}

/// The models the prompt templates show run on the reference (they also validate: the
/// prompts crate's template tests).
#[test]
fn template_examples_run_on_the_reference() {
    let examples = mutagraph_prompts::template::examples(17).unwrap();
    assert!(examples.len() >= 2, "{examples:?}");
    let mut pool = pool();
    let mut judge = Judge::new(&mut pool, vec!["reference".into()], Tolerance::APPROXIMATE);
    for e in &examples {
        let j = judge.judge_text(&e.text);
        assert!(
            j.runs,
            "{}: {:?}: {}\n{}",
            e.template, j.class, j.detail, e.text
        );
    }
}
