//! Tensor constants (`float[2] {1, 2}`) and the values of initializers.

use super::{Parser, R};
use crate::pb;
use crate::text::dtype_code;
use crate::text::lexer::Tok;
use crate::text::tensor::{self, Data, Field};

impl Parser {
    /// `float[2, 3] name? '='? {values}`.
    pub(super) fn tensor_constant(&mut self, what: &str) -> R<pb::TensorProto> {
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
    pub(super) fn tensor_values(
        &mut self,
        code: i32,
        dims: &[i64],
        what: &str,
    ) -> R<pb::TensorProto> {
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
}
