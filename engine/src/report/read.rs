//! Reading a campaign output directory: `stats.json` (as the campaign's own [`Stats`]),
//! `campaign.toml`, `timeseries.csv` (by the campaign's column names) and the sessions (from
//! `stats.json`, else `state.json`); the bundles are read by [`super::bundles`].

use super::bundles::{Bundle, load_bundles};
use super::{DASH, ReportError, human_duration};
use crate::persisted::{self, FormatError, SessionStart, StateSessions, Stats, timeseries};
use mutagraph_mutators::coverage::{Family, Report};
use std::collections::BTreeMap;
use std::path::Path;

/// Everything the report shows, read from the directory.
pub(super) struct Campaign {
    /// The directory's name (for titles).
    pub name: String,
    /// `campaign.toml`, when present.
    pub config: Option<toml::Table>,
    /// `stats.json`.
    pub stats: Stats,
    /// `timeseries.csv`.
    pub series: Series,
    /// Where each session started, in time order (empty: not recorded).
    pub sessions: Vec<SessionStart>,
    /// One per `findings/<id>/meta.json`, in report order.
    pub bundles: Vec<Bundle>,
    /// `file: problem` for what was skipped.
    pub warnings: Vec<String>,
}

impl Campaign {
    pub fn load(dir: &Path) -> Result<Campaign, ReportError> {
        if !dir.is_dir() {
            return Err(ReportError::NotADirectory {
                path: dir.to_path_buf(),
            });
        }
        let mut warnings = Vec::new();

        let stats_path = dir.join("stats.json");
        let text = std::fs::read_to_string(&stats_path).map_err(|source| ReportError::Read {
            path: stats_path.clone(),
            source,
        })?;
        let stats: Stats = persisted::from_json(text.as_bytes())
            .map_err(|e| ReportError::format(&stats_path, e))?;

        let config_path = dir.join("campaign.toml");
        let config = match read_optional(&config_path)? {
            Some(text) => {
                Some(
                    toml::from_str::<toml::Table>(&text).map_err(|e| ReportError::Parse {
                        path: config_path.clone(),
                        problem: format!("invalid TOML: {}", e.message()),
                    })?,
                )
            }
            None => {
                warnings.push("campaign.toml: missing; configuration unknown".to_string());
                None
            }
        };

        let series = match read_optional(&dir.join("timeseries.csv"))? {
            Some(text) => Series::parse(&text, &mut warnings),
            None => Series::default(),
        };
        let sessions = load_sessions(dir, &stats.sessions, &mut warnings);
        let bundles = load_bundles(&dir.join("findings"), &mut warnings)?;

        let name = dir
            .canonicalize()
            .ok()
            .as_deref()
            .and_then(Path::file_name)
            .or_else(|| dir.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());

        Ok(Campaign {
            name,
            config,
            stats,
            series,
            sessions,
            bundles,
            warnings,
        })
    }

    /// A config value as text ("—" when absent).
    pub fn config_value(&self, key: &str) -> String {
        match self.config.as_ref().and_then(|c| c.get(key)) {
            None => DASH.to_string(),
            Some(toml::Value::String(s)) => s.clone(),
            Some(toml::Value::Array(a)) if a.is_empty() => DASH.to_string(),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => s.clone(),
                    v => v.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", "),
            Some(v) => v.to_string(),
        }
    }

    /// The backends of the configuration, in its order.
    pub fn config_backends(&self) -> Vec<String> {
        match self.config.as_ref().and_then(|c| c.get("backends")) {
            Some(toml::Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The configuration rows shown (label, value).
    pub fn config_rows(&self) -> Vec<(&'static str, String)> {
        let operators = match self.config.as_ref().and_then(|c| c.get("operators")) {
            Some(toml::Value::Array(a)) => a.len().to_string(),
            _ => DASH.to_string(),
        };
        let mut search = self.config_value("search");
        if search == "mcmc" {
            let p = self.config_value("mcmc_p");
            if p != DASH {
                search = format!("mcmc (p = {p})");
            }
        }
        let limit = |key: &str, unit: &str| match self.config.as_ref().and_then(|c| c.get(key)) {
            Some(_) => format!("{}{unit}", self.config_value(key)),
            None if self.config.is_some() => "unbounded".to_string(),
            None => DASH.to_string(),
        };
        vec![
            ("seeds", self.config_value("seeds")),
            ("backends", self.config_value("backends")),
            ("seed", self.config_value("seed")),
            ("search", search),
            ("operators", operators),
            ("jobs", self.config_value("jobs")),
            ("iterations", limit("iterations", "")),
            ("time limit", limit("time_s", " s")),
            ("tolerance", self.config_value("tolerance")),
        ]
    }

    /// `elapsed_s` of `stats.json`, when finite.
    pub fn elapsed(&self) -> Option<f64> {
        finite(self.stats.elapsed_s)
    }

    /// The totals shown (label, value).
    pub fn total_rows(&self) -> Vec<(&'static str, String)> {
        let s = &self.stats;
        let c = &s.counters;
        let elapsed = match self.elapsed() {
            Some(e) => format!("{} ({e:.1} s)", human_duration(e)),
            None => DASH.to_string(),
        };
        let illegal = match finite(s.illegal_percent) {
            Some(p) => format!("{} ({p:.1}%)", s.illegal),
            None => s.illegal.to_string(),
        };
        let signatures = self.unique_signatures().len();
        let mut rows = vec![
            ("elapsed", elapsed),
            ("iterations", c.iterations.to_string()),
            ("executions", c.executions.to_string()),
            ("backend runs", c.backend_runs.to_string()),
            (
                "executions / s",
                finite(s.execs_per_s).map_or_else(|| DASH.to_string(), |x| format!("{x:.2}")),
            ),
            ("diverse mutants (corpus)", c.diverse.to_string()),
            ("illegal mutants", illegal),
            ("findings", c.findings.to_string()),
            (
                "of them known crashes (not re-triaged)",
                s.triage.known_hits.to_string(),
            ),
            ("bug bundles", self.bundles.len().to_string()),
            ("unique signatures", signatures.to_string()),
        ];
        if !self.sessions.is_empty() {
            rows.push(("sessions", self.sessions.len().to_string()));
        }
        rows
    }

    /// Findings per kind from `stats.json` (kind, count), by kind name.
    pub fn findings_by_kind(&self) -> Vec<(String, String)> {
        self.stats
            .counters
            .findings_by_kind
            .iter()
            .map(|(k, n)| (k.clone(), n.to_string()))
            .collect()
    }

    /// The optimizer and contrib-op coverage, one line each: per optimizing backend, the
    /// rewrites that changed mutants against its known ones (those the pattern library is made
    /// for; tract's over the ONNX backend test suite, and those beyond it); the
    /// `com.microsoft` ops mutants used.
    pub fn optimizer_lines(&self) -> Vec<String> {
        let mut v = Vec::new();
        for r in &self.stats.rewrites {
            let names: Vec<String> = r.fired.iter().map(|(k, n)| format!("{k} ({n})")).collect();
            v.push(format!(
                "{}: {} rewrites changed mutants{}, in {} combinations: {}",
                r.backend,
                r.fired.len(),
                known_words(r),
                r.combinations,
                names.join(", ")
            ));
        }
        if let Some(c) = &self.stats.contrib_ops {
            let total = c.covered.len() + c.uncovered.len();
            let uncovered = if c.uncovered.is_empty() {
                String::new()
            } else {
                format!("; not yet: {}", c.uncovered.join(", "))
            };
            v.push(format!(
                "ONNX Runtime's contrib ops used by mutants: {} of {total}{uncovered}",
                c.covered.len()
            ));
        }
        v
    }

    /// Coverage rows: family label, covered, total, percent, seed percent ("—" where
    /// `stats.json` has no coverage).
    pub fn coverage_rows(&self) -> Vec<CoverageRow> {
        fn family<'a>(r: &'a Option<Report>, f: &FamilySpec) -> Option<&'a Family> {
            r.as_ref().map(f.family)
        }
        FAMILIES
            .iter()
            .map(|f| {
                let run = family(&self.stats.coverage, f);
                CoverageRow {
                    label: f.label,
                    covered: run.map(|x| x.covered as u64),
                    total: run.map(|x| x.total as u64),
                    percent: run.and_then(|x| finite(x.percent)),
                    seed_percent: family(&self.stats.seed_coverage, f)
                        .and_then(|x| finite(x.percent)),
                }
            })
            .collect()
    }

    /// Earliest `first_seen.elapsed_s` per signature (the id when a bundle has none), with the
    /// ids of the bundles of that signature; sorted by time.
    pub fn unique_signatures(&self) -> Vec<(f64, String)> {
        let mut first: BTreeMap<&str, (Option<f64>, Vec<&str>)> = BTreeMap::new();
        for b in &self.bundles {
            let key = b.signature.as_deref().unwrap_or(&b.id);
            let e = first.entry(key).or_insert((None, Vec::new()));
            e.1.push(&b.id);
            if let Some(t) = b.first.elapsed_s.filter(|t| t.is_finite()) {
                e.0 = Some(e.0.map_or(t, |x: f64| x.min(t)));
            }
        }
        let mut v: Vec<(f64, String)> = first
            .into_values()
            .filter_map(|(t, ids)| t.map(|t| (t, ids.join(", "))))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        v
    }

    /// Runs per backend from `stats.json` (`timings.per_backend`).
    pub fn backend_runs(&self) -> BTreeMap<String, u64> {
        self.stats
            .timings
            .per_backend
            .iter()
            .map(|(k, t)| (k.clone(), t.runs))
            .collect()
    }
}

/// `x` when finite.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Reads a file that may be absent (`None`); other read errors are errors.
fn read_optional(path: &Path) -> Result<Option<String>, ReportError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ReportError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

pub(super) struct CoverageRow {
    pub label: &'static str,
    pub covered: Option<u64>,
    pub total: Option<u64>,
    pub percent: Option<f64>,
    pub seed_percent: Option<f64>,
}

/// A coverage family: its part of a coverage report, column of `timeseries.csv`, label,
/// chart color.
pub(super) struct FamilySpec {
    pub family: fn(&Report) -> &Family,
    pub column: &'static str,
    pub label: &'static str,
    pub color: &'static str,
}

pub(super) const FAMILIES: [FamilySpec; 4] = [
    FamilySpec {
        family: |r| &r.op_types,
        column: "op_types_pct",
        label: "op types",
        color: "#1f77b4",
    },
    FamilySpec {
        family: |r| &r.op_pairs,
        column: "op_pairs_pct",
        label: "op pairs",
        color: "#d62728",
    },
    FamilySpec {
        family: |r| &r.params,
        column: "params_pct",
        label: "parameters",
        color: "#2ca02c",
    },
    FamilySpec {
        family: |r| &r.inputs,
        column: "inputs_pct",
        label: "inputs",
        color: "#9467bd",
    },
];

// ---------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------

/// `sessions` of `stats.json`, else of `state.json` (read as [`StateSessions`]: a state from
/// a newer mutagraph is left out with a warning, one that cannot be read silently); sorted by
/// time, those with a negative time dropped, a first one at 0 added when the list starts
/// later.
fn load_sessions(
    dir: &Path,
    recorded: &[SessionStart],
    warnings: &mut Vec<String>,
) -> Vec<SessionStart> {
    let mut sessions = if recorded.is_empty() {
        std::fs::read(dir.join("state.json"))
            .ok()
            .and_then(|text| match persisted::from_json::<StateSessions>(&text) {
                Ok(s) => Some(s.sessions),
                Err(e @ FormatError::Newer { .. }) => {
                    warnings.push(format!("state.json: {e}; sessions not shown"));
                    None
                }
                Err(_) => None,
            })
            .unwrap_or_default()
    } else {
        recorded.to_vec()
    };
    sessions.retain(|s| s.elapsed_s.is_finite() && s.elapsed_s >= 0.0);
    sessions.sort_by(|a, b| a.elapsed_s.total_cmp(&b.elapsed_s));
    // A campaign that started recording sessions on a resume: its first session, not
    // recorded, started at 0.
    if sessions.first().is_some_and(|s| s.elapsed_s > 0.0) {
        sessions.insert(
            0,
            SessionStart {
                iteration: 0,
                elapsed_s: 0.0,
            },
        );
    }
    sessions
}

/// Sessions other than the first: where a resume shows on the time axis, numbered from 2
/// (`(number, elapsed, hover text)`).
pub(super) fn resumes(sessions: &[SessionStart]) -> Vec<(usize, f64, String)> {
    sessions
        .iter()
        .enumerate()
        .filter(|(_, s)| s.elapsed_s > 0.0)
        .map(|(i, s)| {
            let t = s.elapsed_s;
            (
                i + 1,
                t,
                format!(
                    "session {} resumed at {t:.1} s, iteration {}",
                    i + 1,
                    s.iteration
                ),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// timeseries.csv
// ---------------------------------------------------------------------------------------------

/// The columns the report uses (all the campaign writes); others are ignored.
const USED_COLUMNS: [&str; 9] = timeseries::COLUMNS;

/// The used columns of `timeseries.csv`, row-aligned.
#[derive(Default)]
pub(super) struct Series {
    pub columns: BTreeMap<&'static str, Vec<f64>>,
}

impl Series {
    pub fn parse(text: &str, warnings: &mut Vec<String>) -> Series {
        // A last line without its newline is being written: drop it.
        let complete = match text.rfind('\n') {
            Some(i) => &text[..=i],
            None => "",
        };
        let mut lines = complete.lines().map(|l| l.trim_end_matches('\r'));
        let Some(header) = lines.next() else {
            return Series::default();
        };
        let names: Vec<&str> = header.split(',').map(str::trim).collect();
        let used: Vec<(usize, &'static str)> = USED_COLUMNS
            .iter()
            .filter_map(|&c| names.iter().position(|n| *n == c).map(|i| (i, c)))
            .collect();
        if !used.iter().any(|(_, c)| *c == "elapsed_s") {
            warnings.push("timeseries.csv: no elapsed_s column; no charts".into());
            return Series::default();
        }
        let mut columns: BTreeMap<&'static str, Vec<f64>> =
            used.iter().map(|&(_, c)| (c, Vec::new())).collect();
        let mut bad = 0usize;
        for line in lines {
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').collect();
            if fields.len() != names.len() {
                bad += 1;
                continue;
            }
            let parsed: Option<Vec<f64>> = used
                .iter()
                .map(|&(i, _)| fields[i].trim().parse::<f64>().ok())
                .collect();
            match parsed {
                Some(vals) => {
                    for (&(_, c), v) in used.iter().zip(vals) {
                        columns.get_mut(c).expect("column").push(v);
                    }
                }
                None => bad += 1,
            }
        }
        if bad > 0 {
            warnings.push(format!("timeseries.csv: {bad} malformed row(s) skipped"));
        }
        Series { columns }
    }

    /// `(elapsed_s, column)` points with finite values; empty when the column is absent.
    pub fn points(&self, column: &str) -> Vec<(f64, f64)> {
        match (self.columns.get("elapsed_s"), self.columns.get(column)) {
            (Some(x), Some(y)) => x
                .iter()
                .zip(y)
                .map(|(&x, &y)| (x, y))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Executions per second between consecutive rows (`Δexecutions / Δelapsed`).
    pub fn interval_rates(&self) -> Vec<(f64, f64)> {
        let p = self.points("executions");
        p.windows(2)
            .filter_map(|w| {
                let (dt, de) = (w[1].0 - w[0].0, w[1].1 - w[0].1);
                (dt > 0.0 && de >= 0.0).then_some((w[1].0, de / dt))
            })
            .collect()
    }

    pub fn last_elapsed(&self) -> Option<f64> {
        self.columns
            .get("elapsed_s")?
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .reduce(f64::max)
    }

    pub fn rows(&self) -> usize {
        self.columns.get("elapsed_s").map_or(0, Vec::len)
    }
}

/// How the rewrites that fired compare with the backend's known ones (empty without any).
pub(super) fn known_words(r: &crate::persisted::stats::RewriteCoverage) -> String {
    if r.known.is_empty() {
        return String::new();
    }
    let (from, beyond) = if r.known_from_suite() {
        let beyond = r.beyond_known();
        let beyond = if beyond.is_empty() {
            String::new()
        } else {
            format!(", and {} the suite never makes it apply", beyond.len())
        };
        ("it applies over the ONNX backend test suite", beyond)
    } else {
        ("the pattern library is made for", String::new())
    };
    format!(
        "; {} of the {} rewrites {from}{beyond}",
        r.known_fired,
        r.known.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timeseries_by_header_with_partial_last_line() {
        let mut w = Vec::new();
        let s = Series::parse(
            "extra,elapsed_s,findings\nx,1.0,0\ny,2.0,1\nbad\nz,3.0,",
            &mut w,
        );
        assert_eq!(s.points("findings"), vec![(1.0, 0.0), (2.0, 1.0)]);
        assert!(s.points("executions").is_empty());
        assert_eq!(
            w,
            vec!["timeseries.csv: 1 malformed row(s) skipped".to_string()]
        );
    }

    /// `sessions` of a `stats.json`.
    fn recorded(v: serde_json::Value) -> Vec<SessionStart> {
        serde_json::from_value::<Stats>(v).unwrap().sessions
    }

    #[test]
    fn sessions_from_stats_or_state() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = Vec::new();
        let stats = recorded(
            json!({"sessions": [{"iteration": 90, "elapsed_s": 100.5}, {"iteration": 0, "elapsed_s": 0.0}]}),
        );
        let s = load_sessions(dir.path(), &stats, &mut w);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].elapsed_s, 0.0);
        let r = resumes(&s);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].0, r[0].1), (2, 100.5));
        assert!(r[0].2.contains("iteration 90"), "{}", r[0].2);
        std::fs::write(
            dir.path().join("state.json"),
            r#"{"sessions": [{"iteration": 0, "elapsed_s": 0}, {"iteration": 5, "elapsed_s": 7}]}"#,
        )
        .unwrap();
        assert_eq!(
            load_sessions(dir.path(), &recorded(json!({})), &mut w).len(),
            2
        );
        // Only a resume recorded: the first session is implied.
        let s = load_sessions(
            dir.path(),
            &recorded(json!({"sessions": [{"elapsed_s": 50.0}]})),
            &mut w,
        );
        assert_eq!(s.len(), 2);
        assert_eq!(resumes(&s)[0].0, 2);
        // Sessions of another shape: `stats.json` does not read (the report refuses it).
        assert!(serde_json::from_value::<Stats>(json!({"sessions": "x"})).is_err());
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn a_state_from_a_newer_mutagraph_gives_no_sessions_and_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("state.json"),
            format!(
                r#"{{"version": {}, "sessions": [{{"iteration": 5, "elapsed_s": 7}}]}}"#,
                persisted::STATE_VERSION + 1
            ),
        )
        .unwrap();
        let mut w = Vec::new();
        assert!(load_sessions(dir.path(), &[], &mut w).is_empty());
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("state.json: format version") && w[0].contains("newer"),
            "{}",
            w[0]
        );
    }
}
