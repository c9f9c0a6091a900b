//! The sliding-window geometry shared by Conv, ConvTranspose and the pools: attribute lists,
//! begin and end pads, and tensors lifted from burn's fixed-rank ops back to rank R.
use super::{Res, ints_attr};
use crate::burn::tensor::{Val, pad, run_err};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

pub(super) fn arr<const N: usize>(v: &[usize]) -> [usize; N] {
    let mut a = [0usize; N];
    a.copy_from_slice(v);
    a
}

pub(super) fn lift<B: BurnBackend, const N: usize>(t: Tensor<B, N>, dtype: DType) -> Val<B> {
    let s = t.dims().to_vec();
    Val::float(t.reshape(pad(&s)), s, dtype)
}

pub(super) fn list(node: &Node, name: &str, n: usize, default: usize) -> Res<Vec<usize>> {
    match ints_attr(&node.attributes, name) {
        Some(v) => {
            if v.len() != n {
                return Err(run_err(format!(
                    "{}: {name} has {} values, expected {n}",
                    node.op_type,
                    v.len()
                )));
            }
            v.iter()
                .map(|&x| {
                    usize::try_from(x)
                        .map_err(|_| run_err(format!("{}: negative {name}", node.op_type)))
                })
                .collect()
        }
        None => Ok(vec![default; n]),
    }
}

/// Begin and end pads of a sliding window op (Conv, pooling).
pub(super) fn window_pads(
    node: &Node,
    input: &[usize],
    kernel: &[usize],
    strides: &[usize],
    dils: &[usize],
) -> Res<(Vec<usize>, Vec<usize>)> {
    let n = input.len();
    let auto = node.attributes.string("auto_pad", "NOTSET");
    match auto.as_str() {
        "SAME_UPPER" | "SAME_LOWER" => {
            let mut b = vec![0; n];
            let mut e = vec![0; n];
            for i in 0..n {
                let out = input[i].div_ceil(strides[i]);
                let eff = (kernel[i] - 1) * dils[i] + 1;
                let total = ((out.max(1) - 1) * strides[i] + eff).saturating_sub(input[i]);
                let small = total / 2;
                if auto == "SAME_UPPER" {
                    b[i] = small;
                    e[i] = total - small;
                } else {
                    b[i] = total - small;
                    e[i] = small;
                }
            }
            Ok((b, e))
        }
        "VALID" => Ok((vec![0; n], vec![0; n])),
        _ => {
            let p = list(node, "pads", 2 * n, 0)?;
            Ok((p[..n].to_vec(), p[n..].to_vec()))
        }
    }
}
