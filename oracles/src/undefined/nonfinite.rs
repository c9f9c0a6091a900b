//! NaN, infinities and zero scales: ops that select or compare (what a NaN does there), ops
//! whose arithmetic has no fixed order (where an infinity meets a zero), weights over
//! padding, operands scaled by 0, quantization of what has no rounding, and float16 sums
//! that pass the type's range where the text fixes no precision.
use super::{Seen, data_inputs, slot, value};
use mutagraph_backends::value::HostTensor;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;
use mutagraph_ir::registry::{Registry, Traits};

fn nan_inf(t: &HostTensor) -> (usize, usize) {
    if t.dtype.is_float() {
        t.nan_inf_counts()
    } else {
        (0, 0)
    }
}

fn nonfinite(t: &HostTensor) -> bool {
    let (n, i) = nan_inf(t);
    n + i > 0
}

pub(super) fn nan_into_select(node: &Node, seen: &Seen) -> Option<String> {
    (Registry::global().node_has(node, Traits::NAN_UNSPECIFIED)
        && data_inputs(node, seen).iter().any(|t| nan_inf(t).0 > 0))
    .then(|| format!("NaN reaches {}", node.op_type))
}

/// A scatter that reduces by `min` or `max` with a NaN in its data or updates: the text's
/// `f(data, update)` is max or min, which it does not define on NaN.
pub(super) fn nan_into_scatter_reduction(node: &Node, seen: &Seen) -> Option<String> {
    let scatter = matches!(node.op_type.as_str(), "ScatterElements" | "ScatterND");
    let reduction = node.attributes.string("reduction", "none");
    if !scatter || !matches!(reduction.as_str(), "min" | "max") {
        return None;
    }
    [0, 2]
        .into_iter()
        .filter_map(|k| slot(node, seen, k))
        .any(|t| nan_inf(t).0 > 0)
        .then(|| format!("NaN reaches {}'s {reduction} reduction", node.op_type))
}

pub(super) fn inf_into_order_dependent(node: &Node, seen: &Seen) -> Option<String> {
    (Registry::global().node_has(node, Traits::INF_UNSPECIFIED)
        && data_inputs(node, seen).iter().any(|t| nan_inf(t).1 > 0))
    .then(|| format!("Inf reaches {}", node.op_type))
}

pub(super) fn nonfinite_conv_weights(node: &Node, seen: &Seen) -> Option<String> {
    if !matches!(
        node.op_type.as_str(),
        "Conv" | "ConvTranspose" | "DeformConv" | "QLinearConv"
    ) {
        return None;
    }
    node.inputs
        .iter()
        .skip(1)
        .filter_map(|i| value(seen, i))
        .any(nonfinite)
        .then(|| format!("NaN/Inf in the weights of {}", node.op_type))
}

pub(super) fn clip_default_bound_infinite(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Clip" {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let v = x.to_f64s().filter(|_| x.dtype.is_float())?;
    // an attribute (Clip before opset 11) or an input gives the bound
    let absent = |slot_ix: usize, attr: &str| {
        node.inputs.get(slot_ix).is_none_or(|n| n.is_empty())
            && node.attributes.attr(attr).is_none()
    };
    if absent(1, "min") && v.contains(&f64::NEG_INFINITY) {
        return Some("-inf reaches a Clip without min".into());
    }
    if absent(2, "max") && v.contains(&f64::INFINITY) {
        return Some("+inf reaches a Clip without max".into());
    }
    None
}

pub(super) fn gemm_zero_scale(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Gemm" {
        return None;
    }
    let scale = |name: &str| node.attributes.float(name, 1.0);
    let bad = |i: usize| slot(node, seen, i).is_some_and(nonfinite);
    ((scale("alpha") == 0.0 && (bad(0) || bad(1))) || (scale("beta") == 0.0 && bad(2)))
        .then(|| "NaN/Inf in a Gemm operand scaled by 0".into())
}

pub(super) fn quantize_nonfinite(node: &Node, seen: &Seen) -> Option<String> {
    (matches!(
        node.op_type.as_str(),
        "QuantizeLinear" | "DynamicQuantizeLinear"
    ) && slot(node, seen, 0).is_some_and(nonfinite))
    .then(|| format!("NaN/Inf into {}", node.op_type))
}

pub(super) fn dynamicquantize_zero_range(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "DynamicQuantizeLinear" {
        return None;
    }
    slot(node, seen, 0)?
        .to_f64s()?
        .iter()
        .all(|v| *v == 0.0)
        .then(|| "DynamicQuantizeLinear of zeros only: y_scale 0, zero point 0 / 0".into())
}

pub(super) fn lrn_half_square_sum_overflow(node: &Node, seen: &Seen) -> Option<String> {
    use mutagraph_ir::dtype::DType;
    if node.op_type != "LRN" {
        return None;
    }
    let x = slot(node, seen, 0).filter(|t| t.dtype == DType::F16 && t.shape.len() >= 2)?;
    let size = node.attributes.int("size", 1).max(1) as usize;
    let v = x.to_f64s()?;
    let (n, c) = (x.shape[0], x.shape[1]);
    let inner: usize = x.shape[2..].iter().product();
    // The channel window of channel `ch`: floor((size - 1) / 2) before, ceil((size - 1) / 2)
    // after.
    let (before, after) = ((size - 1) / 2, size / 2);
    for b in 0..n {
        for i in 0..inner {
            for ch in 0..c {
                let lo = ch.saturating_sub(before);
                let hi = (ch + after).min(c - 1);
                let sum: f64 = (lo..=hi).map(|k| v[(b * c + k) * inner + i].powi(2)).sum();
                if sum > f64::from(half::f16::MAX) {
                    return Some(format!("a square sum of {sum:e} in float16"));
                }
            }
        }
    }
    None
}

pub(super) fn mvn_zero_variance(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "MeanVarianceNormalization" {
        return None;
    }
    let x = slot(node, seen, 0).filter(|t| t.dtype.is_float() && t.num_elements() > 0)?;
    let rank = x.shape.len() as i64;
    let axes: Vec<usize> = node
        .attributes
        .ints("axes")
        .map_or_else(|| vec![0, 2, 3], <[i64]>::to_vec)
        .into_iter()
        .map(|a| if a < 0 { a + rank } else { a })
        .filter(|a| (0..rank).contains(a))
        .map(|a| a as usize)
        .collect();
    let v = x.to_f64s()?;
    // Each slice (the kept axes' index): its first value and whether all its values equal it.
    let mut slices: std::collections::HashMap<usize, (f64, bool)> = Default::default();
    let mut index = vec![0usize; x.shape.len()];
    for &value in &v {
        let key = index
            .iter()
            .zip(&x.shape)
            .enumerate()
            .filter(|(d, _)| !axes.contains(d))
            .fold(0, |k, (_, (&i, &n))| k * n + i);
        let e = slices.entry(key).or_insert((value, true));
        e.1 &= value == e.0;
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < x.shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    slices
        .values()
        .any(|&(_, equal)| equal)
        .then(|| "a slice of equal values (variance 0)".into())
}

/// A HardSigmoid with `alpha` 0 fed an infinity: alpha * x is 0 * inf, NaN, and the max and
/// min around it are not defined on NaN.
pub(super) fn hardsigmoid_zero_alpha_infinite(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "HardSigmoid" || node.attributes.float("alpha", 0.2) != 0.0 {
        return None;
    }
    let x = slot(node, seen, 0)?;
    (nan_inf(x).1 > 0).then(|| "an infinite input with alpha 0".into())
}
