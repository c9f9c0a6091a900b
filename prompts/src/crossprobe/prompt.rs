//! The transfer prompt (with the distinction steps), the repair prompt, and reading the answer.
use super::db::AlignmentDb;
use super::screen::Screening;
use super::snippet::Snippet;
use super::values::{call_numbers, tensor_literals};
use crate::grammar::onnx_text::{Literal, MAX_INIT_VALUES, Task};
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

/// The grammar task of a transfer: a model holding one of the screening's aligned ops that
/// the grammar gives (at [`OPSET`]), able to write the snippet's values ([`literals`]) in
/// literal initializers and attributes. `None` when no aligned op has a grammar.
pub fn transfer_task(snippet: &Snippet, screening: &Screening) -> Option<Task> {
    let supported = crate::grammar::onnx_text::supported_ops(OPSET);
    let ops: Vec<String> = screening
        .ops()
        .into_iter()
        .filter(|o| supported.contains(&o.as_str()))
        .collect();
    (!ops.is_empty()).then(|| Task {
        ops,
        opset: OPSET,
        require_literal: true,
        literals: literals(snippet),
        fenced: true,
    })
}

/// The values of a snippet as grammar literals: each distinct number of its tensor literals
/// (floats of float tensors, integers of integer ones) and of its calls' arguments (as a
/// float, and as an integer too when whole), and each
/// integer tensor literal of at most [`MAX_INIT_VALUES`] values as a whole list.
pub fn literals(snippet: &Snippet) -> Vec<Literal> {
    let mut out: Vec<Literal> = Vec::new();
    let mut push = |l: Literal| {
        let same = |a: &Literal| match (a, &l) {
            (Literal::Float(x), Literal::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
            _ => *a == l,
        };
        if !out.iter().any(same) {
            out.push(l);
        }
    };
    let number = |x: f64, integer: bool| {
        if integer && x.fract() == 0.0 && x.abs() < 9.0e15 {
            Literal::Int(x as i64)
        } else {
            Literal::Float(x)
        }
    };
    for t in tensor_literals(snippet) {
        for &x in &t.values {
            push(number(x, t.integer));
        }
        if t.integer && t.shape.len() == 1 && t.values.len() as i64 <= MAX_INIT_VALUES {
            push(Literal::Ints(t.values.iter().map(|x| *x as i64).collect()));
        }
    }
    // A call's number may be a float or an int parameter (`min=-1.0`, `dim=-1`).
    for x in call_numbers(snippet) {
        push(Literal::Float(x));
        if x.fract() == 0.0 && x.abs() < 9.0e15 {
            push(Literal::Int(x as i64));
        }
    }
    out
}
