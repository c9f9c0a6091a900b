//! The recipe table: one entry per op type (see [`super::generic::Generic`]); ops whose
//! weights depend on drawn attributes have their own builder in `nn.rs`.
use super::generic::{Generic, bool_same, no_fixed, only_x, reduced, same};
use super::{GEN_DTYPES, Recipe};
use crate::builder::SplitMix64;
use crate::ir::DType;
use crate::ir::attr::AttrValue;
use crate::ir::types::TensorType;
use crate::site::Site;

type R = Result<Vec<String>, String>;

const FLOATS: &[DType] = &[DType::F32, DType::F16, DType::F64];
const F32: &[DType] = &[DType::F32];
const BOOL: &[DType] = &[DType::Bool];
const UINTS: &[DType] = &[DType::U8, DType::U16, DType::U32, DType::U64];

fn dims(t: &TensorType) -> Vec<i64> {
    t.static_dims().unwrap_or_default()
}

fn pick(rng: &mut SplitMix64, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

/// A constant of `x`'s dtype with a shape that broadcasts against `dims`: the same shape, a
/// scalar, the last dim alone, or ones but one dim.
fn broadcast_const(
    site: &mut Site<'_>,
    t: &TensorType,
    lo: f64,
    hi: f64,
    rng: &mut SplitMix64,
) -> String {
    let d = dims(t);
    let shape: Vec<i64> = match pick(rng, 4) {
        0 => d.clone(),
        1 => Vec::new(),
        2 => d.last().map(|&l| vec![l]).unwrap_or_default(),
        _ => {
            let mut s = vec![1; d.len()];
            if !d.is_empty() {
                let k = pick(rng, d.len());
                s[k] = d[k];
            }
            s
        }
    };
    site.random_constant("operand", t.dtype, &shape, lo, hi, rng)
}

fn binary(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let c = broadcast_const(site, t, -2.0, 2.0, rng);
    Ok(if pick(rng, 4) == 0 {
        vec![c, x.to_string()]
    } else {
        vec![x.to_string(), c]
    })
}

fn binary_nonzero(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let c = broadcast_const(site, t, 1.0, 4.0, rng);
    Ok(vec![x.to_string(), c])
}

fn pow_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let c = broadcast_const(site, t, 0.0, 3.0, rng);
    Ok(vec![x.to_string(), c])
}

fn twice(_: &mut Site<'_>, x: &str, _: &TensorType, rng: &mut SplitMix64) -> R {
    let n = 2 + pick(rng, 2);
    Ok(vec![x.to_string(); n])
}

fn with_const(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let c = broadcast_const(site, t, -2.0, 2.0, rng);
    Ok(vec![x.to_string(), c])
}

fn random_axes(rank: usize, rng: &mut SplitMix64) -> Vec<i64> {
    let mut axes: Vec<i64> = (0..rank as i64).filter(|_| rng.unit() < 0.5).collect();
    if axes.is_empty() && rank > 0 {
        axes.push(pick(rng, rank) as i64);
    }
    if rng.unit() < 0.3 {
        for a in axes.iter_mut() {
            *a -= rank as i64;
        }
    }
    axes
}

fn reduce_sum_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let r = t.rank().unwrap_or(0);
    if r == 0 || rng.unit() < 0.2 {
        return Ok(vec![x.to_string()]);
    }
    let axes = random_axes(r, rng);
    let a = site.constant_i64s("axes", &[axes.len() as i64], &axes);
    Ok(vec![x.to_string(), a])
}

fn reshape_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let d = dims(t);
    let shape: Vec<i64> = match pick(rng, 4) {
        0 => vec![-1],
        1 if !d.is_empty() => vec![d[0], -1],
        2 if !d.is_empty() => vec![0, -1],
        _ => d.iter().rev().copied().collect(),
    };
    let s = site.constant_i64s("shape", &[shape.len() as i64], &shape);
    Ok(vec![x.to_string(), s])
}

fn expand_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let d = dims(t);
    let mut shape: Vec<i64> = d.iter().map(|&v| if v == 1 { 2 } else { v }).collect();
    if pick(rng, 2) == 0 || shape == d {
        shape.insert(0, 2);
    }
    let s = site.constant_i64s("shape", &[shape.len() as i64], &shape);
    Ok(vec![x.to_string(), s])
}

fn tile_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let r = t.rank().unwrap_or(0);
    let reps: Vec<i64> = (0..r).map(|_| 1 + pick(rng, 2) as i64).collect();
    let s = site.constant_i64s("repeats", &[r as i64], &reps);
    Ok(vec![x.to_string(), s])
}

fn slice_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let d = dims(t);
    let ax = pick(rng, d.len());
    let n = d[ax];
    let (start, end, step) = match pick(rng, 4) {
        0 => (0, n / 2 + 1, 1),
        1 => (1.min(n - 1), n, 2),
        2 => (-1, -n - 1, -1),
        _ => (0, i64::MAX, 1),
    };
    let mut ins = vec![
        x.to_string(),
        site.constant_i64s("starts", &[1], &[start]),
        site.constant_i64s("ends", &[1], &[end]),
    ];
    if pick(rng, 4) > 0 || step != 1 {
        ins.push(site.constant_i64s("axes", &[1], &[ax as i64]));
        if step != 1 || pick(rng, 2) == 0 {
            ins.push(site.constant_i64s("steps", &[1], &[step]));
        }
    }
    Ok(ins)
}

fn pad_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let d = dims(t);
    let r = d.len();
    let mut pads = vec![0i64; 2 * r];
    for (i, &dim) in d.iter().enumerate() {
        if rng.unit() < 0.5 {
            pads[i] = (pick(rng, 3) as i64).min(dim - 1).max(0);
            pads[i + r] = (pick(rng, 3) as i64).min(dim - 1).max(0);
        }
    }
    let p = site.constant_i64s("pads", &[2 * r as i64], &pads);
    let mut ins = vec![x.to_string(), p];
    if rng.unit() < 0.3 {
        ins.push(site.random_constant("value", t.dtype, &[], 0.0, 2.0, rng));
    }
    Ok(ins)
}

fn squeeze_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, _: &mut SplitMix64) -> R {
    let ones: Vec<i64> = dims(t)
        .iter()
        .enumerate()
        .filter(|(_, d)| **d == 1)
        .map(|(i, _)| i as i64)
        .collect();
    if ones.is_empty() {
        return Ok(vec![x.to_string()]);
    }
    let a = site.constant_i64s("axes", &[ones.len() as i64], &ones);
    Ok(vec![x.to_string(), a])
}

fn unsqueeze_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let r = t.rank().unwrap_or(0);
    let k = pick(rng, r + 1) as i64;
    let a = site.constant_i64s("axes", &[1], &[k]);
    Ok(vec![x.to_string(), a])
}

fn axis_of(t: &TensorType, rng: &mut SplitMix64) -> i64 {
    let r = t.rank().unwrap_or(1).max(1);
    let a = pick(rng, r) as i64;
    if rng.unit() < 0.3 { a - r as i64 } else { a }
}

fn axis_fixed(t: &TensorType, rng: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    vec![("axis", AttrValue::Int(axis_of(t, rng)))]
}

fn split_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    // The axis is fixed to the last one here; the split sizes follow its length.
    let d = dims(t);
    let n = *d.last().unwrap_or(&1);
    if n < 2 || rng.unit() < 0.2 {
        return Ok(vec![x.to_string()]);
    }
    let a = 1 + pick(rng, (n - 1) as usize) as i64;
    let s = site.constant_i64s("split", &[2], &[a, n - a]);
    Ok(vec![x.to_string(), s])
}

fn last_axis(_: &TensorType, _: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    vec![("axis", AttrValue::Int(-1))]
}

fn gather_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    // Axis 0 (the default or drawn 0); indices valid for the smallest dim.
    let d = dims(t);
    let n = d.iter().copied().min().unwrap_or(1).max(1);
    let k = 1 + pick(rng, 3);
    let vals: Vec<i64> = (0..k).map(|_| pick(rng, n as usize) as i64).collect();
    let idx = if rng.unit() < 0.3 {
        site.constant_i64s("indices", &[], &vals[..1])
    } else {
        site.constant_i64s("indices", &[k as i64], &vals)
    };
    Ok(vec![x.to_string(), idx])
}

fn gather_elements_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let d = dims(t);
    let n = d.iter().copied().min().unwrap_or(1).max(1);
    let count: i64 = d.iter().product();
    let vals: Vec<i64> = (0..count).map(|_| pick(rng, n as usize) as i64).collect();
    let idx = site.constant_i64s("indices", &d, &vals);
    Ok(vec![x.to_string(), idx])
}

fn gather_nd_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let d = dims(t);
    let k = 1 + pick(rng, 2);
    let vals: Vec<i64> = (0..k).map(|_| pick(rng, d[0] as usize) as i64).collect();
    let idx = site.constant_i64s("indices", &[k as i64, 1], &vals);
    Ok(vec![x.to_string(), idx])
}

fn scatter_elements_inputs(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> R {
    let d = dims(t);
    let n = d.iter().copied().min().unwrap_or(1).max(1);
    let count: i64 = d.iter().product();
    let vals: Vec<i64> = (0..count).map(|_| pick(rng, n as usize) as i64).collect();
    let idx = site.constant_i64s("indices", &d, &vals);
    let upd = site.random_constant("updates", t.dtype, &d, -2.0, 2.0, rng);
    Ok(vec![x.to_string(), idx, upd])
}

fn scatter_nd_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let d = dims(t);
    let k = 1 + pick(rng, d[0].min(3) as usize);
    let mut rows: Vec<i64> = (0..d[0]).collect();
    for i in (1..rows.len()).rev() {
        let j = pick(rng, i + 1);
        rows.swap(i, j);
    }
    rows.truncate(k);
    let idx = site.constant_i64s("indices", &[k as i64, 1], &rows);
    let mut ushape = vec![k as i64];
    ushape.extend_from_slice(&d[1..]);
    let upd = site.random_constant("updates", t.dtype, &ushape, -2.0, 2.0, rng);
    Ok(vec![x.to_string(), idx, upd])
}

fn where_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let d = dims(t);
    let c = site.random_constant("cond", DType::Bool, &d, 0.0, 1.0, rng);
    let y = broadcast_const(site, t, -2.0, 2.0, rng);
    Ok(vec![c, x.to_string(), y])
}

fn clip_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let mut ins = vec![x.to_string()];
    match pick(rng, 3) {
        0 => {}
        1 => ins.push(site.random_constant("min", t.dtype, &[], -1.0, 0.0, rng)),
        _ => {
            let lo = site.random_constant("min", t.dtype, &[], -1.0, 0.0, rng);
            let hi = site.random_constant("max", t.dtype, &[], 1.0, 2.0, rng);
            ins.push(lo);
            ins.push(hi);
        }
    }
    Ok(ins)
}

fn cumsum_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let a = axis_of(t, rng);
    Ok(vec![x.to_string(), site.constant_i64s("axis", &[], &[a])])
}

fn trilu_inputs(site: &mut Site<'_>, x: &str, _: &TensorType, rng: &mut SplitMix64) -> R {
    let mut ins = vec![x.to_string()];
    if rng.unit() < 0.5 {
        let k = pick(rng, 3) as i64 - 1;
        ins.push(site.constant_i64s("k", &[], &[k]));
    }
    Ok(ins)
}

fn topk_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let n = *dims(t).last().unwrap_or(&1);
    let k = 1 + pick(rng, n.min(3) as usize) as i64;
    Ok(vec![x.to_string(), site.constant_i64s("k", &[1], &[k])])
}

fn resize_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let d = dims(t);
    let r = d.len();
    let roi = String::new();
    if rng.unit() < 0.5 {
        let scales: Vec<f64> = (0..r)
            .map(|i| {
                if i < r.saturating_sub(2) {
                    1.0
                } else {
                    [0.5, 1.5, 2.0][pick(rng, 3)]
                }
            })
            .collect();
        let s = site.constant_f64s("scales", DType::F32, &[r as i64], &scales);
        Ok(vec![x.to_string(), roi, s])
    } else {
        let sizes: Vec<i64> = d
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                if i < r.saturating_sub(2) {
                    v
                } else {
                    (v + pick(rng, 3) as i64 - 1).max(1)
                }
            })
            .collect();
        let s = site.constant_i64s("sizes", &[r as i64], &sizes);
        Ok(vec![x.to_string(), roi, String::new(), s])
    }
}

fn prelu_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let c = broadcast_const(site, t, 0.0, 0.5, rng);
    Ok(vec![x.to_string(), c])
}

fn bitshift_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let c = broadcast_const(site, t, 0.0, 3.0, rng);
    Ok(vec![x.to_string(), c])
}

fn compress_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    // Axis 0: a condition over the first dim with at least one true.
    let n = dims(t)[0];
    let mut vals: Vec<f64> = (0..n).map(|_| pick(rng, 2) as f64).collect();
    vals[0] = 1.0;
    let c = site.constant_f64s("condition", DType::Bool, &[n], &vals);
    Ok(vec![x.to_string(), c])
}

fn axis0(_: &TensorType, _: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    vec![("axis", AttrValue::Int(0))]
}

fn reverse_sequence_inputs(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> R {
    // time_axis 0, batch_axis 1 (the defaults).
    let d = dims(t);
    let lens: Vec<i64> = (0..d[1])
        .map(|_| 1 + pick(rng, d[0] as usize) as i64)
        .collect();
    let l = site.constant_i64s("lens", &[d[1]], &lens);
    Ok(vec![x.to_string(), l])
}

fn onehot_inputs(site: &mut Site<'_>, x: &str, _: &TensorType, rng: &mut SplitMix64) -> R {
    let depth = site.constant_i64s("depth", &[], &[2 + pick(rng, 3) as i64]);
    let values = site.constant_f64s("values", DType::F32, &[2], &[0.0, 1.0]);
    Ok(vec![x.to_string(), depth, values])
}

fn castlike_inputs(site: &mut Site<'_>, x: &str, _: &TensorType, rng: &mut SplitMix64) -> R {
    let d = GEN_DTYPES[pick(rng, GEN_DTYPES.len())];
    let c = site.random_constant("like", d, &[1], 0.0, 1.0, rng);
    Ok(vec![x.to_string(), c])
}

fn einsum_fixed(t: &TensorType, _: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    let r = t.rank().unwrap_or(2);
    let letters: Vec<char> = "abcdef".chars().take(r).collect();
    let mut out = letters.clone();
    out.swap(r - 2, r - 1);
    let eq = format!(
        "{}->{}",
        letters.iter().collect::<String>(),
        out.iter().collect::<String>()
    );
    vec![("equation", AttrValue::String(eq.into_bytes()))]
}

fn matmul_inputs(site: &mut Site<'_>, x: &str, t: &TensorType, rng: &mut SplitMix64) -> R {
    let k = *dims(t).last().unwrap_or(&1);
    let n = 2 + pick(rng, 6) as i64;
    let bound = (3.0 / k as f64).sqrt();
    let w = site.random_constant("weight", t.dtype, &[k, n], -bound, bound, rng);
    Ok(vec![x.to_string(), w])
}

fn pool_fixed(t: &TensorType, rng: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    let d = dims(t);
    let m = d[2..].iter().copied().min().unwrap_or(1);
    let k = 1 + pick(rng, m.min(3) as usize) as i64;
    vec![("kernel_shape", AttrValue::Ints(vec![k; d.len() - 2]))]
}

fn lrn_fixed(_: &TensorType, rng: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    vec![("size", AttrValue::Int(1 + 2 * pick(rng, 3) as i64))]
}

fn cast_fixed(_: &TensorType, rng: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    let d = GEN_DTYPES[pick(rng, GEN_DTYPES.len())];
    vec![("to", AttrValue::Int(d.code() as i64))]
}

fn depth_fixed(_: &TensorType, _: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    vec![("blocksize", AttrValue::Int(2))]
}

fn mod_fixed(t: &TensorType, rng: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    if t.dtype.is_float() {
        vec![("fmod", AttrValue::Int(1))]
    } else {
        vec![("fmod", AttrValue::Int(pick(rng, 2) as i64))]
    }
}

fn any_dtype(_: DType, r: usize) -> Vec<(DType, usize)> {
    GEN_DTYPES.iter().map(|&d| (d, r)).collect()
}

fn i64_reduced(_: DType, r: usize) -> Vec<(DType, usize)> {
    (0..=r).map(|k| (DType::I64, k)).collect()
}

fn i64_rank1(_: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(DType::I64, 1)]
}

fn i64_scalar(_: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(DType::I64, 0)]
}

fn rank2(d: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(d, 2)]
}

fn any_rank(d: DType, r: usize) -> Vec<(DType, usize)> {
    (1..=r.max(1) + 1).map(|k| (d, k)).collect()
}

fn plus_one(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r + 1)]
}

fn onehot_out(_: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(DType::F32, r + 1)]
}

fn gather_out(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r), (d, r.saturating_sub(1))]
}

fn squeeze_out(d: DType, r: usize) -> Vec<(DType, usize)> {
    (0..=r).map(|k| (d, k)).collect()
}

fn same_or_lower(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r), (d, r.saturating_sub(1))]
}

fn e(op: &'static str, ranks: (usize, usize)) -> Generic {
    Generic::same(op, ranks)
}

/// Every table entry.
pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    let mut v: Vec<Generic> = Vec::new();
    // Unary elementwise, same type.
    for op in [
        "Abs",
        "Acos",
        "Acosh",
        "Asin",
        "Asinh",
        "Atan",
        "Atanh",
        "Ceil",
        "Cos",
        "Cosh",
        "Erf",
        "Exp",
        "Floor",
        "Log",
        "Neg",
        "Reciprocal",
        "Round",
        "Sign",
        "Sin",
        "Sinh",
        "Sqrt",
        "Tan",
        "Tanh",
        "Relu",
        "Sigmoid",
        "Softplus",
        "Softsign",
        "HardSwish",
        "Identity",
        "Elu",
        "LeakyRelu",
        "Selu",
        "Celu",
        "HardSigmoid",
        "ThresholdedRelu",
        "Shrink",
        "Not",
        "Softmax",
        "LogSoftmax",
        "Hardmax",
        "LpNormalization",
    ] {
        v.push(e(op, (0, 5)));
    }
    for g in v.iter_mut() {
        if matches!(
            g.op,
            "Softmax" | "LogSoftmax" | "Hardmax" | "LpNormalization"
        ) {
            g.ranks = (1, 5);
        }
        if g.op == "Celu" {
            g.dtypes = Some(F32);
        }
    }
    v.push(Generic {
        dtypes: Some(FLOATS),
        ..e("Dropout", (0, 5))
    });
    v.push(Generic {
        out: bool_same,
        ..e("IsNaN", (0, 5))
    });
    v.push(Generic {
        out: bool_same,
        ..e("IsInf", (0, 5))
    });
    v.push(Generic {
        inputs: clip_inputs,
        ..e("Clip", (0, 5))
    });
    v.push(Generic {
        inputs: cumsum_inputs,
        ..e("CumSum", (1, 5))
    });
    v.push(Generic {
        inputs: trilu_inputs,
        ..e("Trilu", (2, 5))
    });
    v.push(e("MeanVarianceNormalization", (4, 4)));
    v.push(Generic {
        fixed: cast_fixed,
        out: any_dtype,
        ..e("Cast", (0, 5))
    });
    v.push(Generic {
        inputs: castlike_inputs,
        out: any_dtype,
        ..e("CastLike", (0, 5))
    });
    v.push(Generic {
        out: any_dtype,
        ..e("EyeLike", (2, 2))
    });
    // Binary elementwise with a constant operand.
    for op in ["Add", "Sub", "Mul", "Max", "Min", "Mean", "Sum"] {
        v.push(Generic {
            inputs: if matches!(op, "Max" | "Min" | "Mean" | "Sum") {
                twice
            } else {
                binary
            },
            ..e(op, (0, 5))
        });
    }
    v.push(Generic {
        inputs: binary_nonzero,
        ..e("Div", (0, 5))
    });
    v.push(Generic {
        inputs: binary_nonzero,
        fixed: mod_fixed,
        ..e("Mod", (0, 5))
    });
    v.push(Generic {
        inputs: pow_inputs,
        ..e("Pow", (0, 5))
    });
    v.push(Generic {
        inputs: prelu_inputs,
        ..e("PRelu", (1, 5))
    });
    v.push(Generic {
        inputs: bitshift_inputs,
        dtypes: Some(UINTS),
        ..e("BitShift", (0, 5))
    });
    for op in ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"] {
        v.push(Generic {
            inputs: with_const,
            out: bool_same,
            ..e(op, (0, 5))
        });
    }
    for op in ["And", "Or", "Xor"] {
        v.push(Generic {
            inputs: with_const,
            dtypes: Some(BOOL),
            ..e(op, (0, 5))
        });
    }
    v.push(Generic {
        inputs: where_inputs,
        ..e("Where", (0, 5))
    });
    // Reductions.
    for op in [
        "ReduceMean",
        "ReduceMax",
        "ReduceMin",
        "ReduceProd",
        "ReduceL1",
        "ReduceL2",
        "ReduceLogSum",
        "ReduceLogSumExp",
        "ReduceSumSquare",
    ] {
        v.push(Generic {
            out: reduced,
            ..e(op, (1, 5))
        });
    }
    v.push(Generic {
        inputs: reduce_sum_inputs,
        out: reduced,
        ..e("ReduceSum", (1, 5))
    });
    for op in ["ArgMax", "ArgMin"] {
        v.push(Generic {
            fixed: axis_fixed,
            out: i64_reduced,
            ..e(op, (1, 5))
        });
    }
    // Shape ops.
    v.push(Generic {
        inputs: reshape_inputs,
        out: any_rank,
        ..e("Reshape", (1, 5))
    });
    v.push(Generic {
        out: rank2,
        ..e("Flatten", (1, 5))
    });
    v.push(e("Transpose", (2, 5)));
    v.push(Generic {
        inputs: squeeze_inputs,
        out: squeeze_out,
        ..e("Squeeze", (1, 5))
    });
    v.push(Generic {
        inputs: unsqueeze_inputs,
        out: plus_one,
        ..e("Unsqueeze", (0, 4))
    });
    v.push(Generic {
        inputs: expand_inputs,
        out: |d, r| vec![(d, r), (d, r + 1)],
        ..e("Expand", (0, 4))
    });
    v.push(Generic {
        inputs: tile_inputs,
        ..e("Tile", (1, 5))
    });
    v.push(Generic {
        inputs: slice_inputs,
        ..e("Slice", (1, 5))
    });
    v.push(Generic {
        inputs: pad_inputs,
        ..e("Pad", (1, 5))
    });
    v.push(Generic {
        inputs: twice,
        fixed: axis_fixed,
        ..e("Concat", (1, 5))
    });
    v.push(Generic {
        inputs: split_inputs,
        fixed: last_axis,
        n_outputs: 2,
        ..e("Split", (1, 5))
    });
    v.push(Generic {
        inputs: gather_inputs,
        fixed: axis0,
        out: gather_out,
        ..e("Gather", (1, 5))
    });
    v.push(Generic {
        inputs: gather_elements_inputs,
        ..e("GatherElements", (1, 5))
    });
    v.push(Generic {
        inputs: gather_nd_inputs,
        out: same_or_lower,
        skip: &["batch_dims"],
        ..e("GatherND", (1, 5))
    });
    v.push(Generic {
        inputs: scatter_elements_inputs,
        ..e("ScatterElements", (1, 5))
    });
    v.push(Generic {
        inputs: scatter_nd_inputs,
        ..e("ScatterND", (1, 5))
    });
    v.push(Generic {
        out: i64_rank1,
        ..e("Shape", (0, 5))
    });
    v.push(Generic {
        out: i64_scalar,
        ..e("Size", (0, 5))
    });
    v.push(Generic {
        fixed: depth_fixed,
        ..e("DepthToSpace", (4, 4))
    });
    v.push(Generic {
        fixed: depth_fixed,
        ..e("SpaceToDepth", (4, 4))
    });
    v.push(Generic {
        inputs: resize_inputs,
        skip: &["antialias", "axes", "keep_aspect_ratio_policy"],
        ..e("Resize", (3, 5))
    });
    v.push(Generic {
        inputs: topk_inputs,
        fixed: last_axis,
        n_outputs: 2,
        ..e("TopK", (1, 5))
    });
    v.push(Generic {
        fixed: einsum_fixed,
        ..e("Einsum", (2, 5))
    });
    v.push(Generic {
        inputs: onehot_inputs,
        out: onehot_out,
        dtypes: Some(&[DType::I32, DType::I64]),
        skip: &["axis"],
        ..e("OneHot", (1, 3))
    });
    v.push(Generic {
        inputs: compress_inputs,
        fixed: axis0,
        ..e("Compress", (1, 5))
    });
    v.push(Generic {
        inputs: reverse_sequence_inputs,
        skip: &["batch_axis", "time_axis"],
        ..e("ReverseSequence", (2, 5))
    });
    v.push(Generic {
        inputs: matmul_inputs,
        ..e("MatMul", (2, 5))
    });
    v.push(Generic {
        out: |d, r| vec![(d, r - 2)],
        ..e("Det", (2, 4))
    });
    // Pooling and normalization without weights.
    for op in ["MaxPool", "AveragePool", "LpPool"] {
        v.push(Generic {
            fixed: pool_fixed,
            dtypes: Some(FLOATS),
            ..e(op, (3, 5))
        });
    }
    for op in ["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"] {
        v.push(e(op, (3, 5)));
    }
    v.push(Generic {
        fixed: lrn_fixed,
        ..e("LRN", (4, 4))
    });
    let _ = (only_x, no_fixed, same);
    for g in v {
        list.push(Box::new(g));
    }
}
