//! Structure operators: they add, remove, copy, switch, merge or connect ops.
use crate::mutation::Mutator;

mod la;

pub use la::LayerAddition;

/// The structure operators.
pub fn all() -> Vec<Box<dyn Mutator>> {
    vec![Box::new(LayerAddition)]
}
