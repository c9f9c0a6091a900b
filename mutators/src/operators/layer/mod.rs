//! layer operators.
use crate::mutation::Mutator;

/// The layer operators.
pub fn all() -> Vec<Box<dyn Mutator>> {
    Vec::new()
}
