//! Values made from attributes and shapes: Constant, ConstantOfShape, Range, EyeLike.
use super::{Cx, Outs, Res, full, one, req, scalar_f, scalar_i, to_usize};
use crate::burn::tensor::Val;
use crate::burn::tensor::{Class, mk_from_f64, run_err, run_unsup};
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

/// Constant.
pub(super) fn constant<B: BurnBackend>(
    node: &Node,
    _ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let a = &node.attributes;
    let dev = cx.dev;
    let h = crate::burn::constant_value(a)?;
    one(crate::burn::tensor::upload(&h, dev)?)
}

/// ConstantOfShape.
pub(super) fn constant_of_shape<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let s = to_usize(&req(ins, 0, op)?.host_i64(), "shape")?;
    let (v, dt) = match a.tensor("value") {
        Some(t) => {
            let h = crate::value::HostTensor::from_proto(t).map_err(|e| run_err(e.to_string()))?;
            let x = h.to_f64s().ok_or_else(|| run_unsup("value type"))?;
            (x.first().copied().unwrap_or(0.0), h.dtype)
        }
        None => (0.0, DType::F32),
    };
    one(full(s, v, dt, dev)?)
}

/// Range.
pub(super) fn range<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let dev = cx.dev;
    let s = req(ins, 0, op)?;
    let l = req(ins, 1, op)?;
    let d = req(ins, 2, op)?;
    let v: Vec<f64> = if s.class() == Class::Int {
        let (s, l, d) = (scalar_i(s)?, scalar_i(l)?, scalar_i(d)?);
        if d == 0 {
            return Err(run_err("Range: delta is 0"));
        }
        let n = ((l - s) as f64 / d as f64).ceil().max(0.0) as i64;
        (0..n).map(|i| (s + i * d) as f64).collect()
    } else {
        let (s, l, d) = (scalar_f(s)?, scalar_f(l)?, scalar_f(d)?);
        if d == 0.0 {
            return Err(run_err("Range: delta is 0"));
        }
        let n = ((l - s) / d).ceil().max(0.0) as usize;
        (0..n).map(|i| s + i as f64 * d).collect()
    };
    let n = v.len();
    one(mk_from_f64(&v, vec![n], s.dtype, dev)?)
}

/// EyeLike.
pub(super) fn eye_like<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    if x.rank() != 2 {
        return Err(run_err("EyeLike: input must be 2-D"));
    }
    let dt = match a.int_opt("dtype") {
        Some(c) => DType::from_code(c as i32),
        None => x.dtype,
    };
    let k = a.int("k", 0);
    let (r, c) = (x.shape[0], x.shape[1]);
    let mut v = vec![0.0; r * c];
    for i in 0..r {
        let j = i as i64 + k;
        if j >= 0 && (j as usize) < c {
            v[i * c + j as usize] = 1.0;
        }
    }
    one(mk_from_f64(&v, vec![r, c], dt, dev)?)
}

// The ops of this file, found from their names (see `super::find`).
table! {
    // values made from attributes and shapes
    "Constant" => constant,
    "ConstantOfShape" => constant_of_shape,
    "Range" => range,
    "EyeLike" => eye_like,
}
