//! ONNX's textual syntax: a parser and a printer.
//!
//! The format is the one `onnx.parser.parse_model` reads and `onnx.printer.to_text` writes:
//!
//! ```text
//! <ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1], producer_name: "x">
//! agraph (float[N, 3] X, float[3] B) => (float[N, 3] Y)
//!    <float[3] W = {1.0, 2.0, 3.0}, float[N, 3] T>
//! {
//!    T = Mul (X, W)
//!    ["the add"] Y = Add <some_attr: int = 1> (T, B)   # a comment
//! }
//! ```
//!
//! # What the text covers
//!
//! * The model header: `ir_version`, `opset_import`, `producer_name`, `producer_version`,
//!   `domain`, `model_version`, `doc_string`, `metadata_props: ["k": "v"]`, in any order.
//! * Graphs: `name (inputs) => (outputs) <initializers and value_info> { nodes }`. A value is
//!   `type name`; names that are not identifiers (or that are type keywords) are quoted.
//!   Initializers are `type name = {values}` (or `= ["location": "file", ...]` for external
//!   data); one written in the input list is both an input and an initializer. Entries of the
//!   `<...>` list without `=` are value_info.
//! * Types: `float[N, 3, ?]` (dims are numbers, names or `?`), `float` (a scalar: an empty
//!   shape), `float[]` (unknown rank: no shape), `seq(T)`, `optional(T)`, `map(int64, T)`,
//!   `sparse_tensor(float[2])`, `opaque(domain, name)`; element types `float`, `double`,
//!   `float16`, `bfloat16`, `int8`..`int64`, `uint8`..`uint64`, `bool`, `string`,
//!   `complex64`, `complex128`, the float8 types (`float8e4m3fn`, ...), `int4`, `uint4`,
//!   `float4e2m1`, `int2`, `uint2`.
//! * Nodes: `[name] outs = domain.OpType <attrs> (ins)` (the attributes may also follow the
//!   inputs); `""` is an absent input or output.
//! * Attributes `name: kind = value` (the kind is optional where the value says it): ints,
//!   floats, strings (`"..."`, where a backslash makes the next character literal), lists
//!   `[1, 2]`, tensors `float[2] {1, 2}` (with an optional name before the values), graphs
//!   `body (inputs) => (outputs) { ... }`, type protos (`tp: type_proto = float[2]`), lists of
//!   tensors, graphs and types, and references to function attributes `@ref`.
//! * Functions after the main graph: `<domain: "d", opset_import: [...], overload: "o",
//!   doc_string: "..."> Name <attr, attr_with_default: float = 1.0> (ins) => (outs)
//!   <value_info> { nodes }`.
//! * Comments: `#` to the end of the line.
//!
//! Tensor values are written in the field ONNX uses for the element type: float16, bfloat16,
//! the float8, 4-bit and 2-bit types are written as the integers of `int32_data` (bit
//! patterns, packed as ONNX packs them), complex numbers as (real, imaginary) pairs.
//! `raw_data` is printed as those typed values. A tensor must hold exactly as many values as
//! its shape needs (fewer or more is an error); a value declared without `= ...` is just a
//! typed value (an input no initializer feeds).
//!
//! Floats are printed with the shortest digits that read back to the same bits (`nan`,
//! `inf`, `-inf` for the special values), so numbers survive the text exactly. Things onnx's
//! own parser (1.22) does not take are only printed where nothing else can express them:
//! quoted op types, domains, attribute names, tensor names and dimension names that are not
//! identifiers, lists of tensors, graphs and types (onnx parses them but drops their
//! values), and opaque types.
//!
//! # What the text drops
//!
//! [`normalize`] is exactly what a print-then-parse round trip keeps: doc strings of graphs,
//! nodes, attributes, values and tensors; metadata_props except the model's; node overloads
//! and device configurations; sparse initializers and sparse tensor attributes; quantization
//! annotations; training info and device configurations of the model; the function
//! metadata_props; type and dimension denotations; tensor segments; whether a tensor's data
//! was `raw_data` or typed fields (the text always gives typed fields); the difference
//! between an absent and an empty node domain, tensor name or opset domain, graph name
//! (absent becomes empty, empty node domains become absent); NaN payloads (only the sign is
//! kept); attributes of undefined type; values and tensors of undefined element type; bytes
//! of strings that are not UTF-8 (replaced by U+FFFD).
//!
//! Parsing never panics; every error carries the line and column of the offending token.

mod lexer;
mod parser;
mod printer;
mod tensor;

pub use parser::{parse_function, parse_graph, parse_model};
pub use printer::{print_function, print_graph, print_model, print_type};
pub use tensor::normalize;

/// A syntax or consistency error in a text, at a line and column (both 1-based; columns
/// count characters).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{col}: {message}")]
pub struct TextError {
    /// Line of the offending token.
    pub line: usize,
    /// Column of the offending token.
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl TextError {
    pub(crate) fn new(line: usize, col: usize, message: impl Into<String>) -> TextError {
        TextError {
            line,
            col,
            message: message.into(),
        }
    }
}

/// Element type names of the text, indexed by ONNX code - 1.
const DTYPE_NAMES: [&str; 26] = [
    "float",
    "uint8",
    "int8",
    "uint16",
    "int16",
    "int32",
    "int64",
    "string",
    "bool",
    "float16",
    "double",
    "uint32",
    "uint64",
    "complex64",
    "complex128",
    "bfloat16",
    "float8e4m3fn",
    "float8e4m3fnuz",
    "float8e5m2",
    "float8e5m2fnuz",
    "uint4",
    "int4",
    "float4e2m1",
    "float8e8m0",
    "uint2",
    "int2",
];

/// The text name of an element type code (`None` for undefined or unknown codes).
pub(crate) fn dtype_name(code: i32) -> Option<&'static str> {
    usize::try_from(code)
        .ok()
        .and_then(|c| c.checked_sub(1))
        .and_then(|i| DTYPE_NAMES.get(i))
        .copied()
}

/// The element type code of a text name.
pub(crate) fn dtype_code(name: &str) -> Option<i32> {
    DTYPE_NAMES
        .iter()
        .position(|n| *n == name)
        .map(|i| i as i32 + 1)
}

/// Identifiers that start a type: element types and the type constructors.
pub(crate) fn is_type_keyword(name: &str) -> bool {
    dtype_code(name).is_some()
        || matches!(
            name,
            "seq" | "optional" | "map" | "sparse_tensor" | "opaque"
        )
}

/// True when `s` can be written without quotes.
pub(crate) fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether a file is read and written in this textual syntax: its name ends in `.onnxtxt`
/// (every command reads such files as text, any other as protobuf).
pub fn is_text_path(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e == "onnxtxt")
}
