//! PM: change numeric parameters (alpha, beta, epsilon, ...) of 1-5 ops.
use super::{is_numeric_attr, retune};
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};

/// PM.
pub struct ParameterMutation;

impl Mutator for ParameterMutation {
    fn name(&self) -> &'static str {
        "PM"
    }
    fn family(&self) -> Family {
        Family::Layer
    }
    fn description(&self) -> &'static str {
        "change numeric parameters (alpha, beta, epsilon, ...) of 1-5 ops"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        retune(self.name(), model, ctx, is_numeric_attr)
    }
}
