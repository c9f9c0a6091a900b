//! Reading elements at indices: Gather, GatherElements, GatherND, Compress, NonZero.
use super::slice::slice;
use super::{Cx, Outs, Res, full, norm_axis, one, req};
use crate::burn::tensor::{K, R, Val, bax, each, mk_i, reshaped, run_err, run_unsup};
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::{Int, Tensor, TensorData};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

/// Gather.
pub(super) fn gather<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let idx = req(ins, 1, op)?;
    let axis = norm_axis(a.int("axis", 0), x.rank())?;
    let n = x.shape[axis] as i64;
    let mut iv = idx.host_i64();
    fix_indices(&mut iv, n, op)?;
    let mut shape: Vec<usize> = x.shape[..axis].to_vec();
    shape.extend_from_slice(&idx.shape);
    shape.extend_from_slice(&x.shape[axis + 1..]);
    if shape.len() > R {
        return Err(run_unsup(format!("rank {} above {R}", shape.len())));
    }
    let cnt = iv.len();
    if cnt == 0 || x.numel() == 0 {
        return one(full(shape, 0.0, x.dtype, dev)?);
    }
    let it = Tensor::<B, 1, Int>::from_data(burn::tensor::TensorData::new(iv, [cnt]), dev);
    let d = bax(x.rank(), axis);
    let k = each!(x.k.clone(), |t| t.select(d, it.clone()));
    let mut mid = x.shape.clone();
    mid[axis] = cnt;
    one(Val::new(k, mid, x.dtype).reshape(shape))
}

/// GatherElements.
pub(super) fn gather_elements<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let idx = req(ins, 1, op)?;
    let axis = norm_axis(a.int("axis", 0), x.rank())?;
    if idx.rank() != x.rank() {
        return Err(run_err("GatherElements: ranks differ"));
    }
    let n = x.shape[axis] as i64;
    let mut iv = idx.host_i64();
    for i in iv.iter_mut() {
        if *i < -n || *i >= n {
            return Err(run_err(format!("GatherElements: index {i} out of range")));
        }
        if *i < 0 {
            *i += n;
        }
    }
    // burn's gather wants the data and the indices of one shape outside the axis; ONNX
    // lets the indices be smaller there: the data is cut to them first.
    let mut ends: Vec<i64> = Vec::new();
    for (i, (&xd, &id)) in x.shape.iter().zip(&idx.shape).enumerate() {
        if i != axis && id > xd {
            return Err(run_err(format!(
                "GatherElements: indices dimension {i} ({id}) exceeds the data's ({xd})"
            )));
        }
        ends.push(if i == axis { xd } else { id } as i64);
    }
    let x = &slice(x, &vec![0; ends.len()], &ends, None, None, dev)?;
    let it = mk_i::<B>(iv, idx.shape.clone(), DType::I64, dev).i();
    let d = bax(x.rank(), axis);
    let k = each!(x.k.clone(), |t| t.gather(d, it.clone()));
    one(Val::new(k, idx.shape.clone(), x.dtype))
}

/// Normalizes ONNX indices (negative count from the end) and checks their range.
pub(super) fn fix_indices(v: &mut [i64], n: i64, op: &str) -> Res<()> {
    for i in v.iter_mut() {
        if *i < -n || *i >= n {
            return Err(run_err(format!("{op}: index {i} out of range for {n}")));
        }
        if *i < 0 {
            *i += n;
        }
    }
    Ok(())
}

/// GatherND / ScatterND: the data seen as [P, Q] (P = the indexed leading dims, Q = the rest)
/// and the index tuples turned into row numbers.
pub(super) fn nd_rows<B: BurnBackend>(
    x: &Val<B>,
    idx: &Val<B>,
    op: &str,
) -> Res<(Vec<i64>, usize, usize, usize)> {
    let k = *idx
        .shape
        .last()
        .ok_or_else(|| run_err(format!("{op}: scalar indices")))?;
    if k == 0 || k > x.rank() {
        return Err(run_err(format!(
            "{op}: index tuples of {k} for rank {}",
            x.rank()
        )));
    }
    let iv = idx.host_i64();
    let n = iv.len() / k;
    let p: usize = x.shape[..k].iter().product();
    let q: usize = x.shape[k..].iter().product();
    let mut rows = Vec::with_capacity(n);
    for t in iv.chunks(k) {
        let mut row = 0i64;
        for (j, &i) in t.iter().enumerate() {
            let d = x.shape[j] as i64;
            let mut i = [i];
            fix_indices(&mut i, d, op)?;
            row = row * d + i[0];
        }
        rows.push(row);
    }
    Ok((rows, k, p, q))
}

/// GatherND.
pub(super) fn gather_nd<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let idx = req(ins, 1, op)?;
    let (rows, k, p, q) = nd_rows(x, idx, op)?;
    let mut shape = idx.shape[..idx.rank() - 1].to_vec();
    shape.extend_from_slice(&x.shape[k..]);
    if shape.len() > R {
        return Err(run_unsup(format!("rank {} above {R}", shape.len())));
    }
    let n = rows.len();
    if n == 0 || p * q == 0 {
        return Ok(vec![Some(full(shape, 0.0, x.dtype, dev)?)]);
    }
    let it = Tensor::<B, 1, Int>::from_data(TensorData::new(rows, [n]), dev);
    let flat = x.clone().reshape(vec![p, q]);
    let k2 = each!(flat.k, |t| t.select(R - 2, it.clone()));
    Ok(vec![Some(Val::new(k2, vec![n, q], x.dtype).reshape(shape))])
}

/// Compress.
pub(super) fn compress<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    // Compress
    let cond = req(ins, 1, op)?.host_i64();
    let (src, axis) = match a.int_opt("axis") {
        Some(ax) => (x.clone(), norm_axis(ax, x.rank())?),
        None => (x.clone().reshape(vec![x.numel()]), 0),
    };
    let n = src.shape[axis];
    if cond.len() > n {
        return Err(run_err("Compress: condition longer than the axis"));
    }
    let sel: Vec<i64> = (0..cond.len() as i64)
        .filter(|&i| cond[i as usize] != 0)
        .collect();
    let mut shape = src.shape.clone();
    shape[axis] = sel.len();
    if sel.is_empty() || src.numel() == 0 {
        return Ok(vec![Some(full(shape, 0.0, x.dtype, dev)?)]);
    }
    let m = sel.len();
    let it = Tensor::<B, 1, Int>::from_data(TensorData::new(sel, [m]), dev);
    let d = bax(src.rank(), axis);
    let k2 = each!(src.k, |t| t.select(d, it.clone()));
    Ok(vec![Some(Val::new(k2, shape, x.dtype))])
}

/// NonZero.
pub(super) fn nonzero<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let r = x.rank();
    if r == 0 {
        return Err(run_unsup("NonZero of a scalar"));
    }
    let pos = x.b().argwhere();
    let n = pos.dims()[0];
    if n == 0 {
        return one(mk_i(Vec::new(), vec![r, 0], DType::I64, dev));
    }
    let cols = pos.slice([0..n, R - r..R]).swap_dims(0, 1);
    let shape = vec![r, n];
    let t: Tensor<B, R, Int> = reshaped(cols, &shape);
    one(Val::new(K::I(t), shape, DType::I64))
}

// The ops of this file, found from their names (see `super::find`).
table! {
    // indexing
    "Gather" => gather,
    "GatherElements" => gather_elements,
    "GatherND" => gather_nd,
    "Compress" => compress,
    "NonZero" => nonzero,
}
