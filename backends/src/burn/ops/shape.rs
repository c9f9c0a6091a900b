//! Ops that change a tensor's shape, not its values: Reshape, Flatten, Squeeze, Unsqueeze,
//! Transpose, Expand, Tile, DepthToSpace, SpaceToDepth; and Shape and Size, which read it.
use super::{Cx, Outs, Res, bshape, full, norm_axes, one, opt, req, to_usize};
use crate::burn::tensor::{R, Val, each, mk_i, pad, run_err, run_unsup};
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

/// Reshape.
pub(super) fn reshape<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let spec = if cx.opset < 5 {
        a.ints("shape").unwrap_or(&[]).to_vec()
    } else {
        req(ins, 1, op)?.host_i64()
    };
    let allowzero = a.int("allowzero", 0) != 0;
    let shape = reshape_target(&x.shape, &spec, allowzero)?;
    one(x.clone().reshape(shape))
}

fn reshape_target(input: &[usize], spec: &[i64], allowzero: bool) -> Res<Vec<usize>> {
    let n: usize = input.iter().product();
    let mut out = Vec::with_capacity(spec.len());
    let mut infer = None;
    for (i, &d) in spec.iter().enumerate() {
        if d == -1 {
            if infer.is_some() {
                return Err(run_err("Reshape: more than one -1"));
            }
            infer = Some(i);
            out.push(1);
        } else if d == 0 && !allowzero {
            out.push(
                *input
                    .get(i)
                    .ok_or_else(|| run_err("Reshape: 0 beyond the input rank"))?,
            );
        } else if d < 0 {
            return Err(run_err(format!("Reshape: bad dimension {d}")));
        } else {
            out.push(d as usize);
        }
    }
    if let Some(i) = infer {
        let rest: usize = out.iter().product();
        if rest == 0 || !n.is_multiple_of(rest) {
            return Err(run_err(format!(
                "Reshape: cannot infer -1 for {input:?} -> {spec:?}"
            )));
        }
        out[i] = n / rest;
    }
    if out.iter().product::<usize>() != n {
        return Err(run_err(format!("Reshape: {input:?} cannot become {out:?}")));
    }
    if out.len() > R {
        return Err(run_unsup(format!("rank {} above {R}", out.len())));
    }
    Ok(out)
}

/// Flatten.
pub(super) fn flatten<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let r = x.rank() as i64;
    let mut axis = a.int("axis", 1);
    if axis < 0 {
        axis += r;
    }
    if axis < 0 || axis > r {
        return Err(run_err(format!("Flatten: axis {axis} out of range")));
    }
    let outer: usize = x.shape[..axis as usize].iter().product();
    let inner: usize = x.shape[axis as usize..].iter().product();
    one(x.clone().reshape(vec![outer, inner]))
}

/// Squeeze.
pub(super) fn squeeze<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let axes: Option<Vec<i64>> = if cx.opset < 13 {
        a.ints("axes").map(|v| v.to_vec())
    } else {
        opt(ins, 1).map(|v| v.host_i64())
    };
    let shape: Vec<usize> = match axes {
        Some(ax) => {
            let ax = norm_axes(&ax, x.rank())?;
            for &i in &ax {
                if x.shape[i] != 1 {
                    return Err(run_err(format!(
                        "Squeeze: dimension {i} of {:?} is not 1",
                        x.shape
                    )));
                }
            }
            x.shape
                .iter()
                .enumerate()
                .filter(|(i, _)| !ax.contains(i))
                .map(|(_, &d)| d)
                .collect()
        }
        None => x.shape.iter().copied().filter(|&d| d != 1).collect(),
    };
    one(x.clone().reshape(shape))
}

/// Unsqueeze.
pub(super) fn unsqueeze<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let axes: Vec<i64> = if cx.opset < 13 {
        a.ints("axes").unwrap_or(&[]).to_vec()
    } else {
        req(ins, 1, op)?.host_i64()
    };
    let out_rank = x.rank() + axes.len();
    if out_rank > R {
        return Err(run_unsup(format!("rank {out_rank} above {R}")));
    }
    let ax = norm_axes(&axes, out_rank)?;
    let mut shape = Vec::with_capacity(out_rank);
    let mut it = x.shape.iter();
    for i in 0..out_rank {
        if ax.contains(&i) {
            shape.push(1);
        } else {
            shape.push(*it.next().ok_or_else(|| run_err("Unsqueeze: bad axes"))?);
        }
    }
    one(x.clone().reshape(shape))
}

/// Transpose.
pub(super) fn transpose<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let r = x.rank();
    let perm: Vec<usize> = match a.ints("perm") {
        Some(p) => {
            let p = to_usize(p, "perm")?;
            let mut s = p.clone();
            s.sort();
            if s != (0..r).collect::<Vec<_>>() {
                return Err(run_err(format!("Transpose: bad perm {p:?}")));
            }
            p
        }
        None => (0..r).rev().collect(),
    };
    one(permute(x.clone(), &perm))
}

/// Permutes the ONNX axes of a value.
fn permute<B: BurnBackend>(v: Val<B>, perm: &[usize]) -> Val<B> {
    let r = v.rank();
    let mut axes = [0usize; R];
    for (i, a) in axes.iter_mut().enumerate() {
        *a = i;
    }
    for (i, &p) in perm.iter().enumerate() {
        axes[R - r + i] = R - r + p;
    }
    let shape: Vec<usize> = perm.iter().map(|&p| v.shape[p]).collect();
    let k = each!(v.k, |t| t.permute(axes));
    Val::new(k, shape, v.dtype)
}

/// Expand.
pub(super) fn expand<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let s = to_usize(&req(ins, 1, op)?.host_i64(), "shape")?;
    let shape = bshape(&x.shape, &s)?;
    if shape.len() > R {
        return Err(run_unsup(format!("rank {} above {R}", shape.len())));
    }
    if shape.contains(&0) {
        // burn's expand refuses a zero size; an empty result needs no data.
        return one(full(shape, 0.0, x.dtype, dev)?);
    }
    let p = pad(&shape);
    let k = each!(x.k.clone(), |t| t.expand(p));
    one(Val::new(k, shape, x.dtype))
}

/// Tile.
pub(super) fn tile<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let reps = to_usize(&req(ins, 1, op)?.host_i64(), "repeats")?;
    if reps.len() != x.rank() {
        return Err(run_err("Tile: repeats length differs from rank"));
    }
    let shape: Vec<usize> = x.shape.iter().zip(&reps).map(|(a, b)| a * b).collect();
    if shape.contains(&0) {
        return one(full(shape, 0.0, x.dtype, dev)?);
    }
    let p = pad(&reps);
    let k = each!(x.k.clone(), |t| t.repeat(&p));
    one(Val::new(k, shape, x.dtype))
}

/// DepthToSpace, SpaceToDepth.
pub(super) fn depth_space<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    if x.rank() != 4 {
        return Err(run_err(format!("{op}: input must be 4-D")));
    }
    let b = a.int("blocksize", 0);
    if b <= 0 {
        return Err(run_err(format!("{op}: bad blocksize {b}")));
    }
    let b = b as usize;
    let (n, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
    if op == "DepthToSpace" {
        if c % (b * b) != 0 {
            return Err(run_err("DepthToSpace: channels not divisible"));
        }
        let c2 = c / (b * b);
        let crd = a.string("mode", "DCR") == "CRD";
        let (s6, perm) = if crd {
            (vec![n, c2, b, b, h, w], [0, 1, 4, 2, 5, 3])
        } else {
            (vec![n, b, b, c2, h, w], [0, 3, 4, 1, 5, 2])
        };
        let y = permute(x.clone().reshape(s6), &perm);
        one(y.reshape(vec![n, c2, h * b, w * b]))
    } else {
        if h % b != 0 || w % b != 0 {
            return Err(run_err("SpaceToDepth: spatial size not divisible"));
        }
        let y = permute(
            x.clone().reshape(vec![n, c, h / b, b, w / b, b]),
            &[0, 3, 5, 1, 2, 4],
        );
        one(y.reshape(vec![n, c * b * b, h / b, w / b]))
    }
}

/// Shape.
pub(super) fn shape<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    let r = x.rank() as i64;
    let clampi = |v: i64| if v < 0 { (v + r).max(0) } else { v.min(r) };
    let s = clampi(a.int("start", 0)) as usize;
    let e = clampi(a.int("end", r)) as usize;
    let v: Vec<i64> = if s < e {
        x.shape[s..e].iter().map(|&d| d as i64).collect()
    } else {
        Vec::new()
    };
    let n = v.len();
    one(mk_i(v, vec![n], DType::I64, dev))
}

/// Size.
pub(super) fn size<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    one(mk_i(vec![x.numel() as i64], vec![], DType::I64, dev))
}

// The ops of this file, found from their names (see `super::find`).
table! {
    // shape
    "Reshape" => reshape,
    "Flatten" => flatten,
    "Squeeze" => squeeze,
    "Unsqueeze" => unsqueeze,
    "Transpose" => transpose,
    "Expand" => expand,
    "Tile" => tile,
    "DepthToSpace" | "SpaceToDepth" => depth_space,
    "Shape" => shape,
    "Size" => size,
}
