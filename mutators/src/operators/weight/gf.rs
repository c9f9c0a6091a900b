//! GF: adds Gaussian noise to one weight tensor (σ a fraction of the weights' std).
use super::{commit_weight, normal, pick_weight};
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};

/// Gaussian fuzzing.
pub struct GaussianFuzzing;

impl Mutator for GaussianFuzzing {
    fn name(&self) -> &'static str {
        "GF"
    }
    fn family(&self) -> Family {
        Family::Weight
    }
    fn description(&self) -> &'static str {
        "add Gaussian noise to a weight tensor"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(mut w) = pick_weight(model, ctx) else {
            return Outcome::Skipped("no weights".into());
        };
        let n = w.values.len() as f64;
        let mean = w.values.iter().sum::<f64>() / n;
        let var = w.values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let sigma = 0.2 * var.sqrt().max(1e-3);
        for v in w.values.iter_mut() {
            *v += sigma * normal(ctx.rng);
        }
        let summary = format!("Gaussian noise (sigma {sigma:.3e}) on {}", w.name);
        commit_weight(model, self.name(), w, summary)
    }
}
