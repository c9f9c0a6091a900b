//! weight operators.
use crate::mutation::Mutator;

/// The weight operators.
pub fn all() -> Vec<Box<dyn Mutator>> {
    Vec::new()
}
