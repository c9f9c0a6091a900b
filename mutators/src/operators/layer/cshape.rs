//! CShape: change shape parameters (kernel sizes, strides, pads, axes, groups, ...) of 1-5 ops, new buckets first.
use super::{is_shape_attr, retune};
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};

/// CShape.
pub struct ChangeShape;

impl Mutator for ChangeShape {
    fn name(&self) -> &'static str {
        "CShape"
    }
    fn family(&self) -> Family {
        Family::Layer
    }
    fn description(&self) -> &'static str {
        "change shape parameters (kernel sizes, strides, pads, axes, groups, ...) of 1-5 ops, new buckets first"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        retune(self.name(), model, ctx, is_shape_attr)
    }
}
