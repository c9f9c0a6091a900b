//! Linear algebra: MatMul, Gemm, Trilu.
use super::{Cx, Outs, Res, bshape, fval, need_float, one, opt, req, scalar_i};
use crate::burn::tensor::{K, R, Val, reshaped, run_err, run_unsup};
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

/// MatMul.
pub(super) fn matmul_op<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let x = req(ins, 0, op)?;
    let y = req(ins, 1, op)?;
    one(matmul(x, y)?)
}

fn matmul<B: BurnBackend>(x: &Val<B>, y: &Val<B>) -> Res<Val<B>> {
    if x.rank() == 0 || y.rank() == 0 {
        return Err(run_err("MatMul of a scalar"));
    }
    let (mut sa, mut sb) = (x.shape.clone(), y.shape.clone());
    let a1 = sa.len() == 1;
    if a1 {
        sa.insert(0, 1);
    }
    let b1 = sb.len() == 1;
    if b1 {
        sb.push(1);
    }
    let (na, nb) = (sa.len(), sb.len());
    if sa[na - 1] != sb[nb - 2] {
        return Err(run_err(format!(
            "MatMul: inner dimensions of {:?} and {:?} differ",
            x.shape, y.shape
        )));
    }
    let mut out = bshape(&sa[..na - 2], &sb[..nb - 2])?;
    out.push(sa[na - 2]);
    out.push(sb[nb - 1]);
    if out.len() > R {
        return Err(run_unsup(format!("rank {} above {R}", out.len())));
    }
    let mut fin = out.clone();
    if b1 {
        fin.pop();
    }
    if a1 {
        let l = fin.len();
        fin.remove(l - 1 - usize::from(!b1));
    }
    // `reshaped`: burn would read an empty axis of the target as "keep this axis"
    let k = match (&x.k, &y.k) {
        (K::F(p), K::F(q)) => K::F(reshaped(p.clone(), &sa).matmul(reshaped(q.clone(), &sb))),
        (K::I(p), K::I(q)) => K::I(reshaped(p.clone(), &sa).matmul(reshaped(q.clone(), &sb))),
        _ => return Err(run_unsup("MatMul on these types")),
    };
    Ok(Val::new(k, out, x.dtype).reshape(fin))
}

/// Gemm.
pub(super) fn gemm<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let y = req(ins, 1, op)?;
    if x.rank() != 2 || y.rank() != 2 {
        return Err(run_err("Gemm: A and B must be 2-D"));
    }
    let mut p = need_float(x, op)?;
    let mut q = need_float(y, op)?;
    let (mut m, mut k) = (x.shape[0], x.shape[1]);
    let (mut k2, mut n) = (y.shape[0], y.shape[1]);
    if a.int("transA", 0) != 0 {
        p = p.swap_dims(R - 2, R - 1);
        std::mem::swap(&mut m, &mut k);
    }
    if a.int("transB", 0) != 0 {
        q = q.swap_dims(R - 2, R - 1);
        std::mem::swap(&mut k2, &mut n);
    }
    if k != k2 {
        return Err(run_err(format!(
            "Gemm: inner dimensions {k} and {k2} differ"
        )));
    }
    let alpha = a.float("alpha", 1.0) as f64;
    let beta = a.float("beta", 1.0) as f64;
    let mut out = p.matmul(q);
    if alpha != 1.0 {
        out = out.mul_scalar(alpha);
    }
    if let Some(c) = opt(ins, 2) {
        let s = bshape(&[m, n], &c.shape)?;
        if s != [m, n] {
            return Err(run_err("Gemm: C does not broadcast to (M, N)"));
        }
        let mut ct = c.f();
        if beta != 1.0 {
            ct = ct.mul_scalar(beta);
        }
        out = out.add(ct);
    }
    one(fval(out, x, vec![m, n]))
}

/// Trilu.
pub(super) fn trilu<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    if x.rank() < 2 {
        return Err(run_err("Trilu: rank below 2"));
    }
    let kk = opt(ins, 1).map(scalar_i).transpose()?.unwrap_or(0);
    let upper = a.int("upper", 1) != 0;
    let k = match &x.k {
        K::F(t) => K::F(if upper {
            t.clone().triu(kk)
        } else {
            t.clone().tril(kk)
        }),
        K::I(t) => K::I(if upper {
            t.clone().triu(kk)
        } else {
            t.clone().tril(kk)
        }),
        K::B(_) => return Err(run_unsup("Trilu on bool")),
    };
    one(Val::new(k, x.shape.clone(), x.dtype))
}

// The ops of this file, found from their names (see `super::find`).
table! {
    // linear algebra
    "MatMul" => matmul_op,
    "Gemm" => gemm,
    "Trilu" => trilu,
}
