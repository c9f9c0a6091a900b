//! NAI: inverts the sign of one neuron's weights.
use super::change_neuron;
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};

/// Neuron activation inverse.
pub struct NeuronActivationInverse;

impl Mutator for NeuronActivationInverse {
    fn name(&self) -> &'static str {
        "NAI"
    }
    fn family(&self) -> Family {
        Family::Weight
    }
    fn description(&self) -> &'static str {
        "negate the weights of one neuron"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        change_neuron(model, ctx, self.name(), "negated", |v| -v)
    }
}
