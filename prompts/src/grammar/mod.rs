//! Grammars for constrained decoding: a small AST of named rules ([`Grammar`], [`Expr`]),
//! printed in llama.cpp's GBNF syntax ([`Grammar::to_gbnf`]), checked ([`Grammar::check`])
//! and sampled ([`Grammar::sample`]: a random sentence, to test what a grammar allows without a
//! model).
//!
//! Two builders: [`json::from_schema`] (JSON text following a JSON-schema subset, for answers
//! such as ATOC's) and [`onnx_text::grammar`] (an ONNX text model holding a node of a chosen
//! op, with legal attributes and consistent types, built from the op registry).
//!
//! GBNF rule names may only hold ASCII letters, digits and `-`; [`Grammar::check`] refuses
//! other names.

pub mod json;
pub mod onnx_text;

use mutagraph_ir::rng::SplitMix64;
use std::collections::HashMap;
use std::fmt::Write as _;

/// What goes wrong building, checking or sampling a grammar.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GrammarError {
    /// A rule refers to a rule the grammar does not define.
    #[error("rule '{rule}' refers to '{missing}', which is not defined")]
    Undefined {
        /// The referring rule.
        rule: String,
        /// The missing name.
        missing: String,
    },
    /// The root rule is not defined.
    #[error("the root rule '{0}' is not defined")]
    NoRoot(String),
    /// A rule is defined twice.
    #[error("rule '{0}' is defined twice")]
    Duplicate(String),
    /// A rule name GBNF cannot spell (only ASCII letters, digits and '-').
    #[error("rule name '{0}' is not a GBNF name (ASCII letters, digits and '-' only)")]
    BadName(String),
    /// A rule that derives no finite sentence (an empty alternation, a class without
    /// characters, a repetition whose `max` is below its `min`, or recursion without an exit).
    #[error("rule '{0}' derives no finite sentence")]
    Empty(String),
    /// A JSON schema the converter does not handle.
    #[error("JSON schema at {path}: {problem}")]
    Schema {
        /// Where in the schema (a JSON pointer).
        path: String,
        /// What is not supported or wrong.
        problem: String,
    },
    /// An op that gets no ONNX text grammar.
    #[error("op '{op}' at opset {opset}: {reason}")]
    Op {
        /// The op type.
        op: String,
        /// The opset asked for.
        opset: i64,
        /// Why it has no grammar.
        reason: String,
    },
    /// A task without ops.
    #[error("the task names no op")]
    NoOps,
}

/// An expression of a rule's right-hand side.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal string.
    Lit(String),
    /// One character of inclusive ranges (`[a-z0-9]`), or of none of them when `negated`.
    Class {
        /// Inclusive character ranges (a single character is `(c, c)`).
        ranges: Vec<(char, char)>,
        /// `[^...]`: any character outside the ranges.
        negated: bool,
    },
    /// A reference to a named rule.
    Ref(String),
    /// Each in turn (the empty sequence is the empty string).
    Seq(Vec<Expr>),
    /// One of these.
    Alt(Vec<Expr>),
    /// The expression `min` to `max` times (`None`: unbounded).
    Repeat {
        /// What is repeated.
        expr: Box<Expr>,
        /// Least count.
        min: u32,
        /// Greatest count (`None`: no bound; [`Grammar::sample`] stops at `min + 3`).
        max: Option<u32>,
    },
}

impl Expr {
    /// A literal.
    pub fn lit(s: impl Into<String>) -> Expr {
        Expr::Lit(s.into())
    }
    /// A reference to rule `name`.
    pub fn r(name: impl Into<String>) -> Expr {
        Expr::Ref(name.into())
    }
    /// A sequence.
    pub fn seq(items: impl IntoIterator<Item = Expr>) -> Expr {
        Expr::Seq(items.into_iter().collect())
    }
    /// An alternation.
    pub fn alt(items: impl IntoIterator<Item = Expr>) -> Expr {
        Expr::Alt(items.into_iter().collect())
    }
    /// One of the literals.
    pub fn lits<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Expr {
        Expr::Alt(items.into_iter().map(|s| Expr::Lit(s.into())).collect())
    }
    /// A class of inclusive ranges.
    pub fn class(ranges: &[(char, char)]) -> Expr {
        Expr::Class {
            ranges: ranges.to_vec(),
            negated: false,
        }
    }
    /// Any character outside the ranges.
    pub fn not_class(ranges: &[(char, char)]) -> Expr {
        Expr::Class {
            ranges: ranges.to_vec(),
            negated: true,
        }
    }
    /// `min` to `max` repetitions.
    pub fn repeat(self, min: u32, max: Option<u32>) -> Expr {
        Expr::Repeat {
            expr: Box::new(self),
            min,
            max,
        }
    }
    /// Zero or one.
    pub fn opt(self) -> Expr {
        self.repeat(0, Some(1))
    }

    fn refs<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Ref(n) => out.push(n),
            Expr::Seq(v) | Expr::Alt(v) => v.iter().for_each(|e| e.refs(out)),
            Expr::Repeat { expr, .. } => expr.refs(out),
            Expr::Lit(_) | Expr::Class { .. } => {}
        }
    }
}

/// A grammar: named rules (in the order they were added) and the root rule's name.
#[derive(Clone, Debug, PartialEq)]
pub struct Grammar {
    rules: Vec<(String, Expr)>,
    root: String,
}

/// Whether `name` is a GBNF rule name.
pub fn is_rule_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Turns any text into a GBNF rule name (other characters become `-`).
pub fn rule_name(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if s.is_empty() { "r".into() } else { s }
}

impl Grammar {
    /// An empty grammar whose root rule will be `root`.
    pub fn new(root: impl Into<String>) -> Grammar {
        Grammar {
            rules: Vec::new(),
            root: root.into(),
        }
    }

    /// Adds (or replaces) rule `name`.
    pub fn rule(&mut self, name: impl Into<String>, expr: Expr) -> &mut Grammar {
        let name = name.into();
        match self.rules.iter_mut().find(|(n, _)| *n == name) {
            Some(r) => r.1 = expr,
            None => self.rules.push((name, expr)),
        }
        self
    }

    /// Whether rule `name` is defined.
    pub fn has(&self, name: &str) -> bool {
        self.rules.iter().any(|(n, _)| n == name)
    }

    /// The root rule's name.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[(String, Expr)] {
        &self.rules
    }

    /// Checks that names are GBNF names, defined once, that the root and every referenced rule
    /// are defined, and that every rule derives a finite sentence.
    pub fn check(&self) -> Result<(), GrammarError> {
        let mut seen = HashMap::new();
        for (n, _) in &self.rules {
            if !is_rule_name(n) {
                return Err(GrammarError::BadName(n.clone()));
            }
            if seen.insert(n.as_str(), ()).is_some() {
                return Err(GrammarError::Duplicate(n.clone()));
            }
        }
        if !seen.contains_key(self.root.as_str()) {
            return Err(GrammarError::NoRoot(self.root.clone()));
        }
        for (n, e) in &self.rules {
            let mut refs = Vec::new();
            e.refs(&mut refs);
            if let Some(m) = refs.into_iter().find(|r| !seen.contains_key(r)) {
                return Err(GrammarError::Undefined {
                    rule: n.clone(),
                    missing: m.to_string(),
                });
            }
        }
        let h = self.heights();
        if let Some((n, _)) = self.rules.iter().find(|(n, _)| h[n.as_str()].is_none()) {
            return Err(GrammarError::Empty(n.clone()));
        }
        Ok(())
    }

    /// Per rule, the least depth of rule references of a finite derivation (`None`: none).
    fn heights(&self) -> HashMap<&str, Option<u32>> {
        let mut h: HashMap<&str, Option<u32>> =
            self.rules.iter().map(|(n, _)| (n.as_str(), None)).collect();
        loop {
            let mut changed = false;
            for (n, e) in &self.rules {
                let v = height(e, &h).map(|x| x + 1);
                if v.is_some() && (h[n.as_str()].is_none() || v < h[n.as_str()]) {
                    h.insert(n, v);
                    changed = true;
                }
            }
            if !changed {
                return h;
            }
        }
    }

    /// The grammar in llama.cpp's GBNF syntax: one `name ::= expression` line per rule, the
    /// root first.
    pub fn to_gbnf(&self) -> String {
        let mut out = String::new();
        let root = self.rules.iter().filter(|(n, _)| *n == self.root);
        let rest = self.rules.iter().filter(|(n, _)| *n != self.root);
        for (n, e) in root.chain(rest) {
            let _ = writeln!(out, "{n} ::= {}", gbnf(e, Ctx::Top));
        }
        out
    }

    /// A random sentence of the grammar, the same for the same seed. Unbounded repetitions
    /// stop at `min + 3`; past a depth of 64 rule references each choice takes the shortest
    /// way out, so sampling always ends. Errors are those of [`Grammar::check`].
    pub fn sample(&self, seed: u64) -> Result<String, GrammarError> {
        self.check()?;
        let h = self.heights();
        let rules: HashMap<&str, &Expr> = self.rules.iter().map(|(n, e)| (n.as_str(), e)).collect();
        let mut s = Sampler {
            rng: SplitMix64::from_state(seed),
            rules,
            heights: h,
            out: String::new(),
        };
        s.rule(&self.root, 0);
        Ok(s.out)
    }
}

/// Least derivation height of an expression given the rules' heights.
fn height(e: &Expr, h: &HashMap<&str, Option<u32>>) -> Option<u32> {
    match e {
        Expr::Lit(_) => Some(0),
        Expr::Class { ranges, negated } => {
            (*negated || ranges.iter().any(|(a, b)| a <= b)).then_some(0)
        }
        Expr::Ref(n) => h.get(n.as_str()).copied().flatten(),
        Expr::Seq(v) => v.iter().try_fold(0, |m, x| height(x, h).map(|y| m.max(y))),
        Expr::Alt(v) => v.iter().filter_map(|x| height(x, h)).min(),
        Expr::Repeat { expr, min, max } => {
            if max.is_some_and(|m| m < *min) {
                None
            } else if *min == 0 {
                Some(0)
            } else {
                height(expr, h)
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    /// A rule's whole right-hand side.
    Top,
    /// An alternative of an alternation (a nested alternation keeps its parentheses, so the
    /// text reads back to the same tree).
    Alt,
    /// An item of a sequence.
    Seq,
    /// The operand of a repetition.
    Atom,
}

fn gbnf(e: &Expr, ctx: Ctx) -> String {
    match e {
        Expr::Lit(s) => {
            let mut o = String::from("\"");
            for c in s.chars() {
                escape_char(&mut o, c, false);
            }
            o.push('"');
            o
        }
        Expr::Class { ranges, negated } => {
            let mut o = String::from(if *negated { "[^" } else { "[" });
            for &(a, b) in ranges {
                escape_char(&mut o, a, true);
                if a != b {
                    o.push('-');
                    escape_char(&mut o, b, true);
                }
            }
            o.push(']');
            o
        }
        Expr::Ref(n) => n.clone(),
        Expr::Seq(v) if v.is_empty() => "\"\"".into(),
        Expr::Seq(v) if v.len() == 1 => gbnf(&v[0], ctx),
        Expr::Seq(v) => {
            let s = v
                .iter()
                .map(|x| gbnf(x, Ctx::Seq))
                .collect::<Vec<_>>()
                .join(" ");
            if ctx == Ctx::Atom {
                format!("({s})")
            } else {
                s
            }
        }
        Expr::Alt(v) if v.len() == 1 => gbnf(&v[0], ctx),
        Expr::Alt(v) => {
            let s = v
                .iter()
                .map(|x| gbnf(x, Ctx::Alt))
                .collect::<Vec<_>>()
                .join(" | ");
            if ctx == Ctx::Top { s } else { format!("({s})") }
        }
        Expr::Repeat { expr, min, max } => {
            let inner = gbnf(expr, Ctx::Atom);
            let op = match (min, max) {
                (0, Some(1)) => "?".to_string(),
                (0, None) => "*".to_string(),
                (1, None) => "+".to_string(),
                (m, None) => format!("{{{m},}}"),
                (m, Some(n)) if m == n => format!("{{{m}}}"),
                (m, Some(n)) => format!("{{{m},{n}}}"),
            };
            format!("{inner}{op}")
        }
    }
}

/// Appends `c` as GBNF writes it inside a literal or (`in_class`) a character class.
fn escape_char(o: &mut String, c: char, in_class: bool) {
    match c {
        '\n' => o.push_str("\\n"),
        '\r' => o.push_str("\\r"),
        '\t' => o.push_str("\\t"),
        '\\' => o.push_str("\\\\"),
        '"' if !in_class => o.push_str("\\\""),
        ']' | '[' | '-' | '^' if in_class => {
            o.push('\\');
            o.push(c);
        }
        c if (c as u32) < 0x20 || c as u32 == 0x7f => {
            let _ = write!(o, "\\x{:02X}", c as u32);
        }
        c => o.push(c),
    }
}

struct Sampler<'g> {
    rng: SplitMix64,
    rules: HashMap<&'g str, &'g Expr>,
    heights: HashMap<&'g str, Option<u32>>,
    out: String,
}

/// Past this depth of rule references, sampling takes the shortest way out.
const MAX_DEPTH: u32 = 64;

impl<'g> Sampler<'g> {
    fn rule(&mut self, name: &str, depth: u32) {
        if let Some(e) = self.rules.get(name).copied() {
            self.expr(e, depth + 1);
        }
    }

    fn expr(&mut self, e: &'g Expr, depth: u32) {
        match e {
            Expr::Lit(s) => self.out.push_str(s),
            Expr::Class { ranges, negated } => {
                let c = if *negated {
                    // Printable ASCII outside the ranges.
                    let ok: Vec<char> = (' '..='~')
                        .filter(|c| !ranges.iter().any(|(a, b)| a <= c && c <= b))
                        .collect();
                    ok.get(self.rng.below(ok.len() as u64) as usize).copied()
                } else {
                    let ranges: Vec<&(char, char)> =
                        ranges.iter().filter(|(a, b)| a <= b).collect();
                    let total: u64 = ranges
                        .iter()
                        .map(|(a, b)| (*b as u64) - (*a as u64) + 1)
                        .sum();
                    let mut k = self.rng.below(total);
                    let mut pick = None;
                    for (a, b) in ranges {
                        let n = (*b as u64) - (*a as u64) + 1;
                        if k < n {
                            pick = char::from_u32(*a as u32 + k as u32);
                            break;
                        }
                        k -= n;
                    }
                    pick
                };
                if let Some(c) = c {
                    self.out.push(c);
                }
            }
            Expr::Ref(n) => self.rule(n, depth),
            Expr::Seq(v) => v.iter().for_each(|x| self.expr(x, depth)),
            Expr::Alt(v) => {
                let live: Vec<(&'g Expr, u32)> = v
                    .iter()
                    .filter_map(|x| height(x, &self.heights).map(|h| (x, h)))
                    .collect();
                let pool: Vec<&'g Expr> = if depth > MAX_DEPTH {
                    let least = live.iter().map(|(_, h)| *h).min().unwrap_or(0);
                    live.iter()
                        .filter(|(_, h)| *h == least)
                        .map(|(x, _)| *x)
                        .collect()
                } else {
                    live.iter().map(|(x, _)| *x).collect()
                };
                if let Some(x) = pool.get(self.rng.below(pool.len() as u64) as usize) {
                    self.expr(x, depth);
                }
            }
            Expr::Repeat { expr, min, max } => {
                let hi = if depth > MAX_DEPTH {
                    *min
                } else {
                    max.unwrap_or(min + 3)
                };
                let n = min + self.rng.below(u64::from(hi.saturating_sub(*min)) + 1) as u32;
                for _ in 0..n {
                    self.expr(expr, depth);
                }
            }
        }
    }
}

/// Any non-empty subset of `items`, in order, joined by `sep`; items marked required are in
/// every subset. Rules are named `{prefix}-a{i}` and `{prefix}-t{i}`; the returned expression
/// derives a non-empty list (wrap it in an optional when none is required). `None` when
/// `items` is empty.
pub(crate) fn ordered_subset(
    g: &mut Grammar,
    prefix: &str,
    items: &[(Expr, bool)],
    sep: &str,
) -> Option<Expr> {
    let n = items.len();
    if n == 0 {
        return None;
    }
    // t{i}: the rest of the list from item i on, after at least one item was written.
    g.rule(format!("{prefix}-t{n}"), Expr::Seq(vec![]));
    for i in (0..n).rev() {
        let (e, req) = &items[i];
        let next = Expr::r(format!("{prefix}-t{}", i + 1));
        let take = Expr::seq([Expr::lit(sep), e.clone(), next.clone()]);
        g.rule(
            format!("{prefix}-t{i}"),
            if *req { take } else { Expr::alt([take, next]) },
        );
    }
    // a{i}: the list from item i on, nothing written yet (non-empty).
    for i in (0..n).rev() {
        let (e, req) = &items[i];
        let take = Expr::seq([e.clone(), Expr::r(format!("{prefix}-t{}", i + 1))]);
        let e = if *req || i == n - 1 {
            take
        } else {
            Expr::alt([take, Expr::r(format!("{prefix}-a{}", i + 1))])
        };
        g.rule(format!("{prefix}-a{i}"), e);
    }
    Some(Expr::r(format!("{prefix}-a0")))
}
