//! Ops that change a tensor's shape, not its values: Identity, Reshape, Flatten, Squeeze,
//! Unsqueeze, Transpose, Expand, Tile, DepthToSpace, SpaceToDepth; and Shape and Size, which
//! read it.
use super::{attr_or_input, norm_axes};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

pub(super) fn op_identity(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    match ins.first().copied().flatten() {
        Some(v) => Ok(vec![v.clone()]),
        None => Err(err("missing input")),
    }
}

pub(super) fn op_reshape(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_flatten(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_squeeze(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_unsqueeze(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_transpose(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_expand(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let s = dims(&inp(ins, 1)?.ints()?)?;
    let out = bcast_shapes(&[&t.shape, &s])?;
    check_size(&out)?;
    one(expand_to(t, &out)?)
}

pub(super) fn op_tile(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_depth_to_space(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_space_to_depth(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_shape(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_size(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(T::scalar_i64(inp(ins, 0)?.len() as i64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_ir::dtype::DType;

    #[test]
    fn transpose_2x3() {
        let t = T::i(DType::I64, vec![2, 3], vec![1, 2, 3, 4, 5, 6]);
        let u = transpose(&t, &[1, 0]).unwrap();
        assert_eq!(u.shape, vec![3, 2]);
        assert_eq!(u.is().unwrap(), &[1, 4, 2, 5, 3, 6]);
    }
}
