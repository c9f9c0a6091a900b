//! Sampling grids: GridSample and AffineGrid.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

fn reflect(x: f64, lo: f64, hi: f64) -> f64 {
    let rng = hi - lo;
    if rng <= 0.0 {
        return lo;
    }
    if x < lo {
        let dx = lo - x;
        let k = (dx / rng).floor();
        let r = dx - k * rng;
        if k as i64 % 2 == 0 { lo + r } else { hi - r }
    } else if x > hi {
        let dx = x - hi;
        let k = (dx / rng).floor();
        let r = dx - k * rng;
        if k as i64 % 2 == 0 { hi - r } else { lo + r }
    } else {
        x
    }
}

fn cubic_w(t: f64) -> [f64; 4] {
    // GridSample's bicubic is Resize's cubic convolution at its default coefficient.
    let k = |x: f64| super::resize::cubic(x, -0.75);
    [k(t + 1.0), k(t), k(1.0 - t), k(2.0 - t)]
}

pub(super) fn op_grid_sample(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let grid = inp(ins, 1)?;
    let r = x.rank();
    if r < 3 || grid.rank() != r || grid.shape[r - 1] != r - 2 || grid.shape[0] != x.shape[0] {
        return Err(err(format!(
            "GridSample of {:?} with grid {:?}",
            x.shape, grid.shape
        )));
    }
    let sp = r - 2;
    let mode = match n.string("mode", "linear").as_str() {
        "bilinear" | "linear" => 1,
        "nearest" => 0,
        "bicubic" | "cubic" => 2,
        m => return Err(unsup(format!("GridSample mode {m}"))),
    };
    let pad = n.string("padding_mode", "zeros");
    let align = n.int("align_corners", 0) != 0;
    let (nb, c) = (x.shape[0], x.shape[1]);
    let size = &x.shape[2..];
    let osp = &grid.shape[1..r - 1];
    let on = numel(osp);
    let isz = numel(size);
    let ist = strides(size);
    let xv = x.fs()?;
    let gv = grid.floats()?;
    let mut out = vec![0.0; nb * c * on];
    for b in 0..nb {
        for o in 0..on {
            // Per spatial dim (in tensor order), the taps (index, weight).
            let mut per: Vec<Vec<(i64, f64)>> = Vec::with_capacity(sp);
            for d in 0..sp {
                // grid's last dim lists x (innermost spatial dim) first.
                let g = gv[(b * on + o) * sp + (sp - 1 - d)];
                let s = size[d] as f64;
                let mut u = if align {
                    (g + 1.0) / 2.0 * (s - 1.0)
                } else {
                    ((g + 1.0) * s - 1.0) / 2.0
                };
                match pad.as_str() {
                    // ONNX clamps a coordinate only once it leaves the border range
                    // ([-0.5, s - 0.5] without align_corners): a bicubic tap past the last
                    // element inside that range is clamped on its own below.
                    "border" => {
                        let (lo, hi) = if align {
                            (0.0, s - 1.0)
                        } else {
                            (-0.5, s - 0.5)
                        };
                        if u < lo || u > hi {
                            u = u.clamp(0.0, s - 1.0);
                        }
                    }
                    "reflection" => {
                        u = if align {
                            reflect(u, 0.0, s - 1.0)
                        } else {
                            reflect(u, -0.5, s - 0.5)
                        }
                    }
                    "zeros" => {}
                    p => return Err(unsup(format!("padding_mode {p}"))),
                }
                let f = u.floor();
                let t = u - f;
                per.push(match mode {
                    0 => vec![(u.round_ties_even() as i64, 1.0)],
                    1 => vec![(f as i64, 1.0 - t), (f as i64 + 1, t)],
                    _ => {
                        let w = cubic_w(t);
                        (0..4).map(|k| (f as i64 - 1 + k as i64, w[k])).collect()
                    }
                });
            }
            for ch in 0..c {
                let base = (b * c + ch) * isz;
                let mut acc = 0.0;
                let mut idx = vec![0usize; sp];
                loop {
                    let mut w = 1.0;
                    let mut flat = 0usize;
                    let mut zero = false;
                    for d in 0..sp {
                        let (mut i, wd) = per[d][idx[d]];
                        w *= wd;
                        let dim = size[d] as i64;
                        if i < 0 || i >= dim {
                            match pad.as_str() {
                                "zeros" => zero = true,
                                "border" => i = i.clamp(0, dim - 1),
                                _ => {
                                    let lo = if align { 0.0 } else { -0.5 };
                                    let hi = if align {
                                        dim as f64 - 1.0
                                    } else {
                                        dim as f64 - 0.5
                                    };
                                    i = (reflect(i as f64, lo, hi).round() as i64)
                                        .clamp(0, dim - 1);
                                }
                            }
                        }
                        flat += i.max(0) as usize * ist[d];
                    }
                    if !zero && w != 0.0 {
                        acc += w * xv[base + flat];
                    }
                    if !next_index(&mut idx, |d| per[d].len()) {
                        break;
                    }
                }
                out[(b * c + ch) * on + o] = acc;
            }
        }
    }
    let mut shape = vec![nb, c];
    shape.extend(osp);
    one(T::f(x.dt, shape, out))
}

pub(super) fn op_affine_grid(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let theta = inp(ins, 0)?;
    let size = dims(&inp(ins, 1)?.ints()?)?;
    let align = n.int("align_corners", 0) != 0;
    let sp = size.len().saturating_sub(2);
    if !(sp == 2 || sp == 3) || theta.shape != [size[0], sp, sp + 1] {
        return Err(err("AffineGrid shapes"));
    }
    let tv = theta.fs()?;
    let osp = &size[2..];
    let on = numel(osp);
    check_size(&[size[0], on, sp])?;
    let coord = |i: usize, len: usize| -> f64 {
        if align {
            if len <= 1 {
                0.0
            } else {
                -1.0 + 2.0 * i as f64 / (len - 1) as f64
            }
        } else {
            (2.0 * i as f64 + 1.0) / len as f64 - 1.0
        }
    };
    let mut out = Vec::with_capacity(size[0] * on * sp);
    for b in 0..size[0] {
        let th = &tv[b * sp * (sp + 1)..(b + 1) * sp * (sp + 1)];
        for p in 0..on {
            let mi = unravel(p, osp);
            // Base point (x, y[, z]): x runs along the last spatial dim.
            let mut base: Vec<f64> = (0..sp)
                .map(|k| coord(mi[sp - 1 - k], osp[sp - 1 - k]))
                .collect();
            base.push(1.0);
            for row in 0..sp {
                out.push((0..=sp).map(|k| th[row * (sp + 1) + k] * base[k]).sum());
            }
        }
    }
    let mut shape = vec![size[0]];
    shape.extend(osp);
    shape.push(sp);
    one(T::f(theta.dt, shape, out))
}
