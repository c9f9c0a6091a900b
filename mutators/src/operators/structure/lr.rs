//! LR (LEMON / How-Far): removes one op whose first input has its output's static type; its
//! readers read that input instead (initializers only it read go too).
use crate::ir::{Model, NodeId};
use crate::mutation::{Ctx, Family, Mutator, Outcome, commit};
use crate::operators::common::{backbone, bypass_and_remove, bypassable};
use crate::site::Site;

/// Layer removal.
pub struct LayerRemoval;

/// Picks one of `cands` (node, input, output), on the backbone with probability 0.8 when one
/// is there.
pub(super) fn pick_node(
    model: &Model,
    ctx: &mut Ctx<'_>,
    cands: &[(NodeId, String, String)],
) -> Option<(NodeId, String, String)> {
    if cands.is_empty() {
        return None;
    }
    let spine = backbone(model);
    let on: Vec<usize> = (0..cands.len())
        .filter(|&i| spine.contains(&cands[i].2))
        .collect();
    let i = if !on.is_empty() && ctx.chance(0.8) {
        on[ctx.below(on.len())]
    } else {
        ctx.below(cands.len())
    };
    Some(cands[i].clone())
}

/// Removes the picked node (node, input, output), its readers reading its input instead, as
/// operator `operator`'s mutation (summary: `removed {what}Op making out`).
pub(super) fn remove_picked(
    model: &mut Model,
    ctx: &mut Ctx<'_>,
    operator: &str,
    (id, x, out): (NodeId, String, String),
    what: &str,
) -> Outcome {
    let op = model
        .graph
        .node(id)
        .map(|n| n.op_type.clone())
        .unwrap_or_default();
    let patch = {
        let mut site = Site::new(model, ctx.rng, ctx.limits);
        bypass_and_remove(&mut site, id, &x, &out);
        site.into_patch()
    };
    commit(
        model,
        operator,
        format!("removed {what}{op} making {out}"),
        &patch,
    )
}

/// The nodes `ok` accepts that can be bypassed, as (node, input, output).
pub(super) fn bypassable_nodes(
    model: &Model,
    ok: impl Fn(&crate::ir::Node) -> bool,
) -> Vec<(NodeId, String, String)> {
    let g = &model.graph;
    g.topo_order()
        .unwrap_or_default()
        .into_iter()
        .filter(|&id| g.node(id).is_some_and(&ok))
        .filter_map(|id| bypassable(model, id).map(|(x, o)| (id, x, o)))
        .collect()
}

impl Mutator for LayerRemoval {
    fn name(&self) -> &'static str {
        "LR"
    }
    fn family(&self) -> Family {
        Family::Structure
    }
    fn description(&self) -> &'static str {
        "remove one type-preserving op and feed its readers from its input"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        if model.graph.node_count() <= 1 {
            return Outcome::Skipped("one op left".into());
        }
        let cands = bypassable_nodes(model, |_| true);
        let Some(picked) = pick_node(model, ctx, &cands) else {
            return Outcome::Skipped("no type-preserving op to remove".into());
        };
        remove_picked(model, ctx, self.name(), picked, "")
    }
}
