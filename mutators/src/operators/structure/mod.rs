//! structure operators.
use crate::mutation::Mutator;

/// The structure operators.
pub fn all() -> Vec<Box<dyn Mutator>> {
    Vec::new()
}
