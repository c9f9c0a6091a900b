//! `mutagraph prompt ...`: the LLM layer on the command line (render, transfer, generate,
//! oracle) and the validation loop that judges what a model writes.
pub mod judge;
