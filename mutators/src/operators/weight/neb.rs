//! NEB: blocks one neuron's effect by zeroing its weights.
use super::{commit_weight, pick_weight};
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
        let Some(mut w) = pick_weight(model, ctx) else {
            return Outcome::Skipped("no weights".into());
        };
        let len = w.neuron_len();
        let k = ctx.below(w.neurons());
        for v in &mut w.values[k * len..(k + 1) * len] {
            *v = 0.0;
        }
        let summary = format!("zeroed neuron {k} of {}", w.name);
        commit_weight(model, self.name(), w, summary)
    }
}
