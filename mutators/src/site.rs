//! [`Site`]: builds an edit of an existing model one op at a time, with fresh value names,
//! constants, and the registry's type-and-shape transfer run on each new op as it is added
//! (so an op that would make the model invalid is refused before anything is applied).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::attr::AttrValue;
use crate::ir::onnx_ops::{self, OpStatus};
use crate::ir::patch::{Patch, PatchOp};
use crate::ir::registry::{InferCtx, Registry};
use crate::ir::tensor::{self, Tensor};
use crate::ir::types::{Dim, TensorType, ValueType};
use crate::ir::{DType, Model, Node, pb};
use crate::mutation::Limits;
use std::collections::{HashMap, HashSet};

/// A pending edit of `model`.
pub struct Site<'m> {
    /// The model being edited (unchanged until [`Site::commit`]).
    pub model: &'m Model,
    uses: Vec<PatchOp>,
    ops: Vec<PatchOp>,
    names: HashSet<String>,
    tag: u32,
    counter: u32,
    types: HashMap<String, ValueType>,
    consts: HashMap<String, Tensor>,
    opset: i64,
    max_elements: i64,
    max_constant_elements: i64,
    added_nodes: usize,
    /// A constant asked for beyond the size limit (it was not made): every later node is
    /// refused with this error, so the mutation fails instead of the process.
    oversize: Option<BuildError>,
}

/// Every value name used in a graph (inputs, initializers, node outputs, outputs).
fn used_names(model: &Model) -> HashSet<String> {
    let g = &model.graph;
    let mut s: HashSet<String> = g.initializers.keys().cloned().collect();
    for v in g.inputs.iter().chain(&g.outputs) {
        if let Some(n) = &v.name {
            s.insert(n.clone());
        }
    }
    for n in g.nodes() {
        for o in &n.outputs {
            s.insert(o.clone());
        }
        if let Some(name) = &n.name {
            s.insert(name.clone());
        }
    }
    s
}

/// A graph input / output declaration of a tensor type.
pub fn value_info(name: &str, t: &TensorType) -> pb::ValueInfoProto {
    pb::ValueInfoProto {
        name: Some(name.to_string()),
        r#type: Some(ValueType::Tensor(t.clone()).to_proto()),
        ..Default::default()
    }
}

impl<'m> Site<'m> {
    /// A new edit of `model`; fresh names carry a random tag so that names made by different
    /// mutations of one lineage never collide.
    pub fn new(model: &'m Model, rng: &mut SplitMix64, limits: &Limits) -> Site<'m> {
        Site {
            model,
            uses: Vec::new(),
            ops: Vec::new(),
            names: used_names(model),
            tag: (rng.next_u64() & 0xffff_ffff) as u32,
            counter: 0,
            types: HashMap::new(),
            consts: HashMap::new(),
            opset: model.default_opset(),
            max_elements: limits.max_elements,
            max_constant_elements: limits.max_constant_elements,
            added_nodes: 0,
            oversize: None,
        }
    }

    /// The model's default-domain opset.
    pub fn opset(&self) -> i64 {
        self.opset
    }

    /// Number of nodes added so far.
    pub fn added_nodes(&self) -> usize {
        self.added_nodes
    }

    /// A value name not used in the model nor in this edit.
    pub fn fresh(&mut self, hint: &str) -> String {
        loop {
            self.counter += 1;
            let name = format!("{hint}_m{:08x}_{}", self.tag, self.counter);
            if self.names.insert(name.clone()) {
                return name;
            }
        }
    }

    /// The type of a value of the model or of this edit.
    pub fn value_type(&self, v: &str) -> ValueType {
        match self.types.get(v) {
            Some(t) => t.clone(),
            None => self.model.graph.value_type(v),
        }
    }

    /// The tensor type of a value, if it is a tensor of known dtype and fully static shape.
    pub fn static_type(&self, v: &str) -> Option<TensorType> {
        let t = self.value_type(v).tensor()?.clone();
        (t.dtype.is_known() && t.static_dims().is_some()).then_some(t)
    }

    /// The constant value of a value (an initializer, or a constant made by this edit).
    pub fn const_value(&self, v: &str) -> Option<&Tensor> {
        self.consts
            .get(v)
            .or_else(|| self.model.graph.initializers.get(v))
    }

    /// Adds a constant (initializer) and returns its name.
    pub fn constant(&mut self, hint: &str, t: Tensor) -> String {
        let name = self.fresh(hint);
        let mut t = t;
        t.name = Some(name.clone());
        let dims: Vec<Dim> = t.dims.iter().map(|&d| Dim::Known(d)).collect();
        let dtype = DType::from_code(t.data_type.unwrap_or(0));
        self.types
            .insert(name.clone(), ValueType::t(dtype, Some(dims)));
        self.consts.insert(name.clone(), t.clone());
        self.ops.push(PatchOp::AddInitializer(t));
        name
    }

    /// A constant of `dtype` from f64 values (cast as the dtype requires).
    pub fn constant_f64s(
        &mut self,
        hint: &str,
        dtype: DType,
        dims: &[i64],
        values: &[f64],
    ) -> String {
        self.constant(hint, tensor::from_f64s("", dtype, dims, values))
    }

    /// An i64 constant (shapes, axes, indices).
    pub fn constant_i64s(&mut self, hint: &str, dims: &[i64], values: &[i64]) -> String {
        self.constant(hint, tensor::from_i64s("", dims, values))
    }

    /// A random constant of `dtype` and shape `dims`, values uniform in `[lo, hi)` (rounded for
    /// integer dtypes, `x > 0.5 (hi-lo)` for bool).
    pub fn random_constant(
        &mut self,
        hint: &str,
        dtype: DType,
        dims: &[i64],
        lo: f64,
        hi: f64,
        rng: &mut SplitMix64,
    ) -> String {
        // Dims come from the model (a seed may declare any size): the count is checked before
        // anything is allocated.
        let n = dims
            .iter()
            .try_fold(1i64, |a, &d| a.checked_mul(d.max(0)))
            .filter(|&n| n <= self.max_constant_elements);
        let Some(n) = n else {
            self.oversize
                .get_or_insert_with(|| BuildError::ConstantTooLarge {
                    hint: hint.to_string(),
                    dims: dims.to_vec(),
                    limit: self.max_constant_elements,
                });
            return self.constant_f64s(hint, dtype, &[], &[0.0]);
        };
        let vals: Vec<f64> = (0..n)
            .map(|_| {
                let x = rng.range(lo, hi);
                if dtype == DType::Bool {
                    if x > (lo + hi) / 2.0 { 1.0 } else { 0.0 }
                } else if dtype.is_int() {
                    x.floor()
                } else {
                    x
                }
            })
            .collect();
        self.constant_f64s(hint, dtype, dims, &vals)
    }

    /// Checks `node` with the registry (opset, attributes, `requires`, `infer`) and the size
    /// limit against the values of the model and of this edit, without adding it; returns the
    /// types of its outputs and their folded constant values, if any.
    #[allow(clippy::type_complexity)]
    fn infer_node(&self, node: &Node) -> Result<(Vec<ValueType>, Option<Vec<Tensor>>), BuildError> {
        if let Some(why) = &self.oversize {
            return Err(why.clone());
        }
        let op = || node.op_type.clone();
        let reg = Registry::global();
        let spec = reg
            .for_node(node)
            .ok_or_else(|| BuildError::UnknownOp { op: op() })?;
        // ONNX Runtime's own schemas in the default domain (`onnx_ops::ort_default`) are
        // admitted in a seed, never built: mutants keep to ONNX's rules.
        if let OpStatus::OrtSchema(s) = onnx_ops::status(node.domain(), &node.op_type, self.opset) {
            return Err(BuildError::NotApplicable(format!(
                "{} at opset {} is ONNX Runtime's own schema in the default domain (since {}), \
                 not ONNX's: mutants never get one",
                s.op, self.opset, s.since
            )));
        }
        if spec.since() > self.opset {
            return Err(BuildError::OpsetTooOld {
                op: op(),
                since: spec.since(),
                opset: self.opset,
            });
        }
        for a in &node.attributes {
            match spec.attr_spec_at(&a.name, self.opset) {
                Some(s) => s.check(&a.value).map_err(|e| BuildError::BadAttribute {
                    op: op(),
                    attr: a.name.clone(),
                    reason: e.to_string(),
                })?,
                None => {
                    return Err(BuildError::UnknownAttribute {
                        op: op(),
                        attr: a.name.clone(),
                    });
                }
            }
        }
        let inputs: Vec<Option<ValueType>> = node
            .inputs
            .iter()
            .map(|i| (!i.is_empty()).then(|| self.value_type(i)))
            .collect();
        let consts: Vec<Option<Tensor>> = node
            .inputs
            .iter()
            .map(|i| self.const_value(i).cloned())
            .collect();
        // Element types the op's schema at this opset allows (valid by construction: a recipe
        // that picks a type the model's opset does not allow is refused here).
        for (slot, t) in inputs.iter().enumerate() {
            let Some(ValueType::Tensor(t)) = t else {
                continue;
            };
            if let Some(allowed) = spec.input_allowed_at(slot, self.opset)
                && t.dtype.is_known()
                && !allowed.contains(&t.dtype)
            {
                return Err(BuildError::InputDtype {
                    op: op(),
                    slot,
                    dtype: t.dtype,
                    opset: self.opset,
                });
            }
        }
        let ctx = InferCtx::new(node, self.opset, inputs, consts);
        if let Some(req) = spec.requires {
            req(&ctx).map_err(|e| BuildError::Unsatisfied {
                op: op(),
                reason: e.to_string(),
            })?;
        }
        // What ONNX leaves ambiguous is valid, but never generated.
        if let Some(amb) = spec.ambiguous {
            amb(&ctx).map_err(|e| BuildError::Ambiguous {
                op: op(),
                reason: e.to_string(),
            })?;
        }
        let outs = (spec.infer)(&ctx).map_err(|e| BuildError::Inference {
            op: op(),
            reason: e.to_string(),
        })?;
        for (slot, t) in outs.iter().enumerate() {
            let ValueType::Tensor(t) = t else { continue };
            if let Some(allowed) = spec.output_allowed_at(slot, self.opset)
                && t.dtype.is_known()
                && !allowed.contains(&t.dtype)
            {
                return Err(BuildError::OutputDtype {
                    op: op(),
                    slot,
                    dtype: t.dtype,
                    opset: self.opset,
                });
            }
        }
        for (o, t) in node.outputs.iter().zip(&outs) {
            if o.is_empty() {
                continue;
            }
            let Some(tt) = t.tensor() else {
                continue;
            };
            match tt.num_elements() {
                Some(n) if n > self.max_elements => {
                    return Err(BuildError::TooManyElements {
                        op: op(),
                        output: o.clone(),
                        elements: n,
                        limit: self.max_elements,
                    });
                }
                _ => {}
            }
        }
        let folded = spec.fold.and_then(|f| f(&ctx));
        Ok((outs, folded))
    }

    /// The output types `node` would have here, or why the registry refuses it (nothing is
    /// added).
    pub fn check_node(&self, node: &Node) -> Result<Vec<ValueType>, BuildError> {
        self.infer_node(node).map(|(t, _)| t)
    }

    /// Adds `node` after checking it with the registry (attributes, `requires`, `infer`) and
    /// the size limit; returns the types of its outputs. On error nothing is added.
    pub fn add_node(&mut self, node: Node) -> Result<Vec<ValueType>, BuildError> {
        let (outs, folded) = self.infer_node(&node)?;
        if let Some(vals) = folded {
            for (name, t) in node.outputs.iter().zip(vals) {
                if !name.is_empty() {
                    self.consts.insert(name.clone(), t);
                }
            }
        }
        for (o, t) in node.outputs.iter().zip(&outs) {
            if !o.is_empty() {
                self.names.insert(o.clone());
                self.types.insert(o.clone(), t.clone());
            }
        }
        self.added_nodes += 1;
        self.ops.push(PatchOp::AddNode(node));
        Ok(outs)
    }

    /// Adds an op with fresh output names; returns the output names.
    pub fn op(
        &mut self,
        op_type: &str,
        inputs: &[&str],
        attrs: Vec<(&str, AttrValue)>,
        n_outputs: usize,
    ) -> Result<Vec<String>, BuildError> {
        // An op key outside the default domain (`com.microsoft::FastGelu`) names the domain.
        let (domain, op_type) = crate::ir::registry::split_key(op_type);
        let hint = op_type.to_lowercase();
        let outs: Vec<String> = (0..n_outputs).map(|_| self.fresh(&hint)).collect();
        let refs: Vec<&str> = outs.iter().map(String::as_str).collect();
        let mut node = Node::new(op_type, inputs, &refs);
        if !domain.is_empty() {
            node.domain = Some(domain.to_string());
        }
        node.name = Some(self.fresh(op_type));
        for (k, v) in attrs {
            node = node.with_attr(k, v);
        }
        self.add_node(node)?;
        Ok(outs)
    }

    /// Adds a single-output op; returns its output name.
    pub fn op1(
        &mut self,
        op_type: &str,
        inputs: &[&str],
        attrs: Vec<(&str, AttrValue)>,
    ) -> Result<String, BuildError> {
        Ok(self.op(op_type, inputs, attrs, 1)?.remove(0))
    }

    /// Makes `value` read something of type `target` (static shape): a `Cast` when dtypes
    /// differ, then, when shapes differ, flatten, slice or zero-pad to the target's element
    /// count, and reshape. Returns the adapted value (`value` itself when nothing was needed).
    pub fn adapt(&mut self, value: &str, target: &TensorType) -> Result<String, BuildError> {
        let t = self
            .static_type(value)
            .ok_or_else(|| BuildError::NoStaticType {
                value: value.to_string(),
            })?;
        let want = target.static_dims().ok_or(BuildError::TargetNotStatic)?;
        let mut v = value.to_string();
        if t.dtype != target.dtype {
            v = self.op1(
                "Cast",
                &[&v],
                vec![("to", AttrValue::Int(target.dtype.code() as i64))],
            )?;
        }
        let have = t.static_dims().unwrap_or_default();
        if have == want {
            return Ok(v);
        }
        let n_have: i64 = have.iter().product();
        let n_want: i64 = want.iter().product();
        if n_have != n_want {
            let flat = self.constant_i64s("flat", &[1], &[-1]);
            v = self.op1("Reshape", &[&v, &flat], vec![])?;
            if n_have > n_want {
                let starts = self.constant_i64s("starts", &[1], &[0]);
                let ends = self.constant_i64s("ends", &[1], &[n_want]);
                v = self.op1("Slice", &[&v, &starts, &ends], vec![])?;
            } else {
                let pads = self.constant_i64s("pads", &[2], &[0, n_want - n_have]);
                v = self.op1("Pad", &[&v, &pads], vec![])?;
            }
        }
        let shape = self.constant_i64s("shape", &[want.len() as i64], &want);
        self.op1("Reshape", &[&v, &shape], vec![])
    }

    /// Every existing reader of `old` (node inputs and graph outputs) reads `new` instead.
    /// Readers added by this edit are not affected (the rewrite is applied first).
    pub fn reroute(&mut self, old: &str, new: &str) {
        self.uses.push(PatchOp::ReplaceUses {
            old: old.to_string(),
            new: new.to_string(),
        });
    }

    /// Adds a raw patch op (removals, replacements, input rewiring).
    pub fn push(&mut self, op: PatchOp) {
        self.ops.push(op);
    }

    /// Declares `value` (of a known tensor type) a graph output.
    pub fn add_output(&mut self, value: &str) -> Result<(), BuildError> {
        let t = self
            .value_type(value)
            .tensor()
            .cloned()
            .ok_or_else(|| BuildError::NotATensor {
                value: value.to_string(),
            })?;
        self.ops.push(PatchOp::AddOutput(value_info(value, &t)));
        Ok(())
    }

    /// The patch built so far (reroutes first).
    pub fn patch(&self) -> Patch {
        Patch {
            ops: self.uses.iter().chain(&self.ops).cloned().collect(),
        }
    }

    /// The finished patch (reroutes first); apply it with [`crate::mutation::commit`].
    pub fn into_patch(self) -> Patch {
        let mut ops = self.uses;
        ops.extend(self.ops);
        Patch { ops }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::{Record, commit, replay_trace};

    /// A seed may declare a dimension of 10^12: a constant of that shape is refused without
    /// being allocated (the process used to abort on the allocation), an overflowing product
    /// too, and every node after it fails the mutation with the reason.
    #[test]
    fn a_constant_beyond_the_limit_fails_the_mutation_not_the_process() {
        let model = crate::zoo::build("lenet5").unwrap();
        let mut rng = SplitMix64::new(3);
        let limits = Limits::default();
        let order = model.graph.topo_order().unwrap();
        let first = model.graph.node(order[0]).unwrap().outputs[0].clone();
        for dims in [vec![1_000_000_000_000i64, 3], vec![i64::MAX, 4]] {
            let mut site = Site::new(&model, &mut rng, &limits);
            let c = site.random_constant("w", DType::F32, &dims, -1.0, 1.0, &mut rng);
            let err = site
                .op1("Add", &[&first, &c], vec![])
                .unwrap_err()
                .to_string();
            assert!(err.contains("over the limit"), "{err}");
            // Nothing after it is accepted either.
            assert!(site.op1("Relu", &[&first], vec![]).is_err());
        }
        // Within the limit nothing changes.
        let mut site = Site::new(&model, &mut rng, &limits);
        let c = site.random_constant("w", DType::F32, &[1], -1.0, 1.0, &mut rng);
        site.op1("Add", &[&first, &c], vec![]).unwrap();
    }

    #[test]
    fn splice_adapt_commit_and_replay() {
        let seed = crate::zoo::build("lenet5").unwrap();
        let mut model = seed.clone();
        let mut rng = SplitMix64::new(7);
        let limits = Limits::default();
        // A value on the backbone: the output of the first node in topological order.
        let order = model.graph.topo_order().unwrap();
        let first = model.graph.node(order[0]).unwrap().outputs[0].clone();
        let patch = {
            let mut site = Site::new(&model, &mut rng, &limits);
            let t = site.static_type(&first).unwrap();
            let r = site.op1("Relu", &[&first], vec![]).unwrap();
            // ArgMax changes dtype and shape; adapt brings it back to `t`.
            let a = site
                .op1("ArgMax", &[&r], vec![("axis", AttrValue::Int(1))])
                .unwrap();
            let back = site.adapt(&a, &t).unwrap();
            assert_eq!(site.static_type(&back).unwrap(), t);
            site.reroute(&first, &back);
            site.into_patch()
        };
        let before = model.graph.node_count();
        let rec = match commit(&mut model, "TEST", "relu+argmax".into(), &patch) {
            crate::mutation::Outcome::Mutated(r) => r,
            o => panic!("{o:?}"),
        };
        assert!(model.graph.node_count() > before + 2);
        crate::ir::validate::validate(&model).unwrap();
        // The record survives JSON and replays to the same model.
        let json = serde_json::to_string(&rec).unwrap();
        let back: Record = serde_json::from_str(&json).unwrap();
        let (replayed, skipped) = replay_trace(&seed, &[back], |_| true);
        assert!(skipped.is_empty());
        assert_eq!(replayed.to_bytes(), model.to_bytes());
        // Dropping it gives the seed back.
        let (dropped, _) = replay_trace(&seed, std::slice::from_ref(&rec), |_| false);
        assert_eq!(dropped.to_bytes(), seed.to_bytes());
    }

    #[test]
    fn invalid_nodes_are_refused_before_apply() {
        let model = crate::zoo::build("lenet5").unwrap();
        let mut rng = SplitMix64::new(1);
        let mut site = Site::new(&model, &mut rng, &Limits::default());
        let x = model.graph.real_inputs()[0].name.clone().unwrap();
        // Axis out of range for the input's rank.
        assert!(
            site.op1("Softmax", &[&x], vec![("axis", AttrValue::Int(9))])
                .is_err()
        );
        assert_eq!(site.added_nodes(), 0);
        assert!(site.into_patch().ops.is_empty());
    }
}
