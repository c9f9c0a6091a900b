//! The subgraph patterns that graph optimizers match (OATest's idea: plant what a rewrite
//! looks for, in many contexts, so the rewrite runs where its authors did not test it).
//! Each [`Pattern`] builds, after a value `x`, the subgraph one of ONNX Runtime's graph
//! transformers rewrites (the fusions of its level 1 and 2: GELU, LayerNorm, Gemm and Conv
//! activations, MatMul scale and transpose, Conv + BatchNormalization / Add / Mul, Reshape
//! and Transpose chains, no-op Casts, quantize / dequantize pairs), with the exact constants
//! the matcher compares against, and gives back a value of `x`'s type, so the operator
//! ([`crate::operators::structure::PatternPlanting`]) can put it in `x`'s place.
//!
//! A near miss builds the same subgraph with one matched constant a little off: the rewrite
//! must then leave it alone, and the result must still be right.
//!
//! One file per family: `activation.rs` (GELU, QuickGelu, SiLU), `norm.rs` (LayerNorm, skip
//! LayerNorm, RMSNorm), `linear.rs` (MatMul / Gemm / Conv fusions), `layout.rs` (Reshape,
//! Transpose, Cast, Identity, Dropout eliminations), `quant.rs` (dynamic quantization and QDQ
//! groups).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::attr::AttrValue;
use crate::ir::types::TensorType;
use crate::site::Site;

mod activation;
mod layout;
mod linear;
mod norm;
mod quant;

/// Builds a pattern after `x` (of static type `t`); returns a value of `t`'s type.
pub type BuildFn =
    fn(&mut Site<'_>, &str, &TensorType, &mut Knobs<'_>) -> Result<String, BuildError>;

/// One pattern of the library.
pub struct Pattern {
    /// Its name (`GeluErf`).
    pub name: &'static str,
    /// The rewrites it is made for, as ONNX Runtime's log names them
    /// (`GraphTransformer <name> modified`).
    pub rewrites: &'static [&'static str],
    /// The dtypes of `x` it is built on.
    pub dtypes: &'static [DType],
    /// The ranks of `x` it is built on (inclusive).
    pub ranks: (usize, usize),
    /// The builder.
    pub build: BuildFn,
}

impl Pattern {
    /// Whether the pattern can be built after a value of `t`.
    pub fn accepts(&self, t: &TensorType) -> bool {
        let r = t.rank().unwrap_or(usize::MAX);
        self.dtypes.contains(&t.dtype) && (self.ranks.0..=self.ranks.1).contains(&r)
    }
}

/// What a build draws from: the random stream, and whether this build is a near miss (and
/// then which constant missed).
pub struct Knobs<'r> {
    /// The random stream.
    pub rng: &'r mut SplitMix64,
    /// Build a near miss: one matched constant is off by a relative 1e-3.
    pub near_miss: bool,
    /// The constant that was made to miss, once one was.
    pub missed: Option<String>,
}

impl Knobs<'_> {
    /// A constant the matcher compares against: `v`, or in a near miss, for the first such
    /// constant drawn (or, failing that, with probability one half), `v` off by 1e-3.
    pub fn exact(&mut self, what: &str, v: f64) -> f64 {
        if self.near_miss && self.missed.is_none() && self.rng.unit() < 0.5 {
            self.missed = Some(format!("{what} = {} instead of {v}", v * 1.001));
            return v * 1.001;
        }
        v
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.rng.unit() < p
    }

    /// One of `items`.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[(self.rng.unit() * items.len() as f64) as usize % items.len()]
    }
}

/// A scalar constant of `dt`.
fn scalar(site: &mut Site<'_>, hint: &str, dt: DType, v: f64) -> String {
    site.constant_f64s(hint, dt, &[], &[v])
}

/// `x`'s dims (static: the operator only plants after values of static shape).
fn dims(t: &TensorType) -> Vec<i64> {
    t.static_dims().unwrap_or_default()
}

fn ai(v: i64) -> AttrValue {
    AttrValue::Int(v)
}

fn ais(v: &[i64]) -> AttrValue {
    AttrValue::Ints(v.to_vec())
}

fn af(v: f64) -> AttrValue {
    AttrValue::Float(v as f32)
}

const F32: &[DType] = &[DType::F32];
const F32_F64: &[DType] = &[DType::F32, DType::F64];
const ANY: (usize, usize) = (0, crate::recipes::MAX_RANK);
const RANK1: (usize, usize) = (1, crate::recipes::MAX_RANK);
const RANK2: (usize, usize) = (2, crate::recipes::MAX_RANK);

/// The library, in a fixed order (random choices index into it).
pub fn library() -> Vec<Pattern> {
    let mut v = Vec::new();
    activation::register(&mut v);
    norm::register(&mut v);
    linear::register(&mut v);
    layout::register(&mut v);
    quant::register(&mut v);
    v
}

/// Every rewrite the library is made for, sorted, once each (the denominator of the
/// campaign's rewrite coverage for ONNX Runtime).
pub fn targeted_rewrites() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = library()
        .iter()
        .flat_map(|p| p.rewrites.iter().copied())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}
