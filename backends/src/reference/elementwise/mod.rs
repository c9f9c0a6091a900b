//! Element-wise ops, one file per group: [`unary`] (unary math, activations, IsNaN, IsInf, Not,
//! Clip), [`binary`] (arithmetic with broadcasting, Pow, Mod, PRelu, Max, Min, Sum, Mean),
//! [`logic`] (comparisons, And, Or, Xor, the bitwise ops, Where) and [`cast`] (Cast, CastLike).
use super::OpFn;
use std::collections::BTreeMap;

mod binary;
mod cast;
mod logic;
mod unary;

pub use binary::bcast2;
pub use unary::{sigmoid, softplus};

pub(super) fn register(t: &mut BTreeMap<&'static str, OpFn>) {
    unary::register(t);
    binary::register(t);
    logic::register(t);
    cast::register(t);
}
