//! Linear algebra: MatMul, MatMulInteger, Gemm, Det, Einsum.
use crate::reference::gemm::{MatRef, exact_in_f64, exact_in_f64_i, gemm, gemm_naive};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use std::collections::BTreeMap;

type Out = R<Vec<V>>;

/// The shapes of a numpy matmul: 1-D operands promoted, batch dims broadcast.
struct MatMulPlan {
    /// Rows of A, the inner size, columns of B.
    n: usize,
    k: usize,
    m: usize,
    /// Per output batch: the batch of A and of B it reads.
    ia: Vec<usize>,
    ib: Vec<usize>,
    /// The output shape.
    shape: Vec<usize>,
}

impl MatMulPlan {
    fn new(ash: &[usize], bsh: &[usize]) -> R<MatMulPlan> {
        if ash.is_empty() || bsh.is_empty() {
            return Err(err("MatMul of a scalar"));
        }
        let mut ash2 = ash.to_vec();
        let mut bsh2 = bsh.to_vec();
        let a1 = ash.len() == 1;
        let b1 = bsh.len() == 1;
        if a1 {
            ash2.insert(0, 1);
        }
        if b1 {
            bsh2.push(1);
        }
        let (n, k) = (ash2[ash2.len() - 2], ash2[ash2.len() - 1]);
        let (k2, m) = (bsh2[bsh2.len() - 2], bsh2[bsh2.len() - 1]);
        if k != k2 {
            return Err(err(format!("MatMul of {ash:?} and {bsh:?}")));
        }
        let ab = &ash2[..ash2.len() - 2];
        let bb = &bsh2[..bsh2.len() - 2];
        let batch = bcast_shapes(&[ab, bb])?;
        check_size(&[numel(&batch), n, m])?;
        let ia = bcast_index(ab, &batch);
        let ib = bcast_index(bb, &batch);
        let mut shape = batch;
        if !a1 {
            shape.push(n);
        }
        if !b1 {
            shape.push(m);
        }
        Ok(MatMulPlan {
            n,
            k,
            m,
            ia,
            ib,
            shape,
        })
    }

    /// The products in f64 through the GEMM. Batches of A that all meet the same B and follow
    /// each other in memory are one product with their rows stacked.
    fn run_f64(&self, a: &[f64], b: &[f64]) -> R<Vec<f64>> {
        let (n, k, m) = (self.n, self.k, self.m);
        let nbatch = self.ia.len();
        let mut out = vec![0.0; nbatch * n * m];
        let stacked = nbatch > 1
            && self.ib.iter().all(|&j| j == self.ib[0])
            && self.ia.iter().enumerate().all(|(i, &j)| i == j);
        if stacked {
            let bm = MatRef::row_major(&b[self.ib[0] * k * m..][..k * m], k, m);
            let am = MatRef::row_major(&a[..nbatch * n * k], nbatch * n, k);
            gemm(am, bm, &mut out, m)?;
            return Ok(out);
        }
        for bi in 0..nbatch {
            let am = MatRef::row_major(&a[self.ia[bi] * n * k..][..n * k], n, k);
            let bm = MatRef::row_major(&b[self.ib[bi] * k * m..][..k * m], k, m);
            gemm(am, bm, &mut out[bi * n * m..], m)?;
        }
        Ok(out)
    }

    /// The products of integers, wrapping in i64 as the element types do: through the f64 GEMM
    /// when that is exact, else summed in i64.
    fn run_i64(&self, a: &[i64], b: &[i64]) -> R<Vec<i64>> {
        if exact_in_f64_i(a, b, self.k) {
            let af: Vec<f64> = a.iter().map(|&v| v as f64).collect();
            let bf: Vec<f64> = b.iter().map(|&v| v as f64).collect();
            return Ok(self.run_f64(&af, &bf)?.iter().map(|&v| v as i64).collect());
        }
        let (n, k, m) = (self.n, self.k, self.m);
        let nbatch = self.ia.len();
        let mut out = vec![0i64; nbatch * n * m];
        for bi in 0..nbatch {
            let ao = self.ia[bi] * n * k;
            let bo = self.ib[bi] * k * m;
            for i in 0..n {
                let orow = &mut out[(bi * n + i) * m..][..m];
                for q in 0..k {
                    let x = a[ao + i * k + q];
                    let brow = &b[bo + q * m..][..m];
                    for (o, &y) in orow.iter_mut().zip(brow) {
                        *o = o.wrapping_add(x.wrapping_mul(y));
                    }
                }
            }
        }
        Ok(out)
    }
}

/// numpy matmul of floats: 1-D operands promoted, batch dims broadcast.
pub(super) fn matmul(
    a: &[f64],
    ash: &[usize],
    b: &[f64],
    bsh: &[usize],
) -> R<(Vec<usize>, Vec<f64>)> {
    let plan = MatMulPlan::new(ash, bsh)?;
    let out = plan.run_f64(a, b)?;
    Ok((plan.shape, out))
}

/// numpy matmul of integers (wrapping i64 arithmetic).
fn matmul_i(a: &[i64], ash: &[usize], b: &[i64], bsh: &[usize]) -> R<(Vec<usize>, Vec<i64>)> {
    let plan = MatMulPlan::new(ash, bsh)?;
    let out = plan.run_i64(a, b)?;
    Ok((plan.shape, out))
}

pub(super) fn op_matmul(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    let b = inp(ins, 1)?;
    match (&a.buf, &b.buf) {
        (Buf::I(x), Buf::I(y)) => {
            let (s, v) = matmul_i(x, &a.shape, y, &b.shape)?;
            one(T::from_i64s(a.dt, s, v)?)
        }
        _ => {
            let (s, v) = matmul(a.fs()?, &a.shape, b.fs()?, &b.shape)?;
            one(T::f(a.dt, s, v))
        }
    }
}

fn zero_point(t: Option<&T>, n: usize, what: &str) -> R<Vec<i64>> {
    match t {
        None => Ok(vec![0; n]),
        Some(t) if t.len() == 1 => Ok(vec![t.ints()?[0]; n]),
        Some(t) if t.len() == n => t.ints(),
        Some(t) => Err(err(format!("{what} zero point of shape {:?}", t.shape))),
    }
}

pub(super) fn op_matmul_integer(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    let b = inp(ins, 1)?;
    let rows = if a.rank() >= 2 {
        a.shape[a.rank() - 2]
    } else {
        1
    };
    let cols = b.shape.last().copied().unwrap_or(1);
    let azp = zero_point(opt(ins, 2)?, rows, "A")?;
    let bzp = zero_point(opt(ins, 3)?, cols, "B")?;
    let k = a.shape.last().copied().unwrap_or(1);
    let av: Vec<i64> = a
        .ints()?
        .iter()
        .enumerate()
        .map(|(i, &x)| x - azp[(i / k.max(1)) % rows.max(1)])
        .collect();
    let bv: Vec<i64> = b
        .ints()?
        .iter()
        .enumerate()
        .map(|(i, &x)| x - bzp[i % cols.max(1)])
        .collect();
    let (s, v) = matmul_i(&av, &a.shape, &bv, &b.shape)?;
    one(T::from_i64s(DType::I32, s, v)?)
}

pub(super) fn op_gemm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    let b = inp(ins, 1)?;
    if a.rank() != 2 || b.rank() != 2 {
        return Err(err("Gemm needs 2-D A and B"));
    }
    let ta = n.int("transA", 0) != 0;
    let tb = n.int("transB", 0) != 0;
    let alpha = n.float("alpha", 1.0) as f64;
    let beta = n.float("beta", 1.0) as f64;
    let av = a.floats()?;
    let bv = b.floats()?;
    let (m, k) = if ta {
        (a.shape[1], a.shape[0])
    } else {
        (a.shape[0], a.shape[1])
    };
    let (k2, nn) = if tb {
        (b.shape[1], b.shape[0])
    } else {
        (b.shape[0], b.shape[1])
    };
    if k != k2 {
        return Err(err(format!("Gemm of {:?} and {:?}", a.shape, b.shape)));
    }
    let c = match opt(ins, 2)? {
        Some(c) => Some(expand_to(c, &[m, nn])?.floats()?),
        None => None,
    };
    let am = if ta {
        MatRef::row_major(&av, k, m).t()
    } else {
        MatRef::row_major(&av, m, k)
    };
    let bm = if tb {
        MatRef::row_major(&bv, nn, k).t()
    } else {
        MatRef::row_major(&bv, k, nn)
    };
    let mut out = vec![0.0; m * nn];
    // Integers (converted to f64 as before) take the GEMM only where its sums are exact.
    if a.dt.is_float() || exact_in_f64(&av, &bv, k) {
        gemm(am, bm, &mut out, nn)?;
    } else {
        gemm_naive(am, bm, &mut out, nn);
    }
    for i in 0..m {
        for j in 0..nn {
            let s = out[i * nn + j];
            out[i * nn + j] = alpha * s + c.as_ref().map(|c| beta * c[i * nn + j]).unwrap_or(0.0);
        }
    }
    one(T::from_f64s(a.dt, vec![m, nn], out)?)
}

pub(super) fn op_det(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let r = t.rank();
    if r < 2 || t.shape[r - 1] != t.shape[r - 2] {
        return Err(err(format!("Det of {:?}", t.shape)));
    }
    let n = t.shape[r - 1];
    let v = t.fs()?;
    let batch = numel(&t.shape[..r - 2]);
    let mut out = Vec::with_capacity(batch);
    for b in 0..batch {
        let mut m = v[b * n * n..(b + 1) * n * n].to_vec();
        let mut det = 1.0;
        for col in 0..n {
            let p = (col..n)
                .max_by(|&i, &j| m[i * n + col].abs().total_cmp(&m[j * n + col].abs()))
                .unwrap_or(col);
            if m[p * n + col] == 0.0 {
                det = 0.0;
                break;
            }
            if p != col {
                for q in 0..n {
                    m.swap(p * n + q, col * n + q);
                }
                det = -det;
            }
            let piv = m[col * n + col];
            det *= piv;
            for row in col + 1..n {
                let f = m[row * n + col] / piv;
                for q in col..n {
                    m[row * n + q] -= f * m[col * n + q];
                }
            }
        }
        out.push(det);
    }
    one(T::f(t.dt, t.shape[..r - 2].to_vec(), out))
}

/// Einsum by direct summation over every index combination.
pub(super) fn op_einsum(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let eq: String = n
        .string("equation", "")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let ts: Vec<&T> = (0..ins.len()).map(|i| inp(ins, i)).collect::<R<_>>()?;
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ts.len() {
        return Err(err(format!("Einsum '{eq}' for {} inputs", ts.len())));
    }
    // Ellipsis dims get the placeholder letters '0'..'9' (right-aligned).
    let ell_rank = terms
        .iter()
        .zip(&ts)
        .filter(|(t, _)| t.contains("..."))
        .map(|(t, x)| x.rank() + 3 - t.len())
        .max()
        .unwrap_or(0);
    let ell: String = (0..ell_rank).map(|i| (b'0' + i as u8) as char).collect();
    let mut subs: Vec<Vec<char>> = Vec::new();
    for (t, x) in terms.iter().zip(&ts) {
        let s: Vec<char> = if t.contains("...") {
            let k = x.rank() + 3 - t.len();
            t.replace("...", &ell[ell_rank - k..]).chars().collect()
        } else {
            t.chars().collect()
        };
        if s.len() != x.rank() {
            return Err(err(format!("Einsum term '{t}' for shape {:?}", x.shape)));
        }
        subs.push(s);
    }
    let mut size: BTreeMap<char, usize> = BTreeMap::new();
    for (s, x) in subs.iter().zip(&ts) {
        for (c, &d) in s.iter().zip(&x.shape) {
            let e = size.entry(*c).or_insert(d);
            if *e == 1 {
                *e = d;
            } else if d != 1 && *e != d {
                return Err(err(format!("Einsum: index {c} of sizes {e} and {d}")));
            }
        }
    }
    let out: Vec<char> = match rhs {
        Some(r) => r.replace("...", &ell).chars().collect(),
        None => {
            let mut o: Vec<char> = ell.chars().collect();
            let mut letters: Vec<char> = size
                .keys()
                .copied()
                .filter(|c| c.is_alphabetic())
                .filter(|c| subs.iter().flatten().filter(|x| *x == c).count() == 1)
                .collect();
            letters.sort();
            o.extend(letters);
            o
        }
    };
    let all: Vec<char> = {
        let mut v = out.clone();
        for c in size.keys() {
            if !v.contains(c) {
                v.push(*c);
            }
        }
        v
    };
    let dims_all: Vec<usize> = all
        .iter()
        .map(|c| {
            size.get(c)
                .copied()
                .ok_or_else(|| err(format!("Einsum: unknown index {c}")))
        })
        .collect::<R<_>>()?;
    let oshape: Vec<usize> = dims_all[..out.len()].to_vec();
    check_size(&dims_all)?;
    // Per input, stride of each index of `all` (0 where absent or broadcast).
    let vals: Vec<Vec<f64>> = ts.iter().map(|t| t.floats()).collect::<R<_>>()?;
    let st: Vec<Vec<usize>> = subs
        .iter()
        .zip(&ts)
        .map(|(s, x)| {
            let xs = strides(&x.shape);
            all.iter()
                .map(|c| {
                    s.iter()
                        .enumerate()
                        .filter(|(_, d)| *d == c)
                        .map(|(i, _)| if x.shape[i] == 1 { 0 } else { xs[i] })
                        .sum()
                })
                .collect()
        })
        .collect();
    let on = numel(&oshape);
    let rest = numel(&dims_all[out.len()..]);
    let mut res = vec![0.0; on];
    for (o, r) in res.iter_mut().enumerate() {
        for q in 0..rest {
            let idx: Vec<usize> = unravel(o, &oshape)
                .into_iter()
                .chain(unravel(q, &dims_all[out.len()..]))
                .collect();
            let mut p = 1.0;
            for (v, s) in vals.iter().zip(&st) {
                let flat: usize = idx.iter().zip(s).map(|(a, b)| a * b).sum();
                p *= v[flat];
            }
            *r += p;
        }
    }
    one(T::from_f64s(ts[0].dt, oshape, res)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_broadcast_and_vectors() {
        // [2] @ [2, 2] -> [2]
        let (s, v) = matmul(&[1.0, 2.0], &[2], &[1.0, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        assert_eq!(s, vec![2]);
        assert_eq!(v, vec![7.0, 10.0]);
        // [2, 1, 2] @ [2, 1] -> [2, 1, 1]
        let (s, v) = matmul_i(&[1, 2, 3, 4], &[2, 1, 2], &[10, 1], &[2, 1]).unwrap();
        assert_eq!(s, vec![2, 1, 1]);
        assert_eq!(v, vec![12, 34]);
    }
}
