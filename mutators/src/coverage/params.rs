//! The parameter family: one item per bucket of every attribute spec of every op of a
//! universe, and the buckets a node covers (the attributes it sets, and the defaults of those
//! it leaves out).
use super::universe::Universe;
use mutagraph_ir::Node;
use mutagraph_ir::registry::{AttrSpec, OpSpec};

/// Marks an attribute spec without parameter items (see [`Universe::params_at_opset`]).
pub(super) const NO_PARAMS: usize = usize::MAX;

/// A parameter item: (op, attr spec index, bucket).
pub(super) type ParamItem = (u32, u16, u8);

/// Per op, per attr spec: the id of its first bucket ([`NO_PARAMS`] for a spec `keep` leaves
/// out); and per param id: its item.
pub(super) fn param_table(
    ops: &[&'static OpSpec],
    keep: impl Fn(&AttrSpec) -> bool,
) -> (Vec<Vec<usize>>, Vec<ParamItem>) {
    let mut attr_offsets = Vec::with_capacity(ops.len());
    let mut params = Vec::new();
    for (io, s) in ops.iter().enumerate() {
        let mut offs = Vec::with_capacity(s.attrs.len());
        for (k, a) in s.attrs.iter().enumerate() {
            if !keep(a) {
                offs.push(NO_PARAMS);
                continue;
            }
            offs.push(params.len());
            for b in 0..a.buckets.len() {
                params.push((io as u32, k as u16, b as u8));
            }
        }
        attr_offsets.push(offs);
    }
    (attr_offsets, params)
}

/// The parameter buckets node `n` of op `spec` covers at `opset`, as (attr spec index,
/// bucket): first those of the attributes it sets (read by the spec that exists at `opset`),
/// in the node's order, then those of the defaults of the specs existing at `opset` that it
/// leaves out, in the op's order (the library runs the default's code path).
pub(crate) fn node_buckets(spec: &OpSpec, n: &Node, opset: i64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for a in &n.attributes {
        let Some(k) = spec
            .attr_spec_at(&a.name, opset)
            .and_then(|s| spec.attrs.iter().position(|x| std::ptr::eq(x, s)))
        else {
            continue;
        };
        if let Some(b) = spec.attrs[k].buckets.bucket_of(&a.value) {
            out.push((k, b));
        }
    }
    for (k, s) in spec.attrs.iter().enumerate() {
        if !s.exists_at(opset) || n.attributes.iter().any(|a| a.name == s.name) {
            continue;
        }
        if let Some(b) = s.default.as_ref().and_then(|v| s.buckets.bucket_of(v)) {
            out.push((k, b));
        }
    }
    out
}

impl Universe {
    /// The same universe whose parameter family only has the attribute versions that exist at
    /// `opset` (a campaign over seeds of one opset can reach no other version's buckets).
    pub fn params_at_opset(mut self, opset: i64) -> Universe {
        let (attr_offsets, params) = param_table(&self.ops, |a| a.exists_at(opset));
        self.attr_offsets = attr_offsets;
        self.params = params;
        self.params_opset = Some(opset);
        self
    }

    /// The saved key of a parameter item: `Op.attr@since#bucket`.
    pub(super) fn param_key(&self, id: usize) -> String {
        let (op, k, b) = self.params[id];
        let s = self.ops[op as usize];
        let a = &s.attrs[k as usize];
        format!("{}.{}@{}#{}", s.key, a.name, a.since, b)
    }

    /// A readable label of a parameter item: `Op.attr=bucket`.
    pub fn param_label(&self, id: usize) -> String {
        let (op, k, b) = self.params[id];
        let s = self.ops[op as usize];
        let a = &s.attrs[k as usize];
        let label = a.buckets.labels().swap_remove(b as usize);
        format!("{}.{}={}", s.key, a.name, label)
    }
}
