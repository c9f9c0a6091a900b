//! The alignment database: framework APIs ↔ ONNX ops with their parameter differences, and
//! which backends run each op. Shipped as data (`prompts/data/alignment/*.tsv`).
use std::collections::BTreeMap;

const PYTORCH: &str = include_str!("../../data/alignment/pytorch.tsv");
const TENSORFLOW: &str = include_str!("../../data/alignment/tensorflow.tsv");
const SUPPORT: &str = include_str!("../../data/alignment/support.tsv");

/// One API ↔ ONNX op pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    /// `pytorch` or `tensorflow`.
    pub framework: String,
    /// The API's canonical path (`torch.nn.Conv2d`, `tf.keras.layers.Conv2D`).
    pub api: String,
    /// The ONNX op (default domain).
    pub onnx: String,
    /// Attribute renames and how arguments become ONNX attributes or inputs.
    pub renames: Vec<String>,
    /// Layout differences (NCHW / NHWC, weight layouts, gate orders).
    pub layout: String,
    /// Default values that differ.
    pub defaults: String,
    /// Arguments with no ONNX equivalent.
    pub unsupported: String,
    /// Where the facts come from.
    pub provenance: String,
}

/// A malformed line of the shipped data.
#[derive(Debug, thiserror::Error)]
#[error("alignment data {file}:{line}: {message}")]
pub struct DbError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// The database.
#[derive(Clone, Debug, Default)]
pub struct AlignmentDb {
    pairs: Vec<Pair>,
    by_api: BTreeMap<String, usize>,
}

fn parse_pairs(framework: &str, file: &str, text: &str) -> Result<Vec<Pair>, DbError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 7 || f[0].is_empty() || f[1].is_empty() {
            return Err(DbError {
                file: file.into(),
                line: i + 1,
                message: format!("expected 7 tab-separated fields, found {}", f.len()),
            });
        }
        out.push(Pair {
            framework: framework.into(),
            api: f[0].into(),
            onnx: f[1].into(),
            renames: f[2]
                .split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            layout: f[3].into(),
            defaults: f[4].into(),
            unsupported: f[5].into(),
            provenance: f[6].into(),
        });
    }
    Ok(out)
}

/// Canonical spelling of a dotted API path: `tensorflow.` → `tf.`, `keras.` → `tf.keras.`,
/// `tf.compat.v1.` and `tf.compat.v2.` dropped.
pub fn canonical_api(api: &str) -> String {
    let mut a = api.trim().to_string();
    if let Some(r) = a.strip_prefix("tensorflow.") {
        a = format!("tf.{r}");
    }
    if let Some(r) = a.strip_prefix("keras.") {
        a = format!("tf.keras.{r}");
    }
    for p in ["tf.compat.v1.", "tf.compat.v2."] {
        if let Some(r) = a.strip_prefix(p) {
            a = format!("tf.{r}");
        }
    }
    a
}

impl AlignmentDb {
    /// The shipped database.
    pub fn builtin() -> Result<AlignmentDb, DbError> {
        let mut pairs = parse_pairs("pytorch", "pytorch.tsv", PYTORCH)?;
        pairs.extend(parse_pairs("tensorflow", "tensorflow.tsv", TENSORFLOW)?);
        Ok(AlignmentDb::from_pairs(pairs))
    }

    /// A database of these pairs (the first of two with the same API wins).
    pub fn from_pairs(pairs: Vec<Pair>) -> AlignmentDb {
        let mut by_api = BTreeMap::new();
        for (i, p) in pairs.iter().enumerate() {
            by_api.entry(p.api.clone()).or_insert(i);
        }
        AlignmentDb { pairs, by_api }
    }

    /// Every pair.
    pub fn pairs(&self) -> &[Pair] {
        &self.pairs
    }

    /// The distinct ONNX ops.
    pub fn ops(&self) -> Vec<String> {
        let mut v: Vec<String> = self.pairs.iter().map(|p| p.onnx.clone()).collect();
        v.sort();
        v.dedup();
        v
    }

    /// The pair of an API, trying its aliases: `F.relu` = `torch.nn.functional.relu` =
    /// `torch.relu` = `x.relu()` (`torch.Tensor.relu`); `tf.X` = `tf.math.X` = `tf.nn.X`;
    /// `keras.layers.X` = `tf.keras.layers.X`.
    pub fn lookup(&self, api: &str) -> Option<&Pair> {
        let a = canonical_api(api);
        let mut cands = vec![a.clone()];
        let last = a.rsplit('.').next().unwrap_or("").to_string();
        if a.starts_with("torch.") {
            for p in [
                "torch.",
                "torch.nn.functional.",
                "torch.Tensor.",
                "torch.linalg.",
                "torch.special.",
            ] {
                cands.push(format!("{p}{last}"));
            }
            // In-place methods: `x.add_()`.
            if let Some(base) = last.strip_suffix('_') {
                cands.push(format!("torch.{base}"));
                cands.push(format!("torch.Tensor.{base}"));
            }
        } else if a.starts_with("tf.") && !a.starts_with("tf.keras.") {
            for p in ["tf.", "tf.math.", "tf.nn.", "tf.linalg.", "tf.image."] {
                cands.push(format!("{p}{last}"));
            }
        }
        cands
            .iter()
            .find_map(|c| self.by_api.get(c).map(|&i| &self.pairs[i]))
    }
}

/// Which backends (`ort`, `tract`, `burn`) run an op.
pub trait SupportSource {
    /// The backends that run `op` (empty: none).
    fn backends(&self, op: &str) -> Vec<String>;
}

/// The shipped support table (`support.tsv`), or one built from capabilities.
#[derive(Clone, Debug, Default)]
pub struct SupportTable {
    ops: BTreeMap<String, Vec<String>>,
}

impl SupportTable {
    /// The shipped table.
    pub fn builtin() -> Result<SupportTable, DbError> {
        let mut ops = BTreeMap::new();
        for (i, line) in SUPPORT.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let (op, bs) = line.split_once('\t').ok_or_else(|| DbError {
                file: "support.tsv".into(),
                line: i + 1,
                message: "expected op<TAB>backends".into(),
            })?;
            ops.insert(
                op.to_string(),
                bs.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
            );
        }
        Ok(SupportTable { ops })
    }

    /// A table from (op, backends) entries.
    pub fn from_entries(entries: impl IntoIterator<Item = (String, Vec<String>)>) -> Self {
        SupportTable {
            ops: entries.into_iter().collect(),
        }
    }

    /// Ops in the table.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

impl SupportSource for SupportTable {
    fn backends(&self, op: &str) -> Vec<String> {
        self.ops.get(op).cloned().unwrap_or_default()
    }
}

/// A support source from a function.
pub struct SupportFn<F: Fn(&str) -> Vec<String>>(pub F);

impl<F: Fn(&str) -> Vec<String>> SupportSource for SupportFn<F> {
    fn backends(&self, op: &str) -> Vec<String> {
        (self.0)(op)
    }
}
