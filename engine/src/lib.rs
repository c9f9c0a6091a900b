//! The campaign engine and the pieces of the `mutagraph` command line.
pub mod bundle;
pub mod campaign;
pub mod conformcmd;
pub mod coveragecmd;
pub mod environment;
pub mod findings;
pub mod inputs;
pub mod inspect;
pub mod interrupt;
pub mod minimizecmd;
pub mod mutantscmd;
pub mod out;
pub mod prompt;
pub mod recheck;
pub mod report;
pub mod runcmd;
