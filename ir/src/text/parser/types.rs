//! Types: tensor types with their shapes, `seq`, `optional`, `map`, `sparse_tensor`,
//! `opaque`.

use super::{Parser, R};
use crate::pb;
use crate::text::dtype_code;
use crate::text::lexer::Tok;

impl Parser {
    pub(super) fn ty(&mut self) -> R<pb::TypeProto> {
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
