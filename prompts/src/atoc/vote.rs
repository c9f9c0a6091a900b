//! Answers as JSON `{result, score, final, explanation}`, and ATOC's confidence vote over k
//! answers (Eq. 1: the count of the most frequent answer over k).
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Accept a decision at this confidence or above.
pub const ACCEPT: f64 = 0.9;

/// One parsed answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The expected output values (or `"error"`), as the model wrote them.
    pub result: serde_json::Value,
    /// The model's own confidence on 0..=100, as ATOC asks it (absent or unreadable: 0); see
    /// [`read_score`] for answers written on 0..1.
    pub score: f64,
    /// The verdict voted on: a backend's name, `all-wrong` or `error-expected` (normalized:
    /// trimmed, lower case).
    #[serde(rename = "final")]
    pub final_: String,
    pub explanation: String,
}

/// Why an answer could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the answer is not a JSON verdict: {0}")]
pub struct ParseError(pub String);

/// Normalizes a verdict for voting.
pub fn normalize_final(s: &str) -> String {
    s.trim()
        .trim_matches(|c: char| c == '"' || c == '\'' || c == '`' || c == '.')
        .trim()
        .to_lowercase()
}

/// Reads the answer's JSON object: inside a ```json fence, or the first balanced `{...}`
/// span; tolerates trailing commas and single-quoted strings.
pub fn parse_answer(text: &str) -> Result<Answer, ParseError> {
    let body = fenced(text).unwrap_or(text);
    let obj = first_object(body).ok_or_else(|| ParseError("no JSON object".into()))?;
    let v: serde_json::Value = serde_json::from_str(obj)
        .or_else(|_| serde_json::from_str(&loosen(obj)))
        .map_err(|e| ParseError(e.to_string()))?;
    let map = v
        .as_object()
        .ok_or_else(|| ParseError("not an object".into()))?;
    let fin = map
        .get("final")
        .ok_or_else(|| ParseError("no \"final\" field".into()))?;
    let final_ = match fin {
        serde_json::Value::String(s) => normalize_final(s),
        other => normalize_final(&other.to_string()),
    };
    if final_.is_empty() {
        return Err(ParseError("\"final\" is empty".into()));
    }
    let score = map.get("score").map(read_score).unwrap_or(0.0);
    Ok(Answer {
        result: map
            .get("result")
            .cloned()
            .unwrap_or(serde_json::Value::Null),
        score,
        final_,
        explanation: map
            .get("explanation")
            .and_then(|e| e.as_str())
            .unwrap_or("")
            .to_string(),
    })
}

/// Reads a score on ATOC's 0..=100 scale from a number or a string (`"85"`, `"85 %"`).
///
/// The rule for answers written on the old 0..1 scale: a value strictly between 0 and 1 can
/// only be such an answer (the 0..100 scale asks for integers) and is multiplied by 100, so
/// 0.85 reads as 85. The values 0 and 1 are valid on both scales and are read as written (1
/// means 1 of 100): there is no way to tell them apart. Anything else is clamped to 0..=100;
/// what is not a number (or is NaN) reads as 0.
pub fn read_score(v: &serde_json::Value) -> f64 {
    let x = match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.trim().trim_end_matches('%').trim().parse().ok(),
        _ => None,
    };
    match x {
        Some(x) if x.is_nan() => 0.0,
        Some(x) if x > 0.0 && x < 1.0 => x * 100.0,
        Some(x) => x.clamp(0.0, 100.0),
        None => 0.0,
    }
}

fn fenced(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let rest = &text[start + 3..];
    let nl = rest.find('\n')?;
    let body = &rest[nl + 1..];
    let end = body.find("```").unwrap_or(body.len());
    Some(&body[..end])
}

/// The first balanced `{...}` (braces inside strings ignored).
fn first_object(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let (mut depth, mut quote, mut escape) = (0i32, None::<char>, false);
    for (i, c) in text[start..].char_indices() {
        if let Some(q) = quote {
            if escape {
                escape = false;
            } else if c == '\\' {
                escape = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..start + i + 1]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Single-quoted strings to double-quoted ones, trailing commas dropped.
fn loosen(obj: &str) -> String {
    let mut out = String::with_capacity(obj.len());
    let mut quote: Option<char> = None;
    let mut escape = false;
    let chars: Vec<char> = obj.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if let Some(q) = quote {
            if escape {
                escape = false;
                out.push(c);
            } else if c == '\\' {
                escape = true;
                out.push(c);
            } else if c == q {
                quote = None;
                out.push('"');
            } else if c == '"' {
                out.push_str("\\\"");
            } else {
                out.push(c);
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                quote = Some(c);
                out.push('"');
            }
            ',' => {
                let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
                if !matches!(next, Some('}') | Some(']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// What the vote decided.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// The most frequent verdict reached [`ACCEPT`].
    Decided(String),
    /// No verdict reached [`ACCEPT`].
    Unknown,
}

/// The vote over k answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub decision: Decision,
    /// Count of the most frequent verdict over k (ATOC Eq. 1).
    pub confidence: f64,
    /// The leading verdict, whether accepted or not.
    pub leader: Option<String>,
    /// Verdicts and their counts.
    pub votes: BTreeMap<String, u64>,
    /// Answers asked for.
    pub k: usize,
    /// Answers that failed or could not be parsed (they count in k, never win).
    pub failed: usize,
}

/// Votes: the most frequent `final` over all k answers (failures count in k). On a tie the
/// verdict that sorts first wins the lead, and a tie can never reach [`ACCEPT`] with k > 1.
pub fn vote<E>(answers: &[Result<Answer, E>]) -> Verdict {
    let k = answers.len();
    let mut votes: BTreeMap<String, u64> = BTreeMap::new();
    let mut failed = 0;
    for a in answers {
        match a {
            Ok(a) => *votes.entry(a.final_.clone()).or_default() += 1,
            Err(_) => failed += 1,
        }
    }
    let leader = votes
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(v, n)| (v.clone(), *n));
    let confidence = match (&leader, k) {
        (Some((_, n)), k) if k > 0 => *n as f64 / k as f64,
        _ => 0.0,
    };
    let decision = match &leader {
        Some((v, _)) if confidence >= ACCEPT - 1e-12 => Decision::Decided(v.clone()),
        _ => Decision::Unknown,
    };
    Verdict {
        decision,
        confidence,
        leader: leader.map(|l| l.0),
        votes,
        k,
        failed,
    }
}
