//! Reading a campaign output directory: `stats.json`, `campaign.toml`, `timeseries.csv` and
//! the sessions; the bundles are read by [`super::bundles`].

use super::bundles::{Bundle, load_bundles};
use super::{DASH, ReportError, human_duration};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Everything the report shows, read from the directory.
pub(super) struct Campaign {
    /// The directory's name (for titles).
    pub name: String,
    /// `campaign.toml`, when present.
    pub config: Option<toml::Table>,
    /// `stats.json` (an object).
    pub stats: Value,
    /// `timeseries.csv`.
    pub series: Series,
    /// Where each session started, in time order (empty: not recorded).
    pub sessions: Vec<Session>,
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
        let stats: Value = serde_json::from_str(&text).map_err(|e| ReportError::Parse {
            path: stats_path.clone(),
            problem: format!("invalid JSON: {e}"),
        })?;
        if !stats.is_object() {
            return Err(ReportError::Parse {
                path: stats_path,
                problem: "expected a JSON object".into(),
            });
        }

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
        let sessions = Session::load(dir, &stats);
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

    /// The totals shown (label, value).
    pub fn total_rows(&self) -> Vec<(&'static str, String)> {
        let s = &self.stats;
        let elapsed = match num(s, &["elapsed_s"]) {
            Some(e) => format!("{} ({e:.1} s)", human_duration(e)),
            None => DASH.to_string(),
        };
        let signatures = self.unique_signatures().len();
        let mut rows = vec![
            ("elapsed", elapsed),
            ("iterations", int_text(s, &["iterations"])),
            ("executions", int_text(s, &["executions"])),
            ("backend runs", int_text(s, &["backend_runs"])),
            ("executions / s", float_text(s, &["execs_per_s"], 2, "")),
            ("diverse mutants (corpus)", int_text(s, &["diverse"])),
            (
                "illegal mutants",
                match (int(s, &["illegal"]), num(s, &["illegal_percent"])) {
                    (Some(n), Some(p)) => format!("{n} ({p:.1}%)"),
                    (None, Some(p)) => format!("{p:.1}%"),
                    (Some(n), None) => n.to_string(),
                    (None, None) => DASH.to_string(),
                },
            ),
            ("findings", int_text(s, &["findings"])),
            (
                "of them known crashes (not re-triaged)",
                int_text(s, &["triage", "known_hits"]),
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
        match self.stats.get("findings_by_kind") {
            Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), value_text(v))).collect(),
            _ => Vec::new(),
        }
    }

    /// Coverage rows: family label, covered, total, percent, seed percent.
    pub fn coverage_rows(&self) -> Vec<CoverageRow> {
        FAMILIES
            .iter()
            .map(|f| {
                let path = ["coverage", f.key];
                let seed = ["seed_coverage", f.key];
                CoverageRow {
                    label: f.label,
                    covered: int(&self.stats, &[&path[..], &["covered"]].concat()),
                    total: int(&self.stats, &[&path[..], &["total"]].concat()),
                    percent: num(&self.stats, &[&path[..], &["percent"]].concat()),
                    seed_percent: num(&self.stats, &[&seed[..], &["percent"]].concat()),
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

    /// Runs per backend from `stats.json` (`timings.per_backend.<backend>.runs`).
    pub fn backend_runs(&self) -> BTreeMap<String, u64> {
        #[derive(Deserialize)]
        struct PerBackend {
            #[serde(default, deserialize_with = "lenient")]
            runs: Option<u64>,
        }
        let Some(Value::Object(m)) = at(&self.stats, &["timings", "per_backend"]) else {
            return BTreeMap::new();
        };
        m.iter()
            .filter_map(|(k, v)| {
                let p: PerBackend = serde_json::from_value(v.clone()).ok()?;
                Some((k.clone(), p.runs?))
            })
            .collect()
    }
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

/// Deserializes a field as `T`, or `None` when it has another shape (the field is then
/// treated as absent rather than failing the whole document).
pub(super) fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

pub(super) struct CoverageRow {
    pub label: &'static str,
    pub covered: Option<u64>,
    pub total: Option<u64>,
    pub percent: Option<f64>,
    pub seed_percent: Option<f64>,
}

/// A coverage family: key in `stats.json`, column of `timeseries.csv`, label, chart color.
pub(super) struct FamilySpec {
    pub key: &'static str,
    pub column: &'static str,
    pub label: &'static str,
    pub color: &'static str,
}

pub(super) const FAMILIES: [FamilySpec; 4] = [
    FamilySpec {
        key: "op_types",
        column: "op_types_pct",
        label: "op types",
        color: "#1f77b4",
    },
    FamilySpec {
        key: "op_pairs",
        column: "op_pairs_pct",
        label: "op pairs",
        color: "#d62728",
    },
    FamilySpec {
        key: "params",
        column: "params_pct",
        label: "parameters",
        color: "#2ca02c",
    },
    FamilySpec {
        key: "inputs",
        column: "inputs_pct",
        label: "inputs",
        color: "#9467bd",
    },
];

/// The value at a path of object keys.
fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

pub(super) fn num(v: &Value, path: &[&str]) -> Option<f64> {
    at(v, path)
        .and_then(Value::as_f64)
        .filter(|x| x.is_finite())
}

fn int(v: &Value, path: &[&str]) -> Option<u64> {
    let v = at(v, path)?;
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0 && x.fract() == 0.0 && *x < 1.8e19)
            .map(|x| x as u64)
    })
}

fn int_text(v: &Value, path: &[&str]) -> String {
    int(v, path).map_or_else(|| DASH.to_string(), |n| n.to_string())
}

fn float_text(v: &Value, path: &[&str], decimals: usize, unit: &str) -> String {
    num(v, path).map_or_else(|| DASH.to_string(), |x| format!("{x:.decimals$}{unit}"))
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => DASH.to_string(),
        v => v.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------

/// Where a session started: the campaign's iteration and time (which run on across sessions).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub(super) struct Session {
    #[serde(default, deserialize_with = "lenient")]
    pub iteration: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub elapsed_s: Option<f64>,
}

impl Session {
    /// `sessions` of `stats.json`, else of `state.json`; sorted by time, those without a time
    /// dropped, a first one at 0 added when the list starts later.
    fn load(dir: &Path, stats: &Value) -> Vec<Session> {
        #[derive(Deserialize)]
        struct Sessions {
            #[serde(default, deserialize_with = "lenient")]
            sessions: Option<Vec<Session>>,
        }
        let from = |v: &Value| {
            Sessions::deserialize(v)
                .ok()
                .and_then(|s| s.sessions)
                .filter(|s| !s.is_empty())
        };
        let mut sessions = from(stats)
            .or_else(|| {
                let text = std::fs::read(dir.join("state.json")).ok()?;
                from(&serde_json::from_slice::<Value>(&text).ok()?)
            })
            .unwrap_or_default();
        sessions.retain(|s| s.elapsed_s.is_some_and(|t| t.is_finite() && t >= 0.0));
        sessions.sort_by(|a, b| {
            a.elapsed_s
                .unwrap_or(0.0)
                .total_cmp(&b.elapsed_s.unwrap_or(0.0))
        });
        // A campaign that started recording sessions on a resume: its first session, not
        // recorded, started at 0.
        if sessions.first().is_some_and(|s| s.elapsed_s > Some(0.0)) {
            sessions.insert(
                0,
                Session {
                    iteration: Some(0),
                    elapsed_s: Some(0.0),
                },
            );
        }
        sessions
    }

    /// Sessions other than the first: where a resume shows on the time axis, numbered from 2
    /// (`(number, elapsed, hover text)`).
    pub fn resumes(sessions: &[Session]) -> Vec<(usize, f64, String)> {
        sessions
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let t = s.elapsed_s.filter(|&t| t > 0.0)?;
                let it = s
                    .iteration
                    .map(|n| format!(", iteration {n}"))
                    .unwrap_or_default();
                Some((
                    i + 1,
                    t,
                    format!("session {} resumed at {t:.1} s{it}", i + 1),
                ))
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// timeseries.csv
// ---------------------------------------------------------------------------------------------

/// The columns the report uses; others are ignored.
const USED_COLUMNS: [&str; 9] = [
    "elapsed_s",
    "executions",
    "execs_per_s",
    "op_types_pct",
    "op_pairs_pct",
    "params_pct",
    "inputs_pct",
    "findings",
    "illegal",
];

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

    #[test]
    fn sessions_from_stats_or_state() {
        let dir = tempfile::tempdir().unwrap();
        let stats = json!({"sessions": [{"iteration": 90, "elapsed_s": 100.5}, {"iteration": 0, "elapsed_s": 0.0}]});
        let s = Session::load(dir.path(), &stats);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].elapsed_s, Some(0.0));
        let r = Session::resumes(&s);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].0, r[0].1), (2, 100.5));
        assert!(r[0].2.contains("iteration 90"), "{}", r[0].2);
        std::fs::write(
            dir.path().join("state.json"),
            r#"{"sessions": [{"iteration": 0, "elapsed_s": 0}, {"iteration": 5, "elapsed_s": 7}]}"#,
        )
        .unwrap();
        assert_eq!(Session::load(dir.path(), &json!({})).len(), 2);
        // Only a resume recorded: the first session is implied.
        let s = Session::load(dir.path(), &json!({"sessions": [{"elapsed_s": 50.0}]}));
        assert_eq!(s.len(), 2);
        assert_eq!(Session::resumes(&s)[0].0, 2);
        assert!(Session::load(dir.path(), &json!({"sessions": "x"})).len() == 2);
    }
}
