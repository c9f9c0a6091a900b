//! `Pad` (every mode of the opset, pads as an attribute before opset 11, the `axes` input
//! from 18) and `CenterCropPad`.
use super::{LIMIT, axes_const};
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn pad(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let opset = site.opset();
    let modes: &[&str] = if opset >= 19 {
        &["constant", "reflect", "edge", "wrap"]
    } else {
        &["constant", "reflect", "edge"]
    };
    let mode = pick(rng, modes);
    // Axes to pad (all unless the axes input exists and is used).
    let use_axes = opset >= 18 && chance(rng, 0.4);
    let axes: Vec<usize> = if use_axes {
        {
            let k = 1 + below(rng, r);
            subset(rng, r, k)
        }
    } else {
        (0..r).collect()
    };
    let n: i64 = d.iter().product();
    let mut pads = vec![0i64; 2 * axes.len()];
    for (j, &i) in axes.iter().enumerate() {
        let hi = match mode {
            "reflect" => (d[i] - 1).min(2),
            "wrap" => d[i].min(2),
            _ => 2,
        };
        pads[j] = between(rng, 0, hi.max(0));
        pads[j + axes.len()] = between(rng, 0, hi.max(0));
        if mode == "constant" && chance(rng, 0.15) && d[i] > 1 {
            pads[j] = -1;
        }
    }
    let grown: i64 = axes
        .iter()
        .enumerate()
        .map(|(j, &i)| (d[i] + pads[j] + pads[j + axes.len()]) as f64 / d[i].max(1) as f64)
        .product::<f64>() as i64
        * n;
    if grown > LIMIT {
        pads.iter_mut().for_each(|p| *p = (*p).min(0));
    }
    let mut a = Attrs::new();
    if mode != "constant" || chance(rng, 0.5) {
        a.push(("mode", astr(mode)));
    }
    if opset < 11 {
        if chance(rng, 0.3) && mode == "constant" && grown <= LIMIT {
            let v = pick(rng, &[1, 2]);
            pads.iter_mut().for_each(|p| *p = v);
            if n * 5i64.pow(r as u32) > LIMIT {
                pads.iter_mut().for_each(|p| *p = 0);
            }
        }
        a.push((if opset < 2 { "paddings" } else { "pads" }, ais(&pads)));
        if mode == "constant" {
            float_of(rng, &mut a, "value", &[-1.0, 0.0, 0.5, 2.0, 11.0]);
        }
        return site.op1(op, &[x], a);
    }
    let pc = site.constant_i64s("pads", &[pads.len() as i64], &pads);
    let mut ins = vec![x.to_string(), pc];
    if mode == "constant" && chance(rng, 0.5) || use_axes {
        let v = if t.dtype == DType::Bool {
            1.0
        } else {
            between(rng, 0, 3) as f64
        };
        ins.push(if mode == "constant" {
            site.constant_f64s("value", t.dtype, &[], &[v])
        } else {
            String::new()
        });
    }
    if use_axes {
        let ax: Vec<i64> = axes.iter().map(|&i| i as i64).collect();
        ins.push(axes_const(site, &ax));
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    site.op1(op, &refs, a)
}

pub(super) fn center_crop_pad(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let r = d.len();
    let n: i64 = d.iter().product();
    let axes = if chance(rng, 0.5) {
        None
    } else {
        Some({
            let k = 1 + below(rng, r);
            subset(rng, r, k)
        })
    };
    let which: Vec<usize> = axes.clone().unwrap_or_else(|| (0..r).collect());
    let mut target: Vec<i64> = which
        .iter()
        .map(|&i| (d[i] + between(rng, -2, 2)).max(1))
        .collect();
    let grown: f64 = which
        .iter()
        .zip(&target)
        .map(|(&i, &s)| s as f64 / d[i] as f64)
        .product();
    if grown * n as f64 > LIMIT as f64 {
        target = which.iter().map(|&i| d[i]).collect();
    }
    let s = site.constant_i64s("shape", &[target.len() as i64], &target);
    match axes {
        Some(ax) => {
            let ax: Vec<i64> = ax.iter().map(|&a| a as i64).collect();
            site.op1(op, &[x, &s], vec![("axes", ais(&ax))])
        }
        None => site.op1(op, &[x, &s], vec![]),
    }
}
