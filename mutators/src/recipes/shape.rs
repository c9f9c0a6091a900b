//! Shape and indexing ops (reshapes, transposes, slicing, padding, gathers, scatters,
//! resizes, ...) and the quantization ops. Index constants are generated in range and, for
//! scatters, without duplicates, so every build is deterministic.
use super::util::*;
use super::{MAX_RANK, Recipe};
use crate::builder::SplitMix64;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::site::Site;

const LIMIT: i64 = 1 << 16;

fn axes_const(site: &mut Site<'_>, axes: &[i64]) -> String {
    site.constant_i64s("axes", &[axes.len() as i64], axes)
}

/// A random factorization of `n` into `k` dims.
fn factor(rng: &mut SplitMix64, n: i64, k: usize) -> Vec<i64> {
    let mut out = vec![1; k];
    let mut rest = n;
    let mut p = 2;
    while rest > 1 {
        while rest % p != 0 {
            p += 1;
        }
        rest /= p;
        let i = below(rng, k);
        out[i] *= p;
    }
    out
}

fn reshape(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let n: i64 = d.iter().product();
    let mut a = Attrs::new();
    let shape: Vec<i64> = match below(rng, 6) {
        0 => vec![-1],
        5 if n == 1 => {
            if chance(rng, 0.5) {
                vec![]
            } else {
                vec![1; 1 + below(rng, 3)]
            }
        }
        4 if !d.is_empty() => vec![0; d.len()],
        1 if !d.is_empty() => vec![0, -1],
        2 => {
            let k = 1 + below(rng, 5);
            let mut s = factor(rng, n, k);
            if chance(rng, 0.5) {
                let i = below(rng, k);
                s[i] = -1;
            }
            s
        }
        _ => {
            let k = 1 + below(rng, 5);
            factor(rng, n, k)
        }
    };
    if site.opset() < 5 {
        return site.op1(op, &[x], vec![("shape", ais(&shape))]);
    }
    if site.opset() >= 14 && !shape.contains(&0) {
        flag(rng, &mut a, "allowzero");
    } else if site.opset() >= 14 {
        maybe(rng, &mut a, 0.3, "allowzero", ai(0));
    }
    let s = site.constant_i64s("shape", &[shape.len() as i64], &shape);
    site.op1(op, &[x, &s], a)
}

fn reshape_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    (0..=r.max(5)).map(|k| (d, k)).collect()
}

fn flatten(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let r = t.rank().unwrap_or(1) as i64;
    let mut a = Attrs::new();
    if chance(rng, 0.8) {
        let ax = between(rng, 0, r);
        let ax = if chance(rng, 0.3) && ax > 0 {
            ax - r
        } else {
            ax
        };
        a.push(("axis", ai(ax)));
    }
    site.op1(op, &[x], a)
}

fn two(d: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(d, 2)]
}

fn transpose(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let r = t.rank().unwrap_or(0);
    let mut a = Attrs::new();
    if chance(rng, 0.8) {
        let perm: Vec<i64> = subset(rng, r, r).into_iter().map(|v| v as i64).collect();
        let mut perm = perm;
        for i in (1..perm.len()).rev() {
            let j = below(rng, i + 1);
            perm.swap(i, j);
        }
        a.push(("perm", ais(&perm)));
    }
    site.op1(op, &[x], a)
}

fn squeeze(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let mut d = dims(t);
    let mut v = x.to_string();
    let ones: Vec<usize> = (0..d.len()).filter(|&i| d[i] == 1).collect();
    let ones = if ones.is_empty() {
        // Makes a size-1 axis to squeeze.
        let at = below(rng, d.len() + 1);
        v = if site.opset() >= 13 {
            let c = axes_const(site, &[at as i64]);
            site.op1("Unsqueeze", &[x, &c], vec![])?
        } else {
            site.op1("Unsqueeze", &[x], vec![("axes", ais(&[at as i64]))])?
        };
        d.insert(at, 1);
        vec![at]
    } else {
        ones
    };
    let r = d.len() as i64;
    let k = 1 + below(rng, ones.len());
    let axes: Vec<i64> = subset(rng, ones.len(), k)
        .into_iter()
        .map(|i| {
            let a = ones[i] as i64;
            if chance(rng, 0.3) { a - r } else { a }
        })
        .collect();
    let omit = chance(rng, 0.25);
    if site.opset() >= 13 {
        if omit {
            return site.op1(op, &[&v], vec![]);
        }
        let c = axes_const(site, &axes);
        site.op1(op, &[&v, &c], vec![])
    } else if omit {
        site.op1(op, &[&v], vec![])
    } else {
        site.op1(op, &[&v], vec![("axes", ais(&axes))])
    }
}

fn unsqueeze(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let r = t.rank().unwrap_or(0);
    let k = 1 + below(rng, (MAX_RANK - 1 - r).clamp(1, 2));
    let out_r = r + k;
    let axes: Vec<i64> = subset(rng, out_r, k)
        .into_iter()
        .map(|a| {
            if chance(rng, 0.3) {
                a as i64 - out_r as i64
            } else {
                a as i64
            }
        })
        .collect();
    if site.opset() >= 13 {
        let c = axes_const(site, &axes);
        site.op1(op, &[x, &c], vec![])
    } else {
        site.op1(op, &[x], vec![("axes", ais(&axes))])
    }
}

fn unsqueeze_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r + 1), (d, r + 2)]
        .into_iter()
        .filter(|&(_, k)| k < MAX_RANK)
        .collect()
}

fn expand(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let n: i64 = d.iter().product::<i64>().max(1);
    let mut shape: Vec<i64> = match below(rng, 3) {
        0 => d.iter().map(|&v| if v == 1 { 2 } else { v }).collect(),
        1 => d.iter().map(|&v| if v == 1 { 3 } else { 1 }).collect(),
        _ => d.clone(),
    };
    if d.len() < 4 && chance(rng, 0.5) {
        shape.insert(0, 2);
    }
    let grown: i64 = shape
        .iter()
        .rev()
        .zip(d.iter().rev().chain(std::iter::repeat(&1)))
        .map(|(&s, &v)| s.max(v))
        .product();
    if grown > LIMIT || grown > n * 8 {
        shape = d.clone();
    }
    let s = site.constant_i64s("shape", &[shape.len() as i64], &shape);
    site.op1(op, &[x, &s], vec![])
}

fn expand_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r), (d, r + 1)]
}

fn tile(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let n: i64 = d.iter().product();
    let mut reps: Vec<i64> = d.iter().map(|_| pick(rng, &[1, 1, 2])).collect();
    if n * reps.iter().product::<i64>() > LIMIT.min(n * 4) {
        reps = vec![1; d.len()];
        let i = below(rng, d.len());
        if n * 2 <= LIMIT {
            reps[i] = 2;
        }
    }
    let c = site.constant_i64s("repeats", &[reps.len() as i64], &reps);
    site.op1(op, &[x, &c], vec![])
}

fn slice(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let k = 1 + below(rng, r);
    let axes = subset(rng, r, k);
    let (mut st, mut en, mut sp, mut ax) = (vec![], vec![], vec![], vec![]);
    for &i in &axes {
        let n = d[i];
        let step = if site.opset() < 10 {
            1
        } else {
            pick(rng, &[1, 1, 2, -1, -2])
        };
        let (s, e) = if step > 0 {
            let s = between(rng, 0, (n - 1).max(0));
            let e = between(rng, s + 1, n + 2);
            (s, e)
        } else {
            let s = between(rng, 0, (n - 1).max(0));
            (s, between(rng, -1 - n - 1, s - 1).max(-n - 2))
        };
        // Negative starts/ends (counted from the end) sometimes.
        let s = if step > 0 && chance(rng, 0.2) {
            s - n
        } else {
            s
        };
        let e = if e > n && chance(rng, 0.5) {
            i64::MAX
        } else {
            e
        };
        st.push(s);
        en.push(e);
        sp.push(step);
        ax.push(if chance(rng, 0.3) {
            i as i64 - r as i64
        } else {
            i as i64
        });
    }
    if site.opset() < 10 {
        let a = vec![("starts", ais(&st)), ("ends", ais(&en)), ("axes", ais(&ax))];
        return site.op1(op, &[x], a);
    }
    let i32_idx = chance(rng, 0.3);
    let c = |site: &mut Site<'_>, h: &str, v: &[i64]| {
        if i32_idx {
            let f: Vec<f64> = v
                .iter()
                .map(|&z| z.clamp(i32::MIN as i64, i32::MAX as i64) as f64)
                .collect();
            site.constant_f64s(h, DType::I32, &[v.len() as i64], &f)
        } else {
            site.constant_i64s(h, &[v.len() as i64], v)
        }
    };
    let sc = c(site, "starts", &st);
    let ec = c(site, "ends", &en);
    let all_axes = ax.len() == r && ax.iter().enumerate().all(|(i, &a)| a == i as i64);
    let unit = sp.iter().all(|&s| s == 1);
    if all_axes && unit && chance(rng, 0.5) {
        return site.op1(op, &[x, &sc, &ec], vec![]);
    }
    let ac = c(site, "axes", &ax);
    if unit && chance(rng, 0.5) {
        return site.op1(op, &[x, &sc, &ec, &ac], vec![]);
    }
    let pc = c(site, "steps", &sp);
    site.op1(op, &[x, &sc, &ec, &ac, &pc], vec![])
}

fn pad(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let opset = site.opset();
    let modes: &[&str] = if opset >= 19 {
        &["constant", "reflect", "edge", "wrap"]
    } else {
        &["constant", "reflect", "edge"]
    };
    let mode = pick(rng, modes);
    // Axes to pad (all unless the axes input exists and is used).
    let use_axes = opset >= 18 && chance(rng, 0.4);
    let axes: Vec<usize> = if use_axes {
        {
            let k = 1 + below(rng, r);
            subset(rng, r, k)
        }
    } else {
        (0..r).collect()
    };
    let n: i64 = d.iter().product();
    let mut pads = vec![0i64; 2 * axes.len()];
    for (j, &i) in axes.iter().enumerate() {
        let hi = match mode {
            "reflect" => (d[i] - 1).min(2),
            "wrap" => d[i].min(2),
            _ => 2,
        };
        pads[j] = between(rng, 0, hi.max(0));
        pads[j + axes.len()] = between(rng, 0, hi.max(0));
        if mode == "constant" && chance(rng, 0.15) && d[i] > 1 {
            pads[j] = -1;
        }
    }
    let grown: i64 = axes
        .iter()
        .enumerate()
        .map(|(j, &i)| (d[i] + pads[j] + pads[j + axes.len()]) as f64 / d[i].max(1) as f64)
        .product::<f64>() as i64
        * n;
    if grown > LIMIT {
        pads.iter_mut().for_each(|p| *p = (*p).min(0));
    }
    let mut a = Attrs::new();
    if mode != "constant" || chance(rng, 0.5) {
        a.push(("mode", astr(mode)));
    }
    if opset < 11 {
        if chance(rng, 0.3) && mode == "constant" && grown <= LIMIT {
            let v = pick(rng, &[1, 2]);
            pads.iter_mut().for_each(|p| *p = v);
            if n * 5i64.pow(r as u32) > LIMIT {
                pads.iter_mut().for_each(|p| *p = 0);
            }
        }
        a.push((if opset < 2 { "paddings" } else { "pads" }, ais(&pads)));
        if mode == "constant" {
            float_of(rng, &mut a, "value", &[-1.0, 0.0, 0.5, 2.0, 11.0]);
        }
        return site.op1(op, &[x], a);
    }
    let pc = site.constant_i64s("pads", &[pads.len() as i64], &pads);
    let mut ins = vec![x.to_string(), pc];
    if mode == "constant" && chance(rng, 0.5) || use_axes {
        let v = if t.dtype == DType::Bool {
            1.0
        } else {
            between(rng, 0, 3) as f64
        };
        ins.push(if mode == "constant" {
            site.constant_f64s("value", t.dtype, &[], &[v])
        } else {
            String::new()
        });
    }
    if use_axes {
        let ax: Vec<i64> = axes.iter().map(|&i| i as i64).collect();
        ins.push(axes_const(site, &ax));
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    site.op1(op, &refs, a)
}

fn concat(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let ax = axis(rng, r);
    let i = (ax + r as i64) as usize % r;
    let mut ins = vec![x.to_string()];
    for _ in 0..below(rng, 3) {
        if chance(rng, 0.3) {
            ins.push(x.to_string());
        } else {
            let mut s = d.clone();
            s[i] = between(rng, 1, 3);
            let c = konst(site, "part", t.dtype, &s, -2.0, 2.0, rng);
            ins.insert(below(rng, ins.len() + 1), c);
        }
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    site.op1(op, &refs, vec![("axis", ai(ax))])
}

fn split(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let ax = axis(rng, r);
    let n = d[(ax + r as i64) as usize % r];
    if n < 1 {
        return Err("Split of an empty dimension".into());
    }
    let mut a = Attrs::new();
    if ax != 0 || chance(rng, 0.5) {
        a.push(("axis", ai(ax)));
    }
    let opset = site.opset();
    // Equal parts (a divisor of n), or explicit sizes.
    let equal = chance(rng, 0.5);
    if equal {
        let divs: Vec<i64> = (1..=n.min(5)).filter(|k| n % k == 0).collect();
        let k = pick(rng, &divs);
        if opset >= 18 {
            a.push(("num_outputs", ai(k)));
        }
        return Ok(site.op(op, &[x], a, k as usize)?.remove(0));
    }
    let k = between(rng, 1, n.min(4));
    let mut sizes = vec![1i64; k as usize];
    for _ in 0..(n - k) {
        let i = below(rng, k as usize);
        sizes[i] += 1;
    }
    if opset >= 13 {
        let c = site.constant_i64s("split", &[k], &sizes);
        Ok(site.op(op, &[x, &c], a, k as usize)?.remove(0))
    } else {
        a.push(("split", ais(&sizes)));
        Ok(site.op(op, &[x], a, k as usize)?.remove(0))
    }
}

/// In-range indices for an axis of size `n` (some negative), as i64 or i32.
fn indices(
    site: &mut Site<'_>,
    rng: &mut SplitMix64,
    n: i64,
    shape: &[i64],
    i32_ok: bool,
) -> String {
    let count: i64 = shape.iter().product();
    let vals: Vec<i64> = (0..count)
        .map(|_| {
            let v = between(rng, 0, n - 1);
            if chance(rng, 0.2) { v - n } else { v }
        })
        .collect();
    if i32_ok && chance(rng, 0.3) {
        let f: Vec<f64> = vals.iter().map(|&v| v as f64).collect();
        site.constant_f64s("indices", DType::I32, shape, &f)
    } else {
        site.constant_i64s("indices", shape, &vals)
    }
}

fn gather(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let ax = axis(rng, r);
    let n = d[(ax + r as i64) as usize % r];
    let q = below(rng, (MAX_RANK + 1 - r).min(3));
    let shape: Vec<i64> = (0..q).map(|_| between(rng, 1, 3)).collect();
    let idx = indices(site, rng, n, &shape, true);
    let mut a = Attrs::new();
    if ax != 0 || chance(rng, 0.5) {
        a.push(("axis", ai(ax)));
    }
    site.op1(op, &[x, &idx], a)
}

fn gather_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    (0..3)
        .map(|q| r + q - 1)
        .filter(|&k| k <= MAX_RANK)
        .map(|k| (d, k))
        .collect()
}

fn gather_elements(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let ax = axis(rng, r);
    let i = (ax + r as i64) as usize % r;
    let shape: Vec<i64> = d
        .iter()
        .enumerate()
        .map(|(j, &v)| {
            if j == i {
                between(rng, 1, 3)
            } else {
                between(rng, 1, v)
            }
        })
        .collect();
    let idx = indices(site, rng, d[i], &shape, true);
    let mut a = Attrs::new();
    if ax != 0 || chance(rng, 0.5) {
        a.push(("axis", ai(ax)));
    }
    site.op1(op, &[x, &idx], a)
}

fn gather_nd(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let b = if site.opset() >= 12 && r >= 2 {
        pick(rng, &[0, 0, 1, 2]).min(r - 1)
    } else {
        0
    };
    let k = between(rng, 1, (r - b) as i64) as usize;
    if d[b..b + k].contains(&0) {
        return Err("GatherND would index an empty dimension".into());
    }
    let extra = between(rng, 1, 3);
    let mut shape: Vec<i64> = d[..b].to_vec();
    shape.push(extra);
    shape.push(k as i64);
    let count: i64 = shape.iter().product::<i64>() / k as i64;
    let mut vals = Vec::new();
    for _ in 0..count {
        for j in 0..k {
            vals.push(between(rng, 0, d[b + j] - 1));
        }
    }
    let idx = site.constant_i64s("indices", &shape, &vals);
    let mut a = Attrs::new();
    if site.opset() >= 12 && (b != 0 || chance(rng, 0.3)) {
        a.push(("batch_dims", ai(b as i64)));
    }
    site.op1(op, &[x, &idx], a)
}

fn scatter_elements(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let ax = axis(rng, r);
    let i = (ax + r as i64) as usize % r;
    // One index per position along the axis: no duplicates.
    let mut shape = d.clone();
    shape[i] = 1;
    let idx = indices(site, rng, d[i], &shape, true);
    let upd = konst(site, "updates", t.dtype, &shape, -2.0, 2.0, rng);
    let mut a = Attrs::new();
    if ax != 0 || chance(rng, 0.5) {
        a.push(("axis", ai(ax)));
    }
    if op == "ScatterElements" && site.opset() >= 16 {
        let red = if site.opset() >= 18 {
            pick(rng, &["none", "add", "mul", "max", "min"])
        } else {
            pick(rng, &["none", "add", "mul"])
        };
        maybe(rng, &mut a, 0.8, "reduction", astr(red));
    }
    site.op1(op, &[x, &idx, &upd], a)
}

fn scatter_nd(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let k = between(rng, 1, r.min(2) as i64) as usize;
    // Distinct index tuples over the first k dims.
    let total: i64 = d[..k].iter().product();
    let m = between(rng, 1, total.min(4));
    let mut flat: Vec<i64> = (0..total).collect();
    for i in (1..flat.len()).rev() {
        let j = below(rng, i + 1);
        flat.swap(i, j);
    }
    let mut vals = Vec::new();
    for &f in flat.iter().take(m as usize) {
        let mut rest = f;
        let mut tuple = vec![0; k];
        for j in (0..k).rev() {
            tuple[j] = rest % d[j];
            rest /= d[j];
        }
        vals.extend(tuple);
    }
    let idx = site.constant_i64s("indices", &[m, k as i64], &vals);
    let ushape: Vec<i64> = std::iter::once(m).chain(d[k..].iter().copied()).collect();
    let upd = konst(site, "updates", t.dtype, &ushape, -2.0, 2.0, rng);
    let mut a = Attrs::new();
    if site.opset() >= 16 {
        let red = if site.opset() >= 18 {
            pick(rng, &["none", "add", "mul", "max", "min"])
        } else {
            pick(rng, &["none", "add", "mul"])
        };
        maybe(rng, &mut a, 0.8, "reduction", astr(red));
    }
    site.op1(op, &[x, &idx, &upd], a)
}

fn depth_to_space(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let b = pick(rng, &[1, 2, 2, 3, 4]);
    let mut v = x.to_string();
    if d[1] % (b * b) != 0 {
        // Repeats the channels b*b times so that they divide.
        if d.iter().product::<i64>() * b * b > LIMIT {
            return Err("DepthToSpace: input too large to tile".into());
        }
        let reps = site.constant_i64s("repeats", &[4], &[1, b * b, 1, 1]);
        v = site.op1("Tile", &[x, &reps], vec![])?;
    }
    let mut a = vec![("blocksize", ai(b))];
    if site.opset() >= 11 {
        maybe_str(rng, &mut a, 0.7, "mode", &["DCR", "CRD"]);
    }
    site.op1(op, &[&v], a)
}

fn space_to_depth(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let m = d[2].min(d[3]);
    let cands: Vec<i64> = [1, 2, 3, 4].into_iter().filter(|&b| b <= m).collect();
    if cands.is_empty() {
        return Err(format!("{op}: a spatial dimension is empty"));
    }
    let b = pick(rng, &cands);
    let mut v = x.to_string();
    let (h, w) = (d[2] / b * b, d[3] / b * b);
    if h != d[2] || w != d[3] {
        let st = site.constant_i64s("starts", &[2], &[0, 0]);
        let en = site.constant_i64s("ends", &[2], &[h, w]);
        let ax = site.constant_i64s("axes", &[2], &[2, 3]);
        v = site.op1("Slice", &[x, &st, &en, &ax], vec![])?;
    }
    site.op1(op, &[&v], vec![("blocksize", ai(b))])
}

fn shape_op(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let r = t.rank().unwrap_or(0) as i64;
    let mut a = Attrs::new();
    if site.opset() >= 15 {
        let pick_bound = |rng: &mut SplitMix64| match below(rng, 4) {
            0 => -1 - between(rng, 0, r.max(1) - 1),
            1 => 0,
            2 => 1,
            _ => between(rng, 2, r.max(2) + 1),
        };
        if chance(rng, 0.6) {
            a.push(("start", ai(pick_bound(rng))));
        }
        if chance(rng, 0.6) {
            a.push(("end", ai(pick_bound(rng))));
        }
    }
    site.op1(op, &[x], a)
}

fn i64_rank1(_: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(DType::I64, 1)]
}

fn size(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    _rng: &mut SplitMix64,
) -> Result<String, String> {
    site.op1(op, &[x], vec![])
}

fn i64_scalar_out(_: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(DType::I64, 0)]
}

fn resize(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let n: i64 = d.iter().product();
    let opset = site.opset();
    // Scales on the last two axes (outer ones stay 1), bounded by the element limit.
    let spatial_from = r.saturating_sub(2);
    let mut scales: Vec<f64> = (0..r)
        .map(|i| {
            if i < spatial_from {
                1.0
            } else {
                pick(rng, &[0.5, 1.0, 2.0, 1.5])
            }
        })
        .collect();
    let grow: f64 = scales.iter().product();
    if n as f64 * grow > LIMIT as f64 {
        scales.iter_mut().for_each(|s| *s = s.min(1.0));
    }
    let sizes: Vec<i64> = d
        .iter()
        .zip(&scales)
        .map(|(&v, &s)| ((v as f64 * s).floor() as i64).max(1))
        .collect();
    let linear_ok = r == 2 || r == 4;
    let mode = if linear_ok {
        pick(rng, &["nearest", "linear", "cubic"])
    } else {
        "nearest"
    };
    let mut a = Attrs::new();
    if op == "Upsample" {
        let mode = if mode == "cubic" { "linear" } else { mode };
        let up: Vec<f64> = scales.iter().map(|&s| s.max(1.0).round()).collect();
        if opset < 7 {
            if r != 4 {
                return Err("Upsample before opset 7 takes 4-D input".into());
            }
            let mode = if mode == "nearest" {
                "nearest"
            } else {
                "bilinear"
            };
            a.push(("mode", astr(mode)));
            a.push(("height_scale", af(up[2])));
            a.push(("width_scale", af(up[3])));
            return site.op1(op, &[x], a);
        }
        maybe(rng, &mut a, 0.8, "mode", astr(mode));
        if opset >= 9 {
            let s = site.constant_f64s("scales", DType::F32, &[r as i64], &up);
            return site.op1(op, &[x, &s], a);
        }
        let f: Vec<f32> = up.iter().map(|&v| v as f32).collect();
        a.push(("scales", crate::ir::attr::AttrValue::Floats(f)));
        return site.op1(op, &[x], a);
    }
    if mode != "nearest" || chance(rng, 0.5) {
        a.push(("mode", astr(mode)));
    }
    if opset >= 11 {
        let ctm = pick(
            rng,
            &[
                "half_pixel",
                "align_corners",
                "asymmetric",
                "pytorch_half_pixel",
                "tf_crop_and_resize",
            ],
        );
        let ctm = if mode == "nearest" && ctm == "tf_crop_and_resize" {
            "asymmetric"
        } else {
            ctm
        };
        maybe(
            rng,
            &mut a,
            0.8,
            "coordinate_transformation_mode",
            astr(ctm),
        );
        if mode == "cubic" {
            float_of(rng, &mut a, "cubic_coeff_a", &[-0.5, -0.75, -0.72, -0.9]);
            flag(rng, &mut a, "exclude_outside");
        }
        if mode == "nearest" {
            maybe_str(
                rng,
                &mut a,
                0.8,
                "nearest_mode",
                &["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"],
            );
        }
        if ctm == "tf_crop_and_resize" {
            float_of(
                rng,
                &mut a,
                "extrapolation_value",
                &[-1.0, 0.0, 0.5, 2.0, 11.0],
            );
        }
        if opset >= 18 && mode != "nearest" {
            flag(rng, &mut a, "antialias");
        }
    }
    let crop = a
        .iter()
        .any(|(k, v)| *k == "coordinate_transformation_mode" && *v == astr("tf_crop_and_resize"));
    if opset < 11 {
        let s = site.constant_f64s("scales", DType::F32, &[r as i64], &scales);
        return site.op1(op, &[x, &s], a);
    }
    let roi = if crop {
        let mut v = vec![0.0; r];
        v.extend(std::iter::repeat_n(1.0, r));
        for i in spatial_from..r {
            v[i] = 0.1;
            v[r + i] = 0.9;
        }
        site.constant_f64s("roi", DType::F32, &[2 * r as i64], &v)
    } else if opset < 13 {
        site.constant_f64s("roi", DType::F32, &[0], &[])
    } else {
        String::new()
    };
    if opset >= 18 && !crop && chance(rng, 0.4) {
        // Only the resized axes, listed by `axes`.
        let n_sp = r - spatial_from;
        let k_sp = 1 + below(rng, n_sp);
        let pickd = subset(rng, n_sp, k_sp);
        let idx: Vec<usize> = pickd.iter().map(|&i| spatial_from + i).collect();
        let ax: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
        a.push(("axes", ais(&ax)));
        let k = ax.len() as i64;
        if chance(rng, 0.5) {
            let sv: Vec<f64> = idx.iter().map(|&i| scales[i]).collect();
            let sc = site.constant_f64s("scales", DType::F32, &[k], &sv);
            return site.op1(op, &[x, "", &sc], a);
        }
        maybe_str(
            rng,
            &mut a,
            0.8,
            "keep_aspect_ratio_policy",
            &["stretch", "not_larger", "not_smaller"],
        );
        let zv: Vec<i64> = idx.iter().map(|&i| sizes[i]).collect();
        let sz = site.constant_i64s("sizes", &[k], &zv);
        return site.op1(op, &[x, "", "", &sz], a);
    }
    if chance(rng, 0.5) {
        let s = site.constant_f64s("scales", DType::F32, &[r as i64], &scales);
        site.op1(op, &[x, &roi, &s], a)
    } else {
        let empty = if opset < 13 {
            site.constant_f64s("scales", DType::F32, &[0], &[])
        } else {
            String::new()
        };
        let s = site.constant_i64s("sizes", &[r as i64], &sizes);
        site.op1(op, &[x, &roi, &empty, &s], a)
    }
}

fn compress(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let with_axis = chance(rng, 0.7);
    let ax = if with_axis { axis(rng, r) } else { 0 };
    let len = if with_axis {
        d[(ax + r as i64) as usize % r]
    } else {
        d.iter().product::<i64>().min(16)
    };
    let k = between(rng, 1, len.max(1));
    let mut c: Vec<f64> = (0..k).map(|_| below(rng, 2) as f64).collect();
    c[0] = 1.0;
    let cond = site.constant_f64s("condition", DType::Bool, &[k], &c);
    if with_axis {
        site.op1(op, &[x, &cond], vec![("axis", ai(ax))])
    } else {
        site.op1(op, &[x, &cond], vec![])
    }
}

fn compress_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r), (d, 1)]
}

fn one_hot(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let r = t.rank().unwrap_or(0) as i64;
    let depth = between(rng, 2, 4);
    // The (indices, depth, values) dtype combinations ONNX Runtime implements where x's dtype
    // allows, other ones otherwise.
    let (dd, vd) = match t.dtype {
        DType::F32 => (DType::F32, DType::F32),
        DType::I64 => (DType::I64, pick(rng, &[DType::I64, DType::F32])),
        DType::I32 => (DType::F32, pick(rng, &[DType::F32, DType::I32])),
        _ => (
            pick(rng, &[DType::I64, DType::F32]),
            pick(rng, &[DType::F32, DType::I64, DType::I32]),
        ),
    };
    let dc = if dd == DType::I64 {
        site.constant_i64s("depth", &[], &[depth])
    } else {
        site.constant_f64s("depth", dd, &[1], &[depth as f64])
    };
    let vals = site.constant_f64s("values", vd, &[2], &[0.0, 1.0]);
    let mut a = Attrs::new();
    if chance(rng, 0.7) {
        a.push(("axis", ai(between(rng, -r - 1, r))));
    }
    site.op1(op, &[x, &dc, &vals], a)
}

fn one_hot_outs(_: DType, r: usize) -> Vec<(DType, usize)> {
    [DType::F32, DType::I64, DType::I32]
        .into_iter()
        .map(|d| (d, r + 1))
        .collect()
}

fn eye_like(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let mut a = Attrs::new();
    if chance(rng, 0.7) {
        a.push(("dtype", ai(pick(rng, &[1, 2, 3, 4, 5, 6, 7, 9, 10, 11]))));
    }
    maybe_int(rng, &mut a, 0.8, "k", &[-2, -1, 0, 1, 2]);
    site.op1(op, &[x], a)
}

fn eye_outs(d: DType, _: usize) -> Vec<(DType, usize)> {
    let mut v: Vec<(DType, usize)> = [1, 2, 3, 4, 5, 6, 7, 9, 10, 11]
        .into_iter()
        .map(|c| (DType::from_code(c), 2))
        .collect();
    if !v.contains(&(d, 2)) {
        v.push((d, 2));
    }
    v
}

fn reverse_sequence(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let batch_axis = below(rng, 2) as i64;
    let time_axis = 1 - batch_axis;
    let (b, s) = (d[batch_axis as usize], d[time_axis as usize]);
    let lens: Vec<i64> = (0..b).map(|_| between(rng, 1, s)).collect();
    let lc = site.constant_i64s("sequence_lens", &[b], &lens);
    let mut a = Attrs::new();
    if batch_axis != 1 || chance(rng, 0.5) {
        a.push(("batch_axis", ai(batch_axis)));
        a.push(("time_axis", ai(time_axis)));
    }
    site.op1(op, &[x, &lc], a)
}

fn center_crop_pad(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let n: i64 = d.iter().product();
    let axes = if chance(rng, 0.5) {
        None
    } else {
        Some({
            let k = 1 + below(rng, r);
            subset(rng, r, k)
        })
    };
    let which: Vec<usize> = axes.clone().unwrap_or_else(|| (0..r).collect());
    let mut target: Vec<i64> = which
        .iter()
        .map(|&i| (d[i] + between(rng, -2, 2)).max(1))
        .collect();
    let grown: f64 = which
        .iter()
        .zip(&target)
        .map(|(&i, &s)| s as f64 / d[i] as f64)
        .product();
    if grown * n as f64 > LIMIT as f64 {
        target = which.iter().map(|&i| d[i]).collect();
    }
    let s = site.constant_i64s("shape", &[target.len() as i64], &target);
    match axes {
        Some(ax) => {
            let ax: Vec<i64> = ax.iter().map(|&a| a as i64).collect();
            site.op1(op, &[x, &s], vec![("axes", ais(&ax))])
        }
        None => site.op1(op, &[x, &s], vec![]),
    }
}

fn quantize(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = dims(t);
    let r = d.len();
    let mut a = Attrs::new();
    // Per-axis scale sometimes (opset 13+), else a scalar.
    let per_axis = site.opset() >= 13 && r >= 1 && chance(rng, 0.4);
    let (sshape, ax) = if per_axis {
        let ax = axis(rng, r);
        (vec![d[(ax + r as i64) as usize % r]], Some(ax))
    } else {
        (vec![], None)
    };
    if let Some(ax) = ax
        && (ax != 1 || chance(rng, 0.5))
    {
        a.push(("axis", ai(ax)));
    }
    // Blocked scales (opset 21+): one scale per block of `block_size` along the axis.
    let mut sshape = sshape;
    if site.opset() >= 21 && r >= 1 && chance(rng, 0.3) {
        let ax = axis(rng, r);
        let i = (ax + r as i64) as usize % r;
        let b = pick(rng, &[2, 3, 17]);
        sshape = d.clone();
        sshape[i] = (d[i] + b - 1) / b;
        a.retain(|(k, _)| *k != "axis");
        a.push(("axis", ai(ax)));
        a.push(("block_size", ai(b)));
    } else if site.opset() >= 21 && chance(rng, 0.2) {
        a.push(("block_size", ai(0)));
    }
    let n: i64 = sshape.iter().product();
    let sd = if op == "QuantizeLinear" && site.opset() >= 19 {
        t.dtype
    } else {
        DType::F32
    };
    let scale: Vec<f64> = (0..n).map(|_| rng.range(0.01, 0.2)).collect();
    let sc = site.constant_f64s("scale", sd, &sshape, &scale);
    let zd = if op == "QuantizeLinear" {
        pick(rng, &[DType::U8, DType::I8])
    } else {
        t.dtype
    };
    if op == "QuantizeLinear" && site.opset() >= 19 {
        flag(rng, &mut a, "saturate");
    }
    if chance(rng, 0.3) || (op == "DequantizeLinear" && zd == DType::I32) {
        return site.op1(op, &[x, &sc], a);
    }
    let zp = site.random_constant("zero_point", zd, &sshape, 0.0, 10.0, rng);
    site.op1(op, &[x, &sc, &zp], a)
}

fn quant_outs(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::U8, r), (DType::I8, r)]
}

fn f32_same(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::F32, r)]
}

fn dyn_quant(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    _t: &TensorType,
    _rng: &mut SplitMix64,
) -> Result<String, String> {
    Ok(site.op(op, &[x], vec![], 3)?.remove(0))
}

fn u8_same(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::U8, r)]
}

pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    let all = Dt::Only(super::GEN_DTYPES);
    list.push(R::boxed("Reshape", all, ANY_RANK, reshape_outs, reshape));
    list.push(R::boxed("Flatten", all, RANK1, two, flatten));
    list.push(R::boxed("Transpose", all, ANY_RANK, same, transpose));
    list.push(R::boxed(
        "Squeeze",
        all,
        (0, MAX_RANK - 1),
        same_dtype_le,
        squeeze,
    ));
    list.push(R::boxed(
        "Unsqueeze",
        all,
        (0, MAX_RANK - 2),
        unsqueeze_outs,
        unsqueeze,
    ));
    list.push(R::boxed(
        "Expand",
        all,
        (0, MAX_RANK - 1),
        expand_outs,
        expand,
    ));
    list.push(R::boxed("Tile", all, RANK1, same, tile));
    list.push(R::boxed("Slice", all, RANK1, same, slice));
    list.push(R::boxed("Pad", all, RANK1, same, pad));
    list.push(R::boxed("Concat", all, RANK1, same, concat));
    list.push(R::boxed("Split", all, RANK1, same, split));
    list.push(R::boxed("Gather", all, RANK1, gather_outs, gather));
    list.push(R::boxed(
        "GatherElements",
        all,
        RANK1,
        same,
        gather_elements,
    ));
    list.push(R::boxed("GatherND", all, RANK1, same_dtype_le, gather_nd));
    list.push(R::boxed(
        "ScatterElements",
        all,
        RANK1,
        same,
        scatter_elements,
    ));
    list.push(R::boxed("Scatter", all, RANK1, same, scatter_elements));
    list.push(R::boxed("ScatterND", all, RANK1, same, scatter_nd));
    list.push(R::boxed("DepthToSpace", all, (4, 4), same, depth_to_space));
    list.push(R::boxed("SpaceToDepth", all, (4, 4), same, space_to_depth));
    list.push(R::boxed("Shape", all, ANY_RANK, i64_rank1, shape_op));
    list.push(R::boxed("Size", all, ANY_RANK, i64_scalar_out, size));
    list.push(R::boxed("Resize", all, RANK1, same, resize));
    list.push(R::boxed("Upsample", all, RANK1, same, resize));
    list.push(R::boxed("Compress", all, RANK1, compress_outs, compress));
    list.push(R::boxed(
        "OneHot",
        Dt::Reg,
        (1, MAX_RANK - 1),
        one_hot_outs,
        one_hot,
    ));
    list.push(R::boxed("EyeLike", Dt::Reg, (2, 2), eye_outs, eye_like));
    list.push(R::boxed(
        "ReverseSequence",
        all,
        (2, MAX_RANK),
        same,
        reverse_sequence,
    ));
    list.push(R::boxed("CenterCropPad", all, RANK1, same, center_crop_pad));
    list.push(R::boxed(
        "QuantizeLinear",
        Dt::Reg,
        ANY_RANK,
        quant_outs,
        quantize,
    ));
    list.push(R::boxed(
        "DequantizeLinear",
        Dt::Reg,
        ANY_RANK,
        f32_same,
        quantize,
    ));
    list.push(R::boxed(
        "DynamicQuantizeLinear",
        Dt::Reg,
        ANY_RANK,
        u8_same,
        dyn_quant,
    ));
}
