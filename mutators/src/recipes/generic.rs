//! The table-driven recipe: how an op reads the value it is inserted after (dtype and rank
//! rules), which other inputs it needs (constants built from the value's type), which
//! attributes are fixed by the value's shape, and the rest drawn over the registry's
//! parameter buckets. A draw that the registry refuses (constraints between attributes and
//! shapes) is redrawn; the last try leaves every drawn attribute at its default.
use super::{GEN_DTYPES, Recipe};
use crate::builder::SplitMix64;
use crate::ir::DType;
use crate::ir::attr::{AttrKind, AttrValue};
use crate::ir::registry::{Buckets, Legal, Registry};
use crate::ir::types::TensorType;
use crate::site::Site;

/// Builds the input list (the value first where the op reads it there).
pub type InputsFn =
    fn(&mut Site<'_>, &str, &TensorType, &mut SplitMix64) -> Result<Vec<String>, String>;
/// Attributes fixed by the input's type (drawn attributes never override them).
pub type FixedFn = fn(&TensorType, &mut SplitMix64) -> Vec<(&'static str, AttrValue)>;
/// The (dtype, rank) of the main output for an input (dtype, rank).
pub type OutFn = fn(DType, usize) -> Vec<(DType, usize)>;

/// One table entry.
pub struct Generic {
    /// Op type.
    pub op: &'static str,
    /// Accepted input ranks (inclusive).
    pub ranks: (usize, usize),
    /// Accepted dtypes (None: the registry's dtypes of input 0, among [`GEN_DTYPES`]).
    pub dtypes: Option<&'static [DType]>,
    /// Input builder.
    pub inputs: InputsFn,
    /// Shape-dependent attributes.
    pub fixed: FixedFn,
    /// Output kinds.
    pub out: OutFn,
    /// Number of outputs the node declares.
    pub n_outputs: usize,
    /// Which output is the main one.
    pub main_output: usize,
    /// Attributes never drawn (left at their defaults).
    pub skip: &'static [&'static str],
}

impl Generic {
    /// An entry reading only `x`, output of the same dtype and rank.
    pub const fn same(op: &'static str, ranks: (usize, usize)) -> Generic {
        Generic {
            op,
            ranks,
            dtypes: None,
            inputs: only_x,
            fixed: no_fixed,
            out: same,
            n_outputs: 1,
            main_output: 0,
            skip: &[],
        }
    }
}

/// Reads only `x`.
pub fn only_x(
    _: &mut Site<'_>,
    x: &str,
    _: &TensorType,
    _: &mut SplitMix64,
) -> Result<Vec<String>, String> {
    Ok(vec![x.to_string()])
}

/// No shape-dependent attributes.
pub fn no_fixed(_: &TensorType, _: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    Vec::new()
}

/// Same dtype and rank.
pub fn same(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r)]
}

/// Bool of the same rank.
pub fn bool_same(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::Bool, r)]
}

/// Same dtype, any rank up to the input's (reductions).
pub fn reduced(d: DType, r: usize) -> Vec<(DType, usize)> {
    (0..=r).map(|k| (d, k)).collect()
}

fn registry_dtypes(op: &str) -> Vec<DType> {
    let Some(spec) = Registry::global().get("", op) else {
        return Vec::new();
    };
    let tc = spec.input_tc(0);
    match spec.allowed(tc) {
        Some(ds) => GEN_DTYPES
            .iter()
            .copied()
            .filter(|d| ds.contains(d))
            .collect(),
        None => GEN_DTYPES.to_vec(),
    }
}

impl Recipe for Generic {
    fn op_type(&self) -> &'static str {
        self.op
    }
    fn accepts(&self, dtype: DType, rank: usize) -> bool {
        if rank < self.ranks.0 || rank > self.ranks.1 {
            return false;
        }
        match self.dtypes {
            Some(ds) => ds.contains(&dtype),
            None => registry_dtypes(self.op).contains(&dtype),
        }
    }
    fn outputs(&self, dtype: DType, rank: usize) -> Vec<(DType, usize)> {
        (self.out)(dtype, rank)
    }
    fn build(
        &self,
        site: &mut Site<'_>,
        x: &str,
        t: &TensorType,
        rng: &mut SplitMix64,
    ) -> Result<String, String> {
        let inputs = (self.inputs)(site, x, t, rng)?;
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let rank = t.rank().unwrap_or(0);
        let mut last = String::new();
        for attempt in 0..6 {
            let mut attrs = (self.fixed)(t, rng);
            if attempt < 5 {
                let fixed: Vec<&str> = attrs.iter().map(|(k, _)| *k).collect();
                for (k, v) in draw_attrs(self.op, site.opset(), rank, &fixed, self.skip, rng) {
                    attrs.push((k, v));
                }
            }
            match site.op(self.op, &refs, attrs, self.n_outputs) {
                Ok(mut outs) => return Ok(outs.swap_remove(self.main_output)),
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

/// A random value of an INTS attribute in bucket `b` (empty, all 0, all 1, uniform, mixed).
fn ints_in_bucket(b: usize, len: usize, rng: &mut SplitMix64) -> Vec<i64> {
    let len = len.max(1);
    match b {
        0 => Vec::new(),
        1 => vec![0; len],
        2 => vec![1; len],
        3 => vec![2 + (rng.next_u64() % 2) as i64; len],
        _ => {
            let mut v: Vec<i64> = (0..len).map(|_| 1 + (rng.next_u64() % 3) as i64).collect();
            if v.iter().all(|&x| x == v[0]) {
                if len == 1 {
                    v.push(v[0] % 3 + 1);
                } else {
                    v[0] = v[0] % 3 + 1;
                }
            }
            v
        }
    }
}

/// Draws values for the op's attributes (those that exist at `opset`, are not fixed or
/// skipped, and are plain values): a quarter are left out (their default), the others take a
/// value from a uniformly chosen bucket.
pub fn draw_attrs(
    op: &str,
    opset: i64,
    rank: usize,
    fixed: &[&str],
    skip: &[&str],
    rng: &mut SplitMix64,
) -> Vec<(&'static str, AttrValue)> {
    let Some(spec) = Registry::global().get("", op) else {
        return Vec::new();
    };
    let spatial = rank.saturating_sub(2).max(1);
    let mut out = Vec::new();
    for a in &spec.attrs {
        if !a.exists_at(opset) || fixed.contains(&a.name) || skip.contains(&a.name) {
            continue;
        }
        if !a.required && rng.unit() < 0.25 {
            continue;
        }
        let nb = a.buckets.len();
        let b = if nb > 0 {
            (rng.next_u64() % nb as u64) as usize
        } else {
            0
        };
        let v = match (a.kind, &a.buckets) {
            (AttrKind::Int, Buckets::IntRanges(r)) => {
                let (lo, hi) = r[b];
                let v = if hi.saturating_sub(lo) <= 8 {
                    lo + (rng.next_u64() % (hi - lo + 1) as u64) as i64
                } else if lo == i64::MIN {
                    hi - (rng.next_u64() % 4) as i64
                } else {
                    lo + (rng.next_u64() % 4) as i64
                };
                AttrValue::Int(v)
            }
            (AttrKind::Int, Buckets::Strings(s)) => match s[b].parse() {
                Ok(v) => AttrValue::Int(v),
                Err(_) => continue,
            },
            (AttrKind::Float, Buckets::FloatRanges(r)) => {
                let (lo, hi) = r[b];
                let (lo, hi) = match (lo.is_finite(), hi.is_finite()) {
                    (true, true) => (lo, hi),
                    (false, true) => (hi - 2.0, hi),
                    (true, false) => (lo, lo + 2.0),
                    (false, false) => (-2.0, 2.0),
                };
                AttrValue::Float(rng.range(lo, hi) as f32)
            }
            (AttrKind::String, Buckets::Strings(s)) => AttrValue::String(s[b].as_bytes().to_vec()),
            (AttrKind::Ints, Buckets::IntsShape) => {
                let len = match a.name {
                    "kernel_shape" | "strides" | "dilations" | "output_padding"
                    | "output_shape" => spatial,
                    "pads" => 2 * spatial,
                    "perm" => {
                        let mut p: Vec<i64> = (0..rank as i64).collect();
                        for i in (1..p.len()).rev() {
                            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                            p.swap(i, j);
                        }
                        out.push((a.name, AttrValue::Ints(p)));
                        continue;
                    }
                    "axes" => 1 + (rng.next_u64() % rank.max(1) as u64) as usize,
                    _ => 1 + (rng.next_u64() % 3) as usize,
                };
                AttrValue::Ints(ints_in_bucket(b, len, rng))
            }
            (AttrKind::Floats, Buckets::FloatsShape) => {
                let len = 1 + (rng.next_u64() % 3) as usize;
                AttrValue::Floats(match b {
                    0 => Vec::new(),
                    1 => vec![rng.range(0.1, 2.0) as f32; len],
                    _ => (0..len.max(2))
                        .map(|_| rng.range(0.1, 2.0) as f32)
                        .collect(),
                })
            }
            (_, Buckets::None) => match (&a.legal, a.kind) {
                (Legal::Strings(s), AttrKind::String) if !s.is_empty() => {
                    let i = (rng.next_u64() % s.len() as u64) as usize;
                    AttrValue::String(s[i].as_bytes().to_vec())
                }
                (Legal::Ints(v), AttrKind::Int) if !v.is_empty() => {
                    AttrValue::Int(v[(rng.next_u64() % v.len() as u64) as usize])
                }
                _ => continue,
            },
            _ => continue,
        };
        out.push((a.name, v));
    }
    out
}
