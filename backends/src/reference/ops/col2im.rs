//! Col2Im.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

pub(super) fn op_col2im(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let img = dims(&inp(ins, 1)?.ints()?)?;
    let blk = dims(&inp(ins, 2)?.ints()?)?;
    let r = img.len();
    if x.rank() != 3 || blk.len() != r || blk.contains(&0) {
        return Err(err("Col2Im shapes"));
    }
    let get = |name: &str, len: usize, d: i64| -> Vec<i64> {
        n.ints(name).map(|v| v.to_vec()).unwrap_or(vec![d; len])
    };
    let dil = get("dilations", r, 1);
    let pads = get("pads", 2 * r, 0);
    let st = get("strides", r, 1);
    if dil.len() != r || pads.len() != 2 * r || st.len() != r {
        return Err(err("Col2Im attributes"));
    }
    let kprod = numel(&blk);
    let (nb, ck, l) = (x.shape[0], x.shape[1], x.shape[2]);
    if ck % kprod != 0 {
        return Err(err("Col2Im channels"));
    }
    let c = ck / kprod;
    let mut counts = Vec::with_capacity(r);
    for d in 0..r {
        let o = (img[d] as i64 + pads[d] + pads[d + r] - (dil[d] * (blk[d] as i64 - 1) + 1))
            / st[d].max(1)
            + 1;
        counts.push(o.max(0) as usize);
    }
    if numel(&counts) != l {
        return Err(err(format!(
            "Col2Im: {l} blocks, expected {}",
            numel(&counts)
        )));
    }
    let isz = numel(&img);
    check_size(&[nb, ck, isz])?;
    let ist = strides(&img);
    let xv = x.fs()?;
    let mut out = vec![0.0; nb * c * isz];
    for b in 0..nb {
        for ch in 0..c {
            for k in 0..kprod {
                let ki = unravel(k, &blk);
                for pos in 0..l {
                    let pi = unravel(pos, &counts);
                    let mut flat = 0usize;
                    let mut inside = true;
                    for d in 0..r {
                        let q = pi[d] as i64 * st[d] + ki[d] as i64 * dil[d] - pads[d];
                        if q < 0 || q >= img[d] as i64 {
                            inside = false;
                            break;
                        }
                        flat += q as usize * ist[d];
                    }
                    if inside {
                        out[(b * c + ch) * isz + flat] += xv[(b * ck + ch * kprod + k) * l + pos];
                    }
                }
            }
        }
    }
    let mut shape = vec![nb, c];
    shape.extend(img);
    one(T::f(x.dt, shape, out))
}
