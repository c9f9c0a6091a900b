//! The commands' standard output. Results go through [`write`] (the [`outln!`](crate::outln)
//! and [`out!`](crate::out) macros), which turns a closed pipe (`mutagraph ops | head -1`) into
//! the error [`ClosedStdout`]: the binary ends quietly on it, as `ls` or `grep` do, instead of
//! panicking the way `println!` does.

use std::io::Write;

/// Standard output was closed by its reader.
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed")]
pub struct ClosedStdout;

/// Writes `s` to standard output and flushes it.
pub fn write(s: &str) -> Result<(), std::io::Error> {
    let mut o = std::io::stdout().lock();
    o.write_all(s.as_bytes()).and_then(|()| o.flush())
}

/// Whether an error chain ends in a closed standard output (the command stops quietly).
pub fn is_closed_stdout(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| c.downcast_ref::<ClosedStdout>().is_some())
}

/// [`write`], with a broken pipe reported as [`ClosedStdout`].
pub fn emit(s: &str) -> anyhow::Result<()> {
    write(s).map_err(|e| {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            anyhow::Error::new(ClosedStdout)
        } else {
            anyhow::Error::new(e).context("writing to standard output")
        }
    })
}

/// `print!` to standard output through [`emit`]; use inside a function returning
/// `anyhow::Result`.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::out::emit(&format!($($t)*))? };
}

/// `println!` to standard output through [`emit`]; use inside a function returning
/// `anyhow::Result`.
#[macro_export]
macro_rules! outln {
    () => { $crate::out::emit("\n")? };
    ($($t:tt)*) => { $crate::out::emit(&format!("{}\n", format_args!($($t)*)))? };
}
