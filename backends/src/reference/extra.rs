//! More ops: TfIdfVectorizer, RoiAlign, MaxRoiPool, MelWeightMatrix, CenterCropPad, Col2Im,
//! AffineGrid, StringConcat, StringSplit.
use super::elementwise::bcast2;
use super::shape::norm_axes;
use super::tensor::*;
use super::{Cx, OpFn, V, inp, one};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use std::collections::{BTreeMap, HashMap};

type Out = R<Vec<V>>;

/// An n-gram item: an integer or a byte string.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Item {
    I(i64),
    S(Vec<u8>),
}

fn op_tfidf(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let items: Vec<Item> = match &x.buf {
        Buf::I(v) => v.iter().map(|&i| Item::I(i)).collect(),
        Buf::S(v) => v.iter().map(|s| Item::S(s.clone())).collect(),
        _ => return Err(err("TfIdfVectorizer input must be integers or strings")),
    };
    let min_n = n.int("min_gram_length", 1).max(1) as usize;
    let max_n = n.int("max_gram_length", 1).max(1) as usize;
    let max_skip = n.int("max_skip_count", 0).max(0) as usize;
    let mode = n.string("mode", "TF");
    let counts = n.ints("ngram_counts").unwrap_or(&[]).to_vec();
    let indexes = n.ints("ngram_indexes").unwrap_or(&[]).to_vec();
    let weights = n.floats("weights").map(|w| w.to_vec());
    let pool: Vec<Item> = match (n.ints("pool_int64s"), n.attr("pool_strings")) {
        (Some(p), _) => p.iter().map(|&i| Item::I(i)).collect(),
        (None, Some(AttrValue::Strings(s))) => s.iter().map(|b| Item::S(b.clone())).collect(),
        _ => return Err(err("TfIdfVectorizer without a pool")),
    };
    // n-gram (as items) -> output column.
    let mut table: HashMap<Vec<Item>, usize> = HashMap::new();
    let mut ordinal = 0usize;
    for (k, &start) in counts.iter().enumerate() {
        let gl = k + 1;
        let end = counts.get(k + 1).map(|&e| e as usize).unwrap_or(pool.len());
        let start = start as usize;
        if start > end || end > pool.len() {
            return Err(err("ngram_counts out of range"));
        }
        let mut p = start;
        while p + gl <= end {
            let col = *indexes
                .get(ordinal)
                .ok_or_else(|| err("ngram_indexes too short"))?;
            if col < 0 {
                return Err(err("negative ngram index"));
            }
            table.insert(pool[p..p + gl].to_vec(), col as usize);
            ordinal += 1;
            p += gl;
        }
    }
    let width = indexes.iter().map(|&i| i as usize + 1).max().unwrap_or(0);
    let (rows, len) = match x.rank() {
        1 => (1, x.shape[0]),
        2 => (x.shape[0], x.shape[1]),
        _ => return Err(err("TfIdfVectorizer input must be 1-D or 2-D")),
    };
    let mut out = vec![0.0; rows * width];
    for r in 0..rows {
        let row = &items[r * len..(r + 1) * len];
        for gl in min_n..=max_n {
            let skips = if gl == 1 { 0 } else { max_skip };
            for skip in 0..=skips {
                let step = skip + 1;
                for start in 0..len {
                    let last = start + (gl - 1) * step;
                    if last >= len {
                        break;
                    }
                    let gram: Vec<Item> = (0..gl).map(|j| row[start + j * step].clone()).collect();
                    if let Some(&col) = table.get(&gram) {
                        out[r * width + col] += 1.0;
                    }
                }
            }
        }
    }
    for (i, v) in out.iter_mut().enumerate() {
        let w = weights
            .as_ref()
            .and_then(|w| w.get(i % width.max(1)))
            .map(|&w| w as f64)
            .unwrap_or(1.0);
        *v = match mode.as_str() {
            "TF" => *v,
            "IDF" => {
                if *v > 0.0 {
                    w
                } else {
                    0.0
                }
            }
            "TFIDF" => *v * w,
            m => return Err(err(format!("TfIdfVectorizer mode {m}"))),
        };
    }
    let shape = if x.rank() == 1 {
        vec![width]
    } else {
        vec![rows, width]
    };
    one(T::f(DType::F32, shape, out))
}

fn op_roi_align(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_max_roi_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_mel_weight_matrix(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let bins = inp(ins, 0)?.scalar_i()?;
    let dft_len = inp(ins, 1)?.scalar_i()?;
    let rate = inp(ins, 2)?.scalar_f()?;
    let lo = inp(ins, 3)?.scalar_f()?;
    let hi = inp(ins, 4)?.scalar_f()?;
    if bins < 1 || dft_len < 1 || rate <= 0.0 {
        return Err(err("MelWeightMatrix arguments"));
    }
    let (bins, dft_len) = (bins as usize, dft_len as usize);
    let spec = dft_len / 2 + 1;
    check_size(&[spec, bins])?;
    let mel = |f: f64| 2595.0 * (1.0 + f / 700.0).log10();
    let (lm, hm) = (mel(lo), mel(hi));
    let step = (hm - lm) / (bins + 2) as f64;
    let points: Vec<i64> = (0..bins + 2)
        .map(|i| {
            let m = i as f64 * step + lm;
            let hz = 700.0 * (10f64.powf(m / 2595.0) - 1.0);
            (((dft_len + 1) as f64 * hz) / rate).floor() as i64
        })
        .collect();
    let mut out = vec![0.0; spec * bins];
    let mut set = |j: i64, i: usize, v: f64| {
        if j >= 0 && (j as usize) < spec {
            out[j as usize * bins + i] = v;
        }
    };
    for i in 0..bins {
        let (l, c, h) = (points[i], points[i + 1], points[i + 2]);
        let lc = c - l;
        if lc == 0 {
            set(c, i, 1.0);
        } else {
            for j in l..=c {
                set(j, i, (j - l) as f64 / lc as f64);
            }
        }
        let ch = h - c;
        if ch > 0 {
            for j in c..h {
                set(j, i, (h - j) as f64 / ch as f64);
            }
        }
    }
    let dt = DType::from_code(n.int("output_datatype", 1) as i32);
    one(T::from_f64s(dt, vec![spec, bins], out)?)
}

fn op_center_crop_pad(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let target = dims(&inp(ins, 1)?.ints()?)?;
    let axes = match n.ints("axes") {
        Some(a) => norm_axes(a, x.rank())?,
        None => (0..x.rank()).collect(),
    };
    if axes.len() != target.len() {
        return Err(err("CenterCropPad shape length"));
    }
    let mut shape = x.shape.clone();
    for (j, &a) in axes.iter().enumerate() {
        shape[a] = target[j];
    }
    let total = check_size(&shape)?;
    let st = strides(&x.shape);
    let mut buf = x.buf.zeros_like(total);
    for p in 0..total {
        let mi = unravel(p, &shape);
        let mut flat = 0;
        let mut inside = true;
        for d in 0..x.rank() {
            let (i, o) = (x.shape[d] as i64, shape[d] as i64);
            // Crop: start (i - o) / 2 in the input; pad: start (o - i) / 2 in the output.
            let src = if o <= i {
                mi[d] as i64 + (i - o) / 2
            } else {
                mi[d] as i64 - (o - i) / 2
            };
            if src < 0 || src >= i {
                inside = false;
                break;
            }
            flat += src as usize * st[d];
        }
        if inside {
            buf.set_from(p, &x.buf, flat)?;
        }
    }
    one(x.with(shape, buf))
}

fn op_col2im(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_affine_grid(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_string_concat(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    let b = inp(ins, 1)?;
    let (Buf::S(x), Buf::S(y)) = (&a.buf, &b.buf) else {
        return Err(err("StringConcat needs strings"));
    };
    let (shape, ia, ib) = bcast2(a, b)?;
    let v = ia
        .iter()
        .zip(&ib)
        .map(|(&i, &j)| {
            let mut s = x[i].clone();
            s.extend_from_slice(&y[j]);
            s
        })
        .collect();
    one(a.with(shape, Buf::S(v)))
}

fn op_string_split(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let Buf::S(v) = &x.buf else {
        return Err(err("StringSplit needs strings"));
    };
    let delim = n.string("delimiter", "");
    let maxsplit = n
        .int_opt("maxsplit")
        .filter(|&m| m >= 0)
        .map(|m| m as usize);
    let mut parts: Vec<Vec<String>> = Vec::with_capacity(v.len());
    for b in v {
        let s = String::from_utf8_lossy(b).into_owned();
        let p: Vec<String> = if delim.is_empty() {
            let mut out: Vec<String> = Vec::new();
            let mut rest = s.trim_start();
            while !rest.is_empty() {
                if maxsplit.is_some_and(|m| out.len() == m) {
                    out.push(rest.trim_end().to_string());
                    break;
                }
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                out.push(rest[..end].to_string());
                rest = rest[end..].trim_start();
            }
            out
        } else {
            match maxsplit {
                Some(m) => s.splitn(m + 1, delim.as_str()).map(String::from).collect(),
                None => s.split(delim.as_str()).map(String::from).collect(),
            }
        };
        parts.push(p);
    }
    let width = parts.iter().map(|p| p.len()).max().unwrap_or(0);
    let mut y = Vec::with_capacity(parts.len() * width);
    let mut z = Vec::with_capacity(parts.len());
    for p in &parts {
        z.push(p.len() as i64);
        for k in 0..width {
            y.push(p.get(k).map(|s| s.clone().into_bytes()).unwrap_or_default());
        }
    }
    let mut ys = x.shape.clone();
    ys.push(width);
    Ok(vec![
        V::T(x.with(ys, Buf::S(y))),
        V::T(T::i(DType::I64, x.shape.clone(), z)),
    ])
}

pub(super) fn register(t: &mut BTreeMap<&'static str, OpFn>) {
    let ops: &[(&'static str, OpFn)] = &[
        ("TfIdfVectorizer", op_tfidf),
        ("RoiAlign", op_roi_align),
        ("MaxRoiPool", op_max_roi_pool),
        ("MelWeightMatrix", op_mel_weight_matrix),
        ("CenterCropPad", op_center_crop_pad),
        ("Col2Im", op_col2im),
        ("AffineGrid", op_affine_grid),
        ("StringConcat", op_string_concat),
        ("StringSplit", op_string_split),
    ];
    for (k, f) in ops {
        t.insert(k, *f);
    }
}
