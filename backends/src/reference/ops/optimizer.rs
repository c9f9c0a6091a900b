//! The training optimizers: Adagrad, Momentum, Adam.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

/// Splits the optimizer inputs after R and T into `groups` equal lists.
fn opt_groups<'v>(ins: &[Option<&'v V>], groups: usize) -> R<Vec<Vec<&'v T>>> {
    let rest = ins.len().saturating_sub(2);
    if rest == 0 || !rest.is_multiple_of(groups) {
        return Err(err("optimizer input count"));
    }
    let k = rest / groups;
    (0..groups)
        .map(|g| (0..k).map(|i| inp(ins, 2 + g * k + i)).collect())
        .collect()
}

fn same(a: &T, b: &T) -> R<()> {
    if a.shape != b.shape {
        return Err(err(format!("shapes {:?} and {:?}", a.shape, b.shape)));
    }
    Ok(())
}

pub(super) fn op_adagrad(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let r = inp(ins, 0)?.scalar_f()?;
    let t = inp(ins, 1)?.scalar_f()?;
    let g = opt_groups(ins, 3)?;
    let decay = n.float("decay_factor", 0.0) as f64;
    let eps = n.float("epsilon", 1e-6) as f64;
    let norm = n.float("norm_coefficient", 0.0) as f64;
    let rate = r / (1.0 + t * decay);
    let mut xs = Vec::new();
    let mut hs = Vec::new();
    for i in 0..g[0].len() {
        let (x, gr, h) = (g[0][i], g[1][i], g[2][i]);
        same(x, gr)?;
        same(x, h)?;
        let (xv, gv, hv) = (x.fs()?, gr.fs()?, h.fs()?);
        let mut nx = Vec::with_capacity(xv.len());
        let mut nh = Vec::with_capacity(xv.len());
        for j in 0..xv.len() {
            let gg = norm * xv[j] + gv[j];
            let hh = hv[j] + gg * gg;
            nh.push(hh);
            nx.push(xv[j] - rate * gg / (hh.sqrt() + eps));
        }
        xs.push(V::T(T::f(x.dt, x.shape.clone(), nx)));
        hs.push(V::T(T::f(h.dt, h.shape.clone(), nh)));
    }
    xs.extend(hs);
    Ok(xs)
}

pub(super) fn op_momentum(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let r = inp(ins, 0)?.scalar_f()?;
    let t = inp(ins, 1)?.scalar_f()?;
    let g = opt_groups(ins, 3)?;
    let alpha = n.float("alpha", 0.0) as f64;
    let beta = n.float("beta", 0.0) as f64;
    let norm = n.float("norm_coefficient", 0.0) as f64;
    let nesterov = match n.string("mode", "standard").as_str() {
        "standard" => false,
        "nesterov" => true,
        m => return Err(err(format!("Momentum mode {m}"))),
    };
    let b = if t > 0.0 { beta } else { 1.0 };
    let mut xs = Vec::new();
    let mut vs = Vec::new();
    for i in 0..g[0].len() {
        let (x, gr, v) = (g[0][i], g[1][i], g[2][i]);
        same(x, gr)?;
        same(x, v)?;
        let (xv, gv, vv) = (x.fs()?, gr.fs()?, v.fs()?);
        let mut nx = Vec::with_capacity(xv.len());
        let mut nv = Vec::with_capacity(xv.len());
        for j in 0..xv.len() {
            let gg = norm * xv[j] + gv[j];
            let vn = alpha * vv[j] + b * gg;
            nv.push(vn);
            nx.push(if nesterov {
                xv[j] - r * (gg + alpha * vn)
            } else {
                xv[j] - r * vn
            });
        }
        xs.push(V::T(T::f(x.dt, x.shape.clone(), nx)));
        vs.push(V::T(T::f(v.dt, v.shape.clone(), nv)));
    }
    xs.extend(vs);
    Ok(xs)
}

pub(super) fn op_adam(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let r = inp(ins, 0)?.scalar_f()?;
    let t = inp(ins, 1)?.scalar_f()?;
    let g = opt_groups(ins, 4)?;
    let alpha = n.float("alpha", 0.9) as f64;
    let beta = n.float("beta", 0.999) as f64;
    let eps = n.float("epsilon", 1e-6) as f64;
    let norm = n.float("norm_coefficient", 0.0) as f64;
    let post = n.float("norm_coefficient_post", 0.0) as f64;
    let rate = if t > 0.0 {
        r * (1.0 - beta.powf(t)).sqrt() / (1.0 - alpha.powf(t))
    } else {
        r
    };
    let (mut xs, mut vs, mut hs) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..g[0].len() {
        let (x, gr, v, h) = (g[0][i], g[1][i], g[2][i], g[3][i]);
        same(x, gr)?;
        same(x, v)?;
        same(x, h)?;
        let (xv, gv, vv, hv) = (x.fs()?, gr.fs()?, v.fs()?, h.fs()?);
        let (mut nx, mut nv, mut nh) = (vec![], vec![], vec![]);
        for j in 0..xv.len() {
            let gg = norm * xv[j] + gv[j];
            let vn = alpha * vv[j] + (1.0 - alpha) * gg;
            let hn = beta * hv[j] + (1.0 - beta) * gg * gg;
            let xn = xv[j] - rate * vn / (hn.sqrt() + eps);
            nx.push((1.0 - post) * xn);
            nv.push(vn);
            nh.push(hn);
        }
        xs.push(V::T(T::f(x.dt, x.shape.clone(), nx)));
        vs.push(V::T(T::f(v.dt, v.shape.clone(), nv)));
        hs.push(V::T(T::f(h.dt, h.shape.clone(), nh)));
    }
    xs.extend(vs);
    xs.extend(hs);
    Ok(xs)
}
