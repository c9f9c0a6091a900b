//! NumPy `.npz` archives (and ONNX `.pb` value files) for bug bundles.
//!
//! An `.npz` is a zip archive of `.npy` files, one per array. We write:
//!
//! - a zip (written with the `zip` crate) with *stored* (uncompressed) members, a fixed
//!   timestamp (1980-01-01 00:00) and fixed permissions, so the same arrays always give the
//!   same bytes; a member over 4 GiB is refused, more than 65535 arrays get zip64 end records;
//! - `.npy` format version 1.0: the magic `\x93NUMPY`, version bytes `1 0`, a little-endian
//!   `u16` header length, then the header, a Python dict literal
//!   `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with spaces and ended
//!   by `\n` so that the data starts at a multiple of 64 bytes; the data follows, little-endian
//!   and in C order.
//!
//! Element types (`descr`):
//!
//! | [`Data`](mutagraph_backends::value::Data) | written as |
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
pub(crate) mod npy;
mod zip;

use super::{BundleError, write_atomic};
use mutagraph_backends::value::{HostTensor, NamedValues};
use mutagraph_ir::dtype::DType;
use npy::{decode_npy, encode_npy};
use std::path::{Path, PathBuf};
use zip::{unzip_stored, zip_stored};

/// What is wrong with an array to write or an archive read ([`BundleError::Unwritable`] and
/// [`BundleError::Malformed`] name the file and, when writing, the array).
#[derive(Debug, thiserror::Error)]
pub enum NpzError {
    /// An array without a name.
    #[error("an array needs a non-empty name")]
    EmptyName,
    /// Two different arrays of one name.
    #[error("two different arrays have this name")]
    DuplicateName,
    /// An element type numpy has no type for (float8, 4-bit, complex).
    #[error("element type {0} has no numpy equivalent")]
    NoNumpyType(DType),
    /// A string element that is not UTF-8.
    #[error("string {0} is not UTF-8; numpy strings hold text")]
    StringNotUtf8(usize),
    /// A string element holding a NUL character.
    #[error("string {0} contains a NUL character, which numpy strings cannot keep")]
    StringNul(usize),
    /// A shape whose element count overflows.
    #[error("shape {0:?} overflows")]
    ShapeOverflow(Vec<usize>),
    /// A tensor whose data does not hold as many elements as its shape.
    #[error("shape {shape:?} needs {need} elements, the data holds {have}")]
    ElementCount {
        /// The tensor's shape.
        shape: Vec<usize>,
        /// Elements the shape needs.
        need: usize,
        /// Elements the data holds.
        have: usize,
    },
    /// A tensor whose data is of another element type than its dtype.
    #[error("dtype {dtype} but {data} data")]
    DTypeMismatch {
        /// The tensor's dtype.
        dtype: DType,
        /// The data's element type.
        data: DType,
    },
    /// An `.npy` header longer than format 1.0 holds.
    #[error("the .npy header of shape {0:?} is too long")]
    HeaderTooLong(Vec<usize>),
    /// An encrypted member.
    #[error("member '{0}' is encrypted")]
    Encrypted(String),
    /// A compressed member (only stored members are read).
    #[error(
        "member '{name}' is compressed ({method}); only stored members are read \
         (numpy.savez, not numpy.savez_compressed)"
    )]
    Compressed {
        /// The member.
        name: String,
        /// The zip compression method.
        method: String,
    },
    /// A member whose data does not match its CRC-32.
    #[error("member '{0}': CRC-32 mismatch")]
    CrcMismatch(String),
    /// What the `zip` crate finds wrong with an archive (not a zip, truncated, a member over
    /// 4 GiB to write, ...).
    #[error("zip: {0}")]
    Zip(#[from] ::zip::result::ZipError),
    /// A member whose name does not end in `.npy`.
    #[error("member '{0}' is not an .npy array")]
    NotNpy(String),
    /// A member key whose percent-decoded bytes are not UTF-8 ([`decode_key`]).
    #[error("key '{0}' does not decode to UTF-8")]
    KeyNotUtf8(String),
    /// A problem with one member.
    #[error("member '{member}': {problem}")]
    Member {
        /// The member's name in the archive.
        member: String,
        /// What is wrong with it.
        problem: Box<NpzError>,
    },
    /// The file does not start with the `.npy` magic.
    #[error("not an .npy file (bad magic)")]
    BadMagic,
    /// An `.npy` format version other than 1.0 to 3.0.
    #[error(".npy format version {0}.{1} is not supported")]
    Version(u8, u8),
    /// The `.npy` header extends past the end of the file.
    #[error("truncated .npy header")]
    TruncatedHeader,
    /// The header lacks a character the literal syntax needs there.
    #[error("expected '{expected}' at byte {at} of the header")]
    HeaderExpected {
        /// The character needed.
        expected: char,
        /// Its position in the header.
        at: usize,
    },
    /// A string of the header is not closed.
    #[error("unterminated string in the header")]
    HeaderString,
    /// An integer of the header does not fit 64 bits.
    #[error("integer {0} out of range in the header")]
    HeaderInteger(String),
    /// Text of the header that is no literal the header syntax has.
    #[error("unexpected text at byte {0} of the header")]
    HeaderText(usize),
    /// The header is not a dict literal.
    #[error("the .npy header is not a dict")]
    HeaderNotDict,
    /// The header lacks a key.
    #[error("the .npy header lacks '{0}'")]
    HeaderLacks(&'static str),
    /// `descr` is not a string (a structured array).
    #[error("'descr' is not a string (structured arrays are not supported)")]
    DescrNotString,
    /// A Fortran-order array.
    #[error("Fortran-order arrays are not supported")]
    FortranOrder,
    /// `fortran_order` is not a boolean.
    #[error("'fortran_order' is not a boolean")]
    FortranOrderNotBool,
    /// `shape` is not a tuple.
    #[error("'shape' is not a tuple")]
    ShapeNotTuple,
    /// `shape` holds something other than integers.
    #[error("'shape' holds a non-integer")]
    ShapeNotIntegers,
    /// A dimension that does not fit this machine's sizes.
    #[error("dimension {0} too large")]
    DimTooLarge(u64),
    /// A `descr` this reader does not handle.
    #[error("unsupported dtype '{0}'")]
    UnsupportedDType(String),
    /// A big-endian `descr`.
    #[error("big-endian dtype '{0}' is not supported")]
    BigEndian(String),
    /// Data of another size than the header's dtype and shape need.
    #[error("{descr} array of shape {shape:?} needs {need} data bytes, the file holds {have}")]
    DataSize {
        /// The header's dtype.
        descr: String,
        /// The header's shape.
        shape: Vec<usize>,
        /// Bytes needed.
        need: usize,
        /// Bytes the file holds.
        have: usize,
    },
    /// A string element holding a value that is no Unicode code point.
    #[error("string {index} holds invalid code point {code}")]
    CodePoint {
        /// The element.
        index: usize,
        /// The value.
        code: u32,
    },
}

/// Writes `arrays` as a NumPy `.npz` archive at `path`, atomically (temporary file beside it,
/// then rename). See the [module documentation](self) for the element types and the encoding
/// of names.
pub fn write_npz(path: &Path, arrays: &[(String, HostTensor)]) -> Result<(), BundleError> {
    let unwritable = |name: &str, problem: NpzError| BundleError::Unwritable {
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
            return Err(unwritable(name, NpzError::EmptyName));
        }
        let npy = encode_npy(tensor).map_err(|p| unwritable(name, p))?;
        if let Some(&i) = seen.get(name.as_str()) {
            if members[i].1 == npy {
                continue;
            }
            return Err(unwritable(name, NpzError::DuplicateName));
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
    let malformed = |problem: NpzError| BundleError::Malformed {
        path: path.to_path_buf(),
        problem,
    };
    let mut out = Vec::new();
    for (member, data) in unzip_stored(&bytes).map_err(malformed)? {
        let Some(key) = member.strip_suffix(".npy") else {
            return Err(malformed(NpzError::NotNpy(member)));
        };
        let in_member = |p: NpzError| {
            malformed(NpzError::Member {
                member: member.clone(),
                problem: Box::new(p),
            })
        };
        let name = decode_key(key).map_err(in_member)?;
        let tensor = decode_npy(&data).map_err(in_member)?;
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
pub fn decode_key(key: &str) -> Result<String, NpzError> {
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
    String::from_utf8(out).map_err(|_| NpzError::KeyNotUtf8(key.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_backends::value::Data;

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
                    let _ = decode_npy(&d);
                }
            }
        }
        // A flipped data byte breaks the CRC.
        zip[100] ^= 1;
        assert!(unzip_stored(&zip).unwrap_err().to_string().contains("CRC"));
    }
}
