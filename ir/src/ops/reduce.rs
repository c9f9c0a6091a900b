//! Op specs of the reduce family: ReduceX, ArgMax/ArgMin, the Softmax family, TopK, CumSum,
//! Unique, NonMaxSuppression, Det and the signal ops (DFT, STFT, windows, MelWeightMatrix).
use super::common::*;
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType::{self, BF16, Bool, F16, F32, F64, I8, I32, I64, U8, U32, U64};
use crate::dtype::sets::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::tensor::{Tensor, TensorExt};
use crate::types::Dim;

/// Types of ReduceSum, ReduceMean and most other reductions.
const REDUCE_T: &[DType] = &[F16, F32, F64, BF16, I32, I64, U32, U64];
/// ReduceMax / ReduceMin also take small ints and bool.
const REDUCE_MINMAX_T: &[DType] = &[F16, F32, F64, BF16, I32, I64, U32, U64, I8, U8, Bool];
/// Types of Unique (no bf16, but strings, bool and complex).
const UNIQUE_T: &[DType] = CLASSIC;
/// Buckets of an `axis` attribute: negative, 0, 1, 2 or more.
const AXIS_BUCKETS: &[(i64, i64)] = &[(i64::MIN, -1), (0, 0), (1, 1), (2, i64::MAX)];

/// The reduction a ReduceX op computes (for folding constants).
#[derive(Clone, Copy)]
enum Red {
    Sum,
    Prod,
    Max,
    Min,
    Other,
}

/// Adds one ReduceX op. `axes_input` is the opset from which `axes` is an input.
fn reduce_op(
    r: &mut Registry,
    name: &'static str,
    versions: &[i64],
    axes_input: i64,
    t: &[DType],
    red: Red,
) {
    let mut spec = OpSpec::new(name, versions, Category::Reduce)
        .input("data", "T")
        .opt_input("axes", "tensor(int64)")
        .output("reduced", "T")
        .attr(AttrSpec::int("keepdims", 1).one_of_ints(&[0, 1]))
        .attr(
            AttrSpec::of("axes", AttrKind::Ints)
                .non_empty()
                .versions(1, Some(axes_input)),
        )
        .attr(
            AttrSpec::int("noop_with_empty_axes", 0)
                .one_of_ints(&[0, 1])
                .versions(axes_input, None),
        )
        .types("T", t)
        .types("tensor(int64)", &[I64]);
    spec = match red {
        Red::Sum => spec.infer(reduce_infer).fold(|c| fold_reduce(c, Red::Sum)),
        Red::Prod => spec.infer(reduce_infer).fold(|c| fold_reduce(c, Red::Prod)),
        Red::Max => spec.infer(reduce_infer).fold(|c| fold_reduce(c, Red::Max)),
        Red::Min => spec.infer(reduce_infer).fold(|c| fold_reduce(c, Red::Min)),
        Red::Other => spec.infer(reduce_infer),
    };
    r.add(spec);
}

/// Registers this family.
pub fn register(r: &mut Registry) {
    let v4 = &[1, 11, 13, 18];
    reduce_op(r, "ReduceL1", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceL2", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceLogSum", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceLogSumExp", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceMean", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceProd", v4, 18, REDUCE_T, Red::Prod);
    reduce_op(r, "ReduceSumSquare", v4, 18, REDUCE_T, Red::Other);
    reduce_op(r, "ReduceSum", &[1, 11, 13], 13, REDUCE_T, Red::Sum);
    reduce_op(
        r,
        "ReduceMax",
        &[1, 11, 12, 13, 18, 20],
        18,
        REDUCE_MINMAX_T,
        Red::Max,
    );
    reduce_op(
        r,
        "ReduceMin",
        &[1, 11, 12, 13, 18, 20],
        18,
        REDUCE_MINMAX_T,
        Red::Min,
    );

    for name in ["ArgMax", "ArgMin"] {
        r.add(
            OpSpec::new(name, &[1, 11, 12, 13], Category::Reduce)
                .input("data", "T")
                .output("reduced", "tensor(int64)")
                .attr(AttrSpec::int("axis", 0).int_buckets(AXIS_BUCKETS))
                .attr(AttrSpec::int("keepdims", 1).one_of_ints(&[0, 1]))
                .attr(
                    AttrSpec::int("select_last_index", 0)
                        .one_of_ints(&[0, 1])
                        .versions(12, None),
                )
                .types("T", NUMERIC)
                .types("tensor(int64)", &[I64])
                .infer(arg_infer),
        );
    }

    for name in ["Softmax", "LogSoftmax", "Hardmax"] {
        r.add(
            OpSpec::new(name, &[1, 11, 13], Category::Softmax)
                .input("input", "T")
                .output("output", "T")
                // The default is 1 before opset 13 and -1 from 13 on; `softmax_infer` knows.
                .attr(AttrSpec::int("axis", -1).int_buckets(AXIS_BUCKETS))
                .types("T", FLOAT)
                .infer(softmax_infer),
        );
    }

    r.add(
        OpSpec::new("TopK", &[1, 10, 11, 24], Category::Reduce)
            .input("X", "T")
            .opt_input("K", "tensor(int64)")
            .output("Values", "T")
            .output("Indices", "I")
            .attr(AttrSpec::int("axis", -1).int_buckets(AXIS_BUCKETS))
            .attr(
                AttrSpec::of("k", AttrKind::Int)
                    .required()
                    .versions(1, Some(10))
                    .int_buckets(&[(i64::MIN, 0), (1, 1), (2, 4), (5, i64::MAX)]),
            )
            .attr(
                AttrSpec::int("largest", 1)
                    .one_of_ints(&[0, 1])
                    .versions(11, None),
            )
            .attr(
                // sorted = 0 leaves the order of the results open: mutants never ask for it
                // (no bucket), so that results can be compared element by element.
                AttrSpec::int("sorted", 1)
                    .one_of_ints(&[0, 1])
                    .int_buckets(&[(1, 1)])
                    .versions(11, None),
            )
            .types("T", NUMERIC)
            .types("tensor(int64)", &[I64])
            .types("I", &[I64])
            .requires(topk_requires)
            .infer(topk_infer),
    );

    r.add(
        OpSpec::new("CumSum", &[11, 14], Category::Reduce)
            .input("x", "T")
            .input("axis", "T2")
            .output("y", "T")
            .attr(AttrSpec::int("exclusive", 0).one_of_ints(&[0, 1]))
            .attr(AttrSpec::int("reverse", 0).one_of_ints(&[0, 1]))
            .types("T", REDUCE_T)
            .types("T2", INDEX)
            .infer(cumsum_infer),
    );

    r.add(
        OpSpec::new("Unique", &[11], Category::Index)
            .input("X", "T")
            .output("Y", "T")
            .opt_output("indices", "tensor(int64)")
            .opt_output("inverse_indices", "tensor(int64)")
            .opt_output("counts", "tensor(int64)")
            .attr(AttrSpec::of("axis", AttrKind::Int).int_buckets(AXIS_BUCKETS))
            .attr(
                AttrSpec::int("sorted", 1)
                    .one_of_ints(&[0, 1])
                    .int_buckets(&[(1, 1)]),
            )
            .types("T", UNIQUE_T)
            .types("tensor(int64)", &[I64])
            .infer(unique_infer),
    );

    r.add(
        OpSpec::new("NonMaxSuppression", &[10, 11], Category::Misc)
            .input("boxes", "tensor(float)")
            .input("scores", "tensor(float)")
            .opt_input("max_output_boxes_per_class", "tensor(int64)")
            .opt_input("iou_threshold", "tensor(float)")
            .opt_input("score_threshold", "tensor(float)")
            .output("selected_indices", "tensor(int64)")
            .attr(AttrSpec::int("center_point_box", 0).one_of_ints(&[0, 1]))
            .types("tensor(float)", &[F32])
            .types("tensor(int64)", &[I64])
            .infer(nms_infer),
    );

    r.add(
        OpSpec::new("Det", &[11, 22], Category::Linear)
            .input("X", "T")
            .output("Y", "T")
            .types("T", FLOAT)
            .infer(det_infer),
    );

    r.add(
        OpSpec::new("DFT", &[17, 20], Category::Misc)
            .input("input", "T1")
            .opt_input("dft_length", "T2")
            .opt_input("axis", "tensor(int64)")
            .output("output", "T1")
            .attr(
                AttrSpec::int("axis", 1)
                    .int_buckets(AXIS_BUCKETS)
                    .versions(17, Some(20)),
            )
            .attr(AttrSpec::int("inverse", 0).one_of_ints(&[0, 1]))
            .attr(AttrSpec::int("onesided", 0).one_of_ints(&[0, 1]))
            .types("T1", FLOAT)
            .types("T2", INDEX)
            .types("tensor(int64)", &[I64])
            .infer(dft_infer),
    );

    r.add(
        OpSpec::new("STFT", &[17], Category::Misc)
            .input("signal", "T1")
            .input("frame_step", "T2")
            .opt_input("window", "T1")
            .opt_input("frame_length", "T2")
            .output("output", "T1")
            .attr(AttrSpec::int("onesided", 1).one_of_ints(&[0, 1]))
            .types("T1", FLOAT)
            .types("T2", INDEX)
            .infer(stft_infer),
    );

    for name in ["HannWindow", "HammingWindow", "BlackmanWindow"] {
        r.add(
            OpSpec::new(name, &[17], Category::Misc)
                .input("size", "T1")
                .output("output", "T2")
                .attr(AttrSpec::int("output_datatype", 1).one_of_ints(&dtype_codes(NUMERIC)))
                .attr(AttrSpec::int("periodic", 1).one_of_ints(&[0, 1]))
                .types("T1", INDEX)
                .types("T2", NUMERIC)
                .infer(window_infer),
        );
    }

    r.add(
        OpSpec::new("MelWeightMatrix", &[17], Category::Misc)
            .input("num_mel_bins", "T1")
            .input("dft_length", "T1")
            .input("sample_rate", "T1")
            .input("lower_edge_hertz", "T2")
            .input("upper_edge_hertz", "T2")
            .output("output", "T3")
            .attr(AttrSpec::int("output_datatype", 1).one_of_ints(&dtype_codes(NUMERIC)))
            .types("T1", INDEX)
            .types("T2", FLOAT)
            .types("T3", NUMERIC)
            .infer(mel_infer),
    );
}

/// ONNX codes of a dtype set (legal values of `output_datatype`-style attributes).
fn dtype_codes(set: &[DType]) -> Vec<i64> {
    set.iter().map(|d| d.code() as i64).collect()
}

/// What a ReduceX node reduces over.
enum Axes {
    /// These axes (as written, maybe negative); empty = all or none (see noop_with_empty_axes).
    Known(Vec<i64>),
    /// Given by a non-constant input; `Some(n)` when its length is known.
    Unknown(Option<i64>),
}

fn reduce_axes(ctx: &InferCtx) -> Axes {
    if let Some(a) = ctx.ints("axes") {
        return Axes::Known(a.to_vec());
    }
    if ctx.has_input(1) {
        return match ctx.const_i64s(1) {
            Some(v) => Axes::Known(v),
            None => {
                let n = ctx
                    .tensor(1)
                    .ok()
                    .and_then(|t| t.static_dims())
                    .and_then(|d| d.first().copied());
                if n == Some(0) {
                    Axes::Known(vec![])
                } else {
                    Axes::Unknown(n)
                }
            }
        };
    }
    Axes::Known(vec![])
}

/// The normalized axes a ReduceX node reduces over, given the rank; `None` = nothing reduced.
fn reduced_set(ctx: &InferCtx, axes: &[i64], rank: usize) -> Result<Option<Vec<usize>>, String> {
    if axes.is_empty() {
        if ctx.int("noop_with_empty_axes", 0) != 0 {
            return Ok(None);
        }
        return Ok(Some((0..rank).collect()));
    }
    norm_axes(axes, rank).map(Some)
}

/// Output shape of a reduction.
fn reduce_dims(shape: &[Dim], set: &[usize], keep: bool) -> Vec<Dim> {
    let mut out = Vec::with_capacity(shape.len());
    for (i, d) in shape.iter().enumerate() {
        if set.contains(&i) {
            if keep {
                out.push(Dim::Known(1));
            }
        } else {
            out.push(d.clone());
        }
    }
    out
}

fn reduce_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let keep = ctx.int("keepdims", 1) != 0;
    let shape = match (reduce_axes(ctx), &x.shape) {
        (Axes::Known(a), Some(s)) => match reduced_set(ctx, &a, s.len())? {
            None => Some(s.clone()),
            Some(set) => Some(reduce_dims(s, &set, keep)),
        },
        (Axes::Known(a), None) => {
            // Rank unknown: only "reduce everything without keeping dims" is known.
            if a.is_empty() && !keep && ctx.int("noop_with_empty_axes", 0) == 0 {
                Some(vec![])
            } else {
                None
            }
        }
        (Axes::Unknown(n), Some(s)) => {
            if keep {
                Some(vec![Dim::Unknown; s.len()])
            } else {
                match n {
                    Some(n) if n as usize <= s.len() && n > 0 => {
                        Some(vec![Dim::Unknown; s.len() - n as usize])
                    }
                    _ => None,
                }
            }
        }
        (Axes::Unknown(_), None) => None,
    };
    Ok(vec![tensor(x.dtype, shape)])
}

/// Reduces a small constant integer tensor (shape arithmetic such as ReduceProd of a shape).
fn fold_reduce(ctx: &InferCtx, red: Red) -> Option<Vec<Tensor>> {
    let t = ctx.const_tensor(0)?;
    let dt = t.dtype();
    if !matches!(dt, I64 | I32) {
        return None;
    }
    let vals = t.to_i64s().ok()?;
    let dims: Vec<i64> = t.dims.clone();
    let Axes::Known(axes) = reduce_axes(ctx) else {
        return None;
    };
    let keep = ctx.int("keepdims", 1) != 0;
    let set = match reduced_set(ctx, &axes, dims.len()).ok()? {
        None => return Some(vec![t.clone()]),
        Some(s) => s,
    };
    if set.iter().any(|&a| dims[a] == 0) {
        return None;
    }
    // Strides of the output laid over the input's dims (reduced dims count as size 1).
    let kept: Vec<i64> = dims
        .iter()
        .enumerate()
        .map(|(i, &d)| if set.contains(&i) { 1 } else { d })
        .collect();
    let n_out: i64 = kept.iter().product();
    let mut acc: Vec<Option<i64>> = vec![None; n_out as usize];
    for (flat, &v) in vals.iter().enumerate() {
        let mut rem = flat as i64;
        let mut out_idx = 0i64;
        let mut stride = 1i64;
        for i in (0..dims.len()).rev() {
            let c = rem % dims[i];
            rem /= dims[i];
            if !set.contains(&i) {
                out_idx += c * stride;
            }
            stride *= kept[i];
        }
        let slot = &mut acc[out_idx as usize];
        *slot = Some(match (*slot, red) {
            (None, _) => v,
            (Some(a), Red::Sum) => a.wrapping_add(v),
            (Some(a), Red::Prod) => a.wrapping_mul(v),
            (Some(a), Red::Max) => a.max(v),
            (Some(a), Red::Min) => a.min(v),
            (Some(_), Red::Other) => return None,
        });
    }
    let out: Vec<i64> = acc.into_iter().collect::<Option<Vec<_>>>()?;
    let out_dims: Vec<i64> = dims
        .iter()
        .enumerate()
        .filter(|(i, _)| keep || !set.contains(i))
        .map(|(i, &d)| if set.contains(&i) { 1 } else { d })
        .collect();
    Some(vec![if dt == I64 {
        i64_tensor(&out_dims, out)
    } else {
        f64_tensor(
            dt,
            &out_dims,
            &out.iter().map(|&v| v as f64).collect::<Vec<_>>(),
        )
    }])
}

fn arg_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let keep = ctx.int("keepdims", 1) != 0;
    let shape = match &x.shape {
        None => None,
        Some(s) => {
            let a = norm_axis(ctx.int("axis", 0), s.len())?;
            Some(reduce_dims(s, &[a], keep))
        }
    };
    Ok(vec![tensor(I64, shape)])
}

fn softmax_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    if let Some(r) = x.rank() {
        let default = if ctx.opset < 13 { 1 } else { -1 };
        let axis = ctx.int("axis", default);
        // Opset 1 flattens around the axis and does not check it.
        if ctx.opset >= 11 && (r > 0 || axis != 0 && axis != -1) {
            norm_axis(axis, r)?;
        }
    }
    Ok(vec![tensor(x.dtype, x.shape)])
}

/// The k of a TopK node: the attribute before opset 10, the constant input after.
fn topk_k(ctx: &InferCtx) -> Option<i64> {
    if ctx.has_input(1) {
        ctx.const_i64s(1)
            .and_then(|v| if v.len() == 1 { Some(v[0]) } else { None })
    } else {
        ctx.int_opt("k")
    }
}

fn topk_requires(ctx: &InferCtx) -> Result<(), String> {
    if ctx.opset >= 10 && !ctx.has_input(1) {
        return Err(format!("TopK at opset {} needs the K input", ctx.opset));
    }
    if let Some(k) = topk_k(ctx)
        && k < 0
    {
        return Err(format!("TopK k = {k} is negative"));
    }
    Ok(())
}

fn topk_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    if ctx.has_input(1) {
        let kt = ctx.tensor(1)?;
        if let Some(r) = kt.rank()
            && r > 1
        {
            return Err(format!(
                "TopK K must be a 1-element 1-D tensor, found rank {r}"
            ));
        }
    }
    let k = topk_k(ctx);
    let shape = match &x.shape {
        None => None,
        Some(s) => {
            let a = norm_axis(ctx.int("axis", -1), s.len())?;
            let mut s = s.clone();
            if let (Some(k), Dim::Known(n)) = (k, &s[a])
                && k > *n
            {
                return Err(format!("TopK k = {k} exceeds axis {a} of size {n}"));
            }
            s[a] = match k {
                Some(k) if k >= 0 => Dim::Known(k),
                _ => Dim::Unknown,
            };
            Some(s)
        }
    };
    Ok(vec![tensor(x.dtype, shape.clone()), tensor(I64, shape)])
}

fn cumsum_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    if let (Some(r), Some(a)) = (x.rank(), ctx.const_i64s(1))
        && let Some(&a) = a.first()
    {
        norm_axis(a, r)?;
    }
    Ok(vec![tensor(x.dtype, x.shape)])
}

fn unique_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let axis = match (ctx.int_opt("axis"), x.rank()) {
        (Some(a), Some(r)) => Some(Some(norm_axis(a, r)?)),
        (Some(_), None) => None,
        (None, _) => Some(None),
    };
    let (y, n_in) = match axis {
        // Flattened: one unique element per entry.
        Some(None) => (
            Some(vec![Dim::Unknown]),
            x.shape
                .as_ref()
                .map(|s| dims_product(s).map(Dim::Known).unwrap_or(Dim::Unknown))
                .unwrap_or(Dim::Unknown),
        ),
        Some(Some(a)) => {
            let s = x.shape.clone().unwrap_or_default();
            let n = s[a].clone();
            let mut y = s;
            y[a] = Dim::Unknown;
            (Some(y), n)
        }
        None => (None, Dim::Unknown),
    };
    Ok(vec![
        tensor(x.dtype, y),
        tensor(I64, Some(vec![Dim::Unknown])),
        tensor(I64, Some(vec![n_in])),
        tensor(I64, Some(vec![Dim::Unknown])),
    ])
}

fn nms_infer(ctx: &InferCtx) -> Infer {
    let b = ctx.tensor(0)?;
    let s = ctx.tensor(1)?;
    if let Some(r) = b.rank()
        && r != 3
    {
        return Err(format!(
            "NonMaxSuppression boxes must be 3-D, found rank {r}"
        ));
    }
    if let Some(r) = s.rank()
        && r != 3
    {
        return Err(format!(
            "NonMaxSuppression scores must be 3-D, found rank {r}"
        ));
    }
    Ok(vec![tensor(I64, Some(vec![Dim::Unknown, Dim::Known(3)]))])
}

fn det_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let shape = match &x.shape {
        None => None,
        Some(s) => {
            if s.len() < 2 {
                return Err(format!("Det needs rank >= 2, found rank {}", s.len()));
            }
            if let (Dim::Known(a), Dim::Known(b)) = (&s[s.len() - 2], &s[s.len() - 1])
                && a != b
            {
                return Err(format!("Det needs square matrices, found {a}x{b}"));
            }
            Some(s[..s.len() - 2].to_vec())
        }
    };
    Ok(vec![tensor(x.dtype, shape)])
}

/// A constant scalar (or 1-element) integer input.
fn const_scalar(ctx: &InferCtx, i: usize) -> Option<i64> {
    let v = ctx.const_i64s(i)?;
    if v.len() == 1 { Some(v[0]) } else { None }
}

fn dft_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = &x.shape else {
        return Ok(vec![tensor(x.dtype, None)]);
    };
    let r = s.len();
    if r < 2 {
        return Err(format!(
            "DFT input needs rank >= 2 (signal and a complex dim), found rank {r}"
        ));
    }
    if let Dim::Known(c) = s[r - 1]
        && c != 1
        && c != 2
    {
        return Err(format!(
            "DFT input's last dim must be 1 (real) or 2 (complex), found {c}"
        ));
    }
    // Axis: attribute before opset 20, optional input (default -2) from 20 on.
    let axis = if ctx.opset >= 20 {
        if ctx.has_input(2) {
            const_scalar(ctx, 2)
        } else {
            Some(-2)
        }
    } else {
        Some(ctx.int("axis", 1))
    };
    let mut out = s.clone();
    out[r - 1] = Dim::Known(2);
    let Some(axis) = axis else {
        // The transformed axis is not known: every signal dim may change.
        for d in out.iter_mut().take(r - 1) {
            *d = Dim::Unknown;
        }
        if ctx.int("onesided", 0) != 0 && ctx.int("inverse", 0) != 0 {
            out[r - 1] = Dim::Known(1);
        }
        return Ok(vec![tensor(x.dtype, Some(out))]);
    };
    // Negative axes count over the whole rank; the last (complex) dim is not a signal axis.
    let a = norm_axis(axis, r)?;
    if a == r - 1 {
        return Err(format!(
            "DFT axis {axis} names the complex dim of rank-{r} input"
        ));
    }
    let given = if ctx.has_input(1) {
        match const_scalar(ctx, 1) {
            Some(n) if n > 0 => Some(Dim::Known(n)),
            Some(n) => return Err(format!("DFT dft_length = {n} must be positive")),
            None => Some(Dim::Unknown),
        }
    } else {
        None
    };
    let onesided = ctx.int("onesided", 0) != 0;
    let inverse = ctx.int("inverse", 0) != 0;
    let last = s[r - 1].value();
    match (onesided, inverse) {
        (true, false) => {
            // Forward one-sided: real input, floor(n/2)+1 bins.
            if last == Some(2) {
                return Err("one-sided DFT needs real input (last dim 1), found 2".into());
            }
            let n = given.unwrap_or_else(|| s[a].clone());
            out[a] = n
                .value()
                .map(|n| Dim::Known(n / 2 + 1))
                .unwrap_or(Dim::Unknown);
        }
        (true, true) => {
            // Inverse one-sided: half-spectrum in, real signal of 2(n-1) samples out.
            if last == Some(1) {
                return Err(
                    "inverse one-sided DFT needs complex input (last dim 2), found 1".into(),
                );
            }
            out[r - 1] = Dim::Known(1);
            out[a] = given.unwrap_or_else(|| {
                s[a].value()
                    .map(|n| Dim::Known(2 * (n - 1)))
                    .unwrap_or(Dim::Unknown)
            });
        }
        _ => out[a] = given.unwrap_or_else(|| s[a].clone()),
    }
    Ok(vec![tensor(x.dtype, Some(out))])
}

fn stft_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let (batch, len) = match &x.shape {
        Some(s) if s.len() == 3 => (s[0].clone(), s[1].value()),
        Some(s) if s.len() == 2 => (s[0].clone(), s[1].value()),
        Some(s) => {
            return Err(format!(
                "STFT signal must be [batch, length, 1|2], found rank {}",
                s.len()
            ));
        }
        None => (Dim::Unknown, None),
    };
    let step = const_scalar(ctx, 1);
    if let Some(st) = step
        && st <= 0
    {
        return Err(format!("STFT frame_step = {st} must be positive"));
    }
    let window_len = if ctx.has_input(2) {
        ctx.tensor(2)?
            .shape
            .and_then(|s| s.first().and_then(Dim::value))
    } else {
        None
    };
    let frame_len = if ctx.has_input(3) {
        const_scalar(ctx, 3)
    } else {
        window_len
    };
    let frames = match (len, frame_len, step) {
        (Some(l), Some(f), Some(st)) if l >= f => Dim::Known((l - f) / st + 1),
        (Some(l), Some(f), Some(_)) => {
            return Err(format!("STFT frame_length {f} exceeds signal length {l}"));
        }
        _ => Dim::Unknown,
    };
    let bins = match frame_len {
        Some(f) if ctx.int("onesided", 1) != 0 => Dim::Known(f / 2 + 1),
        Some(f) => Dim::Known(f),
        None => Dim::Unknown,
    };
    Ok(vec![tensor(
        x.dtype,
        Some(vec![batch, frames, bins, Dim::Known(2)]),
    )])
}

fn window_infer(ctx: &InferCtx) -> Infer {
    let dt = dtype_attr(ctx, "output_datatype", F32);
    let n = match const_scalar(ctx, 0) {
        Some(n) if n >= 0 => Dim::Known(n),
        Some(n) => return Err(format!("window size {n} is negative")),
        None => Dim::Unknown,
    };
    Ok(vec![tensor(dt, Some(vec![n]))])
}

fn mel_infer(ctx: &InferCtx) -> Infer {
    let dt = dtype_attr(ctx, "output_datatype", F32);
    let bins = const_scalar(ctx, 1)
        .map(|n| Dim::Known(n / 2 + 1))
        .unwrap_or(Dim::Unknown);
    let mels = const_scalar(ctx, 0).map(Dim::Known).unwrap_or(Dim::Unknown);
    Ok(vec![tensor(dt, Some(vec![bins, mels]))])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::AttrValue;
    use crate::graph::Node;
    use crate::types::{TensorType, ValueType};
    use std::collections::HashMap;

    fn run(
        node: &Node,
        opset: i64,
        inputs: Vec<Option<ValueType>>,
        consts: Vec<Option<Tensor>>,
    ) -> Infer {
        let spec = Registry::global().for_node(node).unwrap();
        let ctx = InferCtx::new(node, opset, inputs, consts);
        (spec.infer)(&ctx)
    }

    fn t(dims: &[i64]) -> Option<ValueType> {
        Some(ValueType::Tensor(TensorType::fixed(F32, dims)))
    }

    #[test]
    fn reduce_axes_input_and_noop() {
        let n = Node::new("ReduceSum", &["x", "a"], &["y"]);
        let out = run(
            &n,
            13,
            vec![t(&[2, 3, 4]), t(&[1])],
            vec![None, Some(i64_vec(vec![-1]))],
        )
        .unwrap();
        assert_eq!(out[0], fixed(F32, &[2, 3, 1]));
        // Empty axes: reduce everything, or nothing with noop_with_empty_axes.
        let out = run(
            &n,
            13,
            vec![t(&[2, 3, 4]), t(&[0])],
            vec![None, Some(i64_vec(vec![]))],
        )
        .unwrap();
        assert_eq!(out[0], fixed(F32, &[1, 1, 1]));
        let n2 = n
            .clone()
            .with_attr("noop_with_empty_axes", AttrValue::Int(1))
            .with_attr("keepdims", AttrValue::Int(0));
        let out = run(
            &n2,
            13,
            vec![t(&[2, 3, 4]), t(&[0])],
            vec![None, Some(i64_vec(vec![]))],
        )
        .unwrap();
        assert_eq!(out[0], fixed(F32, &[2, 3, 4]));
        // Unknown axes with keepdims=0 and a 2-element axes input: rank 1, size unknown.
        let n3 = n.clone().with_attr("keepdims", AttrValue::Int(0));
        let out = run(&n3, 13, vec![t(&[2, 3, 4]), t(&[2])], vec![None, None]).unwrap();
        assert_eq!(out[0], tensor(F32, Some(vec![Dim::Unknown])));
        // Old opset: axes attribute.
        let n4 = Node::new("ReduceMean", &["x"], &["y"])
            .with_attr("axes", AttrValue::Ints(vec![0, 2]))
            .with_attr("keepdims", AttrValue::Int(0));
        let out = run(&n4, 11, vec![t(&[2, 3, 4])], vec![None]).unwrap();
        assert_eq!(out[0], fixed(F32, &[3]));
        assert!(run(&n4, 11, vec![t(&[2, 3])], vec![None]).is_err());
    }

    #[test]
    fn reduce_prod_folds_shapes() {
        let n = Node::new("ReduceProd", &["x"], &["y"]).with_attr("keepdims", AttrValue::Int(0));
        let spec = Registry::global().for_node(&n).unwrap();
        let ctx = InferCtx {
            node: &n,
            opset: 13,
            inputs: crate::registry::owned_types(vec![Some(ValueType::Tensor(TensorType::fixed(
                I64,
                &[3],
            )))]),
            consts: crate::registry::owned(vec![Some(i64_vec(vec![2, 3, 4]))]),
            subgraph_outputs: HashMap::new(),
        };
        let v = (spec.fold.unwrap())(&ctx).unwrap();
        assert_eq!(v[0].to_i64s().unwrap(), vec![24]);
        assert!(v[0].dims.is_empty());
        let n = Node::new("ReduceSum", &["x", "a"], &["y"]);
        let spec = Registry::global().for_node(&n).unwrap();
        let ctx = InferCtx {
            node: &n,
            opset: 13,
            inputs: crate::registry::owned_types(vec![
                Some(ValueType::Tensor(TensorType::fixed(I64, &[2, 3]))),
                Some(ValueType::Tensor(TensorType::fixed(I64, &[1]))),
            ]),
            consts: crate::registry::owned(vec![
                Some(i64_tensor(&[2, 3], vec![1, 2, 3, 4, 5, 6])),
                Some(i64_vec(vec![0])),
            ]),
            subgraph_outputs: HashMap::new(),
        };
        let v = (spec.fold.unwrap())(&ctx).unwrap();
        assert_eq!(v[0].to_i64s().unwrap(), vec![5, 7, 9]);
        assert_eq!(v[0].dims, vec![1, 3]);
    }

    #[test]
    fn topk_k_from_input_or_attribute() {
        let n = Node::new("TopK", &["x", "k"], &["v", "i"]).with_attr("axis", AttrValue::Int(1));
        let out = run(
            &n,
            11,
            vec![t(&[3, 4]), t(&[1])],
            vec![None, Some(i64_vec(vec![2]))],
        )
        .unwrap();
        assert_eq!(out[0], fixed(F32, &[3, 2]));
        assert_eq!(out[1], fixed(I64, &[3, 2]));
        let out = run(&n, 11, vec![t(&[3, 4]), t(&[1])], vec![None, None]).unwrap();
        assert_eq!(out[0], tensor(F32, Some(vec![Dim::Known(3), Dim::Unknown])));
        assert!(
            run(
                &n,
                11,
                vec![t(&[3, 4]), t(&[1])],
                vec![None, Some(i64_vec(vec![5]))]
            )
            .is_err()
        );
        let old = Node::new("TopK", &["x"], &["v", "i"]).with_attr("k", AttrValue::Int(3));
        let out = run(&old, 1, vec![t(&[5, 6])], vec![None]).unwrap();
        assert_eq!(out[1], fixed(I64, &[5, 3]));
    }

    #[test]
    fn softmax_default_axis_depends_on_opset() {
        let n = Node::new("Softmax", &["x"], &["y"]);
        assert!(run(&n, 11, vec![t(&[4])], vec![None]).is_err());
        assert!(run(&n, 1, vec![t(&[4])], vec![None]).is_ok());
        assert_eq!(
            run(&n, 13, vec![t(&[4])], vec![None]).unwrap()[0],
            fixed(F32, &[4])
        );
    }

    #[test]
    fn dft_onesided_and_axis_input() {
        let n =
            Node::new("DFT", &["x", "", "axis"], &["y"]).with_attr("onesided", AttrValue::Int(1));
        let out = run(
            &n,
            20,
            vec![t(&[2, 10, 1]), None, t(&[])],
            vec![None, None, Some(i64_tensor(&[], vec![1]))],
        )
        .unwrap();
        assert_eq!(out[0], fixed(F32, &[2, 6, 2]));
        let n = Node::new("DFT", &["x"], &["y"]);
        let out = run(&n, 17, vec![t(&[2, 10, 1])], vec![None]).unwrap();
        assert_eq!(out[0], fixed(F32, &[2, 10, 2]));
        let n = n
            .with_attr("onesided", AttrValue::Int(1))
            .with_attr("inverse", AttrValue::Int(1));
        let out = run(&n, 17, vec![t(&[2, 10, 2])], vec![None]).unwrap();
        assert_eq!(out[0], fixed(F32, &[2, 18, 1]));
        assert!(run(&n, 17, vec![t(&[2, 10, 1])], vec![None]).is_err());
    }
}
