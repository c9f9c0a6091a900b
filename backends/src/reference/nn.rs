//! Neural-network ops over N-D spatial data: Conv / ConvTranspose, pooling, normalizations,
//! LRN, Dropout (inference).
use super::gemm::{ConvDims, Taps, conv_lowered, conv_transpose_lowered, exact_in_f64};
use super::tensor::*;
use super::{Cx, OpFn, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use std::collections::BTreeMap;

type Out = R<Vec<V>>;

/// Window geometry of a conv or pool over the spatial dims.
#[derive(Clone, Debug, PartialEq)]
pub struct Geo {
    /// Input spatial size.
    pub input: Vec<usize>,
    /// Kernel size.
    pub kernel: Vec<usize>,
    /// Strides.
    pub strides: Vec<usize>,
    /// Dilations.
    pub dil: Vec<usize>,
    /// Padding at the start of each dim.
    pub pb: Vec<i64>,
    /// Padding at the end of each dim.
    pub pe: Vec<i64>,
    /// Output spatial size.
    pub out: Vec<usize>,
}

fn ints_or(n: &Node, name: &str, len: usize, d: i64) -> R<Vec<i64>> {
    match n.ints(name) {
        Some(v) if v.len() == len => Ok(v.to_vec()),
        Some([]) => Ok(vec![d; len]),
        Some(v) => Err(err(format!("{name} {v:?} for {len} spatial dims"))),
        None => Ok(vec![d; len]),
    }
}

fn positive(v: Vec<i64>, what: &str) -> R<Vec<usize>> {
    if v.iter().any(|&x| x < 1) {
        return Err(err(format!("{what} {v:?} must be positive")));
    }
    Ok(v.into_iter().map(|x| x as usize).collect())
}

/// Computes the window geometry of a conv or pool from the node's attributes.
pub fn geometry(n: &Node, input: &[usize], kernel: &[usize], ceil_mode: bool) -> R<Geo> {
    let r = input.len();
    let strides = positive(ints_or(n, "strides", r, 1)?, "strides")?;
    let dil = positive(ints_or(n, "dilations", r, 1)?, "dilations")?;
    let pads = match n.ints("pads") {
        Some(p) if p.len() == 2 * r => p.to_vec(),
        Some([]) => vec![0; 2 * r],
        Some(p) => return Err(err(format!("pads {p:?} for {r} spatial dims"))),
        None => vec![0; 2 * r],
    };
    let auto = n.string("auto_pad", "NOTSET");
    let mut pb = pads[..r].to_vec();
    let mut pe = pads[r..].to_vec();
    let mut out = Vec::with_capacity(r);
    for d in 0..r {
        let i = input[d] as i64;
        let s = strides[d] as i64;
        let ek = (kernel[d] as i64 - 1) * dil[d] as i64 + 1;
        let o = match auto.as_str() {
            "NOTSET" | "" => {
                let span = i + pb[d] + pe[d] - ek;
                if span < 0 {
                    return Err(err(format!("kernel larger than padded input on dim {d}")));
                }
                let mut o = if ceil_mode {
                    (span + s - 1) / s + 1
                } else {
                    span / s + 1
                };
                if ceil_mode && (o - 1) * s >= i + pb[d] {
                    o -= 1;
                }
                o
            }
            "VALID" => {
                pb[d] = 0;
                pe[d] = 0;
                let span = i - ek;
                if span < 0 {
                    return Err(err(format!("kernel larger than input on dim {d}")));
                }
                if ceil_mode {
                    (span + s - 1) / s + 1
                } else {
                    span / s + 1
                }
            }
            "SAME_UPPER" | "SAME_LOWER" => {
                let o = (i + s - 1) / s;
                let total = ((o - 1) * s + ek - i).max(0);
                if auto == "SAME_UPPER" {
                    pb[d] = total / 2;
                    pe[d] = total - pb[d];
                } else {
                    pe[d] = total / 2;
                    pb[d] = total - pe[d];
                }
                o
            }
            a => return Err(err(format!("auto_pad {a}"))),
        };
        out.push(o.max(0) as usize);
    }
    Ok(Geo {
        input: input.to_vec(),
        kernel: kernel.to_vec(),
        strides,
        dil,
        pb,
        pe,
        out,
    })
}

impl Geo {
    /// For each output position and kernel position: the input spatial position (flat), or
    /// `Err(inside_padding)` when it falls outside the input (`true` when it is within the
    /// declared pads, `false` beyond them).
    pub fn taps(&self) -> Vec<Vec<Result<usize, bool>>> {
        let r = self.input.len();
        let ist = strides(&self.input);
        let no = numel(&self.out);
        let nk = numel(&self.kernel);
        let mut all = Vec::with_capacity(no);
        for o in 0..no {
            let oi = unravel(o, &self.out);
            let mut row = Vec::with_capacity(nk);
            for k in 0..nk {
                let ki = unravel(k, &self.kernel);
                let mut flat = 0usize;
                let mut res = Ok(());
                for d in 0..r {
                    let p = (oi[d] * self.strides[d] + ki[d] * self.dil[d]) as i64 - self.pb[d];
                    let dim = self.input[d] as i64;
                    if p < 0 || p >= dim {
                        let within = p >= -self.pb[d] && p < dim + self.pe[d];
                        res = match res {
                            Ok(()) => Err(within),
                            Err(w) => Err(w && within),
                        };
                    } else {
                        flat += p as usize * ist[d];
                    }
                }
                row.push(res.map(|_| flat));
            }
            all.push(row);
        }
        all
    }
}

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

fn op_conv(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_conv_integer(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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

fn op_conv_transpose(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
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
        let ek = (kernel[d] as i64 - 1) * dil[d] as i64 + 1;
        let full = s * (i - 1) + opad[d] + ek;
        let want = match &oshape {
            Some(o) => Some(
                *o.get(o.len().saturating_sub(r) + d)
                    .ok_or_else(|| err("output_shape"))?,
            ),
            None if auto == "SAME_UPPER" || auto == "SAME_LOWER" => Some(i * s),
            None => None,
        };
        match want {
            Some(o) => {
                let total = full - o;
                // Floor division, so that a negative total pads at the end.
                let half = total.div_euclid(2);
                pb[d] = if auto == "SAME_UPPER" {
                    half
                } else {
                    total - half
                };
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

#[derive(Clone, Copy, PartialEq)]
enum Pool {
    Max,
    Avg,
    Lp(f64),
}

fn pool(n: &Node, x: &T, kind: Pool, global: bool) -> Out {
    let xs = &x.shape;
    // Global pooling of [N, C] has no spatial axis: one tap per output (ONNX's shape inference
    // accepts rank 2 and keeps the shape).
    if xs.len() < 3 && !(global && xs.len() == 2) {
        return Err(err(format!("pool input {xs:?}")));
    }
    let (nb, c) = (xs[0], xs[1]);
    let sp = &xs[2..];
    let geo = if global {
        Geo {
            input: sp.to_vec(),
            kernel: sp.to_vec(),
            strides: vec![1; sp.len()],
            dil: vec![1; sp.len()],
            pb: vec![0; sp.len()],
            pe: vec![0; sp.len()],
            out: vec![1; sp.len()],
        }
    } else {
        let k = positive(
            n.ints("kernel_shape")
                .ok_or_else(|| err("pool without kernel_shape"))?
                .to_vec(),
            "kernel_shape",
        )?;
        if k.len() != sp.len() {
            return Err(err("kernel_shape rank"));
        }
        geometry(n, sp, &k, n.int("ceil_mode", 0) != 0)?
    };
    let taps = geo.taps();
    let include_pad = n.int("count_include_pad", 0) != 0;
    let col_major = n.int("storage_order", 0) != 0;
    let isz = numel(sp);
    let osz = numel(&geo.out);
    let xv = x.floats()?;
    let mut out = vec![0.0; nb * c * osz];
    let mut idx = vec![0i64; nb * c * osz];
    // Column-major flat spatial index for storage_order = 1.
    let cm = |p: usize| -> usize {
        let mi = unravel(p, sp);
        let mut f = 0;
        let mut m = 1;
        for d in 0..sp.len() {
            f += mi[d] * m;
            m *= sp[d];
        }
        f
    };
    for bc in 0..nb * c {
        let base = bc * isz;
        for (o, row) in taps.iter().enumerate() {
            let v = match kind {
                Pool::Max => {
                    let mut best = f64::NEG_INFINITY;
                    let mut at = None;
                    for p in row.iter().flatten() {
                        let val = xv[base + p];
                        if at.is_none() || val > best {
                            best = val;
                            at = Some(*p);
                        }
                    }
                    if let Some(p) = at {
                        idx[bc * osz + o] = (base + if col_major { cm(p) } else { p }) as i64;
                    }
                    best
                }
                Pool::Avg => {
                    let mut s = 0.0;
                    let mut cnt = 0usize;
                    for tap in row {
                        match tap {
                            Ok(p) => {
                                s += xv[base + p];
                                cnt += 1;
                            }
                            Err(true) if include_pad => cnt += 1,
                            Err(_) => {}
                        }
                    }
                    if cnt == 0 { f64::NAN } else { s / cnt as f64 }
                }
                Pool::Lp(p) => {
                    let s: f64 = row
                        .iter()
                        .flatten()
                        .map(|&q| xv[base + q].abs().powf(p))
                        .sum();
                    s.powf(1.0 / p)
                }
            };
            out[bc * osz + o] = v;
        }
    }
    let mut shape = vec![nb, c];
    shape.extend(&geo.out);
    let y = T::from_f64s(x.dt, shape.clone(), out)?;
    Ok(vec![V::T(y), V::T(T::i(DType::I64, shape, idx))])
}

fn op_max_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    pool(n, inp(ins, 0)?, Pool::Max, false)
}
fn op_avg_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    pool(n, inp(ins, 0)?, Pool::Avg, false)
}
fn op_lp_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    pool(n, inp(ins, 0)?, Pool::Lp(n.int("p", 2) as f64), false)
}
fn op_global_max_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    Ok(pool(n, inp(ins, 0)?, Pool::Max, true)?
        .into_iter()
        .take(1)
        .collect())
}
fn op_global_avg_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    Ok(pool(n, inp(ins, 0)?, Pool::Avg, true)?
        .into_iter()
        .take(1)
        .collect())
}
fn op_global_lp_pool(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    Ok(pool(n, inp(ins, 0)?, Pool::Lp(n.int("p", 2) as f64), true)?
        .into_iter()
        .take(1)
        .collect())
}

fn per_channel(t: &T, c: usize, what: &str) -> R<Vec<f64>> {
    let v = t.floats()?;
    if v.len() != c {
        return Err(err(format!(
            "{what} has {} values for {c} channels",
            v.len()
        )));
    }
    Ok(v)
}

fn op_batch_norm(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    if x.rank() < 2 {
        return Err(err("BatchNormalization input rank < 2"));
    }
    let c = x.shape[1];
    let scale = per_channel(inp(ins, 1)?, c, "scale")?;
    let bias = per_channel(inp(ins, 2)?, c, "B")?;
    let rmean = per_channel(inp(ins, 3)?, c, "mean")?;
    let rvar = per_channel(inp(ins, 4)?, c, "var")?;
    let eps = n.float("epsilon", 1e-5) as f64;
    let training = cx.opset >= 14 && n.int("training_mode", 0) != 0;
    let xv = x.fs()?;
    let nb = x.shape[0];
    let inner = numel(&x.shape[2..]);
    let (mean, var) = if training {
        let cnt = (nb * inner) as f64;
        let mut m = vec![0.0; c];
        let mut v = vec![0.0; c];
        for b in 0..nb {
            for ch in 0..c {
                for i in 0..inner {
                    m[ch] += xv[(b * c + ch) * inner + i];
                }
            }
        }
        m.iter_mut().for_each(|a| *a /= cnt);
        for b in 0..nb {
            for ch in 0..c {
                for i in 0..inner {
                    let d = xv[(b * c + ch) * inner + i] - m[ch];
                    v[ch] += d * d;
                }
            }
        }
        v.iter_mut().for_each(|a| *a /= cnt);
        (m, v)
    } else {
        (rmean.clone(), rvar.clone())
    };
    let mut y = vec![0.0; xv.len()];
    for b in 0..nb {
        for ch in 0..c {
            let k = scale[ch] / (var[ch] + eps).sqrt();
            for i in 0..inner {
                let p = (b * c + ch) * inner + i;
                y[p] = (xv[p] - mean[ch]) * k + bias[ch];
            }
        }
    }
    let mut out = vec![V::T(T::f(x.dt, x.shape.clone(), y))];
    if training {
        let mom = n.float("momentum", 0.9) as f64;
        let mdt = inp(ins, 3)?.dt;
        let vdt = inp(ins, 4)?.dt;
        let nm: Vec<f64> = (0..c)
            .map(|i| rmean[i] * mom + mean[i] * (1.0 - mom))
            .collect();
        let nv: Vec<f64> = (0..c)
            .map(|i| rvar[i] * mom + var[i] * (1.0 - mom))
            .collect();
        out.push(V::T(T::f(mdt, vec![c], nm)));
        out.push(V::T(T::f(vdt, vec![c], nv)));
    } else if n.outputs.len() > 1 {
        return Err(unsup(
            "BatchNormalization extra outputs outside training mode",
        ));
    }
    Ok(out)
}

fn op_instance_norm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    if x.rank() < 2 {
        return Err(err("InstanceNormalization input rank < 2"));
    }
    let c = x.shape[1];
    let scale = per_channel(inp(ins, 1)?, c, "scale")?;
    let bias = per_channel(inp(ins, 2)?, c, "B")?;
    let eps = n.float("epsilon", 1e-5) as f64;
    let xv = x.fs()?;
    let inner = numel(&x.shape[2..]);
    let mut y = vec![0.0; xv.len()];
    for bc in 0..x.shape[0] * c {
        let ch = bc % c;
        let s = &xv[bc * inner..(bc + 1) * inner];
        let m = s.iter().sum::<f64>() / inner as f64;
        let v = s.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / inner as f64;
        let k = scale[ch] / (v + eps).sqrt();
        for i in 0..inner {
            y[bc * inner + i] = (s[i] - m) * k + bias[ch];
        }
    }
    one(T::f(x.dt, x.shape.clone(), y))
}

fn op_layer_norm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let r = x.rank();
    let axis = norm_axis(n.int("axis", -1), r)?;
    let eps = n.float("epsilon", 1e-5) as f64;
    let scale = expand_to(inp(ins, 1)?, &x.shape)?.floats()?;
    let bias = match opt(ins, 2)? {
        Some(b) => Some(expand_to(b, &x.shape)?.floats()?),
        None => None,
    };
    let xv = x.fs()?;
    let outer = numel(&x.shape[..axis]);
    let inner = numel(&x.shape[axis..]);
    let mut y = vec![0.0; xv.len()];
    let mut means = Vec::with_capacity(outer);
    let mut invs = Vec::with_capacity(outer);
    for o in 0..outer {
        let s = &xv[o * inner..(o + 1) * inner];
        let m = s.iter().sum::<f64>() / inner as f64;
        let v = s.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / inner as f64;
        let inv = 1.0 / (v + eps).sqrt();
        for i in 0..inner {
            let p = o * inner + i;
            y[p] = (s[i] - m) * inv * scale[p] + bias.as_ref().map(|b| b[p]).unwrap_or(0.0);
        }
        means.push(m);
        invs.push(inv);
    }
    let mut st = x.shape[..axis].to_vec();
    st.extend(vec![1; r - axis]);
    let sdt = match n.int("stash_type", 1) {
        1 => DType::F32,
        c => DType::from_code(c as i32),
    };
    Ok(vec![
        V::T(T::f(x.dt, x.shape.clone(), y)),
        V::T(T::from_f64s(sdt, st.clone(), means)?),
        V::T(T::from_f64s(sdt, st, invs)?),
    ])
}

fn op_group_norm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    if x.rank() < 2 {
        return Err(err("GroupNormalization input rank < 2"));
    }
    let g = n.int("num_groups", 0);
    let c = x.shape[1];
    if g < 1 || c % g as usize != 0 {
        return Err(err(format!("num_groups {g} for {c} channels")));
    }
    let g = g as usize;
    let eps = n.float("epsilon", 1e-5) as f64;
    let scale = inp(ins, 1)?.floats()?;
    let bias = inp(ins, 2)?.floats()?;
    let per_group = scale.len() == g && g != c;
    if !(scale.len() == c || per_group) || bias.len() != scale.len() {
        return Err(err("GroupNormalization scale / bias length"));
    }
    let xv = x.fs()?;
    let inner = numel(&x.shape[2..]);
    let cpg = c / g;
    let gs = cpg * inner;
    let mut y = vec![0.0; xv.len()];
    for bg in 0..x.shape[0] * g {
        let s = &xv[bg * gs..(bg + 1) * gs];
        let m = s.iter().sum::<f64>() / gs as f64;
        let v = s.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / gs as f64;
        let inv = 1.0 / (v + eps).sqrt();
        for (j, &xx) in s.iter().enumerate() {
            let ch = (bg % g) * cpg + j / inner;
            let k = if per_group { bg % g } else { ch };
            y[bg * gs + j] = (xx - m) * inv * scale[k] + bias[k];
        }
    }
    one(T::f(x.dt, x.shape.clone(), y))
}

fn op_lrn(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    if x.rank() < 2 {
        return Err(err("LRN input rank < 2"));
    }
    let size = n.int("size", 0);
    if size < 1 {
        return Err(err("LRN size"));
    }
    let alpha = n.float("alpha", 1e-4) as f64;
    let beta = n.float("beta", 0.75) as f64;
    let bias = n.float("bias", 1.0) as f64;
    let c = x.shape[1];
    let inner = numel(&x.shape[2..]);
    let xv = x.fs()?;
    let lo = (size - 1) / 2;
    let hi = size - 1 - lo;
    let mut y = vec![0.0; xv.len()];
    for b in 0..x.shape[0] {
        for ch in 0..c {
            let from = (ch as i64 - lo).max(0) as usize;
            let to = ((ch as i64 + hi) as usize).min(c - 1);
            for i in 0..inner {
                let mut s = 0.0;
                for k in from..=to {
                    let v = xv[(b * c + k) * inner + i];
                    s += v * v;
                }
                let p = (b * c + ch) * inner + i;
                y[p] = xv[p] / (bias + alpha / size as f64 * s).powf(beta);
            }
        }
    }
    one(T::f(x.dt, x.shape.clone(), y))
}

fn op_mvn(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let axes: Vec<usize> = match n.ints("axes") {
        Some(a) => super::shape::norm_axes(a, x.rank())?,
        None => super::shape::norm_axes(&[0, 2, 3], x.rank())?,
    };
    let mut kept = x.shape.clone();
    for &a in &axes {
        kept[a] = 1;
    }
    let ost = strides(&kept);
    let s: Vec<isize> = (0..x.rank())
        .map(|d| {
            if axes.contains(&d) {
                0
            } else {
                ost[d] as isize
            }
        })
        .collect();
    let map = strided_index(&x.shape, &s, 0);
    let on = numel(&kept);
    let cnt = (x.len() / on.max(1)) as f64;
    let xv = x.fs()?;
    // ONNX's function body: (X - mean) / (sqrt(E[X^2] - mean^2) + 1e-9). The variance is
    // taken as E[(X - mean)^2], its exact value, which rounding cannot make negative (the
    // difference form gives NaN for constant slices).
    let mut m = vec![0.0; on];
    for (i, &o) in map.iter().enumerate() {
        m[o] += xv[i] / cnt;
    }
    let mut var = vec![0.0; on];
    for (i, &o) in map.iter().enumerate() {
        var[o] += (xv[i] - m[o]) * (xv[i] - m[o]) / cnt;
    }
    let y = map
        .iter()
        .enumerate()
        .map(|(i, &o)| (xv[i] - m[o]) / (var[o].sqrt() + 1e-9))
        .collect();
    one(T::f(x.dt, x.shape.clone(), y))
}

fn op_dropout(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let training = if cx.opset >= 12 {
        match opt(ins, 2)? {
            Some(t) => t.scalar_i()? != 0,
            None => false,
        }
    } else {
        cx.opset < 7 && n.int("is_test", 0) == 0
    };
    let ratio = if cx.opset >= 12 {
        match opt(ins, 1)? {
            Some(t) => t.scalar_f()?,
            None => 0.5,
        }
    } else {
        n.float("ratio", 0.5) as f64
    };
    if training && ratio != 0.0 {
        return Err(unsup("Dropout in training mode (random)"));
    }
    let mask = if cx.opset >= 10 {
        T::b(x.shape.clone(), vec![true; x.len()])
    } else {
        T::from_f64s(x.dt, x.shape.clone(), vec![1.0; x.len()])?
    };
    Ok(vec![V::T(x.clone()), V::T(mask)])
}

pub(super) fn register(t: &mut BTreeMap<&'static str, OpFn>) {
    let ops: &[(&'static str, OpFn)] = &[
        ("Conv", op_conv),
        ("ConvInteger", op_conv_integer),
        ("ConvTranspose", op_conv_transpose),
        ("MaxPool", op_max_pool),
        ("AveragePool", op_avg_pool),
        ("LpPool", op_lp_pool),
        ("GlobalMaxPool", op_global_max_pool),
        ("GlobalAveragePool", op_global_avg_pool),
        ("GlobalLpPool", op_global_lp_pool),
        ("BatchNormalization", op_batch_norm),
        ("InstanceNormalization", op_instance_norm),
        ("LayerNormalization", op_layer_norm),
        ("GroupNormalization", op_group_norm),
        ("LRN", op_lrn),
        ("MeanVarianceNormalization", op_mvn),
        ("Dropout", op_dropout),
    ];
    for (k, f) in ops {
        t.insert(k, *f);
    }
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

    #[test]
    fn same_upper_padding() {
        let node = Node::new("Conv", &[], &[])
            .with_attr("auto_pad", AttrValue::String(b"SAME_UPPER".to_vec()))
            .with_attr("strides", AttrValue::Ints(vec![2]));
        let g = geometry(&node, &[5], &[3], false).unwrap();
        // out = ceil(5/2) = 3; total pad = (3-1)*2 + 3 - 5 = 2 -> 1 before, 1 after.
        assert_eq!(g.out, vec![3]);
        assert_eq!((g.pb[0], g.pe[0]), (1, 1));
    }
}
