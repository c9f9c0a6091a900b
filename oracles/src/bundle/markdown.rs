//! `REPORT.md`: the text of an upstream issue, ready to paste: concise, factual, in the
//! library's own terms.
//!
//! Sections, in order: the title; a summary in plain words with the facts (library and
//! version, which of its configurations show the bug and which do not, the op); what the ONNX
//! specification says (in our words); a self-contained snippet; the model; the values that
//! matter (inputs and weights); expected vs actual; the error text; steps to reproduce with
//! the bundle's files; the environment; what other libraries did; how the bug was found (hits,
//! first and last seen).
//!
//! Text fields are plain text: markdown characters in them are escaped (`\*`, `\|`, `\<b`...)
//! so that they render as written. Names, types, attributes and commands are shown as code
//! (spans or fenced blocks, whose fences are longer than any backtick run inside).

/// Another backend run on the same model, with what it did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BackendStatus {
    /// Its name (`ort-noopt`, `tract`, ...).
    pub name: String,
    /// Its version.
    pub version: String,
    /// What it did, one line (`same result as expected`, `error: ...`).
    pub status: String,
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

/// A value that matters (a graph input or a weight), as shown in the report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShownValue {
    /// `input` or `weight`.
    pub role: String,
    /// Its name.
    pub name: String,
    /// Its type (`float32[2, 3]`).
    pub ty: String,
    /// Its values in full when small, else a summary (range, special values).
    pub text: String,
}

/// Expected vs actual for one output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Output name.
    pub output: String,
    /// The expected values, as text (the differing elements first when there are few).
    pub expected: String,
    /// The faulty library's values, as text.
    pub actual: String,
    /// Max absolute error, when computed.
    pub max_abs: Option<f64>,
    /// Elements outside the expected values, of all.
    pub wrong: Option<(usize, usize)>,
}

/// How the bug was found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Provenance {
    /// The seed model (name or file).
    pub seed: String,
    /// How the seed was derived from the user's model (a window of it, reduced), when it was.
    pub derived: Option<String>,
    /// The campaign iteration of the first hit.
    pub iteration: u64,
    /// The mutation operators applied to the seed, in order.
    pub operators: Vec<String>,
    /// How many generated models hit this bug.
    pub hits: u64,
    /// When it was first seen (as text: a time or an iteration).
    pub first_seen: String,
    /// When it was last seen.
    pub last_seen: String,
    /// Hits per set of configurations that showed it.
    pub variants: Vec<(String, u64)>,
    /// Hits per op (a missing element type lists every op found lacking it).
    pub ops: Vec<(String, u64)>,
}

/// What minimization did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Minimization {
    /// Nodes of the model the bug was found on.
    pub nodes_before: usize,
    /// Nodes of the minimal model.
    pub nodes_after: usize,
}

/// Everything `REPORT.md` says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportSpec {
    /// Issue title, one line: the library, the op, what goes wrong and its trigger.
    pub title: String,
    /// One or two sentences in plain words.
    pub summary: String,
    /// Facts, as (label, text) lines (library and version, configurations, op, ...).
    pub facts: Vec<(String, String)>,
    /// What the ONNX specification says, in our words, one point per entry.
    pub spec: Vec<String>,
    /// A self-contained snippet: (language, code).
    pub snippet: Option<(String, String)>,
    /// The minimal model.
    pub model: ModelDescription,
    /// The values that matter.
    pub values: Vec<ShownValue>,
    /// Expected vs actual, per output (section omitted when empty).
    pub comparisons: Vec<Comparison>,
    /// The error message or crash text.
    pub error: Option<String>,
    /// Steps to reproduce: (what it does, shell command).
    pub steps: Vec<(String, String)>,
    /// Environment: (label, text).
    pub environment: Vec<(String, String)>,
    /// The other backends run on the same model.
    pub others: Vec<BackendStatus>,
    /// How the bug was found.
    pub provenance: Option<Provenance>,
    /// What minimization did.
    pub minimization: Option<Minimization>,
    /// What a search of the library's issue tracker found.
    pub upstream: Upstream,
}

/// The "Possibly known upstream" section: a search of the library's issue tracker for the op
/// and the message (a match of words, not a verdict).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Upstream {
    /// Not searched (the search needs network access and is off by default).
    #[default]
    NotChecked,
    /// The search was made and failed (no network, a refusal of the server).
    Failed {
        /// The search, as sent.
        query: String,
        /// What went wrong.
        error: String,
    },
    /// The search was made.
    Searched {
        /// The search, as sent.
        query: String,
        /// The issues it found, closest first: (number, title, state, address).
        issues: Vec<(u64, String, String, String)>,
    },
}

/// Escapes plain text for markdown (one line: newlines become spaces): emphasis, code and
/// table characters; `[` when the text could form a link; `<` where it could open an HTML tag,
/// `&` where it could start a character reference and `>` where it could open a quote, each
/// with a backslash. Text copied from the rendered page or the raw file reads the same: an
/// issue title `min <= max` stays that, not `min &lt;= max`.
pub(crate) fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // A link needs `](`: escaping `[` keeps text from turning into one.
    let link = s.contains("](") || s.contains("][");
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let escape = match c {
            '[' => link,
            '\\' | '`' | '*' | '_' | '|' => true,
            '<' => next.is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')),
            '&' => next.is_some_and(|n| n.is_ascii_alphanumeric() || n == '#'),
            '>' => out.trim_end().is_empty(),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(if matches!(c, '\n' | '\r') { ' ' } else { c });
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

/// The text of `REPORT.md` for `spec` (see the [module documentation](self)).
pub fn render_report_md(spec: &ReportSpec) -> String {
    let mut s = String::new();
    summary_section(&mut s, spec);
    spec_section(&mut s, spec);
    snippet_section(&mut s, spec);
    comparisons_section(&mut s, spec);
    error_section(&mut s, spec);
    model_section(&mut s, spec);
    steps_section(&mut s, spec);
    environment_section(&mut s, spec);
    others_section(&mut s, spec);
    upstream_section(&mut s, &spec.upstream);
    if let Some(p) = &spec.provenance {
        provenance_section(&mut s, p);
    }
    s.truncate(s.trim_end().len());
    s.push('\n');
    s
}

/// `- label: text` lines, one per pair, escaped.
fn label_lines(s: &mut String, pairs: &[(String, String)]) {
    for (label, text) in pairs {
        s.push_str(&format!(
            "- {}: {}\n",
            escape_text(label),
            escape_text(text)
        ));
    }
}

/// The title, the summary and the facts.
fn summary_section(s: &mut String, spec: &ReportSpec) {
    s.push_str(&format!("# {}\n\n", escape_text(&spec.title)));

    if !spec.summary.is_empty() {
        s.push_str(&format!("{}\n\n", escape_text(&spec.summary)));
    }
    label_lines(s, &spec.facts);
    if !spec.facts.is_empty() {
        s.push('\n');
    }
}

fn spec_section(s: &mut String, spec: &ReportSpec) {
    if !spec.spec.is_empty() {
        s.push_str("## What the ONNX specification says\n\n");
        for p in &spec.spec {
            s.push_str(&format!("- {}\n", escape_text(p)));
        }
        s.push('\n');
    }
}

fn snippet_section(s: &mut String, spec: &ReportSpec) {
    if let Some((lang, code)) = &spec.snippet {
        s.push_str("## Reproduce in a few lines\n\n");
        s.push_str(&fenced(lang, code));
        s.push('\n');
    }
}

fn comparisons_section(s: &mut String, spec: &ReportSpec) {
    if !spec.comparisons.is_empty() {
        s.push_str("## Expected vs actual\n\n");
        s.push_str(
            "| output | expected | actual | wrong elements | max abs error |\n\
             |---|---|---|---|---|\n",
        );
        for c in &spec.comparisons {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                code_cell(&c.output),
                escape_cell(&c.expected),
                escape_cell(&c.actual),
                c.wrong
                    .map_or_else(|| "—".to_string(), |(w, n)| format!("{w} of {n}")),
                metric(c.max_abs)
            ));
        }
        s.push('\n');
    }
}

fn upstream_section(s: &mut String, u: &Upstream) {
    s.push_str("## Possibly known upstream\n\n");
    match u {
        Upstream::NotChecked => s.push_str(
            "Not checked: searching the library's issue tracker needs network access \
             (`mutagraph report DIR --known-upstream`).\n\n",
        ),
        Upstream::Failed { query, error } => s.push_str(&format!(
            "The search {} could not be made: {}.\n\n",
            code(query),
            escape_text(error)
        )),
        Upstream::Searched { query, issues } if issues.is_empty() => s.push_str(&format!(
            "The issue tracker's search {} finds no issue.\n\n",
            code(query)
        )),
        Upstream::Searched { query, issues } => {
            s.push_str(&format!(
                "The issue tracker's search {} finds these, closest first (a match of words, \
                 not a verdict):\n\n",
                code(query)
            ));
            for (number, title, state, url) in issues {
                // A link only to an address that cannot break out of it.
                let safe = url.starts_with("https://") || url.starts_with("http://");
                let safe = safe
                    && url
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "/:.-_#?=&%~+".contains(c));
                let number = if safe {
                    format!("[#{number}]({url})")
                } else {
                    format!("#{number}")
                };
                s.push_str(&format!(
                    "- {number} {} ({})\n",
                    escape_text(title),
                    escape_text(state)
                ));
            }
            s.push('\n');
        }
    }
}

fn error_section(s: &mut String, spec: &ReportSpec) {
    if let Some(err) = &spec.error {
        s.push_str("## Error\n\n");
        s.push_str(&fenced("text", err));
        s.push('\n');
    }
}

/// The model: its facts, its nodes as text, and the values that matter.
fn model_section(s: &mut String, spec: &ReportSpec) {
    let m = &spec.model;
    s.push_str("## The model\n\n");
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
    if let Some(min) = &spec.minimization {
        facts.push(format!("minimized from {} nodes", min.nodes_before));
    }
    s.push_str(&format!("{}.\n\n", facts.join(", ")));
    if !m.nodes.is_empty() {
        s.push_str(&fenced("", &model_lines(m).join("\n")));
        s.push('\n');
    }
    if !spec.values.is_empty() {
        s.push_str("Values:\n\n");
        for v in &spec.values {
            s.push_str(&format!(
                "- {} {} ({}): {}\n",
                escape_text(&v.role),
                code(&v.name),
                code(&v.ty),
                code(&v.text)
            ));
        }
        s.push('\n');
    }
}

/// The model as text: its inputs, one line per node, its outputs.
fn model_lines(m: &ModelDescription) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for v in &m.inputs {
        lines.push(format!("input  {}: {}", v.name, v.ty));
    }
    for n in &m.nodes {
        let mut line = format!(
            "{} = {}({})",
            n.outputs.join(", "),
            n.op_type,
            n.inputs.join(", ")
        );
        if !n.attributes.is_empty() {
            line.push_str(&format!("  {{{}}}", n.attributes));
        }
        lines.push(line);
    }
    for v in &m.outputs {
        lines.push(format!("output {}: {}", v.name, v.ty));
    }
    lines
}

fn steps_section(s: &mut String, spec: &ReportSpec) {
    if !spec.steps.is_empty() {
        s.push_str("## Steps to reproduce (with this bundle's files)\n\n");
        for (i, (label, command)) in spec.steps.iter().enumerate() {
            s.push_str(&format!("{}. {}\n\n", i + 1, escape_text(label)));
            for line in fenced("sh", command).lines() {
                s.push_str(&format!("   {line}\n"));
            }
            s.push('\n');
        }
    }
}

fn environment_section(s: &mut String, spec: &ReportSpec) {
    if !spec.environment.is_empty() {
        s.push_str("## Environment\n\n");
        label_lines(s, &spec.environment);
        s.push('\n');
    }
}

fn others_section(s: &mut String, spec: &ReportSpec) {
    if !spec.others.is_empty() {
        s.push_str("## Other libraries on the same model and inputs\n\n");
        s.push_str("| backend | version | result |\n|---|---|---|\n");
        for b in &spec.others {
            s.push_str(&format!(
                "| {} | {} | {} |\n",
                code_cell(&b.name),
                escape_cell(&b.version),
                escape_cell(&b.status)
            ));
        }
        s.push('\n');
    }
}

/// Names with their counts, as code: `` `a` (3), `b` (1) ``.
fn counted_codes(counts: &[(String, u64)]) -> String {
    counts
        .iter()
        .map(|(k, n)| format!("{} ({n})", code(k)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn provenance_section(s: &mut String, p: &Provenance) {
    s.push_str("## How it was found\n\n");
    s.push_str(
        "mutagraph, a fuzzer that mutates ONNX models and compares inference libraries with \
         each other and with ONNX's definitions, generated models that hit this bug.\n\n",
    );
    s.push_str(&format!("- Hits: {}\n", p.hits));
    s.push_str(&format!(
        "- First seen: {}; last seen: {}\n",
        escape_text(&p.first_seen),
        escape_text(&p.last_seen)
    ));
    if !p.variants.is_empty() {
        s.push_str(&format!(
            "- Configurations showing it: {}\n",
            counted_codes(&p.variants)
        ));
    }
    if p.ops.len() > 1 {
        s.push_str(&format!("- Ops: {}\n", counted_codes(&p.ops)));
    }
    s.push_str(&format!(
        "- First found on seed model {} at iteration {}",
        code(&p.seed),
        p.iteration
    ));
    if !p.operators.is_empty() {
        let ops: Vec<String> = p.operators.iter().map(|o| code(o)).collect();
        s.push_str(&format!(", after the mutations {}", ops.join(", ")));
    }
    if let Some(d) = &p.derived {
        s.push_str(&format!(
            "\n- That seed was derived from the user's model: {d}"
        ));
    }
    s.push_str("\n\n");
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
            "a\\_b \\*c\\* \\<T> \\| #1 [x]"
        );
        assert_eq!(escape_text("min <= max & x"), "min <= max & x");
        assert_eq!(escape_text("> a &amp; </b>"), "\\> a \\&amp; \\</b>");
        assert_eq!(escape_cell("x|y\nz"), "x\\|y<br>z");
    }

    #[test]
    fn fences_outgrow_the_body() {
        let f = fenced("", "a ``` b");
        assert!(f.starts_with("````\n"), "{f}");
        assert!(f.ends_with("\n````\n"), "{f}");
    }
}
