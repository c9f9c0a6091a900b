//! The normalizations of a burn reproduction that are means over axes (burn's `mean_dim` one
//! axis at a time), written as the interpreter computes them: MeanVarianceNormalization and
//! InstanceNormalization.
use super::{R, bax, padded, reshape_expr};
use crate::value::HostTensor;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;
use mutagraph_ir::ops::common::norm_axis;

/// `.mean_dim(d)` for each burn axis in `dims`, in order.
fn means(dims: &[usize]) -> String {
    dims.iter().map(|d| format!(".mean_dim({d})")).collect()
}

/// [`super::body`] of MeanVarianceNormalization: the mean over the axes, then
/// (X - mean) / (sqrt(var) + 1e-9), the epsilon added to the standard deviation as ONNX's
/// function body adds it.
pub(super) fn mvn_body(node: &Node, x: &HostTensor) -> Option<(String, usize)> {
    let r = x.shape.len();
    let axes = node
        .attributes
        .ints("axes")
        .map(<[i64]>::to_vec)
        .unwrap_or_else(|| vec![0, 2, 3]);
    let dims = axes
        .iter()
        .map(|&a| norm_axis(a, r).ok().map(|a| bax(r, a)))
        .collect::<Option<Vec<_>>>()?;
    let m = means(&dims);
    Some((
        format!(
            "    let mean = x.clone(){m};\n    \
             let c = x.sub(mean);\n    \
             let var = c.clone().mul(c.clone()){m};\n    \
             let y = c.div(var.sqrt().add_scalar(1e-9));\n"
        ),
        R,
    ))
}

/// [`super::body`] of InstanceNormalization: the scale `z` and the bias `c` (each of one
/// value per channel) reshaped to broadcast over [N, C, ...], the mean and the variance over
/// the spatial axes, then (X - mean) / sqrt(var + epsilon) * scale + bias.
pub(super) fn instance_norm_body(
    node: &Node,
    x: &HostTensor,
    scale: &HostTensor,
    bias: Option<&HostTensor>,
) -> Option<(String, usize)> {
    let r = x.shape.len();
    // one value per channel (an empty channel axis: the interpreter makes the parameters
    // afresh instead of reshaping them, not written here)
    let channels = *x.shape.get(1).filter(|&&c| c > 0)?;
    if r < 3
        || [Some(scale), bias]
            .iter()
            .any(|p| p.is_none_or(|p| p.num_elements() != channels))
    {
        return None;
    }
    let mut per_channel = vec![1usize; r];
    per_channel[1] = channels;
    let to = padded(&per_channel);
    let m = means(&(2..r).map(|i| bax(r, i)).collect::<Vec<_>>());
    let eps = node.attributes.float("epsilon", 1e-5) as f64;
    Some((
        format!(
            "    let scale = {};\n    \
             let bias = {};\n    \
             let mean = x.clone(){m};\n    \
             let d = x.sub(mean);\n    \
             let var = d.clone().mul(d.clone()){m};\n    \
             let y = d.div(var.add_scalar({eps:?}).sqrt()).mul(scale).add(bias);\n",
            reshape_expr("z", &to, ""),
            reshape_expr("c", &to, "")
        ),
        R,
    ))
}
