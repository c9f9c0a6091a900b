//! WS: shuffles the weights of one neuron (a slice along the first dim).
use super::{commit_weight, pick_weight};
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};

/// Weight shuffling.
pub struct WeightShuffle;

impl Mutator for WeightShuffle {
    fn name(&self) -> &'static str {
        "WS"
    }
    fn family(&self) -> Family {
        Family::Weight
    }
    fn description(&self) -> &'static str {
        "shuffle the weights of one neuron of a weight tensor"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(mut w) = pick_weight(model, ctx) else {
            return Outcome::Skipped("no weights".into());
        };
        let len = w.neuron_len();
        let (len, k) = if len > 1 {
            (len, ctx.below(w.neurons()))
        } else {
            (w.values.len(), 0)
        };
        let slice = &mut w.values[k * len..(k + 1) * len];
        ctx.shuffle(slice);
        let summary = format!("shuffled neuron {k} of {}", w.name);
        commit_weight(model, self.name(), w, summary)
    }
}
