//! Where a worker is when it dies: a backend names the step it enters (the graph transformer
//! ONNX Runtime's optimizer applies), the worker writes it into a small file the engine gave it,
//! and the engine reads that file when the worker dies. A signal leaves no message of the
//! library's own; this one tells which of its passes the process died in.
//!
//! The file is mapped into the worker's memory, shared: a step is a copy into the mapping, no
//! system call, and what the worker copied is in the file whatever kills it next. A line on
//! stderr per step instead (ONNX Runtime's thirty-odd passes per session) woke the engine's
//! reader thread as often and cost a zoo campaign 7 % of its executions.
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The environment variable that names a worker's step file.
pub const STEP_FILE_ENV: &str = "MUTAGRAPH_STEP_FILE";

/// What [`leave`] writes: the worker is in no named step.
const NOWHERE: &str = "-";

/// The size of the step file: the longest step kept (the rest of a longer one is cut).
pub const RECORD: usize = 256;

/// The worker's mapping of its step file, once [`enable`] mapped it (in a worker only).
static MAPPED: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

/// Maps the step file the engine named in [`STEP_FILE_ENV`] (the worker does, before it creates
/// its backend); without one, steps are not recorded.
#[allow(unsafe_code)]
pub fn enable() {
    let Some(path) = std::env::var_os(STEP_FILE_ENV) else {
        return;
    };
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
    else {
        return;
    };
    if f.set_len(RECORD as u64).is_err() {
        return;
    }
    use rustix::mm::{MapFlags, ProtFlags, mmap};
    // SAFETY: a fresh shared mapping of RECORD bytes of a file this process opened; nothing
    // else in the process refers to that memory, and it is never unmapped (the worker holds it
    // until it exits). The file may close: the mapping keeps it.
    let mapped = unsafe {
        mmap(
            std::ptr::null_mut(),
            RECORD,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED,
            &f,
            0,
        )
    };
    if let Ok(p) = mapped {
        MAPPED.store(p.cast(), Ordering::Release);
    }
}

/// The worker enters the step `what` (a phrase that completes "the process died …", such as
/// [`optimizer_pass`]'s).
#[allow(unsafe_code)]
pub fn enter(what: &str) {
    let p = MAPPED.load(Ordering::Acquire);
    if p.is_null() {
        return;
    }
    let n = what.len().min(RECORD);
    // SAFETY: `p` maps RECORD writable bytes for the life of the process (see `enable`);
    // steps are entered by the thread that creates sessions, one at a time. The bytes after
    // the step are zeroed so that a shorter step does not keep the end of a longer one.
    unsafe {
        std::ptr::copy_nonoverlapping(what.as_ptr(), p, n);
        std::ptr::write_bytes(p.add(n), 0, RECORD - n);
    }
}

/// The worker left the step it entered last.
pub fn leave() {
    enter(NOWHERE);
}

/// The step of the worker preparing a model (the library's load and compile).
pub const PREPARING: &str = "while preparing the model";

/// The step of the worker running a prepared model.
pub const RUNNING: &str = "while running the model";

/// Whether `step` is one of the worker's own stages ([`PREPARING`], [`RUNNING`]), not a step
/// a library named.
pub fn is_stage(step: &str) -> bool {
    step == PREPARING || step == RUNNING
}

/// The rewrites that changed the model being prepared, in order ([`rewrote`]).
static REWRITES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The library applied the rewrite `name` and it changed the model (ONNX Runtime's graph
/// transformer, tract's patch): the worker reports it with the run.
pub fn rewrote(name: &str) {
    REWRITES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(name.to_string());
}

/// The rewrites recorded since the last call.
pub fn take_rewrites() -> Vec<String> {
    std::mem::take(&mut *REWRITES.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The step a dead worker was in, from its step file (read through a handle the engine kept:
/// the file's name is gone once the worker mapped it).
pub fn at_death(file: &std::fs::File) -> Option<String> {
    use std::os::unix::fs::FileExt;
    let mut bytes = vec![0u8; RECORD];
    let n = file.read_at(&mut bytes, 0).ok()?;
    bytes.truncate(n);
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let step = String::from_utf8_lossy(&bytes[..end]).trim().to_string();
    (!step.is_empty() && step != NOWHERE).then_some(step)
}

/// Between the library and the pass in [`optimizer_pass`]'s phrase.
const PASS: &str = "'s optimizer pass ";

/// The step of a library's graph optimizer applying one pass (`in ONNX Runtime's optimizer pass
/// NchwcTransformer`): ONNX Runtime names its passes graph transformers.
pub fn optimizer_pass(library: &str, pass: &str) -> String {
    format!("in {library}{PASS}{pass}")
}

/// The optimizer pass a failure's message says the process died in (the phrase of
/// [`optimizer_pass`]).
pub fn pass_named(message: &str) -> Option<&str> {
    let rest = &message[message.find(PASS)? + PASS.len()..];
    let name = rest
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()?;
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_file_says_the_last_step_entered_and_not_left() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("step");
        let engine = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        assert_eq!(at_death(&engine), None, "an empty file: no step");
        let worker = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        // The name goes once the worker holds the file; the engine reads through its handle.
        std::fs::remove_file(&path).unwrap();
        let write = |what: &str| {
            let mut record = [0u8; RECORD];
            record[..what.len()].copy_from_slice(what.as_bytes());
            worker.write_all_at(&record, 0).unwrap();
        };
        write("in a long step name");
        write("in B");
        assert_eq!(at_death(&engine).as_deref(), Some("in B"));
        write(NOWHERE);
        assert_eq!(at_death(&engine), None);
    }

    #[test]
    fn a_pass_is_read_back_from_its_phrase() {
        let step = optimizer_pass("ONNX Runtime", "NchwcTransformer");
        let message = format!("signal 11 (SIGSEGV): {step}");
        assert_eq!(pass_named(&message), Some("NchwcTransformer"));
        assert_eq!(pass_named("signal 11 (SIGSEGV): "), None);
    }
}
