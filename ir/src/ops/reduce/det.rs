//! Det.

use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

fn det_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let shape = match &x.shape {
        None => None,
        Some(s) => {
            if s.len() < 2 {
                return Err(rule!("Det needs rank >= 2, found rank {}", s.len()));
            }
            if let (Dim::Known(a), Dim::Known(b)) = (&s[s.len() - 2], &s[s.len() - 1])
                && a != b
            {
                return Err(rule!("Det needs square matrices, found {a}x{b}"));
            }
            Some(s[..s.len() - 2].to_vec())
        }
    };
    Ok(vec![tensor(x.dtype, shape)])
}

/// Registers Det.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Det", &[11, 22], Category::Linear)
            .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
            .input("X", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(det_infer),
    );
}
