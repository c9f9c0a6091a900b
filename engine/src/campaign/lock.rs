//! One campaign per output directory: `OUT/.lock`, held with `flock` for the session. A second
//! campaign on the same directory (which would spend the same work twice and keep one result)
//! is refused with the first one's process id. The lock goes with the process, however it
//! ends: a killed campaign never leaves a stale lock behind.

use anyhow::{Context, Result, bail};
use std::io::{Read, Seek, Write};
use std::path::Path;

/// The lock file's name in the output directory.
pub const FILE: &str = ".lock";

/// The held lock (released when dropped or when the process ends).
pub struct OutLock {
    _file: std::fs::File,
}

impl OutLock {
    /// Takes the lock of `out`, or says who holds it.
    pub fn acquire(out: &Path) -> Result<OutLock> {
        use rustix::fs::{FlockOperation, flock};
        let path = out.join(FILE);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        if let Err(e) = flock(&file, FlockOperation::NonBlockingLockExclusive) {
            if e == rustix::io::Errno::WOULDBLOCK {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                bail!(
                    "{}: another campaign is running in this directory{} (one campaign per --out; \
                     wait for it to end or use another directory)",
                    out.display(),
                    if holder.is_empty() {
                        String::new()
                    } else {
                        format!(" (pid {holder})")
                    }
                );
            }
            return Err(std::io::Error::from(e))
                .with_context(|| format!("locking {}", path.display()));
        }
        // Who holds it, for the message above (informational only).
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = write!(file, "{}", std::process::id());
        let _ = file.flush();
        Ok(OutLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_one_directory_is_refused_until_the_first_is_dropped() {
        let d = tempfile::tempdir().unwrap();
        let first = OutLock::acquire(d.path()).unwrap();
        let e = OutLock::acquire(d.path())
            .err()
            .expect("second lock refused");
        let msg = format!("{e:#}");
        assert!(msg.contains("another campaign is running"), "{msg}");
        assert!(msg.contains(&std::process::id().to_string()), "{msg}");
        drop(first);
        OutLock::acquire(d.path()).expect("free again");
    }
}
