//! NEB: blocks one neuron's effect by zeroing its weights.
use super::change_neuron;
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};

/// Neuron effect block.
pub struct NeuronEffectBlock;

impl Mutator for NeuronEffectBlock {
    fn name(&self) -> &'static str {
        "NEB"
    }
    fn family(&self) -> Family {
        Family::Weight
    }
    fn description(&self) -> &'static str {
        "zero the weights of one neuron"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        change_neuron(model, ctx, self.name(), "zeroed", |_| 0.0)
    }
}
