//! Worker isolation: every backend runs in a worker process (the `mutagraph` binary with the
//! hidden `worker` subcommand) that speaks a framed binary protocol on stdin/stdout.
//! [`pool::Pool`] keeps one warm worker per backend and turns whatever happens into an
//! [`Outcome`]: outputs, an error of a stage, a crash (signal or panic), a timeout, or running
//! out of memory, with wall time and peak memory.
pub mod pool;
pub mod protocol;
pub mod serve;

pub use pool::{Outcome, Pool, PoolError, PoolOptions, RunReport};
pub use serve::serve;
