//! Resize (nearest, linear and cubic modes).
use super::window::{arr, lift};
use super::{Cx, Outs, Res, full, ints_attr, need_float, norm_axis, opt, req};
use crate::burn::tensor::{R, ReshapeExact, Val, bax, pad, run_err};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

/// How Resize maps an output coordinate back to the input.
fn resize_coord(mode: &str, x: f64, scale: f64, in_len: usize, out_len: usize) -> f64 {
    // ONNX takes the resized length as in * scale, unrounded
    let (i, o) = (in_len as f64, in_len as f64 * scale);
    let unscale = |v: f64| crate::reference::unscale_by(v, scale, in_len, out_len);
    match mode {
        "tf_half_pixel_for_nn" => unscale(x + 0.5),
        "asymmetric" => unscale(x),
        "align_corners" => {
            if out_len == 1 || o == 1.0 {
                0.0
            } else {
                x * (i - 1.0) / (o - 1.0)
            }
        }
        "pytorch_half_pixel" => {
            if out_len > 1 {
                unscale(x + 0.5) - 0.5
            } else {
                0.0
            }
        }
        "half_pixel_symmetric" => {
            let adj = o / (scale * i);
            let off = i / 2.0 * (1.0 - adj);
            off + unscale(x + 0.5) - 0.5
        }
        _ => unscale(x + 0.5) - 0.5,
    }
}

/// Taps (input indices and weights) of one resized axis.
fn resize_taps(
    a: &[mutagraph_ir::attr::Attribute],
    mode: &str,
    ctm: &str,
    scale: f64,
    in_len: usize,
    out_len: usize,
) -> Vec<(Vec<i64>, Vec<f32>)> {
    let last = in_len as i64 - 1;
    let clampi = |v: i64| v.clamp(0, last);
    match mode {
        "nearest" => {
            let nm = a.string("nearest_mode", "round_prefer_floor");
            let idx = (0..out_len)
                .map(|o| {
                    let x = resize_coord(ctm, o as f64, scale, in_len, out_len);
                    let r = match nm.as_str() {
                        "floor" => x.floor(),
                        "ceil" => x.ceil(),
                        "round_prefer_ceil" => {
                            if x.fract() == 0.5 {
                                x.ceil()
                            } else {
                                x.round()
                            }
                        }
                        _ => {
                            if (x - x.floor() - 0.5).abs() == 0.0 {
                                x.floor()
                            } else {
                                x.round()
                            }
                        }
                    };
                    clampi(r as i64)
                })
                .collect();
            vec![(idx, vec![1.0; out_len])]
        }
        "linear" => {
            let mut i0 = Vec::new();
            let mut i1 = Vec::new();
            let mut w0 = Vec::new();
            let mut w1 = Vec::new();
            for o in 0..out_len {
                let x = resize_coord(ctm, o as f64, scale, in_len, out_len).clamp(0.0, last as f64);
                let f = x.floor();
                let t = x - f;
                i0.push(clampi(f as i64));
                i1.push(clampi(f as i64 + 1));
                w0.push((1.0 - t) as f32);
                w1.push(t as f32);
            }
            vec![(i0, w0), (i1, w1)]
        }
        _ => {
            let ca = a.float("cubic_coeff_a", -0.75) as f64;
            let excl = a.int("exclude_outside", 0) != 0;
            let kern = |d: f64| {
                let d = d.abs();
                if d <= 1.0 {
                    ((ca + 2.0) * d - (ca + 3.0)) * d * d + 1.0
                } else if d < 2.0 {
                    ((ca * d - 5.0 * ca) * d + 8.0 * ca) * d - 4.0 * ca
                } else {
                    0.0
                }
            };
            let mut taps = vec![(Vec::new(), Vec::new()); 4];
            for o in 0..out_len {
                let x = resize_coord(ctm, o as f64, scale, in_len, out_len);
                let f = x.floor();
                let mut ws = [0.0f64; 4];
                for (j, w) in ws.iter_mut().enumerate() {
                    let p = f as i64 - 1 + j as i64;
                    *w = kern(x - p as f64);
                    if excl && (p < 0 || p > last) {
                        *w = 0.0;
                    }
                }
                let sum: f64 = ws.iter().sum();
                for (j, tap) in taps.iter_mut().enumerate() {
                    let p = f as i64 - 1 + j as i64;
                    tap.0.push(clampi(p));
                    tap.1.push(if excl { ws[j] / sum } else { ws[j] } as f32);
                }
            }
            taps
        }
    }
}

pub(super) fn resize<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = "Resize";
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let t = need_float(x, op)?;
    let r = x.rank();
    let axes: Vec<usize> = match ints_attr(a, "axes") {
        Some(v) => v.iter().map(|&ax| norm_axis(ax, r)).collect::<Res<_>>()?,
        None => (0..r).collect(),
    };
    let (scales_in, sizes_in) = if cx.opset < 11 {
        (opt(ins, 1), None)
    } else {
        (
            opt(ins, 2).filter(|v| v.numel() > 0),
            opt(ins, 3).filter(|v| v.numel() > 0),
        )
    };
    let mut scales = vec![1.0f64; r];
    let mut out = x.shape.clone();
    match (scales_in, sizes_in) {
        (Some(s), None) => {
            let s = s.host_f64();
            if s.len() != axes.len() || s.iter().any(|&v| v <= 0.0) {
                return Err(run_err("Resize: bad scales"));
            }
            for (k, &ax) in axes.iter().enumerate() {
                scales[ax] = s[k];
                out[ax] = (x.shape[ax] as f64 * s[k]).floor() as usize;
            }
        }
        (None, Some(s)) => {
            let s = s.host_i64();
            // a size of 0 is an empty output (ONNX Runtime and ONNX's reference give one)
            if s.len() != axes.len() || s.iter().any(|&v| v < 0) {
                return Err(run_err("Resize: bad sizes"));
            }
            for (k, &ax) in axes.iter().enumerate() {
                out[ax] = s[k] as usize;
                scales[ax] = s[k] as f64 / x.shape[ax] as f64;
            }
        }
        _ => {
            return Err(run_err(
                "Resize: exactly one of scales and sizes must be given",
            ));
        }
    }
    if out.contains(&0) || x.numel() == 0 {
        // Nothing to sample: an empty input has an empty output (its sizes or scales keep a
        // zero dimension at zero), an empty output needs no input.
        if x.numel() == 0 && !out.contains(&0) {
            return Err(run_err(
                "Resize: an empty input cannot give a non-empty output",
            ));
        }
        return Ok(vec![Some(full(out, 0.0, x.dtype, cx.dev)?)]);
    }
    let mode = a.string("mode", "nearest");
    let ctm = if cx.opset < 11 {
        "asymmetric".to_string()
    } else {
        a.string("coordinate_transformation_mode", "half_pixel")
    };
    let nearest_mode = a.string("nearest_mode", "round_prefer_floor");
    // burn's own interpolate where its sampling is ONNX's: 4-D, N and C kept, the scale exactly
    // out/in, nearest = asymmetric + floor, bilinear = align_corners or half_pixel
    let exact = (2..4).all(|i| r == 4 && (x.shape[i] as f64 * scales[i]) == out[i] as f64);
    let burn_mode = if r == 4 && out[0] == x.shape[0] && out[1] == x.shape[1] && exact {
        use burn::tensor::ops::{InterpolateMode, InterpolateOptions};
        match (mode.as_str(), ctm.as_str()) {
            ("nearest", "asymmetric") if nearest_mode == "floor" || cx.opset < 11 => {
                Some(InterpolateOptions::new(InterpolateMode::Nearest))
            }
            ("linear", "align_corners") => {
                Some(InterpolateOptions::new(InterpolateMode::Bilinear).with_align_corners(true))
            }
            ("linear", "half_pixel") => {
                Some(InterpolateOptions::new(InterpolateMode::Bilinear).with_align_corners(false))
            }
            ("linear", "pytorch_half_pixel") if out[2] > 1 && out[3] > 1 => {
                Some(InterpolateOptions::new(InterpolateMode::Bilinear).with_align_corners(false))
            }
            _ => None,
        }
    } else {
        None
    };
    if let Some(o) = burn_mode {
        let y = burn::tensor::module::interpolate(
            t.reshape_exact(arr::<4>(&x.shape)),
            [out[2], out[3]],
            o,
        );
        return Ok(vec![Some(lift(y, x.dtype))]);
    }
    // separable resampling: per resized axis, a weighted sum of gathered slices
    let mut y = t;
    let mut shape = x.shape.clone();
    for ax in 0..r {
        if out[ax] == x.shape[ax] && scales[ax] == 1.0 {
            continue;
        }
        let taps = resize_taps(a, &mode, &ctm, scales[ax], x.shape[ax], out[ax]);
        let d = bax(r, ax);
        let mut wshape = vec![1usize; r];
        wshape[ax] = out[ax];
        let mut acc: Option<Tensor<B, R>> = None;
        for (idx, w) in taps {
            let it = Tensor::<B, 1, burn::tensor::Int>::from_data(
                burn::tensor::TensorData::new(idx, [out[ax]]),
                cx.dev,
            );
            let wt =
                Tensor::<B, R>::from_data(burn::tensor::TensorData::new(w, pad(&wshape)), cx.dev);
            let part = y.clone().select(d, it).mul(wt);
            acc = Some(match acc {
                Some(s) => s.add(part),
                None => part,
            });
        }
        y = acc.ok_or_else(|| run_err("Resize: no taps"))?;
        shape[ax] = out[ax];
    }
    Ok(vec![Some(Val::float(y, shape, x.dtype))])
}

// The ops of this file, found from their names (see `super::find`).
table! {
    "Resize" => resize,
}
