//! The campaign engine and the pieces of the `mutagraph` command line.
pub mod conformcmd;
pub mod inspect;
pub mod runcmd;
