//! LS (LEMON / How-Far): switches two adjacent type-preserving ops on a path: `x → a → b → z`
//! becomes `x → b → a → z` (each keeps its other inputs and attributes).
use super::lr::bypassable_nodes;
use crate::error::BuildError;
use crate::ir::patch::PatchOp;
use crate::ir::{Model, NodeId};
use crate::mutation::{Ctx, Family, Mutator, Outcome, commit};
use crate::operators::common::{backbone, is_graph_output};
use crate::site::Site;

/// Layer switch.
pub struct LayerSwitch;

/// Pairs (a, b) of type-preserving nodes where b alone reads a's output, once, as its first
/// input, and the two differ (in op type or attributes).
fn switchable(model: &Model) -> Vec<(NodeId, NodeId)> {
    let g = &model.graph;
    let cands = bypassable_nodes(model, |_| true);
    let mut v = Vec::new();
    for (ia, _x, y) in &cands {
        if is_graph_output(model, y) {
            continue;
        }
        let readers = g.consumers(y);
        let [ib] = readers.as_slice() else {
            continue;
        };
        let Some((_, _, _)) = cands.iter().find(|c| c.0 == *ib && c.1 == *y) else {
            continue;
        };
        let (Some(a), Some(b)) = (g.node(*ia), g.node(*ib)) else {
            continue;
        };
        if b.inputs.iter().filter(|i| *i == y).count() != 1 {
            continue;
        }
        if a.op_type == b.op_type && a.attributes == b.attributes && a.inputs[1..] == b.inputs[1..]
        {
            continue;
        }
        v.push((*ia, *ib));
    }
    v
}

impl Mutator for LayerSwitch {
    fn name(&self) -> &'static str {
        "LS"
    }
    fn family(&self) -> Family {
        Family::Structure
    }
    fn description(&self) -> &'static str {
        "switch two adjacent type-preserving ops (a → b becomes b → a)"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let mut pairs = switchable(model);
        if pairs.is_empty() {
            return Outcome::Skipped("no two adjacent type-preserving ops".into());
        }
        let spine = backbone(model);
        let g = &model.graph;
        let on_spine = |id: &NodeId| {
            g.node(*id)
                .and_then(|n| n.outputs.first())
                .is_some_and(|o| spine.contains(o))
        };
        ctx.shuffle(&mut pairs);
        if ctx.chance(0.8)
            && let Some(i) = pairs.iter().position(|(_, b)| on_spine(b))
        {
            pairs.swap(0, i);
        }
        let mut last_err = String::new();
        for (ia, ib) in pairs.into_iter().take(4) {
            let (a, b) = (g.node(ia).unwrap().clone(), g.node(ib).unwrap().clone());
            let (x, z) = (a.inputs[0].clone(), b.outputs[0].clone());
            let built = {
                let mut site = Site::new(model, ctx.rng, ctx.limits);
                let y2 = site.fresh(&b.op_type.to_lowercase());
                let z2 = site.fresh(&a.op_type.to_lowercase());
                let mut b2 = b.clone();
                b2.inputs[0] = x.clone();
                b2.outputs = vec![y2.clone()];
                let mut a2 = a.clone();
                a2.inputs[0] = y2;
                a2.outputs = vec![z2.clone()];
                site.push(PatchOp::RemoveNode(ia));
                site.push(PatchOp::RemoveNode(ib));
                site.add_node(b2)
                    .and_then(|_| site.add_node(a2))
                    .and_then(|_| {
                        if site.static_type(&z2) == site.static_type(&z) {
                            site.reroute(&z, &z2);
                            Ok(site.into_patch())
                        } else {
                            Err(BuildError::ChangesType {
                                what: "switch".to_string(),
                            })
                        }
                    })
            };
            match built {
                Ok(patch) => {
                    let summary = format!("switched {} and {} after {x}", a.op_type, b.op_type);
                    return commit(model, self.name(), summary, &patch);
                }
                Err(e) => last_err = e.to_string(),
            }
        }
        Outcome::Skipped(format!("no switch could be built: {last_err}"))
    }
}
