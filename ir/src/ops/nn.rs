//! Op specs of the nn family: convolutions, pooling, normalization, matrix products, recurrent
//! layers, dropout, sampling, quantization and losses.
use super::common::*;
use crate::attr::{AttrKind, AttrLookup, AttrValue};
use crate::dtype::DType;
use crate::dtype::sets::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::{Dim, ValueType};
use std::collections::BTreeMap;

const MAX: i64 = i64::MAX;
const Q8: &[DType] = &[DType::I8, DType::U8];
const F8: &[DType] = &[
    DType::F8E4M3FN,
    DType::F8E4M3FNUZ,
    DType::F8E5M2,
    DType::F8E5M2FNUZ,
];
const GROUP_BUCKETS: &[(i64, i64)] = &[(1, 1), (2, 4), (5, MAX)];
const EPS_BUCKETS: &[(f64, f64)] = &[
    (0.0, 1e-7),
    (1e-7, 1e-4),
    (1e-4, 1e-2),
    (1e-2, f64::INFINITY),
];

fn concat(parts: &[&[DType]]) -> Vec<DType> {
    let mut v: Vec<DType> = Vec::new();
    for p in parts {
        for d in *p {
            if !v.contains(d) {
                v.push(*d);
            }
        }
    }
    v
}

/// An INTS attribute with a default value.
fn ints_default(name: &'static str, v: &[i64]) -> AttrSpec {
    AttrSpec {
        default: Some(AttrValue::Ints(v.to_vec())),
        ..AttrSpec::of(name, AttrKind::Ints)
    }
}

/// A 0/1 flag attribute.
fn flag(name: &'static str) -> AttrSpec {
    AttrSpec::int(name, 0).one_of_ints(&[0, 1])
}

fn auto_pad_attr() -> AttrSpec {
    AttrSpec::string("auto_pad", "NOTSET").one_of(&["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
}

fn kernel_attr(required: bool) -> AttrSpec {
    let a = AttrSpec::of("kernel_shape", AttrKind::Ints).range(1, MAX);
    if required { a.required() } else { a }
}

fn pads_attr() -> AttrSpec {
    AttrSpec::of("pads", AttrKind::Ints).range(0, MAX)
}

fn strides_attr() -> AttrSpec {
    AttrSpec::of("strides", AttrKind::Ints).range(1, MAX)
}

fn dilations_attr() -> AttrSpec {
    AttrSpec::of("dilations", AttrKind::Ints).range(1, MAX)
}

fn group_attr() -> AttrSpec {
    AttrSpec::int("group", 1)
        .range(1, MAX)
        .int_buckets(GROUP_BUCKETS)
}

/// Attributes shared by the convolutions.
fn conv_attrs(s: OpSpec, auto_pad: bool) -> OpSpec {
    let s = s
        .attr(kernel_attr(false))
        .attr(pads_attr())
        .attr(strides_attr())
        .attr(dilations_attr())
        .attr(group_attr());
    if auto_pad {
        s.attr(auto_pad_attr()).ambiguous(same_pad_negative)
    } else {
        s
    }
}

/// ConvTranspose's open cases: those of `auto_pad` SAME (see [`same_pad_negative`]) and an
/// `output_shape` beyond what the geometry reaches, which needs a negative total padding: the
/// backend test suite has one such model (one row and column past the reach), but ONNX's
/// reference refuses some (two past it, NOTSET), ONNX Runtime refuses those more than a
/// stride short of an input row, and with SAME_UPPER the two place the extra row
/// differently.
fn conv_transpose_ambiguous(ctx: &InferCtx) -> Result<(), String> {
    same_pad_negative(ctx)?;
    let (Some(os), Some(xs)) = (ctx.ints("output_shape"), shape_of(ctx, 0)) else {
        return Ok(());
    };
    let n = xs.len().saturating_sub(2);
    if n == 0 || os.len() < n {
        return Ok(());
    }
    let spatial = &os[os.len() - n..];
    let kernel = kernel_of(ctx, shape_of(ctx, 1).as_deref(), n)?;
    let strides = list_attr(ctx, "strides", n, 1)?;
    let dil = list_attr(ctx, "dilations", n, 1)?;
    let op = list_attr(ctx, "output_padding", n, 0)?;
    let Some(k) = kernel else { return Ok(()) };
    for (i, &o) in spatial.iter().enumerate() {
        let Some(x) = known(xs.get(2 + i)) else {
            continue;
        };
        let reach = strides[i] * (x - 1) + op[i] + (k[i] - 1) * dil[i] + 1;
        if o > reach {
            return Err(format!(
                "output_shape {o} of spatial axis {i} is beyond what the geometry reaches \
                 ({reach}): the total padding would be negative"
            ));
        }
    }
    Ok(())
}

/// `auto_pad` SAME_UPPER / SAME_LOWER where the padding it needs is negative (a window
/// shorter than the stride): ONNX does not define it (its shape inference and the runtimes
/// disagree: ONNX Runtime refuses such pools, ConvTranspose sizes differ).
fn same_pad_negative(ctx: &InferCtx) -> Result<(), String> {
    let auto = ctx.string("auto_pad", "NOTSET");
    if auto != "SAME_UPPER" && auto != "SAME_LOWER" {
        return Ok(());
    }
    let Some(xs) = shape_of(ctx, 0) else {
        return Ok(());
    };
    let n = xs.len().saturating_sub(2);
    let w_slot = if ctx.node.op_type == "QLinearConv" {
        3
    } else {
        1
    };
    let ws = shape_of(ctx, w_slot);
    let kernel = match ctx.ints("kernel_shape") {
        Some(k) => Some(k.to_vec()),
        None => kernel_of(ctx, ws.as_deref(), n).ok().flatten(),
    };
    let Some(kernel) = kernel else { return Ok(()) };
    if kernel.len() != n {
        return Ok(());
    }
    let strides = list_attr(ctx, "strides", n, 1)?;
    let dil = list_attr(ctx, "dilations", n, 1)?;
    let transpose = ctx.node.op_type == "ConvTranspose";
    let out_pad = if transpose {
        list_attr(ctx, "output_padding", n, 0)?
    } else {
        vec![0; n]
    };
    for i in 0..n {
        let Some(x) = known(xs.get(2 + i)) else {
            continue;
        };
        let (s, ek) = (strides[i], (kernel[i] - 1) * dil[i] + 1);
        let total = if transpose {
            ek + out_pad[i] - s
        } else {
            (ceil_div(x, s) - 1) * s + ek - x
        };
        if total < 0 {
            return Err(format!(
                "axis {i}: {auto} with window {ek} and stride {s} needs a negative total pad \
                 ({total})"
            ));
        }
    }
    Ok(())
}

fn shape_of(ctx: &InferCtx, i: usize) -> Option<Vec<Dim>> {
    if !ctx.has_input(i) {
        return None;
    }
    ctx.tensor(i).ok().and_then(|t| t.shape)
}

/// [`shape_of`] without a copy.
fn shape_ref<'c>(ctx: &'c InferCtx<'_>, i: usize) -> Option<&'c [Dim]> {
    match ctx.inputs.get(i)?.as_deref()? {
        ValueType::Tensor(t) => t.shape.as_deref(),
        _ => None,
    }
}

fn known(d: Option<&Dim>) -> Option<i64> {
    d.and_then(Dim::value)
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1).div_euclid(b)
}

/// Window geometry of a convolution or pooling over `n` spatial axes.
#[derive(Clone, Debug, PartialEq)]
struct Window {
    kernel: Vec<i64>,
    strides: Vec<i64>,
    dilations: Vec<i64>,
    /// Begin pads then end pads (2n values).
    pads: Vec<i64>,
    auto_pad: String,
    ceil: bool,
}

fn list_attr(ctx: &InferCtx, name: &str, n: usize, default: i64) -> Result<Vec<i64>, String> {
    match ctx.ints(name) {
        None => Ok(vec![default; n]),
        Some(v) if v.len() == n => Ok(v.to_vec()),
        Some(v) => Err(format!(
            "'{name}' has {} values, expected {n} (one per spatial axis)",
            v.len()
        )),
    }
}

impl Window {
    fn read(ctx: &InferCtx, kernel: Vec<i64>) -> Result<Window, String> {
        let n = kernel.len();
        let strides = list_attr(ctx, "strides", n, 1)?;
        let dilations = list_attr(ctx, "dilations", n, 1)?;
        let pads = list_attr(ctx, "pads", 2 * n, 0)?;
        if let Some(s) = strides.iter().find(|s| **s < 1) {
            return Err(format!("stride {s} is not positive"));
        }
        if let Some(d) = dilations.iter().find(|d| **d < 1) {
            return Err(format!("dilation {d} is not positive"));
        }
        if let Some(k) = kernel.iter().find(|k| **k < 1) {
            return Err(format!("kernel size {k} is not positive"));
        }
        let auto_pad = ctx.string("auto_pad", "NOTSET");
        if auto_pad != "NOTSET" && ctx.ints("pads").is_some() {
            return Err(format!("pads cannot be given with auto_pad {auto_pad}"));
        }
        Ok(Window {
            kernel,
            strides,
            dilations,
            pads,
            auto_pad,
            ceil: ctx.int("ceil_mode", 0) != 0,
        })
    }

    fn effective(&self, i: usize) -> i64 {
        (self.kernel[i] - 1) * self.dilations[i] + 1
    }

    /// Output size of spatial axis `i` for an input of size `input`.
    fn out_dim(&self, i: usize, input: &Dim) -> Result<Dim, String> {
        let n = self.kernel.len();
        let (k, s) = (self.effective(i), self.strides[i]);
        match self.auto_pad.as_str() {
            "SAME_UPPER" | "SAME_LOWER" => Ok(match input {
                Dim::Known(x) => Dim::Known(ceil_div(*x, s)),
                d if s == 1 => d.clone(),
                _ => Dim::Unknown,
            }),
            ap => {
                let Dim::Known(x) = input else {
                    return Ok(Dim::Unknown);
                };
                let (pb, pe) = if ap == "VALID" {
                    (0, 0)
                } else {
                    (self.pads[i], self.pads[i + n])
                };
                let total = x + pb + pe;
                if total < k {
                    return Err(format!(
                        "axis {i}: window of effective size {k} does not fit in padded input {total} ({x} + pads {pb}+{pe})"
                    ));
                }
                let span = total - k;
                if self.ceil {
                    let mut o = ceil_div(span, s) + 1;
                    // The last window must start inside the input or its begin padding.
                    if (o - 1) * s >= x + pb {
                        o -= 1;
                    }
                    Ok(Dim::Known(o))
                } else {
                    Ok(Dim::Known(span / s + 1))
                }
            }
        }
    }

    fn spatial(&self, input: &[Dim]) -> Result<Vec<Dim>, String> {
        input
            .iter()
            .enumerate()
            .map(|(i, d)| self.out_dim(i, d))
            .collect()
    }
}

/// Kernel sizes from the `kernel_shape` attribute or from the weight's spatial dims.
fn kernel_of(ctx: &InferCtx, w: Option<&[Dim]>, n: usize) -> Result<Option<Vec<i64>>, String> {
    if let Some(k) = ctx.ints("kernel_shape") {
        if k.len() != n {
            return Err(format!(
                "kernel_shape has {} values but the input has {n} spatial axes",
                k.len()
            ));
        }
        if let Some(w) = w {
            for (i, (a, b)) in k.iter().zip(w.iter().skip(2)).enumerate() {
                if let Some(b) = b.value()
                    && *a != b
                {
                    return Err(format!("kernel_shape[{i}] = {a} but the weight has {b}"));
                }
            }
        }
        return Ok(Some(k.to_vec()));
    }
    let Some(w) = w else { return Ok(None) };
    if w.len() != n + 2 {
        return Ok(None);
    }
    Ok(w[2..].iter().map(Dim::value).collect())
}

/// Output shape of a convolution: input `x`, weight `w`.
fn conv_shape(ctx: &InferCtx, x: usize, w: usize) -> Result<Option<Vec<Dim>>, String> {
    let xs = shape_ref(ctx, x);
    let ws = shape_ref(ctx, w);
    let rank = match (&xs, &ws) {
        (Some(a), _) => a.len(),
        (None, Some(b)) => b.len(),
        _ => return Ok(None),
    };
    if rank < 3 {
        return Err(format!(
            "convolution input must have rank 3 or more, found {rank}"
        ));
    }
    if let (Some(a), Some(b)) = (&xs, &ws)
        && a.len() != b.len()
    {
        return Err(format!(
            "input has rank {} but weight has rank {}",
            a.len(),
            b.len()
        ));
    }
    let n = rank - 2;
    let batch = xs.map_or(Dim::Unknown, |s| s[0].clone());
    let m = ws.map_or(Dim::Unknown, |s| s[0].clone());
    let mut out = Vec::with_capacity(rank);
    out.push(batch);
    out.push(m);
    let Some(xs) = xs else {
        out.resize(rank, Dim::Unknown);
        return Ok(Some(out));
    };
    match kernel_of(ctx, ws, n)? {
        Some(k) => out.extend(Window::read(ctx, k)?.spatial(&xs[2..])?),
        None => out.resize(rank, Dim::Unknown),
    }
    Ok(Some(out))
}

/// Checks channels, groups and bias of a convolution.
fn conv_check(ctx: &InferCtx, x: usize, w: usize, b: Option<usize>) -> Result<(), String> {
    conv_shape(ctx, x, w)?;
    let group = ctx.int("group", 1);
    if group < 1 {
        return Err(format!("group {group} is not positive"));
    }
    let xs = shape_ref(ctx, x);
    let ws = shape_ref(ctx, w);
    // An input of unknown rank (the output of an `If` whose branches differ) still has as many
    // spatial axes as the weight: the window attributes must have that many values.
    if xs.is_none()
        && let Some(ws) = ws.filter(|w| w.len() >= 3)
    {
        let n = ws.len() - 2;
        kernel_of(ctx, Some(ws), n)?;
        list_attr(ctx, "strides", n, 1)?;
        list_attr(ctx, "dilations", n, 1)?;
        list_attr(ctx, "pads", 2 * n, 0)?;
    }
    let c = xs.and_then(|s| known(s.get(1)));
    let wc = ws.and_then(|s| known(s.get(1)));
    let m = ws.and_then(|s| known(s.first()));
    if let Some(c) = c {
        if c % group != 0 {
            return Err(format!(
                "group {group} does not divide the {c} input channels"
            ));
        }
        if let Some(wc) = wc
            && wc * group != c
        {
            return Err(format!(
                "weight has {wc} channels per group, expected {c}/{group}"
            ));
        }
    }
    if let Some(m) = m
        && m % group != 0
    {
        return Err(format!(
            "group {group} does not divide the {m} output channels"
        ));
    }
    if let (Some(b), Some(m)) = (b, m)
        && let Some(bs) = shape_ref(ctx, b)
        && (bs.len() != 1 || bs[0].value().is_some_and(|v| v != m))
    {
        return Err(format!("bias has shape {bs:?}, expected [{m}]"));
    }
    Ok(())
}

fn conv_infer(ctx: &InferCtx) -> Infer {
    Ok(vec![tensor(ctx.dtype(0), conv_shape(ctx, 0, 1)?)])
}

fn conv_transpose_shape(ctx: &InferCtx) -> Result<Option<Vec<Dim>>, String> {
    let xs = shape_of(ctx, 0);
    let ws = shape_of(ctx, 1);
    let group = ctx.int("group", 1);
    let rank = match (&xs, &ws) {
        (Some(a), _) => a.len(),
        (None, Some(b)) => b.len(),
        _ => return Ok(None),
    };
    if rank < 3 {
        return Err(format!(
            "ConvTranspose input must have rank 3 or more, found {rank}"
        ));
    }
    let n = rank - 2;
    let batch = xs.as_ref().map_or(Dim::Unknown, |s| s[0].clone());
    let m = match ws.as_ref().and_then(|s| known(s.get(1))) {
        Some(v) => Dim::Known(
            v.checked_mul(group)
                .ok_or_else(|| format!("{v} weight channels times group {group} is no size"))?,
        ),
        None => Dim::Unknown,
    };
    if let (Dim::Known(mv), Some(bs)) = (&m, shape_of(ctx, 2))
        && bs != [Dim::Known(*mv)]
    {
        return Err(format!("bias has shape {bs:?}, expected [{mv}]"));
    }
    if let Some(os) = ctx.ints("output_shape") {
        if os.len() < n {
            return Err(format!(
                "output_shape has {} values, expected {n}",
                os.len()
            ));
        }
        let spatial = &os[os.len() - n..];
        // ONNX's shape inference gives up on an output_shape smaller than the input (its
        // checker then fails the model).
        if let Some(xs) = &xs {
            for (i, &o) in spatial.iter().enumerate() {
                if let Some(x) = known(xs.get(2 + i))
                    && o < x
                {
                    return Err(format!(
                        "output_shape {o} of spatial axis {i} is smaller than the input's {x}"
                    ));
                }
            }
        }
        let sp = spatial.iter().map(|v| Dim::Known(*v));
        return Ok(Some([batch, m].into_iter().chain(sp).collect()));
    }
    let Some(xs) = xs else {
        return Ok(Some([vec![batch, m], vec![Dim::Unknown; n]].concat()));
    };
    let Some(k) = kernel_of(ctx, ws.as_deref(), n)? else {
        return Ok(Some([vec![batch, m], vec![Dim::Unknown; n]].concat()));
    };
    let win = Window::read(ctx, k)?;
    let op = list_attr(ctx, "output_padding", n, 0)?;
    let mut out = vec![batch, m];
    for i in 0..n {
        let Dim::Known(x) = xs[2 + i] else {
            out.push(Dim::Unknown);
            continue;
        };
        let s = win.strides[i];
        let v = match win.auto_pad.as_str() {
            "SAME_UPPER" | "SAME_LOWER" => x * s,
            ap => {
                let (pb, pe) = if ap == "VALID" {
                    (0, 0)
                } else {
                    (win.pads[i], win.pads[i + n])
                };
                s * (x - 1) + op[i] + win.effective(i) - pb - pe
            }
        };
        if v < 1 {
            return Err(format!("ConvTranspose axis {i} would have size {v}"));
        }
        out.push(Dim::Known(v));
    }
    Ok(Some(out))
}

fn pool_shape(ctx: &InferCtx) -> Result<Option<Vec<Dim>>, String> {
    let Some(xs) = shape_of(ctx, 0) else {
        return Ok(None);
    };
    if xs.len() < 3 {
        return Err(format!(
            "pooling input must have rank 3 or more, found {}",
            xs.len()
        ));
    }
    let n = xs.len() - 2;
    let Some(k) = ctx.ints("kernel_shape") else {
        return Ok(Some([xs[..2].to_vec(), vec![Dim::Unknown; n]].concat()));
    };
    if k.len() != n {
        return Err(format!(
            "kernel_shape has {} values but the input has {n} spatial axes",
            k.len()
        ));
    }
    let win = Window::read(ctx, k.to_vec())?;
    Ok(Some([xs[..2].to_vec(), win.spatial(&xs[2..])?].concat()))
}

fn pool_infer(ctx: &InferCtx) -> Infer {
    let shape = pool_shape(ctx)?;
    let mut out = vec![tensor(ctx.dtype(0), shape.clone())];
    if ctx.n_outputs() > 1 {
        out.push(tensor(DType::I64, shape));
    }
    Ok(out)
}

/// A `spatial_scale` of zero or less maps every ROI to a point or mirrors it: ONNX gives the
/// scale no range, ONNX Runtime refuses it.
fn positive_spatial_scale(ctx: &InferCtx) -> Result<(), String> {
    let s = ctx.float("spatial_scale", 1.0);
    if s > 0.0 {
        Ok(())
    } else {
        Err(format!("spatial_scale {s} is not positive"))
    }
}

/// Pooling cases ONNX defines inconsistently or not at all: with `ceil_mode` a last window
/// that would start past the input and its begin padding (ONNX's shape inference counts it,
/// its reference and ONNX Runtime drop it), and a window that covers padding only (a max or
/// mean of no element).
fn pool_ambiguous(ctx: &InferCtx) -> Result<(), String> {
    let (Some(xs), Some(k)) = (shape_of(ctx, 0), ctx.ints("kernel_shape")) else {
        return Ok(());
    };
    let n = k.len();
    if xs.len() != n + 2 {
        return Ok(());
    }
    same_pad_negative(ctx)?;
    let win = Window::read(ctx, k.to_vec())?;
    for i in 0..n {
        let Some(x) = known(xs.get(2 + i)) else {
            continue;
        };
        let (ek, s, d) = (win.effective(i), win.strides[i], win.dilations[i]);
        let (pb, pe) = match win.auto_pad.as_str() {
            "VALID" => (0, 0),
            "SAME_UPPER" | "SAME_LOWER" => {
                let total = ((ceil_div(x, s) - 1) * s + ek - x).max(0);
                if win.auto_pad == "SAME_UPPER" {
                    (total / 2, total - total / 2)
                } else {
                    (total - total / 2, total / 2)
                }
            }
            _ => (win.pads[i], win.pads[i + n]),
        };
        let span = x + pb + pe - ek;
        if span < 0 {
            continue;
        }
        let count = if win.ceil && win.auto_pad == "NOTSET" {
            let o = ceil_div(span, s) + 1;
            if (o - 1) * s >= x + pb {
                return Err(format!(
                    "axis {i}: with ceil_mode the last window would start past the input; \
                     ONNX's shape inference and its reference disagree on counting it"
                ));
            }
            o
        } else if win.auto_pad.starts_with("SAME") {
            ceil_div(x, s)
        } else {
            span / s + 1
        };
        // A window starting inside the input holds an element; only those starting before it
        // (the first ceil(pb / s)) or past it (the last ones) can cover padding only. Each is
        // checked in O(1), and at most EDGE_WINDOWS from each end: the time stays bounded
        // whatever the pads and dims a model declares.
        const EDGE_WINDOWS: i64 = 4096;
        let front = ceil_div(pb.max(0), s.max(1)).min(count).min(EDGE_WINDOWS);
        let back_from = count.saturating_sub(EDGE_WINDOWS).max(front);
        let back = (back_from..count).filter(|o| o.saturating_mul(s).saturating_sub(pb) >= x);
        for o in (0..front).chain(back) {
            let start = o.saturating_mul(s).saturating_sub(pb);
            // The first tap at or after position 0, and whether it is inside the input.
            let first_in = if start >= 0 {
                0
            } else {
                ceil_div(start.saturating_neg(), d.max(1))
            };
            let covers =
                first_in < win.kernel[i] && start.saturating_add(first_in.saturating_mul(d)) < x;
            if !covers {
                return Err(format!(
                    "axis {i}: window {o} covers padding only, a pooling of no element"
                ));
            }
        }
    }
    Ok(())
}

fn pool_check(ctx: &InferCtx) -> Result<(), String> {
    pool_shape(ctx)?;
    if let Some(k) = ctx.ints("kernel_shape") {
        let n = k.len();
        let pads = list_attr(ctx, "pads", 2 * n, 0)?;
        for (i, p) in pads.iter().enumerate() {
            if *p >= k[i % n] {
                return Err(format!(
                    "pad {p} of axis {} is not smaller than the kernel {}",
                    i % n,
                    k[i % n]
                ));
            }
        }
    }
    Ok(())
}

fn global_pool(ctx: &InferCtx) -> Infer {
    let t = ctx.tensor(0)?;
    let shape = match t.shape {
        Some(s) if s.len() < 2 => {
            return Err(format!(
                "global pooling needs rank 2 or more, found {}",
                s.len()
            ));
        }
        Some(s) => Some(
            s.iter()
                .enumerate()
                .map(|(i, d)| if i < 2 { d.clone() } else { Dim::Known(1) })
                .collect(),
        ),
        None => None,
    };
    Ok(vec![tensor(t.dtype, shape)])
}

fn max_unpool(ctx: &InferCtx) -> Infer {
    let dt = ctx.dtype(0);
    if ctx.has_input(2) {
        if let Some(v) = ctx.const_i64s(2) {
            return Ok(vec![tensor(
                dt,
                Some(v.into_iter().map(Dim::Known).collect()),
            )]);
        }
        let rank = shape_of(ctx, 2).and_then(|s| known(s.first()));
        // batch and channels are those of X
        let shape = rank.map(|r| {
            let mut v = vec![Dim::Unknown; r.max(0) as usize];
            if let Some(x) = shape_of(ctx, 0).filter(|x| x.len() == v.len() && x.len() >= 2) {
                v[..2].clone_from_slice(&x[..2]);
            }
            v
        });
        return Ok(vec![tensor(dt, shape)]);
    }
    let Some(xs) = shape_of(ctx, 0) else {
        return Ok(vec![tensor(dt, None)]);
    };
    if xs.len() < 3 {
        return Err(format!(
            "MaxUnpool input must have rank 3 or more, found {}",
            xs.len()
        ));
    }
    let n = xs.len() - 2;
    let k = ctx
        .ints("kernel_shape")
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    if k.len() != n {
        return Err(format!(
            "kernel_shape has {} values but the input has {n} spatial axes",
            k.len()
        ));
    }
    let s = list_attr(ctx, "strides", n, 1)?;
    let p = list_attr(ctx, "pads", 2 * n, 0)?;
    let mut out = xs[..2].to_vec();
    for i in 0..n {
        out.push(match xs[2 + i] {
            Dim::Known(x) => Dim::Known((x - 1) * s[i] + k[i] - p[i] - p[i + n]),
            _ => Dim::Unknown,
        });
    }
    Ok(vec![tensor(dt, Some(out))])
}

fn max_roi_pool(ctx: &InferCtx) -> Infer {
    let xs = shape_of(ctx, 0);
    let rs = shape_of(ctx, 1);
    let ps = ctx
        .ints("pooled_shape")
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    if ps.len() != 2 {
        return Err(format!(
            "pooled_shape must have 2 values, found {}",
            ps.len()
        ));
    }
    let r = rs
        .as_ref()
        .and_then(|s| s.first().cloned())
        .unwrap_or(Dim::Unknown);
    let c = xs
        .as_ref()
        .and_then(|s| s.get(1).cloned())
        .unwrap_or(Dim::Unknown);
    Ok(vec![tensor(
        ctx.dtype(0),
        Some(vec![r, c, Dim::Known(ps[0]), Dim::Known(ps[1])]),
    )])
}

fn roi_align(ctx: &InferCtx) -> Infer {
    let xs = shape_of(ctx, 0);
    let rs = shape_of(ctx, 1);
    let bs = shape_of(ctx, 2);
    if let Some(x) = &xs
        && x.len() != 4
    {
        return Err(format!(
            "RoiAlign input must have rank 4, found {}",
            x.len()
        ));
    }
    let r = rs
        .as_ref()
        .and_then(|s| s.first().cloned())
        .filter(|d| *d != Dim::Unknown)
        .or_else(|| bs.as_ref().and_then(|s| s.first().cloned()))
        .unwrap_or(Dim::Unknown);
    let c = xs.as_ref().map_or(Dim::Unknown, |s| s[1].clone());
    let (h, w) = (ctx.int("output_height", 1), ctx.int("output_width", 1));
    Ok(vec![tensor(
        ctx.dtype(0),
        Some(vec![r, c, Dim::Known(h), Dim::Known(w)]),
    )])
}

fn batch_norm(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let c = x
        .shape
        .as_ref()
        .and_then(|s| s.get(1).cloned())
        .unwrap_or(Dim::Unknown);
    let stat = |i: usize| -> ValueType {
        let dt = if ctx.has_input(i) {
            ctx.dtype(i)
        } else {
            x.dtype
        };
        let shape = shape_of(ctx, i).unwrap_or_else(|| vec![c.clone()]);
        tensor(dt, Some(shape))
    };
    let mut out = vec![ValueType::Tensor(x.clone())];
    for k in 1..ctx.n_outputs() {
        out.push(match k {
            1 => stat(3),
            2 => stat(4),
            // saved mean / var of old opsets: per channel, input type
            _ => tensor(x.dtype, Some(vec![c.clone()])),
        });
    }
    Ok(out)
}

fn channel_params_check(ctx: &InferCtx, params: &[usize]) -> Result<(), String> {
    let Some(c) = shape_of(ctx, 0).and_then(|s| known(s.get(1))) else {
        return Ok(());
    };
    for &i in params {
        if let Some(s) = shape_of(ctx, i)
            && s.len() == 1
            && s[0].value().is_some_and(|v| v != c)
        {
            return Err(format!(
                "input {i} has {} values, expected one per channel ({c})",
                s[0]
            ));
        }
    }
    Ok(())
}

fn layer_norm(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let u = DType::from_code(ctx.int("stash_type", 1) as i32);
    let stat = match &x.shape {
        Some(s) => {
            let a = norm_axis(ctx.int("axis", -1), s.len())?;
            Some(
                s.iter()
                    .enumerate()
                    .map(|(i, d)| if i < a { d.clone() } else { Dim::Known(1) })
                    .collect(),
            )
        }
        None => None,
    };
    let mut out = vec![ValueType::Tensor(x.clone())];
    for _ in 1..ctx.n_outputs().min(3) {
        out.push(tensor(u, stat.clone()));
    }
    Ok(out)
}

fn group_norm_check(ctx: &InferCtx) -> Result<(), String> {
    let g = ctx.int("num_groups", 1);
    if g < 1 {
        return Err(format!("num_groups {g} is not positive"));
    }
    if let Some(c) = shape_of(ctx, 0).and_then(|s| known(s.get(1))) {
        if c % g != 0 {
            return Err(format!("num_groups {g} does not divide the {c} channels"));
        }
        if ctx.opset >= 21 {
            return channel_params_check(ctx, &[1, 2]);
        }
    }
    Ok(())
}

fn gemm(ctx: &InferCtx) -> Infer {
    let (a, b) = (shape_of(ctx, 0), shape_of(ctx, 1));
    let dt = ctx.dtype(0);
    let pick =
        |s: &Option<Vec<Dim>>, trans: bool, what: &str| -> Result<Option<(Dim, Dim)>, String> {
            match s {
                None => Ok(None),
                Some(s) if s.len() != 2 => Err(format!(
                    "Gemm input {what} must be 2-D, found rank {}",
                    s.len()
                )),
                Some(s) => Ok(Some(if trans {
                    (s[1].clone(), s[0].clone())
                } else {
                    (s[0].clone(), s[1].clone())
                })),
            }
        };
    let a = pick(&a, ctx.int("transA", 0) != 0, "A")?;
    let b = pick(&b, ctx.int("transB", 0) != 0, "B")?;
    if let (Some((_, Dim::Known(k1))), Some((Dim::Known(k2), _))) = (&a, &b)
        && k1 != k2
    {
        return Err(format!(
            "Gemm inner dims differ: A gives K={k1}, B gives K={k2}"
        ));
    }
    let m = a.map_or(Dim::Unknown, |p| p.0);
    let n = b.map_or(Dim::Unknown, |p| p.1);
    Ok(vec![tensor(dt, Some(vec![m, n]))])
}

fn gemm_check(ctx: &InferCtx) -> Result<(), String> {
    let out = gemm(ctx)?;
    if ctx.has_input(2) {
        let y = out[0].tensor().and_then(|t| t.shape.clone());
        broadcast_shapes(&[y.clone(), shape_of(ctx, 2)]).and_then(|s| {
            if s == y || s.is_none() {
                Ok(())
            } else {
                Err("C does not broadcast to [M, N]".into())
            }
        })?;
    }
    Ok(())
}

/// numpy matmul shape of `a` times `b`.
fn matmul_shape(a: Option<Vec<Dim>>, b: Option<Vec<Dim>>) -> Result<Option<Vec<Dim>>, String> {
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(None);
    };
    if a.is_empty() || b.is_empty() {
        return Err("MatMul inputs must have rank 1 or more, found a scalar".into());
    }
    let (a1, b1) = (a.len() == 1, b.len() == 1);
    let a = if a1 {
        vec![Dim::Known(1), a[0].clone()]
    } else {
        a
    };
    let b = if b1 {
        vec![b[0].clone(), Dim::Known(1)]
    } else {
        b
    };
    let (ka, kb) = (&a[a.len() - 1], &b[b.len() - 2]);
    if let (Dim::Known(x), Dim::Known(y)) = (ka, kb)
        && x != y
    {
        return Err(format!("MatMul inner dims differ: {x} vs {y}"));
    }
    let batch = broadcast_shapes(&[
        Some(a[..a.len() - 2].to_vec()),
        Some(b[..b.len() - 2].to_vec()),
    ])?
    .unwrap_or_default();
    let mut out = batch;
    if !a1 {
        out.push(a[a.len() - 2].clone());
    }
    if !b1 {
        out.push(b[b.len() - 1].clone());
    }
    Ok(Some(out))
}

fn matmul_to(ctx: &InferCtx, a: usize, b: usize, dt: DType) -> Infer {
    Ok(vec![tensor(
        dt,
        matmul_shape(shape_of(ctx, a), shape_of(ctx, b))?,
    )])
}

/// A parsed einsum term: labels and where the ellipsis sits.
#[derive(Debug, PartialEq)]
struct Term {
    labels: Vec<char>,
    ellipsis: Option<usize>,
}

fn parse_term(t: &str) -> Result<Term, String> {
    let mut labels = Vec::new();
    let mut ellipsis = None;
    let mut rest = t;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("...") {
            if ellipsis.is_some() {
                return Err(format!("einsum term '{t}' has two ellipses"));
            }
            ellipsis = Some(labels.len());
            rest = r;
            continue;
        }
        let c = rest.chars().next().unwrap();
        if !c.is_ascii_alphabetic() {
            return Err(format!("einsum term '{t}' has the character '{c}'"));
        }
        labels.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Ok(Term { labels, ellipsis })
}

/// Einsum output shape from the equation and the input shapes (`None` = unknown rank).
fn einsum_shape(eq: &str, inputs: &[Option<Vec<Dim>>]) -> Result<Option<Vec<Dim>>, String> {
    let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (eq.as_str(), None),
    };
    let terms = lhs
        .split(',')
        .map(parse_term)
        .collect::<Result<Vec<_>, _>>()?;
    if terms.len() != inputs.len() {
        return Err(format!(
            "einsum equation has {} operands but the node has {} inputs",
            terms.len(),
            inputs.len()
        ));
    }
    let mut dims: BTreeMap<char, Dim> = BTreeMap::new();
    let mut count: BTreeMap<char, usize> = BTreeMap::new();
    let mut ell: Option<Vec<Dim>> = Some(vec![]);
    let mut any_ell = false;
    for (t, s) in terms.iter().zip(inputs) {
        for c in &t.labels {
            *count.entry(*c).or_default() += 1;
        }
        any_ell |= t.ellipsis.is_some();
        let Some(s) = s else {
            if t.ellipsis.is_some() {
                ell = None;
            }
            continue;
        };
        let nl = t.labels.len();
        let ne = match t.ellipsis {
            Some(_) if s.len() >= nl => s.len() - nl,
            None if s.len() == nl => 0,
            _ => {
                return Err(format!(
                    "einsum term with {nl} labels does not fit an input of rank {}",
                    s.len()
                ));
            }
        };
        let pos = t.ellipsis.unwrap_or(nl);
        for (j, c) in t.labels.iter().enumerate() {
            let d = &s[if j < pos { j } else { j + ne }];
            let e = dims.entry(*c).or_insert(Dim::Unknown);
            *e = match (&*e, d) {
                (Dim::Known(x), Dim::Known(y)) if x != y && *x != 1 && *y != 1 => {
                    return Err(format!("einsum label '{c}' has sizes {x} and {y}"));
                }
                (Dim::Known(1), Dim::Known(y)) => Dim::Known(*y),
                (Dim::Known(x), _) => Dim::Known(*x),
                (_, Dim::Known(y)) => Dim::Known(*y),
                (Dim::Param(p), _) => Dim::Param(p.clone()),
                (_, d) => d.clone(),
            };
        }
        if t.ellipsis.is_some()
            && let Some(cur) = ell
        {
            ell = broadcast_shapes(&[Some(cur), Some(s[pos..pos + ne].to_vec())])?;
        }
    }
    let mut out: Vec<Dim> = Vec::new();
    match rhs {
        Some(r) => {
            let t = parse_term(r)?;
            for (j, c) in t.labels.iter().enumerate() {
                if t.ellipsis == Some(j) {
                    match &ell {
                        Some(e) => out.extend(e.iter().cloned()),
                        None => return Ok(None),
                    }
                }
                if !count.contains_key(c) {
                    return Err(format!("einsum output label '{c}' is not in any input"));
                }
                if t.labels[..j].contains(c) {
                    return Err(format!("einsum output label '{c}' is repeated"));
                }
                out.push(dims.get(c).cloned().unwrap_or(Dim::Unknown));
            }
            if t.ellipsis == Some(t.labels.len()) {
                match &ell {
                    Some(e) => out.extend(e.iter().cloned()),
                    None => return Ok(None),
                }
            }
        }
        None => {
            if any_ell {
                match &ell {
                    Some(e) => out.extend(e.iter().cloned()),
                    None => return Ok(None),
                }
            }
            for (c, n) in &count {
                if *n == 1 {
                    out.push(dims.get(c).cloned().unwrap_or(Dim::Unknown));
                }
            }
        }
    }
    Ok(Some(out))
}

fn einsum(ctx: &InferCtx) -> Infer {
    let eq = ctx.string("equation", "");
    let shapes: Vec<Option<Vec<Dim>>> = (0..ctx.n_inputs()).map(|i| shape_of(ctx, i)).collect();
    Ok(vec![tensor(ctx.dtype(0), einsum_shape(&eq, &shapes)?)])
}

/// Number of gates of a recurrent op.
fn gates(op: &str) -> i64 {
    match op {
        "LSTM" => 4,
        "GRU" => 3,
        _ => 1,
    }
}

fn rnn_infer(ctx: &InferCtx) -> Infer {
    let xs = shape_of(ctx, 0);
    let dt = ctx.dtype(0);
    let layout = ctx.int("layout", 0);
    let dirs = if ctx.string("direction", "forward") == "bidirectional" {
        2
    } else {
        1
    };
    if let Some(x) = &xs
        && x.len() != 3
    {
        return Err(format!(
            "{} input X must have rank 3, found {}",
            ctx.node.op_type,
            x.len()
        ));
    }
    let hidden = match ctx.int_opt("hidden_size") {
        Some(h) => Dim::Known(h),
        None => shape_of(ctx, 2)
            .and_then(|r| r.get(2).cloned())
            .unwrap_or(Dim::Unknown),
    };
    let (seq, batch) = match &xs {
        Some(x) if layout == 0 => (x[0].clone(), x[1].clone()),
        Some(x) => (x[1].clone(), x[0].clone()),
        None => (Dim::Unknown, Dim::Unknown),
    };
    let nd = Dim::Known(dirs);
    let y = if layout == 0 {
        vec![seq, nd.clone(), batch.clone(), hidden.clone()]
    } else {
        vec![batch.clone(), seq, nd.clone(), hidden.clone()]
    };
    let yh = if layout == 0 {
        vec![nd, batch, hidden]
    } else {
        vec![batch, nd, hidden]
    };
    let mut out = vec![tensor(dt, Some(y))];
    for _ in 1..ctx.n_outputs() {
        out.push(tensor(dt, Some(yh.clone())));
    }
    Ok(out)
}

fn rnn_check(ctx: &InferCtx) -> Result<(), String> {
    rnn_infer(ctx)?;
    let g = gates(&ctx.node.op_type);
    let dirs = if ctx.string("direction", "forward") == "bidirectional" {
        2
    } else {
        1
    };
    let h = ctx
        .int_opt("hidden_size")
        .or_else(|| shape_of(ctx, 2).and_then(|r| known(r.get(2))));
    let input = shape_of(ctx, 0).and_then(|x| known(x.get(2)));
    let expect = |i: usize, want: [Option<i64>; 3]| -> Result<(), String> {
        if let Some(s) = shape_of(ctx, i) {
            if s.len() != 3 {
                return Err(format!("input {i} must have rank 3, found {}", s.len()));
            }
            for (j, w) in want.iter().enumerate() {
                if let (Some(w), Some(v)) = (w, s[j].value())
                    && *w != v
                {
                    return Err(format!("input {i} has {v} at axis {j}, expected {w}"));
                }
            }
        }
        Ok(())
    };
    expect(1, [Some(dirs), h.map(|h| g * h), input])?;
    expect(2, [Some(dirs), h.map(|h| g * h), h])?;
    if let Some(b) = shape_of(ctx, 3) {
        let want = h.map(|h| 2 * g * h);
        if b.len() != 2 || want.is_some_and(|w| b[1].value().is_some_and(|v| v != w)) {
            return Err(format!(
                "bias has shape {b:?}, expected [{dirs}, {}]",
                want.unwrap_or(-1)
            ));
        }
    }
    if let Some(acts) = ctx.attr("activations")
        && let AttrValue::Strings(v) = acts
    {
        const OK: &[&str] = &[
            "Relu",
            "Tanh",
            "Sigmoid",
            "Affine",
            "LeakyRelu",
            "ThresholdedRelu",
            "ScaledTanh",
            "HardSigmoid",
            "Elu",
            "Softsign",
            "Softplus",
        ];
        for a in v {
            let a = String::from_utf8_lossy(a);
            if !OK.iter().any(|o| o.eq_ignore_ascii_case(&a)) {
                return Err(format!("unknown activation '{a}'"));
            }
        }
        let per_dir = if ctx.node.op_type == "RNN" {
            1
        } else {
            2 + (g == 4) as i64
        };
        if (v.len() as i64) < per_dir * dirs {
            return Err(format!(
                "{} activations given, expected {}",
                v.len(),
                per_dir * dirs
            ));
        }
    }
    Ok(())
}

fn rnn_spec(op: &'static str, versions: &[i64]) -> OpSpec {
    let s = OpSpec::new(op, versions, Category::Rnn)
        .input("X", "T")
        .input("W", "T")
        .input("R", "T")
        .opt_input("B", "T")
        .opt_input("sequence_lens", "T1")
        .opt_input("initial_h", "T");
    let s = if op == "LSTM" {
        s.opt_input("initial_c", "T").opt_input("P", "T")
    } else {
        s
    };
    let s = s.opt_output("Y", "T").opt_output("Y_h", "T");
    let s = if op == "LSTM" {
        s.opt_output("Y_c", "T")
    } else {
        s
    };
    let acts = if op == "RNN" {
        AttrSpec {
            default: Some(AttrValue::Strings(vec![b"Tanh".to_vec(), b"Tanh".to_vec()])),
            ..AttrSpec::of("activations", AttrKind::Strings)
        }
    } else {
        AttrSpec::of("activations", AttrKind::Strings)
    };
    let s = s
        .attr(AttrSpec::of("activation_alpha", AttrKind::Floats))
        .attr(AttrSpec::of("activation_beta", AttrKind::Floats))
        .attr(acts)
        .attr(AttrSpec::of("clip", AttrKind::Float).float_buckets(&[
            (1e-3, 1.0),
            (1.0, 10.0),
            (10.0, f64::INFINITY),
        ]))
        .attr(AttrSpec::string("direction", "forward").one_of(&[
            "forward",
            "reverse",
            "bidirectional",
        ]))
        .attr(
            AttrSpec::of("hidden_size", AttrKind::Int)
                .range(1, MAX)
                .int_buckets(&[(1, 1), (2, 16), (17, 128), (129, MAX)]),
        )
        .attr(flag("layout").versions(14, None))
        .attr(flag("output_sequence").versions(1, Some(7)));
    let s = match op {
        "LSTM" => s.attr(flag("input_forget")),
        "GRU" => s.attr(flag("linear_before_reset").versions(3, None)),
        _ => s,
    };
    s.types("T", FLOAT)
        .types("T1", &[DType::I32])
        .infer(rnn_infer)
        .requires(rnn_check)
}

fn dropout(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let mut out = vec![ValueType::Tensor(x.clone())];
    if ctx.n_outputs() > 1 {
        let dt = if ctx.opset >= 10 {
            DType::Bool
        } else {
            x.dtype
        };
        out.push(tensor(dt, x.shape.clone()));
    }
    Ok(out)
}

fn grid_sample(ctx: &InferCtx) -> Infer {
    let xs = shape_of(ctx, 0);
    let gs = shape_of(ctx, 1);
    let dt = ctx.dtype(0);
    let rank = xs.as_ref().map(Vec::len).or(gs.as_ref().map(Vec::len));
    let Some(rank) = rank else {
        return Ok(vec![tensor(dt, None)]);
    };
    if rank < 3 {
        return Err(format!(
            "GridSample input must have rank 3 or more, found {rank}"
        ));
    }
    if let (Some(x), Some(g)) = (&xs, &gs) {
        if x.len() != g.len() {
            return Err(format!(
                "GridSample input has rank {} but grid has rank {}",
                x.len(),
                g.len()
            ));
        }
        if let Some(v) = g[rank - 1].value()
            && v != rank as i64 - 2
        {
            return Err(format!("grid's last axis is {v}, expected {}", rank - 2));
        }
    }
    let n = match (&xs, &gs) {
        (Some(x), _) if x[0] != Dim::Unknown => x[0].clone(),
        (_, Some(g)) => g[0].clone(),
        _ => Dim::Unknown,
    };
    let c = xs.as_ref().map_or(Dim::Unknown, |x| x[1].clone());
    let sp = gs
        .as_ref()
        .map_or(vec![Dim::Unknown; rank - 2], |g| g[1..rank - 1].to_vec());
    Ok(vec![tensor(dt, Some([vec![n, c], sp].concat()))])
}

fn affine_grid(ctx: &InferCtx) -> Infer {
    let dt = ctx.dtype(0);
    if let Some(size) = ctx.const_i64s(1) {
        return match size.len() {
            4 => Ok(vec![fixed(dt, &[size[0], size[2], size[3], 2])]),
            5 => Ok(vec![fixed(dt, &[size[0], size[2], size[3], size[4], 3])]),
            n => Err(format!("AffineGrid size has {n} values, expected 4 or 5")),
        };
    }
    let n = shape_of(ctx, 0)
        .and_then(|s| s.first().cloned())
        .unwrap_or(Dim::Unknown);
    Ok(vec![
        match shape_of(ctx, 1).and_then(|s| known(s.first())) {
            Some(4) => tensor(dt, Some(vec![n, Dim::Unknown, Dim::Unknown, Dim::Known(2)])),
            Some(5) => tensor(
                dt,
                Some(vec![
                    n,
                    Dim::Unknown,
                    Dim::Unknown,
                    Dim::Unknown,
                    Dim::Known(3),
                ]),
            ),
            _ => tensor(dt, None),
        },
    ])
}

fn quantize(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let dt = if ctx.has_input(2) {
        ctx.dtype(2)
    } else {
        match ctx.int("output_dtype", 0) {
            0 => DType::U8,
            c => DType::from_code(c as i32),
        }
    };
    Ok(vec![tensor(dt, x.shape)])
}

fn dequantize(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let dt = if ctx.opset < 19 {
        DType::F32
    } else {
        match ctx.int("output_dtype", 0) {
            0 => ctx.dtype(1),
            c => DType::from_code(c as i32),
        }
    };
    Ok(vec![tensor(dt, x.shape)])
}

fn quant_check(ctx: &InferCtx) -> Result<(), String> {
    let Some(xs) = shape_of(ctx, 0) else {
        return Ok(());
    };
    let Some(ss) = shape_of(ctx, 1) else {
        return Ok(());
    };
    if ss.is_empty() || ss.len() == 1 && ss[0] == Dim::Known(1) {
        return Ok(());
    }
    let axis = norm_axis(ctx.int("axis", 1), xs.len())?;
    let block = ctx.int("block_size", 0);
    if block == 0 {
        if ss.len() != 1 {
            return Err(format!(
                "per-axis scale must be 1-D, found rank {}",
                ss.len()
            ));
        }
        if let (Some(a), Some(b)) = (xs[axis].value(), ss[0].value())
            && a != b
        {
            return Err(format!("scale has {b} values but axis {axis} has {a}"));
        }
    } else if ss.len() != xs.len() {
        return Err(format!(
            "blocked scale must have rank {}, found {}",
            xs.len(),
            ss.len()
        ));
    }
    Ok(())
}

fn dyn_quantize(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    Ok(vec![
        tensor(DType::U8, x.shape),
        fixed(DType::F32, &[]),
        fixed(DType::U8, &[]),
    ])
}

fn nll_loss(ctx: &InferCtx) -> Infer {
    // input and weight share a dtype: take whichever is known
    let dt = if ctx.dtype(0).is_known() {
        ctx.dtype(0)
    } else {
        ctx.dtype(2)
    };
    let xs = shape_of(ctx, 0);
    let ts = shape_of(ctx, 1);
    if let (Some(x), Some(t)) = (&xs, &ts)
        && (x.len() < 2 || t.len() + 1 != x.len())
    {
        return Err(format!(
            "loss input has rank {} and target rank {}; expected ranks r and r-1, r >= 2",
            x.len(),
            t.len()
        ));
    }
    let loss = if ctx.string("reduction", "mean") == "none" {
        match (&ts, &xs) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(x)) if x.len() >= 2 => Some(
                x.iter()
                    .enumerate()
                    .filter(|(i, _)| *i != 1)
                    .map(|(_, d)| d.clone())
                    .collect(),
            ),
            _ => None,
        }
    } else {
        Some(vec![])
    };
    let mut out = vec![tensor(dt, loss)];
    if ctx.n_outputs() > 1 {
        out.push(tensor(dt, xs));
    }
    Ok(out)
}

fn col2im(ctx: &InferCtx) -> Infer {
    let dt = ctx.dtype(0);
    let xs = shape_of(ctx, 0);
    if let Some(x) = &xs
        && x.len() != 3
    {
        return Err(format!("Col2Im input must have rank 3, found {}", x.len()));
    }
    let image = ctx.const_i64s(1);
    let block = ctx.const_i64s(2);
    let n_sp = image
        .as_ref()
        .map(Vec::len)
        .or(block.as_ref().map(Vec::len))
        .or_else(|| {
            shape_of(ctx, 1)
                .and_then(|s| known(s.first()))
                .map(|v| v as usize)
        });
    let Some(n_sp) = n_sp else {
        return Ok(vec![tensor(dt, None)]);
    };
    let batch = xs.as_ref().map_or(Dim::Unknown, |x| x[0].clone());
    let c = match (xs.as_ref().and_then(|x| known(x.get(1))), &block) {
        (Some(cb), Some(b)) => {
            let p: i64 = b.iter().product();
            if p <= 0 || cb % p != 0 {
                return Err(format!(
                    "Col2Im input has {cb} rows, not a multiple of the block size {p}"
                ));
            }
            Dim::Known(cb / p)
        }
        _ => Dim::Unknown,
    };
    let sp = match &image {
        Some(v) => v.iter().map(|d| Dim::Known(*d)).collect(),
        None => vec![Dim::Unknown; n_sp],
    };
    Ok(vec![tensor(dt, Some([vec![batch, c], sp].concat()))])
}

/// Registers this family.
pub fn register(r: &mut Registry) {
    register_conv(r);
    register_pool(r);
    register_norm(r);
    register_linear(r);
    register_misc(r);
}

fn register_conv(r: &mut Registry) {
    r.add(
        conv_attrs(OpSpec::new("Conv", &[1, 11, 22], Category::Conv), true)
            .input("X", "T")
            .input("W", "T")
            .opt_input("B", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(conv_infer)
            .requires(|c| conv_check(c, 0, 1, Some(2))),
    );
    r.add(
        conv_attrs(
            OpSpec::new("ConvTranspose", &[1, 11, 22], Category::Conv),
            true,
        )
        .attr(AttrSpec::of("output_padding", AttrKind::Ints).range(0, MAX))
        .attr(AttrSpec::of("output_shape", AttrKind::Ints).range(1, MAX))
        .input("X", "T")
        .input("W", "T")
        .opt_input("B", "T")
        .output("Y", "T")
        .types("T", FLOAT)
        .infer(|c| Ok(vec![tensor(c.dtype(0), conv_transpose_shape(c)?)]))
        .ambiguous(conv_transpose_ambiguous)
        .requires(|c| {
            conv_transpose_shape(c)?;
            let auto = c.string("auto_pad", "NOTSET");
            if auto != "NOTSET" && c.ints("pads").is_some() {
                return Err(format!("pads cannot be given with auto_pad {auto}"));
            }
            // output_shape makes pads unused for the shape, but they must still be well formed.
            if let (Some(p), Some(r)) = (c.ints("pads"), shape_of(c, 0).map(|s| s.len()))
                && r >= 2
                && p.len() != 2 * (r - 2)
            {
                return Err(format!(
                    "'pads' has {} values, expected {} (begin and end per spatial axis)",
                    p.len(),
                    2 * (r - 2)
                ));
            }
            let g = c.int("group", 1);
            let ws = shape_of(c, 1);
            if let (Some(cin), Some(wc)) = (
                shape_of(c, 0).and_then(|s| known(s.get(1))),
                ws.as_ref().and_then(|s| known(s.first())),
            ) {
                if cin != wc {
                    return Err(format!("input has {cin} channels but the weight has {wc}"));
                }
                if cin % g != 0 {
                    return Err(format!(
                        "group {g} does not divide the {cin} input channels"
                    ));
                }
            }
            // The spatial rank: kernel_shape's, else the weights' (rank - 2).
            let spatial = c
                .ints("kernel_shape")
                .map(|k| k.len())
                .or_else(|| shape_of(c, 1).map(|w| w.len().saturating_sub(2)));
            if let Some(n) = spatial {
                let op = list_attr(c, "output_padding", n, 0)?;
                let s = list_attr(c, "strides", n, 1)?;
                let d = list_attr(c, "dilations", n, 1)?;
                for i in 0..n {
                    if op[i] >= s[i].max(d[i]) {
                        return Err(format!(
                            "output_padding {} must be smaller than stride or dilation",
                            op[i]
                        ));
                    }
                }
            }
            Ok(())
        }),
    );
    r.add(
        conv_attrs(OpSpec::new("ConvInteger", &[10], Category::Conv), true)
            .input("x", "T1")
            .input("w", "T2")
            .opt_input("x_zero_point", "T1")
            .opt_input("w_zero_point", "T2")
            .output("y", "T3")
            .types("T1", Q8)
            .types("T2", Q8)
            .types("T3", &[DType::I32])
            .infer(|c| Ok(vec![tensor(DType::I32, conv_shape(c, 0, 1)?)]))
            .requires(|c| conv_check(c, 0, 1, None)),
    );
    r.add(
        conv_attrs(OpSpec::new("QLinearConv", &[10], Category::Conv), true)
            .input("x", "T1")
            .input("x_scale", "TF")
            .input("x_zero_point", "T1")
            .input("w", "T2")
            .input("w_scale", "TF")
            .input("w_zero_point", "T2")
            .input("y_scale", "TF")
            .input("y_zero_point", "T3")
            .opt_input("B", "T4")
            .output("y", "T3")
            .types("T1", Q8)
            .types("T2", Q8)
            .types("T3", Q8)
            .types("T4", &[DType::I32])
            .types("TF", &[DType::F32])
            .infer(|c| Ok(vec![tensor(c.dtype(7), conv_shape(c, 0, 3)?)]))
            .requires(|c| conv_check(c, 0, 3, Some(8))),
    );
    r.add(
        conv_attrs(OpSpec::new("DeformConv", &[19, 22], Category::Conv), false)
            .attr(
                AttrSpec::int("offset_group", 1)
                    .range(1, MAX)
                    .int_buckets(GROUP_BUCKETS),
            )
            .input("X", "T")
            .input("W", "T")
            .input("offset", "T")
            .opt_input("B", "T")
            .opt_input("mask", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(conv_infer)
            .requires(|c| {
                conv_check(c, 0, 1, Some(3))?;
                let og = c.int("offset_group", 1);
                if let Some(cin) = shape_of(c, 0).and_then(|s| known(s.get(1)))
                    && (og < 1 || cin % og != 0)
                {
                    return Err(format!(
                        "offset_group {og} does not divide the {cin} input channels"
                    ));
                }
                Ok(())
            }),
    );
}

fn register_pool(r: &mut Registry) {
    let pool = |op: &'static str, versions: &[i64]| {
        OpSpec::new(op, versions, Category::Pool)
            .attr(kernel_attr(true))
            .attr(pads_attr())
            .attr(strides_attr())
            .attr(auto_pad_attr())
            .input("X", "T")
            .output("Y", "T")
            .infer(pool_infer)
            .requires(pool_check)
            .ambiguous(pool_ambiguous)
    };
    r.add(
        pool("MaxPool", &[1, 8, 10, 11, 12, 22])
            .opt_output("Indices", "I")
            .attr(flag("storage_order").versions(8, None))
            .attr(dilations_attr().versions(10, None))
            .attr(flag("ceil_mode").versions(10, None))
            .types("T", &concat(&[FLOAT, Q8]))
            .types("I", &[DType::I64]),
    );
    r.add(
        pool("AveragePool", &[1, 7, 10, 11, 19, 22])
            .attr(flag("count_include_pad").versions(7, None))
            .attr(flag("ceil_mode").versions(10, None))
            .attr(dilations_attr().versions(19, None))
            .types("T", FLOAT),
    );
    let p_attr = || {
        AttrSpec::int("p", 2)
            .range(1, MAX)
            .int_buckets(&[(1, 1), (2, 2), (3, 4), (5, MAX)])
            .versions(2, None)
    };
    // Opset 1 had `p` as a FLOAT.
    let p_attr_v1 = || AttrSpec::float("p", 2.0).no_buckets().versions(1, Some(2));
    r.add(
        pool("LpPool", &[1, 2, 11, 18, 22])
            .attr(p_attr_v1())
            .attr(p_attr())
            .attr(flag("ceil_mode").versions(18, None))
            .attr(dilations_attr().versions(18, None))
            .types("T", FLOAT),
    );
    for op in ["GlobalAveragePool", "GlobalMaxPool"] {
        r.add(
            OpSpec::new(op, &[1, 22], Category::Pool)
                .input("X", "T")
                .output("Y", "T")
                .types("T", FLOAT)
                .infer(global_pool),
        );
    }
    r.add(
        OpSpec::new("GlobalLpPool", &[1, 2, 22], Category::Pool)
            .attr(p_attr_v1())
            .attr(p_attr())
            .input("X", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(global_pool),
    );
    r.add(
        OpSpec::new("MaxUnpool", &[9, 11, 22], Category::Pool)
            .attr(kernel_attr(true))
            .attr(pads_attr())
            .attr(strides_attr())
            .input("X", "T1")
            .input("I", "T2")
            .opt_input("output_shape", "T2")
            .output("output", "T1")
            .types("T1", FLOAT)
            .types("T2", &[DType::I64])
            .infer(max_unpool)
            .requires(|c| {
                max_unpool(c)?;
                if let (Some(x), Some(i)) = (shape_of(c, 0), shape_of(c, 1))
                    && x.len() != i.len()
                {
                    return Err(format!(
                        "indices have rank {} but the input has rank {}",
                        i.len(),
                        x.len()
                    ));
                }
                Ok(())
            }),
    );
    r.add(
        OpSpec::new("MaxRoiPool", &[1, 22], Category::Pool)
            .attr(
                AttrSpec::of("pooled_shape", AttrKind::Ints)
                    .required()
                    .range(1, MAX),
            )
            .attr(AttrSpec::float("spatial_scale", 1.0).float_buckets(&[
                (f64::MIN_POSITIVE, 0.1),
                (0.1, 1.0),
                (1.0, 1.0 + 1e-6),
                (1.0 + 1e-6, f64::INFINITY),
            ]))
            .input("X", "T")
            .input("rois", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(max_roi_pool)
            .ambiguous(positive_spatial_scale)
            .requires(|c| {
                max_roi_pool(c)?;
                if let Some(x) = shape_of(c, 0)
                    && x.len() != 4
                {
                    return Err(format!(
                        "X must be 4-D (N, C, H, W), found rank {}",
                        x.len()
                    ));
                }
                match shape_of(c, 1) {
                    Some(r) if r.len() != 2 || r[1].value().is_some_and(|v| v != 5) => Err(
                        format!("rois must be [num_rois, 5], found rank {}", r.len()),
                    ),
                    _ => Ok(()),
                }
            }),
    );
    r.add(
        OpSpec::new("RoiAlign", &[10, 16, 22], Category::Pool)
            .attr(AttrSpec::string("mode", "avg").one_of(&["avg", "max"]))
            .attr(
                AttrSpec::int("output_height", 1)
                    .range(1, MAX)
                    .int_buckets(&[(1, 1), (2, 7), (8, MAX)]),
            )
            .attr(
                AttrSpec::int("output_width", 1)
                    .range(1, MAX)
                    .int_buckets(&[(1, 1), (2, 7), (8, MAX)]),
            )
            .attr(
                AttrSpec::int("sampling_ratio", 0)
                    .range(0, MAX)
                    .int_buckets(&[(0, 0), (1, 1), (2, 4), (5, MAX)]),
            )
            .attr(AttrSpec::float("spatial_scale", 1.0).float_buckets(&[
                (f64::MIN_POSITIVE, 0.1),
                (0.1, 1.0),
                (1.0, 1.0 + 1e-6),
                (1.0 + 1e-6, f64::INFINITY),
            ]))
            .attr(
                AttrSpec::string("coordinate_transformation_mode", "half_pixel")
                    .one_of(&["half_pixel", "output_half_pixel"])
                    .versions(16, None),
            )
            .input("X", "T1")
            .input("rois", "T1")
            .input("batch_indices", "T2")
            .output("Y", "T1")
            .types("T1", FLOAT)
            .types("T2", &[DType::I64])
            .infer(roi_align)
            .ambiguous(positive_spatial_scale)
            .requires(|c| {
                roi_align(c)?;
                let r = shape_of(c, 1);
                if let Some(r) = &r
                    && (r.len() != 2 || r[1].value().is_some_and(|v| v != 4))
                {
                    return Err(format!("rois must be [num_rois, 4], found {r:?}"));
                }
                if let (Some(r), Some(b)) = (r, shape_of(c, 2))
                    && let (Some(a), Some(b)) = (known(r.first()), known(b.first()))
                    && a != b
                {
                    return Err(format!("{a} rois but {b} batch indices"));
                }
                Ok(())
            }),
    );
}

fn register_norm(r: &mut Registry) {
    let eps = || AttrSpec::float("epsilon", 1e-5).float_buckets(EPS_BUCKETS);
    r.add(
        OpSpec::new("BatchNormalization", &[1, 6, 7, 9, 14, 15], Category::Norm)
            .attr(eps())
            .attr(AttrSpec::float("momentum", 0.9).float_buckets(&[
                (f64::NEG_INFINITY, 0.5),
                (0.5, 0.9),
                (0.9, 0.95),
                (0.95, f64::INFINITY),
            ]))
            .attr(
                AttrSpec::of("consumed_inputs", AttrKind::Ints)
                    .required()
                    .no_buckets()
                    .versions(1, Some(6)),
            )
            .attr(flag("is_test").versions(1, Some(7)))
            .attr(flag("spatial").versions(1, Some(9)))
            .attr(flag("training_mode").versions(14, None))
            .input("X", "T")
            .input("scale", "T1")
            .input("B", "T1")
            .input("input_mean", "T2")
            .input("input_var", "T2")
            .output("Y", "T")
            .opt_output("running_mean", "T2")
            .opt_output("running_var", "T2")
            .opt_output("saved_mean", "T")
            .opt_output("saved_var", "T")
            .types("T", FLOAT)
            .types("T1", FLOAT)
            .types("T2", FLOAT)
            .infer(batch_norm)
            .requires(|c| {
                if shape_of(c, 0).is_some_and(|s| s.len() < 2) {
                    return Err("BatchNormalization input must have rank 2 or more".into());
                }
                if c.opset >= 9 || c.int("spatial", 1) == 1 {
                    channel_params_check(c, &[1, 2, 3, 4])?;
                }
                if c.opset >= 14 {
                    // Training mode outputs the running statistics; inference mode only Y.
                    let outs = c.node.outputs.iter().filter(|o| !o.is_empty()).count();
                    match (c.int("training_mode", 0), outs) {
                        (0, n) if n > 1 => {
                            return Err(format!(
                                "BatchNormalization with training_mode 0 has 1 output, not {n}"
                            ));
                        }
                        (1, 1) => {
                            return Err("BatchNormalization with training_mode 1 outputs \
                                        running_mean and running_var too"
                                .into());
                        }
                        _ => {}
                    }
                }
                Ok(())
            }),
    );
    r.add(
        OpSpec::new("InstanceNormalization", &[1, 6, 22], Category::Norm)
            .attr(eps())
            .attr(
                AttrSpec::of("consumed_inputs", AttrKind::Ints)
                    .no_buckets()
                    .versions(1, Some(6)),
            )
            .input("input", "T")
            .input("scale", "T")
            .input("B", "T")
            .output("output", "T")
            .types("T", FLOAT)
            .infer(unary)
            .requires(|c| {
                if shape_of(c, 0).is_some_and(|s| s.len() < 3) {
                    return Err("InstanceNormalization input must have rank 3 or more".into());
                }
                channel_params_check(c, &[1, 2])
            }),
    );
    r.add(
        OpSpec::new("LayerNormalization", &[17], Category::Norm)
            .attr(AttrSpec::int("axis", -1).int_buckets(&[
                (i64::MIN, -2),
                (-1, -1),
                (0, 0),
                (1, MAX),
            ]))
            .attr(eps())
            .attr(AttrSpec::int("stash_type", 1).one_of_ints(&[1, 10, 11, 16]))
            .input("X", "T")
            .input("Scale", "T")
            .opt_input("B", "T")
            .output("Y", "T")
            .opt_output("Mean", "U")
            .opt_output("InvStdDev", "U")
            .types("T", FLOAT)
            .types("U", &[DType::F32, DType::BF16])
            .infer(layer_norm)
            .requires(|c| {
                let Some(x) = shape_of(c, 0) else {
                    return Ok(());
                };
                let a = norm_axis(c.int("axis", -1), x.len())?;
                for i in [1, 2] {
                    if let Some(s) = shape_of(c, i) {
                        broadcast_shapes(&[Some(x[a..].to_vec()), Some(s.clone())]).and_then(
                            |b| {
                                if b == Some(x[a..].to_vec()) {
                                    Ok(())
                                } else {
                                    Err(format!(
                                        "input {i} does not broadcast to the normalized shape"
                                    ))
                                }
                            },
                        )?;
                    }
                }
                Ok(())
            }),
    );
    r.add(
        OpSpec::new("GroupNormalization", &[18, 21], Category::Norm)
            .attr(eps())
            .attr(
                AttrSpec::of("num_groups", AttrKind::Int)
                    .required()
                    .range(1, MAX)
                    .int_buckets(&[(1, 1), (2, 4), (5, 32), (33, MAX)]),
            )
            .attr(
                AttrSpec::int("stash_type", 1)
                    .one_of_ints(&[1, 10, 11, 16])
                    .versions(21, None),
            )
            .input("X", "T")
            .input("scale", "T")
            .input("bias", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(unary)
            .requires(group_norm_check),
    );
    r.add(
        OpSpec::new("LRN", &[1, 13], Category::Norm)
            .attr(AttrSpec::float("alpha", 1e-4).float_buckets(&[
                (f64::NEG_INFINITY, 1e-5),
                (1e-5, 1e-3),
                (1e-3, 1.0),
                (1.0, f64::INFINITY),
            ]))
            .attr(AttrSpec::float("beta", 0.75).float_buckets(&[
                (f64::NEG_INFINITY, 0.5),
                (0.5, 1.0),
                (1.0, f64::INFINITY),
            ]))
            .attr(AttrSpec::float("bias", 1.0).float_buckets(&[
                (f64::NEG_INFINITY, 1.0),
                (1.0, 1.0 + 1e-6),
                (1.0 + 1e-6, f64::INFINITY),
            ]))
            .attr(
                AttrSpec::of("size", AttrKind::Int)
                    .required()
                    .range(1, MAX)
                    .int_buckets(&[(1, 1), (2, 2), (3, 5), (6, MAX)]),
            )
            .input("X", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(unary)
            .requires(|c| match shape_of(c, 0) {
                Some(s) if s.len() < 2 => Err(format!(
                    "LRN input must have rank 2 or more, found {}",
                    s.len()
                )),
                _ => Ok(()),
            }),
    );
    r.add(
        OpSpec::new("LpNormalization", &[1, 22], Category::Norm)
            .attr(AttrSpec::int("axis", -1).int_buckets(&[
                (i64::MIN, -2),
                (-1, -1),
                (0, 0),
                (1, MAX),
            ]))
            .attr(AttrSpec::int("p", 2).one_of_ints(&[1, 2]))
            .input("input", "T")
            .output("output", "T")
            .types("T", FLOAT)
            .infer(unary)
            .requires(|c| {
                if let Some(s) = shape_of(c, 0) {
                    norm_axis(c.int("axis", -1), s.len())?;
                }
                Ok(())
            }),
    );
    r.add(
        OpSpec::new("MeanVarianceNormalization", &[9, 13], Category::Norm)
            .attr(ints_default("axes", &[0, 2, 3]).non_empty())
            .input("X", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(unary)
            .ambiguous(|c| match c.ints("axes") {
                Some(_) => Ok(()),
                None => Err(
                    "axes left to its default: ONNX's checker fails on it (the function body \
                     reads the absent attribute)"
                        .into(),
                ),
            })
            .requires(|c| {
                if let Some(s) = shape_of(c, 0) {
                    norm_axes(c.ints("axes").unwrap_or(&[0, 2, 3]), s.len())?;
                }
                Ok(())
            }),
    );
}

fn register_linear(r: &mut Registry) {
    let gemm_t = [
        DType::F16,
        DType::F32,
        DType::F64,
        DType::U32,
        DType::U64,
        DType::I32,
        DType::I64,
        DType::BF16,
    ];
    let scale_buckets: &[(f64, f64)] = &[
        (f64::NEG_INFINITY, 0.0),
        (0.0, 1.0),
        (1.0, 1.0 + 1e-6),
        (1.0 + 1e-6, f64::INFINITY),
    ];
    r.add(
        OpSpec::new("Gemm", &[1, 6, 7, 9, 11, 13], Category::Linear)
            .attr(AttrSpec::float("alpha", 1.0).float_buckets(scale_buckets))
            .attr(AttrSpec::float("beta", 1.0).float_buckets(scale_buckets))
            .attr(flag("transA"))
            .attr(flag("transB"))
            .attr(flag("broadcast").versions(1, Some(7)))
            .input("A", "T")
            .input("B", "T")
            .opt_input("C", "T")
            .output("Y", "T")
            .types("T", &gemm_t)
            .infer(gemm)
            .requires(gemm_check),
    );
    r.add(
        OpSpec::new("MatMul", &[1, 9, 13], Category::Linear)
            .input("A", "T")
            .input("B", "T")
            .output("Y", "T")
            .types("T", &gemm_t)
            .infer(|c| matmul_to(c, 0, 1, c.dtype(0))),
    );
    r.add(
        OpSpec::new("MatMulInteger", &[10], Category::Linear)
            .input("A", "T1")
            .input("B", "T2")
            .opt_input("a_zero_point", "T1")
            .opt_input("b_zero_point", "T2")
            .output("Y", "T3")
            .types("T1", Q8)
            .types("T2", Q8)
            .types("T3", &[DType::I32])
            .infer(|c| matmul_to(c, 0, 1, DType::I32)),
    );
    let q = concat(&[Q8, F8]);
    r.add(
        OpSpec::new("QLinearMatMul", &[10, 21], Category::Linear)
            .input("a", "T1")
            .input("a_scale", "TS")
            .input("a_zero_point", "T1")
            .input("b", "T2")
            .input("b_scale", "TS")
            .input("b_zero_point", "T2")
            .input("y_scale", "TS")
            .input("y_zero_point", "T3")
            .output("y", "T3")
            .types("TS", &[DType::F32, DType::F16, DType::BF16])
            .types("T1", &q)
            .types("T2", &q)
            .types("T3", &q)
            .infer(|c| matmul_to(c, 0, 3, c.dtype(7))),
    );
    r.add(
        OpSpec::new("Einsum", &[12], Category::Linear)
            .attr(AttrSpec::of("equation", AttrKind::String).required())
            .var_input("Inputs", "T", 1)
            .output("Output", "T")
            .types("T", &concat(&[INT, &[DType::F16, DType::F32, DType::F64]]))
            .infer(einsum),
    );
    rnn_spec_all(r);
}

fn rnn_spec_all(r: &mut Registry) {
    r.add(rnn_spec("RNN", &[1, 7, 14, 22]));
    r.add(rnn_spec("LSTM", &[1, 7, 14, 22]));
    r.add(rnn_spec("GRU", &[1, 3, 7, 14, 22]));
}

fn register_misc(r: &mut Registry) {
    let ratio_t = concat(&[FLOAT, F8]);
    r.add(
        OpSpec::new("Dropout", &[1, 6, 7, 10, 12, 13, 22], Category::Misc)
            .attr(flag("is_test").versions(1, Some(7)))
            .attr(
                AttrSpec::of("consumed_inputs", AttrKind::Ints)
                    .no_buckets()
                    .versions(1, Some(6)),
            )
            .attr(
                AttrSpec::float("ratio", 0.5)
                    .frange(0.0, 1.0)
                    .float_buckets(&[
                        (0.0, 1e-6),
                        (1e-6, 0.5),
                        (0.5, 0.5 + 1e-6),
                        (0.5 + 1e-6, 1.0 + 1e-6),
                    ])
                    .versions(1, Some(12)),
            )
            .attr(
                AttrSpec::of("seed", AttrKind::Int)
                    .no_buckets()
                    .versions(12, None),
            )
            .input("data", "T")
            .opt_input("ratio", "T1")
            .opt_input("training_mode", "T2")
            .output("output", "T")
            .opt_output("mask", "T2")
            .types("T", &ratio_t)
            .types("T1", &ratio_t)
            .types("T2", &concat(&[&[DType::Bool], &ratio_t]))
            .infer(dropout)
            .requires(|c| {
                if let Some(r) = c.const_f64s(1)
                    && r.iter().any(|v| !(0.0..1.0).contains(v))
                {
                    return Err(format!("ratio {r:?} is outside [0, 1)"));
                }
                Ok(())
            }),
    );
    r.add(
        OpSpec::new("GridSample", &[16, 20, 22], Category::Misc)
            .attr(flag("align_corners"))
            .attr(
                AttrSpec::string("mode", "linear")
                    .one_of(&["linear", "nearest", "cubic", "bilinear", "bicubic"]),
            )
            .attr(AttrSpec::string("padding_mode", "zeros").one_of(&[
                "zeros",
                "border",
                "reflection",
            ]))
            .input("X", "T1")
            .input("grid", "T2")
            .output("Y", "T1")
            .types(
                "T1",
                &concat(&[
                    NUMERIC,
                    &[DType::String, DType::Bool, DType::C64, DType::C128],
                ]),
            )
            .types("T2", FLOAT)
            .infer(grid_sample)
            .requires(|c| {
                let out = grid_sample(c)?;
                let rank = out[0].tensor().and_then(|t| t.rank());
                if c.opset < 20 && rank.is_some_and(|r| r != 4) {
                    return Err(format!(
                        "GridSample before opset 20 takes 4-D input, found rank {}",
                        rank.unwrap_or(0)
                    ));
                }
                let Some(AttrValue::String(mode)) = c.attr("mode") else {
                    return Ok(());
                };
                let mode = String::from_utf8_lossy(mode);
                if c.opset >= 20 && ["bilinear", "bicubic"].contains(&mode.as_ref())
                    || c.opset < 20 && ["linear", "cubic"].contains(&mode.as_ref())
                {
                    return Err(format!(
                        "GridSample mode '{mode}' does not exist at opset {}",
                        c.opset
                    ));
                }
                Ok(())
            }),
    );
    r.add(
        OpSpec::new("AffineGrid", &[20], Category::Misc)
            .attr(flag("align_corners"))
            .input("theta", "T1")
            .input("size", "T2")
            .output("grid", "T1")
            .types("T1", FLOAT)
            .types("T2", &[DType::I64])
            .infer(affine_grid)
            .requires(|c| {
                affine_grid(c)?;
                if let (Some(t), Some(sz)) = (shape_of(c, 0), c.const_i64s(1)) {
                    let want = if sz.len() == 4 { [2, 3] } else { [3, 4] };
                    if t.len() != 3
                        || t[1].value().is_some_and(|v| v != want[0])
                        || t[2].value().is_some_and(|v| v != want[1])
                    {
                        return Err(format!("theta must be [N, {}, {}]", want[0], want[1]));
                    }
                }
                Ok(())
            }),
    );
    let q_out = [
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::F8E4M3FN,
        DType::F8E4M3FNUZ,
        DType::F8E5M2,
        DType::F8E5M2FNUZ,
        DType::U4,
        DType::I4,
        DType::F4E2M1,
        DType::U2,
        DType::I2,
    ];
    let sat = flag("saturate").versions(19, None);
    r.add(
        OpSpec::new(
            "QuantizeLinear",
            &[10, 13, 19, 21, 23, 24, 25],
            Category::Quantize,
        )
        .attr(
            AttrSpec::int("axis", 1)
                .int_buckets(&[(i64::MIN, -1), (0, 0), (1, 1), (2, MAX)])
                .versions(13, None),
        )
        .attr(sat)
        .attr(
            AttrSpec::int("block_size", 0)
                .range(0, MAX)
                .int_buckets(&[(0, 0), (1, 16), (17, MAX)])
                .versions(21, None),
        )
        .attr(
            AttrSpec::int("output_dtype", 0)
                .no_buckets()
                .versions(21, None),
        )
        .attr(
            AttrSpec::int("precision", 0)
                .no_buckets()
                .versions(23, None),
        )
        .input("x", "T1")
        .input("y_scale", "T2")
        .opt_input("y_zero_point", "T3")
        .output("y", "T3")
        .types("T1", &[DType::F32, DType::F16, DType::BF16, DType::I32])
        .types(
            "T2",
            &[
                DType::F32,
                DType::F16,
                DType::BF16,
                DType::I32,
                DType::F8E8M0,
            ],
        )
        .types("T3", &q_out)
        .infer(quantize)
        .requires(quant_check),
    );
    let dq_in = concat(&[&[DType::I32], &q_out]);
    r.add(
        OpSpec::new(
            "DequantizeLinear",
            &[10, 13, 19, 21, 23, 24, 25],
            Category::Quantize,
        )
        .attr(
            AttrSpec::int("axis", 1)
                .int_buckets(&[(i64::MIN, -1), (0, 0), (1, 1), (2, MAX)])
                .versions(13, None),
        )
        .attr(
            AttrSpec::int("block_size", 0)
                .range(0, MAX)
                .int_buckets(&[(0, 0), (1, 16), (17, MAX)])
                .versions(21, None),
        )
        .attr(
            AttrSpec::int("output_dtype", 0)
                .no_buckets()
                .versions(23, None),
        )
        .input("x", "T1")
        .input("x_scale", "T2")
        .opt_input("x_zero_point", "T1")
        .output("y", "T3")
        .types("T1", &dq_in)
        .types("T2", &[DType::F32, DType::F16, DType::BF16, DType::F8E8M0])
        .types("T3", &[DType::F32, DType::F16, DType::BF16])
        .infer(dequantize)
        .requires(quant_check),
    );
    r.add(
        OpSpec::new("DynamicQuantizeLinear", &[11], Category::Quantize)
            .input("x", "T1")
            .output("y", "T2")
            .output("y_scale", "TF")
            .output("y_zero_point", "T2")
            .types("T1", &[DType::F32])
            .types("T2", &[DType::U8])
            .types("TF", &[DType::F32])
            .infer(dyn_quantize),
    );
    let loss = |op: &'static str, versions: &[i64], names: [&'static str; 3]| {
        OpSpec::new(op, versions, Category::Misc)
            .attr(AttrSpec::of("ignore_index", AttrKind::Int).int_buckets(&[
                (i64::MIN, -1),
                (0, 0),
                (1, MAX),
            ]))
            .attr(AttrSpec::string("reduction", "mean").one_of(&["none", "sum", "mean"]))
            .input(names[0], "T")
            .input(names[1], "Tind")
            .opt_input(names[2], "T")
            .types("T", FLOAT)
            .types("Tind", INDEX)
            .infer(nll_loss)
            .requires(|c| {
                nll_loss(c)?;
                let x = shape_of(c, 0);
                if let (Some(x), Some(t)) = (&x, shape_of(c, 1)) {
                    for (i, (a, b)) in t
                        .iter()
                        .zip(
                            x.iter()
                                .enumerate()
                                .filter(|(j, _)| *j != 1)
                                .map(|(_, d)| d),
                        )
                        .enumerate()
                    {
                        if let (Some(a), Some(b)) = (a.value(), b.value())
                            && a != b
                        {
                            return Err(format!("target axis {i} is {a}, input has {b}"));
                        }
                    }
                }
                if let (Some(x), Some(w)) = (x, shape_of(c, 2))
                    && (w.len() != 1
                        || w[0]
                            .value()
                            .zip(known(x.get(1)))
                            .is_some_and(|(a, b)| a != b))
                {
                    return Err("weight must have one value per class".into());
                }
                Ok(())
            })
    };
    r.add(
        loss(
            "NegativeLogLikelihoodLoss",
            &[12, 13, 22],
            ["input", "target", "weight"],
        )
        .output("loss", "T"),
    );
    r.add(
        loss(
            "SoftmaxCrossEntropyLoss",
            &[12, 13],
            ["scores", "labels", "weights"],
        )
        .output("output", "T")
        .opt_output("log_prob", "T"),
    );
    r.add(
        OpSpec::new("Col2Im", &[18], Category::Misc)
            .attr(dilations_attr())
            .attr(pads_attr())
            .attr(strides_attr())
            .input("input", "T")
            .input("image_shape", "TI")
            .input("block_shape", "TI")
            .output("output", "T")
            .types(
                "T",
                &concat(&[
                    NUMERIC,
                    &[DType::String, DType::Bool, DType::C64, DType::C128],
                ]),
            )
            .types("TI", &[DType::I64])
            .infer(col2im)
            .requires(|c| {
                col2im(c)?;
                let (Some(img), Some(blk)) = (c.const_i64s(1), c.const_i64s(2)) else {
                    return Ok(());
                };
                if img.len() != blk.len() {
                    return Err(format!(
                        "image_shape has {} values but block_shape {}",
                        img.len(),
                        blk.len()
                    ));
                }
                let n = img.len();
                let win = Window::read(c, blk.clone())?;
                let mut blocks = 1;
                for (i, d) in img.iter().enumerate() {
                    blocks *= win.out_dim(i, &Dim::Known(*d))?.value().unwrap_or(0);
                }
                if let Some(l) = shape_of(c, 0).and_then(|s| known(s.get(2)))
                    && l != blocks
                {
                    return Err(format!(
                        "input has {l} blocks, the {n}-D geometry gives {blocks}"
                    ));
                }
                Ok(())
            }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(k: &[i64], s: &[i64], d: &[i64], p: &[i64], auto_pad: &str, ceil: bool) -> Window {
        Window {
            kernel: k.to_vec(),
            strides: s.to_vec(),
            dilations: d.to_vec(),
            pads: p.to_vec(),
            auto_pad: auto_pad.into(),
            ceil,
        }
    }

    fn sizes(w: &Window, input: &[i64]) -> Vec<i64> {
        let dims: Vec<Dim> = input.iter().map(|v| Dim::Known(*v)).collect();
        w.spatial(&dims)
            .unwrap()
            .iter()
            .map(|d| d.value().unwrap())
            .collect()
    }

    #[test]
    fn conv_pool_sizes() {
        // 5x5 input, 3x3 kernel, stride 2, pad 1: 3x3
        assert_eq!(
            sizes(
                &win(&[3, 3], &[2, 2], &[1, 1], &[1, 1, 1, 1], "NOTSET", false),
                &[5, 5]
            ),
            vec![3, 3]
        );
        // dilation 2 makes the kernel 5 wide
        assert_eq!(
            sizes(&win(&[3], &[1], &[2], &[0, 0], "NOTSET", false), &[7]),
            vec![3]
        );
        // SAME_UPPER ignores pads: ceil(in / stride)
        assert_eq!(
            sizes(
                &win(
                    &[3, 3],
                    &[2, 2],
                    &[1, 1],
                    &[9, 9, 9, 9],
                    "SAME_UPPER",
                    false
                ),
                &[5, 6]
            ),
            vec![3, 3]
        );
        // VALID ignores pads; ceil_mode still rounds up
        assert_eq!(
            sizes(&win(&[3], &[2], &[1], &[0, 0], "VALID", true), &[10]),
            vec![5]
        );
        assert_eq!(
            sizes(&win(&[3], &[2], &[1], &[5, 5], "VALID", false), &[6]),
            vec![2]
        );
        // ceil_mode: 32 input, kernel 3 stride 2: floor 15, ceil 16
        assert_eq!(
            sizes(&win(&[3], &[2], &[1], &[0, 0], "NOTSET", false), &[32]),
            vec![15]
        );
        assert_eq!(
            sizes(&win(&[3], &[2], &[1], &[0, 0], "NOTSET", true), &[32]),
            vec![16]
        );
        // ceil_mode must not start a window in the end padding: 4 input, k 2, s 2, pad 1+1
        assert_eq!(
            sizes(&win(&[2], &[2], &[1], &[1, 1], "NOTSET", true), &[4]),
            vec![3]
        );
        // a window larger than the padded input is an error
        assert!(
            win(&[5], &[1], &[1], &[0, 0], "NOTSET", false)
                .out_dim(0, &Dim::Known(4))
                .is_err()
        );
    }

    fn ctx_infer(node: &crate::graph::Node, inputs: &[&[i64]]) -> Result<Vec<Vec<i64>>, String> {
        let ctx = InferCtx {
            node,
            opset: 22,
            inputs: crate::registry::owned_types(
                inputs.iter().map(|d| Some(fixed(DType::F32, d))).collect(),
            ),
            consts: vec![None; inputs.len()],
            subgraph_outputs: Default::default(),
        };
        let spec = Registry::global().for_node(node).unwrap();
        if let Some(req) = spec.requires {
            req(&ctx)?;
        }
        Ok((spec.infer)(&ctx)?
            .iter()
            .map(|t| t.tensor().unwrap().static_dims().unwrap())
            .collect())
    }

    fn node(op: &str, n_in: usize, attrs: &[(&str, AttrValue)]) -> crate::graph::Node {
        let names = ["x", "w", "b"];
        let mut n = crate::graph::Node::new(op, &names[..n_in], &["y"]);
        for (k, v) in attrs {
            n = n.with_attr(k, v.clone());
        }
        n
    }

    #[test]
    fn conv_transpose_sizes() {
        let ints = |v: &[i64]| AttrValue::Ints(v.to_vec());
        // plain: (3-1)*1 + 3 = 5
        let n = node("ConvTranspose", 2, &[]);
        assert_eq!(
            ctx_infer(&n, &[&[1, 1, 3, 3], &[1, 2, 3, 3]]).unwrap()[0],
            vec![1, 2, 5, 5]
        );
        // strides, pads, output_padding, dilation
        let n = node(
            "ConvTranspose",
            2,
            &[
                ("strides", ints(&[3, 2])),
                ("pads", ints(&[1, 2, 1, 2])),
                ("output_padding", ints(&[1, 1])),
            ],
        );
        // h: 3*(3-1) + 1 + 3 - 2 = 8 ; w: 2*(3-1) + 1 + 3 - 4 = 4
        assert_eq!(
            ctx_infer(&n, &[&[1, 1, 3, 3], &[1, 2, 3, 3]]).unwrap()[0],
            vec![1, 2, 8, 4]
        );
        // group multiplies the output channels
        let n = node(
            "ConvTranspose",
            2,
            &[("group", AttrValue::Int(2)), ("dilations", ints(&[2, 2]))],
        );
        assert_eq!(
            ctx_infer(&n, &[&[1, 2, 3, 3], &[2, 3, 3, 3]]).unwrap()[0],
            vec![1, 6, 7, 7]
        );
        // output_shape wins over pads; SAME gives in * stride
        let n = node(
            "ConvTranspose",
            2,
            &[("strides", ints(&[3, 2])), ("output_shape", ints(&[8, 7]))],
        );
        assert_eq!(
            ctx_infer(&n, &[&[1, 1, 3, 3], &[1, 2, 3, 3]]).unwrap()[0],
            vec![1, 2, 8, 7]
        );
        // Past the reach, a negative total padding: valid (the suite has one), but open.
        let n = node(
            "ConvTranspose",
            2,
            &[("strides", ints(&[3, 2])), ("output_shape", ints(&[10, 8]))],
        );
        assert_eq!(
            ctx_infer(&n, &[&[1, 1, 3, 3], &[1, 2, 3, 3]]).unwrap()[0],
            vec![1, 2, 10, 8]
        );
        let n = node(
            "ConvTranspose",
            2,
            &[
                ("strides", ints(&[2, 2])),
                ("auto_pad", AttrValue::String(b"SAME_UPPER".to_vec())),
            ],
        );
        assert_eq!(
            ctx_infer(&n, &[&[1, 1, 3, 3], &[1, 2, 3, 3]]).unwrap()[0],
            vec![1, 2, 6, 6]
        );
    }

    #[test]
    fn conv_and_pool_nodes() {
        let ints = |v: &[i64]| AttrValue::Ints(v.to_vec());
        // kernel from W, 3-D, SAME_LOWER with stride 2
        let n = node(
            "Conv",
            2,
            &[
                ("strides", ints(&[2, 2, 2])),
                ("auto_pad", AttrValue::String(b"SAME_LOWER".to_vec())),
            ],
        );
        assert_eq!(
            ctx_infer(&n, &[&[2, 4, 7, 8, 9], &[6, 4, 3, 3, 3]]).unwrap()[0],
            vec![2, 6, 4, 4, 5]
        );
        // group must divide channels, and W channels == C / group
        let n = node("Conv", 2, &[("group", AttrValue::Int(2))]);
        assert!(ctx_infer(&n, &[&[1, 4, 5, 5], &[6, 2, 3, 3]]).is_ok());
        assert!(ctx_infer(&n, &[&[1, 4, 5, 5], &[6, 4, 3, 3]]).is_err());
        assert!(ctx_infer(&n, &[&[1, 4, 5, 5], &[5, 2, 3, 3]]).is_err());
        // bias length
        let n = node("Conv", 3, &[]);
        assert!(ctx_infer(&n, &[&[1, 2, 5], &[3, 2, 3], &[3]]).is_ok());
        assert!(ctx_infer(&n, &[&[1, 2, 5], &[3, 2, 3], &[4]]).is_err());
        // MaxPool ceil_mode with indices output
        let mut n = node(
            "MaxPool",
            1,
            &[
                ("kernel_shape", ints(&[3, 3])),
                ("strides", ints(&[2, 2])),
                ("ceil_mode", AttrValue::Int(1)),
            ],
        );
        n.outputs.push("i".into());
        let out = ctx_infer(&n, &[&[1, 3, 32, 31]]).unwrap();
        assert_eq!(out, vec![vec![1, 3, 16, 15], vec![1, 3, 16, 15]]);
        // 1-D average pool with pads
        let n = node(
            "AveragePool",
            1,
            &[("kernel_shape", ints(&[3])), ("pads", ints(&[1, 1]))],
        );
        assert_eq!(ctx_infer(&n, &[&[1, 3, 8]]).unwrap()[0], vec![1, 3, 8]);
    }

    #[test]
    fn einsum_shapes() {
        let s = |v: &[i64]| Some(v.iter().map(|x| Dim::Known(*x)).collect::<Vec<_>>());
        let known = |r: Option<Vec<Dim>>| {
            r.unwrap()
                .iter()
                .map(|d| d.value().unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            known(einsum_shape("ij,jk->ik", &[s(&[2, 3]), s(&[3, 4])]).unwrap()),
            vec![2, 4]
        );
        // implicit output: labels seen once, sorted
        assert_eq!(
            known(einsum_shape("ij,jk", &[s(&[2, 3]), s(&[3, 4])]).unwrap()),
            vec![2, 4]
        );
        assert_eq!(
            known(einsum_shape("ba", &[s(&[2, 3])]).unwrap()),
            vec![3, 2]
        );
        // trace and diagonal
        assert_eq!(
            known(einsum_shape("ii->", &[s(&[3, 3])]).unwrap()),
            Vec::<i64>::new()
        );
        assert_eq!(
            known(einsum_shape("ii->i", &[s(&[3, 3])]).unwrap()),
            vec![3]
        );
        // ellipsis broadcast, explicit and implicit
        assert_eq!(
            known(einsum_shape("...ij,...jk->...ik", &[s(&[5, 1, 2, 3]), s(&[4, 3, 6])]).unwrap()),
            vec![5, 4, 2, 6]
        );
        assert_eq!(
            known(einsum_shape("...ij,...jk", &[s(&[7, 2, 3]), s(&[3, 4])]).unwrap()),
            vec![7, 2, 4]
        );
        assert_eq!(
            known(einsum_shape(" i , i -> ", &[s(&[3]), s(&[3])]).unwrap()),
            Vec::<i64>::new()
        );
        assert!(einsum_shape("ij,jk->ik", &[s(&[2, 3]), s(&[4, 4])]).is_err());
        assert!(einsum_shape("ij->ik", &[s(&[2, 3])]).is_err());
        assert!(einsum_shape("ij,jk", &[s(&[2, 3])]).is_err());
    }

    #[test]
    fn matmul_shapes() {
        let s = |v: &[i64]| Some(v.iter().map(|x| Dim::Known(*x)).collect::<Vec<_>>());
        assert_eq!(matmul_shape(s(&[3]), s(&[3])).unwrap(), Some(vec![]));
        assert_eq!(
            matmul_shape(s(&[2, 1, 4, 3]), s(&[5, 3, 6])).unwrap(),
            s(&[2, 5, 4, 6])
        );
        assert_eq!(matmul_shape(s(&[4, 3]), s(&[3])).unwrap(), s(&[4]));
        assert!(matmul_shape(s(&[4, 3]), s(&[2, 5])).is_err());
    }
}
