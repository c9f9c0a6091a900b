//! Pad (constant, reflect and edge modes; negative pads crop).
use super::{Cx, Outs, Res, full, ints_attr, norm_axis, opt, req};
use crate::burn::tensor::{K, R, Val, bax, each, run_err, run_unsup};
use burn::tensor::Slice;
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::ops::PadMode;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

pub(super) fn pad_op<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = "Pad";
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let r = x.rank();
    let mode = a.string("mode", "constant");
    let (pads, value, axes): (Vec<i64>, f64, Vec<usize>) = if cx.opset < 11 {
        let p = ints_attr(a, if cx.opset < 2 { "paddings" } else { "pads" }).unwrap_or_default();
        (p, a.float("value", 0.0) as f64, (0..r).collect())
    } else {
        let p = req(ins, 1, op)?.host_i64();
        let v = match opt(ins, 2) {
            Some(v) if v.numel() > 0 => v.host_f64()[0],
            _ => 0.0,
        };
        let axes = match opt(ins, 3) {
            Some(ax) => {
                let mut out = Vec::new();
                for v in ax.host_i64() {
                    out.push(norm_axis(v, r)?);
                }
                out
            }
            None => (0..r).collect(),
        };
        (p, v, axes)
    };
    let na = axes.len();
    if pads.len() != 2 * na {
        return Err(run_err(format!("Pad: {} pads for {na} axes", pads.len())));
    }
    let mut grow = vec![(0usize, 0usize); R];
    let mut sl = vec![Slice::new(0, None, 1); R];
    let mut shape = x.shape.clone();
    let mut crop = false;
    for (i, &ax) in axes.iter().enumerate() {
        let (b, e) = (pads[i], pads[na + i]);
        let d = bax(r, ax);
        grow[d] = (b.max(0) as usize, e.max(0) as usize);
        let dim = x.shape[ax] as i64;
        let size = dim + b + e;
        if size < 0 {
            return Err(run_err("Pad: negative output size"));
        }
        if b < 0 || e < 0 {
            crop = true;
            let s = (-b).max(0);
            sl[d] = Slice::new(s as isize, Some((s + size) as isize), 1);
        }
        if mode != "constant" && (b > 0 || e > 0) {
            if dim == 0 {
                return Err(run_err("Pad: reflect/edge of an empty axis"));
            }
            if mode == "reflect" && (b >= dim || e >= dim) {
                return Err(run_unsup("Pad: reflect pad not smaller than the axis"));
            }
        }
        shape[ax] = size as usize;
    }
    let pm = match mode.as_str() {
        "constant" => PadMode::Constant(value as f32),
        "reflect" => PadMode::Reflect,
        "edge" => PadMode::Edge,
        m => return Err(run_unsup(format!("Pad mode {m}"))),
    };
    if shape.contains(&0) {
        return Ok(vec![Some(full(shape, 0.0, x.dtype, cx.dev)?)]);
    }
    let grows = grow.iter().any(|&p| p != (0, 0));
    let k = match &x.k {
        K::F(t) => {
            let mut t = t.clone();
            if grows {
                t = t.pad(grow.clone(), pm);
            }
            K::F(t)
        }
        K::I(t) => {
            let mut t = t.clone();
            if grows {
                t = t.pad(grow.clone(), pm);
            }
            K::I(t)
        }
        K::B(_) => return Err(run_unsup("Pad on bool")),
    };
    let k = if crop {
        each!(k, |t| t.slice(sl.as_slice()))
    } else {
        k
    };
    Ok(vec![Some(Val::new(k, shape, x.dtype))])
}

// The ops of this file, found from their names (see `super::find`).
table! {
    "Pad" => pad_op,
}
