//! Region-of-interest pooling: RoiAlign and MaxRoiPool.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

pub(super) fn op_roi_align(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let rois = inp(ins, 1)?.floats()?;
    let bidx = inp(ins, 2)?.ints()?;
    if x.rank() != 4 || rois.len() != bidx.len() * 4 {
        return Err(err("RoiAlign shapes"));
    }
    let half = if cx.opset >= 16 {
        n.string("coordinate_transformation_mode", "half_pixel") == "half_pixel"
    } else {
        false
    };
    let max_mode = match n.string("mode", "avg").as_str() {
        "avg" => false,
        "max" => true,
        m => return Err(err(format!("RoiAlign mode {m}"))),
    };
    let oh = n.int("output_height", 1).max(1) as usize;
    let ow = n.int("output_width", 1).max(1) as usize;
    let sr = n.int("sampling_ratio", 0).max(0) as usize;
    let scale = n.float("spatial_scale", 1.0) as f64;
    let (nb, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
    let xv = x.fs()?;
    let nr = bidx.len();
    let mut out = vec![0.0; nr * c * oh * ow];
    for r in 0..nr {
        let b = bidx[r];
        if b < 0 || b as usize >= nb {
            return Err(err(format!("batch index {b} out of range")));
        }
        let off = if half { 0.5 } else { 0.0 };
        let x1 = rois[r * 4] * scale - off;
        let y1 = rois[r * 4 + 1] * scale - off;
        let x2 = rois[r * 4 + 2] * scale - off;
        let y2 = rois[r * 4 + 3] * scale - off;
        let (mut rw, mut rh) = (x2 - x1, y2 - y1);
        if !half {
            rw = rw.max(1.0);
            rh = rh.max(1.0);
        }
        let (bh, bw) = (rh / oh as f64, rw / ow as f64);
        let gh = if sr > 0 {
            sr
        } else {
            (rh / oh as f64).ceil().max(0.0) as usize
        };
        let gw = if sr > 0 {
            sr
        } else {
            (rw / ow as f64).ceil().max(0.0) as usize
        };
        let count = (gh * gw).max(1) as f64;
        for ch in 0..c {
            let base = (b as usize * c + ch) * h * w;
            let at = |yy: usize, xx: usize| xv[base + yy * w + xx];
            for ph in 0..oh {
                for pw in 0..ow {
                    let mut acc = if max_mode { f64::NEG_INFINITY } else { 0.0 };
                    let mut any = false;
                    for iy in 0..gh {
                        let y0 = y1 + ph as f64 * bh + (iy as f64 + 0.5) * bh / gh as f64;
                        for ix in 0..gw {
                            let x0 = x1 + pw as f64 * bw + (ix as f64 + 0.5) * bw / gw as f64;
                            any = true;
                            if y0 < -1.0 || y0 > h as f64 || x0 < -1.0 || x0 > w as f64 {
                                if max_mode {
                                    acc = acc.max(0.0);
                                }
                                continue;
                            }
                            let y = y0.max(0.0);
                            let xx = x0.max(0.0);
                            let (mut yl, mut xl) = (y.floor() as usize, xx.floor() as usize);
                            let (yh, xh);
                            let (mut yy, mut xq) = (y, xx);
                            if yl >= h - 1 {
                                yl = h - 1;
                                yh = h - 1;
                                yy = yl as f64;
                            } else {
                                yh = yl + 1;
                            }
                            if xl >= w - 1 {
                                xl = w - 1;
                                xh = w - 1;
                                xq = xl as f64;
                            } else {
                                xh = xl + 1;
                            }
                            let (ly, lx) = (yy - yl as f64, xq - xl as f64);
                            let (hy, hx) = (1.0 - ly, 1.0 - lx);
                            let parts = [
                                hy * hx * at(yl, xl),
                                hy * lx * at(yl, xh),
                                ly * hx * at(yh, xl),
                                ly * lx * at(yh, xh),
                            ];
                            if max_mode {
                                for p in parts {
                                    acc = acc.max(p);
                                }
                            } else {
                                acc += parts.iter().sum::<f64>();
                            }
                        }
                    }
                    out[((r * c + ch) * oh + ph) * ow + pw] = if max_mode {
                        if any { acc } else { 0.0 }
                    } else {
                        acc / count
                    };
                }
            }
        }
    }
    one(T::f(x.dt, vec![nr, c, oh, ow], out))
}

pub(super) fn op_max_roi_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let rois = inp(ins, 1)?.floats()?;
    let ps = n.ints("pooled_shape").ok_or_else(|| err("pooled_shape"))?;
    if x.rank() != 4 || ps.len() != 2 || ps[0] < 1 || ps[1] < 1 || rois.len() % 5 != 0 {
        return Err(err("MaxRoiPool shapes"));
    }
    let (ph, pw) = (ps[0] as usize, ps[1] as usize);
    let scale = n.float("spatial_scale", 1.0) as f64;
    let (nb, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
    let xv = x.fs()?;
    let nr = rois.len() / 5;
    let mut out = vec![0.0; nr * c * ph * pw];
    for r in 0..nr {
        let q = &rois[r * 5..r * 5 + 5];
        let b = q[0] as i64;
        if b < 0 || b as usize >= nb {
            return Err(err("MaxRoiPool batch index"));
        }
        let x1 = (q[1] * scale).round() as i64;
        let y1 = (q[2] * scale).round() as i64;
        let x2 = (q[3] * scale).round() as i64;
        let y2 = (q[4] * scale).round() as i64;
        let rh = (y2 - y1 + 1).max(1) as f64;
        let rw = (x2 - x1 + 1).max(1) as f64;
        for ch in 0..c {
            let base = (b as usize * c + ch) * h * w;
            for i in 0..ph {
                let hs = ((i as f64 * rh / ph as f64).floor() as i64 + y1).clamp(0, h as i64);
                let he = (((i + 1) as f64 * rh / ph as f64).ceil() as i64 + y1).clamp(0, h as i64);
                for j in 0..pw {
                    let ws = ((j as f64 * rw / pw as f64).floor() as i64 + x1).clamp(0, w as i64);
                    let we =
                        (((j + 1) as f64 * rw / pw as f64).ceil() as i64 + x1).clamp(0, w as i64);
                    let mut m = f64::NEG_INFINITY;
                    for yy in hs..he {
                        for xx in ws..we {
                            m = m.max(xv[base + yy as usize * w + xx as usize]);
                        }
                    }
                    out[((r * c + ch) * ph + i) * pw + j] = if m.is_finite() || he > hs {
                        if he > hs && we > ws { m } else { 0.0 }
                    } else {
                        0.0
                    };
                }
            }
        }
    }
    one(T::f(x.dt, vec![nr, c, ph, pw], out))
}
