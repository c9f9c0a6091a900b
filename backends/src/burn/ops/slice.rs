//! Cutting and joining along axes: Slice, Split, Concat.
use super::{Cx, Outs, Res, full, norm_axes, norm_axis, one, opt, req, to_usize};
use crate::burn::tensor::{K, R, Val, bax, each, run_err};
use burn::tensor::Slice;
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

/// Slice.
pub(super) fn slice_op<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let (starts, ends, axes, steps) = if cx.opset < 10 {
        (
            a.ints("starts").unwrap_or(&[]).to_vec(),
            a.ints("ends").unwrap_or(&[]).to_vec(),
            a.ints("axes").map(|v| v.to_vec()),
            None,
        )
    } else {
        (
            req(ins, 1, op)?.host_i64(),
            req(ins, 2, op)?.host_i64(),
            opt(ins, 3).map(|v| v.host_i64()),
            opt(ins, 4).map(|v| v.host_i64()),
        )
    };
    one(slice(x, &starts, &ends, axes, steps, dev)?)
}

pub(super) fn slice<B: BurnBackend>(
    x: &Val<B>,
    starts: &[i64],
    ends: &[i64],
    axes: Option<Vec<i64>>,
    steps: Option<Vec<i64>>,
    dev: &B::Device,
) -> Res<Val<B>> {
    let r = x.rank();
    let axes = match axes {
        Some(a) => norm_axes(&a, r)?,
        None => (0..starts.len()).collect(),
    };
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(run_err(
            "Slice: starts, ends, axes and steps differ in length",
        ));
    }
    let mut sl = vec![Slice::new(0, None, 1); R];
    let mut shape = x.shape.clone();
    for i in 0..starts.len() {
        let ax = axes[i];
        let dim = x.shape[ax] as i64;
        let step = steps[i];
        if step == 0 {
            return Err(run_err("Slice: step 0"));
        }
        let fix = |v: i64| if v < 0 { v + dim } else { v };
        let (mut s, mut e) = (fix(starts[i]), fix(ends[i]));
        let (lo, hi, len) = if step > 0 {
            s = s.clamp(0, dim);
            e = e.clamp(0, dim);
            let len = if e > s { (e - s + step - 1) / step } else { 0 };
            (s, e.max(s), len)
        } else {
            s = s.clamp(-1, dim - 1);
            e = e.clamp(-1, dim - 1);
            let len = if s > e {
                (s - e + (-step) - 1) / (-step)
            } else {
                0
            };
            // burn walks [lo, hi) backwards from hi - 1
            (e + 1, (s + 1).max(e + 1), len)
        };
        shape[ax] = len as usize;
        sl[bax(r, ax)] = Slice::new(lo as isize, Some(hi as isize), step as isize);
    }
    if shape.contains(&0) {
        return full(shape, 0.0, x.dtype, dev);
    }
    let k = each!(x.k.clone(), |t| t.slice(sl.as_slice()));
    Ok(Val::new(k, shape, x.dtype))
}

/// Split.
pub(super) fn split<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let axis = norm_axis(a.int("axis", 0), x.rank())?;
    let n = x.shape[axis];
    let nout = node.outputs.len();
    let sizes: Vec<usize> = {
        let given: Option<Vec<i64>> = if cx.opset < 13 {
            a.ints("split").map(|v| v.to_vec())
        } else {
            opt(ins, 1).map(|v| v.host_i64())
        };
        match given {
            Some(s) => to_usize(&s, "split")?,
            None => {
                let parts = a.int("num_outputs", nout as i64).max(1) as usize;
                let chunk = n.div_ceil(parts);
                if cx.opset < 18 && n % parts != 0 {
                    return Err(run_err(format!("Split: {n} not divisible by {parts}")));
                }
                let mut v = Vec::new();
                let mut left = n;
                for _ in 0..parts {
                    let c = chunk.min(left);
                    v.push(c);
                    left -= c;
                }
                v
            }
        }
    };
    if sizes.iter().sum::<usize>() != n || sizes.len() != nout {
        return Err(run_err(format!(
            "Split: sizes {sizes:?} do not split {n} into {nout} outputs"
        )));
    }
    let d = bax(x.rank(), axis);
    let mut out = Vec::new();
    let nonzero: Vec<usize> = sizes.iter().copied().filter(|&s| s > 0).collect();
    let mut pieces: std::collections::VecDeque<K<B>> = match &x.k {
        K::F(t) => t
            .clone()
            .split_with_sizes(nonzero, d)
            .into_iter()
            .map(K::F)
            .collect(),
        K::I(t) => t
            .clone()
            .split_with_sizes(nonzero, d)
            .into_iter()
            .map(K::I)
            .collect(),
        K::B(t) => t
            .clone()
            .split_with_sizes(nonzero, d)
            .into_iter()
            .map(K::B)
            .collect(),
    };
    for s in sizes {
        let mut shape = x.shape.clone();
        shape[axis] = s;
        if s == 0 {
            out.push(Some(full(shape, 0.0, x.dtype, dev)?));
        } else {
            let k = pieces
                .pop_front()
                .ok_or_else(|| run_err("Split: missing piece"))?;
            out.push(Some(Val::new(k, shape, x.dtype)));
        }
    }
    Ok(out)
}

/// Concat.
pub(super) fn concat<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let first = req(ins, 0, op)?;
    let r = first.rank();
    let axis = norm_axis(a.int("axis", 0), r)?;
    let mut shape = first.shape.clone();
    shape[axis] = 0;
    let mut parts = Vec::new();
    for v in ins.iter() {
        let v = v.as_ref().ok_or_else(|| run_err("Concat: missing input"))?;
        if v.rank() != r
            || v.shape
                .iter()
                .enumerate()
                .any(|(i, &d)| i != axis && d != first.shape[i])
            || v.class() != first.class()
        {
            return Err(run_err("Concat: inputs differ in rank, shape or type"));
        }
        shape[axis] += v.shape[axis];
        if v.numel() > 0 {
            parts.push(v.k.clone());
        }
    }
    let d = bax(r, axis);
    if parts.is_empty() {
        return one(full(shape, 0.0, first.dtype, dev)?);
    }
    let k = crate::burn::tensor::cat(parts, d)?;
    one(Val::new(k, shape, first.dtype))
}

// The ops of this file, found from their names (see `super::find`).
table! {
    "Slice" => slice_op,
    "Split" => split,
    "Concat" => concat,
}
