//! AFRm (How-Far): removes one activation op; its readers read its input.
use super::lr::{bypassable_nodes, pick_node, remove_picked};
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};
use crate::operators::common::is_activation;

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
        let Some(picked) = pick_node(model, ctx, &cands) else {
            return Outcome::Skipped("no removable activation".into());
        };
        remove_picked(model, ctx, self.name(), picked, "activation ")
    }
}
