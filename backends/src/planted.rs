//! Planted-bug backends: the reference interpreter with exactly one op replaced by an
//! implementation that carries a known, realistic bug. They exist to test that a campaign finds,
//! localizes and minimizes real-looking bugs: the campaign cannot tell them from a library, and
//! the test knows the answer.
//!
//! Each is a [`Reference`] made with [`Reference::with_overrides`]: outputs in their declared
//! element types, the capabilities of the reference, version [`VERSION`]. They are created by
//! name through [`crate::catalog::create`] (names in [`crate::catalog::PLANTED`]) and are never
//! part of the default backend set.
//!
//! | name | op | bug |
//! |---|---|---|
//! | [`CONV_PAD`] | `Conv` | a begin pad `p > 0` is applied as `p - 1` (and its end pad as `+ 1`) |
//! | [`SOFTMAX`] | `Softmax` | no max subtraction, f32 arithmetic: NaN once an input exceeds ≈ 88.7 |
//! | [`REDUCE_MEAN`] | `ReduceMean` | a negative axis `a` is normalized to `a + rank - 1` |
//! | [`MAXPOOL_SAME`] | `MaxPool` | `auto_pad = SAME_*` pads computed from the undilated kernel (wrong output shape) |
//! | [`RNN_CLIP`] | `RNN`, `GRU`, `LSTM` | the `clip` attribute is ignored (one bug in three ops) |
//! | [`TWO`] | `Softmax`, `ReduceMean` | both of [`SOFTMAX`]'s and [`REDUCE_MEAN`]'s bugs: two bugs of one library |
use crate::reference::tensor::{R, T, err};
use crate::reference::{Cx, OpFn, OpTable, Reference, V, geometry, inp, one, opt, table};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::graph::Node;

/// The version every planted backend reports.
pub const VERSION: &str = "planted-1";

/// Name of the backend whose `Conv` has an off-by-one in its padding ([`conv_pad`]).
pub const CONV_PAD: &str = "planted-conv-pad";
/// Name of the backend whose `Softmax` overflows ([`softmax`]).
pub const SOFTMAX: &str = "planted-softmax";
/// Name of the backend whose `ReduceMean` mis-normalizes negative axes ([`reduce_mean`]).
pub const REDUCE_MEAN: &str = "planted-reducemean";

/// Name of the backend whose `MaxPool` pads for `SAME` as if there were no dilation
/// ([`maxpool_same`]).
pub const MAXPOOL_SAME: &str = "planted-maxpool-same";

/// Name of the backend whose recurrent layers ignore `clip` ([`rnn_clip`]).
pub const RNN_CLIP: &str = "planted-rnn-clip";

/// Name of the backend with two bugs, [`softmax_unstable`] and [`reduce_mean_bad_axis`]: a
/// model may show one, the other or both.
pub const TWO: &str = "planted-two";

/// Every planted backend's name.
pub const NAMES: &[&str] = &[CONV_PAD, SOFTMAX, REDUCE_MEAN, MAXPOOL_SAME, RNN_CLIP, TWO];

/// The planted backend named `name` (one of [`NAMES`]).
pub fn by_name(name: &str) -> Option<Reference> {
    match name {
        CONV_PAD => Some(conv_pad()),
        SOFTMAX => Some(softmax()),
        REDUCE_MEAN => Some(reduce_mean()),
        MAXPOOL_SAME => Some(maxpool_same()),
        RNN_CLIP => Some(rnn_clip()),
        TWO => Some(two()),
        _ => None,
    }
}

fn planted(name: &str, op: &'static str, f: OpFn) -> Reference {
    Reference::with_overrides(name, VERSION, OpTable::from([(op, f)]))
}

/// The reference's own implementation of `op`.
fn base(op: &str) -> R<OpFn> {
    table()
        .get(op)
        .copied()
        .ok_or_else(|| err(format!("the reference has no {op}")))
}

/// `planted-conv-pad`: the reference with [`conv_off_by_one`] as `Conv`.
pub fn conv_pad() -> Reference {
    planted(CONV_PAD, "Conv", conv_off_by_one)
}

/// `Conv` with an off-by-one in its padding. The pads are resolved as ONNX says (explicit
/// `pads`, or `auto_pad`); then every spatial dimension whose begin pad `p` is positive is
/// computed with begin pad `p - 1` and end pad `e + 1`. The output shape is unchanged (the total
/// pad is the same) but the window is shifted by one input position along that dimension, so
/// the values differ; convolutions whose begin pads are all zero are computed correctly.
pub fn conv_off_by_one(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let conv = base("Conv")?;
    let (x, w) = (inp(ins, 0)?, inp(ins, 1)?);
    if x.rank() < 3 || w.rank() != x.rank() {
        return conv(cx, n, ins);
    }
    // A geometry the reference refuses is refused the same way by the reference's Conv.
    let Ok(geo) = geometry(n, &x.shape[2..], &w.shape[2..], false) else {
        return conv(cx, n, ins);
    };
    if geo.pb.iter().all(|&p| p <= 0) {
        return conv(cx, n, ins);
    }
    let shift = |p: i64| i64::from(p > 0);
    let begin = geo.pb.iter().map(|&p| p - shift(p));
    let end = geo.pe.iter().zip(&geo.pb).map(|(&e, &p)| e + shift(p));
    let pads: Vec<i64> = begin.chain(end).collect();
    let node = n
        .clone()
        .with_attr("auto_pad", AttrValue::String(b"NOTSET".to_vec()))
        .with_attr("pads", AttrValue::Ints(pads));
    conv(cx, &node, ins)
}

/// `planted-two`: the reference with [`softmax_unstable`] as `Softmax` and
/// [`reduce_mean_bad_axis`] as `ReduceMean`.
pub fn two() -> Reference {
    Reference::with_overrides(
        TWO,
        VERSION,
        OpTable::from([
            ("Softmax", softmax_unstable as OpFn),
            ("ReduceMean", reduce_mean_bad_axis as OpFn),
        ]),
    )
}

/// `planted-softmax`: the reference with [`softmax_unstable`] as `Softmax`.
pub fn softmax() -> Reference {
    planted(SOFTMAX, "Softmax", softmax_unstable)
}

/// `Softmax` without the max subtraction, in f32 arithmetic whatever the element type:
/// `y_k = exp(x_k as f32) / Σ_j exp(x_j as f32)` (the sum accumulated in f32, in axis order).
/// The groups are those of ONNX (before opset 13 the input is coerced to 2-D at `axis`, default
/// 1; from 13 the op runs along `axis`, default -1). For moderate inputs it agrees with the
/// reference within f32 rounding; once an input along the axis exceeds ≈ 88.72 (where `exp`
/// overflows f32) that input's output is `Inf / Inf = NaN` and the others of its group are 0;
/// inputs below ≈ -103 underflow, so a group of only such inputs gives `0 / 0 = NaN`.
pub fn softmax_unstable(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let t = inp(ins, 0)?;
    let v = t.fs()?;
    let (outer, len, inner) = crate::reference::softmax_groups_of(cx, n, t)?;
    let mut out = vec![0.0; v.len()];
    let mut e = vec![0f32; len];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * len + k) * inner + i;
            let mut sum = 0f32;
            for (k, ek) in e.iter_mut().enumerate() {
                *ek = (v[at(k)] as f32).exp();
                sum += *ek;
            }
            for (k, &ek) in e.iter().enumerate() {
                out[at(k)] = f64::from(ek / sum);
            }
        }
    }
    one(T::f(t.dt, t.shape.clone(), out))
}

/// `planted-reducemean`: the reference with [`reduce_mean_bad_axis`] as `ReduceMean`.
pub fn reduce_mean() -> Reference {
    planted(REDUCE_MEAN, "ReduceMean", reduce_mean_bad_axis)
}

/// `ReduceMean` that sums over the right axes but divides by the lengths of the wrong ones when
/// an axis is negative: the divisor's code normalizes a negative axis `a` to `a + rank - 1`
/// (wrapping to the last axis when that falls below 0) instead of `a + rank`. The `axes`
/// attribute before opset 18, the `axes` input from 18. Shapes are right; values are wrong
/// wherever the two axes differ in length. Non-negative axes and "all axes" are correct.
pub fn reduce_mean_bad_axis(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let mean = base("ReduceMean")?;
    let x = inp(ins, 0)?;
    let rank = x.rank() as i64;
    let shape = x.shape.clone();
    let axes: Option<Vec<i64>> = if cx.opset < 18 {
        n.ints("axes").map(|a| a.to_vec())
    } else {
        opt(ins, 1)?.map(|t| t.ints()).transpose()?
    };
    let out = mean(cx, n, ins)?;
    let Some(axes) = axes.filter(|a| a.iter().any(|&v| v < 0)) else {
        return Ok(out);
    };
    let len = |a: i64| -> f64 {
        let i = a.rem_euclid(rank.max(1)) as usize;
        shape.get(i).copied().unwrap_or(1) as f64
    };
    let right: f64 = axes
        .iter()
        .map(|&a| len(if a < 0 { a + rank } else { a }))
        .product();
    let wrong: f64 = axes
        .iter()
        .map(|&a| {
            let b = if a < 0 { a + rank - 1 } else { a };
            len(if b < 0 { rank - 1 } else { b })
        })
        .product();
    if wrong == 0.0 || right == wrong {
        return Ok(out);
    }
    let scale = right / wrong;
    out.into_iter()
        .map(|v| match v {
            V::T(t) => {
                let vals: Vec<f64> = t.floats()?.into_iter().map(|e| e * scale).collect();
                Ok(V::T(T::from_f64s(t.dt, t.shape.clone(), vals)?))
            }
            other => Ok(other),
        })
        .collect()
}

/// `planted-maxpool-same`: the reference with [`maxpool_same_undilated`] as `MaxPool`.
pub fn maxpool_same() -> Reference {
    planted(MAXPOOL_SAME, "MaxPool", maxpool_same_undilated)
}

/// `MaxPool` whose `SAME_UPPER` / `SAME_LOWER` padding is computed from the undilated kernel
/// and then applied to the dilated window: with a dilation above 1 the total pad is too small
/// and the output comes out smaller than `ceil(input / stride)` (ONNX Runtime 1.31 does this).
/// Every other case is the reference's.
pub fn maxpool_same_undilated(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let pool = base("MaxPool")?;
    let x = inp(ins, 0)?;
    let auto = n.string("auto_pad", "NOTSET");
    let dilated = n
        .ints("dilations")
        .is_some_and(|d| d.iter().any(|&v| v > 1));
    let Some(kernel) = n.ints("kernel_shape") else {
        return pool(cx, n, ins);
    };
    if !auto.starts_with("SAME") || !dilated || x.rank() < 3 {
        return pool(cx, n, ins);
    }
    let kernel: Vec<usize> = kernel.iter().map(|&k| k.max(1) as usize).collect();
    let undilated = n
        .clone()
        .with_attr("dilations", AttrValue::Ints(vec![1; kernel.len()]));
    let Ok(geo) = geometry(&undilated, &x.shape[2..], &kernel, false) else {
        return pool(cx, n, ins);
    };
    let pads: Vec<i64> = geo.pb.iter().chain(&geo.pe).copied().collect();
    let node = n
        .clone()
        .with_attr("auto_pad", AttrValue::String(b"NOTSET".to_vec()))
        .with_attr("pads", AttrValue::Ints(pads));
    pool(cx, &node, ins)
}

/// `planted-rnn-clip`: the reference with [`recurrent_without_clip`] as `RNN`, `GRU` and
/// `LSTM`.
pub fn rnn_clip() -> Reference {
    let f: OpFn = recurrent_without_clip;
    Reference::with_overrides(
        RNN_CLIP,
        VERSION,
        OpTable::from([("RNN", f), ("GRU", f), ("LSTM", f)]),
    )
}

/// A recurrent layer that ignores its `clip` attribute (tract 0.23 does, in all three ops):
/// one root cause that shows on three op types and with any other attribute.
pub fn recurrent_without_clip(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> R<Vec<V>> {
    let op = base(&n.op_type)?;
    let mut node = n.clone();
    node.attributes.retain(|a| a.name != "clip");
    op(cx, &node, ins)
}
