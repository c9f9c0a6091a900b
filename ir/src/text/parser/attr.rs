//! Attributes: `name (: kind)? = value`, single values and lists of every kind.

use super::{Num, Parser, R};
use crate::attr::AttrKind;
use crate::pb;
use crate::text::dtype_code;
use crate::text::lexer::Tok;

/// A single attribute value before its kind is settled.
enum Val {
    Num(Num),
    Str(String),
    Tensor(Box<pb::TensorProto>),
    Graph(Box<pb::GraphProto>),
    Type(pb::TypeProto),
}

impl Parser {
    pub(super) fn attr_list(&mut self, ctx: &str) -> R<Vec<pb::AttributeProto>> {
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
    pub(super) fn attribute_rest(
        &mut self,
        aname: String,
        ctx: &str,
        a: &mut pb::AttributeProto,
    ) -> R<()> {
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
