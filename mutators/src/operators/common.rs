//! What several operators need: the backbone of a model, candidate values and weights.
use crate::ir::types::TensorType;
use crate::ir::{DType, Model, NodeId};
use crate::mutation::Ctx;
use std::collections::HashMap;

/// Node output values on the model's backbone: the longest input-to-output path (counted in
/// ops), in order. How-Far (finding 10) reports that mutating the backbone rather than side
/// branches gives larger inconsistencies, so operators pick backbone sites first.
pub fn backbone(model: &Model) -> Vec<String> {
    let g = &model.graph;
    let Ok(order) = g.topo_order() else {
        return Vec::new();
    };
    let producers = g.producers();
    // Longest path (in ops) ending at each node, and the predecessor on it.
    let mut best: HashMap<NodeId, (usize, Option<NodeId>)> = HashMap::new();
    for &id in &order {
        let n = g.node(id).unwrap();
        let mut here = (1, None);
        for i in n.present_inputs() {
            if let Some(&(p, _)) = producers.get(i)
                && let Some(&(len, _)) = best.get(&p)
                && len + 1 > here.0
            {
                here = (len + 1, Some(p));
            }
        }
        best.insert(id, here);
    }
    // End at the producer of a graph output with the longest path.
    let end = g
        .outputs
        .iter()
        .filter_map(|o| producers.get(o.name.as_deref()?).map(|&(p, _)| p))
        .max_by_key(|p| (best[p].0, std::cmp::Reverse(p.0)));
    let mut path = Vec::new();
    let mut cur = end;
    while let Some(id) = cur {
        path.push(id);
        cur = best[&id].1;
    }
    path.reverse();
    path.iter()
        .filter_map(|&id| g.node(id)?.outputs.first().cloned())
        .filter(|o| !o.is_empty())
        .collect()
}

/// Node outputs (main graph) whose type is a tensor of known dtype and static shape.
pub fn static_values(model: &Model) -> Vec<(String, TensorType)> {
    let g = &model.graph;
    let mut v = Vec::new();
    for id in g.topo_order().unwrap_or_default() {
        for o in &g.node(id).unwrap().outputs {
            if o.is_empty() {
                continue;
            }
            if let Some(t) = g.value_type(o).tensor()
                && t.dtype.is_known()
                && t.static_dims().is_some()
            {
                v.push((o.clone(), t.clone()));
            }
        }
    }
    v
}

/// A value to mutate at: with probability 0.8 one on the backbone (when the backbone has one
/// that `ok` accepts), otherwise any accepted static value.
pub fn pick_value(
    model: &Model,
    ctx: &mut Ctx<'_>,
    ok: impl Fn(&str, &TensorType) -> bool,
) -> Option<(String, TensorType)> {
    let all: Vec<(String, TensorType)> = static_values(model)
        .into_iter()
        .filter(|(n, t)| ok(n, t))
        .collect();
    if all.is_empty() {
        return None;
    }
    if ctx.chance(0.8) {
        let spine = backbone(model);
        let on: Vec<&(String, TensorType)> =
            all.iter().filter(|(n, _)| spine.contains(n)).collect();
        if !on.is_empty() {
            return Some(on[ctx.below(on.len())].clone());
        }
    }
    Some(all[ctx.below(all.len())].clone())
}

/// Float initializers read by ops (the weights of the model), as (initializer, reader node).
pub fn weights(model: &Model) -> Vec<(String, NodeId)> {
    let g = &model.graph;
    let mut v = Vec::new();
    for n in g.nodes() {
        for i in n.present_inputs() {
            if let Some(t) = g.initializers.get(i) {
                let d = DType::from_code(t.data_type.unwrap_or(0));
                let numel: i64 = t.dims.iter().product();
                if d.is_float() && numel > 1 && !v.iter().any(|(w, _)| w == i) {
                    v.push((i.to_string(), n.id));
                }
            }
        }
    }
    v
}
