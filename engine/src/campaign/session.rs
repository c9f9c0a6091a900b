//! A session's clock and what it shows as it goes: when it must stop, the status screen and
//! the rows of `timeseries.csv`.
use super::*;

/// How often the status is drawn on a terminal, and elsewhere.
const STATUS_TTY: Duration = Duration::from_millis(500);
const STATUS_LOG: Duration = Duration::from_secs(10);
/// The loop wakes at least this often to check its clock.
const TICK: Duration = Duration::from_millis(100);

/// The session's clock, status screen and time series.
pub(super) struct Outputs {
    session: Instant,
    /// Campaign time when the session started.
    elapsed0: f64,
    limit: Option<Duration>,
    iterations: Option<u64>,
    quiet: bool,
    tty: bool,
    status_every: Duration,
    last_status: Instant,
    /// Lines of the status screen drawn last (redrawn in place on a terminal).
    status_lines: usize,
    ts: std::fs::File,
    last_row: Instant,
}

impl Outputs {
    pub(super) fn open(c: &Campaign, quiet: bool, fresh: bool) -> Result<Outputs> {
        let tty = std::io::stderr().is_terminal();
        Ok(Outputs {
            session: Instant::now(),
            elapsed0: c.state.elapsed_s,
            limit: c.config.time_s.map(Duration::from_secs_f64),
            iterations: c.config.iterations,
            quiet,
            tty,
            status_every: if tty { STATUS_TTY } else { STATUS_LOG },
            last_status: Instant::now(),
            status_lines: 0,
            ts: open_timeseries(&c.out.join("timeseries.csv"), fresh)?,
            last_row: Instant::now(),
        })
    }

    /// Whether the session must stop generating: its iterations or time are done, or a
    /// signal asked it to.
    pub(super) fn stop(&self, st: &State) -> bool {
        self.iterations.is_some_and(|n| st.iteration >= n)
            || self.limit.is_some_and(|l| self.session.elapsed() >= l)
            || crate::interrupt::requested()
    }

    /// How long the loop may wait for its stages before it looks at its clock again (never
    /// nothing: a wait of zero would spin).
    pub(super) fn until_status(&self) -> Duration {
        self.status_every
            .saturating_sub(self.last_status.elapsed())
            .clamp(Duration::from_millis(1), TICK)
    }

    /// Campaign time now (all sessions).
    pub(super) fn elapsed(&self) -> f64 {
        self.elapsed0 + self.session()
    }

    /// This session's time.
    pub(super) fn session(&self) -> f64 {
        self.session.elapsed().as_secs_f64()
    }

    /// Draws the status when it is due (with `-q`, only keeps the time: the loop's waits are
    /// measured from it).
    pub(super) fn maybe_status(&mut self, c: &mut Campaign) {
        if self.last_status.elapsed() < self.status_every {
            return;
        }
        if self.quiet {
            self.last_status = Instant::now();
        } else {
            self.status_now(c);
        }
    }

    pub(super) fn status_now(&mut self, c: &mut Campaign) {
        self.last_status = Instant::now();
        let elapsed = self.elapsed();
        let report = c.state.coverage.report();
        let corpus = c.corpus_stats();
        let snap = status::Snapshot {
            out: &c.out,
            elapsed,
            session: self.session(),
            limit: self.limit.map(|l| l.as_secs_f64()),
            iterations_limit: c.config.iterations,
            counters: &c.state.counters,
            timings: &c.state.timings,
            coverage: &report,
            last_find: c.last_find,
            minimizing: c.minimizer.as_ref().map_or(0, |m| m.pending()),
            stopping: crate::interrupt::requested(),
            corpus: &corpus,
            sync: c.state.sync.as_ref(),
        };
        self.status_lines = status::draw(&snap, self.tty, self.status_lines);
    }

    /// Whether a time-series row is due (about one a second).
    pub(super) fn row_due(&self) -> bool {
        self.last_row.elapsed() >= Duration::from_secs(1)
    }

    pub(super) fn row(&mut self, c: &Campaign, elapsed: f64) -> Result<()> {
        self.last_row = Instant::now();
        c.timeseries_row(&mut self.ts, elapsed)
    }
}
