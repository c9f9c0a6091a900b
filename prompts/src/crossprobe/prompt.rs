//! The transfer prompt (with the distinction steps), the repair prompt, and reading the answer.
use super::db::AlignmentDb;
use super::screen::Screening;
use super::snippet::Snippet;
use crate::llm::Message;
use crate::template::{self, TemplateError, Vars};

/// The opset the transferred models use.
pub const OPSET: i64 = 17;

fn system() -> Result<Message, TemplateError> {
    let mut v = Vars::new();
    v.insert("opset".into(), OPSET.to_string());
    Ok(Message::system(
        template::get("crossprobe-system")?
            .render(&v)?
            .trim()
            .to_string(),
    ))
}

/// The distinction steps: for each distinct kept API, its ONNX op and every parameter
/// difference, numbered as a chain of thought.
pub fn distinction(screening: &Screening) -> String {
    let mut out = String::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut step = 0;
    for k in &screening.kept {
        if seen.contains(&k.pair.api.as_str()) {
            continue;
        }
        seen.push(&k.pair.api);
        step += 1;
        out += &format!(
            "Step {step}: `{}` becomes ONNX `{}` (run by {}).\n",
            k.pair.api,
            k.pair.onnx,
            k.backends.join(", ")
        );
        if !k.call.args.is_empty() {
            out += &format!("  The program calls it with ({}).\n", k.call.args);
        }
        for r in &k.pair.renames {
            out += &format!("  - Parameter: {r}.\n");
        }
        if !k.pair.layout.is_empty() {
            out += &format!("  - Layout: {}.\n", k.pair.layout);
        }
        if !k.pair.defaults.is_empty() {
            out += &format!("  - Defaults: {}.\n", k.pair.defaults);
        }
        if !k.pair.unsupported.is_empty() {
            out += &format!(
                "  - Not expressible in ONNX: {} (leave it out).\n",
                k.pair.unsupported
            );
        }
        if k.pair.renames.is_empty()
            && k.pair.layout.is_empty()
            && k.pair.defaults.is_empty()
            && k.pair.unsupported.is_empty()
        {
            out += "  - Same parameters and semantics.\n";
        }
    }
    out
}

/// The first request of a transfer.
pub fn transfer_prompt(
    snippet: &Snippet,
    screening: &Screening,
    _db: &AlignmentDb,
) -> Result<Vec<Message>, TemplateError> {
    let calls = screening
        .kept
        .iter()
        .map(|k| {
            format!(
                "- line {}: {} -> ONNX {}",
                k.call.line, k.call.api, k.pair.onnx
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let dropped = screening
        .dropped
        .iter()
        .map(|(c, why)| format!("- line {}: {} ({why})", c.line, c.api))
        .collect::<Vec<_>>()
        .join("\n");
    let mut v = Vars::new();
    v.insert(
        "framework".into(),
        match snippet.framework.as_str() {
            "pytorch" => "PyTorch".into(),
            "tensorflow" => "TensorFlow".into(),
            _ => "Python".into(),
        },
    );
    v.insert("code".into(), snippet.code.trim().to_string());
    v.insert("calls".into(), calls);
    v.insert("dropped".into(), dropped);
    v.insert("distinction".into(), distinction(screening));
    v.insert("opset".into(), OPSET.to_string());
    let user = template::get("crossprobe-transfer")?.render(&v)?;
    Ok(vec![system()?, Message::user(user.trim().to_string())])
}

/// The repair request after an answer that failed (`error` carries line and column where the
/// parser gave them).
pub fn repair_prompt(
    previous: &str,
    error: &str,
    round: u32,
) -> Result<Vec<Message>, TemplateError> {
    let mut v = Vars::new();
    v.insert("error".into(), error.trim().to_string());
    v.insert("round".into(), round.to_string());
    v.insert("previous".into(), previous.to_string());
    let user = template::get("crossprobe-repair")?.render(&v)?;
    Ok(vec![system()?, Message::user(user.trim().to_string())])
}

/// The ONNX text of an answer: the first fenced block (```onnx, ```onnxtxt, ```text or a
/// bare ```) that looks like a graph (`=>`), else the span from `<ir_version` (or the
/// signature line) to the last `}`.
pub fn extract_onnx_text(answer: &str) -> Option<String> {
    let mut rest = answer;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let nl = after.find('\n')?;
        let lang = after[..nl].trim().to_ascii_lowercase();
        let body = &after[nl + 1..];
        let end = body.find("```").unwrap_or(body.len());
        let block = &body[..end];
        // A block labelled onnx is taken as the answer even when it is no graph, so that the
        // parser's line:column error reaches the repair prompt; an unlabelled or `text` block
        // only when it looks like a graph.
        let labelled = matches!(lang.as_str(), "onnx" | "onnxtxt") && !block.trim().is_empty();
        let unlabelled = matches!(lang.as_str(), "text" | "") && block.contains("=>");
        if labelled || unlabelled {
            return Some(block.trim().to_string());
        }
        if end >= body.len() {
            break;
        }
        rest = &body[end + 3..];
    }
    let begin = answer.find("<ir_version").or_else(|| {
        let arrow = answer.find("=>")?;
        Some(answer[..arrow].rfind('\n').map_or(0, |i| i + 1))
    })?;
    let end = answer.rfind('}')?;
    (end > begin).then(|| answer[begin..=end].trim().to_string())
}

/// The kept ops of the screening that are among `op_types` (a graph's node op types).
pub fn preserved_calls(screening: &Screening, op_types: &[String]) -> Vec<String> {
    screening
        .ops()
        .into_iter()
        .filter(|o| op_types.contains(o))
        .collect()
}

/// CrossProbe's functionality-preserving output (§2.2, Table 4): valid code that keeps the
/// aligned API. Here: `valid` (the caller's judgement; the engine's is that the graph
/// validates, its declared types included, and at least one backend runs it) and the graph
/// (its node `op_types`) holds at least one ONNX op aligned with a kept call of the snippet.
pub fn preserves_functionality(screening: &Screening, valid: bool, op_types: &[String]) -> bool {
    valid && !preserved_calls(screening, op_types).is_empty()
}
