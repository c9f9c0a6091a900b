//! Reductions (`Reduce*` with axes as attribute or input by opset, keepdims,
//! noop_with_empty_axes), `ArgMax`/`ArgMin` and `TopK`.
use super::Recipe;
use super::util::*;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::site::Site;

/// Opset from which the op takes its axes as an input.
fn axes_input_since(op: &str) -> i64 {
    if op == "ReduceSum" { 13 } else { 18 }
}

fn reduce(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = t.rank().unwrap_or(1);
    let mut a = Attrs::new();
    flag(rng, &mut a, "keepdims");
    // None: every axis; else 1..=r distinct axes, some negative.
    let axes: Option<Vec<i64>> = if chance(rng, 0.25) {
        None
    } else {
        let k = 1 + below(rng, r.min(3));
        Some(
            subset(rng, r, k)
                .into_iter()
                .map(|v| {
                    if chance(rng, 0.25) {
                        v as i64 - r as i64
                    } else {
                        v as i64
                    }
                })
                .collect(),
        )
    };
    if site.opset() < axes_input_since(op) {
        // No attribute reduces every axis; an empty list is read as "all" by some runtimes
        // and "none" by others, so it is never written.
        if let Some(ax) = axes {
            a.push(("axes", ais(&ax)));
        }
        return site.op1(op, &[x], a);
    }
    flag(rng, &mut a, "noop_with_empty_axes");
    match axes {
        Some(ax) => {
            let c = site.constant_i64s("axes", &[ax.len() as i64], &ax);
            site.op1(op, &[x, &c], a)
        }
        None => {
            if chance(rng, 0.5) {
                let c = site.constant_i64s("axes", &[0], &[]);
                site.op1(op, &[x, &c], a)
            } else {
                site.op1(op, &[x], a)
            }
        }
    }
}

fn arg(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = t.rank().unwrap_or(1);
    let mut a = Attrs::new();
    maybe_axis(rng, &mut a, 0.8, r);
    flag(rng, &mut a, "keepdims");
    if site.opset() >= 12 {
        flag(rng, &mut a, "select_last_index");
    }
    site.op1(op, &[x], a)
}

fn arg_outs(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::I64, r), (DType::I64, r.saturating_sub(1))]
}

fn topk(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let (d, ax, i) = dims_and_axis(t, rng);
    let n = d[i];
    let k = between(rng, if n > 0 { 1 } else { 0 }, n.min(5));
    let mut a = Attrs::new();
    int_attr(rng, &mut a, "axis", ax, -1, 0.5);
    if site.opset() < 10 {
        a.push(("k", ai(k)));
        return Ok(site.op(op, &[x], a, 2)?.remove(0));
    }
    if site.opset() >= 11 {
        flag(rng, &mut a, "largest");
    }
    let kc = site.constant_i64s("k", &[1], &[k]);
    Ok(site.op(op, &[x, &kc], a, 2)?.remove(0))
}

pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    let reductions = &[
        "ReduceL1",
        "ReduceL2",
        "ReduceLogSum",
        "ReduceLogSumExp",
        "ReduceMax",
        "ReduceMean",
        "ReduceMin",
        "ReduceProd",
        "ReduceSum",
        "ReduceSumSquare",
    ];
    push_each(list, reductions, Dt::Reg, RANK1, same_dtype_le, reduce);
    push_each(list, &["ArgMax", "ArgMin"], Dt::Reg, RANK1, arg_outs, arg);
    list.push(R::boxed("TopK", Dt::Reg, RANK1, same, topk));
}
