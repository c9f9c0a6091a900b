//! Convolutions, pooling, normalizations and Pad.
use super::ops::{Cx, Outs, Res, ints_attr, norm_axis, opt, req};
use super::tensor::{K, R, Val, bax, pad, run_err, run_unsup};
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::module::{
    avg_pool1d, avg_pool2d, conv_transpose1d, conv_transpose2d, conv_transpose3d, conv1d, conv2d,
    conv3d, max_pool1d, max_pool2d,
};
use burn::tensor::ops::{ConvTransposeOptions, PadMode, PaddedConvOptions};
use burn::tensor::{Slice, Tensor};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

fn arr<const N: usize>(v: &[usize]) -> [usize; N] {
    let mut a = [0usize; N];
    a.copy_from_slice(v);
    a
}

fn lift<B: BurnBackend, const N: usize>(t: Tensor<B, N>, dtype: DType) -> Val<B> {
    let s = t.dims().to_vec();
    Val::float(t.reshape(pad(&s)), s, dtype)
}

fn float_in<B: BurnBackend>(v: &Val<B>, op: &str) -> Res<Tensor<B, R>> {
    match &v.k {
        K::F(t) => Ok(t.clone()),
        _ => Err(run_unsup(format!("{op} on {}", v.dtype))),
    }
}

fn list(node: &Node, name: &str, n: usize, default: usize) -> Res<Vec<usize>> {
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
fn window_pads(
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

pub(crate) fn conv<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = "Conv";
    let x = req(ins, 0, op)?;
    let w = req(ins, 1, op)?;
    let xt = float_in(x, op)?;
    let wt = float_in(w, op)?;
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
            Some(b.f().reshape([m]))
        }
        None => None,
    };
    let (xs, ws) = (&x.shape, &w.shape);
    let y = match n {
        1 => lift(
            conv1d(
                xt.reshape(arr::<3>(xs)),
                wt.reshape(arr::<3>(ws)),
                bias,
                PaddedConvOptions::asymmetric(arr(&strides), arr(&pb), arr(&pe), arr(&dils), g),
            ),
            x.dtype,
        ),
        2 => lift(
            conv2d(
                xt.reshape(arr::<4>(xs)),
                wt.reshape(arr::<4>(ws)),
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
                    xp.reshape(arr::<5>(&padded)),
                    wt.reshape(arr::<5>(ws)),
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
                xt.reshape(arr::<5>(xs)),
                wt.reshape(arr::<5>(ws)),
                bias,
                PaddedConvOptions::asymmetric(arr(&strides), arr(&pb), arr(&pe), arr(&dils), g),
            ),
            x.dtype,
        ),
    };
    Ok(vec![Some(y)])
}

pub(crate) fn conv_transpose<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = "ConvTranspose";
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let w = req(ins, 1, op)?;
    let xt = float_in(x, op)?;
    let wt = float_in(w, op)?;
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
    let auto = a.string("auto_pad", "NOTSET");
    let out_shape = ints_attr(a, "output_shape");
    // begin pad and output size per spatial dim
    let (begin, size): (Vec<i64>, Vec<i64>) = if out_shape.is_some() || auto.starts_with("SAME") {
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
            let total = full[i] + opad[i] as i64 - target[i];
            let half = total.div_euclid(2);
            b.push(if auto == "SAME_UPPER" {
                half
            } else {
                total - half
            });
        }
        (b, target)
    } else {
        let p = list(node, "pads", 2 * n, 0)?;
        let b: Vec<i64> = p[..n].iter().map(|&v| v as i64).collect();
        let s: Vec<i64> = (0..n)
            .map(|i| full[i] + opad[i] as i64 - p[i] as i64 - p[n + i] as i64)
            .collect();
        (b, s)
    };
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
            Some(b.f().reshape([m]))
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
                    xt.reshape(arr::<$d>(xs)),
                    wt.reshape(arr::<$d>(ws)),
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
        t = t.add(b.reshape(pad(&bs)));
    }
    Ok(vec![Some(Val::float(t, shape, x.dtype))])
}

pub(crate) fn pool<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let r = x.rank();
    let n = r.saturating_sub(2);
    if !(1..=2).contains(&n) {
        return Err(run_unsup(format!("{op} with {n} spatial dims")));
    }
    let kernel = list(node, "kernel_shape", n, 0)?;
    if ints_attr(a, "kernel_shape").is_none() || kernel.contains(&0) {
        return Err(run_err(format!("{op}: kernel_shape missing or zero")));
    }
    let strides = list(node, "strides", n, 1)?;
    let dils = list(node, "dilations", n, 1)?;
    if strides.contains(&0) || dils.contains(&0) {
        return Err(run_err(format!("{op}: zero stride or dilation")));
    }
    let ceil = a.int("ceil_mode", 0) != 0;
    let (pb, pe) = window_pads(node, &x.shape[2..], &kernel, &strides, &dils)?;
    for i in 0..n {
        if pb[i] >= kernel[i] || pe[i] >= kernel[i] {
            return Err(run_unsup(format!("{op}: pad not smaller than the kernel")));
        }
        let eff = (kernel[i] - 1) * dils[i] + 1;
        if x.shape[2 + i] + pb[i] + pe[i] < eff {
            return Err(run_err(format!(
                "{op}: kernel larger than the padded input"
            )));
        }
    }
    let is_int = !matches!(x.k, K::F(_));
    let xt = x.f();
    let symmetric = pb == pe;
    let max = op == "MaxPool";
    let include = a.int("count_include_pad", 0) != 0;
    let pad_with = |t: Tensor<B, R>, v: f32| {
        let mut p = vec![(0usize, 0usize); R];
        for i in 0..n {
            p[bax(r, 2 + i)] = (pb[i], pe[i]);
        }
        t.pad(p, PadMode::Constant(v))
    };
    let run = |t: Tensor<B, R>, shape: &[usize], padding: &[usize], include: bool| -> Val<B> {
        if n == 1 {
            let t3 = t.reshape(arr::<3>(shape));
            let y = if max {
                max_pool1d(t3, kernel[0], strides[0], padding[0], dils[0], ceil)
            } else {
                avg_pool1d(t3, kernel[0], strides[0], padding[0], include, ceil)
            };
            lift(y, x.dtype)
        } else {
            let t4 = t.reshape(arr::<4>(shape));
            let y = if max {
                max_pool2d(
                    t4,
                    arr(&kernel),
                    arr(&strides),
                    arr(padding),
                    arr(&dils),
                    ceil,
                )
            } else {
                avg_pool2d(t4, arr(&kernel), arr(&strides), arr(padding), include, ceil)
            };
            lift(y, x.dtype)
        }
    };
    let mut padded_shape = x.shape.clone();
    for i in 0..n {
        padded_shape[2 + i] += pb[i] + pe[i];
    }
    let zero = vec![0usize; n];
    let y = if symmetric {
        run(xt, &x.shape, &pb, include)
    } else if max {
        run(pad_with(xt, f32::NEG_INFINITY), &padded_shape, &zero, true)
    } else if include {
        run(pad_with(xt, 0.0), &padded_shape, &zero, true)
    } else {
        let num = run(pad_with(xt.clone(), 0.0), &padded_shape, &zero, true);
        let ones = xt.ones_like();
        let den = run(pad_with(ones, 0.0), &padded_shape, &zero, true);
        Val::float(num.f().div(den.f()), num.shape.clone(), x.dtype)
    };
    let _ = cx;
    let y = if is_int {
        Val::new(K::I(y.f().int()), y.shape.clone(), x.dtype)
    } else {
        y
    };
    Ok(vec![Some(y)])
}

pub(crate) fn norm<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let t = float_in(x, op)?;
    let r = x.rank();
    // a per-channel parameter [C] as a tensor broadcasting over [N, C, ...]
    let chan = |v: &Val<B>| -> Res<Tensor<B, R>> {
        if r < 2 || v.numel() != x.shape[1] {
            return Err(run_err(format!(
                "{op}: parameter does not match the channels"
            )));
        }
        let mut s = vec![1usize; r];
        s[1] = x.shape[1];
        Ok(v.f().reshape(pad(&s)))
    };
    match op {
        "BatchNormalization" => {
            let eps = a.float("epsilon", 1e-5) as f64;
            let scale = chan(req(ins, 1, op)?)?;
            let bias = chan(req(ins, 2, op)?)?;
            let mean = chan(req(ins, 3, op)?)?;
            let var = chan(req(ins, 4, op)?)?;
            let y = t
                .sub(mean)
                .div(var.add_scalar(eps).sqrt())
                .mul(scale)
                .add(bias);
            Ok(vec![Some(Val::float(y, x.shape.clone(), x.dtype))])
        }
        "InstanceNormalization" => {
            let eps = a.float("epsilon", 1e-5) as f64;
            let scale = chan(req(ins, 1, op)?)?;
            let bias = chan(req(ins, 2, op)?)?;
            if r < 3 {
                return Err(run_err("InstanceNormalization: rank below 3"));
            }
            let axes: Vec<usize> = (2..r).map(|i| bax(r, i)).collect();
            let y = standardize(t, &axes, eps).mul(scale).add(bias);
            Ok(vec![Some(Val::float(y, x.shape.clone(), x.dtype))])
        }
        "MeanVarianceNormalization" => {
            let axes = ints_attr(a, "axes").unwrap_or_else(|| vec![0, 2, 3]);
            let mut dims = Vec::new();
            for ax in axes {
                dims.push(bax(r, norm_axis(ax, r)?));
            }
            // ONNX's function body adds its epsilon to the standard deviation, not to the
            // variance: (X - mean) / (sqrt(var) + 1e-9).
            let mut mean = t.clone();
            for &d in &dims {
                mean = mean.mean_dim(d);
            }
            let c = t.sub(mean);
            let mut var = c.clone().mul(c.clone());
            for &d in &dims {
                var = var.mean_dim(d);
            }
            let y = c.div(var.sqrt().add_scalar(1e-9));
            Ok(vec![Some(Val::float(y, x.shape.clone(), x.dtype))])
        }
        "LpNormalization" => {
            let axis = norm_axis(a.int("axis", -1), r)?;
            let d = bax(r, axis);
            let p = a.int("p", 2);
            let nrm = if p == 1 {
                t.clone().abs().sum_dim(d)
            } else {
                t.clone().mul(t.clone()).sum_dim(d).sqrt()
            };
            // A zero norm (all-zero slice) divides by one instead: the slice stays zero, as
            // the reference and ONNX Runtime give.
            let nrm = nrm.clone().add(nrm.equal_elem(0.0).float());
            let y = t.div(nrm);
            Ok(vec![Some(Val::float(y, x.shape.clone(), x.dtype))])
        }
        _ => {
            // LayerNormalization
            let axis = norm_axis(a.int("axis", -1), r)?;
            let eps = a.float("epsilon", 1e-5) as f64;
            let dims: Vec<usize> = (axis..r).map(|i| bax(r, i)).collect();
            let mut mean = t.clone();
            for &d in &dims {
                mean = mean.mean_dim(d);
            }
            let c = t.sub(mean.clone());
            let mut var = c.clone().mul(c.clone());
            for &d in &dims {
                var = var.mean_dim(d);
            }
            let inv = var.add_scalar(eps).sqrt().recip();
            let mut y = c.mul(inv.clone());
            let tail = &x.shape[axis..];
            let param = |v: &Val<B>| -> Res<Tensor<B, R>> {
                let s = super::ops::bshape(tail, &v.shape)?;
                if s != tail {
                    return Err(run_err("LayerNormalization: parameter does not broadcast"));
                }
                Ok(v.f())
            };
            y = y.mul(param(req(ins, 1, op)?)?);
            if let Some(b) = opt(ins, 2) {
                y = y.add(param(b)?);
            }
            let mut stat_shape = x.shape[..axis].to_vec();
            stat_shape.extend(std::iter::repeat_n(1, r - axis));
            let mut out = vec![Some(Val::float(y, x.shape.clone(), x.dtype))];
            if node.outputs.len() > 1 {
                out.push(Some(Val::float(mean, stat_shape.clone(), x.dtype)));
            }
            if node.outputs.len() > 2 {
                out.push(Some(Val::float(inv, stat_shape, x.dtype)));
            }
            Ok(out)
        }
    }
}

fn standardize<B: BurnBackend>(t: Tensor<B, R>, dims: &[usize], eps: f64) -> Tensor<B, R> {
    let mut mean = t.clone();
    for &d in dims {
        mean = mean.mean_dim(d);
    }
    let c = t.sub(mean);
    let mut var = c.clone().mul(c.clone());
    for &d in dims {
        var = var.mean_dim(d);
    }
    c.div(var.add_scalar(eps).sqrt())
}

pub(crate) fn pad_op<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = "Pad";
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let r = x.rank();
    let mode = a.string("mode", "constant");
    let (pads, value, axes): (Vec<i64>, f64, Vec<usize>) = if cx.opset < 11 {
        let p = ints_attr(a, if cx.opset < 2 { "paddings" } else { "pads" }).unwrap_or_default();
        (p, a.float("value", 0.0) as f64, (0..r).collect())
    } else {
        let p = req(ins, 1, op)?.host_i64();
        let v = match opt(ins, 2) {
            Some(v) if v.numel() > 0 => v.host_f64()[0],
            _ => 0.0,
        };
        let axes = match opt(ins, 3) {
            Some(ax) => {
                let mut out = Vec::new();
                for v in ax.host_i64() {
                    out.push(norm_axis(v, r)?);
                }
                out
            }
            None => (0..r).collect(),
        };
        (p, v, axes)
    };
    let na = axes.len();
    if pads.len() != 2 * na {
        return Err(run_err(format!("Pad: {} pads for {na} axes", pads.len())));
    }
    let mut grow = vec![(0usize, 0usize); R];
    let mut sl = vec![Slice::new(0, None, 1); R];
    let mut shape = x.shape.clone();
    let mut crop = false;
    for (i, &ax) in axes.iter().enumerate() {
        let (b, e) = (pads[i], pads[na + i]);
        let d = bax(r, ax);
        grow[d] = (b.max(0) as usize, e.max(0) as usize);
        let dim = x.shape[ax] as i64;
        let size = dim + b + e;
        if size < 0 {
            return Err(run_err("Pad: negative output size"));
        }
        if b < 0 || e < 0 {
            crop = true;
            let s = (-b).max(0);
            sl[d] = Slice::new(s as isize, Some((s + size) as isize), 1);
        }
        if mode != "constant" && (b > 0 || e > 0) {
            if dim == 0 {
                return Err(run_err("Pad: reflect/edge of an empty axis"));
            }
            if mode == "reflect" && (b >= dim || e >= dim) {
                return Err(run_unsup("Pad: reflect pad not smaller than the axis"));
            }
        }
        shape[ax] = size as usize;
    }
    let pm = match mode.as_str() {
        "constant" => PadMode::Constant(value as f32),
        "reflect" => PadMode::Reflect,
        "edge" => PadMode::Edge,
        m => return Err(run_unsup(format!("Pad mode {m}"))),
    };
    if shape.contains(&0) {
        return Ok(vec![Some(super::ops::full(shape, 0.0, x.dtype, cx.dev)?)]);
    }
    let grows = grow.iter().any(|&p| p != (0, 0));
    let k = match &x.k {
        K::F(t) => {
            let mut t = t.clone();
            if grows {
                t = t.pad(grow.clone(), pm);
            }
            K::F(t)
        }
        K::I(t) => {
            let mut t = t.clone();
            if grows {
                t = t.pad(grow.clone(), pm);
            }
            K::I(t)
        }
        K::B(_) => return Err(run_unsup("Pad on bool")),
    };
    let k = if crop {
        super::tensor::each!(k, |t| t.slice(sl.as_slice()))
    } else {
        k
    };
    Ok(vec![Some(Val::new(k, shape, x.dtype))])
}

/// How Resize maps an output coordinate back to the input.
fn resize_coord(mode: &str, x: f64, scale: f64, in_len: usize, out_len: usize) -> f64 {
    // ONNX takes the resized length as in * scale, unrounded
    let (i, o) = (in_len as f64, in_len as f64 * scale);
    match mode {
        "tf_half_pixel_for_nn" => (x + 0.5) / scale,
        "asymmetric" => x / scale,
        "align_corners" => {
            if out_len == 1 || o == 1.0 {
                0.0
            } else {
                x * (i - 1.0) / (o - 1.0)
            }
        }
        "pytorch_half_pixel" => {
            if out_len > 1 {
                (x + 0.5) / scale - 0.5
            } else {
                0.0
            }
        }
        "half_pixel_symmetric" => {
            let adj = o / (scale * i);
            let off = i / 2.0 * (1.0 - adj);
            off + (x + 0.5) / scale - 0.5
        }
        _ => (x + 0.5) / scale - 0.5,
    }
}

/// Taps (input indices and weights) of one resized axis.
fn resize_taps(
    a: &[mutagraph_ir::attr::Attribute],
    mode: &str,
    ctm: &str,
    scale: f64,
    in_len: usize,
    out_len: usize,
) -> Vec<(Vec<i64>, Vec<f32>)> {
    let last = in_len as i64 - 1;
    let clampi = |v: i64| v.clamp(0, last);
    match mode {
        "nearest" => {
            let nm = a.string("nearest_mode", "round_prefer_floor");
            let idx = (0..out_len)
                .map(|o| {
                    let x = resize_coord(ctm, o as f64, scale, in_len, out_len);
                    let r = match nm.as_str() {
                        "floor" => x.floor(),
                        "ceil" => x.ceil(),
                        "round_prefer_ceil" => {
                            if x.fract() == 0.5 {
                                x.ceil()
                            } else {
                                x.round()
                            }
                        }
                        _ => {
                            if (x - x.floor() - 0.5).abs() == 0.0 {
                                x.floor()
                            } else {
                                x.round()
                            }
                        }
                    };
                    clampi(r as i64)
                })
                .collect();
            vec![(idx, vec![1.0; out_len])]
        }
        "linear" => {
            let mut i0 = Vec::new();
            let mut i1 = Vec::new();
            let mut w0 = Vec::new();
            let mut w1 = Vec::new();
            for o in 0..out_len {
                let x = resize_coord(ctm, o as f64, scale, in_len, out_len).clamp(0.0, last as f64);
                let f = x.floor();
                let t = x - f;
                i0.push(clampi(f as i64));
                i1.push(clampi(f as i64 + 1));
                w0.push((1.0 - t) as f32);
                w1.push(t as f32);
            }
            vec![(i0, w0), (i1, w1)]
        }
        _ => {
            let ca = a.float("cubic_coeff_a", -0.75) as f64;
            let excl = a.int("exclude_outside", 0) != 0;
            let kern = |d: f64| {
                let d = d.abs();
                if d <= 1.0 {
                    ((ca + 2.0) * d - (ca + 3.0)) * d * d + 1.0
                } else if d < 2.0 {
                    ((ca * d - 5.0 * ca) * d + 8.0 * ca) * d - 4.0 * ca
                } else {
                    0.0
                }
            };
            let mut taps = vec![(Vec::new(), Vec::new()); 4];
            for o in 0..out_len {
                let x = resize_coord(ctm, o as f64, scale, in_len, out_len);
                let f = x.floor();
                let mut ws = [0.0f64; 4];
                for (j, w) in ws.iter_mut().enumerate() {
                    let p = f as i64 - 1 + j as i64;
                    *w = kern(x - p as f64);
                    if excl && (p < 0 || p > last) {
                        *w = 0.0;
                    }
                }
                let sum: f64 = ws.iter().sum();
                for (j, tap) in taps.iter_mut().enumerate() {
                    let p = f as i64 - 1 + j as i64;
                    tap.0.push(clampi(p));
                    tap.1.push(if excl { ws[j] / sum } else { ws[j] } as f32);
                }
            }
            taps
        }
    }
}

pub(crate) fn resize<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = "Resize";
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let t = float_in(x, op)?;
    let r = x.rank();
    let axes: Vec<usize> = match ints_attr(a, "axes") {
        Some(v) => v.iter().map(|&ax| norm_axis(ax, r)).collect::<Res<_>>()?,
        None => (0..r).collect(),
    };
    let (scales_in, sizes_in) = if cx.opset < 11 {
        (opt(ins, 1), None)
    } else {
        (
            opt(ins, 2).filter(|v| v.numel() > 0),
            opt(ins, 3).filter(|v| v.numel() > 0),
        )
    };
    let mut scales = vec![1.0f64; r];
    let mut out = x.shape.clone();
    match (scales_in, sizes_in) {
        (Some(s), None) => {
            let s = s.host_f64();
            if s.len() != axes.len() || s.iter().any(|&v| v <= 0.0) {
                return Err(run_err("Resize: bad scales"));
            }
            for (k, &ax) in axes.iter().enumerate() {
                scales[ax] = s[k];
                out[ax] = (x.shape[ax] as f64 * s[k]).floor() as usize;
            }
        }
        (None, Some(s)) => {
            let s = s.host_i64();
            // a size of 0 is an empty output (ONNX Runtime and ONNX's reference give one)
            if s.len() != axes.len() || s.iter().any(|&v| v < 0) {
                return Err(run_err("Resize: bad sizes"));
            }
            for (k, &ax) in axes.iter().enumerate() {
                out[ax] = s[k] as usize;
                scales[ax] = s[k] as f64 / x.shape[ax] as f64;
            }
        }
        _ => {
            return Err(run_err(
                "Resize: exactly one of scales and sizes must be given",
            ));
        }
    }
    if out.contains(&0) || x.numel() == 0 {
        // Nothing to sample: an empty input has an empty output (its sizes or scales keep a
        // zero dimension at zero), an empty output needs no input.
        if x.numel() == 0 && !out.contains(&0) {
            return Err(run_err(
                "Resize: an empty input cannot give a non-empty output",
            ));
        }
        return Ok(vec![Some(super::ops::full(out, 0.0, x.dtype, cx.dev)?)]);
    }
    let mode = a.string("mode", "nearest");
    let ctm = if cx.opset < 11 {
        "asymmetric".to_string()
    } else {
        a.string("coordinate_transformation_mode", "half_pixel")
    };
    let nearest_mode = a.string("nearest_mode", "round_prefer_floor");
    // burn's own interpolate where its sampling is ONNX's: 4-D, N and C kept, the scale exactly
    // out/in, nearest = asymmetric + floor, bilinear = align_corners or half_pixel
    let exact = (2..4).all(|i| r == 4 && (x.shape[i] as f64 * scales[i]) == out[i] as f64);
    let burn_mode = if r == 4 && out[0] == x.shape[0] && out[1] == x.shape[1] && exact {
        use burn::tensor::ops::{InterpolateMode, InterpolateOptions};
        match (mode.as_str(), ctm.as_str()) {
            ("nearest", "asymmetric") if nearest_mode == "floor" || cx.opset < 11 => {
                Some(InterpolateOptions::new(InterpolateMode::Nearest))
            }
            ("linear", "align_corners") => {
                Some(InterpolateOptions::new(InterpolateMode::Bilinear).with_align_corners(true))
            }
            ("linear", "half_pixel") => {
                Some(InterpolateOptions::new(InterpolateMode::Bilinear).with_align_corners(false))
            }
            ("linear", "pytorch_half_pixel") if out[2] > 1 && out[3] > 1 => {
                Some(InterpolateOptions::new(InterpolateMode::Bilinear).with_align_corners(false))
            }
            _ => None,
        }
    } else {
        None
    };
    if let Some(o) = burn_mode {
        let y =
            burn::tensor::module::interpolate(t.reshape(arr::<4>(&x.shape)), [out[2], out[3]], o);
        return Ok(vec![Some(lift(y, x.dtype))]);
    }
    // separable resampling: per resized axis, a weighted sum of gathered slices
    let mut y = t;
    let mut shape = x.shape.clone();
    for ax in 0..r {
        if out[ax] == x.shape[ax] && scales[ax] == 1.0 {
            continue;
        }
        let taps = resize_taps(a, &mode, &ctm, scales[ax], x.shape[ax], out[ax]);
        let d = bax(r, ax);
        let mut wshape = vec![1usize; r];
        wshape[ax] = out[ax];
        let mut acc: Option<Tensor<B, R>> = None;
        for (idx, w) in taps {
            let it = Tensor::<B, 1, burn::tensor::Int>::from_data(
                burn::tensor::TensorData::new(idx, [out[ax]]),
                cx.dev,
            );
            let wt =
                Tensor::<B, R>::from_data(burn::tensor::TensorData::new(w, pad(&wshape)), cx.dev);
            let part = y.clone().select(d, it).mul(wt);
            acc = Some(match acc {
                Some(s) => s.add(part),
                None => part,
            });
        }
        y = acc.ok_or_else(|| run_err("Resize: no taps"))?;
        shape[ax] = out[ax];
    }
    Ok(vec![Some(Val::float(y, shape, x.dtype))])
}

/// NegativeLogLikelihoodLoss over log-probabilities `x` ([N, C, d...]), shared with
/// SoftmaxCrossEntropyLoss.
fn nll<B: BurnBackend>(
    a: &[mutagraph_ir::attr::Attribute],
    x: Tensor<B, R>,
    xshape: &[usize],
    dtype: DType,
    target: &Val<B>,
    weight: Option<&Val<B>>,
    dev: &B::Device,
) -> Res<Val<B>> {
    let r = xshape.len();
    if r < 2 || target.rank() != r - 1 {
        return Err(run_err("loss: input and target ranks do not fit"));
    }
    let c = xshape[1];
    let mut tshape = vec![xshape[0]];
    tshape.extend_from_slice(&xshape[2..]);
    if target.shape != tshape {
        return Err(run_err("loss: target shape does not fit the input"));
    }
    let ignore = a.int_opt("ignore_index");
    let tv = target.host_i64();
    for &t in &tv {
        if Some(t) != ignore && (t < 0 || t >= c as i64) {
            return Err(run_err(format!("loss: target {t} out of range")));
        }
    }
    let keep: Vec<bool> = tv.iter().map(|&t| Some(t) != ignore).collect();
    let clean: Vec<i64> = tv
        .iter()
        .zip(&keep)
        .map(|(&t, &k)| if k { t } else { 0 })
        .collect();
    let n = clean.len();
    let mut gshape = tshape.clone();
    gshape.insert(1, 1);
    let ti = Tensor::<B, R, burn::tensor::Int>::from_data(
        burn::tensor::TensorData::new(clean.clone(), pad(&gshape)),
        dev,
    );
    let picked = x.gather(bax(r, 1), ti).neg();
    let mask = Tensor::<B, R>::from_data(
        burn::tensor::TensorData::new(
            keep.iter()
                .map(|&k| if k { 1.0f32 } else { 0.0 })
                .collect::<Vec<_>>(),
            pad(&gshape),
        ),
        dev,
    );
    let w = match weight {
        Some(w) => {
            if w.numel() != c {
                return Err(run_err("loss: weight size differs from classes"));
            }
            let w1: Tensor<B, 1> = w.f().reshape([c]);
            let idx = Tensor::<B, 1, burn::tensor::Int>::from_data(
                burn::tensor::TensorData::new(clean, [n]),
                dev,
            );
            w1.select(0, idx).reshape(pad(&gshape)).mul(mask)
        }
        None => mask,
    };
    let loss = picked.mul(w.clone());
    let red = a.string("reduction", "mean");
    Ok(match red.as_str() {
        "none" => Val::float(loss.reshape(pad(&tshape)), tshape, dtype),
        "sum" => Val::float(loss.sum().reshape(pad(&[])), vec![], dtype),
        _ => Val::float(loss.sum().div(w.sum()).reshape(pad(&[])), vec![], dtype),
    })
}

pub(crate) fn loss<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let t = float_in(x, op)?;
    let target = req(ins, 1, op)?;
    let weight = opt(ins, 2);
    if op == "NegativeLogLikelihoodLoss" {
        let l = nll(a, t, &x.shape, x.dtype, target, weight, cx.dev)?;
        return Ok(vec![Some(l)]);
    }
    if x.rank() < 2 {
        return Err(run_err("SoftmaxCrossEntropyLoss: rank below 2"));
    }
    let lp = burn::tensor::activation::log_softmax(t, bax(x.rank(), 1));
    let l = nll(a, lp.clone(), &x.shape, x.dtype, target, weight, cx.dev)?;
    let mut out = vec![Some(l)];
    if node.outputs.len() > 1 {
        out.push(Some(Val::float(lp, x.shape.clone(), x.dtype)));
    }
    Ok(out)
}

/// Normalizes ONNX indices (negative count from the end) and checks their range.
fn fix_indices(v: &mut [i64], n: i64, op: &str) -> Res<()> {
    for i in v.iter_mut() {
        if *i < -n || *i >= n {
            return Err(run_err(format!("{op}: index {i} out of range for {n}")));
        }
        if *i < 0 {
            *i += n;
        }
    }
    Ok(())
}

/// GatherND / ScatterND: the data seen as [P, Q] (P = the indexed leading dims, Q = the rest)
/// and the index tuples turned into row numbers.
fn nd_rows<B: BurnBackend>(
    x: &Val<B>,
    idx: &Val<B>,
    op: &str,
) -> Res<(Vec<i64>, usize, usize, usize)> {
    let k = *idx
        .shape
        .last()
        .ok_or_else(|| run_err(format!("{op}: scalar indices")))?;
    if k == 0 || k > x.rank() {
        return Err(run_err(format!(
            "{op}: index tuples of {k} for rank {}",
            x.rank()
        )));
    }
    let iv = idx.host_i64();
    let n = iv.len() / k;
    let p: usize = x.shape[..k].iter().product();
    let q: usize = x.shape[k..].iter().product();
    let mut rows = Vec::with_capacity(n);
    for t in iv.chunks(k) {
        let mut row = 0i64;
        for (j, &i) in t.iter().enumerate() {
            let d = x.shape[j] as i64;
            let mut i = [i];
            fix_indices(&mut i, d, op)?;
            row = row * d + i[0];
        }
        rows.push(row);
    }
    Ok((rows, k, p, q))
}

pub(crate) fn index_ops<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    use burn::tensor::{IndexingUpdateOp, Int, TensorData};
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    let x = req(ins, 0, op)?;
    match op {
        "GatherND" => {
            let idx = req(ins, 1, op)?;
            let (rows, k, p, q) = nd_rows(x, idx, op)?;
            let mut shape = idx.shape[..idx.rank() - 1].to_vec();
            shape.extend_from_slice(&x.shape[k..]);
            if shape.len() > R {
                return Err(run_unsup(format!("rank {} above {R}", shape.len())));
            }
            let n = rows.len();
            if n == 0 || p * q == 0 {
                return Ok(vec![Some(super::ops::full(shape, 0.0, x.dtype, dev)?)]);
            }
            let it = Tensor::<B, 1, Int>::from_data(TensorData::new(rows, [n]), dev);
            let flat = x.clone().reshape(vec![p, q]);
            let k2 = super::tensor::each!(flat.k, |t| t.select(R - 2, it.clone()));
            Ok(vec![Some(Val::new(k2, vec![n, q], x.dtype).reshape(shape))])
        }
        "ScatterND" => {
            let idx = req(ins, 1, op)?;
            let upd = req(ins, 2, op)?;
            let (rows, _k, p, q) = nd_rows(x, idx, op)?;
            let n = rows.len();
            if upd.numel() != n * q {
                return Err(run_err("ScatterND: updates do not fit the indices"));
            }
            let red = match a.string("reduction", "none").as_str() {
                "add" => IndexingUpdateOp::Add,
                "mul" => IndexingUpdateOp::Mul,
                "min" => IndexingUpdateOp::Min,
                "max" => IndexingUpdateOp::Max,
                _ => IndexingUpdateOp::Assign,
            };
            if n == 0 || p * q == 0 {
                return Ok(vec![Some(x.clone())]);
            }
            let it = Tensor::<B, 2, Int>::from_data(TensorData::new(rows, [n, 1]), dev);
            let k2 = match (&x.k, &upd.k) {
                (K::F(d), K::F(u)) => K::F(
                    d.clone()
                        .reshape([p, q])
                        .scatter_nd::<2, 2>(it, u.clone().reshape([n, q]), red)
                        .reshape(pad(&x.shape)),
                ),
                (K::I(d), K::I(u)) => K::I(
                    d.clone()
                        .reshape([p, q])
                        .scatter_nd::<2, 2>(it, u.clone().reshape([n, q]), red)
                        .reshape(pad(&x.shape)),
                ),
                _ => return Err(run_unsup("ScatterND on these types")),
            };
            Ok(vec![Some(Val::new(k2, x.shape.clone(), x.dtype))])
        }
        "ScatterElements" => {
            let idx = req(ins, 1, op)?;
            let upd = req(ins, 2, op)?;
            let axis = norm_axis(a.int("axis", 0), x.rank())?;
            if idx.shape != upd.shape || idx.rank() != x.rank() {
                return Err(run_err(
                    "ScatterElements: indices and updates differ in shape",
                ));
            }
            let mut iv = idx.host_i64();
            fix_indices(&mut iv, x.shape[axis] as i64, op)?;
            if iv.is_empty() {
                return Ok(vec![Some(x.clone())]);
            }
            let d = bax(x.rank(), axis);
            let it = Tensor::<B, R, Int>::from_data(TensorData::new(iv, pad(&idx.shape)), dev);
            let add = a.string("reduction", "none") == "add";
            let full = float_in(x, op)?;
            let u = float_in(upd, op)?;
            // burn's scatter wants the data and the indices of one shape outside the axis; ONNX
            // lets the indices cover a leading block there: scatter into that block, then put
            // it back.
            let mut block = vec![Slice::new(0, None, 1); R];
            let mut partial = false;
            for (i, (&xd, &id)) in x.shape.iter().zip(&idx.shape).enumerate() {
                if i == axis {
                    continue;
                }
                if id > xd {
                    return Err(run_err(format!(
                        "ScatterElements: indices dimension {i} ({id}) exceeds the data's ({xd})"
                    )));
                }
                partial |= id < xd;
                block[bax(x.rank(), i)] = Slice::new(0, Some(id as isize), 1);
            }
            let data = if partial {
                full.clone().slice(block.as_slice())
            } else {
                full.clone()
            };
            let y = if add {
                data.scatter(d, it, u, IndexingUpdateOp::Add)
            } else {
                // assignment from additions: clear the targeted cells, then add the updates
                let hit = data
                    .zeros_like()
                    .scatter(d, it.clone(), u.ones_like(), IndexingUpdateOp::Add)
                    .greater_elem(0.0);
                let cleared = data.clone().mask_fill(hit, 0.0);
                cleared.scatter(d, it, u, IndexingUpdateOp::Add)
            };
            let y = if partial {
                full.slice_assign(block.as_slice(), y)
            } else {
                y
            };
            Ok(vec![Some(Val::float(y, x.shape.clone(), x.dtype))])
        }
        "OneHot" => {
            let depth = req(ins, 1, op)?.host_f64();
            let vals = req(ins, 2, op)?;
            if depth.len() != 1 || depth[0] < 1.0 || vals.numel() != 2 {
                return Err(run_err("OneHot: bad depth or values"));
            }
            let depth = depth[0] as usize;
            let r = x.rank();
            if r + 1 > R {
                return Err(run_unsup(format!("rank {} above {R}", r + 1)));
            }
            let axis = norm_axis(a.int("axis", -1), r + 1)?;
            if x.numel() == 0 {
                let mut shape = x.shape.clone();
                shape.insert(axis, depth);
                return Ok(vec![Some(super::ops::full(shape, 0.0, vals.dtype, dev)?)]);
            }
            // Indices outside [-depth, depth - 1] give a row of off values (ONNX): they are
            // one-hot encoded as 0 and their rows overwritten.
            let n = depth as i64;
            let mut iv = x.host_i64();
            let outside: Vec<bool> = iv.iter().map(|&i| i < -n || i >= n).collect();
            for (i, &o) in iv.iter_mut().zip(&outside) {
                if o {
                    *i = 0;
                } else if *i < 0 {
                    *i += n;
                }
            }
            let vv = vals.host_f64();
            let mut shape5 = [1usize; R - 1];
            shape5[R - 1 - r..].copy_from_slice(&x.shape);
            let t5 = Tensor::<B, { R - 1 }>::from_data(
                TensorData::new(iv.iter().map(|&i| i as f32).collect::<Vec<_>>(), shape5),
                dev,
            );
            let baxis = R - (r + 1) + axis;
            let mut y: Tensor<B, R> =
                t5.one_hot_fill(depth, vv[1] as f32, vv[0] as f32, baxis as i64);
            if outside.contains(&true) {
                let o5 = Tensor::<B, { R - 1 }>::from_data(
                    TensorData::new(
                        outside.iter().map(|&o| o as u8 as f32).collect::<Vec<_>>(),
                        shape5,
                    ),
                    dev,
                );
                let mask = o5
                    .unsqueeze_dim::<R>(baxis)
                    .expand(y.shape())
                    .equal_elem(1.0);
                y = y.mask_fill(mask, vv[0] as f32);
            }
            let mut shape = x.shape.clone();
            shape.insert(axis, depth);
            let v = Val::float(y, shape, vals.dtype);
            Ok(vec![Some(match vals.class() {
                super::tensor::Class::Float => v,
                _ => super::ops::cast(&v, vals.dtype)?,
            })])
        }
        _ => {
            // Compress
            let cond = req(ins, 1, op)?.host_i64();
            let (src, axis) = match a.int_opt("axis") {
                Some(ax) => (x.clone(), norm_axis(ax, x.rank())?),
                None => (x.clone().reshape(vec![x.numel()]), 0),
            };
            let n = src.shape[axis];
            if cond.len() > n {
                return Err(run_err("Compress: condition longer than the axis"));
            }
            let sel: Vec<i64> = (0..cond.len() as i64)
                .filter(|&i| cond[i as usize] != 0)
                .collect();
            let mut shape = src.shape.clone();
            shape[axis] = sel.len();
            if sel.is_empty() || src.numel() == 0 {
                return Ok(vec![Some(super::ops::full(shape, 0.0, x.dtype, dev)?)]);
            }
            let m = sel.len();
            let it = Tensor::<B, 1, Int>::from_data(TensorData::new(sel, [m]), dev);
            let d = bax(src.rank(), axis);
            let k2 = super::tensor::each!(src.k, |t| t.select(d, it.clone()));
            Ok(vec![Some(Val::new(k2, shape, x.dtype))])
        }
    }
}
