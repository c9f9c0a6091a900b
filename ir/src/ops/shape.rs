//! Op specs of the shape family.
use crate::registry::Registry;

/// Registers this family.
pub fn register(_r: &mut Registry) {}
