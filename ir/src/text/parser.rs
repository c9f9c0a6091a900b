//! The parser: text to protobuf messages, then imported into the IR.
use super::lexer::{Tok, Token, lex};
use super::tensor::{self, Data, Field};
use super::{TextError, dtype_code, is_type_keyword};
use crate::attr::AttrKind;
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

/// A single attribute value before its kind is settled.
enum Val {
    Num(Num),
    Str(String),
    Tensor(Box<pb::TensorProto>),
    Graph(Box<pb::GraphProto>),
    Type(pb::TypeProto),
}

/// An entry of an input list or of the `<...>` list of a graph.
struct Item {
    info: pb::ValueInfoProto,
    init: Option<pb::TensorProto>,
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

    // ---- model, graph, function ----

    fn model(&mut self) -> R<pb::ModelProto> {
        let mut m = pb::ModelProto::default();
        if self.is('<') {
            const KEYS: &[&str] = &[
                "ir_version",
                "opset_import",
                "producer_name",
                "producer_version",
                "domain",
                "model_version",
                "doc_string",
                "metadata_props",
            ];
            self.header("model", KEYS, |p, key| {
                match key {
                    "ir_version" => m.ir_version = Some(p.int("the ir_version (an integer)")?),
                    "model_version" => {
                        m.model_version = Some(p.int("the model_version (an integer)")?)
                    }
                    "opset_import" => m.opset_import = p.opset_list("the model")?,
                    "metadata_props" => m.metadata_props = p.string_pairs("metadata_props")?,
                    _ => {
                        let v = p.string(&format!("a quoted string for {key}"))?;
                        match key {
                            "producer_name" => m.producer_name = Some(v),
                            "producer_version" => m.producer_version = Some(v),
                            "domain" => m.domain = Some(v),
                            _ => m.doc_string = Some(v),
                        }
                    }
                }
                Ok(())
            })?;
        }
        m.graph = Some(self.graph()?);
        while !self.is_eof() {
            m.functions.push(self.function()?);
        }
        Ok(m)
    }

    fn graph(&mut self) -> R<pb::GraphProto> {
        self.enter()?;
        let g = self.graph_body()?;
        self.leave();
        Ok(g)
    }

    fn graph_body(&mut self) -> R<pb::GraphProto> {
        let (gname, _) = self.name("a graph name")?;
        let ctx = format!("graph '{gname}'");
        let mut g = pb::GraphProto {
            name: Some(gname),
            ..Default::default()
        };
        let mut inits = HashSet::new();
        self.graph_inputs(&mut g, &mut inits, &ctx)?;
        if self.peek().tok != Tok::Arrow {
            return Err(self.expected(&format!("'=>' after the inputs of {ctx}")));
        }
        self.bump();
        self.graph_outputs(&mut g, &ctx)?;
        if self.eat('<') && !self.eat('>') {
            self.graph_extras(&mut g, &mut inits, &ctx)?;
        }
        g.node = self.node_list(&ctx)?;
        Ok(g)
    }

    fn graph_inputs(
        &mut self,
        g: &mut pb::GraphProto,
        inits: &mut HashSet<String>,
        ctx: &str,
    ) -> R<()> {
        self.expect('(', &format!("to open the inputs of {ctx}"))?;
        if self.eat(')') {
            return Ok(());
        }
        loop {
            let at = self.peek().clone();
            let item = self.item(&format!("an input of {ctx}"), true)?;
            if let Some(t) = item.init {
                add_init(g, inits, t, &at, ctx)?;
            }
            g.input.push(item.info);
            if !self.eat(',') {
                self.expect(')', &format!("after the inputs of {ctx}"))?;
                return Ok(());
            }
        }
    }

    fn graph_outputs(&mut self, g: &mut pb::GraphProto, ctx: &str) -> R<()> {
        self.expect('(', &format!("to open the outputs of {ctx}"))?;
        if self.eat(')') {
            return Ok(());
        }
        loop {
            let item = self.item(&format!("an output of {ctx}"), false)?;
            g.output.push(item.info);
            if !self.eat(',') {
                self.expect(')', &format!("after the outputs of {ctx}"))?;
                return Ok(());
            }
        }
    }

    /// The `<...>` list after the outputs (its `<` already read): initializers and value_info.
    fn graph_extras(
        &mut self,
        g: &mut pb::GraphProto,
        inits: &mut HashSet<String>,
        ctx: &str,
    ) -> R<()> {
        loop {
            let at = self.peek().clone();
            let item = self.item(
                &format!("an initializer or value_info entry of {ctx}"),
                true,
            )?;
            match item.init {
                Some(t) => add_init(g, inits, t, &at, ctx)?,
                None => g.value_info.push(item.info),
            }
            if !self.eat(',') {
                self.expect(
                    '>',
                    &format!("after the initializers and value_info of {ctx}"),
                )?;
                return Ok(());
            }
        }
    }

    fn node_list(&mut self, ctx: &str) -> R<Vec<pb::NodeProto>> {
        self.expect('{', &format!("to open the nodes of {ctx}"))?;
        let mut nodes = Vec::new();
        while !self.eat('}') {
            if self.is_eof() {
                return Err(self.expected(&format!("'}}' to close {ctx}")));
            }
            nodes.push(self.node()?);
        }
        Ok(nodes)
    }

    fn function(&mut self) -> R<pb::FunctionProto> {
        let mut f = pb::FunctionProto::default();
        if self.is('<') {
            const KEYS: &[&str] = &["domain", "overload", "opset_import", "doc_string"];
            self.header("function", KEYS, |p, key| {
                match key {
                    "opset_import" => f.opset_import = p.opset_list("the function")?,
                    _ => {
                        let v = p.string(&format!("a quoted string for {key}"))?;
                        match key {
                            "domain" => f.domain = Some(v),
                            "overload" => f.overload = Some(v),
                            _ => f.doc_string = Some(v),
                        }
                    }
                }
                Ok(())
            })?;
        }
        let (fname, _) = self.name("a function name")?;
        let ctx = format!("function '{fname}'");
        f.name = Some(fname);
        if self.eat('<') && !self.eat('>') {
            loop {
                let (aname, _) = self.name(&format!("an attribute name of {ctx}"))?;
                if self.is(':') || self.is('=') {
                    f.attribute_proto.push(pb::AttributeProto::default());
                    let last = f.attribute_proto.len() - 1;
                    self.attribute_rest(aname, &ctx, &mut f.attribute_proto[last])?;
                } else {
                    f.attribute.push(aname);
                }
                if !self.eat(',') {
                    self.expect('>', &format!("after the attributes of {ctx}"))?;
                    break;
                }
            }
        }
        let mut typed = Vec::new();
        for (side, list) in [("inputs", &mut f.input), ("outputs", &mut f.output)] {
            if side == "outputs" {
                if self.peek().tok != Tok::Arrow {
                    return Err(self.expected(&format!("'=>' after the inputs of {ctx}")));
                }
                self.bump();
            }
            self.expect('(', &format!("to open the {side} of {ctx}"))?;
            if !self.eat(')') {
                loop {
                    let item = self.item(&format!("one of the {side} of {ctx}"), false)?;
                    list.push(item.info.name.clone().unwrap_or_default());
                    if item.info.r#type.is_some() {
                        typed.push(item.info);
                    }
                    if !self.eat(',') {
                        self.expect(')', &format!("after the {side} of {ctx}"))?;
                        break;
                    }
                }
            }
        }
        f.value_info = typed;
        if self.eat('<') && !self.eat('>') {
            loop {
                let item = self.item(&format!("a value_info entry of {ctx}"), false)?;
                f.value_info.push(item.info);
                if !self.eat(',') {
                    self.expect('>', &format!("after the value_info of {ctx}"))?;
                    break;
                }
            }
        }
        f.node = self.node_list(&ctx)?;
        Ok(f)
    }

    /// `type? name ('=' data)?`: a value, maybe typed, maybe an initializer.
    fn item(&mut self, what: &str, allow_init: bool) -> R<Item> {
        let type_tok = self.peek().clone();
        let starts_type = match &type_tok.tok {
            Tok::Ident(k) => {
                is_type_keyword(k)
                    && !matches!(
                        self.peek_n(1).tok,
                        Tok::Punct(',' | ')' | '>' | '=') | Tok::Eof
                    )
            }
            _ => false,
        };
        let ty = if starts_type { Some(self.ty()?) } else { None };
        let (name, name_tok) = self.name(&format!("the name of {what}"))?;
        let mut init = None;
        if self.is('=') {
            if !allow_init {
                return Err(self.expected(&format!("',' or the end of the list after '{name}'")));
            }
            self.bump();
            if name.is_empty() {
                return Err(Self::err_at(&name_tok, "an initializer needs a name"));
            }
            let (code, dims) = match ty.as_ref().and_then(static_tensor_type) {
                Some(cd) => cd,
                None => {
                    return Err(Self::err_at(
                        &type_tok,
                        format!(
                            "initializer '{name}' needs a tensor type with numeric dimensions \
                             (such as float[2, 3])"
                        ),
                    ));
                }
            };
            let mut t = if self.is('[') {
                let external_data = self.string_pairs("the external data of an initializer")?;
                pb::TensorProto {
                    external_data,
                    data_location: Some(1),
                    ..Default::default()
                }
            } else if self.is('{') {
                self.tensor_values(code, &dims, &format!("initializer '{name}'"))?
            } else {
                return Err(self.expected(&format!(
                    "'{{' with the values of initializer '{name}' (or '[' with its external data)"
                )));
            };
            t.name = Some(name.clone());
            t.dims = dims;
            t.data_type = Some(code);
            init = Some(t);
        }
        Ok(Item {
            info: pb::ValueInfoProto {
                name: Some(name),
                r#type: ty,
                ..Default::default()
            },
            init,
        })
    }

    // ---- nodes and attributes ----

    fn node(&mut self) -> R<pb::NodeProto> {
        let mut n = pb::NodeProto::default();
        if self.eat('[') {
            let (label, _) = self.name("a node name after '['")?;
            n.name = Some(label);
            self.expect(']', "after the node name")?;
        }
        if !self.is('=') {
            loop {
                let (o, _) = self.name("an output name of a node (or '=')")?;
                n.output.push(o);
                if !self.eat(',') {
                    break;
                }
            }
        }
        self.expect('=', "after the outputs of a node")?;
        let op_tok = self.peek().clone();
        let mut parts = self.qualified("an operator name after '='")?;
        let op = parts.pop().unwrap_or_default();
        if op.is_empty() {
            return Err(Self::err_at(&op_tok, "the operator name is empty"));
        }
        if !parts.is_empty() {
            n.domain = Some(parts.join("."));
        }
        let ctx = format!("node '{op}'");
        n.op_type = Some(op);
        let mut had_attrs = false;
        if self.is('<') {
            n.attribute = self.attr_list(&ctx)?;
            had_attrs = true;
        }
        self.expect('(', &format!("to open the inputs of {ctx}"))?;
        if !self.eat(')') {
            loop {
                let (i, _) = self.name(&format!("an input name of {ctx}"))?;
                n.input.push(i);
                if !self.eat(',') {
                    self.expect(')', &format!("after the inputs of {ctx}"))?;
                    break;
                }
            }
        }
        if self.is('<') {
            if had_attrs {
                return Err(self.expected(&format!(
                    "the next node ({ctx} already has its attributes before the inputs)"
                )));
            }
            n.attribute = self.attr_list(&ctx)?;
        }
        Ok(n)
    }

    fn attr_list(&mut self, ctx: &str) -> R<Vec<pb::AttributeProto>> {
        self.bump(); // '<'
        let mut out = Vec::new();
        if self.eat('>') {
            return Ok(out);
        }
        loop {
            let (aname, _) = self.name(&format!("an attribute name of {ctx}"))?;
            // Filled in place: attributes are large, and this is on the recursion path of
            // nested graphs.
            out.push(pb::AttributeProto::default());
            let last = out.len() - 1;
            self.attribute_rest(aname, ctx, &mut out[last])?;
            if !self.eat(',') {
                self.expect('>', &format!("after the attributes of {ctx}"))?;
                return Ok(out);
            }
        }
    }

    /// After the attribute name: `(':' kind)? '=' value`, filled into `a`. The work is split
    /// over small functions: this is on the recursion path of nested graphs, and debug builds
    /// give every temporary its own stack slot.
    fn attribute_rest(&mut self, aname: String, ctx: &str, a: &mut pb::AttributeProto) -> R<()> {
        let what = format!("attribute '{aname}' of {ctx}");
        let kind = self.attr_kind(&what)?;
        self.expect('=', &format!("after the name of {what}"))?;
        a.name = Some(aname);
        if self.eat('@') {
            let (r, _) = self.name("the name of a function attribute after '@'")?;
            a.ref_attr_name = Some(r);
            a.r#type = kind.map(AttrKind::code);
            Ok(())
        } else if self.is('[') {
            self.attr_list_value(a, kind, &what)
        } else {
            self.attr_single_value(a, kind, &what)
        }
    }

    /// `(':' kind)?`.
    fn attr_kind(&mut self, what: &str) -> R<Option<AttrKind>> {
        if !self.eat(':') {
            return Ok(None);
        }
        let t = self.peek().clone();
        let k = match &t.tok {
            Tok::Ident(k) => kind_by_name(k),
            _ => None,
        };
        match k {
            Some(AttrKind::SparseTensor | AttrKind::SparseTensors) => Err(Self::err_at(
                &t,
                format!("{what}: sparse tensor attributes have no textual form"),
            )),
            Some(k) if k != AttrKind::Undefined => {
                self.bump();
                Ok(Some(k))
            }
            _ => Err(self.expected(&format!(
                "an attribute type (int, float, string, tensor, graph, type_proto, ints, \
                 floats, strings, tensors, graphs, type_protos) for {what}"
            ))),
        }
    }

    /// `[v, ...]`.
    fn attr_list_value(
        &mut self,
        a: &mut pb::AttributeProto,
        kind: Option<AttrKind>,
        what: &str,
    ) -> R<()> {
        let t = self.bump(); // '['
        if kind.is_some_and(|k| !is_list(k)) {
            return Err(Self::err_at(
                &t,
                format!(
                    "{what} is declared {} but its value is a list",
                    kind.map(AttrKind::name).unwrap_or_default()
                ),
            ));
        }
        let elem = kind.map(singular);
        let mut vals = Vec::new();
        if !self.eat(']') {
            loop {
                vals.push(self.single(elem, what)?);
                if !self.eat(',') {
                    self.expect(']', &format!("after the values of {what}"))?;
                    break;
                }
            }
        }
        let k = match kind {
            Some(k) => k,
            None => list_kind_of(&vals).ok_or_else(|| {
                Self::err_at(
                    &t,
                    if vals.is_empty() {
                        format!(
                            "{what}: an empty list needs a declared type (such as \
                             'name: ints = []')"
                        )
                    } else {
                        format!("{what}: the values of the list are of different kinds")
                    },
                )
            })?,
        };
        fill_list(a, k, vals, what)?;
        a.r#type = Some(k.code());
        Ok(())
    }

    /// One value (not a list).
    fn attr_single_value(
        &mut self,
        a: &mut pb::AttributeProto,
        kind: Option<AttrKind>,
        what: &str,
    ) -> R<()> {
        if kind.is_some_and(is_list) {
            return Err(self.expected(&format!(
                "'[' with the values of {what} (declared {})",
                kind.map(AttrKind::name).unwrap_or_default()
            )));
        }
        let v = self.single(kind, what)?;
        let k = kind.unwrap_or(match &v {
            Val::Num(n) if n.float => AttrKind::Float,
            Val::Num(_) => AttrKind::Int,
            Val::Str(_) => AttrKind::String,
            Val::Tensor(_) => AttrKind::Tensor,
            Val::Graph(_) => AttrKind::Graph,
            Val::Type(_) => AttrKind::TypeProto,
        });
        match (k, v) {
            (AttrKind::Float, Val::Num(n)) => a.f = Some(n.f32()?),
            (AttrKind::Int, Val::Num(n)) => a.i = Some(n.i64(what)?),
            (AttrKind::String, Val::Str(s)) => a.s = Some(s.into_bytes()),
            (AttrKind::Tensor, Val::Tensor(x)) => a.t = Some(*x),
            (AttrKind::Graph, Val::Graph(g)) => a.g = Some(*g),
            (AttrKind::TypeProto, Val::Type(x)) => a.tp = Some(x),
            // `single` parsed the value with the declared kind.
            _ => {}
        }
        a.r#type = Some(k.code());
        Ok(())
    }

    /// One attribute value of kind `kind` (a singular kind), or of any kind when `None`.
    fn single(&mut self, kind: Option<AttrKind>, what: &str) -> R<Val> {
        let k = match kind {
            Some(k) => k,
            None => self.value_kind(what)?,
        };
        match k {
            AttrKind::Graph => self.graph_value(),
            k => self.leaf_value(k, what),
        }
    }

    /// The kind of an undeclared value, from its first tokens.
    fn value_kind(&self, what: &str) -> R<AttrKind> {
        let next_is_paren = self.peek_n(1).tok == Tok::Punct('(');
        Ok(match &self.peek().tok {
            Tok::Str(_) if next_is_paren => AttrKind::Graph,
            Tok::Str(_) => AttrKind::String,
            Tok::Int(_) | Tok::Float(_) | Tok::Punct('-') => AttrKind::Float,
            Tok::Ident(s) if dtype_code(s).is_some() => AttrKind::Tensor,
            Tok::Ident(_) if next_is_paren => AttrKind::Graph,
            Tok::Ident(s)
                if matches!(s.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity") =>
            {
                AttrKind::Float
            }
            _ => {
                return Err(self.expected(&format!(
                    "a value for {what} (a number, a string, a tensor, a graph or '[')"
                )));
            }
        })
    }

    fn graph_value(&mut self) -> R<Val> {
        let g = self.graph()?;
        Ok(Val::Graph(Box::new(g)))
    }

    fn leaf_value(&mut self, k: AttrKind, what: &str) -> R<Val> {
        Ok(match k {
            AttrKind::String => Val::Str(self.string(&format!("a quoted string for {what}"))?),
            AttrKind::Tensor => Val::Tensor(Box::new(self.tensor_constant(what)?)),
            AttrKind::TypeProto => Val::Type(self.ty()?),
            _ => Val::Num(self.number(&format!("a number for {what}"))?),
        })
    }

    /// `float[2, 3] name? '='? {values}`.
    fn tensor_constant(&mut self, what: &str) -> R<pb::TensorProto> {
        let code = match &self.peek().tok {
            Tok::Ident(k) => dtype_code(k),
            _ => None,
        };
        let Some(code) = code else {
            return Err(self.expected(&format!(
                "a tensor (such as float[2] {{1.0, 2.0}}) for {what}"
            )));
        };
        self.bump();
        let mut dims = Vec::new();
        if self.eat('[') && !self.eat(']') {
            loop {
                dims.push(self.int(&format!("a dimension (a number) of the tensor of {what}"))?);
                if !self.eat(',') {
                    self.expect(
                        ']',
                        &format!("after the dimensions of the tensor of {what}"),
                    )?;
                    break;
                }
            }
        }
        let mut name = None;
        if let Tok::Ident(s) | Tok::Str(s) = &self.peek().tok {
            name = Some(s.clone());
            self.bump();
        }
        self.eat('=');
        let mut t = self.tensor_values(code, &dims, &format!("the tensor of {what}"))?;
        t.name = name;
        t.dims = dims;
        t.data_type = Some(code);
        Ok(t)
    }

    /// `{v, v, ...}` holding exactly the number of entries `dims` needs.
    fn tensor_values(&mut self, code: i32, dims: &[i64], what: &str) -> R<pb::TensorProto> {
        let open = self.expect('{', &format!("with the values of {what}"))?;
        // `code` came from a type name, so it has a field.
        let field = tensor::field_of(code).unwrap_or(Field::I32);
        let mut data = match field {
            Field::F32 => Data::F32(Vec::new()),
            Field::F64 => Data::F64(Vec::new()),
            Field::I32 => Data::I32(Vec::new()),
            Field::I64 => Data::I64(Vec::new()),
            Field::U64 => Data::U64(Vec::new()),
            Field::Str => Data::Str(Vec::new()),
        };
        let mut count: u128 = 0;
        if !self.eat('}') {
            let item = format!("a value of {what}");
            loop {
                match &mut data {
                    Data::F32(v) => v.push(self.number(&item)?.f32()?),
                    Data::F64(v) => v.push(self.number(&item)?.f64()?),
                    Data::I32(v) => v.push(self.number(&item)?.i32(&item)?),
                    Data::I64(v) => v.push(self.number(&item)?.i64(&item)?),
                    Data::U64(v) => v.push(self.number(&item)?.u64(&item)?),
                    Data::Str(v) => v.push(self.string(&item)?.into_bytes()),
                }
                count += 1;
                if !self.eat(',') {
                    self.expect('}', &format!("after the values of {what}"))?;
                    break;
                }
            }
        }
        let mut n: u128 = 1;
        for &d in dims {
            if d < 0 {
                return Err(Self::err_at(
                    &open,
                    format!("{what} has a negative dimension ({d})"),
                ));
            }
            n = n.saturating_mul(d as u128);
        }
        let need = tensor::entries_for(code, n);
        if count != need {
            let per = match code {
                14 | 15 => " (real and imaginary parts)",
                21..=23 => " (packed two per value)",
                25 | 26 => " (packed four per value)",
                _ => "",
            };
            return Err(Self::err_at(
                &open,
                format!("{what} of shape {dims:?} needs {need} values{per}, found {count}"),
            ));
        }
        let mut t = pb::TensorProto::default();
        tensor::set_data(&mut t, data);
        Ok(t)
    }

    // ---- types ----

    fn ty(&mut self) -> R<pb::TypeProto> {
        use pb::type_proto::{self as tp, Value};
        self.enter()?;
        let t = self.peek().clone();
        let word = match &t.tok {
            Tok::Ident(k) => k.clone(),
            _ => String::new(),
        };
        let value = if let Some(code) = dtype_code(&word) {
            self.bump();
            Value::TensorType(tp::Tensor {
                elem_type: Some(code),
                shape: self.shape()?,
            })
        } else {
            let open = format!("after '{word}'");
            match word.as_str() {
                "seq" | "optional" => {
                    self.bump();
                    self.expect('(', &open)?;
                    let inner = Some(Box::new(self.ty()?));
                    self.expect(')', &format!("to close the {word} type"))?;
                    if word == "seq" {
                        Value::SequenceType(Box::new(tp::Sequence { elem_type: inner }))
                    } else {
                        Value::OptionalType(Box::new(tp::Optional { elem_type: inner }))
                    }
                }
                "map" => {
                    self.bump();
                    self.expect('(', &open)?;
                    let key = self.elem_type("the key type of a map")?;
                    self.expect(',', "after the key type of a map")?;
                    let v = self.ty()?;
                    self.expect(')', "to close the map type")?;
                    Value::MapType(Box::new(tp::Map {
                        key_type: Some(key),
                        value_type: Some(Box::new(v)),
                    }))
                }
                "sparse_tensor" => {
                    self.bump();
                    self.expect('(', &open)?;
                    let elem = self.elem_type("the element type of a sparse tensor")?;
                    let shape = self.shape()?;
                    self.expect(')', "to close the sparse_tensor type")?;
                    Value::SparseTensorType(tp::SparseTensor {
                        elem_type: Some(elem),
                        shape,
                    })
                }
                "opaque" => {
                    self.bump();
                    self.expect('(', &open)?;
                    let mut args = Vec::new();
                    while !self.eat(')') {
                        if !args.is_empty() {
                            self.expect(',', "between the arguments of an opaque type")?;
                        }
                        let a = match &self.peek().tok {
                            Tok::Str(s) => {
                                let s = s.clone();
                                self.bump();
                                s
                            }
                            _ => self
                                .qualified("a domain or name in an opaque type")?
                                .join("."),
                        };
                        args.push(a);
                        if args.len() > 2 {
                            return Err(Self::err_at(
                                &t,
                                "an opaque type has at most two arguments (domain, name)",
                            ));
                        }
                    }
                    let mut args = args.into_iter();
                    let (domain, name) = match (args.next(), args.next()) {
                        (Some(d), Some(n)) => (Some(d), Some(n)),
                        (Some(n), None) => (None, Some(n)),
                        _ => (None, None),
                    };
                    Value::OpaqueType(tp::Opaque { domain, name })
                }
                _ => {
                    return Err(self.expected(
                        "a type (such as float[N, 3], int64, seq(float[2]) or map(int64, float))",
                    ));
                }
            }
        };
        self.leave();
        Ok(pb::TypeProto {
            denotation: None,
            value: Some(value),
        })
    }

    fn elem_type(&mut self, what: &str) -> R<i32> {
        if let Tok::Ident(k) = &self.peek().tok
            && let Some(code) = dtype_code(k)
        {
            self.bump();
            return Ok(code);
        }
        Err(self.expected(&format!(
            "an element type (such as float or int64) for {what}"
        )))
    }

    /// Nothing: a scalar (empty shape); `[]`: unknown rank (no shape); `[d, ...]`.
    fn shape(&mut self) -> R<Option<pb::TensorShapeProto>> {
        use pb::tensor_shape_proto::{Dimension, dimension::Value};
        if !self.eat('[') {
            return Ok(Some(pb::TensorShapeProto::default()));
        }
        if self.eat(']') {
            return Ok(None);
        }
        let mut dim = Vec::new();
        loop {
            let value = match &self.peek().tok {
                Tok::Punct('?') => {
                    self.bump();
                    None
                }
                Tok::Ident(s) | Tok::Str(s) => {
                    let s = s.clone();
                    self.bump();
                    Some(Value::DimParam(s))
                }
                _ => Some(Value::DimValue(
                    self.int("a dimension (a number, a name or '?')")?,
                )),
            };
            dim.push(Dimension {
                denotation: None,
                value,
            });
            if !self.eat(',') {
                self.expect(']', "after the dimensions")?;
                return Ok(Some(pb::TensorShapeProto { dim }));
            }
        }
    }
}

fn add_init(
    g: &mut pb::GraphProto,
    inits: &mut HashSet<String>,
    t: pb::TensorProto,
    at: &Token,
    ctx: &str,
) -> R<()> {
    let n = t.name.clone().unwrap_or_default();
    if !inits.insert(n.clone()) {
        return Err(Parser::err_at(
            at,
            format!("initializer '{n}' is defined twice in {ctx}"),
        ));
    }
    g.initializer.push(t);
    Ok(())
}

/// The element type and dims of a tensor type whose dims are all numbers (no shape counts as
/// a scalar).
fn static_tensor_type(t: &pb::TypeProto) -> Option<(i32, Vec<i64>)> {
    use pb::tensor_shape_proto::dimension::Value as D;
    use pb::type_proto::Value;
    let Some(Value::TensorType(x)) = &t.value else {
        return None;
    };
    let dims = match &x.shape {
        None => Vec::new(),
        Some(s) => s
            .dim
            .iter()
            .map(|d| match d.value {
                Some(D::DimValue(v)) => Some(v),
                _ => None,
            })
            .collect::<Option<Vec<i64>>>()?,
    };
    Some((x.elem_type?, dims))
}

fn kind_by_name(name: &str) -> Option<AttrKind> {
    (0..=14)
        .filter_map(AttrKind::from_code)
        .find(|k| k.name() == name)
}

fn is_list(k: AttrKind) -> bool {
    matches!(
        k,
        AttrKind::Floats
            | AttrKind::Ints
            | AttrKind::Strings
            | AttrKind::Tensors
            | AttrKind::Graphs
            | AttrKind::TypeProtos
    )
}

fn singular(k: AttrKind) -> AttrKind {
    match k {
        AttrKind::Floats => AttrKind::Float,
        AttrKind::Ints => AttrKind::Int,
        AttrKind::Strings => AttrKind::String,
        AttrKind::Tensors => AttrKind::Tensor,
        AttrKind::Graphs => AttrKind::Graph,
        AttrKind::TypeProtos => AttrKind::TypeProto,
        k => k,
    }
}

/// The list kind of untyped values: numbers (floats if any is a float), strings, tensors or
/// graphs; `None` when empty or mixed.
fn list_kind_of(vals: &[Val]) -> Option<AttrKind> {
    let first = vals.first()?;
    let same = |f: fn(&Val) -> bool| vals.iter().all(f);
    match first {
        Val::Num(_) if same(|v| matches!(v, Val::Num(_))) => Some(
            if vals.iter().any(|v| matches!(v, Val::Num(n) if n.float)) {
                AttrKind::Floats
            } else {
                AttrKind::Ints
            },
        ),
        Val::Str(_) if same(|v| matches!(v, Val::Str(_))) => Some(AttrKind::Strings),
        Val::Tensor(_) if same(|v| matches!(v, Val::Tensor(_))) => Some(AttrKind::Tensors),
        Val::Graph(_) if same(|v| matches!(v, Val::Graph(_))) => Some(AttrKind::Graphs),
        Val::Type(_) if same(|v| matches!(v, Val::Type(_))) => Some(AttrKind::TypeProtos),
        _ => None,
    }
}

fn fill_list(a: &mut pb::AttributeProto, k: AttrKind, vals: Vec<Val>, what: &str) -> R<()> {
    for v in vals {
        match (k, v) {
            (AttrKind::Floats, Val::Num(n)) => a.floats.push(n.f32()?),
            (AttrKind::Ints, Val::Num(n)) => a.ints.push(n.i64(what)?),
            (AttrKind::Strings, Val::Str(s)) => a.strings.push(s.into_bytes()),
            (AttrKind::Tensors, Val::Tensor(t)) => a.tensors.push(*t),
            (AttrKind::Graphs, Val::Graph(g)) => a.graphs.push(*g),
            (AttrKind::TypeProtos, Val::Type(t)) => a.type_protos.push(t),
            // `single` parsed each value with the declared element kind.
            _ => {}
        }
    }
    Ok(())
}
