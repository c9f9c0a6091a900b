//! Pad and CenterCropPad.
use super::norm_axes;
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

pub(super) fn op_center_crop_pad(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let target = dims(&inp(ins, 1)?.ints()?)?;
    let axes = match n.ints("axes") {
        Some(a) => norm_axes(a, x.rank())?,
        None => (0..x.rank()).collect(),
    };
    if axes.len() != target.len() {
        return Err(err("CenterCropPad shape length"));
    }
    let mut shape = x.shape.clone();
    for (j, &a) in axes.iter().enumerate() {
        shape[a] = target[j];
    }
    let total = check_size(&shape)?;
    let st = strides(&x.shape);
    let mut buf = x.buf.zeros_like(total);
    for p in 0..total {
        let mi = unravel(p, &shape);
        let mut flat = 0;
        let mut inside = true;
        for d in 0..x.rank() {
            let (i, o) = (x.shape[d] as i64, shape[d] as i64);
            // Crop: start (i - o) / 2 in the input; pad: start (o - i) / 2 in the output.
            let src = if o <= i {
                mi[d] as i64 + (i - o) / 2
            } else {
                mi[d] as i64 - (o - i) / 2
            };
            if src < 0 || src >= i {
                inside = false;
                break;
            }
            flat += src as usize * st[d];
        }
        if inside {
            buf.set_from(p, &x.buf, flat)?;
        }
    }
    one(x.with(shape, buf))
}

pub(super) fn op_pad(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let r = t.rank();
    let mode = n.string("mode", "constant");
    let (pads, cval, axes) = if cx.opset < 11 {
        let p = n
            .ints(if cx.opset < 2 { "paddings" } else { "pads" })
            .ok_or_else(|| err("Pad without pads"))?
            .to_vec();
        (p, n.float("value", 0.0) as f64, None)
    } else {
        let p = inp(ins, 1)?.ints()?;
        let c = match opt(ins, 2)? {
            Some(c) if !c.is_empty() => c.scalar_f()?,
            _ => 0.0,
        };
        (p, c, opt(ins, 3)?.map(|a| a.ints()).transpose()?)
    };
    let axes = match axes {
        Some(a) => norm_axes(&a, r)?,
        None => (0..r).collect(),
    };
    if pads.len() != 2 * axes.len() {
        return Err(err(format!(
            "Pad: {} pads for {} axes",
            pads.len(),
            axes.len()
        )));
    }
    let mut before = vec![0i64; r];
    let mut after = vec![0i64; r];
    for (i, &a) in axes.iter().enumerate() {
        before[a] = pads[i];
        after[a] = pads[i + axes.len()];
    }
    let mut shape = Vec::with_capacity(r);
    for d in 0..r {
        let s = t.shape[d] as i64 + before[d] + after[d];
        if s < 0 {
            return Err(err("Pad: negative output size"));
        }
        shape.push(s as usize);
    }
    check_size(&shape)?;
    let st = strides(&t.shape);
    let total = numel(&shape);
    // Position in the input for each output element; None = constant.
    let mut src: Vec<Option<usize>> = Vec::with_capacity(total);
    for p in 0..total {
        let mi = unravel(p, &shape);
        let mut flat = 0usize;
        let mut inside = true;
        for d in 0..r {
            let dim = t.shape[d] as i64;
            let mut x = mi[d] as i64 - before[d];
            if x < 0 || x >= dim {
                if dim == 0 {
                    inside = false;
                    break;
                }
                match mode.as_str() {
                    "constant" => {
                        inside = false;
                        break;
                    }
                    "edge" => x = x.clamp(0, dim - 1),
                    "wrap" => x = x.rem_euclid(dim),
                    "reflect" => {
                        if dim == 1 {
                            x = 0;
                        } else {
                            let period = 2 * (dim - 1);
                            x = x.rem_euclid(period);
                            if x >= dim {
                                x = period - x;
                            }
                        }
                    }
                    m => return Err(unsup(format!("Pad mode {m}"))),
                }
            }
            flat += x as usize * st[d];
        }
        src.push(if inside { Some(flat) } else { None });
    }
    let cv = T::from_f64s(t.dt, vec![1], vec![cval]).map(|c| c.buf);
    let mut buf = t.buf.zeros_like(total);
    for (p, s) in src.iter().enumerate() {
        match s {
            Some(j) => buf.set_from(p, &t.buf, *j)?,
            None => {
                if let Ok(c) = &cv {
                    buf.set_from(p, c, 0)?;
                }
            }
        }
    }
    one(t.with(shape, buf))
}
