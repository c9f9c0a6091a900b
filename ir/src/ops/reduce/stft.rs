//! STFT.

use super::const_scalar;
use crate::attr::AttrLookup;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn stft_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let (batch, len) = match &x.shape {
        Some(s) if s.len() == 3 => (s[0].clone(), s[1].value()),
        Some(s) if s.len() == 2 => (s[0].clone(), s[1].value()),
        Some(s) => {
            return Err(rule!(
                "STFT signal must be [batch, length, 1|2], found rank {}",
                s.len()
            ));
        }
        None => (Dim::Unknown, None),
    };
    let step = const_scalar(ctx, 1);
    if let Some(st) = step
        && st <= 0
    {
        return Err(rule!("STFT frame_step = {st} must be positive"));
    }
    let window_len = if ctx.has_input(2) {
        ctx.tensor(2)?
            .shape
            .and_then(|s| s.first().and_then(Dim::value))
    } else {
        None
    };
    let frame_len = if ctx.has_input(3) {
        const_scalar(ctx, 3)
    } else {
        window_len
    };
    let frames = match (len, frame_len, step) {
        (Some(l), Some(f), Some(st)) if l >= f => Dim::Known((l - f) / st + 1),
        (Some(l), Some(f), Some(_)) => {
            return Err(rule!("STFT frame_length {f} exceeds signal length {l}"));
        }
        _ => Dim::Unknown,
    };
    let bins = match frame_len {
        Some(f) if ctx.int("onesided", 1) != 0 => Dim::Known(f / 2 + 1),
        Some(f) => Dim::Known(f),
        None => Dim::Unknown,
    };
    Ok(vec![tensor(
        x.dtype,
        Some(vec![batch, frames, bins, Dim::Known(2)]),
    )])
}

/// Registers STFT.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("STFT", &[17], Category::Misc)
            .input("signal", "T1")
            .input("frame_step", "T2")
            .opt_input("window", "T1")
            .opt_input("frame_length", "T2")
            .output("output", "T1")
            .attr(AttrSpec::int("onesided", 1).one_of_ints(&[0, 1]))
            .types("T1", FLOAT)
            .types("T2", INDEX)
            .infer(stft_infer),
    );
}
