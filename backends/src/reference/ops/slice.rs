//! Cutting, joining and reversing along axes: Slice, Split, Concat, ReverseSequence.
use super::{attr_or_input, norm_axes};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

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

pub(super) fn op_slice(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_split(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_concat(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let ts: Vec<&T> = (0..ins.len()).map(|i| inp(ins, i)).collect::<R<_>>()?;
    let r = ts.first().map(|t| t.rank()).unwrap_or(0);
    let axis = norm_axis(
        n.int_opt("axis")
            .ok_or_else(|| err("Concat without axis"))?,
        r,
    )?;
    one(concat(&ts, axis)?)
}

pub(super) fn op_reverse_sequence(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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
}
