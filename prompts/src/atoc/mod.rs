//! ATOC: LLM-built test oracles from operator specifications, with confidence voting.
//!
//! For a disagreement that the f64 reference cannot settle (or an op that only one backend
//! runs), the model gets the operator's specification — read at run time from the user's
//! Python `onnx` package ([`spec`]) — the test case and every backend's output, and answers
//! as JSON `{result, score, final, explanation}`. The question is asked k times with seeds
//! `seed..seed+k`; the confidence is the count of the most frequent `final` over k (ATOC
//! Eq. 1), and a verdict is accepted at [`ACCEPT`] (90 %) or above, else it is `unknown`.
//! The model's own `score` is asked on 0-100 as in the paper ([`read_score`] reads older 0-1
//! answers). k > 1 answers at temperature ≤ 0 would be k copies of one answer (confidence
//! always 100 %), so [`ask`] refuses them ([`AskError::Deterministic`]).
//! [`answer_schema`] is the JSON schema of an answer, `final` drawn from the case's choices,
//! for providers that constrain their output; [`eval`] scores ATOC on labelled cases.
pub mod eval;
pub mod spec;
pub mod vote;

pub use spec::{FixedSpecs, OpSpecText, SpecCache, SpecError, SpecSource};
pub use vote::{
    ACCEPT, Answer, Decision, ParseError, Verdict, normalize_final, parse_answer, read_score, vote,
};

use crate::llm::{ChatRequest, Constraint, Llm, LlmError, Message, sample_k};
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

/// The fields of an answer, in the order the model is asked to write them.
pub const ANSWER_FIELDS: [&str; 4] = ["result", "score", "final", "explanation"];

/// Most characters of the `explanation` an answer may have under [`answer_schema`].
pub const EXPLANATION_MAX: u64 = 300;

/// Most values of the `result` an answer may have under [`answer_schema`]: with the
/// explanation's bound, an answer under the schema always ends within [`ANSWER_TOKENS`]
/// tokens (a small model otherwise writes rows of numbers until its budget runs out, and the
/// cut answer does not parse).
pub const RESULT_MAX: u64 = 12;

/// The token budget of an oracle answer.
pub const ANSWER_TOKENS: u32 = 1024;

/// The JSON schema of one answer to `case`: an object with exactly the required properties
/// `result` (the string `"error"`, or a flat array of at most [`RESULT_MAX`] numbers), `score`
/// (an integer 0..=100), `final` (a string, one of [`Case::choices`]) and `explanation` (a
/// string of at most [`EXPLANATION_MAX`] characters), no other property.
///
/// The properties are meant in the order of [`ANSWER_FIELDS`]; a JSON object has no order of
/// its own (and `serde_json`'s map sorts its keys), so the order is stated twice where a
/// converter can read it: the `required` array and `propertyOrdering`.
pub fn answer_schema(case: &Case) -> serde_json::Value {
    use serde_json::json;
    json!({
        "type": "object",
        "properties": {
            "result": {"anyOf": [
                {"type": "string", "enum": ["error"]},
                {"type": "array", "items": {"type": "number"}, "maxItems": RESULT_MAX}
            ]},
            "score": {"type": "integer", "minimum": 0, "maximum": 100},
            "final": {"type": "string", "enum": case.choices()},
            "explanation": {"type": "string", "maxLength": EXPLANATION_MAX}
        },
        "required": ANSWER_FIELDS,
        "propertyOrdering": ANSWER_FIELDS,
        "additionalProperties": false
    })
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
    /// Requests that got no answer (their entries in `answers` are the errors); the others
    /// are answers received, of which `verdict.k - verdict.failed` parsed.
    #[serde(default)]
    pub request_errors: usize,
}

/// Why [`ask`] did not ask.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// The prompt could not be rendered.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// k > 1 answers at temperature ≤ 0: a deterministic model gives k copies of one answer,
    /// and the vote's confidence would be 100 % whatever the answer.
    #[error(
        "{k} answers at temperature {temperature} would be {k} copies of one answer (the \
         confidence would always be 100 %): use a temperature above 0 (e.g. --temperature 0.7) \
         or k = 1"
    )]
    Deterministic { k: usize, temperature: f32 },
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

/// The request [`ask`] sends (before the seeds of [`sample_k`]): the oracle prompt, `seed`,
/// `temperature`, at most 512 tokens, the template id. A caller that constrains the answer
/// attaches [`answer_schema`] of the same case to it.
pub fn oracle_request(
    spec: &OpSpecText,
    case: &Case,
    seed: u64,
    temperature: f32,
) -> Result<ChatRequest, TemplateError> {
    let mut req = ChatRequest::new(oracle_prompt(spec, case)?);
    // The answer is sampled as JSON of `answer_schema`, `final` one of the case's choices.
    // The schema is ours and within what the converter takes, so this never fails; were it
    // to, the request goes unconstrained and the parser still judges the answer.
    req.constraint = Constraint::json(answer_schema(case)).ok();
    req.seed = Some(seed);
    req.temperature = temperature;
    req.max_tokens = Some(ANSWER_TOKENS);
    req.template = Some(template::get("atoc-oracle")?.id());
    Ok(req)
}

/// Asks k times (seeds `seed..seed+k`) and votes. Request errors and unparsable answers count
/// in k and never win. Refuses k > 1 at `temperature` ≤ 0 ([`AskError::Deterministic`]);
/// k = 0 asks once.
pub fn ask(
    llm: &dyn Llm,
    spec: &OpSpecText,
    case: &Case,
    k: usize,
    seed: u64,
    temperature: f32,
) -> Result<Asked, AskError> {
    check_sampling(k, temperature)?;
    let req = oracle_request(spec, case, seed, temperature)?;
    ask_request(llm, &req, k)
}

/// [`AskError::Deterministic`] for k > 1 at `temperature` ≤ 0 (or NaN).
pub fn check_sampling(k: usize, temperature: f32) -> Result<(), AskError> {
    if k > 1 && (temperature.is_nan() || temperature <= 0.0) {
        return Err(AskError::Deterministic { k, temperature });
    }
    Ok(())
}

/// Sends `req` k times (seeds `req.seed..+k`, see [`sample_k`]) and votes; for callers that
/// change the request of [`oracle_request`] (a constraint) before asking. Applies
/// [`check_sampling`] with the request's temperature.
pub fn ask_request(llm: &dyn Llm, req: &ChatRequest, k: usize) -> Result<Asked, AskError> {
    check_sampling(k, req.temperature)?;
    let raw = sample_k(llm, req, k.max(1));
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
    let request_errors = parsed
        .iter()
        .filter(|p| matches!(p, Err(Unusable::Request(_))))
        .count();
    Ok(Asked {
        verdict: vote(&parsed),
        answers,
        request_errors,
    })
}
