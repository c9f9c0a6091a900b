//! `.npy` files: encoding a tensor (format 1.0, header padded to 64 bytes) and decoding
//! what numpy writes (formats 1.0 to 3.0, little-endian, C order); see the
//! [archive's documentation](super) for the element types.
use super::NpzError;
use half::f16;
use mutagraph_backends::value::{Data, HostTensor};
use mutagraph_ir::dtype::DType;

const NPY_MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Little-endian bytes of each element.
fn le_bytes<T, const N: usize>(v: &[T], f: impl Fn(&T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * N);
    for x in v {
        out.extend_from_slice(&f(x));
    }
    out
}

/// The `descr` and data bytes of a tensor.
pub(crate) fn npy_payload(t: &HostTensor) -> Result<(String, Vec<u8>), NpzError> {
    let (descr, bytes) = match &t.data {
        Data::F32(v) => ("<f4", le_bytes(v, |x| x.to_le_bytes())),
        Data::F64(v) => ("<f8", le_bytes(v, |x| x.to_le_bytes())),
        Data::F16(v) => ("<f2", le_bytes(v, |x| x.to_le_bytes())),
        Data::BF16(v) => ("<f4", le_bytes(v, |x| x.to_f32().to_le_bytes())),
        Data::I8(v) => ("|i1", le_bytes(v, |x| x.to_le_bytes())),
        Data::I16(v) => ("<i2", le_bytes(v, |x| x.to_le_bytes())),
        Data::I32(v) => ("<i4", le_bytes(v, |x| x.to_le_bytes())),
        Data::I64(v) => ("<i8", le_bytes(v, |x| x.to_le_bytes())),
        Data::U8(v) => ("|u1", v.clone()),
        Data::U16(v) => ("<u2", le_bytes(v, |x| x.to_le_bytes())),
        Data::U32(v) => ("<u4", le_bytes(v, |x| x.to_le_bytes())),
        Data::U64(v) => ("<u8", le_bytes(v, |x| x.to_le_bytes())),
        Data::Bool(v) => ("|b1", v.iter().map(|&b| b as u8).collect()),
        Data::String(v) => {
            let mut texts = Vec::with_capacity(v.len());
            for (i, s) in v.iter().enumerate() {
                let s = std::str::from_utf8(s).map_err(|_| NpzError::StringNotUtf8(i))?;
                if s.contains('\0') {
                    return Err(NpzError::StringNul(i));
                }
                texts.push(s);
            }
            let width = texts.iter().map(|s| s.chars().count()).max().unwrap_or(0);
            let width = width.max(1);
            let mut bytes = Vec::with_capacity(texts.len() * width * 4);
            for s in texts {
                let n = s.chars().count();
                for c in s.chars() {
                    bytes.extend_from_slice(&(c as u32).to_le_bytes());
                }
                bytes.resize(bytes.len() + (width - n) * 4, 0);
            }
            return Ok((format!("<U{width}"), bytes));
        }
        Data::Raw(_) => {
            return Err(NpzError::NoNumpyType(t.dtype));
        }
    };
    Ok((descr.to_string(), bytes))
}

/// An `.npy` file (format 1.0) holding `t`.
pub(super) fn encode_npy(t: &HostTensor) -> Result<Vec<u8>, NpzError> {
    let count = t
        .shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| NpzError::ShapeOverflow(t.shape.clone()))?;
    if count != t.data.len() {
        return Err(NpzError::ElementCount {
            shape: t.shape.clone(),
            need: count,
            have: t.data.len(),
        });
    }
    if let Some(d) = t.data.dtype()
        && d != t.dtype
    {
        return Err(NpzError::DTypeMismatch {
            dtype: t.dtype,
            data: d,
        });
    }
    let (descr, data) = npy_payload(t)?;
    let shape = match t.shape.as_slice() {
        [] => "()".to_string(),
        [d] => format!("({d},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // magic (6) + version (2) + length (2) + dict + padding + '\n' is a multiple of 64.
    let unpadded = 10 + dict.len() + 1;
    let padding = (64 - unpadded % 64) % 64;
    let header_len = dict.len() + padding + 1;
    let header_len =
        u16::try_from(header_len).map_err(|_| NpzError::HeaderTooLong(t.shape.clone()))?;
    let mut out = Vec::with_capacity(10 + header_len as usize + data.len());
    out.extend_from_slice(NPY_MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&header_len.to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(out.len() + padding, b' ');
    out.push(b'\n');
    out.extend_from_slice(&data);
    Ok(out)
}

/// A value of the Python literal subset `.npy` headers use.
#[derive(Debug, PartialEq)]
enum Lit {
    Str(String),
    Bool(bool),
    Int(u64),
    Tuple(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

/// A parser of that subset: strings ('...' or "..." without escapes), True/False, non-negative
/// integers (an old `L` suffix allowed), tuples / lists, dicts.
struct LitParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl LitParser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), NpzError> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(NpzError::HeaderExpected {
                expected: c as char,
                at: self.i,
            })
        }
    }

    /// Items up to `close`, separated by commas, with an optional trailing comma.
    fn items<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<T, NpzError>,
    ) -> Result<Vec<T>, NpzError> {
        let mut out = Vec::new();
        loop {
            if self.peek() == Some(close) {
                self.i += 1;
                return Ok(out);
            }
            out.push(item(self)?);
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {}
                _ => {
                    return Err(NpzError::HeaderExpected {
                        expected: ',',
                        at: self.i,
                    });
                }
            }
        }
    }

    fn value(&mut self) -> Result<Lit, NpzError> {
        match self.peek() {
            Some(q @ (b'\'' | b'"')) => {
                self.i += 1;
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i] != q {
                    self.i += 1;
                }
                if self.i == self.s.len() {
                    return Err(NpzError::HeaderString);
                }
                let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                self.i += 1;
                Ok(Lit::Str(text))
            }
            Some(b'(') => {
                self.i += 1;
                Ok(Lit::Tuple(self.items(b')', Self::value)?))
            }
            Some(b'[') => {
                self.i += 1;
                Ok(Lit::Tuple(self.items(b']', Self::value)?))
            }
            Some(b'{') => {
                self.i += 1;
                Ok(Lit::Dict(self.items(b'}', |p| {
                    let k = p.value()?;
                    p.expect(b':')?;
                    Ok((k, p.value()?))
                })?))
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                let n = text
                    .parse::<u64>()
                    .map_err(|_| NpzError::HeaderInteger(text.to_string()))?;
                if self.s.get(self.i) == Some(&b'L') {
                    self.i += 1;
                }
                Ok(Lit::Int(n))
            }
            Some(_) if self.s[self.i..].starts_with(b"True") => {
                self.i += 4;
                Ok(Lit::Bool(true))
            }
            Some(_) if self.s[self.i..].starts_with(b"False") => {
                self.i += 5;
                Ok(Lit::Bool(false))
            }
            _ => Err(NpzError::HeaderText(self.i)),
        }
    }
}

/// Element types [`decode_npy`] reads.
#[derive(Clone, Copy)]
enum Elem {
    F4,
    F8,
    F2,
    I1,
    I2,
    I4,
    I8,
    U1,
    U2,
    U4,
    U8,
    B1,
    /// Unicode strings of this many characters.
    Str(usize),
}

impl Elem {
    fn parse(descr: &str) -> Result<Elem, NpzError> {
        let (order, rest) = match descr.as_bytes().first() {
            Some(c @ (b'<' | b'>' | b'|' | b'=')) => (*c, &descr[1..]),
            _ => (b'=', descr),
        };
        let elem = match rest {
            "f4" => Elem::F4,
            "f8" => Elem::F8,
            "f2" => Elem::F2,
            "i1" => Elem::I1,
            "i2" => Elem::I2,
            "i4" => Elem::I4,
            "i8" => Elem::I8,
            "u1" => Elem::U1,
            "u2" => Elem::U2,
            "u4" => Elem::U4,
            "u8" => Elem::U8,
            "b1" => Elem::B1,
            s if s.starts_with('U') => Elem::Str(
                s[1..]
                    .parse()
                    .map_err(|_| NpzError::UnsupportedDType(descr.to_string()))?,
            ),
            _ => return Err(NpzError::UnsupportedDType(descr.to_string())),
        };
        let big = order == b'>' || (order == b'=' && cfg!(target_endian = "big"));
        if big && elem.size() > 1 {
            return Err(NpzError::BigEndian(descr.to_string()));
        }
        Ok(elem)
    }

    fn size(self) -> usize {
        match self {
            Elem::F8 | Elem::I8 | Elem::U8 => 8,
            Elem::F4 | Elem::I4 | Elem::U4 => 4,
            Elem::F2 | Elem::I2 | Elem::U2 => 2,
            Elem::I1 | Elem::U1 | Elem::B1 => 1,
            Elem::Str(n) => n.saturating_mul(4),
        }
    }
}

fn from_chunks<T, const N: usize>(data: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
    data.chunks_exact(N)
        .map(|c| {
            let mut a = [0u8; N];
            a.copy_from_slice(c);
            f(a)
        })
        .collect()
}

/// Reads one `.npy` file.
pub(super) fn decode_npy(b: &[u8]) -> Result<HostTensor, NpzError> {
    if b.len() < 10 || &b[..6] != NPY_MAGIC {
        return Err(NpzError::BadMagic);
    }
    let (header_len, start) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10usize),
        2 | 3 if b.len() >= 12 => (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12),
        v => return Err(NpzError::Version(v, b[7])),
    };
    let end = start
        .checked_add(header_len)
        .filter(|&e| e <= b.len())
        .ok_or(NpzError::TruncatedHeader)?;
    let mut parser = LitParser {
        s: &b[start..end],
        i: 0,
    };
    let Lit::Dict(entries) = parser.value()? else {
        return Err(NpzError::HeaderNotDict);
    };
    let get = |key: &'static str| {
        entries
            .iter()
            .find(|(k, _)| *k == Lit::Str(key.to_string()))
            .map(|(_, v)| v)
            .ok_or(NpzError::HeaderLacks(key))
    };
    let Lit::Str(descr) = get("descr")? else {
        return Err(NpzError::DescrNotString);
    };
    match get("fortran_order")? {
        Lit::Bool(false) => {}
        Lit::Bool(true) => return Err(NpzError::FortranOrder),
        _ => return Err(NpzError::FortranOrderNotBool),
    }
    let Lit::Tuple(dims) = get("shape")? else {
        return Err(NpzError::ShapeNotTuple);
    };
    let shape = dims
        .iter()
        .map(|d| match d {
            Lit::Int(n) => usize::try_from(*n).map_err(|_| NpzError::DimTooLarge(*n)),
            _ => Err(NpzError::ShapeNotIntegers),
        })
        .collect::<Result<Vec<usize>, NpzError>>()?;
    let elem = Elem::parse(descr)?;
    let count = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| NpzError::ShapeOverflow(shape.clone()))?;
    let data = &b[end..];
    let need = count
        .checked_mul(elem.size())
        .ok_or_else(|| NpzError::ShapeOverflow(shape.clone()))?;
    if data.len() != need {
        return Err(NpzError::DataSize {
            descr: descr.clone(),
            shape,
            need,
            have: data.len(),
        });
    }
    let data = match elem {
        Elem::F4 => Data::F32(from_chunks(data, f32::from_le_bytes)),
        Elem::F8 => Data::F64(from_chunks(data, f64::from_le_bytes)),
        Elem::F2 => Data::F16(from_chunks(data, f16::from_le_bytes)),
        Elem::I1 => Data::I8(from_chunks(data, i8::from_le_bytes)),
        Elem::I2 => Data::I16(from_chunks(data, i16::from_le_bytes)),
        Elem::I4 => Data::I32(from_chunks(data, i32::from_le_bytes)),
        Elem::I8 => Data::I64(from_chunks(data, i64::from_le_bytes)),
        Elem::U1 => Data::U8(data.to_vec()),
        Elem::U2 => Data::U16(from_chunks(data, u16::from_le_bytes)),
        Elem::U4 => Data::U32(from_chunks(data, u32::from_le_bytes)),
        Elem::U8 => Data::U64(from_chunks(data, u64::from_le_bytes)),
        Elem::B1 => Data::Bool(data.iter().map(|&x| x != 0).collect()),
        Elem::Str(width) => {
            let mut strings = Vec::with_capacity(count);
            for i in 0..count {
                let cell = &data[i * width * 4..(i + 1) * width * 4];
                let mut s = String::new();
                for c in from_chunks(cell, u32::from_le_bytes) {
                    if c == 0 {
                        break;
                    }
                    s.push(char::from_u32(c).ok_or(NpzError::CodePoint { index: i, code: c })?);
                }
                strings.push(s.into_bytes());
            }
            Data::String(strings)
        }
    };
    Ok(HostTensor {
        dtype: data.dtype().unwrap_or(DType::F32),
        shape,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_aligned_and_exact() {
        let t = HostTensor::new(vec![2, 3], Data::F32(vec![0.0; 6]));
        let b = encode_npy(&t).unwrap();
        let header_len = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&b[10..10 + header_len]).unwrap();
        assert_eq!(
            header.trim_end(),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
        );
        assert!(header.ends_with('\n'));
        assert_eq!(b.len(), 10 + header_len + 24);
        let scalar = encode_npy(&HostTensor::new(vec![], Data::I64(vec![7]))).unwrap();
        assert!(String::from_utf8_lossy(&scalar).contains("'shape': (), "));
        let vector = encode_npy(&HostTensor::new(vec![3], Data::U8(vec![1, 2, 3]))).unwrap();
        assert!(String::from_utf8_lossy(&vector).contains("'descr': '|u1'"));
        assert!(String::from_utf8_lossy(&vector).contains("'shape': (3,), "));
    }

    #[test]
    fn inconsistent_tensors_are_refused() {
        let bad = HostTensor {
            dtype: DType::F32,
            shape: vec![2, 2],
            data: Data::F32(vec![1.0]),
        };
        assert!(
            encode_npy(&bad)
                .unwrap_err()
                .to_string()
                .contains("needs 4 elements")
        );
        let raw = HostTensor {
            dtype: DType::F8E4M3FN,
            shape: vec![1],
            data: Data::Raw(vec![0]),
        };
        assert!(
            encode_npy(&raw)
                .unwrap_err()
                .to_string()
                .contains("no numpy equivalent")
        );
        let nul = HostTensor::new(vec![1], Data::String(vec![b"a\0".to_vec()]));
        assert!(encode_npy(&nul).unwrap_err().to_string().contains("NUL"));
    }

    #[test]
    fn header_parser_reads_numpy_variants() {
        let mut p = LitParser {
            s: b"{'descr': '<i8', 'fortran_order': False, 'shape': (3L, 4L), }",
            i: 0,
        };
        let Lit::Dict(d) = p.value().unwrap() else {
            panic!()
        };
        assert_eq!(d[2].1, Lit::Tuple(vec![Lit::Int(3), Lit::Int(4)]));
        let mut p = LitParser {
            s: b"{\"descr\": [('a', '<f4')]}",
            i: 0,
        };
        assert!(p.value().is_ok());
    }
}
