//! The campaign's status: on a terminal an AFL++-style screen redrawn in place (unique
//! findings, the last new find, time left, executions per second per backend, coverage);
//! otherwise one line per interval, for logs.

use super::{Counters, Timings};
use mutagraph_mutators::coverage::Report;
use std::fmt::Write as _;

/// What the status shows, taken from the campaign at one moment.
pub struct Snapshot<'a> {
    /// The output directory.
    pub out: &'a std::path::Path,
    /// Campaign wall time over all sessions, seconds.
    pub elapsed: f64,
    /// This session's wall time, seconds.
    pub session: f64,
    /// This session's time limit, seconds.
    pub limit: Option<f64>,
    /// The campaign's iteration limit.
    pub iterations_limit: Option<u64>,
    /// The counters.
    pub counters: &'a Counters,
    /// Phase times (per backend runs).
    pub timings: &'a Timings,
    /// Coverage now.
    pub coverage: &'a Report,
    /// Campaign time of the last new unique finding in this session.
    pub last_find: Option<f64>,
    /// Minimizations queued or running.
    pub minimizing: usize,
    /// Whether a stop was requested (the session is finishing).
    pub stopping: bool,
    /// The corpus against the disk budget.
    pub corpus: &'a crate::corpus::CorpusStats,
    /// A shared campaign's imports.
    pub sync: Option<&'a super::sync::SyncState>,
}

/// `1h02m03s`, `4m05s`, `6.0s`.
pub fn hms(s: f64) -> String {
    let s = s.max(0.0);
    if s < 60.0 {
        return format!("{s:.1}s");
    }
    let t = s as u64;
    let (h, m, sec) = (t / 3600, (t / 60) % 60, t % 60);
    if h > 0 {
        format!("{h}h{m:02}m{sec:02}s")
    } else {
        format!("{m}m{sec:02}s")
    }
}

fn rate(n: u64, s: f64) -> f64 {
    if s > 0.0 { n as f64 / s } else { 0.0 }
}

impl Snapshot<'_> {
    fn left(&self) -> String {
        match self.limit {
            Some(l) => hms(l - self.session),
            None => match self.iterations_limit {
                Some(n) => format!("{} iterations", n.saturating_sub(self.counters.iterations)),
                None => "no limit".into(),
            },
        }
    }

    fn last_find(&self) -> String {
        match self.last_find {
            Some(t) => format!("{} ago", hms(self.elapsed - t)),
            None => "none this session".into(),
        }
    }

    /// One line, for logs.
    pub fn line(&self) -> String {
        let c = self.counters;
        let r = self.coverage;
        format!(
            "[{}] exec {} ({:.1}/s) | unique {} (last new {}) | cov op {:.1}% pair {:.1}% param {:.1}% | illegal {:.1}% | disk {} MB | left {}{}",
            hms(self.elapsed),
            c.executions,
            rate(c.executions, self.elapsed),
            c.unique_findings,
            self.last_find(),
            r.op_types.percent,
            r.op_pairs.percent,
            r.params.percent,
            c.illegal_percent(),
            (self.corpus.bytes + self.corpus.other_bytes) / 1_000_000,
            self.left(),
            if self.stopping { " | stopping" } else { "" }
        )
    }

    /// The screen, one string of lines (without the cursor movement).
    pub fn screen(&self) -> Vec<String> {
        let c = self.counters;
        let r = self.coverage;
        let mut lines = Vec::new();
        lines.push(format!(
            " mutagraph campaign  {}{}",
            self.out.display(),
            if self.stopping {
                "  (stopping: finishing the batch and pending minimizations)"
            } else {
                ""
            }
        ));
        lines.push(format!(
            "   run time : {:<14} time left : {}",
            hms(self.elapsed),
            self.left()
        ));
        lines.push(format!(
            " executions : {:<14} speed : {:.1}/s   iterations {}   illegal {:.1} %",
            c.executions,
            rate(c.executions, self.elapsed),
            c.iterations,
            c.illegal_percent()
        ));
        lines.push(format!(
            "   findings : {:<14} last new find : {}",
            format!("{} unique", c.unique_findings),
            self.last_find()
        ));
        let mut minimized = format!("{} minimized", c.minimized);
        if self.minimizing > 0 {
            let _ = write!(minimized, ", {} pending", self.minimizing);
        }
        lines.push(format!(
            "             {:<14}   {} hits, {} ours, {} seed findings",
            minimized, c.findings, c.ours, c.seed_findings
        ));
        lines.push(format!(
            "   coverage : op types {:.1} %   op pairs {:.1} %   params {:.1} %   inputs {:.1} %",
            r.op_types.percent, r.op_pairs.percent, r.params.percent, r.inputs.percent
        ));
        let mut per = String::new();
        for (b, t) in &self.timings.per_backend {
            let ms = if t.runs > 0 {
                1e3 * t.wall_s / t.runs as f64
            } else {
                0.0
            };
            let _ = write!(
                per,
                "{b} {:.1}/s ({ms:.1} ms)   ",
                rate(t.runs, self.elapsed)
            );
        }
        lines.push(format!("   backends : {}", per.trim_end()));
        lines.push(format!("       disk : {}", self.disk()));
        if let Some(st) = self.sync {
            lines.push(format!(
                "       sync : instance {}   imported {}   passed over {}   failed {}   filed elsewhere {}",
                st.instance, st.imported, st.passed_over, st.failed, st.filed_elsewhere
            ));
        }
        lines
    }

    /// `412 MB of 500 MB (seeds/ 40 MB) · corpus 7554 entries (2396 trace-only), 0 culled`.
    fn disk(&self) -> String {
        let k = self.corpus;
        let used = (k.bytes + k.other_bytes) / 1_000_000;
        let budget = match k.max_disk {
            Some(b) => format!("{used} MB of {} MB", b / 1_000_000),
            None => format!("{used} MB (no budget)"),
        };
        let budget = format!("{budget} (seeds/ {} MB)", k.seeds_bytes / 1_000_000);
        format!(
            "{budget} · corpus {} entries ({} trace-only), {} culled, {} evicted",
            k.entries,
            k.entries - k.with_model.min(k.entries),
            k.pruned.culled,
            k.pruned.evicted
        )
    }
}

/// Draws the status: the screen in place on a terminal (`drawn` lines were drawn last time),
/// a line otherwise. Returns how many lines are on the screen now.
pub fn draw(s: &Snapshot<'_>, tty: bool, drawn: usize) -> usize {
    if !tty {
        eprintln!("{}", s.line());
        return 0;
    }
    let lines = s.screen();
    let mut o = String::new();
    if drawn > 0 {
        let _ = write!(o, "\x1b[{drawn}A");
    }
    for l in &lines {
        let _ = writeln!(o, "\r{l}\x1b[K");
    }
    eprint!("{o}");
    lines.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_hours_minutes_seconds() {
        assert_eq!(hms(5.04), "5.0s");
        assert_eq!(hms(65.0), "1m05s");
        assert_eq!(hms(3723.0), "1h02m03s");
        assert_eq!(hms(-3.0), "0.0s");
    }
}
