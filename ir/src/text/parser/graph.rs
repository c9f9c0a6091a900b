//! Models, graphs, functions and nodes.

use super::{Parser, R};
use crate::pb;
use crate::text::is_type_keyword;
use crate::text::lexer::{Tok, Token};
use std::collections::HashSet;

/// An entry of an input list or of the `<...>` list of a graph.
struct Item {
    info: pb::ValueInfoProto,
    init: Option<pb::TensorProto>,
}

impl Parser {
    // ---- model, graph, function ----

    pub(super) fn model(&mut self) -> R<pb::ModelProto> {
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

    pub(super) fn graph(&mut self) -> R<pb::GraphProto> {
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

    pub(super) fn function(&mut self) -> R<pb::FunctionProto> {
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
