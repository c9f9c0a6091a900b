//! Reading elements at indices or by a condition: Gather, GatherElements, GatherND, Compress,
//! NonZero, Unique.
use super::slice::{concat, slice_axis};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

pub(super) fn fix_index(i: i64, dim: usize) -> R<usize> {
    let d = dim as i64;
    let j = if i < 0 { i + d } else { i };
    if j < 0 || j >= d {
        return Err(err(format!("index {i} out of range for dimension {dim}")));
    }
    Ok(j as usize)
}

pub(super) fn op_gather(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

/// GatherElements / ScatterElements: the flat position in `t` (of strides `st`) of element `p`
/// of indices of shape `ind_shape`, which holds index `i` along `axis` (on the other axes the
/// element's own coordinates).
pub(super) fn element_position(
    t: &T,
    st: &[usize],
    ind_shape: &[usize],
    axis: usize,
    p: usize,
    i: i64,
    op: &str,
) -> R<usize> {
    let mi = unravel(p, ind_shape);
    let mut flat = 0;
    for d in 0..t.rank() {
        let c = if d == axis {
            fix_index(i, t.shape[d])?
        } else {
            mi[d]
        };
        if c >= t.shape[d] {
            return Err(err(format!("{op} index shape exceeds data")));
        }
        flat += c * st[d];
    }
    Ok(flat)
}

pub(super) fn op_gather_elements(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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
        idx.push(element_position(
            t,
            &st,
            &ind.shape,
            axis,
            p,
            i,
            "GatherElements",
        )?);
    }
    one(t.take(ind.shape.clone(), &idx))
}

pub(super) fn op_gather_nd(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_compress(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_nonzero(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_unique(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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
