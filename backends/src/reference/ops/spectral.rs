//! Spectral ops: DFT, STFT and MelWeightMatrix.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use std::f64::consts::PI;

type Out = R<Vec<V>>;

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

pub(super) fn op_dft(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_stft(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

pub(super) fn op_mel_weight_matrix(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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
