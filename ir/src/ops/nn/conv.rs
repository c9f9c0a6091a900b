//! Conv, and the convolutions that share its geometry and checks: ConvInteger, QLinearConv,
//! DeformConv.

use super::window::{
    Window, auto_pad_attr, dilations_attr, kernel_attr, kernel_of, list_attr, pads_attr,
    same_pad_negative, strides_attr,
};
use super::{MAX, Q8, known, shape_of, shape_ref};
use crate::attr::AttrLookup;
use crate::dtype::DType;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

const GROUP_BUCKETS: &[(i64, i64)] = &[(1, 1), (2, 4), (5, MAX)];

fn group_attr() -> AttrSpec {
    AttrSpec::int("group", 1)
        .range(1, MAX)
        .int_buckets(GROUP_BUCKETS)
}

/// Attributes shared by the convolutions.
pub(crate) fn conv_attrs(s: OpSpec, auto_pad: bool) -> OpSpec {
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

/// Output shape of a convolution: input `x`, weight `w`.
fn conv_shape(ctx: &InferCtx, x: usize, w: usize) -> Result<Option<Vec<Dim>>, InferError> {
    let xs = shape_ref(ctx, x);
    let ws = shape_ref(ctx, w);
    let rank = match (&xs, &ws) {
        (Some(a), _) => a.len(),
        (None, Some(b)) => b.len(),
        _ => return Ok(None),
    };
    if rank < 3 {
        return Err(rule!(
            "convolution input must have rank 3 or more, found {rank}"
        ));
    }
    if let (Some(a), Some(b)) = (&xs, &ws)
        && a.len() != b.len()
    {
        return Err(rule!(
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
pub(crate) fn conv_check(
    ctx: &InferCtx,
    x: usize,
    w: usize,
    b: Option<usize>,
) -> Result<(), InferError> {
    conv_shape(ctx, x, w)?;
    let group = ctx.int("group", 1);
    if group < 1 {
        return Err(rule!("group {group} is not positive"));
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
            return Err(rule!(
                "group {group} does not divide the {c} input channels"
            ));
        }
        if let Some(wc) = wc
            && wc * group != c
        {
            return Err(rule!(
                "weight has {wc} channels per group, expected {c}/{group}"
            ));
        }
    }
    if let Some(m) = m
        && m % group != 0
    {
        return Err(rule!(
            "group {group} does not divide the {m} output channels"
        ));
    }
    if let (Some(b), Some(m)) = (b, m)
        && let Some(bs) = shape_ref(ctx, b)
        && (bs.len() != 1 || bs[0].value().is_some_and(|v| v != m))
    {
        return Err(rule!("bias has shape {bs:?}, expected [{m}]"));
    }
    Ok(())
}

pub(crate) fn conv_infer(ctx: &InferCtx) -> Infer {
    Ok(vec![tensor(ctx.dtype(0), conv_shape(ctx, 0, 1)?)])
}

/// Registers Conv.
pub(super) fn register(r: &mut Registry) {
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
}

/// Registers ConvInteger, QLinearConv and DeformConv.
pub(super) fn register_variants(r: &mut Registry) {
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
                    return Err(rule!(
                        "offset_group {og} does not divide the {cin} input channels"
                    ));
                }
                Ok(())
            }),
    );
}
