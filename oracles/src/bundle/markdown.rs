//! `report.md`: the text of an upstream issue, concise and factual.
//!
//! Sections, in order: the title, Summary, Environment, Minimal model, Steps to reproduce,
//! Expected vs actual (only when there are comparisons), Details (only when there is a
//! localized op, an error text or a minimization), Provenance (only when given).
//!
//! Text fields are plain text: markdown characters in them are escaped (`\*`, `\|`, `&lt;`...)
//! so that they render as written. Names, types, attributes and commands are shown as code
//! (spans or fenced blocks, whose fences are longer than any backtick run inside).

/// A backend beside the faulty one, with what it did on the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BackendStatus {
    /// Its name (`ort`, `tract`, `reference`...).
    pub name: String,
    /// Its version.
    pub version: String,
    /// What it did, one line (`agrees with the reference`, `crash: SIGSEGV`...).
    pub status: String,
}

/// The op a finding was localized to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocalizedOp {
    /// Op type (`Conv`).
    pub op_type: String,
    /// The name of the node's (first) output.
    pub node_output: String,
    /// Its attributes, as text (`kernel_shape=[3, 3], pads=[1, 1, 1, 1]`), empty if none.
    pub attributes: String,
}

/// One node of the minimal model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeLine {
    /// Op type (with its domain when not the default one).
    pub op_type: String,
    /// Input value names (empty strings for omitted optional inputs).
    pub inputs: Vec<String>,
    /// Output value names.
    pub outputs: Vec<String>,
    /// Attributes as text, empty if none.
    pub attributes: String,
}

/// A graph input or output with its type.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValueLine {
    /// Value name.
    pub name: String,
    /// Its type as text (`float32[1, 3, 8, 8]`).
    pub ty: String,
}

/// What the minimal model is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelDescription {
    /// The model file in the bundle (`minimized.onnx`).
    pub file: String,
    /// Opset imports as text (`ai.onnx 17`), empty if not given.
    pub opset: String,
    /// Graph inputs.
    pub inputs: Vec<ValueLine>,
    /// Graph outputs.
    pub outputs: Vec<ValueLine>,
    /// Nodes in topological order.
    pub nodes: Vec<NodeLine>,
}

/// Expected vs actual for one output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Output name.
    pub output: String,
    /// The reference's first values, as text.
    pub expected: String,
    /// The faulty backend's first values, as text.
    pub actual: String,
    /// Max absolute error, when computed.
    pub max_abs: Option<f64>,
    /// Max relative error, when computed.
    pub max_rel: Option<f64>,
}

/// How the finding was found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Provenance {
    /// The seed model (name or file).
    pub seed: String,
    /// The campaign iteration of the first hit.
    pub iteration: u64,
    /// The mutation operators applied to the seed, in order.
    pub operators: Vec<String>,
    /// How many mutants hit this bug.
    pub hits: u64,
    /// When it was first seen (as text: a time or an iteration).
    pub first_seen: String,
    /// When it was last seen.
    pub last_seen: String,
}

/// What minimization did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Minimization {
    /// Nodes of the mutant the bug was found on.
    pub nodes_before: usize,
    /// Nodes of the minimal model.
    pub nodes_after: usize,
}

/// Everything `report.md` says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportSpec {
    /// Issue title, one line.
    pub title: String,
    /// The faulty backend's name.
    pub faulty: String,
    /// Its version.
    pub faulty_version: String,
    /// The other backends run on the same model.
    pub others: Vec<BackendStatus>,
    /// Platform as text (OS, CPU), empty if not given.
    pub platform: String,
    /// `crash`, `nan`, `inconsistency`, `hang`, `slow`, `memory`, `flaky`.
    pub kind: String,
    /// Where it failed (`load`, `compile`, `run`), when known.
    pub stage: Option<String>,
    /// One or two sentences saying what goes wrong.
    pub summary: String,
    /// The op the bug was localized to.
    pub localized: Option<LocalizedOp>,
    /// The minimal model.
    pub model: ModelDescription,
    /// Expected vs actual, per output (section omitted when empty).
    pub comparisons: Vec<Comparison>,
    /// The error message or crash text.
    pub error: Option<String>,
    /// Steps to reproduce: (what it does, shell command).
    pub steps: Vec<(String, String)>,
    /// How mutagraph found it.
    pub provenance: Option<Provenance>,
    /// What minimization did.
    pub minimization: Option<Minimization>,
}

/// Escapes plain text for markdown (one line: newlines become spaces): emphasis, code, table
/// and HTML characters; `[` when the text could form a link.
pub(crate) fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // A link needs `](`: escaping `[` keeps text from turning into one.
    let link = s.contains("](") || s.contains("][");
    for c in s.chars() {
        match c {
            '[' if link => out.push_str("\\["),
            '\\' | '`' | '*' | '_' | '|' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for a table cell: prose escaping, and line breaks as `<br>`.
pub(crate) fn escape_cell(s: &str) -> String {
    s.lines().map(escape_text).collect::<Vec<_>>().join("<br>")
}

/// An inline code span holding `s` (newlines become spaces; `|` is escaped so that the span
/// is safe in a table cell too — GitHub removes the backslash inside code spans in tables).
pub(crate) fn code(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    let longest = longest_run(&s, '`');
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') || s.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// A code span for a table cell (`|` escaped).
fn code_cell(s: &str) -> String {
    code(s).replace('|', "\\|")
}

fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in s.chars() {
        if c == ch {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// A fenced code block holding `body`.
fn fenced(lang: &str, body: &str) -> String {
    let fence = "`".repeat(longest_run(body, '`').max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}\n", body.trim_end_matches('\n'))
}

fn metric(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |v| format!("{v:.3e}"))
}

/// The text of `report.md` for `spec` (see the [module documentation](self)).
pub fn render_report_md(spec: &ReportSpec) -> String {
    let mut s = String::new();
    s.push_str(&format!("# {}\n\n", escape_text(&spec.title)));

    s.push_str("## Summary\n\n");
    if !spec.summary.is_empty() {
        s.push_str(&format!("{}\n\n", escape_text(&spec.summary)));
    }
    s.push_str(&format!("- Kind: {}\n", escape_text(&spec.kind)));
    s.push_str(&format!(
        "- Backend: {} {}\n",
        code(&spec.faulty),
        escape_text(&spec.faulty_version)
    ));
    if let Some(stage) = &spec.stage {
        s.push_str(&format!("- Stage: {}\n", escape_text(stage)));
    }
    if let Some(op) = &spec.localized {
        s.push_str(&format!(
            "- Localized to: {} node producing {}\n",
            code(&op.op_type),
            code(&op.node_output)
        ));
    }
    s.push('\n');

    s.push_str("## Environment\n\n");
    if !spec.platform.is_empty() {
        s.push_str(&format!("Platform: {}\n\n", escape_text(&spec.platform)));
    }
    s.push_str("| backend | version | result |\n|---|---|---|\n");
    s.push_str(&format!(
        "| {} (faulty) | {} | {} |\n",
        code_cell(&spec.faulty),
        escape_cell(&spec.faulty_version),
        escape_cell(&spec.kind)
    ));
    for b in &spec.others {
        s.push_str(&format!(
            "| {} | {} | {} |\n",
            code_cell(&b.name),
            escape_cell(&b.version),
            escape_cell(&b.status)
        ));
    }
    s.push('\n');

    let m = &spec.model;
    s.push_str("## Minimal model\n\n");
    let mut facts = Vec::new();
    if !m.file.is_empty() {
        facts.push(format!("File: {}", code(&m.file)));
    }
    if !m.opset.is_empty() {
        facts.push(format!("opset: {}", escape_text(&m.opset)));
    }
    facts.push(format!(
        "{} node{}",
        m.nodes.len(),
        if m.nodes.len() == 1 { "" } else { "s" }
    ));
    s.push_str(&format!("{}.\n\n", facts.join(", ")));
    for (label, values) in [("Inputs", &m.inputs), ("Outputs", &m.outputs)] {
        if values.is_empty() {
            continue;
        }
        s.push_str(&format!("{label}:\n"));
        for v in values {
            s.push_str(&format!("- {}: {}\n", code(&v.name), code(&v.ty)));
        }
        s.push('\n');
    }
    if !m.nodes.is_empty() {
        let lines: Vec<String> = m
            .nodes
            .iter()
            .map(|n| {
                let mut line = format!(
                    "{} = {}({})",
                    n.outputs.join(", "),
                    n.op_type,
                    n.inputs.join(", ")
                );
                if !n.attributes.is_empty() {
                    line.push_str(&format!("  {{{}}}", n.attributes));
                }
                line
            })
            .collect();
        s.push_str(&fenced("", &lines.join("\n")));
        s.push('\n');
    }

    s.push_str("## Steps to reproduce\n\n");
    for (i, (label, command)) in spec.steps.iter().enumerate() {
        s.push_str(&format!("{}. {}\n\n", i + 1, escape_text(label)));
        for line in fenced("sh", command).lines() {
            s.push_str(&format!("   {line}\n"));
        }
        s.push('\n');
    }

    if !spec.comparisons.is_empty() {
        s.push_str("## Expected vs actual\n\n");
        s.push_str(&format!(
            "| output | expected (reference) | actual ({}) | max abs error | max rel error |\n\
             |---|---|---|---|---|\n",
            escape_cell(&spec.faulty)
        ));
        for c in &spec.comparisons {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                code_cell(&c.output),
                escape_cell(&c.expected),
                escape_cell(&c.actual),
                metric(c.max_abs),
                metric(c.max_rel)
            ));
        }
        s.push('\n');
    }

    if spec.localized.is_some() || spec.error.is_some() || spec.minimization.is_some() {
        s.push_str("## Details\n\n");
        if let Some(op) = &spec.localized {
            s.push_str(&format!(
                "Localized to the {} node producing {}",
                code(&op.op_type),
                code(&op.node_output)
            ));
            if op.attributes.is_empty() {
                s.push_str(".\n\n");
            } else {
                s.push_str(&format!(" (attributes {}).\n\n", code(&op.attributes)));
            }
        }
        if let Some(err) = &spec.error {
            s.push_str("Error:\n\n");
            s.push_str(&fenced("text", err));
            s.push('\n');
        }
        if let Some(min) = &spec.minimization {
            s.push_str(&format!(
                "Minimized from {} to {} nodes.\n\n",
                min.nodes_before, min.nodes_after
            ));
        }
    }

    if let Some(p) = &spec.provenance {
        s.push_str("## Provenance\n\n");
        s.push_str(
            "Found by mutagraph, a fuzzer that mutates ONNX graphs and \
             compares backends with a float64 reference interpreter.\n\n",
        );
        s.push_str(&format!("- Seed model: {}\n", code(&p.seed)));
        s.push_str(&format!("- Iteration: {}\n", p.iteration));
        if !p.operators.is_empty() {
            let ops: Vec<String> = p.operators.iter().map(|o| code(o)).collect();
            s.push_str(&format!("- Mutation operators: {}\n", ops.join(", ")));
        }
        s.push_str(&format!("- Hits: {}\n", p.hits));
        s.push_str(&format!(
            "- First seen: {}; last seen: {}\n",
            escape_text(&p.first_seen),
            escape_text(&p.last_seen)
        ));
        s.push('\n');
    }
    s.truncate(s.trim_end().len());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_survive_backticks() {
        assert_eq!(code("x"), "`x`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`a"), "`` `a ``");
        assert_eq!(code_cell("a|b"), "`a\\|b`");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape_text("a_b *c* <T> | #1 [x]"),
            "a\\_b \\*c\\* &lt;T&gt; \\| #1 [x]"
        );
        assert_eq!(escape_cell("x|y\nz"), "x\\|y<br>z");
    }

    #[test]
    fn fences_outgrow_the_body() {
        let f = fenced("", "a ``` b");
        assert!(f.starts_with("````\n"), "{f}");
        assert!(f.ends_with("\n````\n"), "{f}");
    }
}
