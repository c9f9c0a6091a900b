//! LLM layer: CrossProbe program transfer, YANHUI knowledge-aware generation, ATOC oracles.
//!
//! - [`template`]: versioned prompt templates (`templates/<name>.v<N>.txt`).
//! - [`llm`]: the chat client and its providers.
//! - [`crossprobe`], [`yanhui`], [`atoc`]: the three techniques.
//! - [`grammar`]: grammars for constrained decoding (GBNF): JSON answers, ONNX text models.
pub use mutagraph_ir as ir;

pub mod atoc;
pub mod crossprobe;
pub mod grammar;
pub mod llm;
pub mod template;
pub mod yanhui;
