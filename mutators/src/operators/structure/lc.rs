//! LC (LEMON / How-Far): copies one op whose output has its first input's static type right
//! after itself (`x → op → op' → readers`); the copy shares the other inputs (weights).
use super::lr::{bypassable_nodes, pick_node};
use crate::error::BuildError;
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome, commit};
use crate::site::Site;

/// Layer copy.
pub struct LayerCopy;

impl Mutator for LayerCopy {
    fn name(&self) -> &'static str {
        "LC"
    }
    fn family(&self) -> Family {
        Family::Structure
    }
    fn description(&self) -> &'static str {
        "copy one type-preserving op right after itself"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        if model.graph.node_count() >= ctx.limits.max_nodes {
            return Outcome::Skipped("model at the node limit".into());
        }
        let mut cands = bypassable_nodes(model, |_| true);
        let mut last_err = String::new();
        for _ in 0..4 {
            let Some((id, _x, out)) = pick_node(model, ctx, &cands) else {
                break;
            };
            cands.retain(|c| c.0 != id);
            let Some(node) = model.graph.node(id).cloned() else {
                continue;
            };
            let built = {
                let mut site = Site::new(model, ctx.rng, ctx.limits);
                let mut copy = node.clone();
                let y = site.fresh(&node.op_type.to_lowercase());
                copy.inputs[0] = out.clone();
                copy.outputs = vec![y.clone()];
                copy.name = Some(site.fresh(&node.op_type));
                site.add_node(copy).and_then(|_| {
                    if site.static_type(&y) == site.static_type(&out) {
                        site.reroute(&out, &y);
                        Ok(site.into_patch())
                    } else {
                        Err(BuildError::ChangesType {
                            what: "copy".to_string(),
                        })
                    }
                })
            };
            match built {
                Ok(patch) => {
                    let summary = format!("copied {} after {out}", node.op_type);
                    return commit(model, self.name(), summary, &patch);
                }
                Err(e) => last_err = e.to_string(),
            }
        }
        Outcome::Skipped(format!("no op could be copied: {last_err}"))
    }
}
