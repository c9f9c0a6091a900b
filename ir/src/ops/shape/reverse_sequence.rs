//! ReverseSequence.

use super::{CLASSIC15, I64_ONLY, I64T, axis_of, out};
use crate::attr::AttrLookup;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn infer_reverse_sequence(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let (b, t) = (ctx.int("batch_axis", 1), ctx.int("time_axis", 0));
    if b == t {
        return Err(rule!(
            "ReverseSequence batch_axis and time_axis are both {b}"
        ));
    }
    if let Some(r) = x.rank()
        && r < 2
    {
        return Err(rule!("ReverseSequence needs rank 2 or more, found {r}"));
    }
    // sequence_lens holds one length per batch entry, none above the time axis' length.
    if let Some(s) = &x.shape {
        let (bi, ti) = (axis_of(b, s.len())?, axis_of(t, s.len())?);
        if let (Some(Dim::Known(n)), Dim::Known(batch)) = (
            ctx.tensor(1)?.shape.and_then(|l| l.first().cloned()),
            &s[bi],
        ) && n != *batch
        {
            return Err(rule!(
                "ReverseSequence sequence_lens has {n} entries for a batch of {batch}"
            ));
        }
        if let (Some(lens), Dim::Known(time)) = (ctx.const_i64s(1), &s[ti])
            && let Some(l) = lens.iter().find(|&&l| l < 0 || l > *time)
        {
            return Err(rule!(
                "ReverseSequence sequence length {l} is outside 0..={time}"
            ));
        }
    }
    out(x.dtype, x.shape)
}

/// Registers ReverseSequence.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("ReverseSequence", &[10], Category::Shape)
            .input("input", "T")
            .input("sequence_lens", I64T)
            .output("Y", "T")
            .attr(AttrSpec::int("batch_axis", 1).one_of_ints(&[0, 1]))
            .attr(AttrSpec::int("time_axis", 0).one_of_ints(&[0, 1]))
            .types("T", CLASSIC15)
            .types(I64T, I64_ONLY)
            .infer(infer_reverse_sequence),
    );
}
