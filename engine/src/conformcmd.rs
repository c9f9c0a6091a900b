//! `mutagraph conformance`: the ONNX backend test suite on each backend (one worker pool per
//! backend, backends in parallel), with per-backend and per-op tables and the allowlist check.
use mutagraph_backends::conformance::{Allowlist, BackendReport, Report, Totals, run_backend};
use mutagraph_backends::suite::{self, Case};
use mutagraph_backends::worker::{Pool, PoolError, PoolOptions};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Loads the cases of the given parts whose id contains `filter`.
pub fn load_cases(parts: &[&str], filter: Option<&str>) -> Result<Vec<Case>, suite::SuiteError> {
    let refs = suite::discover(&suite::root(), parts)?;
    let mut out = Vec::new();
    for r in refs {
        if let Some(f) = filter
            && !r.id().contains(f)
        {
            continue;
        }
        out.push(suite::load(&r)?);
    }
    Ok(out)
}

/// Runs every backend over `cases`, in parallel (one thread and one pool per backend).
/// `progress` prints a status line when set.
pub fn run_all(
    opts: &PoolOptions,
    backends: &[String],
    cases: Vec<Case>,
    progress: bool,
) -> Result<Report, PoolError> {
    let cases = Arc::new(cases);
    let done = Arc::new(AtomicUsize::new(0));
    let total = cases.len() * backends.len();
    let handles: Vec<_> = backends
        .iter()
        .map(|b| {
            let b = b.clone();
            let cases = cases.clone();
            let done = done.clone();
            let opts = opts.clone();
            std::thread::spawn(move || {
                let mut pool = Pool::new(opts);
                run_backend(&mut pool, &b, &cases, &mut |_, _| {
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if progress && (d.is_multiple_of(25) || d == total) {
                        eprint!("\r  {d}/{total} runs");
                        let _ = std::io::stderr().flush();
                    }
                })
            })
        })
        .collect();
    let mut reports = Vec::new();
    let progress = progress && std::io::IsTerminal::is_terminal(&std::io::stderr());
    for h in handles {
        reports.push(h.join().expect("conformance thread panicked")?);
    }
    if progress {
        eprintln!();
    }
    Ok(Report {
        suite: suite::root().display().to_string(),
        parts: Vec::new(),
        backends: reports,
    })
}

/// The per-backend summary table, with the allowlist drift.
pub fn summary_text(report: &Report) -> String {
    let mut s = format!(
        "{:<14} {:<10} {:>6} {:>6} {:>6} {:>6} {:>7} {:>8} {:>7} {:>8} {:>6} {:>6}\n",
        "backend",
        "version",
        "tests",
        "pass",
        "fail",
        "unsup",
        "crash",
        "tmo/oom",
        "pass%",
        "supp.%",
        "new",
        "fixed"
    );
    for b in &report.backends {
        let t = b.totals();
        let d = b.drift(&Allowlist::builtin(&b.backend));
        let version: String = b.version.chars().take(10).collect();
        s.push_str(&format!(
            "{:<14} {:<10} {:>6} {:>6} {:>6} {:>6} {:>7} {:>8} {:>6.1}% {:>7.1}% {:>6} {:>6}\n",
            b.backend,
            version,
            t.total,
            t.pass,
            t.fail,
            t.unsupported,
            t.crash,
            t.timeout_oom,
            t.pass_rate(),
            t.supported_pass_rate(),
            d.new_failures.len(),
            d.fixed.len()
        ));
    }
    s.push_str(
        "pass% = passes over all tests; supp.% = passes over tests not unsupported;\n\
         new = failures not in the backend's allowlist (backends/conformance/<backend>.txt); fixed = allowlisted tests that pass.\n",
    );
    s
}

/// Per-op table over the node tests: `pass/fail/unsupported` per backend.
pub fn per_op_text(report: &Report) -> String {
    let names: Vec<&str> = report.backends.iter().map(|b| b.backend.as_str()).collect();
    let mut s = format!("{:<28}", "op (node tests: pass/fail/unsup)");
    for n in &names {
        s.push_str(&format!(" {n:>13}"));
    }
    s.push('\n');
    for (op, per) in report.per_op() {
        s.push_str(&format!("{op:<28}"));
        for n in &names {
            let t = per.get(*n).cloned().unwrap_or_default();
            s.push_str(&format!(
                " {:>13}",
                format!("{}/{}/{}", t.pass, t.fail, t.unsupported)
            ));
        }
        s.push('\n');
    }
    s
}

/// The failures of each backend, with the allowlist status.
pub fn failures_text(report: &Report) -> String {
    let mut s = String::new();
    for b in &report.backends {
        let allow = Allowlist::builtin(&b.backend);
        let fails: Vec<_> = b
            .results
            .iter()
            .filter(|r| r.verdict.is_failure())
            .collect();
        if fails.is_empty() {
            continue;
        }
        s.push_str(&format!("\n{} failures ({}):\n", b.backend, fails.len()));
        for r in fails {
            let mark = if allow.ids.contains(&r.id) {
                "known"
            } else {
                "NEW  "
            };
            let detail: String = r.detail.chars().take(150).collect();
            s.push_str(&format!(
                "  {mark} {:<52} {:<9} {detail}\n",
                r.id,
                r.verdict.name()
            ));
        }
    }
    s
}

/// Totals of a backend by name.
pub fn totals(report: &Report, backend: &str) -> Option<Totals> {
    report
        .backends
        .iter()
        .find(|b| b.backend == backend)
        .map(BackendReport::totals)
}
