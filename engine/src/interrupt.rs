//! SIGINT and SIGTERM as a request to stop. A long command (a campaign) checks [`requested`]
//! where stopping leaves everything consistent, finishes what it must and prints its summary; a
//! second signal ends the process at once (exit status 130), which is still safe because every
//! file is written atomically.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
static SIGNAL: AtomicI32 = AtomicI32::new(0);

fn flag() -> &'static Arc<AtomicBool> {
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Installs the handlers: the first SIGINT or SIGTERM sets the flag, a second one exits.
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as it was before this signal: it exits only
        // when an earlier signal already set it.
        signal_hook::flag::register_conditional_shutdown(sig, 130, flag().clone())?;
        signal_hook::flag::register(sig, flag().clone())?;
        let s = Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(sig, s.clone())?;
        // Which signal came first, for the summary (checked lazily in `which`).
        SIGNALS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((sig, s));
    }
    Ok(())
}

static SIGNALS: std::sync::Mutex<Vec<(i32, Arc<AtomicBool>)>> = std::sync::Mutex::new(Vec::new());

/// Whether a stop was requested.
pub fn requested() -> bool {
    flag().load(Ordering::Relaxed)
}

/// Requests a stop as a signal would (tests, and commands that stop themselves).
pub fn request() {
    flag().store(true, Ordering::Relaxed);
}

/// The name of the signal that requested the stop (`SIGINT`, `SIGTERM`), if one did.
pub fn which() -> Option<&'static str> {
    if SIGNAL.load(Ordering::Relaxed) == 0 {
        let got = SIGNALS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(_, f)| f.load(Ordering::Relaxed))
            .map(|(s, _)| *s);
        if let Some(s) = got {
            SIGNAL.store(s, Ordering::Relaxed);
        }
    }
    match SIGNAL.load(Ordering::Relaxed) {
        signal_hook::consts::SIGINT => Some("SIGINT"),
        signal_hook::consts::SIGTERM => Some("SIGTERM"),
        _ => None,
    }
}
