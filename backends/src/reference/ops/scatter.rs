//! Writing elements at indices: ScatterElements (and its older name Scatter), ScatterND, and
//! OneHot (the on value written at each index along a new axis).
use super::gather::{element_position, fix_index};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

fn scatter_elements(n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let ind = inp(ins, 1)?;
    let upd = inp(ins, 2)?;
    let axis = norm_axis(n.int("axis", 0), t.rank())?;
    let red = n.string("reduction", "none");
    if ind.shape != upd.shape || ind.rank() != t.rank() {
        return Err(err("ScatterElements shapes"));
    }
    let st = strides(&t.shape);
    let iv = ind.ints()?;
    let mut out = t.clone();
    for (p, &i) in iv.iter().enumerate() {
        let flat = element_position(t, &st, &ind.shape, axis, p, i, "ScatterElements")?;
        reduce_into(&mut out.buf, flat, &upd.buf, p, &red)?;
    }
    one(out)
}

fn reduce_into(dst: &mut Buf, i: usize, src: &Buf, j: usize, red: &str) -> R<()> {
    match red {
        "none" => dst.set_from(i, src, j),
        _ => match (dst, src) {
            (Buf::F(a), Buf::F(b)) => {
                a[i] = match red {
                    "add" => a[i] + b[j],
                    "mul" => a[i] * b[j],
                    "max" => a[i].max(b[j]),
                    "min" => a[i].min(b[j]),
                    r => return Err(unsup(format!("reduction {r}"))),
                };
                Ok(())
            }
            (Buf::I(a), Buf::I(b)) => {
                a[i] = match red {
                    "add" => a[i].wrapping_add(b[j]),
                    "mul" => a[i].wrapping_mul(b[j]),
                    "max" => a[i].max(b[j]),
                    "min" => a[i].min(b[j]),
                    r => return Err(unsup(format!("reduction {r}"))),
                };
                Ok(())
            }
            _ => Err(unsup(format!("reduction {red} of this element type"))),
        },
    }
}

pub(super) fn op_scatter_elements(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    scatter_elements(n, ins)
}

pub(super) fn op_scatter_nd(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let ind = inp(ins, 1)?;
    let upd = inp(ins, 2)?;
    let red = n.string("reduction", "none");
    let q = ind.rank();
    if q == 0 {
        return Err(err("ScatterND indices rank 0"));
    }
    let k = ind.shape[q - 1];
    if k > t.rank() {
        return Err(err("ScatterND index depth exceeds data rank"));
    }
    let slice = numel(&t.shape[k..]);
    let st = strides(&t.shape);
    let iv = ind.ints()?;
    let nidx = numel(&ind.shape[..q - 1]);
    if upd.len() != nidx * slice {
        return Err(err("ScatterND updates shape"));
    }
    let mut out = t.clone();
    for j in 0..nidx {
        let mut flat = 0;
        for d in 0..k {
            flat += fix_index(iv[j * k + d], t.shape[d])? * st[d];
        }
        for s in 0..slice {
            reduce_into(&mut out.buf, flat + s, &upd.buf, j * slice + s, &red)?;
        }
    }
    one(out)
}

pub(super) fn op_one_hot(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let ind = inp(ins, 0)?;
    let depth = inp(ins, 1)?.scalar_f()? as i64;
    let vals = inp(ins, 2)?;
    if vals.len() != 2 || depth < 1 {
        return Err(err("OneHot values / depth"));
    }
    let r = ind.rank() + 1;
    let axis = norm_axis(n.int("axis", -1), r)?;
    let mut shape = ind.shape.clone();
    shape.insert(axis, depth as usize);
    check_size(&shape)?;
    let iv = ind.floats()?;
    let (outer, _, inner) = split_at_axis(&shape, axis);
    let total = numel(&shape);
    let mut idx = vec![0usize; total];
    for o in 0..outer {
        for i in 0..inner {
            let mut k = iv[o * inner + i] as i64;
            if k < 0 {
                k += depth;
            }
            if k >= 0 && k < depth {
                idx[(o * depth as usize + k as usize) * inner + i] = 1;
            }
        }
    }
    one(vals.take(shape, &idx))
}
