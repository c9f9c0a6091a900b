//! Shapes, windows and coordinates: Resize's coordinate formulas, reflect and SAME padding,
//! GridSample's taps near the border, zero-length sequences, and the cases where ONNX's own
//! definition, shape inference and reference disagree.
use super::{Seen, slot, value};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

/// Output lengths of a Resize from its `sizes` (slot 3) or `scales` (slot 2) input.
fn resize_out(node: &Node, seen: &Seen, dims: &[usize]) -> Option<Vec<f64>> {
    if let Some(sizes) = slot(node, seen, 3).filter(|t| t.num_elements() > 0) {
        return sizes.to_f64s();
    }
    let scales = slot(node, seen, 2).filter(|t| t.num_elements() > 0)?;
    let sc = scales.to_f64s()?;
    Some(
        dims.iter()
            .zip(&sc)
            .map(|(&d, &s)| (d as f64 * s).floor())
            .collect(),
    )
}

/// The input lengths of the axes a Resize in coordinate mode `mode` resizes to a length of 1.
fn resized_to_one(node: &Node, seen: &Seen, mode: &str) -> Option<Vec<usize>> {
    let ours = node
        .attributes
        .string("coordinate_transformation_mode", "half_pixel");
    if node.op_type != "Resize" || ours != mode {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let out = resize_out(node, seen, &x.shape)?;
    Some(
        x.shape
            .iter()
            .zip(&out)
            .filter(|(_, o)| **o == 1.0)
            .map(|(&d, _)| d)
            .collect(),
    )
}

/// A Resize with `pytorch_half_pixel` to a length of 1 from a longer axis: the text maps the
/// one output to 0, ONNX's reference implementation to -0.5.
pub(super) fn resize_pytorch_half_pixel_to_one(node: &Node, seen: &Seen) -> Option<String> {
    resized_to_one(node, seen, "pytorch_half_pixel")?
        .iter()
        .any(|&d| d > 1)
        .then(|| "pytorch_half_pixel to a length of 1".into())
}

pub(super) fn resize_align_corners_to_one(node: &Node, seen: &Seen) -> Option<String> {
    resized_to_one(node, seen, "align_corners")?
        .iter()
        .any(|&d| d != 1)
        .then(|| "align_corners to a length of 1".into())
}

pub(super) fn resize_fractional_length(node: &Node, seen: &Seen) -> Option<String> {
    let mode = node
        .attributes
        .string("coordinate_transformation_mode", "half_pixel");
    if node.op_type != "Resize"
        || !matches!(mode.as_str(), "align_corners" | "tf_crop_and_resize")
        || slot(node, seen, 3).is_some_and(|t| t.num_elements() > 0)
    {
        return None;
    }
    // An output of one element: align_corners divides by zero by one reading (its own
    // entry); tf_crop_and_resize takes the middle of the region by one reading only.
    let least = if mode == "tf_crop_and_resize" {
        1.0
    } else {
        2.0
    };
    let x = slot(node, seen, 0)?;
    let scales = slot(node, seen, 2)
        .filter(|t| t.num_elements() > 0)?
        .to_f64s()?;
    x.shape.iter().zip(&scales).find_map(|(&d, &s)| {
        let product = d as f64 * s;
        // Both readings agree on an integer product and on an output of one element.
        (d > 1 && product.fract() != 0.0 && product.floor() >= least)
            .then(|| format!("length {d} scaled by {s} is {product}"))
    })
}

pub(super) fn squeeze_empty_axes(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Squeeze" {
        return None;
    }
    let by_attribute = node.attributes.ints("axes").is_some_and(<[i64]>::is_empty);
    let by_input = slot(node, seen, 1).is_some_and(|t| t.num_elements() == 0);
    (by_attribute || by_input).then(|| "axes given and empty".into())
}

pub(super) fn resize_crop_without_roi(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Resize"
        || node
            .attributes
            .string("coordinate_transformation_mode", "half_pixel")
            != "tf_crop_and_resize"
    {
        return None;
    }
    let roi = node.inputs.get(1).filter(|n| !n.is_empty());
    let empty = match roi {
        None => true,
        Some(n) => value(seen, n).is_some_and(|t| t.num_elements() == 0),
    };
    empty.then(|| "tf_crop_and_resize without a roi".into())
}

pub(super) fn global_pool_without_spatial_axes(node: &Node, seen: &Seen) -> Option<String> {
    if !node.op_type.starts_with("Global") || !node.op_type.ends_with("Pool") {
        return None;
    }
    let x = slot(node, seen, 0)?;
    (x.shape.len() < 3).then(|| format!("an input of rank {} (no spatial axis)", x.shape.len()))
}

pub(super) fn resize_empty_axis(node: &Node, seen: &Seen) -> Option<String> {
    if !matches!(node.op_type.as_str(), "Resize" | "Upsample") {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let y = node.outputs.first().and_then(|o| value(seen, o))?;
    x.shape
        .iter()
        .zip(&y.shape)
        .position(|(&i, &o)| i == 0 && o > 0)
        .map(|axis| format!("axis {axis} of length 0 resized to {}", y.shape[axis]))
}

/// A node's pads, from the `pads` input (Pad from opset 11) or attribute.
fn pad_amounts(node: &Node, seen: &Seen) -> Option<Vec<i64>> {
    match slot(node, seen, 1) {
        Some(t) => t.to_i64s(),
        None => node.ints("pads").map(|p| p.to_vec()),
    }
}

pub(super) fn pad_reflect_beyond_axis(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Pad" || node.attributes.string("mode", "constant") != "reflect" {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let pads = pad_amounts(node, seen)?;
    let rank = x.shape.len();
    // Pads name every axis, or those of the `axes` input (slot 3).
    let axes: Vec<usize> = match slot(node, seen, 3).and_then(|t| t.to_i64s()) {
        Some(a) => a
            .iter()
            .map(|&a| if a < 0 { a + rank as i64 } else { a } as usize)
            .collect(),
        None => (0..rank).collect(),
    };
    let n = axes.len();
    if pads.len() != 2 * n {
        return None;
    }
    for (k, &ax) in axes.iter().enumerate() {
        let len = *x.shape.get(ax)? as i64;
        let (b, e) = (pads[k], pads[k + n]);
        // what is left of the axis once negative pads crop it
        let kept = len + b.min(0) + e.min(0);
        if (b > 0 || e > 0) && (b >= kept || e >= kept || kept <= 1) {
            return Some(format!(
                "reflect pads ({b}, {e}) on an axis of length {len}"
            ));
        }
        if kept <= 0 && len > 0 {
            return Some(format!(
                "reflect pads ({b}, {e}) crop an axis of length {len} to nothing"
            ));
        }
    }
    None
}

pub(super) fn same_pad_negative(node: &Node, seen: &Seen) -> Option<String> {
    let auto = node.attributes.string("auto_pad", "NOTSET");
    if auto != "SAME_UPPER" && auto != "SAME_LOWER" {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let spatial = x.shape.get(2..)?;
    let r = spatial.len();
    let kernel: Vec<i64> = match node.ints("kernel_shape") {
        Some(k) => k.to_vec(),
        None => {
            let w = match node.op_type.as_str() {
                "QLinearConv" => slot(node, seen, 3)?,
                _ => slot(node, seen, 1)?,
            };
            w.shape.get(2..)?.iter().map(|&d| d as i64).collect()
        }
    };
    if kernel.len() != r {
        return None;
    }
    let ints = |name: &str| -> Vec<i64> {
        node.ints(name)
            .filter(|v| v.len() == r)
            .map_or_else(|| vec![1; r], |v| v.to_vec())
    };
    let (strides, dil) = (ints("strides"), ints("dilations"));
    let transpose = node.op_type == "ConvTranspose";
    let out_pad = node
        .ints("output_padding")
        .filter(|v| v.len() == r)
        .map_or_else(|| vec![0; r], |v| v.to_vec());
    for d in 0..r {
        let i = spatial[d] as i64;
        let s = strides[d].max(1);
        let ek = (kernel[d] - 1) * dil[d] + 1;
        let total = if transpose {
            // Output i * s; pads = s * (i - 1) + output_padding + ek - i * s.
            s * (i - 1) + out_pad[d] + ek - i * s
        } else {
            let o = (i + s - 1) / s;
            (o - 1) * s + ek - i
        };
        if total < 0 {
            return Some(format!(
                "{auto} on an axis of length {i} with window {ek} and stride {s} needs a \
                 total pad of {total}"
            ));
        }
    }
    None
}

pub(super) fn gridsample_cubic_border(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "GridSample" {
        return None;
    }
    let mode = node.attributes.string("mode", "linear");
    if mode != "cubic" && mode != "bicubic" {
        return None;
    }
    let padding = node.attributes.string("padding_mode", "zeros");
    if padding == "zeros" {
        return None;
    }
    let align = node.attributes.int("align_corners", 0) != 0;
    let x = slot(node, seen, 0)?;
    let grid = slot(node, seen, 1)?;
    let spatial = x.shape.get(2..)?;
    let r = spatial.len();
    let g = grid.to_f64s()?;
    if r == 0 || g.len() % r != 0 {
        return None;
    }
    for point in g.chunks(r) {
        // The grid lists x (width) first: its last spatial axis.
        for (k, &c) in point.iter().enumerate() {
            let size = spatial[r - 1 - k] as f64;
            let u = if align {
                (c + 1.0) / 2.0 * (size - 1.0)
            } else {
                ((c + 1.0) * size - 1.0) / 2.0
            };
            let first = u.floor() - 1.0;
            if !u.is_finite() || first < 0.0 || first + 3.0 > size - 1.0 {
                return Some(format!(
                    "bicubic taps around {u:.3} leave an axis of length {size} with \
                     padding_mode {padding}"
                ));
            }
        }
    }
    None
}

pub(super) fn recurrent_zero_length(node: &Node, seen: &Seen) -> Option<String> {
    if !matches!(node.op_type.as_str(), "RNN" | "GRU" | "LSTM") {
        return None;
    }
    slot(node, seen, 4)?
        .to_i64s()?
        .contains(&0)
        .then(|| "a sequence length of 0".into())
}

/// The op registry's own ambiguity check ([`mutagraph_ir::registry::OpSpec::ambiguous`])
/// on the node with the types of the values that reached it.
pub(super) fn registry_ambiguity(node: &Node, seen: &Seen) -> Option<String> {
    use mutagraph_ir::registry::{InferCtx, Registry};
    use mutagraph_ir::types::{TensorType, ValueType};
    let spec = Registry::global().for_node(node)?;
    let check = spec.ambiguous?;
    let inputs: Vec<Option<ValueType>> = node
        .inputs
        .iter()
        .map(|i| {
            value(seen, i).map(|t| {
                ValueType::Tensor(TensorType::fixed(
                    t.dtype,
                    &t.shape.iter().map(|&d| d as i64).collect::<Vec<_>>(),
                ))
            })
        })
        .collect();
    let consts = vec![None; node.inputs.len()];
    let ctx = InferCtx::new(node, 22, inputs, consts);
    check(&ctx).err().map(|e| e.to_string())
}

pub(super) fn reduce_mean_empty_set(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "ReduceMean" {
        return None;
    }
    let x = slot(node, seen, 0)?;
    let rank = x.shape.len() as i64;
    // The axes: the attribute before opset 18, the input from 18; none is every axis unless
    // noop_with_empty_axes says nothing is reduced.
    let axes: Vec<i64> = match node.attributes.ints("axes") {
        Some(a) => a.to_vec(),
        None => match slot(node, seen, 1).filter(|t| t.num_elements() > 0) {
            Some(t) => t.to_f64s()?.iter().map(|&a| a as i64).collect(),
            None if node.attributes.int("noop_with_empty_axes", 0) == 1 => return None,
            None => (0..rank).collect(),
        },
    };
    axes.iter()
        .map(|&a| if a < 0 { a + rank } else { a })
        .find(|&a| x.shape.get(a as usize) == Some(&0))
        .map(|a| format!("axis {a} of {:?} is empty", x.shape))
}

/// A ConvTranspose whose `output_padding` on some axis is at least the stride or the dilation
/// but smaller than the other: the text bounds it by "the corresponding stride/dilation".
pub(super) fn convtranspose_output_padding_between(node: &Node, _: &Seen) -> Option<String> {
    if node.op_type != "ConvTranspose" {
        return None;
    }
    let pads = node.ints("output_padding")?;
    let ints = |name: &str, at: usize| {
        node.ints(name)
            .and_then(|v| v.get(at).copied())
            .unwrap_or(1)
    };
    pads.iter().enumerate().find_map(|(i, &p)| {
        let (s, d) = (ints("strides", i), ints("dilations", i));
        (p >= s.min(d) && p < s.max(d))
            .then(|| format!("output_padding {p} with stride {s} and dilation {d}"))
    })
}

/// A Split by `num_outputs` into more parts than the text's reading fills: chunks of
/// ceil(length / num_outputs) leave more than the last part short (or empty).
pub(super) fn split_num_outputs_beyond_chunks(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "Split" {
        return None;
    }
    let k = node.attributes.int("num_outputs", 0);
    let x = slot(node, seen, 0)?;
    let rank = x.shape.len() as i64;
    let axis = node.attributes.int("axis", 0);
    let axis = if axis < 0 { axis + rank } else { axis };
    let n = *x.shape.get(usize::try_from(axis).ok()?)? as i64;
    if k < 2 {
        return None;
    }
    let chunk = (n + k - 1) / k;
    ((k - 1) * chunk >= n)
        .then(|| format!("num_outputs {k} over an axis of length {n} (chunks of {chunk})"))
}
