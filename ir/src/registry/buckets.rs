//! Parameter-coverage buckets of attribute values ([`Buckets`]).

use crate::attr::AttrValue;

/// How attribute values are bucketed for parameter coverage (at most 5 buckets).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum Buckets {
    /// Not part of the parameter space (graphs, tensors, free-form strings).
    None,
    /// One bucket per listed string.
    Strings(Vec<&'static str>),
    /// Inclusive integer ranges.
    IntRanges(Vec<(i64, i64)>),
    /// Half-open float ranges `[lo, hi)`.
    FloatRanges(Vec<(f64, f64)>),
    /// INTS lists: empty / all 0 / all 1 / uniform other / mixed.
    IntsShape,
    /// INTS lists whose empty form is left out (ambiguous, e.g. a reduction's attribute
    /// `axes`): all 0 / all 1 / uniform other / mixed.
    IntsNonEmpty,
    /// FLOATS lists: empty / all equal / mixed.
    FloatsShape,
}

impl Buckets {
    /// Number of buckets.
    pub fn len(&self) -> usize {
        match self {
            Buckets::None => 0,
            Buckets::Strings(s) => s.len(),
            Buckets::IntRanges(r) => r.len(),
            Buckets::FloatRanges(r) => r.len(),
            Buckets::IntsShape => 5,
            Buckets::IntsNonEmpty => 4,
            Buckets::FloatsShape => 3,
        }
    }

    /// True when there are no buckets.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Names of the buckets.
    pub fn labels(&self) -> Vec<String> {
        match self {
            Buckets::None => vec![],
            Buckets::Strings(s) => s.iter().map(|s| s.to_string()).collect(),
            Buckets::IntRanges(r) => r
                .iter()
                .map(|(a, b)| {
                    if a == b {
                        format!("{a}")
                    } else {
                        format!("{a}..={b}")
                    }
                })
                .collect(),
            Buckets::FloatRanges(r) => r.iter().map(|(a, b)| format!("[{a},{b})")).collect(),
            Buckets::IntsShape => ["empty", "all0", "all1", "uniform", "mixed"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Buckets::IntsNonEmpty => ["all0", "all1", "uniform", "mixed"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Buckets::FloatsShape => ["empty", "uniform", "mixed"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        }
    }

    /// The bucket a value falls in.
    pub fn bucket_of(&self, v: &AttrValue) -> Option<usize> {
        match (self, v) {
            (Buckets::Strings(s), AttrValue::String(x)) => {
                let x = String::from_utf8_lossy(x);
                s.iter().position(|c| c.eq_ignore_ascii_case(&x))
            }
            (Buckets::Strings(s), AttrValue::Int(x)) => s.iter().position(|c| *c == x.to_string()),
            (Buckets::IntRanges(r), AttrValue::Int(x)) => {
                r.iter().position(|(a, b)| a <= x && x <= b)
            }
            (Buckets::FloatRanges(r), AttrValue::Float(x)) => {
                let x = *x as f64;
                r.iter().position(|(a, b)| *a <= x && x < *b)
            }
            (Buckets::IntsNonEmpty, AttrValue::Ints(v)) => {
                if v.is_empty() {
                    None
                } else {
                    Buckets::IntsShape
                        .bucket_of(&AttrValue::Ints(v.clone()))
                        .map(|b| b - 1)
                }
            }
            (Buckets::IntsShape, AttrValue::Ints(v)) => Some(if v.is_empty() {
                0
            } else if v.iter().all(|x| *x == 0) {
                1
            } else if v.iter().all(|x| *x == 1) {
                2
            } else if v.iter().all(|x| *x == v[0]) {
                3
            } else {
                4
            }),
            (Buckets::FloatsShape, AttrValue::Floats(v)) => Some(if v.is_empty() {
                0
            } else if v.iter().all(|x| x.to_bits() == v[0].to_bits()) {
                1
            } else {
                2
            }),
            _ => None,
        }
    }
}
