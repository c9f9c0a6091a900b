//! The parser: text to protobuf messages, then imported into the IR.
//!
//! One room per part of the syntax: `graph.rs` (models, graphs, functions, nodes), `attr.rs`
//! (attributes), `tensor_values.rs` (tensor constants and initializer values), `types.rs`
//! (types); the token helpers and the headers are here.
mod attr;
mod graph;
mod tensor_values;
mod types;

use super::TextError;
use super::lexer::{Tok, Token, lex};
use crate::graph::Graph;
use crate::model::Model;
use crate::pb;
use std::collections::HashSet;

type R<T> = Result<T, TextError>;

/// Graphs and types nest at most this deep (deeper texts are refused, not overflowed).
const MAX_DEPTH: usize = 32;

/// Parses a model: an optional `<key: value, ...>` header, the main graph, then functions.
pub fn parse_model(src: &str) -> Result<Model, TextError> {
    let mut p = Parser::new(src)?;
    let proto = p.model()?;
    crate::import::model_from_proto(proto).map_err(|e| TextError::new(1, 1, e.to_string()))
}

/// Parses a graph alone: `name (inputs) => (outputs) <initializers, value_info> { nodes }`.
pub fn parse_graph(src: &str) -> Result<Graph, TextError> {
    let mut p = Parser::new(src)?;
    let g = p.graph()?;
    p.expect_end("after the graph")?;
    crate::import::graph_from_proto(g, "graph").map_err(|e| TextError::new(1, 1, e.to_string()))
}

/// Parses one function: an optional `<domain: ..., opset_import: [...]>` header, then
/// `Name <attributes> (inputs) => (outputs) <value_info> { nodes }`.
pub fn parse_function(src: &str) -> Result<pb::FunctionProto, TextError> {
    let mut p = Parser::new(src)?;
    let f = p.function()?;
    p.expect_end("after the function")?;
    Ok(f)
}

/// A number as written: the literal with its sign, or `nan` / `inf`.
struct Num {
    text: String,
    float: bool,
    line: usize,
    col: usize,
}

impl Num {
    fn err(&self, msg: String) -> TextError {
        TextError::new(self.line, self.col, msg)
    }

    fn special(&self) -> Option<(bool, f64)> {
        let (neg, body) = match self.text.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, self.text.as_str()),
        };
        match body.to_ascii_lowercase().as_str() {
            "nan" => Some((neg, f64::NAN)),
            "inf" | "infinity" => Some((neg, f64::INFINITY)),
            _ => None,
        }
    }

    fn f32(&self) -> R<f32> {
        if let Some((neg, v)) = self.special() {
            let v = v as f32;
            return Ok(if neg { -v } else { v });
        }
        self.text
            .parse::<f32>()
            .map_err(|_| self.err(format!("'{}' is not a valid float", self.text)))
    }

    fn f64(&self) -> R<f64> {
        if let Some((neg, v)) = self.special() {
            return Ok(if neg { -v } else { v });
        }
        self.text
            .parse::<f64>()
            .map_err(|_| self.err(format!("'{}' is not a valid float", self.text)))
    }

    fn i64(&self, what: &str) -> R<i64> {
        if self.float {
            return Err(self.err(format!("{what} must be an integer, found {}", self.text)));
        }
        self.text
            .parse::<i64>()
            .map_err(|_| self.err(format!("{what}: {} is out of the int64 range", self.text)))
    }

    fn i32(&self, what: &str) -> R<i32> {
        let v = self.i64(what)?;
        i32::try_from(v).map_err(|_| self.err(format!("{what}: {v} is out of the int32 range")))
    }

    fn u64(&self, what: &str) -> R<u64> {
        if self.float {
            return Err(self.err(format!("{what} must be an integer, found {}", self.text)));
        }
        self.text
            .parse::<u64>()
            .map_err(|_| self.err(format!("{what}: {} is out of the uint64 range", self.text)))
    }
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn new(src: &str) -> R<Parser> {
        Ok(Parser {
            toks: lex(src)?,
            pos: 0,
            depth: 0,
        })
    }

    // ---- token helpers ----

    fn peek(&self) -> &Token {
        self.peek_n(0)
    }

    fn peek_n(&self, n: usize) -> &Token {
        // `lex` always ends with Eof, so the list is never empty.
        let last = self.toks.len() - 1;
        &self.toks[(self.pos + n).min(last)]
    }

    fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn is(&self, c: char) -> bool {
        self.peek().tok == Tok::Punct(c)
    }

    fn is_eof(&self) -> bool {
        self.peek().tok == Tok::Eof
    }

    fn eat(&mut self, c: char) -> bool {
        if self.is(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// An error at the next token: `expected WHAT, found TOKEN`.
    fn expected(&self, what: &str) -> TextError {
        let t = self.peek();
        TextError::new(
            t.line,
            t.col,
            format!("expected {what}, found {}", t.describe()),
        )
    }

    fn err_at(t: &Token, msg: impl Into<String>) -> TextError {
        TextError::new(t.line, t.col, msg)
    }

    fn expect(&mut self, c: char, ctx: &str) -> R<Token> {
        if self.is(c) {
            Ok(self.bump())
        } else {
            Err(self.expected(&format!("'{c}' {ctx}")))
        }
    }

    fn expect_end(&self, ctx: &str) -> R<()> {
        if self.is_eof() {
            Ok(())
        } else {
            Err(self.expected(&format!("the end of the text {ctx}")))
        }
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let t = self.peek();
            return Err(Self::err_at(
                t,
                format!("graphs or types nest deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// A name: an identifier or a quoted string.
    fn name(&mut self, what: &str) -> R<(String, Token)> {
        match &self.peek().tok {
            Tok::Ident(s) | Tok::Str(s) => {
                let s = s.clone();
                Ok((s, self.bump()))
            }
            _ => Err(self.expected(what)),
        }
    }

    fn string(&mut self, what: &str) -> R<String> {
        match &self.peek().tok {
            Tok::Str(s) => {
                let s = s.clone();
                self.bump();
                Ok(s)
            }
            _ => Err(self.expected(what)),
        }
    }

    /// A number, with an optional leading `-`; `nan`, `inf` and `infinity` count as numbers.
    fn number(&mut self, what: &str) -> R<Num> {
        let start = self.peek().clone();
        let neg = self.is('-');
        let t = self.peek_n(usize::from(neg)).clone();
        let (text, float) = match &t.tok {
            Tok::Int(s) => (s.clone(), false),
            Tok::Float(s) => (s.clone(), true),
            Tok::Ident(s)
                if matches!(s.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity") =>
            {
                (s.clone(), true)
            }
            _ => {
                if neg {
                    self.bump();
                }
                return Err(self.expected(what));
            }
        };
        self.bump();
        if neg {
            self.bump();
        }
        Ok(Num {
            text: if neg { format!("-{text}") } else { text },
            float,
            line: start.line,
            col: start.col,
        })
    }

    fn int(&mut self, what: &str) -> R<i64> {
        let n = self.number(what)?;
        n.i64(what)
    }

    /// `part ('.' part)*` where a part is an identifier or a quoted string (for domains and
    /// op types that are not identifiers).
    fn qualified(&mut self, what: &str) -> R<Vec<String>> {
        let mut parts = Vec::new();
        loop {
            match &self.peek().tok {
                Tok::Ident(s) | Tok::Str(s) => {
                    parts.push(s.clone());
                    self.bump();
                }
                _ => return Err(self.expected(what)),
            }
            if !self.eat('.') {
                return Ok(parts);
            }
        }
    }

    // ---- headers ----

    fn opset_list(&mut self, ctx: &str) -> R<Vec<pb::OperatorSetIdProto>> {
        self.expect('[', &format!("to open the opset_import list of {ctx}"))?;
        let mut out = Vec::new();
        if self.eat(']') {
            return Ok(out);
        }
        loop {
            let domain = self.string("an opset domain (a quoted string such as \"\")")?;
            self.expect(':', &format!("after opset domain \"{domain}\""))?;
            let version = self.int(&format!("the version of opset \"{domain}\""))?;
            out.push(pb::OperatorSetIdProto {
                domain: Some(domain),
                version: Some(version),
            });
            if !self.eat(',') {
                self.expect(']', &format!("after the opset_import list of {ctx}"))?;
                return Ok(out);
            }
        }
    }

    fn string_pairs(&mut self, what: &str) -> R<Vec<pb::StringStringEntryProto>> {
        self.expect('[', &format!("to open {what}"))?;
        let mut out = Vec::new();
        if self.eat(']') {
            return Ok(out);
        }
        loop {
            let key = self.string(&format!("a quoted key in {what}"))?;
            self.expect(':', &format!("after key \"{key}\" in {what}"))?;
            let value = self.string(&format!("a quoted value for key \"{key}\" in {what}"))?;
            out.push(pb::StringStringEntryProto {
                key: Some(key),
                value: Some(value),
            });
            if !self.eat(',') {
                self.expect(']', &format!("after {what}"))?;
                return Ok(out);
            }
        }
    }

    /// `<key: value, ...>`; `on_key` parses the value of each key and says whether it knew it.
    fn header(
        &mut self,
        ctx: &str,
        keys: &[&str],
        mut on_key: impl FnMut(&mut Parser, &str) -> R<()>,
    ) -> R<()> {
        self.bump(); // '<'
        let mut seen = HashSet::new();
        if self.eat('>') {
            return Ok(());
        }
        loop {
            let t = self.peek().clone();
            let key = match &t.tok {
                Tok::Ident(k) => k.clone(),
                _ => return Err(self.expected(&format!("a key of the {ctx} header"))),
            };
            if !keys.contains(&key.as_str()) {
                return Err(Self::err_at(
                    &t,
                    format!(
                        "unknown key '{key}' in the {ctx} header (known: {})",
                        keys.join(", ")
                    ),
                ));
            }
            if !seen.insert(key.clone()) {
                return Err(Self::err_at(
                    &t,
                    format!("key '{key}' appears twice in the {ctx} header"),
                ));
            }
            self.bump();
            self.expect(':', &format!("after key '{key}'"))?;
            on_key(self, &key)?;
            if !self.eat(',') || self.is('>') {
                self.expect('>', &format!("after the {ctx} header"))?;
                return Ok(());
            }
        }
    }
}
