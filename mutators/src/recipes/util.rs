//! Shared pieces of the table-driven recipes: a generic recipe of function pointers, attribute
//! constructors, and draws over parameter buckets.
use super::{GEN_DTYPES, MAX_RANK, Recipe};
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::attr::AttrValue;
use crate::ir::registry::Registry;
use crate::ir::types::TensorType;
use crate::site::Site;

/// Attributes of one node.
pub(crate) type Attrs = Vec<(&'static str, AttrValue)>;

/// Builds one op (`op` is the recipe's op type) reading `x` of type `t`.
pub(crate) type Build = fn(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError>;

/// Output kinds of an accepted (dtype, rank).
pub(crate) type Outs = fn(DType, usize) -> Vec<(DType, usize)>;

/// Which dtypes a recipe reads.
#[derive(Clone, Copy)]
pub(crate) enum Dt {
    /// The registry's constraint on input 0, restricted to the generated dtypes.
    Reg,
    /// The registry's constraint on this input slot.
    RegAt(usize),
    /// These.
    Only(&'static [DType]),
}

/// A recipe made of a dtype set, a rank range, an output rule and a builder.
pub(crate) struct R {
    pub op: &'static str,
    pub dtypes: Vec<DType>,
    pub ranks: (usize, usize),
    pub outs: Outs,
    pub build: Build,
}

impl R {
    pub(crate) fn boxed(
        op: &'static str,
        dt: Dt,
        ranks: (usize, usize),
        outs: Outs,
        build: Build,
    ) -> Box<dyn Recipe> {
        let dtypes = match dt {
            Dt::Only(d) => d.to_vec(),
            Dt::Reg | Dt::RegAt(_) => {
                let slot = if let Dt::RegAt(i) = dt { i } else { 0 };
                match Registry::global().by_key(op) {
                    // The dtypes of the seed zoo's opset: a model at another opset gets a
                    // build refused by the site's dtype check rather than an invalid mutant.
                    Some(spec) => {
                        match spec.input_allowed_at(slot, crate::builder::DEFAULT_OPSET) {
                            Some(a) => GEN_DTYPES
                                .iter()
                                .copied()
                                .filter(|d| a.contains(d))
                                .collect(),
                            None => GEN_DTYPES.to_vec(),
                        }
                    }
                    None => Vec::new(),
                }
            }
        };
        Box::new(R {
            op,
            dtypes,
            ranks,
            outs,
            build,
        })
    }
}

impl Recipe for R {
    fn op_type(&self) -> &'static str {
        self.op
    }
    fn accepts(&self, dtype: DType, rank: usize) -> bool {
        self.dtypes.contains(&dtype) && rank >= self.ranks.0 && rank <= self.ranks.1
    }
    fn outputs(&self, dtype: DType, rank: usize) -> Vec<(DType, usize)> {
        (self.outs)(dtype, rank)
    }
    fn build(
        &self,
        site: &mut Site<'_>,
        x: &str,
        t: &TensorType,
        rng: &mut SplitMix64,
    ) -> Result<String, BuildError> {
        (self.build)(self.op, site, x, t, rng)
    }
}

/// One row of a family's recipe table: the op type, the dtypes and ranks it reads, its output
/// rule and its builder (the arguments of [`R::boxed`]).
pub(crate) type Row = (&'static str, Dt, (usize, usize), Outs, Build);

/// Registers one recipe per row, in order.
pub(crate) fn push_rows(list: &mut Vec<Box<dyn Recipe>>, rows: &[Row]) {
    for &(op, dt, ranks, outs, build) in rows {
        list.push(R::boxed(op, dt, ranks, outs, build));
    }
}

/// Registers one recipe per op of `ops`, in order, all with the same facts and builder.
pub(crate) fn push_each(
    list: &mut Vec<Box<dyn Recipe>>,
    ops: &[&'static str],
    dt: Dt,
    ranks: (usize, usize),
    outs: Outs,
    build: Build,
) {
    for &op in ops {
        list.push(R::boxed(op, dt, ranks, outs, build));
    }
}

/// Builds the op on `x` alone, with no attribute.
pub(crate) fn plain(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    _rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    site.op1(op, &[x], vec![])
}

/// Every rank.
pub(crate) const ANY_RANK: (usize, usize) = (0, MAX_RANK);
/// Rank at least 1.
pub(crate) const RANK1: (usize, usize) = (1, MAX_RANK);

/// The float dtypes.
pub(crate) const FLOATS: &[DType] = &[DType::F32, DType::F16, DType::F64];

/// Same dtype and rank.
pub(crate) fn same(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r)]
}
/// Bool of the same rank.
pub(crate) fn bool_same(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::Bool, r)]
}
/// Same dtype, rank 2.
pub(crate) fn rank2(d: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(d, 2)]
}
/// Same dtype, rank 4.
pub(crate) fn rank4(d: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(d, 4)]
}
/// Same dtype, any rank up to the input's.
pub(crate) fn same_dtype_le(d: DType, r: usize) -> Vec<(DType, usize)> {
    (0..=r).map(|k| (d, k)).collect()
}

/// An INT attribute.
pub(crate) fn ai(v: i64) -> AttrValue {
    AttrValue::Int(v)
}
/// A FLOAT attribute.
pub(crate) fn af(v: f64) -> AttrValue {
    AttrValue::Float(v as f32)
}
/// An INTS attribute.
pub(crate) fn ais(v: &[i64]) -> AttrValue {
    AttrValue::Ints(v.to_vec())
}
/// A STRING attribute.
pub(crate) fn astr(v: &str) -> AttrValue {
    AttrValue::String(v.as_bytes().to_vec())
}

/// Uniform in `0..n` (0 when `n` is 0).
pub(crate) fn below(rng: &mut SplitMix64, n: usize) -> usize {
    if n == 0 {
        0
    } else {
        (rng.next_u64() % n as u64) as usize
    }
}
/// True with probability `p`.
pub(crate) fn chance(rng: &mut SplitMix64, p: f64) -> bool {
    rng.unit() < p
}
/// One of the items.
pub(crate) fn pick<T: Copy>(rng: &mut SplitMix64, items: &[T]) -> T {
    items[below(rng, items.len())]
}
/// Uniform integer in `lo..=hi`.
pub(crate) fn between(rng: &mut SplitMix64, lo: i64, hi: i64) -> i64 {
    if hi <= lo {
        lo
    } else {
        lo + (rng.next_u64() % (hi - lo + 1) as u64) as i64
    }
}

/// The static dims of `t`.
pub(crate) fn dims(t: &TensorType) -> Vec<i64> {
    t.static_dims().unwrap_or_default()
}

/// The static dims of `t`, a random axis of them (sometimes negative, see [`axis`]) and its
/// index (rank >= 1).
pub(crate) fn dims_and_axis(t: &TensorType, rng: &mut SplitMix64) -> (Vec<i64>, i64, usize) {
    let d = dims(t);
    let ax = axis(rng, d.len());
    let i = axis_index(ax, d.len());
    (d, ax, i)
}

/// A valid axis of a rank-`r` tensor, sometimes negative (r >= 1).
pub(crate) fn axis(rng: &mut SplitMix64, r: usize) -> i64 {
    let a = below(rng, r) as i64;
    if chance(rng, 0.3) { a - r as i64 } else { a }
}

/// The index of axis `ax` (negative ones counted from the end) of a rank-`r` tensor
/// ([`norm_axis`](crate::ir::ops::common::norm_axis)); `ax` is one [`axis`] drew.
pub(crate) fn axis_index(ax: i64, r: usize) -> usize {
    crate::ir::ops::common::norm_axis(ax, r).expect("a valid axis")
}

/// An `axis` attribute (a valid axis of rank `r`, sometimes negative) with probability `p`
/// (else the attribute is left to its default).
pub(crate) fn maybe_axis(rng: &mut SplitMix64, attrs: &mut Attrs, p: f64, r: usize) {
    if chance(rng, p) {
        attrs.push(("axis", ai(axis(rng, r))));
    }
}

/// Writes INT attribute `name` = `v` when `v` is not the default `dflt`, and with probability
/// `p` when it is (else the attribute is left to its default).
pub(crate) fn int_attr(
    rng: &mut SplitMix64,
    attrs: &mut Attrs,
    name: &'static str,
    v: i64,
    dflt: i64,
    p: f64,
) {
    if v != dflt || chance(rng, p) {
        attrs.push((name, ai(v)));
    }
}

/// Pushes `(name, value)` when `p` comes up (else the attribute is left to its default).
pub(crate) fn maybe(
    rng: &mut SplitMix64,
    attrs: &mut Attrs,
    p: f64,
    name: &'static str,
    v: AttrValue,
) {
    if chance(rng, p) {
        attrs.push((name, v));
    }
}

/// A 0/1 flag attribute, left out a third of the time.
pub(crate) fn flag(rng: &mut SplitMix64, attrs: &mut Attrs, name: &'static str) {
    if chance(rng, 0.67) {
        attrs.push((name, ai(below(rng, 2) as i64)));
    }
}

/// One float from the list, or the attribute left out (p = 1/(n+1)).
pub(crate) fn float_of(rng: &mut SplitMix64, attrs: &mut Attrs, name: &'static str, vals: &[f64]) {
    let i = below(rng, vals.len() + 1);
    if i < vals.len() {
        attrs.push((name, af(vals[i])));
    }
}

/// A shape that broadcasts to `d` (unidirectionally): same, scalar, a trailing suffix, some
/// dims set to 1, or `[1]`.
pub(crate) fn bshape(rng: &mut SplitMix64, d: &[i64]) -> Vec<i64> {
    match below(rng, 5) {
        0 => d.to_vec(),
        1 => vec![],
        2 => {
            let k = below(rng, d.len() + 1);
            d[d.len() - k..].to_vec()
        }
        3 => d
            .iter()
            .map(|&v| if chance(rng, 0.5) { 1 } else { v })
            .collect(),
        _ => {
            if d.is_empty() {
                vec![]
            } else {
                vec![1]
            }
        }
    }
}

/// A random constant of `dtype` with values fit for the dtype (`lo..hi` for signed and floats,
/// clamped at 0 for unsigned; bool random).
pub(crate) fn konst(
    site: &mut Site<'_>,
    hint: &str,
    dtype: DType,
    dims: &[i64],
    lo: f64,
    hi: f64,
    rng: &mut SplitMix64,
) -> String {
    let (lo, hi) = if dtype.is_unsigned_int() {
        (lo.max(0.0), hi.max(lo.max(0.0) + 1.0))
    } else if dtype == DType::Bool {
        (0.0, 2.0)
    } else {
        (lo, hi)
    };
    site.random_constant(hint, dtype, dims, lo, hi, rng)
}

/// `x` sliced to `0..ends[i]` along `axes[i]` (starts, ends and axes as inputs).
pub(crate) fn crop(
    site: &mut Site<'_>,
    x: &str,
    axes: [i64; 2],
    ends: [i64; 2],
) -> Result<String, BuildError> {
    let starts = site.constant_i64s("starts", &[2], &[0, 0]);
    let ends = site.constant_i64s("ends", &[2], &ends);
    let axes = site.constant_i64s("axes", &[2], &axes);
    site.op1("Slice", &[x, &starts, &ends, &axes], vec![])
}

/// A distinct, sorted subset of `0..r` of size `k` (k <= r).
pub(crate) fn subset(rng: &mut SplitMix64, r: usize, k: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..r).collect();
    for i in (1..all.len()).rev() {
        let j = below(rng, i + 1);
        all.swap(i, j);
    }
    let mut v: Vec<usize> = all.into_iter().take(k).collect();
    v.sort_unstable();
    v
}

/// One of the strings (with probability `p`; else left out).
pub(crate) fn maybe_str(
    rng: &mut SplitMix64,
    attrs: &mut Attrs,
    p: f64,
    name: &'static str,
    vals: &[&str],
) {
    if chance(rng, p) {
        let v = pick(rng, vals);
        attrs.push((name, astr(v)));
    }
}

/// One of the integers (with probability `p`; else left out).
pub(crate) fn maybe_int(
    rng: &mut SplitMix64,
    attrs: &mut Attrs,
    p: f64,
    name: &'static str,
    vals: &[i64],
) {
    if chance(rng, p) {
        let v = pick(rng, vals);
        attrs.push((name, ai(v)));
    }
}
