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

    /// The screen for a terminal `width` columns wide, one string per line (without the
    /// cursor movement): lists wrap onto lines of their own and no line reaches the last
    /// column (a line that wraps would break the redraw in place).
    pub fn screen(&self, width: usize) -> Vec<String> {
        let c = self.counters;
        let r = self.coverage;
        let mut lines = Vec::new();
        lines.push(format!(
            " mutagraph campaign  {}{}",
            self.out.display(),
            if self.stopping { "  (stopping)" } else { "" }
        ));
        lines.push(format!(
            "   run time : {:<14} time left : {}",
            hms(self.elapsed),
            self.left()
        ));
        lines.push(format!(
            " executions : {:<14} speed : {:.1}/s   illegal {:.1} %",
            c.executions,
            rate(c.executions, self.elapsed),
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
            "             {minimized:<14}   {} hits, {} ours, {} seed findings",
            c.findings, c.ours, c.seed_findings
        ));
        wrap_into(
            &mut lines,
            "   coverage : ",
            &[
                format!("op types {:.1} %", r.op_types.percent),
                format!("op pairs {:.1} %", r.op_pairs.percent),
                format!("params {:.1} %", r.params.percent),
                format!("inputs {:.1} %", r.inputs.percent),
            ],
            width,
        );
        let per: Vec<String> = self
            .timings
            .per_backend
            .iter()
            .map(|(b, t)| {
                let ms = if t.runs > 0 {
                    1e3 * t.wall_s / t.runs as f64
                } else {
                    0.0
                };
                format!("{b} {:.1}/s ({ms:.1} ms)", rate(t.runs, self.elapsed))
            })
            .collect();
        wrap_into(&mut lines, "   backends : ", &per, width);
        lines.push(format!("       disk : {}", self.disk()));
        let k = self.corpus;
        lines.push(format!(
            "     corpus : {} entries ({} trace-only), {} culled, {} evicted",
            k.entries,
            k.entries - k.with_model.min(k.entries),
            k.pruned.culled,
            k.pruned.evicted
        ));
        if let Some(st) = self.sync {
            wrap_into(
                &mut lines,
                "       sync : ",
                &[
                    format!("instance {}", st.instance),
                    format!("imported {}", st.imported),
                    format!("passed over {}", st.passed_over),
                    format!("failed {}", st.failed),
                    format!("filed elsewhere {}", st.filed_elsewhere),
                ],
                width,
            );
        }
        lines.into_iter().map(|l| fit(l, width)).collect()
    }

    /// `412 MB of 500 MB (seeds/ 40 MB)`.
    fn disk(&self) -> String {
        let k = self.corpus;
        let used = (k.bytes + k.other_bytes) / 1_000_000;
        let budget = match k.max_disk {
            Some(b) => format!("{used} MB of {} MB", b / 1_000_000),
            None => format!("{used} MB (no budget)"),
        };
        format!("{budget} (seeds/ {} MB)", k.seeds_bytes / 1_000_000)
    }
}

/// Appends `items` after `label`, three spaces apart, as many per line as fit in `width`
/// (continuation lines indented under the first item).
fn wrap_into(lines: &mut Vec<String>, label: &str, items: &[String], width: usize) {
    let indent = " ".repeat(label.chars().count());
    let mut line = label.to_string();
    let mut empty = true;
    for it in items {
        let needed = line.chars().count() + 3 + it.chars().count();
        if !empty && needed >= width {
            lines.push(std::mem::replace(&mut line, indent.clone()));
            empty = true;
        }
        if !empty {
            line.push_str("   ");
        }
        line.push_str(it);
        empty = false;
    }
    lines.push(line);
}

/// `line` cut to fit `width - 1` columns, with `…` where it was cut.
fn fit(line: String, width: usize) -> String {
    let room = width.saturating_sub(1).max(10);
    if line.chars().count() <= room {
        return line;
    }
    let mut cut: String = line.chars().take(room - 1).collect();
    cut.push('…');
    cut
}

/// The terminal's size on standard error (columns, rows); 80×24 when it cannot be read.
pub fn terminal_size() -> (usize, usize) {
    match rustix::termios::tcgetwinsize(std::io::stderr()) {
        Ok(w) if w.ws_col > 0 && w.ws_row > 0 => (w.ws_col as usize, w.ws_row as usize),
        _ => (80, 24),
    }
}

/// Draws the status: the screen in place on a terminal (`drawn` lines were drawn last time),
/// a line otherwise. Returns how many lines are on the screen now.
pub fn draw(s: &Snapshot<'_>, tty: bool, drawn: usize) -> usize {
    if !tty {
        eprintln!("{}", s.line());
        return 0;
    }
    let (width, height) = terminal_size();
    let mut lines = s.screen(width);
    // A screen taller than the terminal would scroll: the first lines matter most.
    lines.truncate(height.saturating_sub(1).max(1));
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
    fn wrapped_lists_and_long_lines_fit_the_width() {
        let mut lines = Vec::new();
        let items: Vec<String> = [
            "reference 12.1/s (5.0 ms)",
            "ort 11.9/s (2.0 ms)",
            "tract 11.8/s (14.0 ms)",
            "burn-ndarray 11.7/s (60.0 ms)",
        ]
        .map(String::from)
        .to_vec();
        wrap_into(&mut lines, "   backends : ", &items, 80);
        assert!(lines.len() >= 2, "{lines:?}");
        assert!(lines.iter().all(|l| l.chars().count() < 80), "{lines:?}");
        assert!(
            lines[1].starts_with("              "),
            "continuation indented: {lines:?}"
        );
        let all: String = lines.concat();
        assert!(
            items.iter().all(|i| all.contains(i.as_str())),
            "nothing lost: {lines:?}"
        );
        let mut wide = Vec::new();
        wrap_into(&mut wide, "   backends : ", &items, 160);
        assert_eq!(wide.len(), 1, "{wide:?}");
        let long = "x".repeat(200);
        let f = fit(long, 80);
        assert_eq!(f.chars().count(), 79);
        assert!(f.ends_with('…'));
        assert_eq!(fit("short".into(), 80), "short");
    }

    /// The whole screen at 80×24 and at 160×48: no line reaches the last column, it fits the
    /// rows, and the wide one needs no more lines than the narrow one.
    #[test]
    fn the_screen_fits_80_by_24_and_160_by_48() {
        use crate::persisted::stats::BackendTime;
        use mutagraph_mutators::coverage::{Coverage, Universe};
        let universe = std::sync::Arc::new(Universe::restricted(&["Relu", "Conv"]).unwrap());
        let cov = Coverage::new(universe).report();
        let mut timings = Timings::default();
        for b in [
            "reference",
            "ort",
            "ort-noopt",
            "tract",
            "tract-opt",
            "burn-ndarray",
        ] {
            let t = BackendTime {
                runs: 123_456,
                wall_s: 1234.5,
                prepare_s: 12.0,
                run_s: 1000.0,
            };
            timings.per_backend.insert(b.to_string(), t);
        }
        let counters = Counters {
            executions: 1_234_567,
            unique_findings: 123,
            findings: 98_765,
            ..Counters::default()
        };
        let corpus = crate::corpus::CorpusStats {
            entries: 75_540,
            max_disk: Some(500_000_000),
            ..Default::default()
        };
        let out =
            std::path::PathBuf::from(format!("/tmp/{}/campaign", "a-long-directory".repeat(6)));
        let snap = Snapshot {
            out: &out,
            elapsed: 12_345.0,
            session: 100.0,
            limit: Some(36_000.0),
            iterations_limit: None,
            counters: &counters,
            timings: &timings,
            coverage: &cov,
            last_find: Some(12_000.0),
            minimizing: 3,
            stopping: true,
            corpus: &corpus,
            sync: None,
        };
        let narrow = snap.screen(80);
        let wide = snap.screen(160);
        for (lines, w, h) in [(&narrow, 80, 24), (&wide, 160, 48)] {
            assert!(lines.len() < h, "{lines:#?}");
            for l in lines.iter() {
                assert!(l.chars().count() < w, "{w} columns: {l:?}");
            }
        }
        assert!(wide.len() <= narrow.len());
        // Every backend is on the narrow screen, whole.
        let all = narrow.join("\n");
        assert!(
            all.contains("burn-ndarray ") && all.contains("tract-opt "),
            "{all}"
        );
    }

    #[test]
    fn durations_read_as_hours_minutes_seconds() {
        assert_eq!(hms(5.04), "5.0s");
        assert_eq!(hms(65.0), "1m05s");
        assert_eq!(hms(3723.0), "1h02m03s");
        assert_eq!(hms(-3.0), "0.0s");
    }
}
