//! Recipes: how the generator instantiates each op type it knows after an existing value (the
//! op spec of NNSmith, seen from the generator's side: which inputs an op can read, what it
//! makes of them, and how to build a valid node with attributes, weights and constants).
//!
//! One [`Recipe`] per op type. The set of op types with a recipe, and the pairs that the
//! recipes' dtype-and-rank facts can connect, are the campaign's coverage universe
//! ([`Recipes::universe`]).
//!
//! Families, registered in this order (the order of [`Recipes::builtin`], which random
//! choices index into):
//! * `unary.rs`: elementwise unary ops, activations, softmax family, casts, `Clip`,
//!   `Dropout`, `Trilu`, `CumSum`, `LpNormalization`, `MeanVarianceNormalization` (one
//!   table-driven file);
//! * `binary.rs`: binary arithmetic / comparison / logic / bitwise ops against a
//!   broadcastable constant, the variadic ops, `PRelu`, `Where` (one table-driven file);
//! * `reduce.rs`: `Reduce*`, `ArgMax` / `ArgMin`, `TopK` (one table-driven file);
//! * `nn/`: convolutions, pooling, normalizations, matrix products, RNNs, ROI ops, quantized
//!   conv / matmul, one file per op or small group (`nn/conv.rs`, `nn/rnn.rs`, ...);
//! * `shape/`: shape, indexing, resizing and quantization ops, one file per op or small group
//!   (`shape/resize.rs`, `shape/gather.rs`, ...);
//! * `contrib.rs`: ONNX Runtime's `com.microsoft` ops (named by their op key,
//!   `com.microsoft::FastGelu`).
//!
//! Finding an op's recipe: `nn/` and `shape/` name their files after the ops (their `mod.rs`
//! has the op → file table); each family's `register` lists every op it knows with the
//! builder that makes it. `util.rs` holds what the families share (the table-driven recipe
//! `R`, attribute constructors, draws over parameter buckets).
//! Each build draws attributes so that repeated builds cover the op's parameter buckets, and
//! uses the form of the op valid at the model's opset ([`Site::opset`]).
//!
//! The dtype facts (`accepts`) come from the op's spec: the registry's constraint on the input
//! the recipe reads, as the ONNX schema in force at the seed zoo's opset (17) narrows it
//! (integer `Erf` went away at 13, f16 `IsInf` came at 20), restricted to [`GEN_DTYPES`]
//! (`util::Dt::Reg`). The one recipe that narrows further says why (`Col2Im` in `nn/mod.rs`). Ranks
//! and output rules are the recipe's.
//!
//! Default-domain ops of the registry without a recipe, and why:
//! * random ops (not deterministic): `Bernoulli`, `Multinomial`, `RandomNormal`,
//!   `RandomNormalLike`, `RandomUniform`, `RandomUniformLike`;
//! * sequence / optional values: `ConcatFromSequence`, `Optional`, `OptionalGetElement`,
//!   `OptionalHasElement`, `SequenceAt`, `SequenceConstruct`, `SequenceEmpty`,
//!   `SequenceErase`, `SequenceInsert`, `SequenceLength`, `SequenceMap`, `SplitToSequence`;
//! * strings and images: `RegexFullMatch`, `StringConcat`, `StringNormalizer`, `StringSplit`,
//!   `TfIdfVectorizer`, `ImageDecoder`;
//! * training losses: `NegativeLogLikelihoodLoss`, `SoftmaxCrossEntropyLoss`;
//! * control flow (subgraphs): `If`, `Loop`, `Scan`;
//! * outputs whose shape depends on the values read (no static type after `x`): `NonZero`,
//!   `Unique`, `NonMaxSuppression`, `Range`, and the window / spectral generators that read
//!   a size scalar (`BlackmanWindow`, `HammingWindow`, `HannWindow`, `MelWeightMatrix`),
//!   plus `DFT` / `STFT` (complex-valued layouts);
//! * ops that read no value: `Constant`, `ConstantOfShape` (its input is a shape, so reading
//!   a computed `x` gives a data-dependent shape).
//! * ONNX Runtime's own schema in the default domain, `SimplifiedLayerNormalization`
//!   (`ir::onnx_ops::ort_default`; so is `LayerNormalization` below opset 17, where
//!   [`exists_at`] already rules it out): a seed may hold one, a mutant never gets one
//!   (`Site` refuses to build it), so ONNX's rules keep holding for generated models.
use crate::builder::SplitMix64;
use crate::coverage::{Universe, UniverseError};
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::registry::Registry;
use crate::ir::types::TensorType;
use crate::site::Site;
use std::collections::HashMap;

mod binary;
mod contrib;
mod nn;
mod reduce;
mod shape;
mod unary;
mod util;

/// Highest rank the generator considers.
pub const MAX_RANK: usize = 6;

/// The dtypes the generator makes values of (the ones every backend can at least load).
pub const GEN_DTYPES: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::F64,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::Bool,
];

/// How to insert one op type.
pub trait Recipe: Send + Sync {
    /// The op key: the op type in the default domain, `domain::Op` outside it.
    fn op_type(&self) -> &'static str;
    /// Whether the op can read a value of `dtype` and `rank` as the input the recipe wires to
    /// the existing value.
    fn accepts(&self, dtype: DType, rank: usize) -> bool;
    /// The (dtype, rank) the main output can have for an accepted input (used to compute which
    /// op pairs can be connected).
    fn outputs(&self, dtype: DType, rank: usize) -> Vec<(DType, usize)>;
    /// Adds the op (and whatever constants it needs) reading `x`, whose type is `t` (static
    /// shape, accepted dtype and rank); returns the main output value. Attribute values are
    /// drawn from `rng` so that repeated builds cover the op's parameter buckets.
    fn build(
        &self,
        site: &mut Site<'_>,
        x: &str,
        t: &TensorType,
        rng: &mut SplitMix64,
    ) -> Result<String, BuildError>;
}

/// Whether the op of key `op` (`Op`, or `domain::Op`) exists at `opset` per the registry (an
/// op outside the default domain exists from its first version of its own domain on).
pub fn exists_at(op: &str, opset: i64) -> bool {
    Registry::global()
        .by_key(op)
        .is_some_and(|s| s.since() <= opset && s.removed_at.is_none_or(|r| opset < r))
}

/// The recipe book.
pub struct Recipes {
    list: Vec<Box<dyn Recipe>>,
    index: HashMap<&'static str, usize>,
}

impl Recipes {
    /// Every built-in recipe.
    pub fn builtin() -> Recipes {
        let mut list: Vec<Box<dyn Recipe>> = Vec::new();
        unary::register(&mut list);
        binary::register(&mut list);
        reduce::register(&mut list);
        nn::register(&mut list);
        shape::register(&mut list);
        contrib::register(&mut list);
        Recipes::from_list(list)
    }

    /// The built-in recipes whose op exists at `opset` (the registry's first opset of the op
    /// is at most `opset`, and the op is not removed at or before it).
    pub fn for_opset(opset: i64) -> Recipes {
        let mut r = Recipes::builtin();
        r.retain(|op| exists_at(op, opset));
        r
    }

    /// A book from a list (a later recipe for the same op type replaces an earlier one).
    pub fn from_list(list: Vec<Box<dyn Recipe>>) -> Recipes {
        let mut r = Recipes {
            list: Vec::new(),
            index: HashMap::new(),
        };
        for x in list {
            r.add(x);
        }
        r
    }

    /// Adds or replaces a recipe.
    pub fn add(&mut self, recipe: Box<dyn Recipe>) {
        let op = recipe.op_type();
        match self.index.get(op) {
            Some(&i) => self.list[i] = recipe,
            None => {
                self.index.insert(op, self.list.len());
                self.list.push(recipe);
            }
        }
    }

    /// Keeps only the recipes whose op type `keep` accepts (a campaign drops the ops that no
    /// backend under test supports).
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        let list = std::mem::take(&mut self.list);
        self.index.clear();
        for r in list {
            if keep(r.op_type()) {
                self.add(r);
            }
        }
    }

    /// The recipe of an op type.
    pub fn get(&self, op_type: &str) -> Option<&dyn Recipe> {
        self.index.get(op_type).map(|&i| self.list[i].as_ref())
    }

    /// All recipes, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn Recipe> {
        self.list.iter().map(|r| r.as_ref())
    }

    /// Op types with a recipe, sorted.
    pub fn op_types(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self.list.iter().map(|r| r.op_type()).collect();
        v.sort_unstable();
        v
    }

    /// Number of recipes.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True when there is no recipe.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The recipes that can read a value of this dtype and rank.
    pub fn accepting(&self, dtype: DType, rank: usize) -> Vec<&dyn Recipe> {
        self.iter().filter(|r| r.accepts(dtype, rank)).collect()
    }

    /// The (dtype, rank) pairs `op` can output, over every input it accepts.
    pub fn output_kinds(&self, op: &str) -> Vec<(DType, usize)> {
        let Some(r) = self.get(op) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &d in GEN_DTYPES {
            for rank in 0..=MAX_RANK {
                if r.accepts(d, rank) {
                    for k in r.outputs(d, rank) {
                        if !out.contains(&k) {
                            out.push(k);
                        }
                    }
                }
            }
        }
        out
    }

    /// Whether an output of `a` can be read by `b` (some dtype and rank `a` makes is one `b`
    /// accepts).
    pub fn connectable(&self, a: &str, b: &str) -> bool {
        let Some(rb) = self.get(b) else {
            return false;
        };
        self.output_kinds(a).iter().any(|&(d, r)| rb.accepts(d, r))
    }

    /// The coverage universe of this book: its op types, and the pairs its recipes can connect.
    pub fn universe(&self) -> Result<Universe, UniverseError> {
        let ops = self.op_types();
        let kinds: HashMap<&str, Vec<(DType, usize)>> =
            ops.iter().map(|&o| (o, self.output_kinds(o))).collect();
        Universe::with_pairs(&ops, |a, b| {
            let Some(rb) = self.get(b) else {
                return false;
            };
            kinds
                .get(a)
                .is_some_and(|ks| ks.iter().any(|&(d, r)| rb.accepts(d, r)))
        })
    }
}
