//! SM (How-Far): changes the shape an op sees: its input is reshaped (sliced or padded) to a
//! shape with one dimension changed, and its output adapted back to the old type.
use super::reshape_around;
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};

/// Input shape mutation.
pub struct ShapeMutation;

impl Mutator for ShapeMutation {
    fn name(&self) -> &'static str {
        "SM"
    }
    fn family(&self) -> Family {
        Family::Input
    }
    fn description(&self) -> &'static str {
        "feed an op an input with one dimension changed (output adapted back)"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        reshape_around(self.name(), model, ctx, |dims, rng| {
            if dims.is_empty() {
                return None;
            }
            // Spatial / trailing dims first: channel dims usually have to match weights.
            let lo = if dims.len() >= 3 { 2 } else { 0 };
            let k = lo + (rng.next_u64() % (dims.len() - lo) as u64) as usize;
            let mut d = dims.to_vec();
            d[k] = match rng.next_u64() % 3 {
                0 => (d[k] - 1).max(1),
                1 => d[k] + 1,
                _ => d[k] * 2,
            };
            (d != dims).then_some(d)
        })
    }
}
