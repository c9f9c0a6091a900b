//! Pooling: MaxPool, AveragePool, LpPool, their global forms, and MaxUnpool.
use super::geometry::{Geo, geometry, positive};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

#[derive(Clone, Copy, PartialEq)]
enum Pool {
    Max,
    Avg,
    Lp(f64),
}

fn pool(n: &Node, x: &T, kind: Pool, global: bool) -> Out {
    let xs = &x.shape;
    // Global pooling of [N, C] has no spatial axis: one tap per output (ONNX's shape inference
    // accepts rank 2 and keeps the shape).
    if xs.len() < 3 && !(global && xs.len() == 2) {
        return Err(err(format!("pool input {xs:?}")));
    }
    let (nb, c) = (xs[0], xs[1]);
    let sp = &xs[2..];
    let geo = if global {
        Geo {
            input: sp.to_vec(),
            kernel: sp.to_vec(),
            strides: vec![1; sp.len()],
            dil: vec![1; sp.len()],
            pb: vec![0; sp.len()],
            pe: vec![0; sp.len()],
            out: vec![1; sp.len()],
        }
    } else {
        let k = positive(
            n.ints("kernel_shape")
                .ok_or_else(|| err("pool without kernel_shape"))?
                .to_vec(),
            "kernel_shape",
        )?;
        if k.len() != sp.len() {
            return Err(err("kernel_shape rank"));
        }
        geometry(n, sp, &k, n.int("ceil_mode", 0) != 0)?
    };
    let taps = geo.taps();
    let include_pad = n.int("count_include_pad", 0) != 0;
    let col_major = n.int("storage_order", 0) != 0;
    let isz = numel(sp);
    let osz = numel(&geo.out);
    let xv = x.floats()?;
    let mut out = vec![0.0; nb * c * osz];
    let mut idx = vec![0i64; nb * c * osz];
    // Column-major flat spatial index for storage_order = 1.
    let cm = |p: usize| -> usize {
        let mi = unravel(p, sp);
        let mut f = 0;
        let mut m = 1;
        for d in 0..sp.len() {
            f += mi[d] * m;
            m *= sp[d];
        }
        f
    };
    for bc in 0..nb * c {
        let base = bc * isz;
        for (o, row) in taps.iter().enumerate() {
            let v = match kind {
                Pool::Max => {
                    let mut best = f64::NEG_INFINITY;
                    let mut at = None;
                    for p in row.iter().flatten() {
                        let val = xv[base + p];
                        if at.is_none() || val > best {
                            best = val;
                            at = Some(*p);
                        }
                    }
                    if let Some(p) = at {
                        idx[bc * osz + o] = (base + if col_major { cm(p) } else { p }) as i64;
                    }
                    best
                }
                Pool::Avg => {
                    let mut s = 0.0;
                    let mut cnt = 0usize;
                    for tap in row {
                        match tap {
                            Ok(p) => {
                                s += xv[base + p];
                                cnt += 1;
                            }
                            Err(true) if include_pad => cnt += 1,
                            Err(_) => {}
                        }
                    }
                    if cnt == 0 { f64::NAN } else { s / cnt as f64 }
                }
                Pool::Lp(p) => {
                    let s: f64 = row
                        .iter()
                        .flatten()
                        .map(|&q| xv[base + q].abs().powf(p))
                        .sum();
                    s.powf(1.0 / p)
                }
            };
            out[bc * osz + o] = v;
        }
    }
    let mut shape = vec![nb, c];
    shape.extend(&geo.out);
    let y = T::from_f64s(x.dt, shape.clone(), out)?;
    Ok(vec![V::T(y), V::T(T::i(DType::I64, shape, idx))])
}

pub(super) fn op_max_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    pool(n, inp(ins, 0)?, Pool::Max, false)
}

pub(super) fn op_avg_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    pool(n, inp(ins, 0)?, Pool::Avg, false)
}

pub(super) fn op_lp_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    pool(n, inp(ins, 0)?, Pool::Lp(n.int("p", 2) as f64), false)
}

pub(super) fn op_global_max_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    Ok(pool(n, inp(ins, 0)?, Pool::Max, true)?
        .into_iter()
        .take(1)
        .collect())
}

pub(super) fn op_global_avg_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    Ok(pool(n, inp(ins, 0)?, Pool::Avg, true)?
        .into_iter()
        .take(1)
        .collect())
}

pub(super) fn op_global_lp_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    Ok(pool(n, inp(ins, 0)?, Pool::Lp(n.int("p", 2) as f64), true)?
        .into_iter()
        .take(1)
        .collect())
}

pub(super) fn op_max_unpool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let ind = inp(ins, 1)?.ints()?;
    if x.rank() < 3 || ind.len() != x.len() {
        return Err(err("MaxUnpool shapes"));
    }
    let r = x.rank() - 2;
    let k = n.ints("kernel_shape").ok_or_else(|| err("kernel_shape"))?;
    let s = n.ints("strides").map(|v| v.to_vec()).unwrap_or(vec![1; r]);
    let p = n.ints("pads").map(|v| v.to_vec()).unwrap_or(vec![0; 2 * r]);
    if k.len() != r || s.len() != r || p.len() != 2 * r {
        return Err(err("MaxUnpool attributes"));
    }
    let mut inferred = x.shape[..2].to_vec();
    for d in 0..r {
        let o = (x.shape[2 + d] as i64 - 1) * s[d] + k[d] - p[d] - p[d + r];
        inferred.push(o.max(0) as usize);
    }
    let shape: Vec<usize> = match opt(ins, 2)? {
        Some(t) => dims(&t.ints()?)?,
        None => inferred.clone(),
    };
    if shape.len() != inferred.len() || shape[..2] != inferred[..2] {
        return Err(err("MaxUnpool output_shape"));
    }
    // Indices address the inferred (pre-pool) layout; place them at the same coordinates of
    // the requested output shape.
    let ost = strides(&shape);
    let relocate = |j: usize| -> R<usize> {
        let mi = unravel(j, &inferred);
        let mut f = 0;
        for d in 0..mi.len() {
            if mi[d] >= shape[d] {
                return Err(err("MaxUnpool index outside output_shape"));
            }
            f += mi[d] * ost[d];
        }
        Ok(f)
    };
    let total = check_size(&shape)?;
    let xv = x.floats()?;
    let mut out = vec![0.0; total];
    for (i, &j) in ind.iter().enumerate() {
        if j < 0 || j as usize >= numel(&inferred) {
            return Err(err(format!("MaxUnpool index {j} out of range")));
        }
        out[relocate(j as usize)?] = xv[i];
    }
    one(T::from_f64s(x.dt, shape, out)?)
}
