//! The sliding-window geometry shared by Conv, ConvTranspose and the pools: attribute lists,
//! begin and end pads, and tensors lifted from burn's fixed-rank ops back to rank R.
use super::{Res, ints_attr};
use crate::burn::tensor::{Val, reshaped, run_err};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use mutagraph_ir::ops::auto_pad::{axis_pads, effective_kernel, is_same};

pub(super) fn arr<const N: usize>(v: &[usize]) -> [usize; N] {
    let mut a = [0usize; N];
    a.copy_from_slice(v);
    a
}

pub(super) fn lift<B: BurnBackend, const N: usize>(t: Tensor<B, N>, dtype: DType) -> Val<B> {
    let s = t.dims().to_vec();
    Val::float(reshaped(t, &s), s, dtype)
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
        a if is_same(a) => Ok((0..n)
            .map(|i| {
                let eff = effective_kernel(kernel[i] as i64, dils[i] as i64);
                let (b, e) = axis_pads(a, input[i] as i64, eff, strides[i] as i64, (0, 0));
                (b as usize, e as usize)
            })
            .unzip()),
        "VALID" => Ok((vec![0; n], vec![0; n])),
        _ => {
            let p = list(node, "pads", 2 * n, 0)?;
            Ok((p[..n].to_vec(), p[n..].to_vec()))
        }
    }
}
