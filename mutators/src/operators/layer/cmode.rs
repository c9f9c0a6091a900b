//! CMode: change mode parameters (strings and flags) of 1-5 ops, new buckets first.
use super::{is_mode_attr, retune};
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};

/// CMode.
pub struct ChangeMode;

impl Mutator for ChangeMode {
    fn name(&self) -> &'static str {
        "CMode"
    }
    fn family(&self) -> Family {
        Family::Layer
    }
    fn description(&self) -> &'static str {
        "change mode parameters (strings and flags) of 1-5 ops, new buckets first"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        retune(self.name(), model, ctx, is_mode_attr)
    }
}
