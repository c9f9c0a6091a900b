//! Op specs of the control family: If / Loop / Scan, sequences and optionals, random
//! generators, string ops, ImageDecoder, and the preview training ops. One file per op or group
//! of ops:
//!
//! * `if_op.rs`: If.
//! * `loop_op.rs`: Loop.
//! * `scan.rs`: Scan.
//! * `sequence.rs`: SequenceConstruct, SequenceEmpty, SequenceAt, SequenceInsert, SequenceErase,
//!   SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap.
//! * `optional.rs`: Optional, OptionalGetElement, OptionalHasElement.
//! * `random.rs`: RandomNormal, RandomNormalLike, RandomUniform, RandomUniformLike, Bernoulli,
//!   Multinomial.
//! * `string.rs`: StringNormalizer, TfIdfVectorizer, StringConcat, RegexFullMatch, StringSplit.
//! * `image_decoder.rs`: ImageDecoder.
//! * `training.rs`: Adagrad, Adam, Momentum, Gradient.
//!
//! `merge.rs` holds the type merging that control flow and sequences share.
mod if_op;
mod image_decoder;
mod loop_op;
mod merge;
mod optional;
mod random;
mod scan;
mod sequence;
mod string;
#[cfg(test)]
mod tests;
mod training;

use crate::dtype::DType::{
    self, BF16, Bool, C64, C128, F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64,
};
use crate::dtype::sets::*;
use crate::registry::Registry;

/// Versions shared by If and Loop.
const IF_LOOP_VERSIONS: &[i64] = &[1, 11, 13, 16, 19, 21, 23, 24, 25];
/// Element types of sequences (no bf16 in most sequence ops).
const SEQ_ELEM: &[DType] = CLASSIC;
/// SplitToSequence also takes bf16.
const SEQ_ELEM_BF16: &[DType] = &[
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
    BF16,
    DType::String,
    Bool,
    C64,
    C128,
];

/// Registers this family.
pub fn register(r: &mut Registry) {
    // Heterogeneous variadic ports carry tc "" (their values need not share a dtype, and may be
    // sequences or optionals).
    if_op::register(r);
    loop_op::register(r);
    scan::register(r);
    sequence::register(r);
    optional::register(r);
    random::register(r);
    string::register(r);
    image_decoder::register(r);
    training::register(r);
}
