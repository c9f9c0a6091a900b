//! NumPy `.npz` archives (and ONNX `.pb` value files) for bug bundles.
//!
//! An `.npz` is a zip archive of `.npy` files, one per array. We write:
//!
//! - a zip with *stored* (uncompressed) members, a fixed timestamp (1980-01-01 00:00) and no
//!   zip64 extensions (an archive over 4 GiB or 65535 arrays is refused), so the same arrays
//!   always give the same bytes;
//! - `.npy` format version 1.0: the magic `\x93NUMPY`, version bytes `1 0`, a little-endian
//!   `u16` header length, then the header, a Python dict literal
//!   `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with spaces and ended
//!   by `\n` so that the data starts at a multiple of 64 bytes; the data follows, little-endian
//!   and in C order.
//!
//! Element types (`descr`):
//!
//! | [`Data`] | written as |
//! |---|---|
//! | `F32`, `F64`, `F16` | `<f4`, `<f8`, `<f2` |
//! | `BF16` | `<f4`: numpy has no bfloat16; every bf16 value is exactly an f32, so nothing is lost, but [`read_npz`] gives the tensor back as `F32` |
//! | `I8`, `I16`, `I32`, `I64` | `\|i1`, `<i2`, `<i4`, `<i8` |
//! | `U8`, `U16`, `U32`, `U64` | `\|u1`, `<u2`, `<u4`, `<u8` |
//! | `Bool` | `\|b1` |
//! | `String` | `<UN` (numpy unicode strings, N = the longest string in characters, at least 1); each string must be valid UTF-8 without NUL characters (numpy drops trailing NULs), otherwise [`BundleError::Unwritable`] |
//! | `Raw` (float8, 4-bit, complex) | refused with [`BundleError::Unwritable`] |
//!
//! Array names become member names `<key>.npy`, where the key is the name percent-encoded
//! ([`encode_key`]): every byte of the UTF-8 name other than ASCII letters, digits, `_`, `-`
//! and `.` (and a leading `.`) is written `%XX` (upper-case hex), so `conv/1:0` is stored as
//! `conv%2F1%3A0.npy`. The archive thus unpacks into plain file names on any system; numpy users
//! see the encoded key (`numpy.load(f)["conv%2F1%3A0"]`) and get the name back with
//! `urllib.parse.unquote(key)` (the generated `repro.py` does). [`read_npz`] decodes the keys
//! ([`decode_key`]).
//!
//! [`read_npz`] reads what [`write_npz`] writes and also archives written by `numpy.savez`
//! (stored members, `.npy` versions 1.0 to 3.0, zip64 records); it refuses compressed members
//! (`numpy.savez_compressed`), big-endian data and Fortran-order arrays.
use super::{BundleError, write_atomic};
use half::f16;
use mutagraph_backends::value::{Data, HostTensor, NamedValues};
use mutagraph_ir::dtype::DType;
use std::path::{Path, PathBuf};

/// Writes `arrays` as a NumPy `.npz` archive at `path`, atomically (temporary file beside it,
/// then rename). See the [module documentation](self) for the element types and the encoding
/// of names.
pub fn write_npz(path: &Path, arrays: &[(String, HostTensor)]) -> Result<(), BundleError> {
    let unwritable = |name: &str, problem: String| BundleError::Unwritable {
        path: path.to_path_buf(),
        name: name.to_string(),
        problem,
    };
    let mut members: Vec<(String, Vec<u8>)> = Vec::with_capacity(arrays.len());
    // Member index by array name: a graph may list one output twice (ONNX allows it), and its
    // outputs then carry the name twice; the same array again is written once.
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (name, tensor) in arrays {
        if name.is_empty() {
            return Err(unwritable(name, "an array needs a non-empty name".into()));
        }
        let npy = encode_npy(tensor).map_err(|p| unwritable(name, p))?;
        if let Some(&i) = seen.get(name.as_str()) {
            if members[i].1 == npy {
                continue;
            }
            return Err(unwritable(
                name,
                "two different arrays have this name".into(),
            ));
        }
        seen.insert(name.as_str(), members.len());
        members.push((format!("{}.npy", encode_key(name)), npy));
    }
    let bytes = zip_stored(&members).map_err(|p| unwritable("", p))?;
    write_atomic(path, &bytes)
}

/// Reads a NumPy `.npz` archive: the arrays in archive order, with their names decoded
/// ([`decode_key`]).
pub fn read_npz(path: &Path) -> Result<Vec<(String, HostTensor)>, BundleError> {
    let bytes = std::fs::read(path).map_err(|source| BundleError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let malformed = |problem: String| BundleError::Malformed {
        path: path.to_path_buf(),
        problem,
    };
    let mut out = Vec::new();
    for (member, data) in unzip_stored(&bytes).map_err(malformed)? {
        let Some(key) = member.strip_suffix(".npy") else {
            return Err(malformed(format!("member '{member}' is not an .npy array")));
        };
        let name = decode_key(key).map_err(|p| malformed(format!("member '{member}': {p}")))?;
        let tensor = decode_npy(data).map_err(|p| malformed(format!("member '{member}': {p}")))?;
        out.push((name, tensor));
    }
    Ok(out)
}

/// Writes each value as ONNX protobuf bytes ([`Value::encode`](mutagraph_backends::value::Value::encode)
/// with the value's name): `<dir>/<prefix>_0.pb`, `<prefix>_1.pb`, ... in order (the layout of
/// ONNX's backend test suite with `prefix` `input` or `output`). Creates `dir` if needed; each
/// file is written atomically. Returns the paths written.
pub fn write_pb_inputs(
    dir: &Path,
    values: &NamedValues,
    prefix: &str,
) -> Result<Vec<PathBuf>, BundleError> {
    std::fs::create_dir_all(dir).map_err(|source| BundleError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::with_capacity(values.len());
    for (i, (name, value)) in values.iter().enumerate() {
        let path = dir.join(format!("{prefix}_{i}.pb"));
        write_atomic(&path, &value.encode(name))?;
        written.push(path);
    }
    Ok(written)
}

/// The archive key of an array name: percent-encoding of every byte other than ASCII letters,
/// digits, `_`, `-`, `.` (a leading `.` is encoded too, so no key is a hidden file or `..`).
pub fn encode_key(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, b) in name.bytes().enumerate() {
        let safe = b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (b == b'.' && i > 0);
        if safe {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The array name of an archive key: `%XX` sequences decoded (a `%` not followed by two hex
/// digits is kept as is, as `urllib.parse.unquote` does), other characters kept. Fails when the
/// decoded bytes are not UTF-8.
pub fn decode_key(key: &str) -> Result<String, String> {
    fn hex(b: u8) -> Option<u8> {
        (b as char).to_digit(16).map(|d| d as u8)
    }
    let b = key.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            )
        {
            out.push(hi * 16 + lo);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("key '{key}' does not decode to UTF-8"))
}

// ---------------------------------------------------------------------------------------------
// .npy

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
fn npy_payload(t: &HostTensor) -> Result<(String, Vec<u8>), String> {
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
                let s = std::str::from_utf8(s)
                    .map_err(|_| format!("string {i} is not UTF-8; numpy strings hold text"))?;
                if s.contains('\0') {
                    return Err(format!(
                        "string {i} contains a NUL character, which numpy strings cannot keep"
                    ));
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
            return Err(format!("element type {} has no numpy equivalent", t.dtype));
        }
    };
    Ok((descr.to_string(), bytes))
}

/// An `.npy` file (format 1.0) holding `t`.
fn encode_npy(t: &HostTensor) -> Result<Vec<u8>, String> {
    let count = t
        .shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| format!("shape {:?} overflows", t.shape))?;
    if count != t.data.len() {
        return Err(format!(
            "shape {:?} needs {count} elements, the data holds {}",
            t.shape,
            t.data.len()
        ));
    }
    if let Some(d) = t.data.dtype()
        && d != t.dtype
    {
        return Err(format!("dtype {} but {} data", t.dtype, d));
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
    let header_len = u16::try_from(header_len)
        .map_err(|_| format!("the .npy header of shape {:?} is too long", t.shape))?;
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

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!(
                "expected '{}' at byte {} of the header",
                c as char, self.i
            ))
        }
    }

    /// Items up to `close`, separated by commas, with an optional trailing comma.
    fn items<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
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
                _ => return Err(format!("expected ',' at byte {} of the header", self.i)),
            }
        }
    }

    fn value(&mut self) -> Result<Lit, String> {
        match self.peek() {
            Some(q @ (b'\'' | b'"')) => {
                self.i += 1;
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i] != q {
                    self.i += 1;
                }
                if self.i == self.s.len() {
                    return Err("unterminated string in the header".into());
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
                    .map_err(|_| format!("integer {text} out of range in the header"))?;
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
            _ => Err(format!("unexpected text at byte {} of the header", self.i)),
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
    fn parse(descr: &str) -> Result<Elem, String> {
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
                    .map_err(|_| format!("unsupported dtype '{descr}'"))?,
            ),
            _ => return Err(format!("unsupported dtype '{descr}'")),
        };
        let big = order == b'>' || (order == b'=' && cfg!(target_endian = "big"));
        if big && elem.size() > 1 {
            return Err(format!("big-endian dtype '{descr}' is not supported"));
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
fn decode_npy(b: &[u8]) -> Result<HostTensor, String> {
    if b.len() < 10 || &b[..6] != NPY_MAGIC {
        return Err("not an .npy file (bad magic)".into());
    }
    let (header_len, start) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10usize),
        2 | 3 if b.len() >= 12 => (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12),
        v => return Err(format!(".npy format version {v}.{} is not supported", b[7])),
    };
    let end = start
        .checked_add(header_len)
        .filter(|&e| e <= b.len())
        .ok_or("truncated .npy header")?;
    let mut parser = LitParser {
        s: &b[start..end],
        i: 0,
    };
    let Lit::Dict(entries) = parser.value()? else {
        return Err("the .npy header is not a dict".into());
    };
    let get = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| *k == Lit::Str(key.to_string()))
            .map(|(_, v)| v)
            .ok_or_else(|| format!("the .npy header lacks '{key}'"))
    };
    let Lit::Str(descr) = get("descr")? else {
        return Err("'descr' is not a string (structured arrays are not supported)".into());
    };
    match get("fortran_order")? {
        Lit::Bool(false) => {}
        Lit::Bool(true) => return Err("Fortran-order arrays are not supported".into()),
        _ => return Err("'fortran_order' is not a boolean".into()),
    }
    let Lit::Tuple(dims) = get("shape")? else {
        return Err("'shape' is not a tuple".into());
    };
    let shape = dims
        .iter()
        .map(|d| match d {
            Lit::Int(n) => usize::try_from(*n).map_err(|_| format!("dimension {n} too large")),
            _ => Err("'shape' holds a non-integer".to_string()),
        })
        .collect::<Result<Vec<usize>, String>>()?;
    let elem = Elem::parse(descr)?;
    let count = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| format!("shape {shape:?} overflows"))?;
    let data = &b[end..];
    let need = count
        .checked_mul(elem.size())
        .ok_or_else(|| format!("shape {shape:?} overflows"))?;
    if data.len() != need {
        return Err(format!(
            "{descr} array of shape {shape:?} needs {need} data bytes, the file holds {}",
            data.len()
        ));
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
                    s.push(
                        char::from_u32(c)
                            .ok_or_else(|| format!("string {i} holds invalid code point {c}"))?,
                    );
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

// ---------------------------------------------------------------------------------------------
// zip (stored members only)

/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zip uses.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c = TABLE[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8);
    }
    c ^ 0xFFFF_FFFF
}

const LOCAL_SIG: u32 = 0x0403_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const END_SIG: u32 = 0x0605_4b50;
const ZIP64_END_SIG: u32 = 0x0606_4b50;
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
/// MS-DOS date of 1980-01-01 (day 1, month 1, year 0 since 1980).
const DOS_DATE: u16 = (1 << 5) | 1;

/// A zip archive of stored members, deterministic.
fn zip_stored(members: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    fn u16le(out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    fn u32le(out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let too_big = || "the archive would need zip64 (over 4 GiB or 65535 arrays)".to_string();
    let count = u16::try_from(members.len()).map_err(|_| too_big())?;
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in members {
        let offset = u32::try_from(out.len()).map_err(|_| too_big())?;
        let size = u32::try_from(data.len()).map_err(|_| too_big())?;
        let name_len = u16::try_from(name.len()).map_err(|_| format!("name {name} too long"))?;
        let crc = crc32(data);
        // Local file header.
        u32le(&mut out, LOCAL_SIG);
        u16le(&mut out, 20); // version needed: 2.0
        u16le(&mut out, 0); // flags
        u16le(&mut out, 0); // method: stored
        u16le(&mut out, 0); // time
        u16le(&mut out, DOS_DATE);
        u32le(&mut out, crc);
        u32le(&mut out, size); // compressed
        u32le(&mut out, size); // uncompressed
        u16le(&mut out, name_len);
        u16le(&mut out, 0); // extra length
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        // Central directory entry.
        u32le(&mut central, CENTRAL_SIG);
        u16le(&mut central, 20); // made by: MS-DOS, 2.0
        u16le(&mut central, 20);
        u16le(&mut central, 0);
        u16le(&mut central, 0);
        u16le(&mut central, 0);
        u16le(&mut central, DOS_DATE);
        u32le(&mut central, crc);
        u32le(&mut central, size);
        u32le(&mut central, size);
        u16le(&mut central, name_len);
        u16le(&mut central, 0); // extra
        u16le(&mut central, 0); // comment
        u16le(&mut central, 0); // disk
        u16le(&mut central, 0); // internal attributes
        u32le(&mut central, 0); // external attributes
        u32le(&mut central, offset);
        central.extend_from_slice(name.as_bytes());
    }
    let central_offset = u32::try_from(out.len()).map_err(|_| too_big())?;
    let central_size = u32::try_from(central.len()).map_err(|_| too_big())?;
    out.extend_from_slice(&central);
    u32le(&mut out, END_SIG);
    u16le(&mut out, 0); // this disk
    u16le(&mut out, 0); // disk of the central directory
    u16le(&mut out, count);
    u16le(&mut out, count);
    u32le(&mut out, central_size);
    u32le(&mut out, central_offset);
    u16le(&mut out, 0); // comment length
    u32::try_from(out.len()).map_err(|_| too_big())?;
    Ok(out)
}

fn rd16(b: &[u8], at: usize) -> Result<u16, String> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| "truncated zip archive".to_string())
}

fn rd32(b: &[u8], at: usize) -> Result<u32, String> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| "truncated zip archive".to_string())
}

fn rd64(b: &[u8], at: usize) -> Result<u64, String> {
    b.get(at..at + 8)
        .map(|s| {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            u64::from_le_bytes(a)
        })
        .ok_or_else(|| "truncated zip archive".to_string())
}

fn to_usize(v: u64) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| "zip offset out of range".to_string())
}

/// The members of a zip archive (name, data), in central-directory order. Only stored members
/// are readable; zip64 records are understood.
fn unzip_stored(b: &[u8]) -> Result<Vec<(String, &[u8])>, String> {
    // End of central directory: 22 bytes plus a comment of up to 65535 bytes, at the end.
    let lowest = b.len().saturating_sub(22 + 0xFFFF);
    let end = (lowest..=b.len().saturating_sub(22))
        .rev()
        .find(|&i| b.len() >= 22 && rd32(b, i).ok() == Some(END_SIG))
        .ok_or("not a zip archive (no end of central directory)")?;
    let mut entries = rd16(b, end + 10)? as u64;
    let mut central_size = rd32(b, end + 12)? as u64;
    let mut central_offset = rd32(b, end + 16)? as u64;
    if (entries == 0xFFFF || central_size == 0xFFFF_FFFF || central_offset == 0xFFFF_FFFF)
        && end >= 20
        && rd32(b, end - 20)? == ZIP64_LOCATOR_SIG
    {
        let z = to_usize(rd64(b, end - 20 + 8)?)?;
        if rd32(b, z)? != ZIP64_END_SIG {
            return Err("bad zip64 end of central directory".into());
        }
        entries = rd64(b, z + 32)?;
        central_size = rd64(b, z + 40)?;
        central_offset = rd64(b, z + 48)?;
    }
    let mut at = to_usize(central_offset)?;
    let central_end = at
        .checked_add(to_usize(central_size)?)
        .filter(|&e| e <= b.len())
        .ok_or("central directory out of bounds")?;
    let mut out = Vec::new();
    for _ in 0..entries {
        if at + 46 > central_end || rd32(b, at)? != CENTRAL_SIG {
            return Err("bad central directory entry".into());
        }
        let flags = rd16(b, at + 8)?;
        let method = rd16(b, at + 10)?;
        let crc = rd32(b, at + 16)?;
        let mut compressed = rd32(b, at + 20)? as u64;
        let mut size = rd32(b, at + 24)? as u64;
        let name_len = rd16(b, at + 28)? as usize;
        let extra_len = rd16(b, at + 30)? as usize;
        let comment_len = rd16(b, at + 32)? as usize;
        let mut local = rd32(b, at + 42)? as u64;
        let name_bytes = b
            .get(at + 46..at + 46 + name_len)
            .ok_or("truncated central directory")?;
        let name = String::from_utf8_lossy(name_bytes).into_owned();
        let extra = b
            .get(at + 46 + name_len..at + 46 + name_len + extra_len)
            .ok_or("truncated central directory")?;
        // zip64 extended information: the fields that are 0xFFFFFFFF above, in this order.
        let mut e = 0;
        while e + 4 <= extra.len() {
            let id = rd16(extra, e)?;
            let len = rd16(extra, e + 2)? as usize;
            if id == 0x0001 {
                let mut f = e + 4;
                for field in [&mut size, &mut compressed, &mut local] {
                    if *field == 0xFFFF_FFFF {
                        *field = rd64(extra, f)?;
                        f += 8;
                    }
                }
            }
            e += 4 + len;
        }
        at += 46 + name_len + extra_len + comment_len;
        if flags & 1 != 0 {
            return Err(format!("member '{name}' is encrypted"));
        }
        if method != 0 {
            return Err(format!(
                "member '{name}' is compressed (method {method}); only stored members are \
                 read (numpy.savez, not numpy.savez_compressed)"
            ));
        }
        if compressed != size {
            return Err(format!("member '{name}': stored sizes disagree"));
        }
        let local = to_usize(local)?;
        if rd32(b, local)? != LOCAL_SIG {
            return Err(format!("member '{name}': bad local header"));
        }
        let start = local + 30 + rd16(b, local + 26)? as usize + rd16(b, local + 28)? as usize;
        let data = start
            .checked_add(to_usize(size)?)
            .and_then(|stop| b.get(start..stop))
            .ok_or_else(|| format!("member '{name}': data out of bounds"))?;
        if crc32(data) != crc {
            return Err(format!("member '{name}': CRC-32 mismatch"));
        }
        out.push((name, data));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn keys_encode_and_decode() {
        for name in [
            "x", "conv/1:0", "a b%c", ".hidden", "..", "é/ü", "x.npy", "-_.",
        ] {
            let key = encode_key(name);
            assert!(
                key.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_-.%".contains(&b)),
                "{key}"
            );
            assert!(!key.starts_with('.'), "{key}");
            assert_eq!(decode_key(&key).unwrap(), name);
        }
        assert_eq!(encode_key("conv/1:0"), "conv%2F1%3A0");
        // Stray percent signs are kept, as Python's unquote does.
        assert_eq!(decode_key("50%").unwrap(), "50%");
        assert_eq!(decode_key("a%zzb").unwrap(), "a%zzb");
        assert!(decode_key("%FF").is_err());
    }

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
        assert!(encode_npy(&bad).unwrap_err().contains("needs 4 elements"));
        let raw = HostTensor {
            dtype: DType::F8E4M3FN,
            shape: vec![1],
            data: Data::Raw(vec![0]),
        };
        assert!(
            encode_npy(&raw)
                .unwrap_err()
                .contains("no numpy equivalent")
        );
        let nul = HostTensor::new(vec![1], Data::String(vec![b"a\0".to_vec()]));
        assert!(encode_npy(&nul).unwrap_err().contains("NUL"));
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

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bytes in [
            &b""[..],
            b"PK\x05\x06",
            b"\x93NUMPY\x01\x00\xff\xff{",
            &[0u8; 100],
        ] {
            assert!(unzip_stored(bytes).is_err() || decode_npy(bytes).is_err());
            let _ = decode_npy(bytes);
        }
        let t = HostTensor::new(vec![4], Data::F32(vec![1.0; 4]));
        let mut zip = zip_stored(&[("a.npy".into(), encode_npy(&t).unwrap())]).unwrap();
        // Truncations anywhere fail cleanly.
        for cut in 0..zip.len() {
            if let Ok(members) = unzip_stored(&zip[..cut]) {
                for (_, d) in members {
                    let _ = decode_npy(d);
                }
            }
        }
        // A flipped data byte breaks the CRC.
        zip[100] ^= 1;
        assert!(unzip_stored(&zip).unwrap_err().contains("CRC"));
    }
}
