//! Ops that move elements around: Reshape, Transpose, Concat, Split, Slice, Gather*, Scatter*,
//! Expand, Tile, Pad, Shape, Constant*, Range, OneHot, Trilu, Unique, NonZero, ...
use super::tensor::*;
use super::{Cx, OpFn, V, inp, one, opt};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use std::collections::BTreeMap;

type Out = R<Vec<V>>;

/// Ints from attribute `attr` when the opset is below `since`, else from input `i` (None when
/// absent either way).
pub fn attr_or_input(
    cx: &Cx,
    n: &Node,
    ins: &[Option<&V>],
    attr: &str,
    i: usize,
    since: i64,
) -> R<Option<Vec<i64>>> {
    if cx.opset < since {
        Ok(n.ints(attr).map(|v| v.to_vec()))
    } else {
        Ok(match opt(ins, i)? {
            Some(t) => Some(t.ints()?),
            None => None,
        })
    }
}

/// Normalized, deduplicated-checked axes.
pub fn norm_axes(axes: &[i64], rank: usize) -> R<Vec<usize>> {
    let mut out = Vec::new();
    for &a in axes {
        let a = norm_axis(a, rank)?;
        if out.contains(&a) {
            return Err(err(format!("axis {a} repeated in {axes:?}")));
        }
        out.push(a);
    }
    Ok(out)
}

fn op_identity(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    match ins.first().copied().flatten() {
        Some(v) => Ok(vec![v.clone()]),
        None => Err(err("missing input")),
    }
}

fn op_reshape(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let spec = if cx.opset < 5 {
        n.ints("shape").unwrap_or(&[]).to_vec()
    } else {
        inp(ins, 1)?.ints()?
    };
    let allowzero = n.int("allowzero", 0) != 0;
    let mut shape = Vec::with_capacity(spec.len());
    let mut infer = None;
    for (i, &d) in spec.iter().enumerate() {
        if d == -1 {
            if infer.is_some() {
                return Err(err("more than one -1 in Reshape"));
            }
            infer = Some(i);
            shape.push(1);
        } else if d == 0 && !allowzero {
            shape.push(
                *t.shape
                    .get(i)
                    .ok_or_else(|| err(format!("Reshape: 0 at {i} beyond input rank")))?,
            );
        } else if d < 0 {
            return Err(err(format!("Reshape: dimension {d}")));
        } else {
            shape.push(d as usize);
        }
    }
    if let Some(i) = infer {
        let rest = numel(&shape);
        if rest == 0 || t.len() % rest != 0 {
            return Err(err(format!(
                "Reshape: cannot infer -1 of {spec:?} for {:?}",
                t.shape
            )));
        }
        shape[i] = t.len() / rest;
    }
    one(t.reshaped(shape)?)
}

fn op_flatten(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let r = t.rank() as i64;
    let mut a = n.int("axis", 1);
    if a < 0 {
        a += r;
    }
    if a < 0 || a > r {
        return Err(err(format!("Flatten axis {a} for rank {r}")));
    }
    let a = a as usize;
    one(t.reshaped(vec![numel(&t.shape[..a]), numel(&t.shape[a..])])?)
}

fn op_squeeze(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let axes = attr_or_input(cx, n, ins, "axes", 1, 13)?;
    let shape: Vec<usize> = match axes {
        None => t.shape.iter().copied().filter(|&d| d != 1).collect(),
        Some(ax) => {
            let ax = norm_axes(&ax, t.rank())?;
            for &a in &ax {
                if t.shape[a] != 1 {
                    return Err(err(format!("Squeeze axis {a} has size {}", t.shape[a])));
                }
            }
            t.shape
                .iter()
                .enumerate()
                .filter(|(i, _)| !ax.contains(i))
                .map(|(_, &d)| d)
                .collect()
        }
    };
    one(t.reshaped(shape)?)
}

fn op_unsqueeze(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let axes =
        attr_or_input(cx, n, ins, "axes", 1, 13)?.ok_or_else(|| err("Unsqueeze without axes"))?;
    let r = t.rank() + axes.len();
    let ax = norm_axes(&axes, r)?;
    let mut shape = Vec::with_capacity(r);
    let mut it = t.shape.iter();
    for i in 0..r {
        if ax.contains(&i) {
            shape.push(1);
        } else {
            shape.push(*it.next().ok_or_else(|| err("Unsqueeze axes"))?);
        }
    }
    one(t.reshaped(shape)?)
}

/// Transposes `t` by `perm`.
pub fn transpose(t: &T, perm: &[usize]) -> R<T> {
    let r = t.rank();
    let mut seen = vec![false; r];
    if perm.len() != r {
        return Err(err(format!("perm {perm:?} for rank {r}")));
    }
    for &p in perm {
        if p >= r || seen[p] {
            return Err(err(format!("bad perm {perm:?}")));
        }
        seen[p] = true;
    }
    let st = strides(&t.shape);
    let shape: Vec<usize> = perm.iter().map(|&p| t.shape[p]).collect();
    let s: Vec<isize> = perm.iter().map(|&p| st[p] as isize).collect();
    Ok(t.take(shape.clone(), &strided_index(&shape, &s, 0)))
}

fn op_transpose(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let perm: Vec<usize> = match n.ints("perm") {
        Some(p) => p
            .iter()
            .map(|&x| {
                if x < 0 {
                    Err(err("negative perm"))
                } else {
                    Ok(x as usize)
                }
            })
            .collect::<R<_>>()?,
        None => (0..t.rank()).rev().collect(),
    };
    one(transpose(t, &perm)?)
}

/// Concatenates tensors along `axis`.
pub fn concat(ts: &[&T], axis: usize) -> R<T> {
    let first = ts.first().ok_or_else(|| err("Concat of nothing"))?;
    let r = first.rank();
    if axis >= r.max(1) {
        return Err(err(format!("Concat axis {axis} for rank {r}")));
    }
    let mut shape = first.shape.clone();
    shape[axis] = 0;
    for t in ts {
        if t.rank() != r
            || t.shape
                .iter()
                .enumerate()
                .any(|(i, &d)| i != axis && d != first.shape[i])
        {
            return Err(err(format!(
                "Concat of {:?} and {:?} on axis {axis}",
                first.shape, t.shape
            )));
        }
        if t.dt != first.dt {
            return Err(err(format!("Concat of {} and {}", first.dt, t.dt)));
        }
        shape[axis] += t.shape[axis];
    }
    let outer = numel(&shape[..axis]);
    let mut buf = first.buf.empty_like();
    for o in 0..outer {
        for t in ts {
            let chunk = numel(&t.shape[axis..]);
            buf.extend_range(&t.buf, o * chunk, (o + 1) * chunk)?;
        }
    }
    Ok(first.with(shape, buf))
}

fn op_concat(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let ts: Vec<&T> = (0..ins.len()).map(|i| inp(ins, i)).collect::<R<_>>()?;
    let r = ts.first().map(|t| t.rank()).unwrap_or(0);
    let axis = norm_axis(
        n.int_opt("axis")
            .ok_or_else(|| err("Concat without axis"))?,
        r,
    )?;
    one(concat(&ts, axis)?)
}

/// Slices `t` along `axis` to `[lo, lo+len)`.
pub fn slice_axis(t: &T, axis: usize, lo: usize, len: usize) -> T {
    let (outer, dim, inner) = split_at_axis(&t.shape, axis);
    let mut idx = Vec::with_capacity(outer * len * inner);
    for o in 0..outer {
        for k in lo..lo + len {
            let base = (o * dim + k) * inner;
            idx.extend(base..base + inner);
        }
    }
    let mut shape = t.shape.clone();
    shape[axis] = len;
    t.take(shape, &idx)
}

fn op_split(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let axis = norm_axis(n.int("axis", 0), t.rank())?;
    let dim = t.shape[axis];
    let nout = n.outputs.len();
    let sizes: Vec<usize> = match attr_or_input(cx, n, ins, "split", 1, 13)? {
        Some(s) => dims(&s)?,
        None => {
            let parts = n.int("num_outputs", nout as i64).max(1) as usize;
            if cx.opset >= 18 && n.int_opt("num_outputs").is_some() {
                let chunk = dim.div_ceil(parts);
                (0..parts)
                    .map(|i| chunk.min(dim.saturating_sub(i * chunk)))
                    .collect()
            } else {
                if dim % parts != 0 {
                    return Err(err(format!("Split of {dim} into {parts} equal parts")));
                }
                vec![dim / parts; parts]
            }
        }
    };
    if sizes.iter().sum::<usize>() != dim {
        return Err(err(format!("Split sizes {sizes:?} for dimension {dim}")));
    }
    let mut lo = 0;
    let mut out = Vec::new();
    for s in sizes {
        out.push(V::T(slice_axis(t, axis, lo, s)));
        lo += s;
    }
    Ok(out)
}

/// `(start, count)` of a slice of a dimension of size `dim`.
pub fn slice_range(start: i64, end: i64, step: i64, dim: usize) -> R<(i64, usize)> {
    if step == 0 {
        return Err(err("Slice step 0"));
    }
    let d = dim as i64;
    let fix = |x: i64| if x < 0 { x.saturating_add(d) } else { x };
    let (s, e) = (fix(start), fix(end));
    if step > 0 {
        let s = s.clamp(0, d);
        let e = e.clamp(0, d);
        let n = if e > s { (e - s + step - 1) / step } else { 0 };
        Ok((s, n as usize))
    } else {
        let s = s.clamp(-1, d - 1);
        let e = e.clamp(-1, d - 1);
        let n = if s > e {
            (s - e + (-step) - 1) / (-step)
        } else {
            0
        };
        Ok((s, n as usize))
    }
}

fn op_slice(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let (starts, ends, axes, steps) = if cx.opset < 10 {
        (
            n.ints("starts").unwrap_or(&[]).to_vec(),
            n.ints("ends").unwrap_or(&[]).to_vec(),
            n.ints("axes").map(|v| v.to_vec()),
            None,
        )
    } else {
        (
            inp(ins, 1)?.ints()?,
            inp(ins, 2)?.ints()?,
            opt(ins, 3)?.map(|x| x.ints()).transpose()?,
            opt(ins, 4)?.map(|x| x.ints()).transpose()?,
        )
    };
    if starts.len() != ends.len() {
        return Err(err("Slice starts and ends differ in length"));
    }
    let axes = match axes {
        Some(a) => norm_axes(&a, t.rank())?,
        None if starts.len() <= t.rank() => (0..starts.len()).collect(),
        None => return Err(err("Slice: more starts than dimensions")),
    };
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(err("Slice inputs differ in length"));
    }
    let st = strides(&t.shape);
    let mut shape = t.shape.clone();
    let mut s: Vec<isize> = st.iter().map(|&x| x as isize).collect();
    let mut base = 0isize;
    for i in 0..axes.len() {
        let a = axes[i];
        let (lo, cnt) = slice_range(starts[i], ends[i], steps[i], t.shape[a])?;
        shape[a] = cnt;
        if cnt > 0 {
            base += lo as isize * st[a] as isize;
        }
        s[a] = steps[i] as isize * st[a] as isize;
    }
    if numel(&shape) == 0 {
        return one(t.take(shape, &[]));
    }
    one(t.take(shape.clone(), &strided_index(&shape, &s, base)))
}

fn fix_index(i: i64, dim: usize) -> R<usize> {
    let d = dim as i64;
    let j = if i < 0 { i + d } else { i };
    if j < 0 || j >= d {
        return Err(err(format!("index {i} out of range for dimension {dim}")));
    }
    Ok(j as usize)
}

fn op_gather(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let ind = inp(ins, 1)?;
    let axis = norm_axis(n.int("axis", 0), t.rank())?;
    let (outer, dim, inner) = split_at_axis(&t.shape, axis);
    let iv = ind.ints()?;
    let mut idx = Vec::with_capacity(outer * iv.len() * inner);
    for o in 0..outer {
        for &i in &iv {
            let k = fix_index(i, dim)?;
            let base = (o * dim + k) * inner;
            idx.extend(base..base + inner);
        }
    }
    let mut shape = t.shape[..axis].to_vec();
    shape.extend(&ind.shape);
    shape.extend(&t.shape[axis + 1..]);
    one(t.take(shape, &idx))
}

fn op_gather_elements(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let ind = inp(ins, 1)?;
    let axis = norm_axis(n.int("axis", 0), t.rank())?;
    if ind.rank() != t.rank() {
        return Err(err("GatherElements ranks differ"));
    }
    let st = strides(&t.shape);
    let iv = ind.ints()?;
    let mut idx = Vec::with_capacity(iv.len());
    for (p, &i) in iv.iter().enumerate() {
        let mi = unravel(p, &ind.shape);
        let mut flat = 0;
        for d in 0..t.rank() {
            let c = if d == axis {
                fix_index(i, t.shape[d])?
            } else {
                mi[d]
            };
            if c >= t.shape[d] {
                return Err(err("GatherElements index shape exceeds data"));
            }
            flat += c * st[d];
        }
        idx.push(flat);
    }
    one(t.take(ind.shape.clone(), &idx))
}

fn scatter_elements(n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let ind = inp(ins, 1)?;
    let upd = inp(ins, 2)?;
    let axis = norm_axis(n.int("axis", 0), t.rank())?;
    let red = n.string("reduction", "none");
    if ind.shape != upd.shape || ind.rank() != t.rank() {
        return Err(err("ScatterElements shapes"));
    }
    let st = strides(&t.shape);
    let iv = ind.ints()?;
    let mut out = t.clone();
    for (p, &i) in iv.iter().enumerate() {
        let mi = unravel(p, &ind.shape);
        let mut flat = 0;
        for d in 0..t.rank() {
            let c = if d == axis {
                fix_index(i, t.shape[d])?
            } else {
                mi[d]
            };
            if c >= t.shape[d] {
                return Err(err("ScatterElements index shape exceeds data"));
            }
            flat += c * st[d];
        }
        reduce_into(&mut out.buf, flat, &upd.buf, p, &red)?;
    }
    one(out)
}

fn reduce_into(dst: &mut Buf, i: usize, src: &Buf, j: usize, red: &str) -> R<()> {
    match red {
        "none" => dst.set_from(i, src, j),
        _ => match (dst, src) {
            (Buf::F(a), Buf::F(b)) => {
                a[i] = match red {
                    "add" => a[i] + b[j],
                    "mul" => a[i] * b[j],
                    "max" => a[i].max(b[j]),
                    "min" => a[i].min(b[j]),
                    r => return Err(unsup(format!("reduction {r}"))),
                };
                Ok(())
            }
            (Buf::I(a), Buf::I(b)) => {
                a[i] = match red {
                    "add" => a[i].wrapping_add(b[j]),
                    "mul" => a[i].wrapping_mul(b[j]),
                    "max" => a[i].max(b[j]),
                    "min" => a[i].min(b[j]),
                    r => return Err(unsup(format!("reduction {r}"))),
                };
                Ok(())
            }
            _ => Err(unsup(format!("reduction {red} of this element type"))),
        },
    }
}

fn op_scatter_elements(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    scatter_elements(n, ins)
}

fn op_gather_nd(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let ind = inp(ins, 1)?;
    let b = n.int("batch_dims", 0) as usize;
    let q = ind.rank();
    if q == 0 || b >= q || b > t.rank() {
        return Err(err("GatherND ranks"));
    }
    let k = ind.shape[q - 1];
    if b + k > t.rank() {
        return Err(err("GatherND index depth exceeds data rank"));
    }
    let batch = numel(&t.shape[..b]);
    let slice_shape = &t.shape[b + k..];
    let slice = numel(slice_shape);
    let per_batch_data = numel(&t.shape[b..]);
    let nidx = numel(&ind.shape[b..q - 1]);
    let st = strides(&t.shape[b..]);
    let iv = ind.ints()?;
    let mut idx = Vec::new();
    for bi in 0..batch {
        for j in 0..nidx {
            let row = &iv[(bi * nidx + j) * k..(bi * nidx + j + 1) * k];
            let mut flat = bi * per_batch_data;
            for (d, &x) in row.iter().enumerate() {
                flat += fix_index(x, t.shape[b + d])? * st[d];
            }
            idx.extend(flat..flat + slice);
        }
    }
    let mut shape = ind.shape[..q - 1].to_vec();
    shape.extend(slice_shape);
    one(t.take(shape, &idx))
}

fn op_scatter_nd(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let ind = inp(ins, 1)?;
    let upd = inp(ins, 2)?;
    let red = n.string("reduction", "none");
    let q = ind.rank();
    if q == 0 {
        return Err(err("ScatterND indices rank 0"));
    }
    let k = ind.shape[q - 1];
    if k > t.rank() {
        return Err(err("ScatterND index depth exceeds data rank"));
    }
    let slice = numel(&t.shape[k..]);
    let st = strides(&t.shape);
    let iv = ind.ints()?;
    let nidx = numel(&ind.shape[..q - 1]);
    if upd.len() != nidx * slice {
        return Err(err("ScatterND updates shape"));
    }
    let mut out = t.clone();
    for j in 0..nidx {
        let mut flat = 0;
        for d in 0..k {
            flat += fix_index(iv[j * k + d], t.shape[d])? * st[d];
        }
        for s in 0..slice {
            reduce_into(&mut out.buf, flat + s, &upd.buf, j * slice + s, &red)?;
        }
    }
    one(out)
}

fn op_expand(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let s = dims(&inp(ins, 1)?.ints()?)?;
    let out = bcast_shapes(&[&t.shape, &s])?;
    check_size(&out)?;
    one(expand_to(t, &out)?)
}

fn op_tile(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let reps = dims(&inp(ins, 1)?.ints()?)?;
    if reps.len() != t.rank() {
        return Err(err("Tile repeats length differs from rank"));
    }
    let shape: Vec<usize> = t.shape.iter().zip(&reps).map(|(a, b)| a * b).collect();
    check_size(&shape)?;
    let st = strides(&t.shape);
    let n = numel(&shape);
    let mut idx = Vec::with_capacity(n);
    for p in 0..n {
        let mi = unravel(p, &shape);
        idx.push(
            mi.iter()
                .enumerate()
                .map(|(d, &i)| (i % t.shape[d]) * st[d])
                .sum(),
        );
    }
    one(t.take(shape, &idx))
}

fn op_pad(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_shape(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let r = t.rank() as i64;
    let fix = |x: i64| (if x < 0 { x + r } else { x }).clamp(0, r) as usize;
    let s = fix(n.int("start", 0));
    let e = fix(n.int("end", r));
    let v: Vec<i64> = if s < e {
        t.shape[s..e].iter().map(|&d| d as i64).collect()
    } else {
        vec![]
    };
    one(T::vec_i64(v))
}

fn op_size(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(T::scalar_i64(inp(ins, 0)?.len() as i64))
}

fn proto_to_t(p: &mutagraph_ir::tensor::Tensor) -> R<T> {
    let h = crate::value::HostTensor::from_proto(p).map_err(|e| err(e.to_string()))?;
    super::host_to_t(&h)
}

fn op_constant_of_shape(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let shape = dims(&inp(ins, 0)?.ints()?)?;
    let total = check_size(&shape)?;
    let v = match n.tensor("value") {
        Some(p) => proto_to_t(p)?,
        None => T::f(DType::F32, vec![1], vec![0.0]),
    };
    if v.len() != 1 {
        return Err(err("ConstantOfShape value must have one element"));
    }
    one(v.take(shape, &vec![0; total]))
}

fn op_constant(_: &Cx, n: &Node, _: &[Option<&V>]) -> Out {
    let a = n
        .attributes
        .first()
        .ok_or_else(|| err("Constant without value"))?;
    one(match (&a.name[..], &a.value) {
        ("value", AttrValue::Tensor(p)) => proto_to_t(p)?,
        ("value_float", AttrValue::Float(f)) => T::f(DType::F32, vec![], vec![*f as f64]),
        ("value_floats", AttrValue::Floats(f)) => T::f(
            DType::F32,
            vec![f.len()],
            f.iter().map(|&x| x as f64).collect(),
        ),
        ("value_int", AttrValue::Int(i)) => T::scalar_i64(*i),
        ("value_ints", AttrValue::Ints(i)) => T::vec_i64(i.clone()),
        ("value_string", AttrValue::String(s)) => T {
            dt: DType::String,
            shape: vec![],
            buf: Buf::S(vec![s.clone()]),
        },
        ("value_strings", AttrValue::Strings(s)) => T {
            dt: DType::String,
            shape: vec![s.len()],
            buf: Buf::S(s.clone()),
        },
        (name, _) => return Err(unsup(format!("Constant attribute {name}"))),
    })
}

fn op_range(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let s = inp(ins, 0)?;
    let l = inp(ins, 1)?;
    let d = inp(ins, 2)?;
    match &s.buf {
        Buf::I(_) => {
            let (a, b, c) = (s.scalar_i()?, l.scalar_i()?, d.scalar_i()?);
            if c == 0 {
                return Err(err("Range delta 0"));
            }
            let n = ((b - a) as f64 / c as f64).ceil().max(0.0) as usize;
            check_size(&[n])?;
            one(T::i(
                s.dt,
                vec![n],
                (0..n).map(|i| a + i as i64 * c).collect(),
            ))
        }
        _ => {
            let (a, b, c) = (s.scalar_f()?, l.scalar_f()?, d.scalar_f()?);
            if c == 0.0 {
                return Err(err("Range delta 0"));
            }
            let n = ((b - a) / c).ceil().max(0.0) as usize;
            check_size(&[n])?;
            one(T::f(
                s.dt,
                vec![n],
                (0..n).map(|i| a + i as f64 * c).collect(),
            ))
        }
    }
}

fn op_one_hot(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let ind = inp(ins, 0)?;
    let depth = inp(ins, 1)?.scalar_f()? as i64;
    let vals = inp(ins, 2)?;
    if vals.len() != 2 || depth < 1 {
        return Err(err("OneHot values / depth"));
    }
    let r = ind.rank() + 1;
    let axis = norm_axis(n.int("axis", -1), r)?;
    let mut shape = ind.shape.clone();
    shape.insert(axis, depth as usize);
    check_size(&shape)?;
    let iv = ind.floats()?;
    let (outer, _, inner) = split_at_axis(&shape, axis);
    let total = numel(&shape);
    let mut idx = vec![0usize; total];
    for o in 0..outer {
        for i in 0..inner {
            let mut k = iv[o * inner + i] as i64;
            if k < 0 {
                k += depth;
            }
            if k >= 0 && k < depth {
                idx[(o * depth as usize + k as usize) * inner + i] = 1;
            }
        }
    }
    one(vals.take(shape, &idx))
}

fn op_eye_like(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    if t.rank() != 2 {
        return Err(err("EyeLike needs a 2-D input"));
    }
    let dt = n
        .int_opt("dtype")
        .map(|c| DType::from_code(c as i32))
        .unwrap_or(t.dt);
    let k = n.int("k", 0);
    let (h, w) = (t.shape[0], t.shape[1]);
    let mut v = vec![0.0; h * w];
    for i in 0..h as i64 {
        let j = i + k;
        if j >= 0 && j < w as i64 {
            v[i as usize * w + j as usize] = 1.0;
        }
    }
    one(T::from_f64s(dt, vec![h, w], v)?)
}

fn op_trilu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let k = match opt(ins, 1)? {
        Some(k) => k.scalar_i()?,
        None => 0,
    };
    let upper = n.int("upper", 1) != 0;
    if t.rank() < 2 {
        return Err(err("Trilu needs rank >= 2"));
    }
    let (h, w) = (t.shape[t.rank() - 2], t.shape[t.rank() - 1]);
    let mut out = t.clone();
    let zero = t.buf.zeros_like(1);
    for p in 0..t.len() {
        let i = ((p / w.max(1)) % h.max(1)) as i64;
        let j = (p % w.max(1)) as i64;
        let keep = if upper { j - i >= k } else { j - i <= k };
        if !keep {
            out.buf.set_from(p, &zero, 0)?;
        }
    }
    one(out)
}

fn op_reverse_sequence(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let lens = inp(ins, 1)?.ints()?;
    let ba = n.int("batch_axis", 1) as usize;
    let ta = n.int("time_axis", 0) as usize;
    if t.rank() < 2 || ba >= t.rank() || ta >= t.rank() || ba == ta {
        return Err(err("ReverseSequence axes"));
    }
    // The spec gives sequence_lens the shape [batch_size], each length within the time axis:
    // anything else is an invalid model at these values, not a result to compare.
    if lens.len() != t.shape[ba] {
        return Err(err(format!(
            "ReverseSequence sequence_lens has {} entries for a batch of {}",
            lens.len(),
            t.shape[ba]
        )));
    }
    if let Some(l) = lens.iter().find(|&&l| l < 0 || l > t.shape[ta] as i64) {
        return Err(err(format!(
            "ReverseSequence sequence length {l} is outside 0..={}",
            t.shape[ta]
        )));
    }
    let st = strides(&t.shape);
    let mut idx = Vec::with_capacity(t.len());
    for p in 0..t.len() {
        let mut mi = unravel(p, &t.shape);
        let b = mi[ba];
        let l = *lens.get(b).ok_or_else(|| err("sequence_lens too short"))?;
        let l = l.clamp(0, t.shape[ta] as i64) as usize;
        if mi[ta] < l {
            mi[ta] = l - 1 - mi[ta];
        }
        idx.push(mi.iter().zip(&st).map(|(a, b)| a * b).sum());
    }
    one(t.take(t.shape.clone(), &idx))
}

fn op_compress(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let c = inp(ins, 1)?.ints()?;
    match n.int_opt("axis") {
        None => {
            let idx: Vec<usize> = (0..t.len())
                .filter(|&i| c.get(i).is_some_and(|&x| x != 0))
                .collect();
            one(t.take(vec![idx.len()], &idx))
        }
        Some(a) => {
            let axis = norm_axis(a, t.rank())?;
            let (outer, dim, inner) = split_at_axis(&t.shape, axis);
            let keep: Vec<usize> = (0..dim)
                .filter(|&i| c.get(i).is_some_and(|&x| x != 0))
                .collect();
            let mut idx = Vec::new();
            for o in 0..outer {
                for &k in &keep {
                    let base = (o * dim + k) * inner;
                    idx.extend(base..base + inner);
                }
            }
            let mut shape = t.shape.clone();
            shape[axis] = keep.len();
            one(t.take(shape, &idx))
        }
    }
}

fn op_nonzero(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let nz: Vec<usize> = match &t.buf {
        Buf::F(v) => (0..v.len()).filter(|&i| v[i] != 0.0).collect(),
        Buf::I(v) => (0..v.len()).filter(|&i| v[i] != 0).collect(),
        Buf::B(v) => (0..v.len()).filter(|&i| v[i]).collect(),
        Buf::S(v) => (0..v.len()).filter(|&i| !v[i].is_empty()).collect(),
    };
    let r = t.rank();
    let mut out = vec![0i64; r * nz.len()];
    for (j, &p) in nz.iter().enumerate() {
        let mi = unravel(p, &t.shape);
        for d in 0..r {
            out[d * nz.len() + j] = mi[d] as i64;
        }
    }
    one(T::i(DType::I64, vec![r, nz.len()], out))
}

fn cmp_elems(buf: &Buf, a: &[usize], b: &[usize]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    for (&i, &j) in a.iter().zip(b) {
        let o = match buf {
            Buf::F(v) => super::reduce::nan_last(v[i], v[j]),
            Buf::I(v) => v[i].cmp(&v[j]),
            Buf::B(v) => v[i].cmp(&v[j]),
            Buf::S(v) => v[i].cmp(&v[j]),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn op_unique(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let sorted = n.int("sorted", 1) != 0;
    // Each "item" is a list of flat positions (one element, or one slice along axis).
    let (items, axis): (Vec<Vec<usize>>, Option<usize>) = match n.int_opt("axis") {
        None => ((0..t.len()).map(|i| vec![i]).collect(), None),
        Some(a) => {
            let axis = norm_axis(a, t.rank())?;
            let (outer, dim, inner) = split_at_axis(&t.shape, axis);
            let items = (0..dim)
                .map(|k| {
                    let mut v = Vec::with_capacity(outer * inner);
                    for o in 0..outer {
                        let base = (o * dim + k) * inner;
                        v.extend(base..base + inner);
                    }
                    v
                })
                .collect();
            (items, Some(axis))
        }
    };
    // First occurrence of each distinct item, in order of appearance.
    let mut firsts: Vec<usize> = Vec::new();
    let mut inverse = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        match firsts
            .iter()
            .position(|&f| cmp_elems(&t.buf, &items[f], it).is_eq())
        {
            Some(p) => inverse.push(p),
            None => {
                inverse.push(firsts.len());
                firsts.push(i);
            }
        }
    }
    let mut order: Vec<usize> = (0..firsts.len()).collect();
    if sorted {
        order.sort_by(|&a, &b| cmp_elems(&t.buf, &items[firsts[a]], &items[firsts[b]]));
    }
    let mut rank_of = vec![0; order.len()];
    for (r, &o) in order.iter().enumerate() {
        rank_of[o] = r;
    }
    let counts: Vec<i64> = order
        .iter()
        .map(|&o| inverse.iter().filter(|&&x| x == o).count() as i64)
        .collect();
    let idx_out: Vec<i64> = order.iter().map(|&o| firsts[o] as i64).collect();
    let inv_out: Vec<i64> = inverse.iter().map(|&x| rank_of[x] as i64).collect();
    let y = match axis {
        None => {
            let idx: Vec<usize> = order.iter().map(|&o| firsts[o]).collect();
            t.take(vec![idx.len()], &idx)
        }
        Some(axis) => {
            let parts: Vec<T> = order
                .iter()
                .map(|&o| slice_axis(t, axis, firsts[o], 1))
                .collect();
            if parts.is_empty() {
                let mut s = t.shape.clone();
                s[axis] = 0;
                t.take(s, &[])
            } else {
                concat(&parts.iter().collect::<Vec<_>>(), axis)?
            }
        }
    };
    Ok(vec![
        V::T(y),
        V::T(T::vec_i64(idx_out)),
        V::T(T::vec_i64(inv_out)),
        V::T(T::vec_i64(counts)),
    ])
}

fn op_depth_to_space(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let b = n.int("blocksize", 0);
    if t.rank() != 4 || b <= 0 {
        return Err(err("DepthToSpace needs NCHW and blocksize > 0"));
    }
    let b = b as usize;
    let (nn, c, h, w) = (t.shape[0], t.shape[1], t.shape[2], t.shape[3]);
    if c % (b * b) != 0 {
        return Err(err("DepthToSpace channels"));
    }
    let co = c / (b * b);
    let crd = n.string("mode", "DCR") == "CRD";
    let r = if crd {
        t.reshaped(vec![nn, co, b, b, h, w])?
    } else {
        t.reshaped(vec![nn, b, b, co, h, w])?
    };
    let perm: &[usize] = if crd {
        &[0, 1, 4, 2, 5, 3]
    } else {
        &[0, 3, 4, 1, 5, 2]
    };
    one(transpose(&r, perm)?.reshaped(vec![nn, co, h * b, w * b])?)
}

fn op_space_to_depth(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let b = n.int("blocksize", 0);
    if t.rank() != 4 || b <= 0 {
        return Err(err("SpaceToDepth needs NCHW and blocksize > 0"));
    }
    let b = b as usize;
    let (nn, c, h, w) = (t.shape[0], t.shape[1], t.shape[2], t.shape[3]);
    if h % b != 0 || w % b != 0 {
        return Err(err("SpaceToDepth spatial size"));
    }
    let r = t.reshaped(vec![nn, c, h / b, b, w / b, b])?;
    one(transpose(&r, &[0, 3, 5, 1, 2, 4])?.reshaped(vec![nn, c * b * b, h / b, w / b])?)
}

pub(super) fn register(t: &mut BTreeMap<&'static str, OpFn>) {
    let ops: &[(&'static str, OpFn)] = &[
        ("Identity", op_identity),
        ("Reshape", op_reshape),
        ("Flatten", op_flatten),
        ("Squeeze", op_squeeze),
        ("Unsqueeze", op_unsqueeze),
        ("Transpose", op_transpose),
        ("Concat", op_concat),
        ("Split", op_split),
        ("Slice", op_slice),
        ("Gather", op_gather),
        ("GatherElements", op_gather_elements),
        ("GatherND", op_gather_nd),
        ("ScatterElements", op_scatter_elements),
        ("Scatter", op_scatter_elements),
        ("ScatterND", op_scatter_nd),
        ("Expand", op_expand),
        ("Tile", op_tile),
        ("Pad", op_pad),
        ("Shape", op_shape),
        ("Size", op_size),
        ("ConstantOfShape", op_constant_of_shape),
        ("Constant", op_constant),
        ("Range", op_range),
        ("OneHot", op_one_hot),
        ("EyeLike", op_eye_like),
        ("Trilu", op_trilu),
        ("ReverseSequence", op_reverse_sequence),
        ("Compress", op_compress),
        ("NonZero", op_nonzero),
        ("Unique", op_unique),
        ("DepthToSpace", op_depth_to_space),
        ("SpaceToDepth", op_space_to_depth),
    ];
    for (k, f) in ops {
        t.insert(k, *f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_ranges() {
        // [0..10) step 3 -> 0, 3, 6, 9
        assert_eq!(slice_range(0, 10, 3, 10).unwrap(), (0, 4));
        // negative step from the end: -1 .. i64::MIN -> 9, 8, ..., 0
        assert_eq!(slice_range(-1, i64::MIN, -1, 10).unwrap(), (9, 10));
        // clamped end
        assert_eq!(slice_range(2, 1000, 1, 5).unwrap(), (2, 3));
        assert!(slice_range(0, 1, 0, 5).is_err());
    }

    #[test]
    fn transpose_2x3() {
        let t = T::i(DType::I64, vec![2, 3], vec![1, 2, 3, 4, 5, 6]);
        let u = transpose(&t, &[1, 0]).unwrap();
        assert_eq!(u.shape, vec![3, 2]);
        assert_eq!(u.is().unwrap(), &[1, 4, 2, 5, 3, 6]);
    }
}
