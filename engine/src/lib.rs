//! The campaign engine and the pieces of the `mutagraph` command line.
pub mod bundle;
pub mod campaign;
pub mod conformcmd;
pub mod coveragecmd;
pub mod environment;
pub mod findings;
pub mod inspect;
pub mod minimizecmd;
pub mod mutantscmd;
pub mod prompt;
pub mod recheck;
pub mod report;
pub mod runcmd;
