//! Writing elements at indices: ScatterND, ScatterElements, and OneHot (the on value written at
//! each index along a new axis).
use super::gather::{fix_indices, nd_rows};
use super::{Cx, Outs, Res, full, need_float, norm_axis, req};
use crate::burn::tensor::{Class, K, R, ReshapeExact, Val, bax, pad, run_err, run_unsup};
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::{IndexingUpdateOp, Int, Slice, Tensor, TensorData};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

/// ScatterND.
pub(super) fn scatter_nd<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let idx = req(ins, 1, op)?;
    let upd = req(ins, 2, op)?;
    let (rows, _k, p, q) = nd_rows(x, idx, op)?;
    let n = rows.len();
    if upd.numel() != n * q {
        return Err(run_err("ScatterND: updates do not fit the indices"));
    }
    let red = match a.string("reduction", "none").as_str() {
        "add" => IndexingUpdateOp::Add,
        "mul" => IndexingUpdateOp::Mul,
        "min" => IndexingUpdateOp::Min,
        "max" => IndexingUpdateOp::Max,
        _ => IndexingUpdateOp::Assign,
    };
    if n == 0 || p * q == 0 {
        return Ok(vec![Some(x.clone())]);
    }
    let it = Tensor::<B, 2, Int>::from_data(TensorData::new(rows, [n, 1]), dev);
    let k2 = match (&x.k, &upd.k) {
        (K::F(d), K::F(u)) => K::F(
            d.clone()
                .reshape_exact([p, q])
                .scatter_nd::<2, 2>(it, u.clone().reshape_exact([n, q]), red)
                .reshape_exact(pad(&x.shape)),
        ),
        (K::I(d), K::I(u)) => K::I(
            d.clone()
                .reshape_exact([p, q])
                .scatter_nd::<2, 2>(it, u.clone().reshape_exact([n, q]), red)
                .reshape_exact(pad(&x.shape)),
        ),
        _ => return Err(run_unsup("ScatterND on these types")),
    };
    Ok(vec![Some(Val::new(k2, x.shape.clone(), x.dtype))])
}

/// ScatterElements.
pub(super) fn scatter_elements<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let idx = req(ins, 1, op)?;
    let upd = req(ins, 2, op)?;
    let axis = norm_axis(a.int("axis", 0), x.rank())?;
    if idx.shape != upd.shape || idx.rank() != x.rank() {
        return Err(run_err(
            "ScatterElements: indices and updates differ in shape",
        ));
    }
    let mut iv = idx.host_i64();
    fix_indices(&mut iv, x.shape[axis] as i64, op)?;
    if iv.is_empty() {
        return Ok(vec![Some(x.clone())]);
    }
    let d = bax(x.rank(), axis);
    let it = Tensor::<B, R, Int>::from_data(TensorData::new(iv, pad(&idx.shape)), dev);
    let add = a.string("reduction", "none") == "add";
    let full = need_float(x, op)?;
    let u = need_float(upd, op)?;
    // burn's scatter wants the data and the indices of one shape outside the axis; ONNX
    // lets the indices cover a leading block there: scatter into that block, then put
    // it back.
    let mut block = vec![Slice::new(0, None, 1); R];
    let mut partial = false;
    for (i, (&xd, &id)) in x.shape.iter().zip(&idx.shape).enumerate() {
        if i == axis {
            continue;
        }
        if id > xd {
            return Err(run_err(format!(
                "ScatterElements: indices dimension {i} ({id}) exceeds the data's ({xd})"
            )));
        }
        partial |= id < xd;
        block[bax(x.rank(), i)] = Slice::new(0, Some(id as isize), 1);
    }
    let data = if partial {
        full.clone().slice(block.as_slice())
    } else {
        full.clone()
    };
    let y = if add {
        data.scatter(d, it, u, IndexingUpdateOp::Add)
    } else {
        // assignment from additions: clear the targeted cells, then add the updates
        let hit = data
            .zeros_like()
            .scatter(d, it.clone(), u.ones_like(), IndexingUpdateOp::Add)
            .greater_elem(0.0);
        let cleared = data.clone().mask_fill(hit, 0.0);
        cleared.scatter(d, it, u, IndexingUpdateOp::Add)
    };
    let y = if partial {
        full.slice_assign(block.as_slice(), y)
    } else {
        y
    };
    Ok(vec![Some(Val::float(y, x.shape.clone(), x.dtype))])
}

/// OneHot.
pub(super) fn one_hot<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let depth = req(ins, 1, op)?.host_f64();
    let vals = req(ins, 2, op)?;
    if depth.len() != 1 || depth[0] < 1.0 || vals.numel() != 2 {
        return Err(run_err("OneHot: bad depth or values"));
    }
    let depth = depth[0] as usize;
    let r = x.rank();
    if r + 1 > R {
        return Err(run_unsup(format!("rank {} above {R}", r + 1)));
    }
    let axis = norm_axis(a.int("axis", -1), r + 1)?;
    if x.numel() == 0 {
        let mut shape = x.shape.clone();
        shape.insert(axis, depth);
        return Ok(vec![Some(full(shape, 0.0, vals.dtype, dev)?)]);
    }
    // Indices outside [-depth, depth - 1] give a row of off values (ONNX): they are
    // one-hot encoded as 0 and their rows overwritten.
    let n = depth as i64;
    let mut iv = x.host_i64();
    let outside: Vec<bool> = iv.iter().map(|&i| i < -n || i >= n).collect();
    for (i, &o) in iv.iter_mut().zip(&outside) {
        if o {
            *i = 0;
        } else if *i < 0 {
            *i += n;
        }
    }
    let vv = vals.host_f64();
    let mut shape5 = [1usize; R - 1];
    shape5[R - 1 - r..].copy_from_slice(&x.shape);
    let t5 = Tensor::<B, { R - 1 }>::from_data(
        TensorData::new(iv.iter().map(|&i| i as f32).collect::<Vec<_>>(), shape5),
        dev,
    );
    let baxis = R - (r + 1) + axis;
    let mut y: Tensor<B, R> = t5.one_hot_fill(depth, vv[1] as f32, vv[0] as f32, baxis as i64);
    if outside.contains(&true) {
        let o5 = Tensor::<B, { R - 1 }>::from_data(
            TensorData::new(
                outside.iter().map(|&o| o as u8 as f32).collect::<Vec<_>>(),
                shape5,
            ),
            dev,
        );
        let mask = o5
            .unsqueeze_dim::<R>(baxis)
            .expand(y.shape())
            .equal_elem(1.0);
        y = y.mask_fill(mask, vv[0] as f32);
    }
    let mut shape = x.shape.clone();
    shape.insert(axis, depth);
    let v = Val::float(y, shape, vals.dtype);
    Ok(vec![Some(match vals.class() {
        Class::Float => v,
        _ => super::cast::cast(&v, vals.dtype)?,
    })])
}

// The ops of this file, found from their names (see `super::find`).
table! {
    "ScatterND" => scatter_nd,
    "ScatterElements" => scatter_elements,
    "OneHot" => one_hot,
}
