//! The schema of one attribute ([`AttrSpec`]): kind, default, legal values, the opsets that
//! have it and its parameter-coverage buckets.

use super::buckets::Buckets;
use crate::attr::{AttrKind, AttrValue};

/// Legal values of an attribute.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum Legal {
    /// Anything of the right kind.
    Any,
    /// One of these strings (STRING attributes).
    Strings(Vec<&'static str>),
    /// One of these integers (INT attributes, or each element of INTS).
    Ints(Vec<i64>),
    /// Integers in `[lo, hi]` (INT, or each element of INTS).
    IntRange(i64, i64),
    /// Floats in `[lo, hi]` (FLOAT, or each element of FLOATS).
    FloatRange(f64, f64),
}

/// Schema of one attribute.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AttrSpec {
    /// Name.
    pub name: &'static str,
    /// Kind.
    pub kind: AttrKind,
    /// Default value (`None`: required or no default).
    #[serde(skip)]
    pub default: Option<AttrValue>,
    /// Must be present.
    pub required: bool,
    /// Legal values.
    pub legal: Legal,
    /// Parameter-coverage buckets.
    pub buckets: Buckets,
    /// First opset that has this attribute.
    pub since: i64,
    /// First opset that no longer has it.
    pub until: Option<i64>,
}

impl serde::Serialize for AttrKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

const DEFAULT_INT_BUCKETS: &[(i64, i64)] = &[(i64::MIN, -1), (0, 0), (1, 1), (2, 4), (5, i64::MAX)];

const DEFAULT_FLOAT_BUCKETS: &[(f64, f64)] = &[
    (f64::NEG_INFINITY, 0.0),
    (0.0, 1e-6),
    (1e-6, 1.0),
    (1.0, 10.0),
    (10.0, f64::INFINITY),
];

impl AttrSpec {
    fn base(name: &'static str, kind: AttrKind, default: Option<AttrValue>) -> AttrSpec {
        let buckets = match kind {
            AttrKind::Int => Buckets::IntRanges(DEFAULT_INT_BUCKETS.to_vec()),
            AttrKind::Float => Buckets::FloatRanges(DEFAULT_FLOAT_BUCKETS.to_vec()),
            AttrKind::Ints => Buckets::IntsShape,
            AttrKind::Floats => Buckets::FloatsShape,
            _ => Buckets::None,
        };
        AttrSpec {
            name,
            kind,
            default,
            required: false,
            legal: Legal::Any,
            buckets,
            since: 1,
            until: None,
        }
    }
    /// INT with a default.
    pub fn int(name: &'static str, default: i64) -> AttrSpec {
        Self::base(name, AttrKind::Int, Some(AttrValue::Int(default)))
    }
    /// FLOAT with a default.
    pub fn float(name: &'static str, default: f32) -> AttrSpec {
        Self::base(name, AttrKind::Float, Some(AttrValue::Float(default)))
    }
    /// STRING with a default.
    pub fn string(name: &'static str, default: &str) -> AttrSpec {
        Self::base(
            name,
            AttrKind::String,
            Some(AttrValue::String(default.as_bytes().to_vec())),
        )
    }
    /// An attribute of any kind without a default (optional unless [`AttrSpec::required`]).
    pub fn of(name: &'static str, kind: AttrKind) -> AttrSpec {
        Self::base(name, kind, None)
    }
    /// Marks the attribute required.
    pub fn required(mut self) -> AttrSpec {
        self.required = true;
        self
    }
    /// Legal strings (also used as buckets).
    pub fn one_of(mut self, values: &[&'static str]) -> AttrSpec {
        self.legal = Legal::Strings(values.to_vec());
        self.buckets = Buckets::Strings(values.iter().take(5).copied().collect());
        self
    }
    /// Legal integers (also used as buckets when at most 5).
    pub fn one_of_ints(mut self, values: &[i64]) -> AttrSpec {
        self.legal = Legal::Ints(values.to_vec());
        if matches!(self.kind, AttrKind::Int) {
            self.buckets = Buckets::IntRanges(values.iter().take(5).map(|v| (*v, *v)).collect());
        }
        self
    }
    /// Legal integer range, inclusive.
    pub fn range(mut self, lo: i64, hi: i64) -> AttrSpec {
        self.legal = Legal::IntRange(lo, hi);
        self
    }
    /// Legal float range, inclusive.
    pub fn frange(mut self, lo: f64, hi: f64) -> AttrSpec {
        self.legal = Legal::FloatRange(lo, hi);
        self
    }
    /// Integer buckets (inclusive ranges, at most 5).
    pub fn int_buckets(mut self, b: &[(i64, i64)]) -> AttrSpec {
        assert!(b.len() <= 5);
        self.buckets = Buckets::IntRanges(b.to_vec());
        self
    }
    /// Float buckets (half-open ranges, at most 5).
    pub fn float_buckets(mut self, b: &[(f64, f64)]) -> AttrSpec {
        assert!(b.len() <= 5);
        self.buckets = Buckets::FloatRanges(b.to_vec());
        self
    }
    /// INTS buckets without the empty list (generators never write it).
    pub fn non_empty(mut self) -> AttrSpec {
        self.buckets = Buckets::IntsNonEmpty;
        self
    }
    /// No parameter buckets.
    pub fn no_buckets(mut self) -> AttrSpec {
        self.buckets = Buckets::None;
        self
    }
    /// Opset range in which the attribute exists: `[since, until)`.
    pub fn versions(mut self, since: i64, until: Option<i64>) -> AttrSpec {
        self.since = since;
        self.until = until;
        self
    }
    /// Whether the attribute exists at `opset`.
    pub fn exists_at(&self, opset: i64) -> bool {
        opset >= self.since && self.until.is_none_or(|u| opset < u)
    }

    /// Checks a value against kind and legal values.
    pub fn check(&self, v: &AttrValue) -> Result<(), AttrError> {
        if v.kind() != self.kind {
            return Err(AttrError::Kind {
                name: self.name,
                expected: self.kind,
                found: v.kind(),
            });
        }
        let legal = match (&self.legal, v) {
            (Legal::Any, _) => true,
            (Legal::Strings(ok), AttrValue::String(s)) => {
                let s = String::from_utf8_lossy(s);
                ok.iter().any(|o| *o == s)
            }
            (Legal::Ints(ok), AttrValue::Int(i)) => ok.contains(i),
            (Legal::Ints(ok), AttrValue::Ints(v)) => v.iter().all(|i| ok.contains(i)),
            (Legal::IntRange(lo, hi), AttrValue::Int(i)) => lo <= i && i <= hi,
            (Legal::IntRange(lo, hi), AttrValue::Ints(v)) => v.iter().all(|i| lo <= i && i <= hi),
            (Legal::FloatRange(lo, hi), AttrValue::Float(f)) => {
                let f = *f as f64;
                *lo <= f && f <= *hi
            }
            (Legal::FloatRange(lo, hi), AttrValue::Floats(v)) => {
                v.iter().all(|f| *lo <= *f as f64 && *f as f64 <= *hi)
            }
            _ => true,
        };
        if legal {
            return Ok(());
        }
        Err(AttrError::Illegal {
            name: self.name,
            value: v.short(),
            legal: self.legal.clone(),
            each: matches!(v, AttrValue::Ints(_) | AttrValue::Floats(_)),
        })
    }
}

/// An attribute value that its [`AttrSpec`] refuses ([`AttrSpec::check`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AttrError {
    /// The value is of another kind than the spec's.
    #[error("attribute '{name}' must be {}, found {}", .expected.name(), .found.name())]
    Kind {
        /// The attribute.
        name: &'static str,
        /// The spec's kind.
        expected: AttrKind,
        /// The value's kind.
        found: AttrKind,
    },
    /// The value is of the right kind but outside the legal values.
    #[error("attribute '{name}' = {value} is not legal: {}", expected(.legal, *.each))]
    Illegal {
        /// The attribute.
        name: &'static str,
        /// The value, shortened ([`AttrValue::short`]).
        value: String,
        /// The legal values.
        legal: Legal,
        /// Whether the value is a list, each of whose elements must be legal.
        each: bool,
    },
}

/// What the legal values are, as [`AttrError::Illegal`] says it.
fn expected(legal: &Legal, each: bool) -> String {
    match (legal, each) {
        (Legal::Any, _) => "anything".to_string(),
        (Legal::Strings(ok), false) => format!("expected one of {ok:?}"),
        (Legal::Strings(ok), true) => format!("each must be one of {ok:?}"),
        (Legal::Ints(ok), false) => format!("expected one of {ok:?}"),
        (Legal::Ints(ok), true) => format!("each must be one of {ok:?}"),
        (Legal::IntRange(lo, hi), false) => format!("expected {lo}..={hi}"),
        (Legal::IntRange(lo, hi), true) => format!("each must be in {lo}..={hi}"),
        (Legal::FloatRange(lo, hi), false) => format!("expected {lo}..={hi}"),
        (Legal::FloatRange(lo, hi), true) => format!("each must be in {lo}..={hi}"),
    }
}
