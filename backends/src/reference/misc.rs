//! Less common ops: NonMaxSuppression, GridSample, MaxUnpool, window functions, DFT / STFT,
//! StringNormalizer, LpNormalization and the training optimizers (Adagrad, Momentum, Adam).
use super::tensor::*;
use super::{Cx, OpFn, V, inp, one, opt};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use std::collections::BTreeMap;
use std::f64::consts::PI;

type Out = R<Vec<V>>;

fn op_nms(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let boxes = inp(ins, 0)?;
    let scores = inp(ins, 1)?;
    let max_out = match opt(ins, 2)? {
        Some(t) if !t.is_empty() => t.scalar_i()?.max(0) as usize,
        _ => 0,
    };
    let iou_th = match opt(ins, 3)? {
        Some(t) if !t.is_empty() => t.scalar_f()?,
        _ => 0.0,
    };
    let score_th = match opt(ins, 4)? {
        Some(t) if !t.is_empty() => Some(t.scalar_f()?),
        _ => None,
    };
    let center = n.int("center_point_box", 0) != 0;
    if boxes.rank() != 3 || scores.rank() != 3 || boxes.shape[2] != 4 {
        return Err(err("NonMaxSuppression shapes"));
    }
    let (nb, nbox) = (boxes.shape[0], boxes.shape[1]);
    let nc = scores.shape[1];
    if scores.shape[0] != nb || scores.shape[2] != nbox {
        return Err(err("NonMaxSuppression boxes and scores disagree"));
    }
    let bv = boxes.floats()?;
    let sv = scores.floats()?;
    // (y1, x1, y2, x2) with y1 <= y2, x1 <= x2.
    let corners = |b: usize, i: usize| -> [f64; 4] {
        let p = &bv[(b * nbox + i) * 4..(b * nbox + i) * 4 + 4];
        if center {
            let (xc, yc, w, h) = (p[0], p[1], p[2], p[3]);
            [yc - h / 2.0, xc - w / 2.0, yc + h / 2.0, xc + w / 2.0]
        } else {
            [
                p[0].min(p[2]),
                p[1].min(p[3]),
                p[0].max(p[2]),
                p[1].max(p[3]),
            ]
        }
    };
    let iou = |a: [f64; 4], b: [f64; 4]| {
        let ih = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
        let iw = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
        let inter = ih * iw;
        let ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
        if ua <= 0.0 { 0.0 } else { inter / ua }
    };
    let mut out = Vec::new();
    for b in 0..nb {
        for c in 0..nc {
            let s = &sv[(b * nc + c) * nbox..(b * nc + c + 1) * nbox];
            let mut order: Vec<usize> = (0..nbox)
                .filter(|&i| score_th.is_none_or(|t| s[i] > t))
                .collect();
            order.sort_by(|&i, &j| s[j].total_cmp(&s[i]).then(i.cmp(&j)));
            let mut kept: Vec<usize> = Vec::new();
            for i in order {
                if kept.len() >= max_out {
                    break;
                }
                if kept
                    .iter()
                    .all(|&k| iou(corners(b, k), corners(b, i)) <= iou_th)
                {
                    kept.push(i);
                }
            }
            for k in kept {
                out.extend([b as i64, c as i64, k as i64]);
            }
        }
    }
    let rows = out.len() / 3;
    one(T::i(DType::I64, vec![rows, 3], out))
}

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
    let a = -0.75;
    let k = |x: f64| {
        let x = x.abs();
        if x <= 1.0 {
            ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        } else if x < 2.0 {
            ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
        } else {
            0.0
        }
    };
    [k(t + 1.0), k(t), k(1.0 - t), k(2.0 - t)]
}

fn op_grid_sample(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_max_unpool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn window(n: &Node, ins: &[Option<&V>], f: impl Fn(f64, f64) -> f64) -> Out {
    let size = inp(ins, 0)?.scalar_i()?;
    if size < 0 {
        return Err(err("window size is negative"));
    }
    let size = size as usize;
    check_size(&[size])?;
    let periodic = n.int("periodic", 1) != 0;
    let dt = DType::from_code(n.int("output_datatype", 1) as i32);
    let nn = if periodic {
        size as f64
    } else {
        size as f64 - 1.0
    };
    let v = (0..size).map(|i| f(i as f64, nn)).collect();
    one(T::from_f64s(dt, vec![size], v)?)
}

fn op_hann(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    window(n, ins, |i, nn| 0.5 - 0.5 * (2.0 * PI * i / nn).cos())
}
fn op_hamming(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    window(n, ins, |i, nn| {
        25.0 / 46.0 - 21.0 / 46.0 * (2.0 * PI * i / nn).cos()
    })
}
fn op_blackman(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    window(n, ins, |i, nn| {
        0.42 - 0.5 * (2.0 * PI * i / nn).cos() + 0.08 * (4.0 * PI * i / nn).cos()
    })
}

/// Naive DFT of complex `(re, im)` samples; `out_len` bins.
fn dft(re: &[f64], im: &[f64], n: usize, out_len: usize, inverse: bool) -> (Vec<f64>, Vec<f64>) {
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut or = vec![0.0; out_len];
    let mut oi = vec![0.0; out_len];
    for k in 0..out_len {
        let (mut sr, mut si) = (0.0, 0.0);
        for t in 0..n {
            let a = sign * 2.0 * PI * ((k * t) % n.max(1)) as f64 / n as f64;
            let (s, c) = a.sin_cos();
            sr += re[t] * c - im[t] * s;
            si += re[t] * s + im[t] * c;
        }
        if inverse {
            sr /= n as f64;
            si /= n as f64;
        }
        or[k] = sr;
        oi[k] = si;
    }
    (or, oi)
}

fn op_dft(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let r = x.rank();
    if r < 3 || !(x.shape[r - 1] == 1 || x.shape[r - 1] == 2) {
        return Err(err(format!("DFT input {:?}", x.shape)));
    }
    let axis = if cx.opset >= 20 {
        match opt(ins, 2)? {
            Some(a) => a.scalar_i()?,
            None => -2,
        }
    } else {
        n.int("axis", 1)
    };
    let axis = norm_axis(axis, r)?;
    if axis == r - 1 {
        return Err(err("DFT axis is the complex axis"));
    }
    let inverse = n.int("inverse", 0) != 0;
    let onesided = n.int("onesided", 0) != 0;
    let len = x.shape[axis];
    let nfft = match opt(ins, 1)? {
        Some(t) if !t.is_empty() => t.scalar_i()?.max(0) as usize,
        _ => len,
    };
    let bins = if onesided { nfft / 2 + 1 } else { nfft };
    check_size(&[nfft, numel(&x.shape)])?;
    let cplx = x.shape[r - 1] == 2;
    let xv = x.floats()?;
    let (outer, _, inner2) = split_at_axis(&x.shape[..r - 1], axis);
    let mut oshape = x.shape.clone();
    oshape[axis] = bins;
    oshape[r - 1] = 2;
    let mut out = vec![0.0; outer * bins * inner2 * 2];
    let comps = x.shape[r - 1];
    for o in 0..outer {
        for i in 0..inner2 {
            let mut re = vec![0.0; nfft];
            let mut im = vec![0.0; nfft];
            for t in 0..nfft.min(len) {
                let p = ((o * len + t) * inner2 + i) * comps;
                re[t] = xv[p];
                if cplx {
                    im[t] = xv[p + 1];
                }
            }
            let (fr, fi) = dft(&re, &im, nfft, bins, inverse);
            for k in 0..bins {
                let q = ((o * bins + k) * inner2 + i) * 2;
                out[q] = fr[k];
                out[q + 1] = fi[k];
            }
        }
    }
    one(T::f(x.dt, oshape, out))
}

fn op_stft(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    if x.rank() != 3 || !(x.shape[2] == 1 || x.shape[2] == 2) {
        return Err(err("STFT signal must be [batch, length, 1 or 2]"));
    }
    let step = inp(ins, 1)?.scalar_i()?;
    let win = opt(ins, 2)?.map(|w| w.floats()).transpose()?;
    let flen = match opt(ins, 3)? {
        Some(t) => t.scalar_i()?,
        None => win.as_ref().map(|w| w.len() as i64).unwrap_or(0),
    };
    if step < 1 || flen < 1 {
        return Err(err("STFT frame_step and frame_length must be positive"));
    }
    let (step, flen) = (step as usize, flen as usize);
    if win.as_ref().is_some_and(|w| w.len() != flen) {
        return Err(err("STFT window length"));
    }
    let (nb, len, comps) = (x.shape[0], x.shape[1], x.shape[2]);
    if len < flen {
        return Err(err("STFT signal shorter than a frame"));
    }
    let frames = (len - flen) / step + 1;
    check_size(&[nb, frames, flen, 2])?;
    let onesided = n.int("onesided", 1) != 0;
    let bins = if onesided { flen / 2 + 1 } else { flen };
    let xv = x.floats()?;
    let mut out = vec![0.0; nb * frames * bins * 2];
    for b in 0..nb {
        for f in 0..frames {
            let mut re = vec![0.0; flen];
            let mut im = vec![0.0; flen];
            for t in 0..flen {
                let w = win.as_ref().map(|w| w[t]).unwrap_or(1.0);
                let p = (b * len + f * step + t) * comps;
                re[t] = xv[p] * w;
                if comps == 2 {
                    im[t] = xv[p + 1] * w;
                }
            }
            let (fr, fi) = dft(&re, &im, flen, bins, false);
            for k in 0..bins {
                let q = ((b * frames + f) * bins + k) * 2;
                out[q] = fr[k];
                out[q + 1] = fi[k];
            }
        }
    }
    one(T::f(x.dt, vec![nb, frames, bins, 2], out))
}

fn op_string_normalizer(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let Buf::S(v) = &x.buf else {
        return Err(err("StringNormalizer needs strings"));
    };
    let action = n.string("case_change_action", "NONE");
    let sensitive = n.int("is_case_sensitive", 0) != 0;
    let stop: Vec<String> = match n.attr("stopwords") {
        Some(AttrValue::Strings(s)) => s
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect(),
        _ => vec![],
    };
    let is_stop = |s: &str| {
        stop.iter().any(|w| {
            if sensitive {
                w == s
            } else {
                w.to_lowercase() == s.to_lowercase()
            }
        })
    };
    let mut out: Vec<Vec<u8>> = Vec::new();
    for b in v {
        let s = String::from_utf8_lossy(b).into_owned();
        if is_stop(&s) {
            continue;
        }
        let s = match action.as_str() {
            "LOWER" => s.to_lowercase(),
            "UPPER" => s.to_uppercase(),
            "NONE" => s,
            a => return Err(err(format!("case_change_action {a}"))),
        };
        out.push(s.into_bytes());
    }
    let two_d = x.rank() == 2;
    if out.is_empty() {
        out.push(vec![]);
    }
    let shape = if two_d {
        vec![1, out.len()]
    } else {
        vec![out.len()]
    };
    one(T {
        dt: DType::String,
        shape,
        buf: Buf::S(out),
    })
}

fn op_lp_normalization(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let axis = norm_axis(n.int("axis", -1), x.rank())?;
    let p = n.int("p", 2);
    if p != 1 && p != 2 {
        return Err(err(format!("LpNormalization p={p}")));
    }
    let (outer, len, inner) = split_at_axis(&x.shape, axis);
    let xv = x.fs()?;
    let mut out = vec![0.0; xv.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * len + k) * inner + i;
            let norm = if p == 1 {
                (0..len).map(|k| xv[at(k)].abs()).sum::<f64>()
            } else {
                (0..len).map(|k| xv[at(k)] * xv[at(k)]).sum::<f64>().sqrt()
            };
            for k in 0..len {
                out[at(k)] = if norm == 0.0 { 0.0 } else { xv[at(k)] / norm };
            }
        }
    }
    one(T::f(x.dt, x.shape.clone(), out))
}

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

fn op_adagrad(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_momentum(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_adam(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn register(t: &mut BTreeMap<&'static str, OpFn>) {
    let ops: &[(&'static str, OpFn)] = &[
        ("NonMaxSuppression", op_nms),
        ("GridSample", op_grid_sample),
        ("MaxUnpool", op_max_unpool),
        ("HannWindow", op_hann),
        ("HammingWindow", op_hamming),
        ("BlackmanWindow", op_blackman),
        ("DFT", op_dft),
        ("STFT", op_stft),
        ("StringNormalizer", op_string_normalizer),
        ("LpNormalization", op_lp_normalization),
        ("ai.onnx.preview.training::Adagrad", op_adagrad),
        ("ai.onnx.preview.training::Momentum", op_momentum),
        ("ai.onnx.preview.training::Adam", op_adam),
    ];
    for (k, f) in ops {
        t.insert(k, *f);
    }
}
