//! The windowed ops of a burn reproduction: convolutions and pooling, 1-D and 2-D, written as
//! the interpreter calls burn's `module` functions.
use super::{R, reshape_expr};
use crate::value::HostTensor;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

/// [`body`] of Conv and ConvTranspose (1-D and 2-D, explicit pads), as the interpreter calls
/// burn: Conv with its begin and end pads, ConvTranspose only where burn's own padding serves
/// (symmetric pads, output padding below the stride or dilation); the bias is `c`.
pub(super) fn conv_body(node: &Node, x: &HostTensor, w: &HostTensor) -> Option<(String, usize)> {
    let a = &node.attributes;
    let r = x.shape.len();
    let n = r.checked_sub(2).filter(|n| (1..=2).contains(n))?;
    let transpose = node.op_type == "ConvTranspose";
    if w.shape.len() != r
        || !matches!(a.string("auto_pad", "NOTSET").as_str(), "NOTSET" | "VALID")
        || a.ints("output_shape").is_some()
    {
        return None;
    }
    let list = |name: &str, len: usize, default: i64| -> Option<Vec<usize>> {
        let v = a
            .ints(name)
            .map(|v| v.to_vec())
            .unwrap_or(vec![default; len]);
        (v.len() == len && v.iter().all(|&x| x >= 0))
            .then(|| v.iter().map(|&x| x as usize).collect())
    };
    let strides = list("strides", n, 1)?;
    let dils = list("dilations", n, 1)?;
    let pads = list("pads", 2 * n, 0)?;
    let group = a.int("group", 1);
    let arr = |v: &[usize]| {
        let items: Vec<String> = v.iter().map(usize::to_string).collect();
        format!("[{}]", items.join(", "))
    };
    let (begin, end) = pads.split_at(n);
    let options = if transpose {
        let opad = list("output_padding", n, 0)?;
        let fits = (0..n).all(|i| opad[i] < strides[i].max(dils[i]));
        if begin != end || !fits {
            return None;
        }
        format!(
            "burn::tensor::ops::ConvTransposeOptions::new({}, {}, {}, {}, {group})",
            arr(&strides),
            arr(begin),
            arr(&opad),
            arr(&dils)
        )
    } else {
        format!(
            "burn::tensor::ops::PaddedConvOptions::asymmetric({}, {}, {}, {}, {group})",
            arr(&strides),
            arr(begin),
            arr(end),
            arr(&dils)
        )
    };
    let f = match (transpose, n) {
        (false, 1) => "conv1d",
        (false, _) => "conv2d",
        (true, 1) => "conv_transpose1d",
        (true, _) => "conv_transpose2d",
    };
    let bias = if node.inputs.get(2).is_some_and(|c| !c.is_empty()) {
        format!("Some(c.flatten::<1>(0, {}))", R - 1)
    } else {
        "None".to_string()
    };
    let d = r;
    Some((
        format!(
            "    let x{d}: Tensor<B, {d}> = {};\n    \
             let w{d}: Tensor<B, {d}> = {};\n    \
             let y = module::{f}(x{d}, w{d}, {bias}, {options});\n",
            reshape_expr("x", &x.shape, ""),
            reshape_expr("z", &w.shape, "")
        ),
        r,
    ))
}

/// [`body`] of MaxPool and AveragePool (1-D and 2-D, explicit symmetric pads).
pub(super) fn pool_body(node: &Node, x: &HostTensor) -> Option<(String, usize)> {
    let a = &node.attributes;
    let r = x.shape.len();
    let op = node.op_type.as_str();
    let n = r.checked_sub(2)?;
    if !(1..=2).contains(&n) || a.string("auto_pad", "NOTSET") != "NOTSET" {
        return None;
    }
    if node.outputs.len() > 1 && !node.outputs[1].is_empty() {
        return None;
    }
    let list = |name: &str, default: i64| -> Option<Vec<usize>> {
        let v = a.ints(name).map(|v| v.to_vec()).unwrap_or(vec![default; n]);
        (v.len() == n && v.iter().all(|&x| x >= 0)).then(|| v.iter().map(|&x| x as usize).collect())
    };
    let kernel = list("kernel_shape", 0)?;
    let strides = list("strides", 1)?;
    let dils = list("dilations", 1)?;
    let pads = a.ints("pads").map(|v| v.to_vec()).unwrap_or(vec![0; 2 * n]);
    if pads.len() != 2 * n || pads[..n] != pads[n..] || pads.iter().any(|&p| p < 0) {
        return None;
    }
    let pads: Vec<usize> = pads[..n].iter().map(|&p| p as usize).collect();
    let ceil = a.int("ceil_mode", 0) != 0;
    let include = a.int("count_include_pad", 0) != 0;
    let max = op == "MaxPool";
    let shape = &x.shape;
    let arr = |v: &[usize]| {
        format!(
            "[{}]",
            v.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let (reshape, call) = if n == 1 {
        (
            format!("let x3: Tensor<B, 3> = {};", reshape_expr("x", shape, "")),
            if max {
                format!(
                    "module::max_pool1d(x3, {}, {}, {}, {}, {ceil})",
                    kernel[0], strides[0], pads[0], dils[0]
                )
            } else {
                format!(
                    "module::avg_pool1d(x3, {}, {}, {}, {include}, {ceil})",
                    kernel[0], strides[0], pads[0]
                )
            },
        )
    } else {
        (
            format!("let x4: Tensor<B, 4> = {};", reshape_expr("x", shape, "")),
            if max {
                format!(
                    "module::max_pool2d(x4, {}, {}, {}, {}, {ceil})",
                    arr(&kernel),
                    arr(&strides),
                    arr(&pads),
                    arr(&dils)
                )
            } else {
                if dils.iter().any(|&d| d != 1) {
                    return None;
                }
                format!(
                    "module::avg_pool2d(x4, {}, {}, {}, {include}, {ceil})",
                    arr(&kernel),
                    arr(&strides),
                    arr(&pads)
                )
            },
        )
    };
    Some((format!("    {reshape}\n    let y = {call};\n"), r))
}
