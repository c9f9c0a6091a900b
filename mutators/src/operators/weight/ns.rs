//! NS: switches two neurons (two slices along the first dim) of one weight tensor.
use super::{commit_weight, pick_weight};
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};

/// Neuron switch.
pub struct NeuronSwitch;

impl Mutator for NeuronSwitch {
    fn name(&self) -> &'static str {
        "NS"
    }
    fn family(&self) -> Family {
        Family::Weight
    }
    fn description(&self) -> &'static str {
        "switch two neurons of a weight tensor"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(mut w) = pick_weight(model, ctx) else {
            return Outcome::Skipped("no weights".into());
        };
        let n = w.neurons();
        if n < 2 {
            return Outcome::Skipped(format!("{} has one neuron", w.name));
        }
        let a = ctx.below(n);
        let b = (a + 1 + ctx.below(n - 1)) % n;
        let len = w.neuron_len();
        for i in 0..len {
            w.values.swap(a * len + i, b * len + i);
        }
        let summary = format!("switched neurons {a} and {b} of {}", w.name);
        commit_weight(model, self.name(), w, summary)
    }
}
