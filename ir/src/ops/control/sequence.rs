//! The sequence ops: SequenceConstruct, SequenceEmpty, SequenceAt, SequenceInsert,
//! SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence and SequenceMap.

use super::merge::{body_outputs, drop_shapes, merge_types};
use super::{SEQ_ELEM, SEQ_ELEM_BF16};
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType::{self, F32, I64};
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::{Dim, TensorType, ValueType};

/// Input `i` as a sequence; its element type (Unknown if the input's type is unknown).
fn seq_elem(ctx: &InferCtx, i: usize) -> Result<ValueType, InferError> {
    match ctx.input_type(i) {
        ValueType::Sequence(e) => Ok(*e),
        ValueType::Unknown => Ok(ValueType::Unknown),
        other => Err(InferError::WrongKind {
            slot: i,
            expected: "sequence",
            found: other,
        }),
    }
}

/// Input `i` checked to be a sequence, returned whole.
fn seq_arg(ctx: &InferCtx, i: usize) -> Result<ValueType, InferError> {
    Ok(ValueType::Sequence(Box::new(seq_elem(ctx, i)?)))
}

fn seq_construct_infer(ctx: &InferCtx) -> Infer {
    let mut elem = ValueType::Unknown;
    for i in 0..ctx.n_inputs() {
        let t = ValueType::Tensor(ctx.tensor(i)?);
        elem = if i == 0 {
            t
        } else {
            merge_types(&elem, &t).map_err(|e| rule!("SequenceConstruct input {i}: {e}"))?
        };
    }
    Ok(vec![ValueType::Sequence(Box::new(elem))])
}

fn seq_at_infer(ctx: &InferCtx) -> Infer {
    Ok(vec![seq_elem(ctx, 0)?])
}

fn seq_insert_infer(ctx: &InferCtx) -> Infer {
    let elem = seq_elem(ctx, 0)?;
    let t = ValueType::Tensor(ctx.tensor(1)?);
    // Nothing is known of the elements already there: only the dtype of the new one holds.
    let merged = match elem {
        ValueType::Unknown => drop_shapes(&t),
        elem => merge_types(&elem, &t).map_err(|e| rule!("SequenceInsert: {e}"))?,
    };
    Ok(vec![ValueType::Sequence(Box::new(merged))])
}

pub(super) fn split_to_seq_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = &x.shape else {
        return Ok(vec![ValueType::Sequence(Box::new(tensor(x.dtype, None)))]);
    };
    let a = norm_axis(ctx.int("axis", 0), s.len())?;
    let mut e = s.clone();
    if !ctx.has_input(1) {
        if ctx.int("keepdims", 1) != 0 {
            e[a] = Dim::Known(1);
        } else {
            e.remove(a);
        }
    } else {
        let split = ctx.const_i64s(1);
        let scalar = ctx.tensor(1)?.rank() == Some(0);
        e[a] = match (split, &s[a]) {
            (Some(v), d) if scalar && v.len() == 1 => {
                let k = v[0];
                if k <= 0 {
                    return Err(rule!("SplitToSequence split = {k} must be positive"));
                }
                match d {
                    Dim::Known(n) if n % k == 0 => Dim::Known(k),
                    _ => Dim::Unknown,
                }
            }
            (Some(v), d) => {
                if let (Dim::Known(n), true) = (d, !v.is_empty()) {
                    let sum: i64 = v.iter().sum();
                    if sum != *n {
                        return Err(rule!(
                            "SplitToSequence split sums to {sum}, axis {a} has size {n}"
                        ));
                    }
                }
                if !v.is_empty() && v.iter().all(|x| *x == v[0]) {
                    Dim::Known(v[0])
                } else {
                    Dim::Unknown
                }
            }
            (None, _) => Dim::Unknown,
        };
    }
    Ok(vec![ValueType::Sequence(Box::new(tensor(
        x.dtype,
        Some(e),
    )))])
}

fn concat_from_seq_infer(ctx: &InferCtx) -> Infer {
    let elem = seq_elem(ctx, 0)?;
    let t = match &elem {
        ValueType::Tensor(t) => t.clone(),
        ValueType::Unknown => TensorType::unranked(DType::Other(0)),
        other => {
            return Err(rule!(
                "ConcatFromSequence needs a sequence of tensors, found elements {other}"
            ));
        }
    };
    let new_axis = ctx.int("new_axis", 0) != 0;
    let Some(axis) = ctx.int_opt("axis") else {
        return Err(rule!("ConcatFromSequence needs the axis attribute"));
    };
    let shape = match &t.shape {
        None => None,
        Some(s) => {
            let mut s = s.clone();
            if new_axis {
                let a = norm_axis(axis, s.len() + 1)?;
                s.insert(a, Dim::Unknown);
            } else {
                let a = norm_axis(axis, s.len())?;
                s[a] = Dim::Unknown;
            }
            Some(s)
        }
    };
    Ok(vec![tensor(t.dtype, shape)])
}

fn seq_map_infer(ctx: &InferCtx) -> Infer {
    seq_elem(ctx, 0)?;
    let n = ctx.n_outputs();
    let body = body_outputs(ctx, "body", n);
    Ok(body
        .into_iter()
        .take(n)
        .map(|t| ValueType::Sequence(Box::new(t)))
        .collect())
}

/// Registers the sequence ops.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("SequenceConstruct", &[11], Category::Sequence)
            .var_input("inputs", "T", 1)
            .output("output_sequence", "")
            .types("T", SEQ_ELEM)
            .infer(seq_construct_infer),
    );
    r.add(
        OpSpec::new("SequenceEmpty", &[11], Category::Sequence)
            .output("output", "")
            .attr(
                AttrSpec::of("dtype", AttrKind::Int)
                    .one_of_ints(&dtype_codes(SEQ_ELEM))
                    .int_buckets(&[(1, 1), (7, 7), (10, 10), (11, 11), (6, 6)]),
            )
            .infer(|c| {
                Ok(vec![ValueType::Sequence(Box::new(tensor(
                    dtype_attr(c, "dtype", F32),
                    None,
                )))])
            }),
    );
    r.add(
        OpSpec::new("SequenceAt", &[11], Category::Sequence)
            .input("input_sequence", "")
            .input("position", "I")
            .output("tensor", "T")
            .types("I", INDEX)
            .types("T", SEQ_ELEM)
            .infer(seq_at_infer),
    );
    r.add(
        OpSpec::new("SequenceInsert", &[11], Category::Sequence)
            .input("input_sequence", "")
            .input("tensor", "T")
            .opt_input("position", "I")
            .output("output_sequence", "")
            .types("T", SEQ_ELEM)
            .types("I", INDEX)
            .infer(seq_insert_infer),
    );
    r.add(
        OpSpec::new("SequenceErase", &[11], Category::Sequence)
            .input("input_sequence", "")
            .opt_input("position", "I")
            .output("output_sequence", "")
            .types("I", INDEX)
            .infer(|c| Ok(vec![seq_arg(c, 0)?])),
    );
    r.add(
        OpSpec::new("SequenceLength", &[11], Category::Sequence)
            .input("input_sequence", "")
            .output("length", "I")
            .types("I", &[I64])
            .infer(|c| {
                seq_arg(c, 0)?;
                Ok(vec![fixed(I64, &[])])
            }),
    );
    r.add(
        OpSpec::new("SplitToSequence", &[11, 24], Category::Sequence)
            .input("input", "T")
            .opt_input("split", "I")
            .output("output_sequence", "")
            .attr(AttrSpec::int("axis", 0).int_buckets(AXIS_BUCKETS))
            .attr(AttrSpec::int("keepdims", 1).one_of_ints(&[0, 1]))
            .types("T", SEQ_ELEM_BF16)
            .types("I", INDEX)
            .infer(split_to_seq_infer),
    );
    r.add(
        OpSpec::new("ConcatFromSequence", &[11], Category::Sequence)
            .input("input_sequence", "")
            .output("concat_result", "T")
            .attr(
                AttrSpec::of("axis", AttrKind::Int)
                    .required()
                    .int_buckets(AXIS_BUCKETS),
            )
            .attr(AttrSpec::int("new_axis", 0).one_of_ints(&[0, 1]))
            .types("T", SEQ_ELEM)
            .infer(concat_from_seq_infer),
    );
    r.add(
        OpSpec::new("SequenceMap", &[17], Category::Sequence)
            .input("input_sequence", "")
            .var_input("additional_inputs", "", 0)
            .var_output("out_sequence", "", 1)
            .attr(AttrSpec::of("body", AttrKind::Graph).required())
            .infer(seq_map_infer),
    );
}
