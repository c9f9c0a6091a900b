//! "Possibly known upstream": a bundle's op and message searched in the library's issue
//! tracker (GitHub's issue search, `GET {api}/search/issues?q=...`), so that a maintainer sees
//! at once whether the bug may be filed already. Off by default: it needs network access,
//! which a campaign never uses; `mutagraph report DIR --known-upstream` makes the searches and
//! records them in each bundle's `meta.json` (`upstream`), and REPORT.md shows them. Without a
//! search REPORT.md says that it was not checked.
use super::Meta;
use mutagraph_backends::catalog::{self, Library};
use mutagraph_oracles::Kind;
use mutagraph_oracles::bundle::Upstream;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// GitHub's REST API, where the trackers of ONNX Runtime, tract and burn live.
pub const GITHUB_API: &str = "https://api.github.com";

/// Issues listed per bundle.
const LISTED: usize = 5;

/// One search, as `meta.json` records it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Search {
    /// The query (GitHub's search syntax).
    pub query: String,
    /// The API it was sent to.
    pub api: String,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What it found, closest first.
    #[serde(default)]
    pub issues: Vec<KnownIssue>,
}

/// An issue a search found.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct KnownIssue {
    /// Its number.
    pub number: u64,
    /// Its title.
    pub title: String,
    /// `open` or `closed`.
    pub state: String,
    /// Its page.
    pub url: String,
}

impl Search {
    /// REPORT.md's section.
    pub fn section(&self) -> Upstream {
        match &self.error {
            Some(error) => Upstream::Failed {
                query: self.query.clone(),
                error: error.clone(),
            },
            None => Upstream::Searched {
                query: self.query.clone(),
                issues: self
                    .issues
                    .iter()
                    .map(|i| (i.number, i.title.clone(), i.state.clone(), i.url.clone()))
                    .collect(),
            },
        }
    }
}

/// The repository of a library's issue tracker.
fn tracker(library: Library) -> Option<&'static str> {
    match library {
        Library::OnnxRuntime => Some("microsoft/onnxruntime"),
        Library::Tract => Some("sonos/tract"),
        Library::Burn => Some("tracel-ai/burn"),
        _ => None,
    }
}

/// The search for a bundle: its library's repository, the op, and for a failure the words of
/// its innermost cause (quoted: they must appear together), for a wrong result the op in the
/// title. `None` for a library without a tracker here (the test backends).
pub fn query(meta: &Meta) -> Option<String> {
    let repo = tracker(catalog::library(meta.backends.first()?))?;
    let op = meta.op_type.as_deref().unwrap_or_default();
    let words = match meta.kind {
        Kind::Crash => mutagraph_oracles::key_phrase(&meta.message)
            .map(|p| format!("\"{}\"", p.replace('"', " ").trim()))
            .unwrap_or_default(),
        _ => String::new(),
    };
    let op = match (meta.kind, op) {
        (_, "") => String::new(),
        (Kind::Crash, op) => op.to_string(),
        (_, op) => format!("{op} in:title"),
    };
    let terms = [op, words]
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>();
    (!terms.is_empty()).then(|| format!("repo:{repo} is:issue {}", terms.join(" ")))
}

/// Runs `query` against `api` (at most `timeout` in all).
pub fn search(api: &str, query: &str, timeout: Duration) -> Search {
    let api = api.trim_end_matches('/');
    let result = run(api, query, timeout);
    let (issues, error) = match result {
        Ok(issues) => (issues, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    Search {
        query: query.to_string(),
        api: api.to_string(),
        error,
        issues,
    }
}

fn run(api: &str, query: &str, timeout: Duration) -> Result<Vec<KnownIssue>, String> {
    if api.starts_with("https://") && !cfg!(feature = "tls") {
        return Err(format!(
            "{api} needs TLS, which this build lacks (cargo build --release --features tls)"
        ));
    }
    let agent = mutagraph_prompts::llm::http_agent(api, timeout);
    let url = format!(
        "{api}/search/issues?q={}&per_page={LISTED}",
        percent_encode(query)
    );
    let mut resp = agent
        .get(&url)
        .header("Accept", "application/vnd.github+json")
        .call()
        .map_err(|e| format!("{api}: {e}"))?;
    let status = resp.status().as_u16();
    let text = resp
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("{api}: {e}"))?;
    if !(200..300).contains(&status) {
        let body: String = text.chars().take(200).collect();
        return Err(format!("{api} answered {status}: {body}"));
    }
    parse(&text).ok_or_else(|| format!("{api}: not a search result"))
}

/// The issues of a search result (`{"items": [{"number", "title", "state", "html_url"}]}`).
fn parse(text: &str) -> Option<Vec<KnownIssue>> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let items = v.get("items")?.as_array()?;
    Some(
        items
            .iter()
            .take(LISTED)
            .filter_map(|i| {
                Some(KnownIssue {
                    number: i.get("number")?.as_u64()?,
                    title: i.get("title")?.as_str()?.to_string(),
                    state: i.get("state")?.as_str().unwrap_or("").to_string(),
                    url: i.get("html_url")?.as_str()?.to_string(),
                })
            })
            .collect(),
    )
}

/// `s` for a URL's query: unreserved characters as they are, every other byte `%XX`.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_name_the_tracker_the_op_and_the_cause() {
        let parent = tempfile::tempdir().unwrap();
        let (b, _, _) = crate::bundle::sample(parent.path());
        let mut m = crate::bundle::read_meta(&b).unwrap();
        m.backends = vec!["tract".into()];
        m.kind = Kind::Crash;
        m.op_type = Some("IsNaN".into());
        m.message = "run: Evaluating #3 \"y\" IsNan: Element wise eval in-place not defined".into();
        assert_eq!(
            query(&m).unwrap(),
            "repo:sonos/tract is:issue IsNaN \"Element wise eval in-place not defined\""
        );
        m.backends = vec!["ort-noopt".into()];
        m.kind = Kind::Inconsistency;
        m.op_type = Some("Resize".into());
        assert_eq!(
            query(&m).unwrap(),
            "repo:microsoft/onnxruntime is:issue Resize in:title"
        );
        m.backends = vec!["planted-conv-pad".into()];
        assert_eq!(query(&m), None);
        assert_eq!(percent_encode("a b\"/:"), "a%20b%22%2F%3A");
    }

    #[test]
    fn search_results_are_read_and_cut() {
        let items: Vec<String> = (1..=7)
            .map(|n| {
                format!(
                    r#"{{"number": {n}, "title": "t{n}", "state": "open", "html_url": "https://x/{n}"}}"#
                )
            })
            .collect();
        let text = format!(r#"{{"total_count": 7, "items": [{}]}}"#, items.join(","));
        let issues = parse(&text).unwrap();
        assert_eq!(issues.len(), LISTED);
        assert_eq!(issues[0].title, "t1");
        assert_eq!(parse("{\"message\": \"rate limited\"}"), None);
    }
}
