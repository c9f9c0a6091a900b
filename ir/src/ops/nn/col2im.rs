//! Col2Im.

use super::window::{Window, dilations_attr, pads_attr, strides_attr};
use super::{concat, known, shape_of};
use crate::dtype::DType;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn col2im(ctx: &InferCtx) -> Infer {
    let dt = ctx.dtype(0);
    let xs = shape_of(ctx, 0);
    if let Some(x) = &xs
        && x.len() != 3
    {
        return Err(rule!("Col2Im input must have rank 3, found {}", x.len()));
    }
    let image = ctx.const_i64s(1);
    let block = ctx.const_i64s(2);
    let n_sp = image
        .as_ref()
        .map(Vec::len)
        .or(block.as_ref().map(Vec::len))
        .or_else(|| {
            shape_of(ctx, 1)
                .and_then(|s| known(s.first()))
                .map(|v| v as usize)
        });
    let Some(n_sp) = n_sp else {
        return Ok(vec![tensor(dt, None)]);
    };
    let batch = xs.as_ref().map_or(Dim::Unknown, |x| x[0].clone());
    let c = match (xs.as_ref().and_then(|x| known(x.get(1))), &block) {
        (Some(cb), Some(b)) => {
            let p: i64 = b.iter().product();
            if p <= 0 || cb % p != 0 {
                return Err(rule!(
                    "Col2Im input has {cb} rows, not a multiple of the block size {p}"
                ));
            }
            Dim::Known(cb / p)
        }
        _ => Dim::Unknown,
    };
    let sp = match &image {
        Some(v) => v.iter().map(|d| Dim::Known(*d)).collect(),
        None => vec![Dim::Unknown; n_sp],
    };
    Ok(vec![tensor(dt, Some([vec![batch, c], sp].concat()))])
}

/// Registers Col2Im.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Col2Im", &[18], Category::Misc)
            .attr(dilations_attr())
            .attr(pads_attr())
            .attr(strides_attr())
            .input("input", "T")
            .input("image_shape", "TI")
            .input("block_shape", "TI")
            .output("output", "T")
            .types(
                "T",
                &concat(&[
                    NUMERIC,
                    &[DType::String, DType::Bool, DType::C64, DType::C128],
                ]),
            )
            .types("TI", &[DType::I64])
            .infer(col2im)
            .requires(|c| {
                col2im(c)?;
                let (Some(img), Some(blk)) = (c.const_i64s(1), c.const_i64s(2)) else {
                    return Ok(());
                };
                if img.len() != blk.len() {
                    return Err(rule!(
                        "image_shape has {} values but block_shape {}",
                        img.len(),
                        blk.len()
                    ));
                }
                let n = img.len();
                let win = Window::read(c, blk.clone())?;
                let mut blocks = 1;
                for (i, d) in img.iter().enumerate() {
                    blocks *= win.out_dim(i, &Dim::Known(*d))?.value().unwrap_or(0);
                }
                if let Some(l) = shape_of(c, 0).and_then(|s| known(s.get(2)))
                    && l != blocks
                {
                    return Err(rule!(
                        "input has {l} blocks, the {n}-D geometry gives {blocks}"
                    ));
                }
                Ok(())
            }),
    );
}
