//! The passes of the search (see the module documentation of [`super`]).
use super::Search;
use super::candidate::{
    Invalid, OutputRule, captured, carve, finalize, forget_declared_shapes, reads, topo,
};
use crate::ir::Model;
use crate::ir::graph::NodeId;
use crate::ir::tensor::{self, TensorExt};
use crate::ir::types::{Dim, TensorType, ValueType};
use std::collections::{BTreeSet, HashSet};

/// Splits `len` items into `n` contiguous chunks of near-equal size (as ranges).
fn chunks(len: usize, n: usize) -> Vec<std::ops::Range<usize>> {
    let n = n.clamp(1, len.max(1));
    (0..n).map(|i| (i * len / n)..((i + 1) * len / n)).collect()
}

/// Builds the candidate keeping a subset of some items of the current model.
type Build<T> = fn(&Search<'_>, &[T]) -> Result<Model, Invalid>;
/// The items of the current model after a candidate was accepted.
type Items<T> = fn(&Search<'_>) -> Vec<T>;

/// Makes the model with input dims of size `from` (as the caller selects them) set to `to`:
/// `(model, from, to)`; `None` when nothing changes.
type Reshaper<'a> = dyn Fn(&Model, i64, i64) -> Option<Result<Model, Invalid>> + 'a;

/// Values read by some node (inputs or subgraph captures) or output by the graph.
fn used_values(m: &Model) -> HashSet<String> {
    let mut used: HashSet<String> = m.graph.nodes().flat_map(reads).collect();
    used.extend(m.graph.outputs.iter().filter_map(|o| o.name.clone()));
    used
}

/// A tensor type fully described up to symbolic dims (two such types that are equal describe
/// values of the same shape).
fn definite(t: &ValueType) -> bool {
    match t {
        ValueType::Tensor(tt) => {
            tt.dtype.is_known()
                && tt
                    .shape
                    .as_ref()
                    .is_some_and(|s| s.iter().all(|d| *d != Dim::Unknown))
        }
        _ => false,
    }
}

/// The model with every known dim of the real inputs mapped by `f(input, axis, dim)` (not yet
/// finalized); `None` when nothing changes.
fn with_input_dims(
    m: &Model,
    f: &dyn Fn(&str, usize, i64) -> i64,
) -> Option<Result<Model, Invalid>> {
    let mut m = m.clone();
    let mut changed = false;
    let inits: HashSet<String> = m.graph.initializers.keys().cloned().collect();
    for v in m.graph.inputs.iter_mut() {
        let name = v.name.clone().unwrap_or_default();
        if inits.contains(&name) {
            continue;
        }
        let Some(ValueType::Tensor(t)) = v.r#type.as_ref().map(ValueType::from_proto) else {
            continue;
        };
        let Some(shape) = &t.shape else { continue };
        let new: Vec<Dim> = shape
            .iter()
            .enumerate()
            .map(|(axis, d)| match d {
                Dim::Known(x) => Dim::Known(f(&name, axis, *x)),
                other => other.clone(),
            })
            .collect();
        if new != *shape {
            changed = true;
            v.r#type = Some(
                ValueType::Tensor(TensorType {
                    dtype: t.dtype,
                    shape: Some(new),
                })
                .to_proto(),
            );
        }
    }
    if !changed {
        return None;
    }
    Some(forget_declared_shapes(&mut m).map(|()| m))
}

/// Known dims of the real inputs: (input name, axis, size).
fn input_dims(m: &Model) -> Vec<(String, usize, i64)> {
    let mut out = Vec::new();
    for v in m.graph.real_inputs() {
        let Some(ValueType::Tensor(t)) = v.r#type.as_ref().map(ValueType::from_proto) else {
            continue;
        };
        for (axis, d) in t.shape.iter().flatten().enumerate() {
            if let Dim::Known(x) = d {
                out.push((v.name.clone().unwrap_or_default(), axis, *x));
            }
        }
    }
    out
}

/// The size of one input dim of the current model.
fn dim_of(m: &Model, input: &str, axis: usize) -> Option<i64> {
    input_dims(m)
        .into_iter()
        .find(|(n, a, _)| n == input && *a == axis)
        .map(|(_, _, d)| d)
}

/// `m` with the named float initializers filled with `value`.
fn filled(m: &Model, names: &[String], value: f64) -> Model {
    let mut m = m.clone();
    for n in names {
        if let Some(t) = m.graph.initializers.get(n) {
            let count = t.num_elements().max(0) as usize;
            let new = tensor::from_f64s(n, t.dtype(), &t.dims, &vec![value; count]);
            m.graph.initializers.insert(n.clone(), new);
        }
    }
    m
}

impl Search<'_> {
    /// Complement-based delta debugging over `items` (kept in the order given): removes
    /// halves, then quarters, … down to single items, resuming after the last removal point;
    /// with two chunks the complements are the subsets, as in classic ddmin.
    fn ddmin<T: Clone>(&mut self, mut items: Vec<T>, build: Build<T>, refresh: Items<T>) {
        let mut n = 2;
        let mut start = 0;
        while items.len() >= 2 && self.stop.is_none() {
            let parts = chunks(items.len(), n);
            let mut removed = false;
            for j in 0..parts.len() {
                let i = (start + j) % parts.len();
                let kept: Vec<T> = items
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| !parts[i].contains(k))
                    .map(|(_, t)| t.clone())
                    .collect();
                let cand = build(self, &kept);
                if self.try_candidate(cand) {
                    items = refresh(self);
                    n = (parts.len() - 1).max(2);
                    start = i;
                    removed = true;
                    break;
                }
                if self.stop.is_some() {
                    return;
                }
            }
            if !removed {
                if parts.len() >= items.len() {
                    break;
                }
                n = (parts.len() * 2).min(items.len());
                start = 0;
            }
        }
    }

    /// Dead code: nodes no graph output depends on are dropped by every candidate; if the
    /// model without them is not interesting, their unread outputs become graph outputs so
    /// that later candidates keep them.
    pub(super) fn dead_code(&mut self) {
        let all: BTreeSet<NodeId> = self.cur.graph.node_ids().into_iter().collect();
        let Ok(pruned) = carve(&self.cur, &self.consts, &all, &[], &OutputRule::Original) else {
            return;
        };
        if pruned.graph.node_count() == self.cur.graph.node_count()
            || self.try_candidate(Ok(pruned.clone()))
            || self.stop.is_some()
        {
            return;
        }
        let used = used_values(&self.cur);
        let live: HashSet<NodeId> = pruned.graph.node_ids().into_iter().collect();
        let mut outs: Vec<String> = Vec::new();
        for o in &self.cur.graph.outputs {
            if let Some(n) = &o.name
                && !outs.contains(n)
            {
                outs.push(n.clone());
            }
        }
        for id in topo(&self.cur).into_iter().filter(|id| !live.contains(id)) {
            if let Some(n) = self.cur.graph.node(id) {
                outs.extend(
                    n.outputs
                        .iter()
                        .filter(|o| !o.is_empty() && !used.contains(o.as_str()))
                        .cloned(),
                );
            }
        }
        let cand = carve(
            &self.cur,
            &self.consts,
            &all,
            &[],
            &OutputRule::Explicit(outs),
        );
        self.try_candidate(cand);
    }

    /// Focus: the node producing `value` alone, then with one and two hops of producers.
    pub(super) fn focus(&mut self, value: &str) {
        let g = &self.cur.graph;
        let Some(p) = g.producer(value) else {
            return;
        };
        let Some(node) = g.node(p) else { return };
        let used = used_values(&self.cur);
        let outs: Vec<String> = node
            .outputs
            .iter()
            .filter(|o| !o.is_empty() && (o.as_str() == value || used.contains(o.as_str())))
            .cloned()
            .collect();
        let producers = g.producers();
        let mut sets: Vec<BTreeSet<NodeId>> = vec![BTreeSet::from([p])];
        for _hop in 1..=2 {
            let last = &sets[sets.len() - 1];
            let grown: BTreeSet<NodeId> = last
                .iter()
                .filter_map(|&id| g.node(id))
                .flat_map(reads)
                .filter_map(|r| producers.get(r.as_str()).map(|&(id, _)| id))
                .chain(last.iter().copied())
                .collect();
            if grown.len() == last.len() {
                break;
            }
            sets.push(grown);
        }
        for set in sets {
            let cand = carve(
                &self.cur,
                &self.consts,
                &set,
                &[],
                &OutputRule::Explicit(outs.clone()),
            );
            if self.try_candidate(cand) || self.stop.is_some() {
                return;
            }
        }
    }

    /// Outputs: ddmin over the graph outputs (dead code removed with each).
    pub(super) fn outputs(&mut self) {
        fn names(s: &Search<'_>) -> Vec<String> {
            let mut v: Vec<String> = Vec::new();
            for o in &s.cur.graph.outputs {
                if let Some(n) = &o.name
                    && !v.contains(n)
                {
                    v.push(n.clone());
                }
            }
            v
        }
        fn build(s: &Search<'_>, kept: &[String]) -> Result<Model, Invalid> {
            let all: BTreeSet<NodeId> = s.cur.graph.node_ids().into_iter().collect();
            carve(
                &s.cur,
                &s.consts,
                &all,
                &[],
                &OutputRule::Explicit(kept.to_vec()),
            )
        }
        let items = names(self);
        self.ddmin(items, build, names);
    }

    /// Cut: bisection for the shortest interesting prefix in topological order (the cut
    /// suffix's inputs become outputs).
    pub(super) fn cut_suffix(&mut self) {
        let order = topo(&self.cur);
        if order.len() < 4 {
            return;
        }
        // Prefix `hi` is interesting (the whole model); the empty prefix is not.
        let (mut lo, mut hi) = (0, order.len());
        while hi - lo > 1 && self.stop.is_none() {
            let mid = (lo + hi) / 2;
            let keep: BTreeSet<NodeId> = order[..mid].iter().copied().collect();
            let cand = carve(&self.cur, &self.consts, &keep, &[], &OutputRule::Frontier);
            if self.try_candidate(cand) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
    }

    /// Cut: bisection for the shortest interesting suffix in topological order (values the
    /// cut prefix produced become inputs or constants).
    pub(super) fn cut_prefix(&mut self) {
        let order = topo(&self.cur);
        if order.len() < 4 {
            return;
        }
        let (mut lo, mut hi) = (0, order.len());
        while hi - lo > 1 && self.stop.is_none() {
            let mid = (lo + hi) / 2;
            let keep: BTreeSet<NodeId> = order[mid..].iter().copied().collect();
            let cand = carve(&self.cur, &self.consts, &keep, &[], &OutputRule::Frontier);
            if self.try_candidate(cand) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
    }

    /// Cut: ddmin over the nodes in topological order.
    pub(super) fn cut_ddmin(&mut self) {
        fn build(s: &Search<'_>, kept: &[NodeId]) -> Result<Model, Invalid> {
            let keep: BTreeSet<NodeId> = kept.iter().copied().collect();
            carve(&s.cur, &s.consts, &keep, &[], &OutputRule::Frontier)
        }
        fn items(s: &Search<'_>) -> Vec<NodeId> {
            topo(&s.cur)
        }
        let all = items(self);
        self.ddmin(all, build, items);
    }

    /// Bypass: a node whose one used output has the type of one of its inputs is removed and
    /// its readers read that input (later nodes first).
    pub(super) fn bypass(&mut self) {
        for id in topo(&self.cur).into_iter().rev() {
            if self.stop.is_some() {
                return;
            }
            let g = &self.cur.graph;
            let Some(n) = g.node(id) else { continue };
            let used = used_values(&self.cur);
            let outs: Vec<&String> = n
                .outputs
                .iter()
                .filter(|o| !o.is_empty() && used.contains(o.as_str()))
                .collect();
            let [o] = outs.as_slice() else { continue };
            let o = (*o).clone();
            let ty = g.value_type(&o);
            if !definite(&ty) || captured(g).contains(&o) {
                continue;
            }
            let mut ins: Vec<String> = Vec::new();
            for i in n.present_inputs() {
                if g.value_type(i) == ty && !ins.iter().any(|x| x == i) {
                    ins.push(i.to_string());
                }
            }
            let keep: BTreeSet<NodeId> = g.node_ids().into_iter().filter(|&k| k != id).collect();
            for i in ins {
                let renames = [(o.clone(), i)];
                let cand = carve(
                    &self.cur,
                    &self.consts,
                    &keep,
                    &renames,
                    &OutputRule::Original,
                );
                if self.try_candidate(cand) {
                    break;
                }
            }
        }
    }

    /// Shrink shapes: input dims > 1 become 1, else half (repeatedly while that is kept); all
    /// dims of one size together first (dims that must agree), then one dim at a time.
    pub(super) fn shrink_shapes(&mut self) {
        let sizes: BTreeSet<i64> = input_dims(&self.cur)
            .into_iter()
            .map(|(_, _, d)| d)
            .filter(|&d| d > 1)
            .collect();
        for d in sizes.into_iter().rev() {
            self.shrink_loop(d, &|m, from, to| {
                with_input_dims(m, &|_, _, x| if x == from { to } else { x })
            });
        }
        for (input, axis, _) in input_dims(&self.cur) {
            let Some(d) = dim_of(&self.cur, &input, axis) else {
                continue;
            };
            self.shrink_loop(d, &|m, _, to| {
                with_input_dims(m, &|n, a, x| if n == input && a == axis { to } else { x })
            });
        }
    }

    /// Tries size 1 then halves from `d` while the halved model is kept.
    fn shrink_loop(&mut self, d: i64, make: &Reshaper<'_>) {
        if d <= 1 || self.stop.is_some() {
            return;
        }
        if let Some(m) = make(&self.cur, d, 1)
            && self.try_candidate(m.and_then(|m| finalize(m, &self.cur)))
        {
            return;
        }
        let mut d = d;
        while d / 2 > 1 && self.stop.is_none() {
            let Some(m) = make(&self.cur, d, d / 2) else {
                return;
            };
            if !self.try_candidate(m.and_then(|m| finalize(m, &self.cur))) {
                return;
            }
            d /= 2;
        }
    }

    /// Simplify weights: float initializers filled with one value (1.0, else 0.5), all at
    /// once first, then one at a time.
    pub(super) fn simplify_weights(&mut self) {
        let names: Vec<String> = self
            .cur
            .graph
            .initializers
            .iter()
            .filter(|(_, t)| {
                t.dtype().is_float()
                    && !t.is_external()
                    && t.num_elements() > 0
                    && t.to_f64s()
                        .is_ok_and(|v| v.iter().any(|x| x.to_bits() != v[0].to_bits()))
            })
            .map(|(k, _)| k.clone())
            .collect();
        if names.is_empty() {
            return;
        }
        for v in [1.0, 0.5] {
            let cand = finalize(filled(&self.cur, &names, v), &self.cur);
            if self.try_candidate(cand) || self.stop.is_some() {
                return;
            }
        }
        if names.len() == 1 {
            return;
        }
        for n in &names {
            for v in [1.0, 0.5] {
                let cand = finalize(filled(&self.cur, std::slice::from_ref(n), v), &self.cur);
                if self.try_candidate(cand) || self.stop.is_some() {
                    break;
                }
            }
        }
    }
}
