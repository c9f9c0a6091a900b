//! Elementwise ops: unary math, binary arithmetic, activations, comparison and logic, casts.
use super::common::*;
use crate::dtype::sets::*;
use crate::registry::{Category, OpSpec, Registry};

/// Registers this family.
pub fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Relu", &[1, 6, 13, 14], Category::Activation)
            .input("X", "T")
            .output("Y", "T")
            .types("T", SIGNED_NUMERIC)
            .infer(unary),
    );
    r.add(
        OpSpec::new("Add", &[1, 6, 7, 13, 14], Category::Elementwise)
            .input("A", "T")
            .input("B", "T")
            .output("C", "T")
            .types("T", NUMERIC)
            .infer(|c| broadcast(c, None)),
    );
}
