//! What a coverage reports: [`Delta`] (what one model or merge newly covered), [`Family`]
//! (covered / total of one family) and [`Report`] (the summary of a [`super::Coverage`]).
use serde::{Deserialize, Serialize};
use std::fmt;

/// What one added model (or merge) newly covered, per family.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delta {
    /// New op types.
    pub op_types: usize,
    /// New op pairs.
    pub op_pairs: usize,
    /// New parameter buckets.
    pub params: usize,
    /// New input cells.
    pub inputs: usize,
}

impl Delta {
    /// True when nothing new was covered.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }
    /// Sum over the families.
    pub fn total(&self) -> usize {
        self.op_types + self.op_pairs + self.params + self.inputs
    }
    /// True when a MEMO coverage family (types, pairs, parameters) grew.
    pub fn is_diverse(&self) -> bool {
        self.op_types + self.op_pairs + self.params > 0
    }
}

/// Covered / total of one family.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Family {
    /// Items covered.
    pub covered: usize,
    /// Items in the universe.
    pub total: usize,
    /// `100 * covered / total` (0 for an empty family).
    pub percent: f64,
}

impl Family {
    pub(super) fn new(covered: usize, total: usize) -> Family {
        let percent = if total == 0 {
            0.0
        } else {
            100.0 * covered as f64 / total as f64
        };
        Family {
            covered,
            total,
            percent,
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} / {} ({:.1}%)",
            self.covered, self.total, self.percent
        )
    }
}

/// A summary of a [`Coverage`](super::Coverage).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Models added.
    pub models: u64,
    /// Op type coverage.
    pub op_types: Family,
    /// Op pair coverage.
    pub op_pairs: Family,
    /// Parameter bucket coverage.
    pub params: Family,
    /// Input coverage.
    pub inputs: Family,
    /// Op types of the universe never seen (empty when a saved report lacks the field).
    #[serde(default)]
    pub uncovered_op_types: Vec<String>,
    /// Op types seen that are not in the universe (domain-qualified when not default).
    #[serde(default)]
    pub outside_op_types: Vec<String>,
    /// Distinct pairs seen between universe ops that the universe deems not connectable.
    #[serde(default)]
    pub outside_pairs: usize,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "models:    {}", self.models)?;
        writeln!(f, "op types:  {}", self.op_types)?;
        writeln!(f, "op pairs:  {}", self.op_pairs)?;
        writeln!(f, "params:    {}", self.params)?;
        write!(f, "inputs:    {}", self.inputs)
    }
}
