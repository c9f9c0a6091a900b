//! Findings as data: what kind of bug, which backend, where, and the signature that
//! deduplicates them.
use mutagraph_backends::backend::Stage;
use mutagraph_backends::compare::Metrics;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What kind of bug a finding points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The backend crashed, panicked or reported an error where others ran the model.
    Crash,
    /// NaN / Inf outputs where the ground truth is finite.
    Nan,
    /// Outputs that differ from the ground truth beyond the tolerance.
    Inconsistency,
    /// No answer within the time limit where others finished.
    Hang,
    /// Much slower than the other backends, confirmed by re-runs.
    Slow,
    /// Over the memory cap, or peak memory far above the others.
    Memory,
    /// The same backend twice on the same model and inputs disagrees with itself.
    Flaky,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 7] = [
        Kind::Crash,
        Kind::Nan,
        Kind::Inconsistency,
        Kind::Hang,
        Kind::Slow,
        Kind::Memory,
        Kind::Flaky,
    ];

    /// The lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Crash => "crash",
            Kind::Nan => "nan",
            Kind::Inconsistency => "inconsistency",
            Kind::Hang => "hang",
            Kind::Slow => "slow",
            Kind::Memory => "memory",
            Kind::Flaky => "flaky",
        }
    }

    /// The kind of a name.
    pub fn by_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Kinds that the localizer can pin on a node (they are about values).
    pub fn is_numeric(self) -> bool {
        matches!(self, Kind::Nan | Kind::Inconsistency)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a finding was pinned by localization.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Location {
    /// The op type of the first node whose output diverges.
    pub op_type: String,
    /// The node's first output (node names are not stable; value names are).
    pub value: String,
    /// Its key attributes, `name=value` comma-separated (the categorical ones).
    pub attrs: String,
}

/// One suspected bug, as data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What kind.
    pub kind: Kind,
    /// The faulty backends (the ground truth decided; `reference` when the others agree
    /// against it).
    pub backends: Vec<String>,
    /// The stage that failed, for crashes and hangs.
    pub stage: Option<Stage>,
    /// The symptom within the kind: `signal-SIGSEGV`, `panic`, `exit`, `error` (crash);
    /// `partial` / `all` (NaN); `values` / `shape` / `dtype` / `missing-output`
    /// (inconsistency); `timeout`; `over-cap` / `peak` (memory); `slower` (slow);
    /// `values` / `outcome` (flaky).
    pub symptom: String,
    /// What happened, in words.
    pub message: String,
    /// Error metrics against the ground truth, when outputs were compared.
    pub metrics: Option<Metrics>,
    /// CRADLE's D_MAD between the faulty backend and the closest other backend, relative to
    /// the ground truth (0: as close as the others; 1: all the error is this backend's).
    pub d_mad: Option<f64>,
    /// Where localization pinned it.
    pub location: Option<Location>,
}

impl Finding {
    /// A finding with the given kind, backend, symptom and message; the rest empty.
    pub fn new(kind: Kind, backend: &str, symptom: &str, message: String) -> Finding {
        Finding {
            kind,
            backends: vec![backend.to_string()],
            stage: None,
            symptom: symptom.to_string(),
            message,
            metrics: None,
            d_mad: None,
            location: None,
        }
    }

    /// The op type localization pinned, if any.
    pub fn op_type(&self) -> Option<&str> {
        self.location.as_ref().map(|l| l.op_type.as_str())
    }

    /// The dedup signature: kind, faulty backends, stage, and the localized op type with its
    /// key attributes, or else the symptom and the normalized message. Two findings with the same
    /// signature are the same bug as far as the campaign can tell.
    pub fn signature(&self) -> String {
        let mut backends = self.backends.clone();
        backends.sort();
        let stage = self.stage.map(|s| s.to_string()).unwrap_or_default();
        let place = match &self.location {
            Some(l) if l.attrs.is_empty() => format!("op={}", l.op_type),
            Some(l) => format!("op={}[{}]", l.op_type, l.attrs),
            None if self.kind.is_numeric() => "op=?".to_string(),
            None => format!("msg={}", normalize_message(&self.message)),
        };
        // A localized finding is one bug of that op whatever its sub-symptom (NaN in part of
        // the output or all of it, values or shape): the op stands for it.
        let symptom = if self.location.is_some() {
            ""
        } else {
            self.symptom.as_str()
        };
        format!(
            "{}|{}|{}|{}|{}",
            self.kind,
            backends.join("+"),
            stage,
            symptom,
            place
        )
    }

    /// A file-name-safe id for the signature: `kind-backend-op-<8 hex digits>`.
    pub fn signature_id(&self) -> String {
        let sig = self.signature();
        let b = self.backends.first().map(String::as_str).unwrap_or("none");
        let what = self.op_type().unwrap_or(&self.symptom);
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '_'
                    }
                })
                .collect()
        };
        format!(
            "{}-{}-{}-{:08x}",
            self.kind,
            clean(b),
            clean(what),
            fnv1a(sig.as_bytes()) as u32
        )
    }
}

/// 64-bit FNV-1a (stable across builds and platforms, unlike `DefaultHasher`).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A backend message with what varies between occurrences of one bug taken out: quoted names
/// become `'_'`, numbers `#`, hex addresses `0x#`, whitespace runs one space; lowercase;
/// at most 160 characters.
pub fn normalize_message(msg: &str) -> String {
    let mut out = String::new();
    let mut chars = msg.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' | '`' => {
                // A quoted span (on one line) is a name; an unmatched quote is kept.
                let rest: String = chars.clone().take_while(|&d| d != c && d != '\n').collect();
                if chars.clone().nth(rest.chars().count()) == Some(c) {
                    for _ in 0..=rest.chars().count() {
                        chars.next();
                    }
                    out.push_str("'_'");
                } else {
                    out.push(c);
                }
            }
            '0' if chars.peek() == Some(&'x') => {
                chars.next();
                while chars.peek().is_some_and(|d| d.is_ascii_hexdigit()) {
                    chars.next();
                }
                out.push_str("0x#");
            }
            d if d.is_ascii_digit() => {
                while chars
                    .peek()
                    .is_some_and(|d| d.is_ascii_alphanumeric() || *d == '.' || *d == '_')
                {
                    chars.next();
                }
                // A word with a digit in it is a generated name or a number: `#`.
                while out
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '#')
                {
                    out.pop();
                }
                out.push('#');
            }
            w if w.is_whitespace() => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            other => out.extend(other.to_lowercase()),
        }
    }
    let t = out.trim();
    t.chars().take(160).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_normalize_names_numbers_and_addresses() {
        let a = normalize_message("Failed analyse for node #12 \"n3_conv\" Conv: shape [1, 3, 28]");
        let b = normalize_message("Failed analyse for node #7 \"n9_conv\" Conv: shape [2, 5, 14]");
        assert_eq!(a, b);
        assert!(a.contains("'_'") && a.contains("conv"), "{a}");
        assert_eq!(
            normalize_message("segfault at 0x7ffd1234 in   f"),
            "segfault at 0x# in f"
        );
        assert_eq!(
            normalize_message("onehot_mdddc3e1 (OneHot): index 7 out of range"),
            normalize_message("onehot_m4da9f_12 (OneHot): index 12 out of range")
        );
        assert_ne!(
            normalize_message("index out of range"),
            normalize_message("bad shape")
        );
        assert_eq!(normalize_message("it's fine"), "it's fine");
    }

    #[test]
    fn signatures_use_the_location_else_the_message() {
        let mut f = Finding::new(Kind::Crash, "tract", "error", "node \"a1\" failed 3".into());
        f.stage = Some(Stage::Compile);
        let mut g = f.clone();
        g.message = "node \"b7\" failed 12".into();
        assert_eq!(f.signature(), g.signature());
        assert_eq!(f.signature_id(), g.signature_id());
        assert_eq!(
            f.signature(),
            "crash|tract|compile|error|msg=node '_' failed #"
        );
        let mut h = Finding::new(Kind::Inconsistency, "ort", "values", "x".into());
        assert!(h.signature().ends_with("op=?"));
        h.location = Some(Location {
            op_type: "Conv".into(),
            value: "v1".into(),
            attrs: "auto_pad=NOTSET".into(),
        });
        assert_eq!(
            h.signature(),
            "inconsistency|ort|||op=Conv[auto_pad=NOTSET]"
        );
        assert!(h.signature_id().starts_with("inconsistency-ort-conv-"));
        assert_ne!(h.signature_id(), f.signature_id());
    }
}
