//! Conv, ConvInteger and ConvTranspose over N-D spatial data.
use super::geometry::{Geo, geometry, ints_or, positive};
use crate::reference::gemm::{ConvDims, Taps, conv_lowered, conv_transpose_lowered, exact_in_f64};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use mutagraph_ir::ops::auto_pad::{effective_kernel, is_same, split_same_pad};

type Out = R<Vec<V>>;

/// Conv of `x` (`[N, C, spatial..]`) with `w` (`[M, C / group, kernel..]`) plus the optional
/// bias: the output shape and values. `integer`: the values are integers (ConvInteger,
/// QLinearConv), to be summed exactly.
pub(super) fn conv_core(
    n: &Node,
    x: &[f64],
    xs: &[usize],
    w: &[f64],
    ws: &[usize],
    b: Option<&[f64]>,
    integer: bool,
) -> R<(Vec<usize>, Vec<f64>)> {
    if xs.len() < 3 || ws.len() != xs.len() {
        return Err(err(format!("Conv input {xs:?} and weight {ws:?}")));
    }
    let g = n.int("group", 1);
    if g < 1 {
        return Err(err("group must be positive"));
    }
    let g = g as usize;
    let (nb, c) = (xs[0], xs[1]);
    let (m, cg) = (ws[0], ws[1]);
    if c != cg * g || m % g != 0 {
        return Err(err(format!(
            "Conv channels: input {c}, weight {ws:?}, group {g}"
        )));
    }
    let kernel: Vec<usize> = match n.ints("kernel_shape") {
        Some(k) if k.iter().map(|&x| x as usize).eq(ws[2..].iter().copied()) => ws[2..].to_vec(),
        Some(k) if !k.is_empty() => {
            return Err(err(format!(
                "kernel_shape {k:?} differs from weight {ws:?}"
            )));
        }
        _ => ws[2..].to_vec(),
    };
    let geo = geometry(n, &xs[2..], &kernel, false)?;
    if let Some(b) = b
        && b.len() != m
    {
        return Err(err("Conv bias length"));
    }
    let osz = numel(&geo.out);
    check_size(&[nb, m, osz])?;
    let taps = Taps::new(
        &geo.out,
        &geo.input,
        &geo.kernel,
        &geo.strides,
        &geo.dil,
        &geo.pb,
    );
    // The lowering multiplies the zeros of the padding by the weights, where the direct sum
    // skips those taps: with an infinite or NaN weight that would put a NaN where the sum of the
    // taps inside the input is finite. Integers beyond what f64 sums exactly keep the direct
    // loop's order too.
    let direct = (!taps.full && w.iter().any(|v| !v.is_finite()))
        || (integer && !exact_in_f64(x, w, cg * numel(&kernel)));
    let mut out = if direct {
        conv_direct(x, xs, w, ws, g, &geo)
    } else {
        let dims = ConvDims {
            batch: nb,
            c_in: c,
            c_out: m,
            groups: g,
            input: &geo.input,
            output: &geo.out,
        };
        conv_lowered(&dims, &taps, x, w)?
    };
    // Bias (0.0 without one) added to every sum, as the direct loop always did.
    if osz > 0 {
        for (i, plane) in out.chunks_mut(osz).enumerate() {
            let bias = b.map(|b| b[i % m]).unwrap_or(0.0);
            plane.iter_mut().for_each(|v| *v += bias);
        }
    }
    let mut shape = vec![nb, m];
    shape.extend(&geo.out);
    Ok((shape, out))
}

/// Conv without bias by the direct sum over the taps inside the input (padding skipped).
fn conv_direct(x: &[f64], xs: &[usize], w: &[f64], ws: &[usize], g: usize, geo: &Geo) -> Vec<f64> {
    let taps = geo.taps();
    let (nb, c, m, cg) = (xs[0], xs[1], ws[0], ws[1]);
    let isz = numel(&xs[2..]);
    let osz = numel(&geo.out);
    let ksz = numel(&geo.kernel);
    let mg = m / g;
    let mut out = vec![0.0; nb * m * osz];
    for bi in 0..nb {
        for oc in 0..m {
            let grp = oc / mg;
            for (o, row) in taps.iter().enumerate() {
                let mut s = 0.0;
                for ci in 0..cg {
                    let ic = grp * cg + ci;
                    let xb = (bi * c + ic) * isz;
                    let wb = (oc * cg + ci) * ksz;
                    for (k, tap) in row.iter().enumerate() {
                        if let Ok(p) = tap {
                            s += x[xb + p] * w[wb + k];
                        }
                    }
                }
                out[(bi * m + oc) * osz + o] = s;
            }
        }
    }
    out
}

pub(super) fn op_conv(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let w = inp(ins, 1)?;
    let b = opt(ins, 2)?;
    let bv = b.map(|b| b.floats()).transpose()?;
    let (shape, v) = conv_core(
        n,
        x.fs()?,
        &x.shape,
        &w.floats()?,
        &w.shape,
        bv.as_deref(),
        false,
    )?;
    one(T::f(x.dt, shape, v))
}

pub(super) fn op_conv_integer(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let w = inp(ins, 1)?;
    let xz = opt(ins, 2)?.map(|t| t.scalar_i()).transpose()?.unwrap_or(0);
    let wz = match opt(ins, 3)? {
        Some(t) if t.len() == 1 => t.scalar_i()?,
        Some(_) => return Err(unsup("ConvInteger per-channel weight zero point")),
        None => 0,
    };
    let xv: Vec<f64> = x.ints()?.iter().map(|&v| (v - xz) as f64).collect();
    let wv: Vec<f64> = w.ints()?.iter().map(|&v| (v - wz) as f64).collect();
    // Zero points: padded positions hold the zero point, i.e. contribute 0 after subtraction.
    let (shape, v) = conv_core(n, &xv, &x.shape, &wv, &w.shape, None, true)?;
    one(T::i(
        DType::I32,
        shape,
        v.iter().map(|&f| f as i64).collect(),
    ))
}

pub(super) fn op_conv_transpose(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let w = inp(ins, 1)?;
    let b = opt(ins, 2)?.map(|b| b.floats()).transpose()?;
    let (xs, ws) = (&x.shape, &w.shape);
    if xs.len() < 3 || ws.len() != xs.len() {
        return Err(err(format!("ConvTranspose input {xs:?} and weight {ws:?}")));
    }
    let r = xs.len() - 2;
    let g = n.int("group", 1).max(1) as usize;
    let (nb, c) = (xs[0], xs[1]);
    if ws[0] != c || c % g != 0 {
        return Err(err("ConvTranspose channels"));
    }
    let mg = ws[1];
    let m = mg * g;
    let kernel = ws[2..].to_vec();
    let stv = positive(ints_or(n, "strides", r, 1)?, "strides")?;
    let dil = positive(ints_or(n, "dilations", r, 1)?, "dilations")?;
    let opad = ints_or(n, "output_padding", r, 0)?;
    let pads = match n.ints("pads") {
        Some(p) if p.len() == 2 * r => p.to_vec(),
        _ => vec![0; 2 * r],
    };
    let auto = n.string("auto_pad", "NOTSET");
    let mut pb = pads[..r].to_vec();
    let mut out_sp = vec![0usize; r];
    let oshape = n.ints("output_shape").map(|v| v.to_vec());
    for d in 0..r {
        let i = xs[2 + d] as i64;
        let s = stv[d] as i64;
        let ek = effective_kernel(kernel[d] as i64, dil[d] as i64);
        let full = s * (i - 1) + opad[d] + ek;
        let want = match &oshape {
            Some(o) => Some(
                *o.get(o.len().saturating_sub(r) + d)
                    .ok_or_else(|| err("output_shape"))?,
            ),
            None if is_same(&auto) => Some(i * s),
            None => None,
        };
        match want {
            Some(o) => {
                // A negative total (cropping) crops its odd one at the end under SAME_UPPER.
                pb[d] = split_same_pad(&auto, full - o).0;
                out_sp[d] = o.max(0) as usize;
            }
            None => {
                let o = full - pads[d] - pads[d + r];
                if o < 0 {
                    return Err(err("ConvTranspose negative output size"));
                }
                out_sp[d] = o as usize;
            }
        }
    }
    let xv = x.fs()?;
    let wv = w.floats()?;
    let osz = numel(&out_sp);
    check_size(&[nb, m, osz])?;
    let taps = Taps::new(&xs[2..], &out_sp, &kernel, &stv, &dil, &pb);
    let dims = ConvDims {
        batch: nb,
        c_in: c,
        c_out: m,
        groups: g,
        input: &xs[2..],
        output: &out_sp,
    };
    let mut out = conv_transpose_lowered(&dims, &taps, xv, &wv)?;
    if let Some(b) = b {
        if b.len() != m {
            return Err(err("ConvTranspose bias length"));
        }
        for bi in 0..nb {
            for oc in 0..m {
                for o in 0..osz {
                    out[(bi * m + oc) * osz + o] += b[oc];
                }
            }
        }
    }
    let mut shape = vec![nb, m];
    shape.extend(out_sp);
    one(T::f(x.dt, shape, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_ir::attr::AttrValue;

    #[test]
    fn conv_with_pads_and_groups() {
        // x: 1x2x2x2, channel 0 = [[1,2],[3,4]], channel 1 = [[5,6],[7,8]].
        let x: Vec<f64> = (1..=8).map(|v| v as f64).collect();
        // Two groups, one 1x1... rather a 2x2 all-ones kernel per group, pads 1 everywhere.
        let w = vec![1.0; 8];
        let node = Node::new("Conv", &["x", "w"], &["y"])
            .with_attr("group", AttrValue::Int(2))
            .with_attr("pads", AttrValue::Ints(vec![1, 1, 1, 1]));
        let (shape, y) =
            conv_core(&node, &x, &[1, 2, 2, 2], &w, &[2, 1, 2, 2], None, false).unwrap();
        assert_eq!(shape, vec![1, 2, 3, 3]);
        // Group 0 sees only channel 0: the 3x3 output of summing 2x2 windows over the padded
        // [[0,0,0,0],[0,1,2,0],[0,3,4,0],[0,0,0,0]].
        assert_eq!(&y[..9], &[1.0, 3.0, 2.0, 4.0, 10.0, 6.0, 3.0, 7.0, 4.0]);
        // Group 1 sees only channel 1; its centre is 5+6+7+8.
        assert_eq!(y[9 + 4], 26.0);
    }
}
