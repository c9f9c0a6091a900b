//! CenterCropPad.

use super::{CLASSIC16, IND, axes_of, out, unknown_at};
use crate::attr::{AttrKind, AttrLookup};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn infer_center_crop_pad(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    let axes: Vec<usize> = match ctx.ints("axes") {
        Some(a) => axes_of(a, s.len())?,
        None => (0..s.len()).collect(),
    };
    match ctx.const_i64s(1) {
        Some(sh) => {
            if sh.len() != axes.len() {
                return Err(rule!(
                    "CenterCropPad shape {sh:?} has {} values for {} axes",
                    sh.len(),
                    axes.len()
                ));
            }
            let mut res = s;
            for (k, &a) in axes.iter().enumerate() {
                res[a] = Dim::Known(sh[k]);
            }
            out(x.dtype, Some(res))
        }
        None => out(x.dtype, Some(unknown_at(&s, &axes))),
    }
}

/// Registers CenterCropPad.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("CenterCropPad", &[18], Category::Shape)
            .input("input_data", "T")
            .input("shape", "Tind")
            .output("output_data", "T")
            .attr(AttrSpec::of("axes", AttrKind::Ints))
            .types("T", CLASSIC16)
            .types("Tind", IND)
            .infer(infer_center_crop_pad),
    );
}
