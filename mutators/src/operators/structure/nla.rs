//! NLA (MEMO): inserts n ∈ [1, 5] ops of types not yet covered (globally, else in the model),
//! each spliced in at a value (backbone first) or chained after the previous one.
use super::insert::insert_new_ops;
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};

/// New layer addition.
pub struct NewLayerAddition;

impl Mutator for NewLayerAddition {
    fn name(&self) -> &'static str {
        "NLA"
    }
    fn family(&self) -> Family {
        Family::Structure
    }
    fn description(&self) -> &'static str {
        "insert 1-5 ops of uncovered types (globally, else in this model) on the backbone"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let recipes = ctx.recipes;
        let pool = recipes.iter().collect();
        insert_new_ops(model, ctx, self.name(), pool)
    }
}
