//! AFRm (How-Far): removes one activation op; its readers read its input.
use super::lr::{bypassable_nodes, pick_node};
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome, commit};
use crate::operators::common::{bypass_and_remove, is_activation};
use crate::site::Site;

/// Activation function removal.
pub struct ActivationRemoval;

impl Mutator for ActivationRemoval {
    fn name(&self) -> &'static str {
        "AFRm"
    }
    fn family(&self) -> Family {
        Family::Structure
    }
    fn description(&self) -> &'static str {
        "remove one activation op and feed its readers from its input"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let cands = bypassable_nodes(model, |n| {
            n.domain().is_empty() && is_activation(&n.op_type)
        });
        let Some((id, x, out)) = pick_node(model, ctx, &cands) else {
            return Outcome::Skipped("no removable activation".into());
        };
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
            self.name(),
            format!("removed activation {op} making {out}"),
            &patch,
        )
    }
}
