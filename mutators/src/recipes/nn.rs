//! Neural-network layers: convolutions, pooling, normalizations, matrix products, `Det`,
//! `Einsum` and the recurrent layers. Weights are sized from `x`'s shape, kernels and output
//! channels are kept small so that outputs stay within the element limit.
use super::Recipe;
use super::util::*;
use crate::builder::SplitMix64;
use crate::ir::DType;
use crate::ir::attr::AttrValue;
use crate::ir::registry::Registry;
use crate::ir::types::TensorType;
use crate::site::Site;

const SPATIAL: (usize, usize) = (3, 5);
const LIMIT: i64 = 1 << 16;

/// Spatial window parameters drawn for one conv / pool node.
struct Window {
    kernel: Vec<i64>,
    strides: Vec<i64>,
    dilations: Vec<i64>,
    /// Explicit pads (begin..., end...), when `auto_pad` is NOTSET and pads are given.
    pads: Option<Vec<i64>>,
    auto_pad: Option<&'static str>,
}

/// Draws a window over `spatial` dims; pads stay below the kernel; `dil` allows dilations.
fn window(rng: &mut SplitMix64, spatial: &[i64], dil: bool) -> Window {
    let mut kernel = Vec::new();
    let mut dilations = Vec::new();
    let mut strides = Vec::new();
    let style = below(rng, 4);
    for &s in spatial {
        let d = if dil && s >= 3 && chance(rng, 0.3) {
            2
        } else {
            1
        };
        let kmax = ((s - 1) / d + 1).clamp(1, 3);
        // Uniform kernels more often, so all-1 and uniform buckets both come up.
        let k = match style {
            0 => 1,
            1 => kmax.min(2),
            _ => between(rng, 1, kmax),
        };
        kernel.push(k);
        dilations.push(d);
        strides.push(if s >= 2 && chance(rng, 0.4) { 2 } else { 1 });
    }
    let (pads, auto_pad) = match below(rng, 6) {
        0 | 1 => {
            let n = spatial.len();
            let mut p = Vec::new();
            let kmin = kernel.iter().copied().min().unwrap_or(1);
            let uniform = kmin - 1;
            let same = chance(rng, 0.4);
            for i in 0..2 * n {
                let k = kernel[i % n];
                p.push(if same {
                    uniform
                } else {
                    between(rng, 0, k - 1)
                });
            }
            (
                Some(p),
                if chance(rng, 0.3) {
                    Some("NOTSET")
                } else {
                    None
                },
            )
        }
        2 => (None, None),
        3 => (None, Some("SAME_UPPER")),
        4 => (None, Some("SAME_LOWER")),
        _ => (None, Some("VALID")),
    };
    // SAME with a window shorter than the stride needs negative padding, which ONNX leaves
    // undefined: the stride stays within the window there.
    if matches!(auto_pad, Some("SAME_UPPER" | "SAME_LOWER")) {
        for i in 0..strides.len() {
            let eff = (kernel[i] - 1) * dilations[i] + 1;
            strides[i] = strides[i].min(eff);
        }
    }
    Window {
        kernel,
        strides,
        dilations,
        pads,
        auto_pad,
    }
}

impl Window {
    /// Whether `ceil_mode` would change the output length here in a way ONNX disputes (a
    /// last window starting past the input and its begin padding: ONNX's shape inference
    /// counts it, its reference does not).
    fn ceil_disputed(&self, spatial: &[i64]) -> bool {
        let n = spatial.len();
        (0..n).any(|i| {
            let (pb, pe) = self.pads.as_ref().map_or((0, 0), |p| (p[i], p[i + n]));
            let eff = (self.kernel[i] - 1) * self.dilations[i] + 1;
            let span = spatial[i] + pb + pe - eff;
            let s = self.strides[i];
            span >= 0 && ((span + s - 1) / s) * s >= spatial[i] + pb
        })
    }

    fn attrs(&self, rng: &mut SplitMix64, a: &mut Attrs, kernel_required: bool, dil: bool) {
        if kernel_required || chance(rng, 0.7) {
            a.push(("kernel_shape", ais(&self.kernel)));
        }
        let ones = |v: &[i64]| v.iter().all(|&s| s == 1);
        if !ones(&self.strides) || chance(rng, 0.4) {
            a.push(("strides", ais(&self.strides)));
        }
        if dil && (!ones(&self.dilations) || chance(rng, 0.3)) {
            a.push(("dilations", ais(&self.dilations)));
        }
        if let Some(p) = &self.pads {
            a.push(("pads", ais(p)));
        }
        if let Some(ap) = self.auto_pad {
            a.push(("auto_pad", astr(ap)));
        }
    }
}

/// Divisors of `c` in `lo..=hi`.
fn divisors(c: i64, lo: i64, hi: i64) -> Vec<i64> {
    (lo.max(1)..=hi.min(c)).filter(|g| c % g == 0).collect()
}

/// A group count for `c` channels over the buckets 1 / 2..=4 / 5+ (at most 16).
fn group_of(rng: &mut SplitMix64, c: i64) -> i64 {
    let b = below(rng, 3);
    let cands = match b {
        0 => vec![1],
        1 => divisors(c, 2, 4),
        _ => divisors(c, 5, 16),
    };
    if cands.is_empty() {
        1
    } else {
        pick(rng, &cands)
    }
}

fn weight(
    site: &mut Site<'_>,
    dt: DType,
    shape: &[i64],
    fan_in: i64,
    rng: &mut SplitMix64,
) -> String {
    let b = 1.0 / (fan_in.max(1) as f64).sqrt();
    site.random_constant("w", dt, shape, -b, b, rng)
}

fn conv(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let (n, c) = (d[0], d[1]);
    let spatial = &d[2..];
    let group = group_of(rng, c);
    let per = if group > 4 { 1 } else { between(rng, 1, 2) };
    let m = group * per;
    let mut w = window(rng, spatial, true);
    let transpose = op == "ConvTranspose";
    if transpose && chance(rng, 0.3) {
        let same = matches!(w.auto_pad, Some("SAME_UPPER" | "SAME_LOWER"));
        for i in 0..w.strides.len() {
            // Under SAME the stride stays within the window (see `window`).
            let eff = (w.kernel[i] - 1) * w.dilations[i] + 1;
            w.strides[i] = if same { eff.min(2) } else { 2 };
        }
    }
    let sp: i64 = spatial.iter().product();
    if transpose {
        let grow: i64 = w.strides.iter().product::<i64>().max(1) * 2;
        if n * m * sp * grow > LIMIT {
            w.strides.iter_mut().for_each(|s| *s = 1);
        }
    }
    let cin = c / group;
    let wshape: Vec<i64> = if transpose {
        [vec![c, per], w.kernel.clone()].concat()
    } else {
        [vec![m, cin], w.kernel.clone()].concat()
    };
    let ksz: i64 = w.kernel.iter().product();
    let wn = weight(site, t.dtype, &wshape, cin * ksz, rng);
    let mut a = Attrs::new();
    w.attrs(rng, &mut a, false, true);
    if group != 1 || chance(rng, 0.3) {
        a.push(("group", ai(group)));
    }
    if transpose && w.auto_pad.is_none() {
        // Output padding below the stride, or an explicit output shape.
        match below(rng, 3) {
            0 if w.strides.iter().any(|&s| s > 1) => {
                let op_: Vec<i64> = w.strides.iter().map(|&s| between(rng, 0, s - 1)).collect();
                a.push(("output_padding", ais(&op_)));
            }
            1 if w.pads.is_none() => {
                let os: Vec<i64> = spatial
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| w.strides[i] * (s - 1) + (w.kernel[i] - 1) * w.dilations[i] + 1)
                    .collect();
                a.push(("output_shape", ais(&os)));
            }
            _ => {}
        }
    }
    let out_c = if transpose { per * group } else { m };
    if chance(rng, 0.5) {
        let b = site.random_constant("bias", t.dtype, &[out_c], -0.5, 0.5, rng);
        site.op1(op, &[x, &wn, &b], a)
    } else {
        site.op1(op, &[x, &wn], a)
    }
}

fn pool(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let opset = site.opset();
    let dil = match op {
        "MaxPool" => opset >= 10,
        "AveragePool" => opset >= 19,
        _ => opset >= 18,
    };
    let w = window(rng, &d[2..], dil);
    let mut a = Attrs::new();
    w.attrs(rng, &mut a, true, dil);
    let ceil = match op {
        "MaxPool" | "AveragePool" => opset >= 10,
        _ => opset >= 18,
    };
    // ceil_mode only with explicit pads: with auto_pad the output length is disputed (ONNX's
    // shape inference rounds up, ONNX Runtime does not), which would be a finding about an
    // unsettled corner of the spec rather than a bug.
    if ceil && w.auto_pad.is_none() && !w.ceil_disputed(&d[2..]) {
        flag(rng, &mut a, "ceil_mode");
    }
    let mut n_out = 1;
    match op {
        "MaxPool" => {
            if opset >= 8 {
                flag(rng, &mut a, "storage_order");
                if chance(rng, 0.3) {
                    n_out = 2;
                }
            }
        }
        "AveragePool" => flag(rng, &mut a, "count_include_pad"),
        _ => {
            if opset >= 2 {
                maybe_int(rng, &mut a, 0.8, "p", &[1, 2, 3, 6]);
            }
        }
    }
    Ok(site.op(op, &[x], a, n_out)?.remove(0))
}

fn global_pool(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let mut a = Attrs::new();
    if op == "GlobalLpPool" && site.opset() >= 2 {
        maybe_int(rng, &mut a, 0.8, "p", &[1, 2, 3, 6]);
    }
    site.op1(op, &[x], a)
}

fn max_unpool(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let n = d.len() - 2;
    // MaxPool's indices address `x`'s layout; MaxUnpool reads them in its default layout and
    // places them at the same coordinates of `output_shape`. The window is redrawn until the
    // pooling keeps every border (else the indices fall outside; ONNX leaves that undefined).
    let mut chosen = None;
    for _ in 0..12 {
        let mut w = window(rng, &d[2..], false);
        w.auto_pad = None;
        let mut a = Attrs::new();
        w.attrs(rng, &mut a, true, false);
        a.retain(|(k, _)| *k != "ceil_mode" && *k != "dilations");
        let pads = w.pads.clone().unwrap_or(vec![0; 2 * n]);
        let fits = (0..n).all(|i| {
            let span = d[2 + i] + pads[i] + pads[i + n] - w.kernel[i];
            span >= 0 && span % w.strides[i] == 0
        });
        if fits {
            chosen = Some(a);
            break;
        }
    }
    let a = chosen.ok_or("no pooling window keeps the borders")?;
    let pooled = site.op("MaxPool", &[x], a.clone(), 2)?;
    if chance(rng, 0.5) {
        let os = site.constant_i64s("output_shape", &[d.len() as i64], &d);
        site.op1(op, &[&pooled[0], &pooled[1], &os], a)
    } else {
        site.op1(op, &[&pooled[0], &pooled[1]], a)
    }
}

fn eps(rng: &mut SplitMix64, a: &mut Attrs) {
    float_of(rng, a, "epsilon", &[1e-8, 1e-5, 1e-3, 0.05]);
}

fn batch_norm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let c = dims(t)[1];
    let dt = t.dtype;
    let s = site.random_constant("scale", dt, &[c], 0.5, 1.5, rng);
    let b = site.random_constant("bias", dt, &[c], -0.5, 0.5, rng);
    let m = site.random_constant("mean", dt, &[c], -0.5, 0.5, rng);
    let v = site.random_constant("var", dt, &[c], 0.5, 1.5, rng);
    let mut a = Attrs::new();
    eps(rng, &mut a);
    float_of(rng, &mut a, "momentum", &[0.3, 0.7, 0.92, 0.99]);
    if site.opset() >= 14 {
        maybe(rng, &mut a, 0.3, "training_mode", ai(0));
    }
    if site.opset() < 7 {
        flag(rng, &mut a, "is_test");
    }
    if site.opset() < 9 {
        // Per-channel statistics either way (the inputs are [C]).
        maybe_int(rng, &mut a, 0.6, "spatial", &[1]);
        if chance(rng, 0.3) && dims(t).len() == 2 {
            a.push(("spatial", ai(0)));
        }
    }
    site.op1(op, &[x, &s, &b, &m, &v], a)
}

fn instance_norm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let c = dims(t)[1];
    let s = site.random_constant("scale", t.dtype, &[c], 0.5, 1.5, rng);
    let b = site.random_constant("bias", t.dtype, &[c], -0.5, 0.5, rng);
    let mut a = Attrs::new();
    eps(rng, &mut a);
    site.op1(op, &[x, &s, &b], a)
}

fn layer_norm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let ax = axis(rng, r);
    let from = (ax + r as i64) as usize % r;
    let mut a = Attrs::new();
    if ax != -1 || chance(rng, 0.5) {
        a.push(("axis", ai(ax)));
    }
    eps(rng, &mut a);
    maybe_int(rng, &mut a, 0.4, "stash_type", &[1, 10, 11, 16]);
    let shape = d[from..].to_vec();
    let s = site.random_constant("scale", t.dtype, &shape, 0.5, 1.5, rng);
    // Mean and InvStdDev take the stash type, which the opset may not allow as an output
    // type: ask for them only when it does.
    let stash = match a
        .iter()
        .find(|(k, _)| *k == "stash_type")
        .map(|(_, v)| v.clone())
    {
        Some(AttrValue::Int(c)) => DType::from_code(c as i32),
        _ => DType::F32,
    };
    let stat_ok = Registry::global()
        .get("", op)
        .and_then(|spec| spec.output_allowed_at(1, site.opset()))
        .is_none_or(|allowed| allowed.contains(&stash));
    let n_out = if stat_ok { 1 + below(rng, 3) } else { 1 };
    let outs = if chance(rng, 0.5) {
        let b = site.random_constant("bias", t.dtype, &shape, -0.5, 0.5, rng);
        site.op(op, &[x, &s, &b], a, n_out)?
    } else {
        site.op(op, &[x, &s], a, n_out)?
    };
    Ok(outs[0].clone())
}

fn group_norm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let c = dims(t)[1];
    let cands = match below(rng, 4) {
        0 => vec![1],
        1 => divisors(c, 2, 4),
        2 => divisors(c, 5, 32),
        _ => divisors(c, 33, c),
    };
    let g = if cands.is_empty() {
        1
    } else {
        pick(rng, &cands)
    };
    let len = if site.opset() >= 21 { c } else { g };
    let s = site.random_constant("scale", t.dtype, &[len], 0.5, 1.5, rng);
    let b = site.random_constant("bias", t.dtype, &[len], -0.5, 0.5, rng);
    let mut a = vec![("num_groups", ai(g))];
    eps(rng, &mut a);
    if site.opset() >= 21 {
        maybe(rng, &mut a, 0.3, "stash_type", ai(1));
    }
    site.op1(op, &[x, &s, &b], a)
}

fn lrn(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let mut a = vec![("size", ai(pick(rng, &[1, 2, 3, 5, 7])))];
    float_of(rng, &mut a, "alpha", &[1e-6, 1e-4, 0.01, 1.5]);
    float_of(rng, &mut a, "beta", &[0.3, 0.75, 1.5]);
    float_of(rng, &mut a, "bias", &[0.5, 1.0, 2.0]);
    site.op1(op, &[x], a)
}

fn matmul(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let k = d[d.len() - 1];
    let n = between(rng, 1, 8);
    let shape = if d.len() >= 3 && chance(rng, 0.3) {
        // Batched right operand with the same (or size-1) batch dims.
        let mut s: Vec<i64> = d[..d.len() - 2]
            .iter()
            .map(|&v| if chance(rng, 0.5) { 1 } else { v })
            .collect();
        s.push(k);
        s.push(n);
        s
    } else if chance(rng, 0.15) {
        vec![k]
    } else {
        vec![k, n]
    };
    let b = if op == "MatMulInteger" {
        konst(site, "b", t.dtype, &shape, -4.0, 4.0, rng)
    } else {
        konst(site, "b", t.dtype, &shape, -1.0, 1.0, rng)
    };
    if op == "MatMulInteger" && chance(rng, 0.5) {
        let za = site.constant_f64s("a_zero_point", t.dtype, &[], &[1.0]);
        return site.op1(op, &[x, &b, &za], vec![]);
    }
    site.op1(op, &[x, &b], vec![])
}

fn matmul_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    if r == 1 {
        vec![(d, 0), (d, 1)]
    } else {
        vec![(d, r), (d, r - 1)]
    }
}

fn matmul_int_outs(_: DType, r: usize) -> Vec<(DType, usize)> {
    matmul_outs(DType::I32, r)
}

fn gemm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let mut a = Attrs::new();
    let ta = chance(rng, 0.3);
    let tb = chance(rng, 0.5);
    if ta || chance(rng, 0.3) {
        a.push(("transA", ai(ta as i64)));
    }
    if tb || chance(rng, 0.3) {
        a.push(("transB", ai(tb as i64)));
    }
    let (m, k) = if ta { (d[1], d[0]) } else { (d[0], d[1]) };
    let n = between(rng, 1, 8);
    let bshape = if tb { vec![n, k] } else { vec![k, n] };
    let b = konst(site, "b", t.dtype, &bshape, -1.0, 1.0, rng);
    const AB: &[f64] = &[-0.5, 0.5, 1.0, 2.0];
    float_of(rng, &mut a, "alpha", AB);
    float_of(rng, &mut a, "beta", AB);
    let cshape = match below(rng, 6) {
        0 => None,
        1 => Some(vec![n]),
        2 => Some(vec![1, n]),
        3 => Some(vec![m, n]),
        4 => Some(vec![m, 1]),
        _ => Some(vec![]),
    };
    let cshape = if site.opset() < 7 {
        let full = vec![m, n];
        match cshape {
            Some(cs) if cs != full => {
                a.push(("broadcast", ai(1)));
                Some(cs)
            }
            other => {
                maybe_int(rng, &mut a, 0.5, "broadcast", &[0]);
                other.or(Some(full))
            }
        }
    } else {
        cshape
    };
    match cshape {
        Some(cs) => {
            let c = konst(site, "c", t.dtype, &cs, -1.0, 1.0, rng);
            site.op1(op, &[x, &b, &c], a)
        }
        None => site.op1(op, &[x, &b], a),
    }
}

fn det(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    _rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let s = d[r - 1].min(d[r - 2]).min(4);
    let mut v = x.to_string();
    if d[r - 1] != s || d[r - 2] != s {
        let starts = site.constant_i64s("starts", &[2], &[0, 0]);
        let ends = site.constant_i64s("ends", &[2], &[s, s]);
        let axes = site.constant_i64s("axes", &[2], &[r as i64 - 2, r as i64 - 1]);
        v = site.op1("Slice", &[x, &starts, &ends, &axes], vec![])?;
    }
    site.op1(op, &[&v], vec![])
}

fn det_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r - 2)]
}

fn einsum(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let letters: Vec<char> = "abcde".chars().take(r).collect();
    let lhs: String = letters.iter().collect();
    match below(rng, 3) {
        0 => {
            // A permutation of the axes.
            let mut perm = letters.clone();
            for i in (1..perm.len()).rev() {
                let j = below(rng, i + 1);
                perm.swap(i, j);
            }
            let rhs: String = perm.iter().collect();
            site.op1(op, &[x], vec![("equation", astr(&format!("{lhs}->{rhs}")))])
        }
        1 => {
            // Sums out some axes.
            let nk = below(rng, r + 1);
            let keep = subset(rng, r, nk);
            let rhs: String = keep.iter().map(|&i| letters[i]).collect();
            site.op1(op, &[x], vec![("equation", astr(&format!("{lhs}->{rhs}")))])
        }
        _ => {
            // Contracts the last axis with a constant matrix.
            let n = between(rng, 1, 6);
            let w = konst(site, "w", t.dtype, &[d[r - 1], n], -1.0, 1.0, rng);
            let last = letters[r - 1];
            let rhs: String = letters[..r - 1]
                .iter()
                .chain(std::iter::once(&'z'))
                .collect();
            let eq = format!("{lhs},{last}z->{rhs}");
            site.op1(op, &[x, &w], vec![("equation", astr(&eq))])
        }
    }
}

fn rnn(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let layout = if site.opset() >= 14 && chance(rng, 0.3) {
        1
    } else {
        0
    };
    let (seq, batch, input) = if layout == 1 {
        (d[1], d[0], d[2])
    } else {
        (d[0], d[1], d[2])
    };
    let h = match below(rng, 8) {
        0 | 1 => 1,
        2..=4 => between(rng, 2, 8),
        5 if op != "LSTM" && input <= 8 => 129,
        _ => between(rng, 17, 20),
    };
    let dir = pick(rng, &["forward", "reverse", "bidirectional"]);
    let nd = if dir == "bidirectional" { 2 } else { 1 };
    let gates = match op {
        "LSTM" => 4,
        "GRU" => 3,
        _ => 1,
    };
    let w = weight(site, t.dtype, &[nd, gates * h, input], input, rng);
    let rw = weight(site, t.dtype, &[nd, gates * h, h], h, rng);
    let mut a = vec![("hidden_size", ai(h))];
    if dir != "forward" || chance(rng, 0.5) {
        a.push(("direction", astr(dir)));
    }
    if layout == 1 || (site.opset() >= 14 && chance(rng, 0.2)) {
        a.push(("layout", ai(layout)));
    }
    float_of(rng, &mut a, "clip", &[0.5, 3.0, 20.0]);
    if site.opset() < 7 {
        flag(rng, &mut a, "output_sequence");
    }
    if chance(rng, 0.1) {
        // The default functions, named, with empty parameter lists.
        let one: &[&str] = match op {
            "LSTM" => &["Sigmoid", "Tanh", "Tanh"],
            "GRU" => &["Sigmoid", "Tanh"],
            _ => &["Tanh"],
        };
        let acts: Vec<Vec<u8>> = (0..nd)
            .flat_map(|_| one.iter().map(|s| s.as_bytes().to_vec()))
            .collect();
        a.push(("activations", crate::ir::attr::AttrValue::Strings(acts)));
        a.push((
            "activation_alpha",
            crate::ir::attr::AttrValue::Floats(vec![]),
        ));
        a.push((
            "activation_beta",
            crate::ir::attr::AttrValue::Floats(vec![]),
        ));
    } else if chance(rng, 0.3) {
        // HardSigmoid for the gate (LSTM, GRU) or the hidden (RNN) function, with its
        // alpha and beta per direction.
        let one: &[&str] = match op {
            "LSTM" => &["HardSigmoid", "Tanh", "Tanh"],
            "GRU" => &["HardSigmoid", "Tanh"],
            _ => &["HardSigmoid"],
        };
        let acts: Vec<Vec<u8>> = (0..nd)
            .flat_map(|_| one.iter().map(|s| s.as_bytes().to_vec()))
            .collect();
        // ONNX says the values are "consumed in the order of the activation functions":
        // runtimes read that as one value per function (ONNX Runtime) or one per function that
        // takes a parameter; one value per function, the same everywhere, means the same under
        // both readings.
        let (alpha0, beta0) = if chance(rng, 0.5) {
            (0.2, 0.5)
        } else {
            (0.3, 0.55)
        };
        let alpha: Vec<f32> = vec![alpha0; acts.len()];
        let beta: Vec<f32> = vec![beta0; acts.len()];
        a.push(("activations", crate::ir::attr::AttrValue::Strings(acts)));
        a.push((
            "activation_alpha",
            crate::ir::attr::AttrValue::Floats(alpha),
        ));
        a.push(("activation_beta", crate::ir::attr::AttrValue::Floats(beta)));
    }
    match op {
        "LSTM" => flag(rng, &mut a, "input_forget"),
        "GRU" if site.opset() >= 3 => flag(rng, &mut a, "linear_before_reset"),
        _ => {}
    }
    let mut ins = vec![x.to_string(), w, rw];
    if chance(rng, 0.6) {
        ins.push(site.random_constant("b", t.dtype, &[nd, 2 * gates * h], -0.3, 0.3, rng));
        if chance(rng, 0.5) {
            let lens: Vec<f64> = (0..batch).map(|_| between(rng, 1, seq) as f64).collect();
            ins.push(site.constant_f64s("sequence_lens", DType::I32, &[batch], &lens));
            let hs = if layout == 1 {
                vec![batch, nd, h]
            } else {
                vec![nd, batch, h]
            };
            ins.push(site.random_constant("initial_h", t.dtype, &hs, -0.5, 0.5, rng));
        }
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    let n_out = if op == "LSTM" { 3 } else { 2 };
    Ok(site.op(op, &refs, a, n_out)?.remove(0))
}

fn rnn_outs(d: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(d, 4)]
}

fn roi(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let (n, hh, ww) = (d[0], d[2] as f64, d[3] as f64);
    let nr = between(rng, 1, 3);
    let mut boxes = Vec::new();
    let mut idx = Vec::new();
    for _ in 0..nr {
        let x1 = rng.range(0.0, ww / 2.0).floor();
        let y1 = rng.range(0.0, hh / 2.0).floor();
        let x2 = (x1 + rng.range(1.0, ww / 2.0 + 1.0)).floor().min(ww - 1.0);
        let y2 = (y1 + rng.range(1.0, hh / 2.0 + 1.0)).floor().min(hh - 1.0);
        let b = between(rng, 0, n - 1);
        if op == "MaxRoiPool" {
            boxes.extend([b as f64, x1, y1, x2, y2]);
        } else {
            boxes.extend([x1, y1, x2, y2]);
        }
        idx.push(b);
    }
    let mut a = Attrs::new();
    float_of(rng, &mut a, "spatial_scale", &[0.05, 0.5, 1.0, 1.5]);
    if op == "MaxRoiPool" {
        let ph = between(rng, 1, 3);
        let pw = between(rng, 1, 3);
        a.push(("pooled_shape", ais(&[ph, pw])));
        let rois = site.constant_f64s("rois", t.dtype, &[nr, 5], &boxes);
        return site.op1(op, &[x, &rois], a);
    }
    maybe_str(rng, &mut a, 0.7, "mode", &["avg", "max"]);
    maybe_int(rng, &mut a, 0.7, "output_height", &[1, 3, 8]);
    maybe_int(rng, &mut a, 0.7, "output_width", &[1, 3, 8]);
    maybe_int(rng, &mut a, 0.7, "sampling_ratio", &[0, 1, 2, 5]);
    if site.opset() >= 16 {
        maybe_str(
            rng,
            &mut a,
            0.7,
            "coordinate_transformation_mode",
            &["half_pixel", "output_half_pixel"],
        );
    }
    let rois = site.constant_f64s("rois", t.dtype, &[nr, 4], &boxes);
    let bi = site.constant_i64s("batch_indices", &[nr], &idx);
    site.op1(op, &[x, &rois, &bi], a)
}

fn four(d: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(d, 4)]
}

fn grid_sample(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let (ho, wo) = (between(rng, 1, 6), between(rng, 1, 6));
    let gd = if t.dtype.is_float() {
        t.dtype
    } else {
        DType::F32
    };
    let g = site.random_constant("grid", gd, &[d[0], ho, wo, 2], -1.1, 1.1, rng);
    let mut a = Attrs::new();
    let modes: &[&str] = if site.opset() >= 20 {
        &["linear", "nearest", "cubic"]
    } else {
        &["bilinear", "nearest", "bicubic"]
    };
    maybe_str(rng, &mut a, 0.8, "mode", modes);
    maybe_str(
        rng,
        &mut a,
        0.8,
        "padding_mode",
        &["zeros", "border", "reflection"],
    );
    flag(rng, &mut a, "align_corners");
    site.op1(op, &[x, &g], a)
}

/// `ConvInteger` / `QLinearConv` on an 8-bit input: weights of the input's dtype, scalar zero
/// points and scales.
fn qconv(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let c = d[1];
    let group = group_of(rng, c);
    let m = group * if group > 4 { 1 } else { between(rng, 1, 2) };
    let w = window(rng, &d[2..], true);
    let mut wshape = vec![m, c / group];
    wshape.extend(&w.kernel);
    let dt = t.dtype;
    let wn = site.random_constant("w", dt, &wshape, 0.0, 8.0, rng);
    let mut a = Attrs::new();
    w.attrs(rng, &mut a, false, true);
    if group != 1 || chance(rng, 0.3) {
        a.push(("group", ai(group)));
    }
    let zp = |site: &mut Site<'_>, h: &str| site.constant_f64s(h, dt, &[], &[2.0]);
    if op == "ConvInteger" {
        if chance(rng, 0.5) {
            let xz = zp(site, "x_zero_point");
            let wz = zp(site, "w_zero_point");
            return site.op1(op, &[x, &wn, &xz, &wz], a);
        }
        return site.op1(op, &[x, &wn], a);
    }
    let sc = |site: &mut Site<'_>, h: &str, v: f64| site.constant_f64s(h, DType::F32, &[], &[v]);
    let xs = sc(site, "x_scale", 0.05);
    let xz = zp(site, "x_zero_point");
    let ws = sc(site, "w_scale", 0.02);
    let wz = zp(site, "w_zero_point");
    let ys = sc(site, "y_scale", 0.1);
    let yz = zp(site, "y_zero_point");
    let mut ins = vec![x.to_string(), xs, xz, wn, ws, wz, ys, yz];
    if chance(rng, 0.5) {
        ins.push(site.random_constant("bias", DType::I32, &[m], -20.0, 20.0, rng));
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    site.op1(op, &refs, a)
}

fn i32_same(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::I32, r)]
}

fn qlinear_matmul(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let k = d[d.len() - 1];
    let n = between(rng, 1, 8);
    let dt = t.dtype;
    let b = site.random_constant("b", dt, &[k, n], 0.0, 8.0, rng);
    let sc = |site: &mut Site<'_>, h: &str, v: f64| site.constant_f64s(h, DType::F32, &[], &[v]);
    let zp = |site: &mut Site<'_>, h: &str| site.constant_f64s(h, dt, &[], &[1.0]);
    let as_ = sc(site, "a_scale", 0.05);
    let az = zp(site, "a_zero_point");
    let bs = sc(site, "b_scale", 0.05);
    let bz = zp(site, "b_zero_point");
    let ys = sc(site, "y_scale", 0.2);
    let yz = zp(site, "y_zero_point");
    site.op1(op, &[x, &as_, &az, &b, &bs, &bz, &ys, &yz], vec![])
}

fn deform_conv(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let (n, c, h, w) = (d[0], d[1], d[2], d[3]);
    let group = group_of(rng, c);
    let og = group_of(rng, c);
    let m = group * if group > 4 { 1 } else { between(rng, 1, 2) };
    let mut win = window(rng, &[h, w], true);
    win.auto_pad = None;
    let mut a = Attrs::new();
    win.attrs(rng, &mut a, false, true);
    let pads = win.pads.clone().unwrap_or(vec![0; 4]);
    let out: Vec<i64> = (0..2)
        .map(|i| {
            let eff = (win.kernel[i] - 1) * win.dilations[i] + 1;
            (d[2 + i] + pads[i] + pads[i + 2] - eff) / win.strides[i] + 1
        })
        .collect();
    if group != 1 || chance(rng, 0.3) {
        a.push(("group", ai(group)));
    }
    if og != 1 || chance(rng, 0.3) {
        a.push(("offset_group", ai(og)));
    }
    let kk = win.kernel[0] * win.kernel[1];
    let wn = weight(
        site,
        t.dtype,
        &[m, c / group, win.kernel[0], win.kernel[1]],
        c / group * kk,
        rng,
    );
    let off = site.random_constant(
        "offset",
        t.dtype,
        &[n, 2 * og * kk, out[0], out[1]],
        -1.0,
        1.0,
        rng,
    );
    let mut ins = vec![x.to_string(), wn, off];
    if chance(rng, 0.5) {
        ins.push(site.random_constant("bias", t.dtype, &[m], -0.5, 0.5, rng));
        if chance(rng, 0.5) {
            ins.push(site.random_constant(
                "mask",
                t.dtype,
                &[n, og * kk, out[0], out[1]],
                0.0,
                1.0,
                rng,
            ));
        }
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    site.op1(op, &refs, a)
}

fn affine_grid(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let nb = d[0].clamp(1, 4);
    let theta = site.adapt(x, &TensorType::fixed(t.dtype, &[nb, 2, 3]))?;
    let size = site.constant_i64s(
        "size",
        &[4],
        &[nb, 1, between(rng, 1, 6), between(rng, 1, 6)],
    );
    let mut a = Attrs::new();
    flag(rng, &mut a, "align_corners");
    site.op1(op, &[&theta, &size], a)
}

fn col2im(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let nb = d[0].clamp(1, 3);
    let c = between(rng, 1, 2);
    let block = [between(rng, 1, 2), between(rng, 1, 2)];
    let image = [between(rng, 2, 5), between(rng, 2, 5)];
    let mut a = Attrs::new();
    let strides = [pick(rng, &[1, 1, 2]), pick(rng, &[1, 1, 2])];
    let dil = [pick(rng, &[1, 1, 2]), pick(rng, &[1, 1, 2])];
    let pads = match below(rng, 3) {
        0 => [0, 0, 0, 0],
        1 => {
            let p = between(rng, 1, 2);
            [p, p, p, p]
        }
        _ => [below(rng, 2) as i64, 0, below(rng, 2) as i64, 1],
    };
    let mut l = 1;
    for i in 0..2 {
        let eff = (block[i] - 1) * dil[i] + 1;
        let span = image[i] + pads[i] + pads[i + 2] - eff;
        if span < 0 {
            return Err("Col2Im: block larger than the image".into());
        }
        l *= span / strides[i] + 1;
    }
    // Defaults stated or left out. (An empty list is not a valid way to state them: ONNX
    // shape inference wants one value per spatial axis.)
    let state = |rng: &mut SplitMix64, a: &mut Attrs, name: &'static str, v: &[i64], dflt: bool| {
        if !dflt || chance(rng, 0.5) {
            a.push((name, ais(v)));
        }
    };
    state(rng, &mut a, "strides", &strides, strides == [1, 1]);
    state(rng, &mut a, "dilations", &dil, dil == [1, 1]);
    state(rng, &mut a, "pads", &pads, pads == [0, 0, 0, 0]);
    let cols = site.adapt(
        x,
        &TensorType::fixed(t.dtype, &[nb, c * block[0] * block[1], l]),
    )?;
    let im = site.constant_i64s("image_shape", &[2], &image);
    let bl = site.constant_i64s("block_shape", &[2], &block);
    site.op1(op, &[&cols, &im, &bl], a)
}

pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    list.push(R::boxed("Conv", Dt::Reg, SPATIAL, same, conv));
    list.push(R::boxed("ConvTranspose", Dt::Reg, SPATIAL, same, conv));
    for op in ["MaxPool", "AveragePool", "LpPool"] {
        list.push(R::boxed(op, Dt::Reg, SPATIAL, same, pool));
    }
    for op in ["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"] {
        list.push(R::boxed(op, Dt::Reg, SPATIAL, same, global_pool));
    }
    list.push(R::boxed("MaxUnpool", Dt::Reg, SPATIAL, same, max_unpool));
    list.push(R::boxed(
        "BatchNormalization",
        Dt::Reg,
        (2, super::MAX_RANK),
        same,
        batch_norm,
    ));
    list.push(R::boxed(
        "InstanceNormalization",
        Dt::Reg,
        SPATIAL,
        same,
        instance_norm,
    ));
    list.push(R::boxed(
        "LayerNormalization",
        Dt::Reg,
        RANK1,
        same,
        layer_norm,
    ));
    list.push(R::boxed(
        "GroupNormalization",
        Dt::Reg,
        SPATIAL,
        same,
        group_norm,
    ));
    list.push(R::boxed("LRN", Dt::Reg, SPATIAL, same, lrn));
    list.push(R::boxed("MatMul", Dt::Reg, RANK1, matmul_outs, matmul));
    list.push(R::boxed(
        "MatMulInteger",
        Dt::Reg,
        RANK1,
        matmul_int_outs,
        matmul,
    ));
    list.push(R::boxed("Gemm", Dt::Reg, (2, 2), same, gemm));
    list.push(R::boxed(
        "Det",
        Dt::Reg,
        (2, super::MAX_RANK),
        det_outs,
        det,
    ));
    list.push(R::boxed("Einsum", Dt::Reg, (1, 5), same_dtype_le, einsum));
    for op in ["LSTM", "GRU", "RNN"] {
        list.push(R::boxed(op, Dt::Reg, (3, 3), rnn_outs, rnn));
    }
    list.push(R::boxed("RoiAlign", Dt::Reg, (4, 4), four, roi));
    list.push(R::boxed("MaxRoiPool", Dt::Reg, (4, 4), four, roi));
    list.push(R::boxed("GridSample", Dt::Reg, (4, 4), four, grid_sample));
    list.push(R::boxed("ConvInteger", Dt::Reg, SPATIAL, i32_same, qconv));
    list.push(R::boxed("QLinearConv", Dt::Reg, SPATIAL, same, qconv));
    list.push(R::boxed(
        "QLinearMatMul",
        Dt::Reg,
        (2, super::MAX_RANK),
        same,
        qlinear_matmul,
    ));
    list.push(R::boxed("DeformConv", Dt::Reg, (4, 4), four, deform_conv));
    list.push(R::boxed("AffineGrid", Dt::Reg, (3, 3), four, affine_grid));
    list.push(R::boxed(
        "Col2Im",
        Dt::Only(&[DType::F32, DType::F16, DType::F64]),
        (3, 3),
        four,
        col2im,
    ));
}
