//! CrossProbe: transfer of bug-triggering programs between frameworks.
//!
//! - [`db`]: the alignment database (PyTorch and TensorFlow/Keras APIs ↔ ONNX ops, with
//!   renames, layout and default differences and unsupported arguments) and which backends
//!   run each op, shipped as data with provenance (`prompts/data/alignment/`).
//! - [`snippet`]: the API calls of a bug snippet (Python, or a markdown issue's python blocks).
//! - [`values`]: the tensor literals and numbers a snippet writes (its trigger values).
//! - [`screen`]: keep the calls with an aligned op that a backend runs, drop the others with
//!   the reason.
//! - [`prompt`]: the distinction prompt (every parameter difference, step by step), the repair
//!   prompt, and reading the ONNX text out of an answer.
pub mod db;
pub mod prompt;
pub mod screen;
pub mod snippet;
pub mod values;

pub use db::{AlignmentDb, DbError, Pair, SupportFn, SupportSource, SupportTable, canonical_api};
pub use prompt::{
    OPSET, distinction, extract_onnx_text, literals, preserved_calls, preserves_functionality,
    repair_prompt, transfer_prompt, transfer_task,
};
pub use screen::{Kept, Screening, screen};
pub use snippet::{Call, Snippet, SnippetError, load, parse, python_blocks};
pub use values::{TensorLiteral, call_numbers, tensor_literals};
