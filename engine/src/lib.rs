//! The campaign engine and the pieces of the `mutagraph` command line.
pub mod bundle;
pub mod campaign;
pub mod conformcmd;
pub mod coveragecmd;
pub mod findings;
pub mod inspect;
pub mod minimizecmd;
pub mod prompt;
pub mod report;
pub mod runcmd;
