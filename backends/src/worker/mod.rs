//! Worker isolation: every backend runs in a worker process (the `mutagraph` binary with the
//! hidden `worker` subcommand) that speaks a framed binary protocol on stdin/stdout.
//! [`pool::Pool`] keeps one warm worker per backend and turns whatever happens into an
//! [`Outcome`]: outputs, an error of a stage, a crash (signal or panic), a timeout, or running
//! out of memory, with wall time and peak memory.
pub mod context;
pub mod pool;
pub mod protocol;
pub mod serve;

pub use pool::{Outcome, Pool, PoolError, PoolOptions, RunReport, is_timeout_detail};
pub use serve::serve;

/// Niceness of background work (the campaign's minimizer and its workers): it gets the CPU
/// the campaign leaves, and all of it when the campaign waits.
pub const BACKGROUND_NICE: i32 = 10;

/// Niceness of a campaign's execution lanes: below the search and the triage, which feed and
/// empty them (when those wait for the CPU, every lane idles), above background work.
pub const LANE_NICE: i32 = 5;

/// Lowers the calling thread's scheduling priority to niceness `nice` (threads it starts
/// afterwards inherit it); `nice <= 0` does nothing. Best effort: a system that refuses leaves
/// the priority as it was.
pub fn lower_priority(nice: i32) {
    if nice > 0 {
        // On Linux a thread id names one thread of the process.
        let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), nice);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lower_priority_sets_the_calling_threads_niceness_only() {
        let before = rustix::process::getpriority_process(None).unwrap();
        let inside = std::thread::spawn(|| {
            super::lower_priority(super::BACKGROUND_NICE);
            rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(inside, before.max(super::BACKGROUND_NICE));
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), before);
    }
}
