//! The campaign engine and the pieces of the `mutagraph` command line.
pub mod bundle;
pub mod campaign;
pub mod cmd;
pub mod consistency;
pub mod corpus;
pub mod environment;
pub mod findings;
pub mod inputs;
pub mod interrupt;
pub mod minimizer;
pub mod out;
pub mod persisted;
pub mod prompt;
pub mod report;
