//! Elementwise ops: unary math, binary arithmetic, activations, comparison and logic, casts. One
//! file per op or group of ops:
//!
//! * `unary.rs`: Abs, Acos, Acosh, Asin, Asinh, Atan, Atanh, Ceil, Cos, Cosh, Erf, Exp, Floor, Log,
//!   Neg, Reciprocal, Round, Sign, Sin, Sinh, Sqrt, Tan, Tanh, Not, BitwiseNot, IsNaN, IsInf.
//! * `activation.rs`: Relu, Sigmoid, HardSwish, Softplus, Softsign, Mish, LeakyRelu, PRelu, Elu,
//!   Selu, Celu, Gelu, HardSigmoid, ThresholdedRelu, Shrink, Swish.
//! * `binary.rs`: Add, Sub, Mul, Div, And, Or, Xor, Equal, Greater, Less, GreaterOrEqual,
//!   LessOrEqual, BitwiseAnd, BitwiseOr, BitwiseXor, Pow, Mod, BitShift.
//! * `variadic.rs`: Sum, Mean, Max, Min.
//! * `where_op.rs`: Where.
//! * `clip.rs`: Clip.
//! * `cast.rs`: Cast, CastLike.
//! * `identity.rs`: Identity.
//!
//! Every op of the family shares the validity rules of `requires.rs` (dtypes by opset) and the
//! constant folding of `fold.rs`.
mod activation;
mod binary;
mod cast;
mod clip;
mod fold;
mod identity;
mod requires;
#[cfg(test)]
mod tests;
mod unary;
mod variadic;
mod where_op;

use crate::attr::AttrKind;
use crate::dtype::DType::{self};
use crate::dtype::sets::*;
use crate::registry::{AttrSpec, Registry};

/// Floats of the pre-bf16 opsets plus bf16.
const FLT: &[DType] = FLOAT;

fn consumed() -> AttrSpec {
    AttrSpec::of("consumed_inputs", AttrKind::Ints)
        .versions(1, Some(6))
        .no_buckets()
}

/// Registers this family.
pub fn register(r: &mut Registry) {
    unary::register(r);
    activation::register_unary(r);
    unary::register_is_nan_inf(r);
    binary::register(r);
    variadic::register(r);
    where_op::register(r);
    clip::register(r);
    cast::register(r);
    identity::register(r);
    activation::register(r);
}
