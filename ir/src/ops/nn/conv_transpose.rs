//! ConvTranspose.

use super::conv::conv_attrs;
use super::window::{Window, kernel_of, list_attr, same_pad_negative};
use super::{MAX, known, shape_of};
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::sets::*;
use crate::ops::auto_pad::is_same;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// ConvTranspose's open cases: those of `auto_pad` SAME (see [`same_pad_negative`]) and an
/// `output_shape` beyond what the geometry reaches, which needs a negative total padding: the
/// backend test suite has one such model (one row and column past the reach), but ONNX's
/// reference refuses some (two past it, NOTSET), ONNX Runtime refuses those more than a
/// stride short of an input row, and with SAME_UPPER the two place the extra row
/// differently.
fn conv_transpose_ambiguous(ctx: &InferCtx) -> Result<(), InferError> {
    same_pad_negative(ctx)?;
    let (Some(os), Some(xs)) = (ctx.ints("output_shape"), shape_of(ctx, 0)) else {
        return Ok(());
    };
    let n = xs.len().saturating_sub(2);
    if n == 0 || os.len() < n {
        return Ok(());
    }
    let spatial = &os[os.len() - n..];
    let kernel = kernel_of(ctx, shape_of(ctx, 1).as_deref(), n)?;
    let strides = list_attr(ctx, "strides", n, 1)?;
    let dil = list_attr(ctx, "dilations", n, 1)?;
    let op = list_attr(ctx, "output_padding", n, 0)?;
    let Some(k) = kernel else { return Ok(()) };
    for (i, &o) in spatial.iter().enumerate() {
        let Some(x) = known(xs.get(2 + i)) else {
            continue;
        };
        let reach = strides[i] * (x - 1) + op[i] + (k[i] - 1) * dil[i] + 1;
        if o > reach {
            return Err(rule!(
                "output_shape {o} of spatial axis {i} is beyond what the geometry reaches \
                 ({reach}): the total padding would be negative"
            ));
        }
    }
    Ok(())
}

fn conv_transpose_shape(ctx: &InferCtx) -> Result<Option<Vec<Dim>>, InferError> {
    let xs = shape_of(ctx, 0);
    let ws = shape_of(ctx, 1);
    let group = ctx.int("group", 1);
    let rank = match (&xs, &ws) {
        (Some(a), _) => a.len(),
        (None, Some(b)) => b.len(),
        _ => return Ok(None),
    };
    if rank < 3 {
        return Err(rule!(
            "ConvTranspose input must have rank 3 or more, found {rank}"
        ));
    }
    let n = rank - 2;
    let batch = xs.as_ref().map_or(Dim::Unknown, |s| s[0].clone());
    let m = match ws.as_ref().and_then(|s| known(s.get(1))) {
        Some(v) => Dim::Known(
            v.checked_mul(group)
                .ok_or_else(|| rule!("{v} weight channels times group {group} is no size"))?,
        ),
        None => Dim::Unknown,
    };
    if let (Dim::Known(mv), Some(bs)) = (&m, shape_of(ctx, 2))
        && bs != [Dim::Known(*mv)]
    {
        return Err(rule!("bias has shape {bs:?}, expected [{mv}]"));
    }
    if let Some(os) = ctx.ints("output_shape") {
        if os.len() < n {
            return Err(rule!("output_shape has {} values, expected {n}", os.len()));
        }
        let spatial = &os[os.len() - n..];
        // ONNX's shape inference gives up on an output_shape smaller than the input (its
        // checker then fails the model).
        if let Some(xs) = &xs {
            for (i, &o) in spatial.iter().enumerate() {
                if let Some(x) = known(xs.get(2 + i))
                    && o < x
                {
                    return Err(rule!(
                        "output_shape {o} of spatial axis {i} is smaller than the input's {x}"
                    ));
                }
            }
        }
        let sp = spatial.iter().map(|v| Dim::Known(*v));
        return Ok(Some([batch, m].into_iter().chain(sp).collect()));
    }
    let Some(xs) = xs else {
        return Ok(Some([vec![batch, m], vec![Dim::Unknown; n]].concat()));
    };
    let Some(k) = kernel_of(ctx, ws.as_deref(), n)? else {
        return Ok(Some([vec![batch, m], vec![Dim::Unknown; n]].concat()));
    };
    let win = Window::read(ctx, k)?;
    let op = list_attr(ctx, "output_padding", n, 0)?;
    let mut out = vec![batch, m];
    for i in 0..n {
        let Dim::Known(x) = xs[2 + i] else {
            out.push(Dim::Unknown);
            continue;
        };
        let s = win.strides[i];
        let v = match win.auto_pad.as_str() {
            a if is_same(a) => x * s,
            ap => {
                let (pb, pe) = if ap == "VALID" {
                    (0, 0)
                } else {
                    (win.pads[i], win.pads[i + n])
                };
                s * (x - 1) + op[i] + win.effective(i) - pb - pe
            }
        };
        if v < 1 {
            return Err(rule!("ConvTranspose axis {i} would have size {v}"));
        }
        out.push(Dim::Known(v));
    }
    Ok(Some(out))
}

/// Registers ConvTranspose.
pub(super) fn register(r: &mut Registry) {
    r.add(
        conv_attrs(
            OpSpec::new("ConvTranspose", &[1, 11, 22], Category::Conv)
                .traits(Traits::INF_UNSPECIFIED),
            true,
        )
        .attr(AttrSpec::of("output_padding", AttrKind::Ints).range(0, MAX))
        .attr(AttrSpec::of("output_shape", AttrKind::Ints).range(1, MAX))
        .input("X", "T")
        .input("W", "T")
        .opt_input("B", "T")
        .output("Y", "T")
        .types("T", FLOAT)
        .infer(|c| Ok(vec![tensor(c.dtype(0), conv_transpose_shape(c)?)]))
        .ambiguous(conv_transpose_ambiguous)
        .requires(|c| {
            conv_transpose_shape(c)?;
            let auto = c.string("auto_pad", "NOTSET");
            if auto != "NOTSET" && c.ints("pads").is_some() {
                return Err(rule!("pads cannot be given with auto_pad {auto}"));
            }
            // output_shape makes pads unused for the shape, but they must still be well formed.
            if let (Some(p), Some(r)) = (c.ints("pads"), shape_of(c, 0).map(|s| s.len()))
                && r >= 2
                && p.len() != 2 * (r - 2)
            {
                return Err(rule!(
                    "'pads' has {} values, expected {} (begin and end per spatial axis)",
                    p.len(),
                    2 * (r - 2)
                ));
            }
            let g = c.int("group", 1);
            let ws = shape_of(c, 1);
            if let (Some(cin), Some(wc)) = (
                shape_of(c, 0).and_then(|s| known(s.get(1))),
                ws.as_ref().and_then(|s| known(s.first())),
            ) {
                if cin != wc {
                    return Err(rule!("input has {cin} channels but the weight has {wc}"));
                }
                if cin % g != 0 {
                    return Err(rule!("group {g} does not divide the {cin} input channels"));
                }
            }
            // The spatial rank: kernel_shape's, else the weights' (rank - 2).
            let spatial = c
                .ints("kernel_shape")
                .map(|k| k.len())
                .or_else(|| shape_of(c, 1).map(|w| w.len().saturating_sub(2)));
            if let Some(n) = spatial {
                let op = list_attr(c, "output_padding", n, 0)?;
                let s = list_attr(c, "strides", n, 1)?;
                let d = list_attr(c, "dilations", n, 1)?;
                for i in 0..n {
                    if op[i] >= s[i].max(d[i]) {
                        return Err(rule!(
                            "output_padding {} must be smaller than stride or dilation",
                            op[i]
                        ));
                    }
                }
            }
            Ok(())
        }),
    );
}
