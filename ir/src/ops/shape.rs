//! Op specs of the shape family: reshaping, slicing, gathering and scattering, padding, resizing,
//! and the small constant-producing ops (Shape, Size, Constant, Range, ...).
//!
//! Most of these ops also get a constant folder, so that shape computations such as
//! `Shape → Gather → Unsqueeze → Concat → Reshape` turn into static shapes downstream.
use super::common::*;
use crate::attr::{AttrKind, AttrLookup, AttrValue};
use crate::dtype::DType::{
    self, BF16, Bool, F4E2M1, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F16, F32, F64, I2,
    I4, I8, I16, I32, I64, U2, U4, U8, U16, U32, U64,
};
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::tensor::{Tensor, TensorExt};
use crate::types::{Dim, TensorType, ValueType};

// ---------------------------------------------------------------------------------------------
// dtype sets (unions over the versions of each op)

/// Every element type (Reshape, Transpose, Shape, ... in their newest versions).
const ALL26: &[DType] = crate::dtype::ALL;
/// The 16 classic types: numbers, bool, string, complex, bfloat16.
const CLASSIC16: &[DType] = crate::dtype::sets::CLASSIC_BF16;
/// The classic types without bfloat16.
const CLASSIC15: &[DType] = crate::dtype::sets::CLASSIC;
/// Index types.
const IND: &[DType] = &[I32, I64];
/// int64 only.
const I64_ONLY: &[DType] = &[I64];
/// ConstantOfShape values: numbers and bool, small floats included.
const COS_VALUES: &[DType] = &[
    F32, U8, I8, U16, I16, I32, I64, Bool, F16, F64, U32, U64, BF16, F8E4M3FN, F8E4M3FNUZ, F8E5M2,
    F8E5M2FNUZ, U4, I4, F4E2M1, F8E8M0, U2, I2,
];
/// Range types.
const RANGE_T: &[DType] = &[F32, I16, I32, I64, F16, F64, BF16];
/// OneHot indices / depth.
const ONEHOT_IDX: &[DType] = &[F32, U8, I8, U16, I16, I32, I64, F16, F64, U32, U64];
/// EyeLike types.
const EYE_T: &[DType] = &[
    F32, U8, I8, U16, I16, I32, I64, Bool, F16, F64, U32, U64, BF16,
];
/// Resize roi.
const ROI_T: &[DType] = &[F32, F16, F64];

/// The fixed int64 type variable used by shape-like inputs.
const I64T: &str = "tensor(int64)";

/// Buckets of an axis attribute.
const AXIS_BUCKETS: &[(i64, i64)] = &[(i64::MIN, -1), (0, 0), (1, 1), (2, i64::MAX)];
/// Buckets of a block size.
const BLOCK_BUCKETS: &[(i64, i64)] = &[(i64::MIN, 1), (2, 2), (3, 3), (4, i64::MAX)];

// ---------------------------------------------------------------------------------------------
// small helpers

/// A list argument that may come from an attribute (old opsets) or an input (new opsets).
#[derive(Clone, Debug, PartialEq)]
enum Arg {
    /// Neither attribute nor input is given.
    Absent,
    /// Given, but not a known constant.
    Unknown,
    /// Known values.
    Known(Vec<i64>),
}

/// Reads a list from attribute `attr` or, failing that, from input slot `input`.
fn list_arg(ctx: &InferCtx, attr: &str, input: usize) -> Arg {
    if let Some(v) = ctx.ints(attr) {
        return Arg::Known(v.to_vec());
    }
    if !ctx.has_input(input) {
        return Arg::Absent;
    }
    match ctx.const_i64s(input) {
        Some(v) => Arg::Known(v),
        None => Arg::Unknown,
    }
}

/// Dims that are not known become `Unknown` (a fresh shape of rank `n`).
fn unknown_dims(n: usize) -> Vec<Dim> {
    vec![Dim::Unknown; n]
}

/// The static length of a 1-D input (number of elements of a shape-like tensor).
fn static_len(ctx: &InferCtx, i: usize) -> Option<usize> {
    let t = ctx.tensor(i).ok()?;
    match t.shape.as_deref() {
        Some([Dim::Known(n)]) if *n >= 0 => Some(*n as usize),
        Some([]) => Some(1),
        _ => None,
    }
}

/// `d * k` for a dim and a known factor.
fn dim_mul(d: &Dim, k: i64) -> Dim {
    match d {
        Dim::Known(v) => Dim::Known(v.saturating_mul(k)),
        other if k == 1 => other.clone(),
        _ => Dim::Unknown,
    }
}

/// `d / k` if exact.
fn dim_div(d: &Dim, k: i64, what: &str) -> Result<Dim, String> {
    match d {
        Dim::Known(v) if k > 0 && v % k != 0 => Err(format!("{what} {v} is not divisible by {k}")),
        Dim::Known(v) if k > 0 => Ok(Dim::Known(v / k)),
        other if k == 1 => Ok(other.clone()),
        _ => Ok(Dim::Unknown),
    }
}

/// Product of dims, symbolic when exactly one factor is a parameter and the rest multiply to 1.
fn dims_prod_sym(d: &[Dim]) -> Dim {
    if let Some(p) = dims_product(d) {
        return Dim::Known(p);
    }
    let params: Vec<&Dim> = d.iter().filter(|x| !matches!(x, Dim::Known(_))).collect();
    let known: i64 = d.iter().filter_map(Dim::value).product();
    if params.len() == 1 && known == 1 && matches!(params[0], Dim::Param(_)) {
        return params[0].clone();
    }
    Dim::Unknown
}

/// Two descriptions of one dim: known beats symbolic beats unknown; two different known sizes
/// are a contradiction.
fn merge_dim(a: &Dim, b: &Dim, what: &str) -> Result<Dim, String> {
    Ok(match (a, b) {
        (Dim::Known(x), Dim::Known(y)) if x != y => {
            return Err(format!("{what}: dims {x} and {y} differ"));
        }
        (Dim::Known(_), _) => a.clone(),
        (_, Dim::Known(_)) => b.clone(),
        (Dim::Param(_), _) => a.clone(),
        _ => b.clone(),
    })
}

/// A TENSOR attribute (the inherent `InferCtx::tensor` reads inputs).
fn attr_tensor<'a>(ctx: &'a InferCtx, name: &str) -> Option<&'a Tensor> {
    AttrLookup::tensor(ctx, name)
}

/// An axis of a rank-`rank` tensor; a scalar has none.
fn axis_of(axis: i64, rank: usize) -> Result<usize, String> {
    if rank == 0 {
        return Err(format!("axis {axis} given for a scalar input"));
    }
    norm_axis(axis, rank)
}

/// Axes of a rank-`rank` tensor; a scalar has none.
fn axes_of(axes: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    if rank == 0 && !axes.is_empty() {
        return Err(format!("axes {axes:?} given for a scalar input"));
    }
    norm_axes(axes, rank)
}

fn out(dtype: DType, shape: Option<Vec<Dim>>) -> Infer {
    Ok(vec![tensor(dtype, shape)])
}

// ---------------------------------------------------------------------------------------------
// constant-folding machinery

/// Values of a small constant, as integers or floats.
#[derive(Clone, Debug)]
enum Vals {
    I(Vec<i64>),
    F(Vec<f64>),
}

impl Vals {
    fn len(&self) -> usize {
        match self {
            Vals::I(v) => v.len(),
            Vals::F(v) => v.len(),
        }
    }
}

/// Decodes a constant this module can fold (integers, bool and the common floats).
fn load(t: &Tensor) -> Option<Vals> {
    let dt = t.dtype();
    let v = if dt == I64 || dt == Bool || (dt.is_int() && dt.bits()? >= 8) {
        Vals::I(t.to_i64s().ok()?)
    } else if matches!(dt, F16 | F32 | F64 | BF16) {
        Vals::F(t.to_f64s().ok()?)
    } else {
        return None;
    };
    (v.len() as i64 == t.num_elements()).then_some(v)
}

/// Builds a tensor of `dtype` and `dims` from `vals` picked at `picks`.
fn build(dtype: DType, dims: &[i64], vals: &Vals, picks: &[usize]) -> Tensor {
    match vals {
        Vals::I(v) if dtype == I64 => i64_tensor(dims, picks.iter().map(|&i| v[i]).collect()),
        Vals::I(v) => f64_tensor(
            dtype,
            dims,
            &picks.iter().map(|&i| v[i] as f64).collect::<Vec<_>>(),
        ),
        Vals::F(v) => f64_tensor(
            dtype,
            dims,
            &picks.iter().map(|&i| v[i]).collect::<Vec<_>>(),
        ),
    }
}

/// Row-major strides.
fn strides(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1].max(1);
    }
    s
}

/// Flat offset of a multi-index.
fn flat(idx: &[i64], strides: &[i64]) -> usize {
    idx.iter().zip(strides).map(|(i, s)| i * s).sum::<i64>() as usize
}

/// Calls `f` with every multi-index of `dims` in row-major order; `None` when the tensor would
/// be too large to fold.
fn each_index(dims: &[i64], mut f: impl FnMut(&[i64]) -> Option<usize>) -> Option<Vec<usize>> {
    let n: i64 = dims
        .iter()
        .try_fold(1i64, |a, &d| if d < 0 { None } else { a.checked_mul(d) })?;
    if n > 4096 {
        return None;
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut idx = vec![0i64; dims.len()];
    for _ in 0..n {
        out.push(f(&idx)?);
        for k in (0..dims.len()).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Some(out)
}

/// A copy of a constant with new dims (same data).
fn with_dims(t: &Tensor, dims: Vec<i64>) -> Option<Tensor> {
    let n = dims
        .iter()
        .try_fold(1i64, |a, &d| if d < 0 { None } else { a.checked_mul(d) });
    if n != Some(t.num_elements()) {
        return None;
    }
    let mut c = t.clone();
    c.dims = dims;
    c.name = Some(String::new());
    Some(c)
}

/// Folds an op that only re-labels the dims of input 0 (Reshape, Squeeze, Unsqueeze, Flatten):
/// the static output shape comes from the op's own inference.
fn fold_relabel(ctx: &InferCtx, infer: fn(&InferCtx) -> Infer) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let outs = infer(ctx).ok()?;
    let dims = outs.first()?.tensor()?.static_dims()?;
    Some(vec![with_dims(t, dims)?])
}

// ---------------------------------------------------------------------------------------------
// Reshape

/// Output dims of Reshape given the target list.
fn reshape_dims(
    input: Option<&[Dim]>,
    target: &[i64],
    allowzero: bool,
) -> Result<Vec<Dim>, String> {
    let mut outd = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (i, &t) in target.iter().enumerate() {
        match t {
            -1 => {
                if infer_at.is_some() {
                    return Err(format!("shape {target:?} has more than one -1"));
                }
                infer_at = Some(i);
                outd.push(Dim::Unknown);
            }
            0 if !allowzero => match input {
                Some(s) if i < s.len() => outd.push(s[i].clone()),
                Some(s) => {
                    return Err(format!(
                        "shape {target:?} copies dim {i} (0) but the input has rank {}",
                        s.len()
                    ));
                }
                None => outd.push(Dim::Unknown),
            },
            t if t < -1 => return Err(format!("shape {target:?} has the invalid value {t}")),
            t => outd.push(Dim::Known(t)),
        }
    }
    if allowzero && infer_at.is_some() && target.contains(&0) {
        return Err(format!(
            "shape {target:?}: allowzero forbids 0 together with -1"
        ));
    }
    let Some(input) = input else { return Ok(outd) };
    // Factor both sides into a known product and a list of symbols.
    let factor = |d: &[Dim]| -> Option<(i64, Vec<String>)> {
        let mut k = 1i64;
        let mut syms = Vec::new();
        for x in d {
            match x {
                Dim::Known(v) => k = k.saturating_mul(*v),
                Dim::Param(p) => syms.push(p.clone()),
                Dim::Unknown => return None,
            }
        }
        Some((k, syms))
    };
    let rest: Vec<Dim> = outd
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != infer_at)
        .map(|(_, d)| d.clone())
        .collect();
    if let (Some((ki, mut si)), Some((ko, so))) = (factor(input), factor(&rest)) {
        let mut all_found = true;
        for s in &so {
            match si.iter().position(|x| x == s) {
                Some(p) => {
                    si.remove(p);
                }
                None => all_found = false,
            }
        }
        match infer_at {
            Some(at) if all_found => {
                if si.is_empty() {
                    if ko == 0 {
                        if ki != 0 {
                            return Err(format!("cannot reshape {ki} elements to {target:?}"));
                        }
                    } else if ki % ko != 0 {
                        return Err(format!(
                            "cannot reshape {ki} elements: {ki} is not divisible by {ko} ({target:?})"
                        ));
                    } else {
                        outd[at] = Dim::Known(ki / ko);
                    }
                } else if si.len() == 1 && ki == ko && ko != 0 {
                    outd[at] = Dim::Param(si[0].clone());
                }
            }
            None if si.is_empty() && so.is_empty() && ki != ko => {
                return Err(format!(
                    "cannot reshape {ki} elements to {target:?} ({ko} elements)"
                ));
            }
            _ => {}
        }
    }
    Ok(outd)
}

fn infer_reshape(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let target = if ctx.opset < 5 {
        list_arg(ctx, "shape", usize::MAX)
    } else {
        list_arg(ctx, "", 1)
    };
    let allowzero = ctx.int("allowzero", 0) != 0;
    match target {
        Arg::Known(t) => out(
            x.dtype,
            Some(reshape_dims(x.shape.as_deref(), &t, allowzero)?),
        ),
        _ => match (static_len(ctx, 1), x.num_elements()) {
            // A 1-D target can only mean "all elements in one row".
            (Some(1), Some(n)) => Ok(vec![fixed(x.dtype, &[n])]),
            (n, _) => out(x.dtype, n.map(unknown_dims)),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Transpose, Flatten, Squeeze, Unsqueeze

fn perm_of(ctx: &InferCtx, rank: usize) -> Result<Vec<usize>, String> {
    match ctx.ints("perm") {
        Some(p) => {
            if p.len() != rank {
                return Err(format!(
                    "perm {p:?} has {} entries for an input of rank {rank}",
                    p.len()
                ));
            }
            norm_axes(p, rank)
        }
        None => Ok((0..rank).rev().collect()),
    }
}

fn infer_transpose(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, ctx.ints("perm").map(|p| unknown_dims(p.len())));
    };
    let perm = perm_of(ctx, s.len())?;
    out(x.dtype, Some(perm.iter().map(|&p| s[p].clone()).collect()))
}

fn fold_transpose(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let vals = load(t)?;
    let perm = perm_of(ctx, t.dims.len()).ok()?;
    let od: Vec<i64> = perm.iter().map(|&p| t.dims[p]).collect();
    let st = strides(&t.dims);
    let picks = each_index(&od, |m| {
        let mut src = vec![0i64; m.len()];
        for (k, &p) in perm.iter().enumerate() {
            src[p] = m[k];
        }
        Some(flat(&src, &st))
    })?;
    Some(vec![build(t.dtype(), &od, &vals, &picks)])
}

fn infer_flatten(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let axis = ctx.int("axis", 1);
    let Some(s) = x.shape else {
        return out(x.dtype, Some(unknown_dims(2)));
    };
    let r = s.len() as i64;
    if axis < -r || axis > r {
        return Err(format!("Flatten axis {axis} is out of range for rank {r}"));
    }
    let a = if axis < 0 { axis + r } else { axis } as usize;
    out(
        x.dtype,
        Some(vec![dims_prod_sym(&s[..a]), dims_prod_sym(&s[a..])]),
    )
}

fn infer_squeeze(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let axes = list_arg(ctx, "axes", 1);
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    match axes {
        Arg::Known(a) => {
            let a = axes_of(&a, s.len())?;
            for &k in &a {
                if let Dim::Known(v) = s[k]
                    && v != 1
                {
                    return Err(format!("Squeeze axis {k} has size {v}, not 1"));
                }
            }
            out(
                x.dtype,
                Some(
                    s.iter()
                        .enumerate()
                        .filter(|(i, _)| !a.contains(i))
                        .map(|(_, d)| d.clone())
                        .collect(),
                ),
            )
        }
        Arg::Absent => {
            if s.iter().any(|d| !matches!(d, Dim::Known(_))) {
                return out(x.dtype, None);
            }
            out(
                x.dtype,
                Some(s.into_iter().filter(|d| *d != Dim::Known(1)).collect()),
            )
        }
        Arg::Unknown => match static_len(ctx, 1) {
            // Only dims of size 1 may be removed: when the count of such dims equals the
            // number of axes and every other dim is known, the result is determined.
            Some(n)
                if n > 0
                    && s.iter().all(|d| matches!(d, Dim::Known(_)))
                    && s.iter().filter(|d| **d == Dim::Known(1)).count() == n =>
            {
                out(
                    x.dtype,
                    Some(s.into_iter().filter(|d| *d != Dim::Known(1)).collect()),
                )
            }
            Some(n) if n <= s.len() => out(x.dtype, Some(unknown_dims(s.len() - n))),
            _ => out(x.dtype, None),
        },
    }
}

fn infer_unsqueeze(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let axes = list_arg(ctx, "axes", 1);
    match (x.shape, axes) {
        (Some(s), Arg::Known(a)) => {
            let r = s.len() + a.len();
            let a = axes_of(&a, r)?;
            let mut it = s.into_iter();
            let shape = (0..r)
                .map(|k| {
                    if a.contains(&k) {
                        Dim::Known(1)
                    } else {
                        it.next().unwrap_or(Dim::Unknown)
                    }
                })
                .collect();
            out(x.dtype, Some(shape))
        }
        (Some(s), _) => out(
            x.dtype,
            static_len(ctx, 1).map(|n| unknown_dims(s.len() + n)),
        ),
        (None, _) => out(x.dtype, None),
    }
}

// ---------------------------------------------------------------------------------------------
// Concat, Split

fn infer_concat(ctx: &InferCtx) -> Infer {
    let n = ctx.n_inputs();
    if n == 0 {
        return Err("Concat needs at least one input".into());
    }
    let mut shapes = Vec::new();
    let mut dtype = DType::Other(0);
    for i in 0..n {
        let t = ctx.tensor(i)?;
        if !dtype.is_known() {
            dtype = t.dtype;
        }
        shapes.push(t.shape);
    }
    let Some(rank) = shapes.iter().flatten().map(|s| s.len()).next() else {
        return out(dtype, None);
    };
    let axis = axis_of(ctx.int("axis", 1), rank)?;
    let mut res: Vec<Dim> = unknown_dims(rank);
    let mut sum = Some(0i64);
    for s in &shapes {
        let Some(s) = s else {
            sum = None;
            continue;
        };
        if s.len() != rank {
            return Err(format!("Concat inputs have ranks {rank} and {}", s.len()));
        }
        for k in 0..rank {
            if k == axis {
                sum = match (sum, &s[k]) {
                    (Some(a), Dim::Known(b)) => Some(a.saturating_add(*b)),
                    _ => None,
                };
            } else {
                res[k] = merge_dim(&res[k], &s[k], &format!("Concat axis {k}"))?;
            }
        }
    }
    res[axis] = match sum {
        Some(v) => Dim::Known(v),
        None if shapes.len() == 1 => shapes[0].as_ref().map_or(Dim::Unknown, |s| s[axis].clone()),
        None => Dim::Unknown,
    };
    out(dtype, Some(res))
}

fn fold_concat(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let ts: Vec<&Tensor> = (0..ctx.n_inputs())
        .map(|i| ctx.const_tensor(i))
        .collect::<Option<_>>()?;
    let dtype = ts.first()?.dtype();
    let rank = ts[0].dims.len();
    if rank == 0
        || ts
            .iter()
            .any(|t| t.dims.len() != rank || t.dtype() != dtype)
    {
        return None;
    }
    let axis = axis_of(ctx.int("axis", 1), rank).ok()?;
    // One value list with every input appended, and the offset of each input in it.
    let mut all = Vec::new();
    let mut offsets = Vec::new();
    let mut is_int = None;
    for t in &ts {
        let v = load(t)?;
        offsets.push(all.len());
        match v {
            Vals::I(v) if is_int != Some(false) => {
                is_int = Some(true);
                all.extend(v.into_iter().map(|x| x as f64));
            }
            Vals::F(v) if is_int != Some(true) => {
                is_int = Some(false);
                all.extend(v);
            }
            _ => return None,
        }
    }
    let mut od = ts[0].dims.clone();
    od[axis] = ts.iter().map(|t| t.dims[axis]).sum();
    let picks = each_index(&od, |m| {
        let mut along = m[axis];
        for (k, t) in ts.iter().enumerate() {
            if along < t.dims[axis] {
                let mut src = m.to_vec();
                src[axis] = along;
                return Some(offsets[k] + flat(&src, &strides(&t.dims)));
            }
            along -= t.dims[axis];
        }
        None
    })?;
    let vals = if is_int == Some(true) {
        // Exact for int64: reload without going through f64.
        let mut iv = Vec::new();
        for t in &ts {
            match load(t)? {
                Vals::I(v) => iv.extend(v),
                Vals::F(_) => return None,
            }
        }
        Vals::I(iv)
    } else {
        Vals::F(all)
    };
    Some(vec![build(dtype, &od, &vals, &picks)])
}

fn infer_split(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let n = ctx.n_outputs();
    let split = list_arg(ctx, "split", 1);
    let Some(s) = x.shape.clone() else {
        return Ok(vec![tensor(x.dtype, None); n]);
    };
    let axis = axis_of(ctx.int("axis", 0), s.len())?;
    let with = |d: Dim| {
        let mut t = s.clone();
        t[axis] = d;
        tensor(x.dtype, Some(t))
    };
    match split {
        Arg::Known(parts) => {
            if parts.len() != n {
                return Err(format!(
                    "split {parts:?} has {} parts for {n} outputs",
                    parts.len()
                ));
            }
            if let Dim::Known(d) = s[axis] {
                let total: i64 = parts.iter().sum();
                if total != d {
                    return Err(format!(
                        "split {parts:?} sums to {total}, but axis {axis} has size {d}"
                    ));
                }
            }
            Ok(parts.into_iter().map(|p| with(Dim::Known(p))).collect())
        }
        Arg::Unknown => Ok(vec![with(Dim::Unknown); n]),
        Arg::Absent => {
            let Dim::Known(d) = s[axis] else {
                return Ok(vec![with(Dim::Unknown); n]);
            };
            if let Some(k) = ctx.int_opt("num_outputs") {
                if k != n as i64 {
                    return Err(format!("num_outputs is {k} but the node has {n} outputs"));
                }
                let chunk = (d + k - 1) / k.max(1);
                return Ok((0..k)
                    .map(|i| with(Dim::Known((d - chunk * i).clamp(0, chunk))))
                    .collect());
            }
            if n == 0 || d % n as i64 != 0 {
                return Err(format!(
                    "axis {axis} of size {d} cannot be split evenly into {n} outputs"
                ));
            }
            Ok(vec![with(Dim::Known(d / n as i64)); n])
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Slice

/// Start and length of a slice along a dim of size `d` (ONNX clamping rules).
fn slice_range(d: i64, start: i64, end: i64, step: i64) -> (i64, i64) {
    if d <= 0 || step == 0 {
        return (0, 0);
    }
    let norm = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
    // Lengths in 128-bit arithmetic: steps may be as large as i64 allows.
    let len = |from: i64, to: i64, step: i128| ((to as i128 - from as i128 - 1) / step + 1) as i64;
    if step > 0 {
        let s = norm(start).clamp(0, d);
        let e = norm(end).clamp(0, d);
        (s, if e > s { len(s, e, step as i128) } else { 0 })
    } else {
        let s = norm(start).clamp(0, d - 1);
        let e = norm(end).clamp(-1, d - 1);
        (s, if s > e { len(e, s, -(step as i128)) } else { 0 })
    }
}

/// Per-axis (axis, start, end, step) of a Slice node, when known.
type SliceParams = Vec<(usize, i64, i64, i64)>;

fn slice_params(ctx: &InferCtx, rank: usize) -> Result<Option<SliceParams>, String> {
    let (starts, ends, axes, steps) = if ctx.opset < 10 {
        (
            list_arg(ctx, "starts", usize::MAX),
            list_arg(ctx, "ends", usize::MAX),
            list_arg(ctx, "axes", usize::MAX),
            Arg::Absent,
        )
    } else {
        (
            list_arg(ctx, "", 1),
            list_arg(ctx, "", 2),
            list_arg(ctx, "", 3),
            list_arg(ctx, "", 4),
        )
    };
    let (Arg::Known(starts), Arg::Known(ends)) = (starts, ends) else {
        return Ok(None);
    };
    if starts.len() != ends.len() {
        return Err(format!(
            "Slice starts {starts:?} and ends {ends:?} differ in length"
        ));
    }
    let axes = match axes {
        Arg::Known(a) => a,
        Arg::Absent => (0..starts.len() as i64).collect(),
        Arg::Unknown => return Ok(None),
    };
    let steps = match steps {
        Arg::Known(s) => s,
        Arg::Absent => vec![1; starts.len()],
        Arg::Unknown => return Ok(None),
    };
    if axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(format!(
            "Slice has {} starts, {} axes and {} steps",
            starts.len(),
            axes.len(),
            steps.len()
        ));
    }
    if let Some(p) = steps.iter().position(|&s| s == 0) {
        return Err(format!("Slice step {p} is 0"));
    }
    let axes = axes_of(&axes, rank)?;
    Ok(Some(
        (0..starts.len())
            .map(|k| (axes[k], starts[k], ends[k], steps[k]))
            .collect(),
    ))
}

fn infer_slice(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    match slice_params(ctx, s.len())? {
        Some(params) => {
            let mut res = s.clone();
            for (a, st, en, sp) in params {
                res[a] = match &s[a] {
                    Dim::Known(d) => Dim::Known(slice_range(*d, st, en, sp).1),
                    other if sp == 1 && st == 0 && en >= i32::MAX as i64 => other.clone(),
                    _ => Dim::Unknown,
                };
            }
            out(x.dtype, Some(res))
        }
        None => {
            // Axes known: only those dims become unknown.
            let axes = if ctx.opset < 10 {
                list_arg(ctx, "axes", usize::MAX)
            } else {
                list_arg(ctx, "", 3)
            };
            match axes {
                Arg::Known(a) => {
                    let a = axes_of(&a, s.len())?;
                    out(
                        x.dtype,
                        Some(
                            s.iter()
                                .enumerate()
                                .map(|(i, d)| {
                                    if a.contains(&i) {
                                        Dim::Unknown
                                    } else {
                                        d.clone()
                                    }
                                })
                                .collect(),
                        ),
                    )
                }
                _ => out(x.dtype, Some(unknown_dims(s.len()))),
            }
        }
    }
}

fn fold_slice(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let vals = load(t)?;
    let params = slice_params(ctx, t.dims.len()).ok()??;
    let mut start: Vec<i64> = vec![0; t.dims.len()];
    let mut step: Vec<i64> = vec![1; t.dims.len()];
    let mut od = t.dims.clone();
    for (a, s, e, p) in params {
        let (b, n) = slice_range(t.dims[a], s, e, p);
        start[a] = b;
        step[a] = p;
        od[a] = n;
    }
    let st = strides(&t.dims);
    let picks = each_index(&od, |m| {
        let src: Vec<i64> = m
            .iter()
            .enumerate()
            .map(|(k, &i)| start[k] + i * step[k])
            .collect();
        Some(flat(&src, &st))
    })?;
    Some(vec![build(t.dtype(), &od, &vals, &picks)])
}

// ---------------------------------------------------------------------------------------------
// Gather family, Scatter family

fn infer_gather(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let idx = ctx.tensor(1)?;
    let (Some(s), Some(q)) = (x.shape, idx.shape) else {
        return out(x.dtype, None);
    };
    let axis = axis_of(ctx.int("axis", 0), s.len())?;
    if s.is_empty() {
        return Err("Gather needs data of rank 1 or more".into());
    }
    let mut res = s[..axis].to_vec();
    res.extend(q);
    res.extend_from_slice(&s[axis + 1..]);
    out(x.dtype, Some(res))
}

fn fold_gather(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let idx = ctx.const_tensor(1)?;
    let vals = load(t)?;
    let iv = idx.to_i64s().ok()?;
    let r = t.dims.len();
    let axis = axis_of(ctx.int("axis", 0), r).ok()?;
    let q = idx.dims.len();
    let mut od = t.dims[..axis].to_vec();
    od.extend_from_slice(&idx.dims);
    od.extend_from_slice(&t.dims[axis + 1..]);
    let st = strides(&t.dims);
    let ist = strides(&idx.dims);
    let d = t.dims[axis];
    let picks = each_index(&od, |m| {
        let mut i = iv[flat(&m[axis..axis + q], &ist)];
        if i < 0 {
            i += d;
        }
        if !(0..d).contains(&i) {
            return None;
        }
        let mut src = m[..axis].to_vec();
        src.push(i);
        src.extend_from_slice(&m[axis + q..]);
        Some(flat(&src, &st))
    })?;
    Some(vec![build(t.dtype(), &od, &vals, &picks)])
}

fn infer_gather_elements(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let idx = ctx.tensor(1)?;
    if let (Some(a), Some(b)) = (&x.shape, &idx.shape) {
        if a.len() != b.len() {
            return Err(format!(
                "GatherElements data has rank {} but indices rank {}",
                a.len(),
                b.len()
            ));
        }
        axis_of(ctx.int("axis", 0), a.len())?;
    }
    out(x.dtype, idx.shape)
}

fn infer_gather_nd(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let idx = ctx.tensor(1)?;
    let b = ctx.int("batch_dims", 0).max(0) as usize;
    let (Some(s), Some(q)) = (x.shape, idx.shape) else {
        return out(x.dtype, None);
    };
    let Some(last) = q.last() else {
        return Err("GatherND indices must have rank 1 or more".into());
    };
    let Dim::Known(k) = last else {
        return out(x.dtype, None);
    };
    if *k < 0 {
        return Err(format!("GatherND index depth {k} is negative"));
    }
    let k = *k as usize;
    if b + k > s.len() {
        return Err(format!(
            "GatherND: batch_dims {b} + index depth {k} exceed the data rank {}",
            s.len()
        ));
    }
    if b >= q.len() {
        return Err(format!(
            "GatherND: batch_dims {b} needs indices of rank above {b}, found {}",
            q.len()
        ));
    }
    for i in 0..b {
        if let (Dim::Known(p), Dim::Known(r)) = (&s[i], &q[i])
            && p != r
        {
            return Err(format!(
                "GatherND: batch dimension {i} is {p} in the data and {r} in the indices"
            ));
        }
    }
    let mut res = q[..q.len() - 1].to_vec();
    res.extend_from_slice(&s[b + k..]);
    out(x.dtype, Some(res))
}

fn infer_scatter(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let idx = ctx.tensor(1)?;
    let upd = ctx.tensor(2)?;
    if let (Some(a), Some(b)) = (&idx.shape, &upd.shape)
        && a.len() != b.len()
    {
        return Err(format!(
            "indices rank {} differs from updates rank {}",
            a.len(),
            b.len()
        ));
    }
    if let Some(s) = &x.shape {
        if let Some(a) = &idx.shape
            && a.len() != s.len()
        {
            return Err(format!(
                "indices rank {} differs from data rank {}",
                a.len(),
                s.len()
            ));
        }
        axis_of(ctx.int("axis", 0), s.len())?;
    }
    out(x.dtype, x.shape)
}

// ---------------------------------------------------------------------------------------------
// Index ranges: constant indices must address existing elements (out-of-range indices are an
// error for Gather*, Scatter*; a mutation that changes the data's shape must not make them so).

/// Checks constant `indices` (input 1) against data (input 0) dimension `axis`.
fn indices_along_axis(ctx: &InferCtx) -> Result<(), String> {
    let (Some(d), Some(idx)) = (ctx.tensor(0)?.shape, ctx.const_i64s(1)) else {
        return Ok(());
    };
    if d.is_empty() {
        return Ok(());
    }
    let axis = axis_of(ctx.int("axis", 0), d.len())?;
    let Dim::Known(n) = d[axis] else {
        return Ok(());
    };
    match idx.iter().find(|&&i| i < -n || i >= n) {
        Some(i) => Err(format!(
            "index {i} is out of range for axis {axis} of length {n}"
        )),
        None => Ok(()),
    }
}

/// Checks constant index tuples (input 1, last dimension = tuple length) of GatherND /
/// ScatterND against the data dimensions after `batch_dims`.
fn indices_tuples(ctx: &InferCtx) -> Result<(), String> {
    let (Some(d), Some(q), Some(idx)) = (
        ctx.tensor(0)?.shape,
        ctx.tensor(1)?.shape,
        ctx.const_i64s(1),
    ) else {
        return Ok(());
    };
    let Some(Dim::Known(k)) = q.last().cloned() else {
        return Ok(());
    };
    let b = ctx.int("batch_dims", 0).max(0) as usize;
    if k <= 0 || b + k as usize > d.len() {
        return Ok(()); // the shape check reports it
    }
    for (p, &i) in idx.iter().enumerate() {
        let j = b + p % k as usize;
        if let Dim::Known(n) = d[j]
            && (i < -n || i >= n)
        {
            return Err(format!(
                "index {i} is out of range for dimension {j} of length {n}"
            ));
        }
    }
    Ok(())
}

/// Constant index tuples must be in range, and `updates` must have the shape
/// `indices.shape[:-1] + data.shape[indices.shape[-1]:]`.
fn scatter_nd_requires(ctx: &InferCtx) -> Result<(), String> {
    indices_tuples(ctx)?;
    let (Some(d), Some(i), Some(u)) = (
        ctx.tensor(0)?.shape,
        ctx.tensor(1)?.shape,
        ctx.tensor(2)?.shape,
    ) else {
        return Ok(());
    };
    let Some(Dim::Known(k)) = i.last().cloned() else {
        return Ok(());
    };
    let k = k as usize;
    if i.is_empty() || k > d.len() {
        return Err(format!(
            "indices' last dimension {k} exceeds the data rank {}",
            d.len()
        ));
    }
    let want: Vec<Dim> = i[..i.len() - 1].iter().chain(&d[k..]).cloned().collect();
    let known = |v: &[Dim]| v.iter().all(|x| matches!(x, Dim::Known(_)));
    if known(&want) && known(&u) && want != u {
        return Err(format!(
            "updates have shape {u:?}, expected {want:?} (indices' leading dims + data's trailing dims)"
        ));
    }
    Ok(())
}

fn infer_scatter_nd(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    out(x.dtype, x.shape)
}

// ---------------------------------------------------------------------------------------------
// Pad, Tile, Expand, CenterCropPad

fn infer_pad(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    let r = s.len();
    let pads = if ctx.opset < 11 {
        match ctx.ints("pads").or(ctx.ints("paddings")) {
            Some(p) => Arg::Known(p.to_vec()),
            None => Arg::Absent,
        }
    } else {
        list_arg(ctx, "", 1)
    };
    let axes: Option<Vec<usize>> = match list_arg(ctx, "", 3) {
        Arg::Absent => Some((0..r).collect()),
        Arg::Known(a) => Some(axes_of(&a, r)?),
        Arg::Unknown => None,
    };
    match (pads, axes) {
        (Arg::Known(p), Some(axes)) => {
            let n = axes.len();
            if p.len() != 2 * n {
                return Err(format!(
                    "pads has {} values, expected {} for {n} axes",
                    p.len(),
                    2 * n
                ));
            }
            let mode = ctx.string("mode", "constant");
            let mut res = s.clone();
            for (k, &a) in axes.iter().enumerate() {
                let add = p[k].saturating_add(p[k + n]);
                res[a] = match &s[a] {
                    Dim::Known(d) => {
                        if *d == 0 && (p[k] > 0 || p[k + n] > 0) && mode != "constant" {
                            return Err(format!(
                                "{mode} padding of axis {a}, which is empty: there is no element \
                                 to repeat"
                            ));
                        }
                        if d.saturating_add(add) < 0 {
                            return Err(format!("pads {:?} make axis {a} of size {d} negative", p));
                        }
                        Dim::Known(d.saturating_add(add))
                    }
                    other if add == 0 => other.clone(),
                    _ => Dim::Unknown,
                };
            }
            out(x.dtype, Some(res))
        }
        (_, Some(axes)) => out(
            x.dtype,
            Some(
                s.iter()
                    .enumerate()
                    .map(|(i, d)| {
                        if axes.contains(&i) {
                            Dim::Unknown
                        } else {
                            d.clone()
                        }
                    })
                    .collect(),
            ),
        ),
        _ => out(x.dtype, Some(unknown_dims(r))),
    }
}

fn infer_tile(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    if ctx.opset < 6 {
        // Old form: a scalar count of tiles along one axis.
        let (Some(t), Some(a)) = (ctx.const_i64s(1), ctx.const_i64s(2)) else {
            return out(x.dtype, Some(unknown_dims(s.len())));
        };
        let (Some(&t), Some(&a)) = (t.first(), a.first()) else {
            return Err("Tile tiles/axis are empty".into());
        };
        let a = axis_of(a, s.len())?;
        let mut res = s;
        res[a] = dim_mul(&res[a], t);
        return out(x.dtype, Some(res));
    }
    match ctx.const_i64s(1) {
        Some(rep) => {
            if rep.len() != s.len() {
                return Err(format!(
                    "Tile repeats {rep:?} has {} values for an input of rank {}",
                    rep.len(),
                    s.len()
                ));
            }
            if let Some(v) = rep.iter().find(|v| **v < 0) {
                return Err(format!("Tile repeat {v} is negative"));
            }
            out(
                x.dtype,
                Some(s.iter().zip(&rep).map(|(d, &k)| dim_mul(d, k)).collect()),
            )
        }
        None => out(x.dtype, Some(unknown_dims(s.len()))),
    }
}

fn fold_tile(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    if ctx.opset < 6 {
        return None;
    }
    let t = ctx.const_tensor(0)?;
    let rep = ctx.const_i64s(1)?;
    if rep.len() != t.dims.len() || rep.iter().any(|r| *r < 0) {
        return None;
    }
    let vals = load(t)?;
    let od: Vec<i64> = t.dims.iter().zip(&rep).map(|(d, r)| d * r).collect();
    let st = strides(&t.dims);
    let picks = each_index(&od, |m| {
        let src: Vec<i64> = m.iter().zip(&t.dims).map(|(i, d)| i % d).collect();
        Some(flat(&src, &st))
    })?;
    Some(vec![build(t.dtype(), &od, &vals, &picks)])
}

fn infer_expand(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    match ctx.const_tensor(1) {
        Some(t) => {
            let target = const_dims(t).ok_or("Expand shape cannot be read")?;
            // Dims of 1 in the target keep the input's dim; -1 or unreadable are unknown.
            let shape = broadcast_shapes(&[x.shape.clone(), Some(target)])?;
            out(x.dtype, shape)
        }
        None => match (static_len(ctx, 1), &x.shape) {
            (Some(n), Some(s)) => out(x.dtype, Some(unknown_dims(n.max(s.len())))),
            _ => out(x.dtype, None),
        },
    }
}

fn fold_expand(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let target = ctx.const_i64s(1)?;
    let vals = load(t)?;
    let r = t.dims.len().max(target.len());
    let pad = |v: &[i64]| -> Vec<i64> {
        let mut p = vec![1i64; r - v.len()];
        p.extend_from_slice(v);
        p
    };
    let (a, b) = (pad(&t.dims), pad(&target));
    let mut od = Vec::with_capacity(r);
    for k in 0..r {
        od.push(match (a[k], b[k]) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        });
    }
    let st = strides(&a);
    let picks = each_index(&od, |m| {
        let src: Vec<i64> = m
            .iter()
            .zip(&a)
            .map(|(&i, &d)| if d == 1 { 0 } else { i })
            .collect();
        Some(flat(&src, &st))
    })?;
    Some(vec![build(t.dtype(), &od, &vals, &picks)])
}

fn infer_center_crop_pad(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    let axes: Vec<usize> = match ctx.ints("axes") {
        Some(a) => axes_of(a, s.len())?,
        None => (0..s.len()).collect(),
    };
    match ctx.const_i64s(1) {
        Some(sh) => {
            if sh.len() != axes.len() {
                return Err(format!(
                    "CenterCropPad shape {sh:?} has {} values for {} axes",
                    sh.len(),
                    axes.len()
                ));
            }
            let mut res = s;
            for (k, &a) in axes.iter().enumerate() {
                res[a] = Dim::Known(sh[k]);
            }
            out(x.dtype, Some(res))
        }
        None => out(
            x.dtype,
            Some(
                s.iter()
                    .enumerate()
                    .map(|(i, d)| {
                        if axes.contains(&i) {
                            Dim::Unknown
                        } else {
                            d.clone()
                        }
                    })
                    .collect(),
            ),
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// Resize, Upsample, DepthToSpace, SpaceToDepth

/// `floor(d * scale)` as ONNX computes it (in single precision).
fn scaled(d: &Dim, scale: f64) -> Dim {
    match d {
        Dim::Known(v) => Dim::Known(((*v as f32) * scale as f32).floor() as i64),
        other if scale == 1.0 => other.clone(),
        _ => Dim::Unknown,
    }
}

fn infer_resize(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    let r = s.len();
    let (scales_at, sizes_at) = if ctx.opset < 11 {
        (1, usize::MAX)
    } else {
        (2, 3)
    };
    let axes: Vec<usize> = match ctx.ints("axes") {
        Some(a) => axes_of(a, r)?,
        None => (0..r).collect(),
    };
    let scales = ctx.const_f64s(scales_at).filter(|v| !v.is_empty());
    let sizes = ctx.const_i64s(sizes_at).filter(|v| !v.is_empty());
    let mut res = s.clone();
    if let Some(sizes) = sizes {
        if sizes.len() != axes.len() {
            return Err(format!(
                "Resize sizes {sizes:?} has {} values for {} axes",
                sizes.len(),
                axes.len()
            ));
        }
        let policy = ctx.string("keep_aspect_ratio_policy", "stretch");
        if policy == "stretch" {
            for (k, &a) in axes.iter().enumerate() {
                res[a] = Dim::Known(sizes[k]);
            }
        } else {
            let dims: Option<Vec<i64>> = axes.iter().map(|&a| s[a].value()).collect();
            let Some(dims) = dims else {
                for &a in &axes {
                    res[a] = Dim::Unknown;
                }
                return out(x.dtype, Some(res));
            };
            let ratios = dims.iter().zip(&sizes).map(|(&d, &z)| z as f32 / d as f32);
            let scale = if policy == "not_larger" {
                ratios.fold(f32::INFINITY, f32::min)
            } else {
                ratios.fold(f32::NEG_INFINITY, f32::max)
            };
            for (k, &a) in axes.iter().enumerate() {
                res[a] = Dim::Known((scale * dims[k] as f32).round() as i64);
            }
        }
        return out(x.dtype, Some(res));
    }
    if let Some(scales) = scales {
        if scales.len() != axes.len() {
            return Err(format!(
                "Resize scales {scales:?} has {} values for {} axes",
                scales.len(),
                axes.len()
            ));
        }
        if let Some(v) = scales.iter().find(|v| **v <= 0.0) {
            return Err(format!("Resize scale {v} is not positive"));
        }
        for (k, &a) in axes.iter().enumerate() {
            res[a] = scaled(&s[a], scales[k]);
        }
        return out(x.dtype, Some(res));
    }
    for &a in &axes {
        res[a] = Dim::Unknown;
    }
    out(x.dtype, Some(res))
}

fn infer_upsample(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = x.shape else {
        return out(x.dtype, None);
    };
    let scales: Option<Vec<f64>> = if ctx.opset < 7 {
        if s.len() != 4 {
            return Err(format!(
                "Upsample-1 needs a 4-D input, found rank {}",
                s.len()
            ));
        }
        Some(vec![
            1.0,
            1.0,
            ctx.float("height_scale", 1.0) as f64,
            ctx.float("width_scale", 1.0) as f64,
        ])
    } else if ctx.opset < 9 {
        ctx.floats("scales")
            .map(|v| v.iter().map(|&f| f as f64).collect())
    } else {
        ctx.const_f64s(1)
    };
    match scales {
        Some(sc) => {
            if sc.len() != s.len() {
                return Err(format!(
                    "Upsample scales {sc:?} has {} values for rank {}",
                    sc.len(),
                    s.len()
                ));
            }
            out(
                x.dtype,
                Some(s.iter().zip(&sc).map(|(d, &k)| scaled(d, k)).collect()),
            )
        }
        None => out(x.dtype, Some(unknown_dims(s.len()))),
    }
}

fn infer_depth_to_space(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let b = ctx.int("blocksize", 0);
    if b <= 0 {
        return Err(format!("blocksize {b} must be positive"));
    }
    let Some(s) = x.shape else {
        return out(x.dtype, Some(unknown_dims(4)));
    };
    if s.len() != 4 {
        return Err(format!(
            "DepthToSpace needs a 4-D input, found rank {}",
            s.len()
        ));
    }
    let c = dim_div(&s[1], b.saturating_mul(b), "channels")?;
    out(
        x.dtype,
        Some(vec![s[0].clone(), c, dim_mul(&s[2], b), dim_mul(&s[3], b)]),
    )
}

fn infer_space_to_depth(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let b = ctx.int("blocksize", 0);
    if b <= 0 {
        return Err(format!("blocksize {b} must be positive"));
    }
    let Some(s) = x.shape else {
        return out(x.dtype, Some(unknown_dims(4)));
    };
    if s.len() != 4 {
        return Err(format!(
            "SpaceToDepth needs a 4-D input, found rank {}",
            s.len()
        ));
    }
    let h = dim_div(&s[2], b, "height")?;
    let w = dim_div(&s[3], b, "width")?;
    out(
        x.dtype,
        Some(vec![
            s[0].clone(),
            dim_mul(&s[1], b.saturating_mul(b)),
            h,
            w,
        ]),
    )
}

// ---------------------------------------------------------------------------------------------
// Shape, Size, Constant, ConstantOfShape, Range

/// The `[start, end)` range of Shape over a rank-`r` input.
fn shape_range(ctx: &InferCtx, r: usize) -> (usize, usize) {
    let r = r as i64;
    let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
    let start = clampi(ctx.int("start", 0));
    let end = ctx.int_opt("end").map_or(r as usize, clampi);
    (start, end.max(start))
}

fn infer_shape(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    match x.rank() {
        Some(r) => {
            let (a, b) = shape_range(ctx, r);
            Ok(vec![fixed(I64, &[(b - a) as i64])])
        }
        None => out(I64, Some(vec![Dim::Unknown])),
    }
}

fn fold_shape(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let s = ctx.tensor(0).ok()?.shape?;
    let (a, b) = shape_range(ctx, s.len());
    let v: Option<Vec<i64>> = s[a..b].iter().map(Dim::value).collect();
    Some(vec![i64_vec(v?)])
}

fn infer_size(_ctx: &InferCtx) -> Infer {
    Ok(vec![fixed(I64, &[])])
}

fn fold_size(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let n = ctx.tensor(0).ok()?.num_elements()?;
    Some(vec![i64_tensor(&[], vec![n])])
}

/// The value held by a Constant node.
fn constant_value(ctx: &InferCtx) -> Option<Tensor> {
    if let Some(t) = attr_tensor(ctx, "value") {
        return Some(t.clone());
    }
    if let Some(v) = ctx.int_opt("value_int") {
        return Some(i64_tensor(&[], vec![v]));
    }
    if let Some(v) = ctx.ints("value_ints") {
        return Some(i64_vec(v.to_vec()));
    }
    if let Some(AttrValue::Float(f)) = ctx.attr("value_float") {
        return Some(f64_tensor(F32, &[], &[*f as f64]));
    }
    if let Some(v) = ctx.floats("value_floats") {
        return Some(f64_tensor(
            F32,
            &[v.len() as i64],
            &v.iter().map(|&f| f as f64).collect::<Vec<_>>(),
        ));
    }
    None
}

fn infer_constant(ctx: &InferCtx) -> Infer {
    const NAMES: [&str; 8] = [
        "value",
        "sparse_value",
        "value_int",
        "value_ints",
        "value_float",
        "value_floats",
        "value_string",
        "value_strings",
    ];
    let given: Vec<&str> = NAMES
        .iter()
        .copied()
        .filter(|n| ctx.attr(n).is_some())
        .collect();
    if given.len() != 1 {
        return Err(format!(
            "Constant needs exactly one value attribute, found {}: {given:?}",
            given.len()
        ));
    }
    let t = match ctx.attr(given[0]) {
        Some(AttrValue::Tensor(t)) => t.tensor_type(),
        Some(AttrValue::SparseTensor(sp)) => {
            let dt = sp.values.as_ref().map_or(DType::Other(0), |v| v.dtype());
            TensorType::fixed(dt, &sp.dims)
        }
        Some(AttrValue::Int(_)) => TensorType::fixed(I64, &[]),
        Some(AttrValue::Ints(v)) => TensorType::fixed(I64, &[v.len() as i64]),
        Some(AttrValue::Float(_)) => TensorType::fixed(F32, &[]),
        Some(AttrValue::Floats(v)) => TensorType::fixed(F32, &[v.len() as i64]),
        Some(AttrValue::String(_)) => TensorType::fixed(DType::String, &[]),
        Some(AttrValue::Strings(v)) => TensorType::fixed(DType::String, &[v.len() as i64]),
        Some(other) => {
            return Err(format!(
                "Constant attribute '{}' has kind {}",
                given[0],
                other.kind().name()
            ));
        }
        None => unreachable!(),
    };
    Ok(vec![ValueType::Tensor(t)])
}

fn fold_constant(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let t = constant_value(ctx)?;
    (!t.is_external() && t.num_elements() <= 4096).then(|| vec![t])
}

fn infer_constant_of_shape(ctx: &InferCtx) -> Infer {
    let dt = attr_tensor(ctx, "value").map_or(F32, |t| t.dtype());
    if let Some(t) = attr_tensor(ctx, "value")
        && t.num_elements() != 1
    {
        return Err(format!(
            "ConstantOfShape value must hold one element, found {}",
            t.num_elements()
        ));
    }
    match ctx.const_i64s(0) {
        Some(v) => {
            if let Some(d) = v.iter().find(|d| **d < 0) {
                return Err(format!("ConstantOfShape dim {d} is negative"));
            }
            Ok(vec![fixed(dt, &v)])
        }
        None => out(
            dt,
            static_len(ctx, 0)
                .filter(|_| ctx.tensor(0).ok().and_then(|t| t.rank()) == Some(1))
                .map(unknown_dims),
        ),
    }
}

fn fold_constant_of_shape(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let dims = ctx.const_i64s(0)?;
    let n = dims
        .iter()
        .try_fold(1i64, |a, &d| if d < 0 { None } else { a.checked_mul(d) })?;
    if n > 4096 {
        return None;
    }
    let (dt, vals) = match attr_tensor(ctx, "value") {
        Some(t) => (t.dtype(), load(t)?),
        None => (F32, Vals::F(vec![0.0])),
    };
    if vals.len() != 1 {
        return None;
    }
    Some(vec![build(dt, &dims, &vals, &vec![0; n as usize])])
}

/// Elements of a Range, from scalar start, limit, delta.
fn range_len(start: f64, limit: f64, delta: f64) -> Option<i64> {
    if delta == 0.0 {
        return None;
    }
    Some(((limit - start) / delta).ceil().max(0.0) as i64)
}

fn infer_range(ctx: &InferCtx) -> Infer {
    let dt = ctx.dtype(0);
    for i in 0..3 {
        if let Some(r) = ctx.tensor(i)?.rank()
            && r != 0
            && !(r == 1 && static_len(ctx, i) == Some(1))
        {
            return Err(format!("Range input {i} must be a scalar, found rank {r}"));
        }
    }
    let (Some(a), Some(b), Some(c)) = (ctx.const_f64s(0), ctx.const_f64s(1), ctx.const_f64s(2))
    else {
        return out(dt, Some(vec![Dim::Unknown]));
    };
    let (Some(&a), Some(&b), Some(&c)) = (a.first(), b.first(), c.first()) else {
        return Err("Range inputs are empty".into());
    };
    let Some(n) = range_len(a, b, c) else {
        return Err("Range delta is 0".into());
    };
    Ok(vec![fixed(dt, &[n])])
}

fn fold_range(ctx: &InferCtx) -> Option<Vec<Tensor>> {
    let dt = ctx.const_tensor(0)?.dtype();
    if dt.is_int() {
        let (a, b, c) = (
            *ctx.const_i64s(0)?.first()?,
            *ctx.const_i64s(1)?.first()?,
            *ctx.const_i64s(2)?.first()?,
        );
        let n = range_len(a as f64, b as f64, c as f64)?;
        if n > 4096 {
            return None;
        }
        let v: Vec<i64> = (0..n).map(|k| a + k * c).collect();
        Some(vec![build(
            dt,
            &[n],
            &Vals::I(v),
            &(0..n as usize).collect::<Vec<_>>(),
        )])
    } else {
        let (a, b, c) = (
            *ctx.const_f64s(0)?.first()?,
            *ctx.const_f64s(1)?.first()?,
            *ctx.const_f64s(2)?.first()?,
        );
        let n = range_len(a, b, c)?;
        if n > 4096 {
            return None;
        }
        let v: Vec<f64> = (0..n).map(|k| a + k as f64 * c).collect();
        Some(vec![f64_tensor(dt, &[n], &v)])
    }
}

// ---------------------------------------------------------------------------------------------
// NonZero, Compress, OneHot, EyeLike, Trilu, ReverseSequence

fn infer_non_zero(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let count = ctx
        .const_f64s(0)
        .map(|v| Dim::Known(v.iter().filter(|x| **x != 0.0).count() as i64));
    match x.rank() {
        Some(r) => out(
            I64,
            Some(vec![Dim::Known(r as i64), count.unwrap_or(Dim::Unknown)]),
        ),
        None => out(I64, Some(vec![Dim::Unknown, Dim::Unknown])),
    }
}

fn infer_compress(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let cond = ctx.const_f64s(1);
    if let Some(r) = ctx.tensor(1)?.rank()
        && r != 1
    {
        return Err(format!("Compress condition must be 1-D, found rank {r}"));
    }
    let count = |limit: Option<i64>| -> Dim {
        match (&cond, limit) {
            (Some(c), Some(l)) => Dim::Known(
                c.iter()
                    .take(l.max(0) as usize)
                    .filter(|v| **v != 0.0)
                    .count() as i64,
            ),
            _ => Dim::Unknown,
        }
    };
    // The condition may be shorter than the axis (the rest is dropped), not longer.
    let too_long = |limit: Option<i64>| -> Result<(), String> {
        if let (Some(Dim::Known(n)), Some(l)) =
            (ctx.tensor(1)?.shape.and_then(|c| c.first().cloned()), limit)
            && n > l
        {
            return Err(format!(
                "Compress condition has {n} entries for {l} slices or elements"
            ));
        }
        Ok(())
    };
    match ctx.int_opt("axis") {
        None => {
            too_long(x.num_elements())?;
            out(x.dtype, Some(vec![count(x.num_elements())]))
        }
        Some(a) => {
            let Some(s) = x.shape else {
                return out(x.dtype, None);
            };
            let a = axis_of(a, s.len())?;
            too_long(s[a].value())?;
            let mut res = s;
            res[a] = count(res[a].value());
            out(x.dtype, Some(res))
        }
    }
}

fn infer_one_hot(ctx: &InferCtx) -> Infer {
    let idx = ctx.tensor(0)?;
    let vals = ctx.tensor(2)?;
    let Some(s) = idx.shape else {
        return out(vals.dtype, None);
    };
    let r = s.len() + 1;
    let axis = axis_of(ctx.int("axis", -1), r)?;
    let depth = match ctx.const_f64s(1).as_deref() {
        Some([d]) => {
            if *d < 1.0 {
                return Err(format!("OneHot depth {d} must be at least 1"));
            }
            Dim::Known(*d as i64)
        }
        _ => Dim::Unknown,
    };
    let mut res = s;
    res.insert(axis, depth);
    out(vals.dtype, Some(res))
}

fn infer_eye_like(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let dt = dtype_attr(ctx, "dtype", x.dtype);
    if let Some(r) = x.rank()
        && r != 2
    {
        return Err(format!("EyeLike needs a 2-D input, found rank {r}"));
    }
    out(dt, Some(x.shape.unwrap_or_else(|| unknown_dims(2))))
}

fn infer_trilu(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    if let Some(r) = x.rank()
        && r < 2
    {
        return Err(format!("Trilu needs rank 2 or more, found {r}"));
    }
    out(x.dtype, x.shape)
}

fn infer_reverse_sequence(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let (b, t) = (ctx.int("batch_axis", 1), ctx.int("time_axis", 0));
    if b == t {
        return Err(format!(
            "ReverseSequence batch_axis and time_axis are both {b}"
        ));
    }
    if let Some(r) = x.rank()
        && r < 2
    {
        return Err(format!("ReverseSequence needs rank 2 or more, found {r}"));
    }
    // sequence_lens holds one length per batch entry, none above the time axis' length.
    if let Some(s) = &x.shape {
        let (bi, ti) = (axis_of(b, s.len())?, axis_of(t, s.len())?);
        if let (Some(Dim::Known(n)), Dim::Known(batch)) = (
            ctx.tensor(1)?.shape.and_then(|l| l.first().cloned()),
            &s[bi],
        ) && n != *batch
        {
            return Err(format!(
                "ReverseSequence sequence_lens has {n} entries for a batch of {batch}"
            ));
        }
        if let (Some(lens), Dim::Known(time)) = (ctx.const_i64s(1), &s[ti])
            && let Some(l) = lens.iter().find(|&&l| l < 0 || l > *time)
        {
            return Err(format!(
                "ReverseSequence sequence length {l} is outside 0..={time}"
            ));
        }
    }
    out(x.dtype, x.shape)
}

// ---------------------------------------------------------------------------------------------
// registration

/// Registers this family.
pub fn register(r: &mut Registry) {
    let axis =
        |name: &'static str, default: i64| AttrSpec::int(name, default).int_buckets(AXIS_BUCKETS);

    r.add(
        OpSpec::new(
            "Reshape",
            &[1, 5, 13, 14, 19, 21, 23, 24, 25],
            Category::Shape,
        )
        .input("data", "T")
        .opt_input("shape", I64T)
        .output("reshaped", "T")
        .attr(
            AttrSpec::of("consumed_inputs", AttrKind::Ints)
                .versions(1, Some(5))
                .no_buckets(),
        )
        .attr(AttrSpec::of("shape", AttrKind::Ints).versions(1, Some(5)))
        .attr(
            AttrSpec::int("allowzero", 0)
                .one_of_ints(&[0, 1])
                .versions(14, None),
        )
        .types("T", ALL26)
        .types(I64T, I64_ONLY)
        .infer(infer_reshape)
        .fold(|c| fold_relabel(c, infer_reshape)),
    );
    r.add(
        OpSpec::new("Transpose", &[1, 13, 21, 23, 24, 25], Category::Shape)
            .input("data", "T")
            .output("transposed", "T")
            .attr(AttrSpec::of("perm", AttrKind::Ints))
            .types("T", ALL26)
            .infer(infer_transpose)
            .fold(fold_transpose),
    );
    r.add(
        OpSpec::new("Flatten", &[1, 9, 11, 13, 21, 23, 24, 25], Category::Shape)
            .input("input", "T")
            .output("output", "T")
            .attr(axis("axis", 1))
            .types("T", ALL26)
            .infer(infer_flatten)
            .fold(|c| fold_relabel(c, infer_flatten)),
    );
    r.add(
        OpSpec::new("Squeeze", &[1, 11, 13, 21, 23, 24, 25], Category::Shape)
            .input("data", "T")
            .opt_input("axes", I64T)
            .output("squeezed", "T")
            .attr(AttrSpec::of("axes", AttrKind::Ints).versions(1, Some(13)))
            .types("T", ALL26)
            .types(I64T, I64_ONLY)
            .infer(infer_squeeze)
            .fold(|c| fold_relabel(c, infer_squeeze)),
    );
    r.add(
        OpSpec::new("Unsqueeze", &[1, 11, 13, 21, 23, 24, 25], Category::Shape)
            .input("data", "T")
            .opt_input("axes", I64T)
            .output("expanded", "T")
            .attr(
                AttrSpec::of("axes", AttrKind::Ints)
                    .required()
                    .versions(1, Some(13)),
            )
            .types("T", ALL26)
            .types(I64T, I64_ONLY)
            .infer(infer_unsqueeze)
            .fold(|c| fold_relabel(c, infer_unsqueeze)),
    );
    r.add(
        OpSpec::new("Concat", &[1, 4, 11, 13], Category::Shape)
            .var_input("inputs", "T", 1)
            .output("concat_result", "T")
            .attr(axis("axis", 1).no_buckets().versions(1, Some(4)))
            .attr(axis("axis", 1).required().versions(4, None))
            .types("T", CLASSIC16)
            .infer(infer_concat)
            .fold(fold_concat),
    );
    r.add(
        OpSpec::new("Split", &[1, 2, 11, 13, 18], Category::Shape)
            .input("input", "T")
            .opt_input("split", "Tsplit")
            .var_output("outputs", "T", 1)
            .attr(axis("axis", 0))
            .attr(AttrSpec::of("split", AttrKind::Ints).versions(1, Some(13)))
            .attr(
                AttrSpec::of("num_outputs", AttrKind::Int)
                    .range(1, i64::MAX)
                    .int_buckets(&[(1, 1), (2, 2), (3, 4), (5, i64::MAX)])
                    .versions(18, None),
            )
            .types("T", CLASSIC16)
            .types("Tsplit", &[I64, F16, F32, F64])
            .infer(infer_split),
    );
    r.add(
        OpSpec::new("Slice", &[1, 10, 11, 13], Category::Index)
            .input("data", "T")
            .opt_input("starts", "Tind")
            .opt_input("ends", "Tind")
            .opt_input("axes", "Tind")
            .opt_input("steps", "Tind")
            .output("output", "T")
            .attr(
                AttrSpec::of("starts", AttrKind::Ints)
                    .required()
                    .versions(1, Some(10)),
            )
            .attr(
                AttrSpec::of("ends", AttrKind::Ints)
                    .required()
                    .versions(1, Some(10)),
            )
            .attr(AttrSpec::of("axes", AttrKind::Ints).versions(1, Some(10)))
            .types("T", CLASSIC16)
            .types("Tind", IND)
            .infer(infer_slice)
            .fold(fold_slice),
    );
    r.add(
        OpSpec::new("Gather", &[1, 11, 13], Category::Index)
            .input("data", "T")
            .input("indices", "Tind")
            .output("output", "T")
            .attr(axis("axis", 0))
            .types("T", CLASSIC16)
            .types("Tind", IND)
            .requires(indices_along_axis)
            .infer(infer_gather)
            .fold(fold_gather),
    );
    r.add(
        OpSpec::new("GatherElements", &[11, 13], Category::Index)
            .input("data", "T")
            .input("indices", "Tind")
            .output("output", "T")
            .attr(axis("axis", 0))
            .types("T", CLASSIC16)
            .types("Tind", IND)
            .requires(indices_along_axis)
            .infer(infer_gather_elements),
    );
    r.add(
        OpSpec::new("GatherND", &[11, 12, 13], Category::Index)
            .input("data", "T")
            .input("indices", I64T)
            .output("output", "T")
            .attr(
                AttrSpec::int("batch_dims", 0)
                    .range(0, i64::MAX)
                    .int_buckets(&[(0, 0), (1, 1), (2, i64::MAX)])
                    .versions(12, None),
            )
            .types("T", CLASSIC16)
            .types(I64T, I64_ONLY)
            .requires(indices_tuples)
            .infer(infer_gather_nd),
    );
    r.add(
        OpSpec::new("Scatter", &[9], Category::Index)
            .removed_at(11)
            .input("data", "T")
            .input("indices", "Tind")
            .input("updates", "T")
            .output("output", "T")
            .attr(axis("axis", 0))
            .types("T", CLASSIC15)
            .types("Tind", IND)
            .requires(indices_along_axis)
            .infer(infer_scatter),
    );
    r.add(
        OpSpec::new("ScatterElements", &[11, 13, 16, 18], Category::Index)
            .input("data", "T")
            .input("indices", "Tind")
            .input("updates", "T")
            .output("output", "T")
            .attr(axis("axis", 0))
            .attr(
                AttrSpec::string("reduction", "none")
                    .one_of(&["none", "add", "mul", "max", "min"])
                    .versions(16, None),
            )
            .types("T", CLASSIC16)
            .types("Tind", IND)
            .requires(indices_along_axis)
            .infer(infer_scatter),
    );
    r.add(
        OpSpec::new("ScatterND", &[11, 13, 16, 18], Category::Index)
            .input("data", "T")
            .input("indices", I64T)
            .input("updates", "T")
            .output("output", "T")
            .attr(
                AttrSpec::string("reduction", "none")
                    .one_of(&["none", "add", "mul", "max", "min"])
                    .versions(16, None),
            )
            .types("T", CLASSIC16)
            .types(I64T, I64_ONLY)
            .infer(infer_scatter_nd)
            .requires(scatter_nd_requires),
    );
    r.add(
        OpSpec::new(
            "Pad",
            &[1, 2, 11, 13, 18, 19, 21, 23, 24, 25],
            Category::Shape,
        )
        .input("data", "T")
        .opt_input("pads", I64T)
        .opt_input("constant_value", "T")
        .opt_input("axes", "Tind")
        .output("output", "T")
        .attr(AttrSpec::string("mode", "constant").one_of(&["constant", "reflect", "edge", "wrap"]))
        .attr(
            AttrSpec::of("paddings", AttrKind::Ints)
                .required()
                .versions(1, Some(2)),
        )
        .attr(
            AttrSpec::of("pads", AttrKind::Ints)
                .required()
                .versions(2, Some(11)),
        )
        .attr(AttrSpec::float("value", 0.0).versions(1, Some(11)))
        .types("T", ALL26)
        .types(I64T, I64_ONLY)
        .types("Tind", IND)
        .infer(infer_pad),
    );
    r.add(
        OpSpec::new("Tile", &[1, 6, 13], Category::Shape)
            .input("input", "T")
            .input("repeats", "T1")
            .opt_input("axis", "T1")
            .output("output", "T")
            .types("T", CLASSIC16)
            .types("T1", I64_ONLY)
            .infer(infer_tile)
            .fold(fold_tile),
    );
    r.add(
        OpSpec::new("Expand", &[8, 13], Category::Shape)
            .input("input", "T")
            .input("shape", I64T)
            .output("output", "T")
            .types("T", CLASSIC16)
            .types(I64T, I64_ONLY)
            .infer(infer_expand)
            .fold(fold_expand),
    );
    r.add(
        OpSpec::new("Resize", &[10, 11, 13, 18, 19], Category::Shape)
            .input("X", "T1")
            .opt_input("roi", "T2")
            .opt_input("scales", "tensor(float)")
            .opt_input("sizes", I64T)
            .output("Y", "T1")
            .attr(AttrSpec::string("mode", "nearest").one_of(&["nearest", "linear", "cubic"]))
            .attr(
                AttrSpec::string("coordinate_transformation_mode", "half_pixel")
                    .one_of(&[
                        "half_pixel",
                        "align_corners",
                        "asymmetric",
                        "pytorch_half_pixel",
                        "tf_crop_and_resize",
                        "half_pixel_symmetric",
                        "tf_half_pixel_for_nn",
                    ])
                    .versions(11, None),
            )
            .attr(
                AttrSpec::float("cubic_coeff_a", -0.75)
                    .float_buckets(&[
                        (f64::NEG_INFINITY, -0.75),
                        (-0.75, -0.7),
                        (-0.7, f64::INFINITY),
                    ])
                    .versions(11, None),
            )
            .attr(
                AttrSpec::int("exclude_outside", 0)
                    .one_of_ints(&[0, 1])
                    .versions(11, None),
            )
            .attr(AttrSpec::float("extrapolation_value", 0.0).versions(11, None))
            .attr(
                AttrSpec::string("nearest_mode", "round_prefer_floor")
                    .one_of(&["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
                    .versions(11, None),
            )
            .attr(
                AttrSpec::int("antialias", 0)
                    .one_of_ints(&[0, 1])
                    .versions(18, None),
            )
            .attr(AttrSpec::of("axes", AttrKind::Ints).versions(18, None))
            .attr(
                AttrSpec::string("keep_aspect_ratio_policy", "stretch")
                    .one_of(&["stretch", "not_larger", "not_smaller"])
                    .versions(18, None),
            )
            .types("T1", CLASSIC16)
            .types("T2", ROI_T)
            .types("tensor(float)", &[F32])
            .types(I64T, I64_ONLY)
            .infer(infer_resize),
    );
    r.add(
        OpSpec::new("Upsample", &[1, 7, 9], Category::Shape)
            .removed_at(10)
            .input("X", "T")
            .opt_input("scales", "tensor(float)")
            .output("Y", "T")
            .attr(AttrSpec::string("mode", "nearest").one_of(&["nearest", "linear", "bilinear"]))
            .attr(
                AttrSpec::of("height_scale", AttrKind::Float)
                    .required()
                    .versions(1, Some(7)),
            )
            .attr(
                AttrSpec::of("width_scale", AttrKind::Float)
                    .required()
                    .versions(1, Some(7)),
            )
            .attr(
                AttrSpec::of("scales", AttrKind::Floats)
                    .required()
                    .versions(7, Some(9)),
            )
            .types("T", CLASSIC15)
            .types("tensor(float)", &[F32])
            .infer(infer_upsample),
    );
    r.add(
        OpSpec::new("DepthToSpace", &[1, 11, 13], Category::Shape)
            .input("input", "T")
            .output("output", "T")
            .attr(
                AttrSpec::of("blocksize", AttrKind::Int)
                    .required()
                    .range(1, i64::MAX)
                    .int_buckets(BLOCK_BUCKETS),
            )
            .attr(
                AttrSpec::string("mode", "DCR")
                    .one_of(&["DCR", "CRD"])
                    .versions(11, None),
            )
            .types("T", CLASSIC16)
            .infer(infer_depth_to_space),
    );
    r.add(
        OpSpec::new("SpaceToDepth", &[1, 13], Category::Shape)
            .input("input", "T")
            .output("output", "T")
            .attr(
                AttrSpec::of("blocksize", AttrKind::Int)
                    .required()
                    .range(1, i64::MAX)
                    .int_buckets(BLOCK_BUCKETS),
            )
            .types("T", CLASSIC16)
            .infer(infer_space_to_depth),
    );
    r.add(
        OpSpec::new("Shape", &[1, 13, 15, 19, 21, 23, 24, 25], Category::Shape)
            .input("data", "T")
            .output("shape", "T1")
            .attr(
                AttrSpec::int("start", 0)
                    .int_buckets(AXIS_BUCKETS)
                    .versions(15, None),
            )
            .attr(
                AttrSpec::of("end", AttrKind::Int)
                    .int_buckets(AXIS_BUCKETS)
                    .versions(15, None),
            )
            .types("T", ALL26)
            .types("T1", I64_ONLY)
            .infer(infer_shape)
            .fold(fold_shape),
    );
    r.add(
        OpSpec::new("Size", &[1, 13, 19, 21, 23, 24, 25], Category::Shape)
            .input("data", "T")
            .output("size", "T1")
            .types("T", ALL26)
            .types("T1", I64_ONLY)
            .infer(infer_size)
            .fold(fold_size),
    );
    r.add(
        OpSpec::new("ConstantOfShape", &[9, 20, 21, 23, 24, 25], Category::Misc)
            .input("input", "T1")
            .output("output", "T2")
            .attr(AttrSpec::of("value", AttrKind::Tensor).no_buckets())
            .types("T1", I64_ONLY)
            .types("T2", COS_VALUES)
            .infer(infer_constant_of_shape)
            .fold(fold_constant_of_shape),
    );
    r.add(
        OpSpec::new("Range", &[11, 27], Category::Misc)
            .input("start", "T")
            .input("limit", "T")
            .input("delta", "T")
            .output("output", "T")
            .attr(
                AttrSpec::int("stash_type", 1)
                    .one_of_ints(&[1, 11, 16])
                    .versions(27, None),
            )
            .types("T", RANGE_T)
            .infer(infer_range)
            .fold(fold_range),
    );
    r.add(
        OpSpec::new(
            "Constant",
            &[1, 9, 11, 12, 13, 19, 21, 23, 24, 25],
            Category::Misc,
        )
        .output("output", "T")
        .attr(
            AttrSpec::of("value", AttrKind::Tensor)
                .required()
                .no_buckets()
                .versions(1, Some(11)),
        )
        .attr(
            AttrSpec::of("value", AttrKind::Tensor)
                .no_buckets()
                .versions(11, None),
        )
        .attr(
            AttrSpec::of("sparse_value", AttrKind::SparseTensor)
                .no_buckets()
                .versions(11, None),
        )
        .attr(
            AttrSpec::of("value_int", AttrKind::Int)
                .no_buckets()
                .versions(12, None),
        )
        .attr(
            AttrSpec::of("value_ints", AttrKind::Ints)
                .no_buckets()
                .versions(12, None),
        )
        .attr(
            AttrSpec::of("value_float", AttrKind::Float)
                .no_buckets()
                .versions(12, None),
        )
        .attr(
            AttrSpec::of("value_floats", AttrKind::Floats)
                .no_buckets()
                .versions(12, None),
        )
        .attr(
            AttrSpec::of("value_string", AttrKind::String)
                .no_buckets()
                .versions(12, None),
        )
        .attr(
            AttrSpec::of("value_strings", AttrKind::Strings)
                .no_buckets()
                .versions(12, None),
        )
        .types("T", ALL26)
        .infer(infer_constant)
        .fold(fold_constant),
    );
    r.add(
        OpSpec::new("NonZero", &[9, 13], Category::Index)
            .input("X", "T")
            .output("Y", I64T)
            .types("T", CLASSIC16)
            .types(I64T, I64_ONLY)
            .infer(infer_non_zero),
    );
    r.add(
        OpSpec::new("Compress", &[9, 11], Category::Index)
            .input("input", "T")
            .input("condition", "T1")
            .output("output", "T")
            .attr(AttrSpec::of("axis", AttrKind::Int).int_buckets(AXIS_BUCKETS))
            .types("T", CLASSIC15)
            .types("T1", &[Bool])
            .infer(infer_compress),
    );
    r.add(
        OpSpec::new("OneHot", &[9, 11], Category::Index)
            .input("indices", "T1")
            .input("depth", "T2")
            .input("values", "T3")
            .output("output", "T3")
            .attr(axis("axis", -1))
            .types("T1", ONEHOT_IDX)
            .types("T2", ONEHOT_IDX)
            .types("T3", CLASSIC15)
            .infer(infer_one_hot)
            .requires(
                |c| match c.inputs.first().and_then(|t| t.as_ref()?.tensor()?.rank()) {
                    Some(0) => Err("OneHot indices must have rank 1 or more".into()),
                    _ => Ok(()),
                },
            ),
    );
    r.add(
        OpSpec::new("EyeLike", &[9, 22], Category::Misc)
            .input("input", "T1")
            .output("output", "T2")
            .attr(
                AttrSpec::of("dtype", AttrKind::Int)
                    .one_of_ints(&[1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16]),
            )
            .attr(AttrSpec::int("k", 0).int_buckets(&[
                (i64::MIN, -1),
                (0, 0),
                (1, 1),
                (2, i64::MAX),
            ]))
            .types("T1", EYE_T)
            .types("T2", EYE_T)
            .infer(infer_eye_like),
    );
    r.add(
        OpSpec::new("Trilu", &[14], Category::Shape)
            .input("input", "T")
            .opt_input("k", I64T)
            .output("output", "T")
            .attr(AttrSpec::int("upper", 1).one_of_ints(&[0, 1]))
            .types("T", CLASSIC16)
            .types(I64T, I64_ONLY)
            .infer(infer_trilu),
    );
    r.add(
        OpSpec::new("ReverseSequence", &[10], Category::Shape)
            .input("input", "T")
            .input("sequence_lens", I64T)
            .output("Y", "T")
            .attr(AttrSpec::int("batch_axis", 1).one_of_ints(&[0, 1]))
            .attr(AttrSpec::int("time_axis", 0).one_of_ints(&[0, 1]))
            .types("T", CLASSIC15)
            .types(I64T, I64_ONLY)
            .infer(infer_reverse_sequence),
    );
    r.add(
        OpSpec::new("CenterCropPad", &[18], Category::Shape)
            .input("input_data", "T")
            .input("shape", "Tind")
            .output("output_data", "T")
            .attr(AttrSpec::of("axes", AttrKind::Ints))
            .types("T", CLASSIC16)
            .types("Tind", IND)
            .infer(infer_center_crop_pad),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Node;

    fn run(
        node: &Node,
        opset: i64,
        inputs: Vec<Option<ValueType>>,
        consts: Vec<Option<Tensor>>,
    ) -> (Result<Vec<ValueType>, String>, Option<Vec<Tensor>>) {
        let ctx = InferCtx::new(node, opset, inputs, consts);
        let spec = Registry::global().for_node(node).expect("spec");
        ((spec.infer)(&ctx), spec.fold.and_then(|f| f(&ctx)))
    }

    fn f32t(dims: &[i64]) -> Option<ValueType> {
        Some(fixed(F32, dims))
    }

    fn i64c(v: &[i64]) -> (Option<ValueType>, Option<Tensor>) {
        let t = i64_vec(v.to_vec());
        (Some(ValueType::Tensor(t.tensor_type())), Some(t))
    }

    fn shape_of(r: &Result<Vec<ValueType>, String>) -> String {
        r.as_ref()
            .map(|v| v[0].to_string())
            .unwrap_or_else(|e| format!("error: {e}"))
    }

    #[test]
    fn slice_clamps_starts_and_ends() {
        assert_eq!(slice_range(10, 1000, 1000, 1), (10, 0));
        assert_eq!(slice_range(10, -1000, 1000, 2), (0, 5));
        assert_eq!(slice_range(5, -1, -1000, -1), (4, 5));
        assert_eq!(slice_range(20, 20, 0, -1), (19, 19));
        assert_eq!(slice_range(5, 3, 4, -1), (3, 0));
        let node = Node::new("Slice", &["x", "s", "e", "a", "p"], &["y"]);
        let (s, sc) = i64c(&[0, -1000, -1]);
        let (e, ec) = i64c(&[i64::MAX, 1000, -1000]);
        let (a, ac) = i64c(&[0, 1, 2]);
        let (p, pc) = i64c(&[1, 2, -1]);
        let (r, _) = run(
            &node,
            13,
            vec![f32t(&[20, 10, 5]), s, e, a, p],
            vec![None, sc, ec, ac, pc],
        );
        assert_eq!(shape_of(&r), "f32[20,5,5]");
        // Old form: attributes.
        let node = Node::new("Slice", &["x"], &["y"])
            .with_attr("starts", AttrValue::Ints(vec![1]))
            .with_attr("ends", AttrValue::Ints(vec![-1]))
            .with_attr("axes", AttrValue::Ints(vec![-1]));
        let (r, _) = run(&node, 9, vec![f32t(&[2, 7])], vec![None]);
        assert_eq!(shape_of(&r), "f32[2,5]");
    }

    #[test]
    fn reshape_zero_and_minus_one() {
        let d = |v: &[i64]| v.iter().map(|&x| Dim::Known(x)).collect::<Vec<_>>();
        assert_eq!(
            reshape_dims(Some(&d(&[2, 3, 4])), &[0, -1], false).unwrap(),
            d(&[2, 12])
        );
        assert_eq!(
            reshape_dims(Some(&d(&[2, 3, 4])), &[4, 0, -1], false).unwrap(),
            d(&[4, 3, 2])
        );
        assert!(reshape_dims(Some(&d(&[2, 3, 4])), &[5, -1], false).is_err());
        assert!(reshape_dims(Some(&d(&[2, 3, 4])), &[-1, -1], false).is_err());
        assert!(reshape_dims(Some(&d(&[2, 3, 4])), &[0, 4], true).is_err());
        assert_eq!(
            reshape_dims(Some(&d(&[0, 3])), &[3, 0], true).unwrap(),
            d(&[3, 0])
        );
        let sym = vec![Dim::Param("N".into()), Dim::Known(3), Dim::Known(4)];
        assert_eq!(
            reshape_dims(Some(&sym), &[0, -1], false).unwrap(),
            vec![Dim::Param("N".into()), Dim::Known(12)]
        );
        assert_eq!(
            reshape_dims(Some(&sym), &[12, -1], false).unwrap(),
            vec![Dim::Known(12), Dim::Param("N".into())]
        );
        assert_eq!(
            reshape_dims(Some(&sym), &[4, -1], false).unwrap(),
            vec![Dim::Known(4), Dim::Unknown]
        );
    }

    #[test]
    fn resize_output_size_rounding() {
        let node = Node::new("Resize", &["x", "", "s"], &["y"]);
        let sc = f64_tensor(F32, &[4], &[1.0, 1.0, 0.6, 0.6]);
        let inputs = vec![
            f32t(&[1, 1, 4, 4]),
            None,
            Some(ValueType::Tensor(sc.tensor_type())),
        ];
        let (r, _) = run(&node, 13, inputs, vec![None, None, Some(sc)]);
        assert_eq!(shape_of(&r), "f32[1,1,2,2]");
        let node = Node::new("Resize", &["x", "", "", "z"], &["y"])
            .with_attr(
                "keep_aspect_ratio_policy",
                AttrValue::String(b"not_larger".to_vec()),
            )
            .with_attr("axes", AttrValue::Ints(vec![2, 3]));
        let (z, zc) = i64c(&[7, 8]);
        let (r, _) = run(
            &node,
            18,
            vec![f32t(&[1, 1, 4, 4]), None, None, z],
            vec![None, None, None, zc],
        );
        assert_eq!(shape_of(&r), "f32[1,1,7,7]");
    }

    #[test]
    fn folding_chain_gives_static_reshape() {
        // Shape of a non-constant input folds from its static dims.
        let x = ValueType::Tensor(TensorType {
            dtype: F32,
            shape: Some(vec![Dim::Known(2), Dim::Known(3), Dim::Known(4)]),
        });
        let shape = Node::new("Shape", &["x"], &["s"]);
        let (_, f) = run(&shape, 15, vec![Some(x.clone())], vec![None]);
        let s = f.expect("Shape folds").remove(0);
        assert_eq!(s.to_i64s().unwrap(), vec![2, 3, 4]);
        let gather = Node::new("Gather", &["s", "i"], &["g"]);
        let idx = i64_tensor(&[], vec![-3]);
        let (r, f) = run(
            &gather,
            13,
            vec![
                Some(ValueType::Tensor(s.tensor_type())),
                Some(ValueType::Tensor(idx.tensor_type())),
            ],
            vec![Some(s.clone()), Some(idx)],
        );
        assert_eq!(shape_of(&r), "i64[]");
        let g = f.expect("Gather folds").remove(0);
        assert_eq!((g.dims.clone(), g.to_i64s().unwrap()), (vec![], vec![2]));
        let unsq = Node::new("Unsqueeze", &["g", "a"], &["u"]);
        let (a, ac) = i64c(&[0]);
        let (_, f) = run(
            &unsq,
            13,
            vec![Some(ValueType::Tensor(g.tensor_type())), a],
            vec![Some(g), ac],
        );
        let u = f.expect("Unsqueeze folds").remove(0);
        let concat = Node::new("Concat", &["u", "m"], &["c"]).with_attr("axis", AttrValue::Int(0));
        let (m, mc) = i64c(&[-1]);
        let (_, f) = run(
            &concat,
            13,
            vec![Some(ValueType::Tensor(u.tensor_type())), m],
            vec![Some(u), mc],
        );
        let c = f.expect("Concat folds").remove(0);
        assert_eq!(c.to_i64s().unwrap(), vec![2, -1]);
        let reshape = Node::new("Reshape", &["x", "c"], &["y"]);
        let (r, _) = run(
            &reshape,
            14,
            vec![Some(x), Some(ValueType::Tensor(c.tensor_type()))],
            vec![None, Some(c)],
        );
        assert_eq!(shape_of(&r), "f32[2,12]");
    }

    #[test]
    fn split_num_outputs_and_fold_slice_negative_step() {
        let node = Node::new("Split", &["x"], &["a", "b", "c"])
            .with_attr("num_outputs", AttrValue::Int(3));
        let (r, _) = run(&node, 18, vec![f32t(&[7, 2])], vec![None]);
        let got: Vec<String> = r.unwrap().iter().map(|t| t.to_string()).collect();
        assert_eq!(got, vec!["f32[3,2]", "f32[3,2]", "f32[1,2]"]);
        let data = i64_vec(vec![10, 11, 12, 13, 14]);
        let node = Node::new("Slice", &["d", "s", "e", "", "p"], &["y"]);
        let (s, sc) = i64c(&[-1]);
        let (e, ec) = i64c(&[0]);
        let (p, pc) = i64c(&[-2]);
        let (_, f) = run(
            &node,
            13,
            vec![Some(ValueType::Tensor(data.tensor_type())), s, e, None, p],
            vec![Some(data), sc, ec, None, pc],
        );
        assert_eq!(f.expect("Slice folds")[0].to_i64s().unwrap(), vec![14, 12]);
    }
}
