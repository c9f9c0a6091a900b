//! ATOC: LLM-built test oracles from operator specifications, with confidence voting.
//!
//! For a disagreement that the f64 reference cannot settle (or an op that only one backend
//! runs), the model gets the operator's specification — read at run time from the user's
//! Python `onnx` package ([`spec`]) — the test case and every backend's output, and answers
//! as JSON `{result, score, final, explanation}`. The question is asked k times with seeds
//! `seed..seed+k`; the confidence is the count of the most frequent `final` over k (ATOC
//! Eq. 1), and a verdict is accepted at [`ACCEPT`] (90 %) or above, else it is `unknown`.
pub mod spec;
pub mod vote;

pub use spec::{FixedSpecs, OpSpecText, SpecCache, SpecError, SpecSource};
pub use vote::{
    ACCEPT, Answer, Decision, ParseError, Verdict, normalize_final, parse_answer, vote,
};

use crate::llm::{ChatRequest, Llm, LlmError, Message, sample_k};
use crate::template::{self, TemplateError, Vars};
use serde::{Deserialize, Serialize};

/// One test case to judge.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// The op the question is about.
    pub op: String,
    /// Its domain (empty: ai.onnx).
    #[serde(default)]
    pub domain: String,
    /// The opset of the model.
    pub opset: i64,
    /// The model in ONNX text form.
    pub model: String,
    /// Inputs: (name, values printed as nested lists with dtype and shape).
    pub inputs: Vec<(String, String)>,
    /// Every backend's output: (backend, outputs printed, or its error message).
    pub outputs: Vec<(String, String)>,
    /// The question; empty: which implementation is correct.
    #[serde(default)]
    pub question: String,
}

impl Case {
    /// The answers `final` may take: each backend, `all-wrong`, `error-expected`.
    pub fn choices(&self) -> Vec<String> {
        let mut c: Vec<String> = self
            .outputs
            .iter()
            .map(|(b, _)| normalize_final(b))
            .collect();
        c.push("all-wrong".into());
        c.push("error-expected".into());
        c
    }
}

/// The oracle prompt: the specification, the case and the JSON answer format.
pub fn oracle_prompt(spec: &OpSpecText, case: &Case) -> Result<Vec<Message>, TemplateError> {
    let system = template::get("atoc-system")?.render(&Vars::new())?;
    let list = |xs: &[(String, String)]| {
        xs.iter()
            .map(|(k, v)| format!("- {k}: {v}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let question = if case.question.trim().is_empty() {
        format!(
            "Which implementation computes {} correctly for this test case?",
            case.op
        )
    } else {
        case.question.clone()
    };
    let mut vars = Vars::new();
    vars.insert("spec".into(), spec.to_prompt_text());
    vars.insert("model".into(), case.model.trim().to_string());
    vars.insert("inputs".into(), list(&case.inputs));
    vars.insert("outputs".into(), list(&case.outputs));
    vars.insert("choices".into(), case.choices().join(", "));
    vars.insert("question".into(), question);
    let user = template::get("atoc-oracle")?.render(&vars)?;
    Ok(vec![
        Message::system(system.trim().to_string()),
        Message::user(user.trim().to_string()),
    ])
}

/// The outcome of asking: the verdict and every raw answer (or request error).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Asked {
    pub verdict: Verdict,
    /// Per request: the answer text, or the request's error prefixed with `error: `.
    pub answers: Vec<String>,
}

/// Why one of the k answers does not vote.
#[derive(Debug, thiserror::Error)]
enum Unusable {
    /// The request failed.
    #[error(transparent)]
    Request(LlmError),
    /// The answer does not parse.
    #[error(transparent)]
    Parse(ParseError),
}

/// Asks k times (seeds `seed..seed+k`) and votes. Request errors and unparsable answers count
/// in k and never win.
pub fn ask(
    llm: &dyn Llm,
    spec: &OpSpecText,
    case: &Case,
    k: usize,
    seed: u64,
    temperature: f32,
) -> Result<Asked, TemplateError> {
    let mut req = ChatRequest::new(oracle_prompt(spec, case)?);
    req.seed = Some(seed);
    req.temperature = temperature;
    req.max_tokens = Some(512);
    req.template = Some(template::get("atoc-oracle")?.id());
    let raw = sample_k(llm, &req, k.max(1));
    let mut answers = Vec::with_capacity(raw.len());
    let parsed: Vec<Result<Answer, Unusable>> = raw
        .into_iter()
        .map(|r| match r {
            Ok(a) => {
                answers.push(a.content.clone());
                parse_answer(&a.content).map_err(Unusable::Parse)
            }
            Err(e) => {
                answers.push(format!("error: {e}"));
                Err(Unusable::Request(e))
            }
        })
        .collect();
    Ok(Asked {
        verdict: vote(&parsed),
        answers,
    })
}
