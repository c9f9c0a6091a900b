//! DM (How-Far): changes the rank an op sees: its input gets a leading unit dimension, or its
//! first two dimensions merged, and its output is adapted back to the old type.
use super::reshape_around;
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome};

/// Input dimension (rank) mutation.
pub struct DimensionMutation;

impl Mutator for DimensionMutation {
    fn name(&self) -> &'static str {
        "DM"
    }
    fn family(&self) -> Family {
        Family::Input
    }
    fn description(&self) -> &'static str {
        "feed an op an input of another rank (output adapted back)"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        reshape_around(self.name(), model, ctx, |dims, rng| {
            if dims.len() >= 2 && (dims.len() >= 5 || rng.next_u64() % 2 == 0) {
                let mut d = vec![dims[0] * dims[1]];
                d.extend_from_slice(&dims[2..]);
                Some(d)
            } else if dims.len() < 5 {
                let mut d = vec![1];
                d.extend_from_slice(dims);
                Some(d)
            } else {
                None
            }
        })
    }
}
