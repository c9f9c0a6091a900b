//! The pools: MaxPool, AveragePool, LpPool, their global forms (GlobalAveragePool,
//! GlobalMaxPool, GlobalLpPool) and MaxUnpool.

use super::window::{
    Window, auto_pad_attr, dilations_attr, kernel_attr, list_attr, pads_attr, same_pad_negative,
    strides_attr,
};
use super::{MAX, Q8, ceil_div, concat, flag, known, shape_of};
use crate::attr::AttrLookup;
use crate::dtype::DType;
use crate::dtype::sets::*;
use crate::ops::auto_pad::{axis_pads, ceil_output_len, ceil_window_past_input, same_output_len};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

fn pool_shape(ctx: &InferCtx) -> Result<Option<Vec<Dim>>, InferError> {
    let Some(xs) = shape_of(ctx, 0) else {
        return Ok(None);
    };
    if xs.len() < 3 {
        return Err(rule!(
            "pooling input must have rank 3 or more, found {}",
            xs.len()
        ));
    }
    let n = xs.len() - 2;
    let Some(k) = ctx.ints("kernel_shape") else {
        return Ok(Some([xs[..2].to_vec(), vec![Dim::Unknown; n]].concat()));
    };
    if k.len() != n {
        return Err(rule!(
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

/// Pooling cases ONNX defines inconsistently or not at all: with `ceil_mode` a last window
/// that would start past the input and its begin padding (ONNX's shape inference counts it,
/// its reference and ONNX Runtime drop it), and a window that covers padding only (a max or
/// mean of no element).
fn pool_ambiguous(ctx: &InferCtx) -> Result<(), InferError> {
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
        let (pb, pe) = axis_pads(&win.auto_pad, x, ek, s, (win.pads[i], win.pads[i + n]));
        let span = x + pb + pe - ek;
        if span < 0 {
            continue;
        }
        // With ceil_mode, the text's formula for VALID (`ceil((x - ek + 1) / s)`, a floor of
        // the span) and its general one (`ceil(span / s) + 1`) differ where the stride does not
        // divide the span: ONNX's shape inference and ONNX Runtime count the extra window,
        // tract follows the VALID formula (round 14).
        if win.ceil && win.auto_pad == "VALID" && span % s.max(1) != 0 {
            return Err(rule!(
                "axis {i}: auto_pad VALID with ceil_mode: the text's VALID formula and its \
                 ceil_mode formula give different output lengths"
            ));
        }
        let count = if win.ceil && win.auto_pad == "NOTSET" {
            if ceil_window_past_input(x, pb, span, s) {
                return Err(rule!(
                    "axis {i}: with ceil_mode the last window would start past the input; \
                     ONNX's shape inference and its reference disagree on counting it"
                ));
            }
            ceil_output_len(x, pb, span, s)
        } else if win.auto_pad.starts_with("SAME") {
            same_output_len(x, s)
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
                return Err(rule!(
                    "axis {i}: window {o} covers padding only, a pooling of no element"
                ));
            }
        }
    }
    Ok(())
}

fn pool_check(ctx: &InferCtx) -> Result<(), InferError> {
    pool_shape(ctx)?;
    if let Some(k) = ctx.ints("kernel_shape") {
        let n = k.len();
        let pads = list_attr(ctx, "pads", 2 * n, 0)?;
        for (i, p) in pads.iter().enumerate() {
            if *p >= k[i % n] {
                return Err(rule!(
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
            return Err(rule!(
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
        return Err(rule!(
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
        return Err(rule!(
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

/// Registers the pools.
pub(super) fn register(r: &mut Registry) {
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
            .traits(Traits::NAN_UNSPECIFIED)
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
    for (op, traits) in [
        ("GlobalAveragePool", Traits::NONE),
        ("GlobalMaxPool", Traits::NAN_UNSPECIFIED),
    ] {
        r.add(
            OpSpec::new(op, &[1, 22], Category::Pool)
                .traits(traits)
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
                    return Err(rule!(
                        "indices have rank {} but the input has rank {}",
                        i.len(),
                        x.len()
                    ));
                }
                Ok(())
            }),
    );
}
