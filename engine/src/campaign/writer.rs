//! Corpus entries written off the campaign's main thread.
//!
//! A corpus entry of a real model is its whole file (weights included, megabytes), written
//! atomically: temporary file, fsync, rename. On the main thread those writes cost as much as
//! the oracles. [`Writer`] takes the files in order, writes them on its own thread, and
//! [`Writer::flush`] waits until everything handed over is on disk; the campaign flushes before
//! each state commit, so a committed state still never names an entry that is not on disk.
//!
//! The queue is bounded ([`QUEUE`] files): a disk slower than the campaign slows the campaign
//! down instead of filling memory.
use mutagraph_ir::model::write_atomic;
use std::path::PathBuf;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// Files waiting to be written at most.
pub const QUEUE: usize = 32;

/// One file to write.
pub struct File {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

/// Why a corpus entry is not on disk.
#[derive(Clone, Debug, thiserror::Error)]
pub enum WriterError {
    /// Writing the file failed.
    #[error("writing {}: {err}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong (shared: [`Writer::flush`] reports the first failure each time).
        err: Arc<mutagraph_ir::Error>,
    },
    /// The writer's thread is gone (it panicked).
    #[error("the corpus writer's thread has stopped")]
    Stopped,
}

#[derive(Default)]
struct Progress {
    queued: u64,
    written: u64,
    /// The first write that failed (the file and the error).
    error: Option<WriterError>,
}

/// Writes files in the order given, atomically, on a thread of its own.
pub struct Writer {
    tx: Option<SyncSender<File>>,
    progress: Arc<(Mutex<Progress>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// A writer and its thread.
    pub fn new() -> Writer {
        let (tx, rx) = sync_channel::<File>(QUEUE);
        let progress = Arc::new((Mutex::new(Progress::default()), Condvar::new()));
        let shared = Arc::clone(&progress);
        let thread = std::thread::Builder::new()
            .name("corpus-writer".into())
            .spawn(move || {
                for f in rx {
                    let res = write_atomic(&f.path, &f.bytes);
                    let (lock, cv) = &*shared;
                    let mut p = lock.lock().unwrap_or_else(|e| e.into_inner());
                    if let Err(e) = res
                        && p.error.is_none()
                    {
                        p.error = Some(WriterError::Write {
                            path: f.path,
                            err: Arc::new(e),
                        });
                    }
                    p.written += 1;
                    cv.notify_all();
                }
            })
            .ok();
        Writer {
            tx: thread.as_ref().map(|_| tx),
            progress,
            thread,
        }
    }

    /// Hands `file` over (written later, after the files handed over before it). Blocks while
    /// [`QUEUE`] files are waiting. Without a thread (it could not be started) the file is
    /// written now.
    pub fn write(&self, file: File) -> Result<(), WriterError> {
        let Some(tx) = &self.tx else {
            return write_atomic(&file.path, &file.bytes).map_err(|e| WriterError::Write {
                path: file.path,
                err: Arc::new(e),
            });
        };
        self.progress
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .queued += 1;
        if tx.send(file).is_err() {
            return Err(WriterError::Stopped);
        }
        Ok(())
    }

    /// Waits until every file handed over is written; the first failed write, if any.
    pub fn flush(&self) -> Result<(), WriterError> {
        let (lock, cv) = &*self.progress;
        let mut p = lock.lock().unwrap_or_else(|e| e.into_inner());
        while p.written < p.queued {
            if self.thread.as_ref().is_some_and(|t| t.is_finished()) {
                return Err(WriterError::Stopped);
            }
            p = cv
                .wait_timeout(p, std::time::Duration::from_millis(200))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        match &p.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

impl Default for Writer {
    fn default() -> Self {
        Writer::new()
    }
}

impl Drop for Writer {
    /// Writes what is still queued, then stops the thread.
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_on_disk_after_flush_in_order_and_a_failed_write_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let w = Writer::new();
        for i in 0..100u8 {
            w.write(File {
                path: dir.path().join(format!("{i}.bin")),
                bytes: vec![i; 1000],
            })
            .unwrap();
        }
        w.flush().unwrap();
        for i in 0..100u8 {
            assert_eq!(
                std::fs::read(dir.path().join(format!("{i}.bin"))).unwrap(),
                vec![i; 1000]
            );
        }
        // A file the writer cannot create (its directory does not exist) fails the flush.
        w.write(File {
            path: dir.path().join("missing").join("x.bin"),
            bytes: vec![1],
        })
        .unwrap();
        let err = w.flush().unwrap_err().to_string();
        assert!(err.contains("missing"), "{err}");
    }

    #[test]
    fn dropping_the_writer_writes_what_was_queued() {
        let dir = tempfile::tempdir().unwrap();
        let w = Writer::new();
        w.write(File {
            path: dir.path().join("last.bin"),
            bytes: b"kept".to_vec(),
        })
        .unwrap();
        drop(w);
        assert_eq!(std::fs::read(dir.path().join("last.bin")).unwrap(), b"kept");
    }
}
