//! The op registry: one [`OpSpec`] per operator.
//!
//! A spec is a type-and-shape transfer function plus its constraints, in the manner of NNSmith:
//! arity (ports), attribute schema (kinds, defaults, legal values), dtype constraints, the
//! inference function, extra validity constraints on inputs (`requires`), an optional constant
//! folder used for shape-data propagation, a bucketed parameter space for coverage, and the
//! op's [`Traits`] (discrete result, NaN or Inf handling left open, reshaping, activation),
//! which the oracles and mutators read instead of keeping lists of op names.
//!
//! One room per part: [`OpSpec`] (`op_spec.rs`), [`AttrSpec`] (`attr_spec.rs`), [`Traits`]
//! (`traits.rs`), [`Buckets`] (`buckets.rs`), [`InferCtx`] (`infer_ctx.rs`), the per-opset dtypes of the ONNX schemas
//! (`type_table.rs`); the [`Registry`] itself, the lookup of specs by op, is here.
mod attr_spec;
mod buckets;
mod infer_ctx;
mod op_spec;
mod traits;
mod type_table;

pub use attr_spec::{AttrError, AttrSpec, Legal};
pub use buckets::Buckets;
pub use infer_ctx::{FoldFn, InferCtx, InferError, InferFn, RequiresFn, owned, owned_types};
pub use op_spec::{Category, OpSpec, Port, PortKind};
pub use traits::Traits;

use crate::graph::Node;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The registry's tables of op names are keyed by our own names: hashed with FNV-1a.
pub(crate) use crate::hash::FnvMap;

/// The domain and op type of an op key (`Op`, or `domain::Op` outside the default domain).
pub fn split_key(key: &str) -> (&str, &str) {
    key.rsplit_once("::").unwrap_or(("", key))
}

/// The op key of `op_type` in `domain`: `Op` in the default domain (`""` or `ai.onnx`), else
/// `domain::Op`.
pub fn op_key(domain: &str, op_type: &str) -> String {
    if domain.is_empty() || domain == "ai.onnx" {
        op_type.to_string()
    } else {
        format!("{domain}::{op_type}")
    }
}

/// All op specs, by (domain, op_type).
pub struct Registry {
    /// The default domain's specs, by op type.
    default: FnvMap<&'static str, OpSpec>,
    /// The other domains' specs, by domain and op type.
    specs: BTreeMap<&'static str, BTreeMap<&'static str, OpSpec>>,
}

impl Registry {
    /// An empty registry.
    pub fn empty() -> Registry {
        Registry {
            specs: BTreeMap::new(),
            default: FnvMap::default(),
        }
    }

    /// The registry of every op this build knows.
    pub fn global() -> &'static Registry {
        static R: OnceLock<Registry> = OnceLock::new();
        R.get_or_init(|| {
            let mut r = Registry::empty();
            crate::ops::register_all(&mut r);
            r
        })
    }

    /// Adds a spec (replacing one of the same name).
    pub fn add(&mut self, spec: OpSpec) {
        if spec.domain.is_empty() || spec.domain == "ai.onnx" {
            self.default.insert(spec.op_type, spec);
        } else {
            self.specs
                .entry(spec.domain)
                .or_default()
                .insert(spec.op_type, spec);
        }
    }

    /// Whether the default-domain op `op_type` has every trait of `t` (false for an op the
    /// registry does not know).
    pub fn has(&self, op_type: &str, t: Traits) -> bool {
        self.default.get(op_type).is_some_and(|s| s.has(t))
    }

    /// Whether the op of `n` (in its own domain) has every trait of `t` (false for an op the
    /// registry does not know).
    pub fn node_has(&self, n: &Node, t: Traits) -> bool {
        self.for_node(n).is_some_and(|s| s.has(t))
    }

    /// The default-domain op types with every trait of `t`, sorted by name.
    pub fn with_traits(&self, t: Traits) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self
            .default
            .values()
            .filter(|s| s.has(t))
            .map(|s| s.op_type)
            .collect();
        v.sort_unstable();
        v
    }

    /// The spec of `op_type` in `domain` (`""` or `"ai.onnx"` = default domain).
    pub fn get(&self, domain: &str, op_type: &str) -> Option<&OpSpec> {
        match domain {
            "" | "ai.onnx" => self.default.get(op_type),
            d => self.specs.get(d)?.get(op_type),
        }
    }

    /// The spec of an op key: `Op` in the default domain, or `domain::Op` (the key that
    /// recipes, coverage and backend capabilities name ops by).
    pub fn by_key(&self, key: &str) -> Option<&OpSpec> {
        let (domain, op) = split_key(key);
        self.get(domain, op)
    }

    /// The spec for a node.
    pub fn for_node(&self, n: &Node) -> Option<&OpSpec> {
        self.get(n.domain(), &n.op_type)
    }

    /// All specs, sorted by domain and name.
    pub fn iter(&self) -> impl Iterator<Item = &OpSpec> {
        let mut default: Vec<&OpSpec> = self.default.values().collect();
        default.sort_by_key(|s| s.op_type);
        default
            .into_iter()
            .chain(self.specs.values().flat_map(|m| m.values()))
    }

    /// Number of specs.
    pub fn len(&self) -> usize {
        self.default.len() + self.specs.values().map(|m| m.len()).sum::<usize>()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.default.is_empty() && self.specs.is_empty()
    }
}
