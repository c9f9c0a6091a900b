//! The campaign's configuration: what `campaign.toml` holds, what one invocation asks for,
//! and how a resumed campaign's settings are checked against the stored ones.
use super::*;

/// The effective configuration, saved as `campaign.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Seed sources as given (`zoo`, directories, files).
    pub seeds: Vec<String>,
    /// Backends, in run order.
    pub backends: Vec<String>,
    /// Master seed of every random stream.
    pub seed: u64,
    /// `mcmc` or `random`.
    pub search: String,
    /// The MH parameter `p`.
    pub mcmc_p: f64,
    /// Operators, in `operators::all()` order.
    pub operators: Vec<String>,
    /// Mutants in flight (batch size). May change on resume.
    pub jobs: usize,
    /// Total iterations of the campaign (`None`: unbounded). May change on resume.
    pub iterations: Option<u64>,
    /// Time limit of one session, seconds (`None`: unbounded). May change on resume.
    pub time_s: Option<f64>,
    /// Tolerance of the inconsistency oracle.
    pub tolerance: String,
    /// Per-run timeout, seconds.
    pub run_timeout_s: f64,
    /// Memory cap per worker, MiB.
    pub mem_limit_mib: u64,
    /// Size of the dynamic dims of generated inputs (`None`: admission finds one per seed).
    #[serde(default)]
    pub free_dim: Option<usize>,
    /// Input shapes and values the user gave (`--input-shape`, `--input-value`).
    #[serde(default, skip_serializing_if = "Fixed::is_empty")]
    pub fixed: Fixed,
    /// Disk budget of the campaign directory in bytes (`--max-disk`; 0: unbounded). May
    /// change on resume. A campaign.toml written before budgets gets the default.
    #[serde(default = "default_max_disk")]
    pub max_disk: u64,
    /// The instance's name in a shared campaign (`--instance`; its directory is the sync
    /// directory's `NAME/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

fn default_max_disk() -> u64 {
    crate::corpus::DEFAULT_MAX_DISK
}

/// What the command line asked for; `None` fields take the saved value on resume, or the
/// default on a fresh campaign.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// `--seeds`.
    pub seeds: Vec<String>,
    /// `--out`.
    pub out: PathBuf,
    /// `--time`.
    pub time: Option<Duration>,
    /// `--iterations`.
    pub iterations: Option<u64>,
    /// `-j`.
    pub jobs: Option<usize>,
    /// `--backends`.
    pub backends: Vec<String>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--search`.
    pub search: Option<String>,
    /// `--mcmc-p`.
    pub mcmc_p: Option<f64>,
    /// `--quiet`.
    pub quiet: bool,
    /// Minimize new findings in the background (`--no-minimize` turns it off).
    pub minimize: bool,
    /// How long the end of a session waits for pending minimizations.
    pub minimize_grace: Duration,
    /// `--free-dim`.
    pub free_dim: Option<usize>,
    /// `--input-shape` and `--input-value`.
    pub fixed: Fixed,
    /// `--max-disk` (`Some(0)`: unbounded).
    pub max_disk: Option<u64>,
    /// `--instance` (with `--sync-dir`, whose `NAME/` is then `out`).
    pub instance: Option<String>,
    /// `--sync-every` (default [`super::sync::SYNC_EVERY`]).
    pub sync_every: Option<Duration>,
}

impl Request {
    /// Fills what the command line left unset from a stored configuration (`--config
    /// campaign.toml`): flags given on the command line win.
    pub fn fill_from(&mut self, c: Config) {
        if self.seeds.is_empty() {
            self.seeds = c.seeds;
        }
        if self.backends.is_empty() {
            self.backends = c.backends;
        }
        self.seed = self.seed.or(Some(c.seed));
        self.search = self.search.take().or(Some(c.search));
        if c.mcmc_p.is_finite() {
            self.mcmc_p = self.mcmc_p.or(Some(c.mcmc_p));
        }
        self.jobs = self.jobs.or(Some(c.jobs));
        self.iterations = self.iterations.or(c.iterations);
        self.time = self.time.or(c.time_s.map(Duration::from_secs_f64));
        self.free_dim = self.free_dim.or(c.free_dim);
        self.max_disk = self.max_disk.or(Some(c.max_disk));
        if self.fixed.is_empty() {
            self.fixed = c.fixed;
        }
    }
}

/// Parses a duration: `90s`, `10m`, `1h`, `1h30m`, `2m30s`, `1.5s`, `250ms`, or a plain number
/// of seconds.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let text = s.trim();
    let bad = || anyhow!("bad duration '{text}' (examples: 90s, 10m, 1h30m, 250ms)");
    if text.is_empty() {
        return Err(bad());
    }
    if let Ok(v) = text.parse::<f64>() {
        return if v >= 0.0 && v.is_finite() {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(bad())
        };
    }
    let mut total = 0.0f64;
    let mut rest = text;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let v: f64 = rest[..n].parse().map_err(|_| bad())?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let mul = match &rest[..u] {
            "ms" => 1e-3,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            _ => bail!("bad duration unit in '{text}' (use ms, s, m, h or d, as in 1h30m)"),
        };
        total += v * mul;
        rest = &rest[u..];
    }
    if !total.is_finite() {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(total))
}

pub(super) fn check_same<T: PartialEq + std::fmt::Debug>(
    what: &str,
    given: Option<T>,
    saved: &T,
) -> Result<()> {
    match given {
        Some(g) if &g != saved => Err(crate::cmd::refused(format!(
            "the campaign in this directory was started with {what} = {saved:?}, not {g:?} \
             (only --time, --iterations, -j, --max-disk and --quiet may change on resume; use another --out)"
        ))),
        _ => Ok(()),
    }
}

/// The lanes a campaign runs when `-j` is not given: the machine's cores shared by the workers a
/// lane keeps busy (one per backend, running at once, beside the triage's), at least one.
pub fn default_jobs(backends: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    default_jobs_for(cores, backends)
}

/// [`default_jobs`] on a machine of `cores` cores.
pub fn default_jobs_for(cores: usize, backends: usize) -> usize {
    (cores / backends.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("soon").is_err());
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("2m30s").unwrap(), Duration::from_secs(150));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("1h30").is_err());
        assert!(parse_duration("m").is_err());
    }

    #[test]
    fn default_lanes_share_the_cores_among_the_backends() {
        assert_eq!(default_jobs_for(2, 4), 1);
        assert_eq!(default_jobs_for(16, 4), 4);
        assert_eq!(default_jobs_for(16, 1), 16);
        assert_eq!(default_jobs_for(1, 0), 1);
    }
}
