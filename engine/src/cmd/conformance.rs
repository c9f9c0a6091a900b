//! `mutagraph conformance`: the ONNX backend test suite on each backend (one worker pool per
//! backend, backends in parallel), with per-backend and per-op tables and the allowlist check.
use super::PoolArgs;
use anyhow::Context;
use mutagraph_backends::conformance::{Allowlist, BackendReport, Report, Totals, run_backend};
use mutagraph_backends::suite::{self, Case};
use mutagraph_backends::worker::{Pool, PoolError, PoolOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The arguments of `mutagraph conformance`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Part of the suite.
    #[arg(long, default_value = "all", value_parser = ["node", "pytorch-converted", "pytorch-operator", "simple", "all"])]
    pub suite: String,
    /// Backends, comma-separated (default: reference, ort, tract, burn-ndarray as compiled
    /// in; `cpu`: every CPU backend and variant).
    #[arg(long, value_delimiter = ',')]
    pub backends: Vec<String>,
    /// Only tests whose id (part/test_name) contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// Write the machine-readable report here (JSON, atomically); none by default.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Also print the per-op table.
    #[arg(long)]
    pub per_op: bool,
    /// Exit with status 1 when a backend fails a test its allowlist does not name.
    #[arg(long)]
    pub check: bool,
    /// Write each backend's current failures as its allowlist into this directory.
    #[arg(long)]
    pub write_allowlist: Option<PathBuf>,
    /// Write the rewrites each backend applied over the suite as its list of known rewrites
    /// (`<backend>.txt`) into this directory (backends/conformance/rewrites is the checked-in one).
    #[arg(long)]
    pub write_rewrites: Option<PathBuf>,
    /// Print the summary as JSON (the full report goes to --report).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub pool: PoolArgs,
}

/// Runs `mutagraph conformance`.
pub fn main(a: Args, _g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args {
        suite,
        backends,
        filter,
        report,
        per_op,
        check,
        write_allowlist,
        write_rewrites,
        json,
        pool,
    } = a;
    let parts: Vec<&str> = if suite == "all" {
        mutagraph_backends::suite::PARTS.to_vec()
    } else {
        vec![suite.as_str()]
    };
    let backends = super::backend_list(backends)?;
    let cases = load_cases(&parts, filter.as_deref())?;
    tracing::info!(
        "conformance: {} tests ({}) on {}; {} tests with random expected outputs left out",
        cases.len(),
        parts.join(", "),
        backends.join(", "),
        mutagraph_backends::suite::NONDETERMINISTIC.len()
    );
    let mut rep = run_all(&pool.options()?, &backends, cases, true)?;
    rep.parts = parts.iter().map(|s| s.to_string()).collect();
    let bytes = serde_json::to_vec_pretty(&rep)?;
    if json {
        crate::outln!("{}", String::from_utf8_lossy(&bytes));
    } else {
        crate::out!("{}", failures_text(&rep));
        if per_op {
            crate::out!("\n{}", per_op_text(&rep));
        }
        crate::out!("\n{}", summary_text(&rep));
    }
    if let Some(report) = &report {
        mutagraph_ir::model::write_atomic(report, &bytes)
            .with_context(|| format!("writing {}", report.display()))?;
        tracing::info!("report: {}", report.display());
    }
    if let Some(dir) = write_allowlist {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for b in &rep.backends {
            let path = dir.join(format!("{}.txt", b.backend));
            mutagraph_ir::model::write_atomic(&path, Allowlist::render(b).as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
        }
        tracing::info!("allowlists written to {}", dir.display());
    }
    if let Some(dir) = write_rewrites {
        write_rewrite_lists(&rep, &dir)?;
    }
    let regressions: usize = rep
        .backends
        .iter()
        .map(|b| b.drift(&Allowlist::builtin(&b.backend)).new_failures.len())
        .sum();
    let rewrite_drift: usize = rep
        .backends
        .iter()
        .filter_map(|b| b.rewrite_drift())
        .map(|d| d.new_failures.len() + d.fixed.len())
        .sum();
    Ok(if check && regressions + rewrite_drift > 0 {
        eprintln!(
            "error: {regressions} failures are not in the allowlists; {rewrite_drift} rewrites \
             differ from the lists of known rewrites"
        );
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Writes each backend's rewrites over the suite (those that applied any) as `<backend>.txt`.
fn write_rewrite_lists(rep: &Report, dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for b in rep.backends.iter().filter(|b| !b.rewrites().is_empty()) {
        let path = dir.join(format!("{}.txt", b.backend));
        mutagraph_ir::model::write_atomic(&path, b.render_rewrites().as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    tracing::info!("lists of rewrites written to {}", dir.display());
    Ok(())
}

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
         new = failures not in the backend's allowlist (backends/conformance/<backend>.txt, or\n\
         <backend>@<device>.txt for the device it ran on); fixed = allowlisted tests that pass.\n",
    );
    for b in &report.backends {
        if let Some(kind) = mutagraph_backends::catalog::device_kind(&b.backend) {
            s.push_str(&format!("{}: device kind {kind}\n", b.backend));
        }
    }
    for b in &report.backends {
        s.push_str(&rewrites_line(b));
    }
    s
}

/// How many rewrites a backend applied over the suite, against its list of known rewrites
/// (naming those new or gone); empty for a backend that applied none and has no list.
fn rewrites_line(b: &BackendReport) -> String {
    let applied = b.rewrites().len();
    match b.rewrite_drift() {
        None if applied == 0 => String::new(),
        None => format!("{}: {applied} rewrites applied\n", b.backend),
        Some(d) => format!(
            "{}: {applied} rewrites applied; not in backends/conformance/rewrites/{}.txt: {}; \
             listed but not applied: {}\n",
            b.backend,
            b.backend,
            names_or_none(&d.new_failures),
            names_or_none(&d.fixed)
        ),
    }
}

fn names_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
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
