//! Pooling: `MaxPool`, `AveragePool`, `LpPool`, the global pools (`GlobalAveragePool`,
//! `GlobalMaxPool`, `GlobalLpPool`) and `MaxUnpool` (after a `MaxPool` that keeps the borders).
use super::window::window;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn pool(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let opset = site.opset();
    let dil = match op {
        "MaxPool" => opset >= 10,
        "AveragePool" => opset >= 19,
        _ => opset >= 18,
    };
    let w = window(rng, &d[2..], dil);
    let mut a = Attrs::new();
    w.attrs(rng, &mut a, true, dil);
    let ceil = match op {
        "MaxPool" | "AveragePool" => opset >= 10,
        _ => opset >= 18,
    };
    // ceil_mode only with explicit pads: with auto_pad the output length is disputed (ONNX's
    // shape inference rounds up, ONNX Runtime does not), which would be a finding about an
    // unsettled corner of the spec rather than a bug.
    if ceil && w.auto_pad.is_none() && !w.ceil_disputed(&d[2..]) {
        flag(rng, &mut a, "ceil_mode");
    }
    let mut n_out = 1;
    match op {
        "MaxPool" => {
            if opset >= 8 {
                flag(rng, &mut a, "storage_order");
                if chance(rng, 0.3) {
                    n_out = 2;
                }
            }
        }
        "AveragePool" => flag(rng, &mut a, "count_include_pad"),
        _ => {
            if opset >= 2 {
                maybe_int(rng, &mut a, 0.8, "p", &[1, 2, 3, 6]);
            }
        }
    }
    Ok(site.op(op, &[x], a, n_out)?.remove(0))
}

pub(super) fn global_pool(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let mut a = Attrs::new();
    if op == "GlobalLpPool" && site.opset() >= 2 {
        maybe_int(rng, &mut a, 0.8, "p", &[1, 2, 3, 6]);
    }
    site.op1(op, &[x], a)
}

pub(super) fn max_unpool(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let n = d.len() - 2;
    // MaxPool's indices address `x`'s layout; MaxUnpool reads them in its default layout and
    // places them at the same coordinates of `output_shape`. The window is redrawn until the
    // pooling keeps every border (else the indices fall outside; ONNX leaves that undefined).
    let mut chosen = None;
    for _ in 0..12 {
        let mut w = window(rng, &d[2..], false);
        w.auto_pad = None;
        let mut a = Attrs::new();
        w.attrs(rng, &mut a, true, false);
        a.retain(|(k, _)| *k != "ceil_mode" && *k != "dilations");
        let pads = w.pads.clone().unwrap_or(vec![0; 2 * n]);
        let fits = (0..n).all(|i| {
            let span = d[2 + i] + pads[i] + pads[i + n] - w.kernel[i];
            span >= 0 && span % w.strides[i] == 0
        });
        if fits {
            chosen = Some(a);
            break;
        }
    }
    let a =
        chosen.ok_or_else(|| BuildError::not_applicable("no pooling window keeps the borders"))?;
    let pooled = site.op("MaxPool", &[x], a.clone(), 2)?;
    if chance(rng, 0.5) {
        let os = site.constant_i64s("output_shape", &[d.len() as i64], &d);
        site.op1(op, &[&pooled[0], &pooled[1], &os], a)
    } else {
        site.op1(op, &[&pooled[0], &pooled[1]], a)
    }
}
