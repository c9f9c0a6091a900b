//! NAI: inverts the sign of one neuron's weights.
use super::{commit_weight, pick_weight};
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
        let Some(mut w) = pick_weight(model, ctx) else {
            return Outcome::Skipped("no weights".into());
        };
        let len = w.neuron_len();
        let k = ctx.below(w.neurons());
        for v in &mut w.values[k * len..(k + 1) * len] {
            *v = -*v;
        }
        let summary = format!("negated neuron {k} of {}", w.name);
        commit_weight(model, self.name(), w, summary)
    }
}
