//! Conv and ConvTranspose (1-D, 2-D and 3-D, as burn offers them).
use super::window::{arr, lift, list, window_pads};
use super::{Cx, Outs, Res, ints_attr, need_float, opt, req};
use crate::burn::tensor::{K, R, ReshapeExact, Val, bax, reshaped, run_err, run_unsup};
use burn::tensor::Slice;
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::module::{
    conv_transpose1d, conv_transpose2d, conv_transpose3d, conv1d, conv2d, conv3d,
};
use burn::tensor::ops::{ConvTransposeOptions, PadMode, PaddedConvOptions};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;
use mutagraph_ir::ops::auto_pad::{is_same, split_same_pad};

pub(super) fn conv<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = "Conv";
    let x = req(ins, 0, op)?;
    let w = req(ins, 1, op)?;
    let xt = need_float(x, op)?;
    let wt = need_float(w, op)?;
    let r = x.rank();
    if !(3..=5).contains(&r) || w.rank() != r {
        return Err(run_unsup(format!(
            "Conv of rank {r} with weight rank {}",
            w.rank()
        )));
    }
    let n = r - 2;
    let g = node.attributes.int("group", 1);
    if g <= 0 {
        return Err(run_err("Conv: group must be positive"));
    }
    let g = g as usize;
    let (c, m) = (x.shape[1], w.shape[0]);
    if w.shape[1] * g != c || m % g != 0 {
        return Err(run_err(format!(
            "Conv: weight {:?} does not fit input {:?} with group {g}",
            w.shape, x.shape
        )));
    }
    let kernel = w.shape[2..].to_vec();
    if let Some(ks) = ints_attr(&node.attributes, "kernel_shape")
        && ks.iter().map(|&k| k as usize).collect::<Vec<_>>() != kernel
    {
        return Err(run_err("Conv: kernel_shape differs from the weight"));
    }
    let strides = list(node, "strides", n, 1)?;
    let dils = list(node, "dilations", n, 1)?;
    if strides.contains(&0) || dils.contains(&0) {
        return Err(run_err("Conv: zero stride or dilation"));
    }
    let (pb, pe) = window_pads(node, &x.shape[2..], &kernel, &strides, &dils)?;
    for i in 0..n {
        let eff = (kernel[i] - 1) * dils[i] + 1;
        if x.shape[2 + i] + pb[i] + pe[i] < eff {
            return Err(run_err("Conv: kernel larger than the padded input"));
        }
    }
    let bias = match opt(ins, 2) {
        Some(b) => {
            if b.numel() != m {
                return Err(run_err("Conv: bias size differs from output channels"));
            }
            Some(b.f().reshape_exact([m]))
        }
        None => None,
    };
    let (xs, ws) = (&x.shape, &w.shape);
    let y = match n {
        1 => lift(
            conv1d(
                xt.reshape_exact(arr::<3>(xs)),
                wt.reshape_exact(arr::<3>(ws)),
                bias,
                PaddedConvOptions::asymmetric(arr(&strides), arr(&pb), arr(&pe), arr(&dils), g),
            ),
            x.dtype,
        ),
        2 => lift(
            conv2d(
                xt.reshape_exact(arr::<4>(xs)),
                wt.reshape_exact(arr::<4>(ws)),
                bias,
                PaddedConvOptions::asymmetric(arr(&strides), arr(&pb), arr(&pe), arr(&dils), g),
            ),
            x.dtype,
        ),
        // burn's conv3d takes symmetric pads only ("not yet supported" otherwise): uneven
        // pads are applied as zeros first, the way a burn user would
        _ if pb != pe => {
            let mut pads = vec![(0usize, 0usize); R];
            for i in 0..n {
                pads[bax(r, 2 + i)] = (pb[i], pe[i]);
            }
            let mut padded = xs.clone();
            for i in 0..n {
                padded[2 + i] += pb[i] + pe[i];
            }
            let xp = xt.pad(pads, PadMode::Constant(0.0));
            lift(
                conv3d(
                    xp.reshape_exact(arr::<5>(&padded)),
                    wt.reshape_exact(arr::<5>(ws)),
                    bias,
                    PaddedConvOptions::asymmetric(
                        arr(&strides),
                        arr(&[0; 3]),
                        arr(&[0; 3]),
                        arr(&dils),
                        g,
                    ),
                ),
                x.dtype,
            )
        }
        _ => lift(
            conv3d(
                xt.reshape_exact(arr::<5>(xs)),
                wt.reshape_exact(arr::<5>(ws)),
                bias,
                PaddedConvOptions::asymmetric(arr(&strides), arr(&pb), arr(&pe), arr(&dils), g),
            ),
            x.dtype,
        ),
    };
    Ok(vec![Some(y)])
}

/// ConvTranspose's begin pad and output size per spatial dim, from `output_shape`, `auto_pad`
/// or the explicit pads (`full`: the output size before any pad is taken off).
fn transpose_pads(
    node: &Node,
    full: &[i64],
    opad: &[usize],
    inp: &[usize],
    strides: &[usize],
) -> Res<(Vec<i64>, Vec<i64>)> {
    let a = &node.attributes;
    let n = inp.len();
    let auto = a.string("auto_pad", "NOTSET");
    let out_shape = ints_attr(a, "output_shape");
    Ok(if out_shape.is_some() || is_same(&auto) {
        let target: Vec<i64> = match &out_shape {
            Some(s) => {
                let s = if s.len() == n + 2 {
                    s[2..].to_vec()
                } else {
                    s.clone()
                };
                if s.len() != n {
                    return Err(run_err("ConvTranspose: output_shape of the wrong length"));
                }
                s
            }
            None => (0..n).map(|i| (inp[i] * strides[i]) as i64).collect(),
        };
        let mut b = Vec::new();
        for i in 0..n {
            b.push(split_same_pad(&auto, full[i] + opad[i] as i64 - target[i]).0);
        }
        (b, target)
    } else {
        let p = list(node, "pads", 2 * n, 0)?;
        let b: Vec<i64> = p[..n].iter().map(|&v| v as i64).collect();
        let s: Vec<i64> = (0..n)
            .map(|i| full[i] + opad[i] as i64 - p[i] as i64 - p[n + i] as i64)
            .collect();
        (b, s)
    })
}

pub(super) fn conv_transpose<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = "ConvTranspose";
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let w = req(ins, 1, op)?;
    let xt = need_float(x, op)?;
    let wt = need_float(w, op)?;
    let r = x.rank();
    if !(3..=5).contains(&r) || w.rank() != r {
        return Err(run_unsup(format!("ConvTranspose of rank {r}")));
    }
    let n = r - 2;
    let g = a.int("group", 1);
    if g <= 0 {
        return Err(run_err("ConvTranspose: group must be positive"));
    }
    let g = g as usize;
    if w.shape[0] != x.shape[1] || w.shape[0] % g != 0 {
        return Err(run_err("ConvTranspose: weight does not fit the input"));
    }
    let m = w.shape[1] * g;
    let kernel = w.shape[2..].to_vec();
    let strides = list(node, "strides", n, 1)?;
    let dils = list(node, "dilations", n, 1)?;
    let opad = list(node, "output_padding", n, 0)?;
    if strides.contains(&0) || dils.contains(&0) {
        return Err(run_err("ConvTranspose: zero stride or dilation"));
    }
    let inp = &x.shape[2..];
    let full: Vec<i64> = (0..n)
        .map(|i| ((inp[i] - 1) * strides[i] + (kernel[i] - 1) * dils[i] + 1) as i64)
        .collect();
    let (begin, size) = transpose_pads(node, &full, &opad, inp, &strides)?;
    if size.iter().any(|&s| s <= 0) {
        return Err(run_err("ConvTranspose: empty output"));
    }
    let bias = match opt(ins, 2) {
        Some(b) => {
            if b.numel() != m {
                return Err(run_err(
                    "ConvTranspose: bias size differs from output channels",
                ));
            }
            Some(b.f().reshape_exact([m]))
        }
        None => None,
    };
    // burn's own padding when the pads are symmetric and the output padding is small
    let symmetric = (0..n).all(|i| {
        let end = full[i] + opad[i] as i64 - begin[i] - size[i];
        begin[i] >= 0 && end == begin[i] && opad[i] < strides[i].max(dils[i])
    });
    let (xs, ws) = (&x.shape, &w.shape);
    let (pd, po) = if symmetric {
        (
            begin.iter().map(|&v| v as usize).collect::<Vec<_>>(),
            opad.clone(),
        )
    } else {
        (vec![0; n], vec![0; n])
    };
    let b_in = if symmetric { bias.clone() } else { None };
    macro_rules! ct {
        ($f:ident, $d:literal) => {
            lift(
                $f(
                    xt.reshape_exact(arr::<$d>(xs)),
                    wt.reshape_exact(arr::<$d>(ws)),
                    b_in,
                    ConvTransposeOptions::new(arr(&strides), arr(&pd), arr(&po), arr(&dils), g),
                ),
                x.dtype,
            )
        };
    }
    let y = match n {
        1 => ct!(conv_transpose1d, 3),
        2 => ct!(conv_transpose2d, 4),
        _ => ct!(conv_transpose3d, 5),
    };
    if symmetric {
        return Ok(vec![Some(y)]);
    }
    // crop / extend the full output to [begin, begin + size) per spatial dim, then add the bias
    let mut t = match y.k {
        K::F(t) => t,
        _ => unreachable!(),
    };
    let mut pads = vec![(0usize, 0usize); R];
    let mut sl = vec![Slice::new(0, None, 1); R];
    for i in 0..n {
        let d = bax(r, 2 + i);
        let left = (-begin[i]).max(0);
        let right = (begin[i] + size[i] - full[i]).max(0);
        pads[d] = (left as usize, right as usize);
        let s = begin[i] + left;
        sl[d] = Slice::new(s as isize, Some((s + size[i]) as isize), 1);
    }
    if pads.iter().any(|&p| p != (0, 0)) {
        t = t.pad(pads, PadMode::Constant(0.0));
    }
    t = t.slice(sl.as_slice());
    let mut shape = vec![x.shape[0], m];
    shape.extend(size.iter().map(|&s| s as usize));
    if let Some(b) = bias {
        let mut bs = vec![1usize; r];
        bs[1] = m;
        t = t.add(reshaped(b, &bs));
    }
    Ok(vec![Some(Val::float(t, shape, x.dtype))])
}

// The ops of this file, found from their names (see `super::find`).
table! {
    // convolution, pooling, normalization
    "Conv" => conv,
    "ConvTranspose" => conv_transpose,
}
