//! Resize and Upsample: separable interpolation, one list of (input index, weight) taps per
//! output coordinate of each axis.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::DType;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

/// Taps of one output coordinate: (input index, weight); `None` = extrapolated.
type Taps = Option<Vec<(usize, f64)>>;
/// How one axis is resampled.
struct Axis {
    in_len: usize,
    out_len: usize,
    scale: f64,
    /// The resized length used by align_corners: `in * scale` when scales are given.
    out_f: f64,
    roi: (f64, f64),
}

struct Opts {
    mode: String,
    coord: String,
    nearest: String,
    cubic_a: f64,
    exclude_outside: bool,
    antialias: bool,
}

fn to_input_coord(ax: &Axis, x: usize, coord: &str) -> R<f64> {
    let x = x as f64;
    let (inl, outl, s) = (ax.in_len as f64, ax.out_len as f64, ax.scale);
    Ok(match coord {
        "half_pixel" => unscale(x + 0.5, ax) - 0.5,
        "half_pixel_symmetric" => {
            let adj = outl / (s * inl);
            let center = inl / 2.0;
            let offset = center * (1.0 - adj);
            offset + unscale(x + 0.5, ax) - 0.5
        }
        "pytorch_half_pixel" => {
            if outl > 1.0 {
                unscale(x + 0.5, ax) - 0.5
            } else {
                0.0
            }
        }
        "align_corners" => {
            if outl == 1.0 {
                0.0
            } else {
                x * (inl - 1.0) / (ax.out_f - 1.0)
            }
        }
        "asymmetric" => unscale(x, ax),
        "tf_half_pixel_for_nn" => unscale(x + 0.5, ax),
        "tf_crop_and_resize" => {
            let (a, b) = ax.roi;
            if outl > 1.0 {
                a * (inl - 1.0) + x * (b - a) * (inl - 1.0) / (outl - 1.0)
            } else {
                0.5 * (a + b) * (inl - 1.0)
            }
        }
        c => return Err(unsup(format!("coordinate_transformation_mode {c}"))),
    })
}

/// `v / scale`. A scale the sizes gave (resized / original) is applied as `v · original /
/// resized`, exact where the text's ratio is: 11 / (22 / 15) is 7.500000000000001 in f64,
/// 11 · 15 / 22 is the 7.5 the text means (a tie that `round_prefer_floor` sends down).
/// burn's interpreter maps its coordinates with it too.
pub(crate) fn unscale_by(v: f64, scale: f64, in_len: usize, out_len: usize) -> f64 {
    let (inl, outl) = (in_len as f64, out_len as f64);
    if scale == outl / inl {
        v * inl / outl
    } else {
        v / scale
    }
}

fn unscale(v: f64, ax: &Axis) -> f64 {
    unscale_by(v, ax.scale, ax.in_len, ax.out_len)
}

/// The cubic convolution kernel with coefficient `a` (Keys; ONNX Resize `cubic_coeff_a`).
pub(super) fn cubic(x: f64, a: f64) -> f64 {
    let x = x.abs();
    if x <= 1.0 {
        ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    } else if x < 2.0 {
        ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    } else {
        0.0
    }
}

/// Taps of every output coordinate of one axis (`None` = extrapolated).
fn taps(ax: &Axis, o: &Opts) -> R<Vec<Taps>> {
    let n = ax.in_len as i64;
    let mut all = Vec::with_capacity(ax.out_len);
    for x in 0..ax.out_len {
        let c = to_input_coord(ax, x, &o.coord)?;
        if o.coord == "tf_crop_and_resize" && (c < 0.0 || c > (n - 1) as f64) {
            all.push(None);
            continue;
        }
        if n == 0 {
            return Err(err("Resize of an empty axis"));
        }
        let t = match o.mode.as_str() {
            "nearest" => {
                let f = c.floor();
                let i = match o.nearest.as_str() {
                    "round_prefer_floor" => {
                        if c - f == 0.5 {
                            f
                        } else {
                            c.round()
                        }
                    }
                    "round_prefer_ceil" => {
                        if c - f == 0.5 {
                            f + 1.0
                        } else {
                            c.round()
                        }
                    }
                    "floor" => f,
                    "ceil" => c.ceil(),
                    m => return Err(unsup(format!("nearest_mode {m}"))),
                };
                vec![((i as i64).clamp(0, n - 1) as usize, 1.0)]
            }
            "linear" | "cubic" => {
                let radius = if o.mode == "linear" { 1.0 } else { 2.0 };
                let sc = if o.antialias && ax.scale < 1.0 {
                    ax.scale
                } else {
                    1.0
                };
                let kernel = |d: f64| {
                    if o.mode == "linear" {
                        (1.0 - d.abs()).max(0.0)
                    } else {
                        cubic(d, o.cubic_a)
                    }
                };
                if !c.is_finite() {
                    // A NaN/Inf region or scale: no element to sample.
                    all.push(Some(vec![(0, f64::NAN)]));
                    continue;
                }
                let lo = (c - radius / sc).floor() as i64;
                let hi = (c + radius / sc).ceil() as i64;
                let mut v: Vec<(i64, f64)> = Vec::new();
                for i in lo..=hi {
                    let w = kernel((c - i as f64) * sc);
                    if w != 0.0 {
                        v.push((i, w));
                    }
                }
                if o.exclude_outside {
                    v.retain(|&(i, _)| i >= 0 && i < n);
                }
                if v.is_empty() {
                    // Every tap excluded: the nearest element stands in.
                    v.push((c.round() as i64, 1.0));
                }
                let s: f64 = v.iter().map(|p| p.1).sum();
                v.into_iter()
                    .map(|(i, w)| (i.clamp(0, n - 1) as usize, if s != 0.0 { w / s } else { w }))
                    .collect()
            }
            m => return Err(unsup(format!("Resize mode {m}"))),
        };
        all.push(Some(t));
    }
    Ok(all)
}

fn resample(x: &T, axes: &[Axis], o: &Opts, extrapolation: f64) -> R<T> {
    check_size(&axes.iter().map(|a| a.out_len).collect::<Vec<_>>())?;
    let plans: Vec<Vec<Taps>> = axes.iter().map(|a| taps(a, o)).collect::<R<_>>()?;
    let oshape: Vec<usize> = axes.iter().map(|a| a.out_len).collect();
    let total = check_size(&oshape)?;
    let st = strides(&x.shape);
    let xv = x.floats()?;
    let mut out = Vec::with_capacity(total);
    for p in 0..total {
        let mi = unravel(p, &oshape);
        let per: Vec<&Taps> = mi.iter().enumerate().map(|(d, &i)| &plans[d][i]).collect();
        if per.iter().any(|t| t.is_none()) {
            out.push(extrapolation);
            continue;
        }
        let per: Vec<&Vec<(usize, f64)>> = per.into_iter().flatten().collect();
        // Sum over the cartesian product of taps.
        let mut acc = 0.0;
        let mut idx = vec![0usize; per.len()];
        loop {
            let mut w = 1.0;
            let mut flat = 0;
            for d in 0..per.len() {
                let (i, wd) = per[d][idx[d]];
                w *= wd;
                flat += i * st[d];
            }
            acc += w * xv[flat];
            if !next_index(&mut idx, |d| per[d].len()) {
                break;
            }
        }
        out.push(acc);
    }
    // An interpolation of integers may overshoot the type's range (cubic weights are
    // negative): it saturates, as tract and ONNX's reference implementation do (the text says
    // nothing; wrapping 256 to 0 is no reading of an interpolation).
    if let Some((lo, hi)) = int_range(x.dt) {
        out.iter_mut().for_each(|v| *v = v.clamp(lo, hi));
    }
    T::from_f64s(x.dt, oshape, out)
}

/// The values an integer type holds (`None` for other types).
fn int_range(dt: DType) -> Option<(f64, f64)> {
    Some(match dt {
        DType::I8 => (i8::MIN as f64, i8::MAX as f64),
        DType::U8 => (0.0, u8::MAX as f64),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64),
        DType::U16 => (0.0, u16::MAX as f64),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::U32 => (0.0, u32::MAX as f64),
        DType::I64 => (i64::MIN as f64, i64::MAX as f64),
        DType::U64 => (0.0, u64::MAX as f64),
        _ => return None,
    })
}

pub(super) fn op_resize(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let r = x.rank();
    let old = cx.opset < 11;
    let (roi, scales, sizes) = if old {
        (None, Some(inp(ins, 1)?.floats()?), None)
    } else {
        let nz = |t: Option<&T>| -> R<Option<Vec<f64>>> {
            Ok(match t {
                Some(t) if !t.is_empty() => Some(t.floats()?),
                _ => None,
            })
        };
        (nz(opt(ins, 1)?)?, nz(opt(ins, 2)?)?, nz(opt(ins, 3)?)?)
    };
    let axes: Vec<usize> = match n.ints("axes") {
        Some(a) => super::norm_axes(a, r)?,
        None => (0..r).collect(),
    };
    let k = axes.len();
    let mut sc = vec![1.0; r];
    let mut out_len = x.shape.clone();
    let mut out_f: Vec<f64> = x.shape.iter().map(|&d| d as f64).collect();
    match (scales, sizes) {
        (Some(s), _) => {
            if s.len() != k {
                return Err(err(format!("Resize: {} scales for {k} axes", s.len())));
            }
            for (j, &a) in axes.iter().enumerate() {
                if s[j] <= 0.0 {
                    return Err(err("Resize: scales must be positive"));
                }
                sc[a] = s[j];
                out_len[a] = (x.shape[a] as f64 * s[j]).floor() as usize;
                out_f[a] = x.shape[a] as f64 * s[j];
            }
        }
        (None, Some(z)) => {
            if z.len() != k {
                return Err(err(format!("Resize: {} sizes for {k} axes", z.len())));
            }
            let policy = n.string("keep_aspect_ratio_policy", "stretch");
            let ratios: Vec<f64> = axes
                .iter()
                .enumerate()
                .map(|(j, &a)| z[j] / x.shape[a] as f64)
                .collect();
            let common = match policy.as_str() {
                "stretch" => None,
                "not_larger" => Some(ratios.iter().copied().fold(f64::INFINITY, f64::min)),
                "not_smaller" => Some(ratios.iter().copied().fold(0.0, f64::max)),
                p => return Err(unsup(format!("keep_aspect_ratio_policy {p}"))),
            };
            for (j, &a) in axes.iter().enumerate() {
                match common {
                    None => {
                        sc[a] = ratios[j];
                        out_len[a] = z[j].max(0.0) as usize;
                        out_f[a] = out_len[a] as f64;
                    }
                    Some(c) => {
                        sc[a] = c;
                        out_len[a] = (c * x.shape[a] as f64).round() as usize;
                        out_f[a] = out_len[a] as f64;
                    }
                }
            }
        }
        (None, None) => return Err(err("Resize needs scales or sizes")),
    }
    let mut roi_v = vec![(0.0, 1.0); r];
    if let Some(roi) = roi {
        if roi.len() == 2 * k {
            for (j, &a) in axes.iter().enumerate() {
                roi_v[a] = (roi[j], roi[j + k]);
            }
        } else if roi.len() == 2 * r {
            for (a, v) in roi_v.iter_mut().enumerate() {
                *v = (roi[a], roi[a + r]);
            }
        }
    }
    let mode = n.string("mode", "nearest");
    let o = Opts {
        coord: if old {
            "asymmetric".into()
        } else {
            n.string("coordinate_transformation_mode", "half_pixel")
        },
        nearest: if old {
            "floor".into()
        } else {
            n.string("nearest_mode", "round_prefer_floor")
        },
        mode: if mode == "bilinear" || mode == "trilinear" {
            "linear".into()
        } else if mode == "bicubic" {
            "cubic".into()
        } else {
            mode
        },
        cubic_a: n.float("cubic_coeff_a", -0.75) as f64,
        exclude_outside: n.int("exclude_outside", 0) != 0,
        antialias: n.int("antialias", 0) != 0,
    };
    let ax: Vec<Axis> = (0..r)
        .map(|a| Axis {
            in_len: x.shape[a],
            out_len: out_len[a],
            scale: sc[a],
            out_f: out_f[a],
            roi: roi_v[a],
        })
        .collect();
    one(resample(
        x,
        &ax,
        &o,
        n.float("extrapolation_value", 0.0) as f64,
    )?)
}

pub(super) fn op_upsample(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let scales = if cx.opset < 9 {
        n.floats("scales")
            .ok_or_else(|| err("Upsample without scales"))?
            .iter()
            .map(|&s| s as f64)
            .collect()
    } else {
        inp(ins, 1)?.floats()?
    };
    if scales.len() != x.rank() {
        return Err(err("Upsample scales length"));
    }
    let o = Opts {
        mode: match n.string("mode", "nearest").as_str() {
            "bilinear" | "linear" => "linear".into(),
            m => m.into(),
        },
        coord: "asymmetric".into(),
        nearest: "floor".into(),
        cubic_a: -0.75,
        exclude_outside: false,
        antialias: false,
    };
    let ax: Vec<Axis> = (0..x.rank())
        .map(|a| Axis {
            in_len: x.shape[a],
            out_len: (x.shape[a] as f64 * scales[a]).floor() as usize,
            scale: scales[a],
            out_f: x.shape[a] as f64 * scales[a],
            roi: (0.0, 1.0),
        })
        .collect();
    one(resample(x, &ax, &o, 0.0)?)
}
