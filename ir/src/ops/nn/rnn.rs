//! The recurrent layers: RNN, LSTM and GRU (one spec builder for the three).

use super::{MAX, flag, known, shape_of};
use crate::attr::{AttrKind, AttrLookup, AttrValue};
use crate::dtype::DType;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// Number of gates of a recurrent op.
fn gates(op: &str) -> i64 {
    match op {
        "LSTM" => 4,
        "GRU" => 3,
        _ => 1,
    }
}

/// The outputs of a recurrent op: Y, Y_h (and Y_c), from X, `layout`, `direction` and
/// `hidden_size` (else R's last axis).
pub(crate) fn rnn_infer(ctx: &InferCtx) -> Infer {
    let xs = shape_of(ctx, 0);
    let dt = ctx.dtype(0);
    let layout = ctx.int("layout", 0);
    let dirs = if ctx.string("direction", "forward") == "bidirectional" {
        2
    } else {
        1
    };
    if let Some(x) = &xs
        && x.len() != 3
    {
        return Err(rule!(
            "{} input X must have rank 3, found {}",
            ctx.node.op_type,
            x.len()
        ));
    }
    let hidden = match ctx.int_opt("hidden_size") {
        Some(h) => Dim::Known(h),
        None => shape_of(ctx, 2)
            .and_then(|r| r.get(2).cloned())
            .unwrap_or(Dim::Unknown),
    };
    let (seq, batch) = match &xs {
        Some(x) if layout == 0 => (x[0].clone(), x[1].clone()),
        Some(x) => (x[1].clone(), x[0].clone()),
        None => (Dim::Unknown, Dim::Unknown),
    };
    let nd = Dim::Known(dirs);
    let y = if layout == 0 {
        vec![seq, nd.clone(), batch.clone(), hidden.clone()]
    } else {
        vec![batch.clone(), seq, nd.clone(), hidden.clone()]
    };
    let yh = if layout == 0 {
        vec![nd, batch, hidden]
    } else {
        vec![batch, nd, hidden]
    };
    let mut out = vec![tensor(dt, Some(y))];
    for _ in 1..ctx.n_outputs() {
        out.push(tensor(dt, Some(yh.clone())));
    }
    Ok(out)
}

/// Input `i`, when its shape is known, has `want`'s rank and its known sizes.
pub(crate) fn expect_dims(
    ctx: &InferCtx,
    i: usize,
    want: &[Option<i64>],
) -> Result<(), InferError> {
    let Some(s) = shape_of(ctx, i) else {
        return Ok(());
    };
    if s.len() != want.len() {
        return Err(rule!(
            "input {i} must have rank {}, found {}",
            want.len(),
            s.len()
        ));
    }
    for (j, w) in want.iter().enumerate() {
        if let (Some(w), Some(v)) = (w, s[j].value())
            && *w != v
        {
            return Err(rule!("input {i} has {v} at axis {j}, expected {w}"));
        }
    }
    Ok(())
}

fn rnn_check(ctx: &InferCtx) -> Result<(), InferError> {
    rnn_infer(ctx)?;
    let g = gates(&ctx.node.op_type);
    let dirs = if ctx.string("direction", "forward") == "bidirectional" {
        2
    } else {
        1
    };
    let h = ctx
        .int_opt("hidden_size")
        .or_else(|| shape_of(ctx, 2).and_then(|r| known(r.get(2))));
    let input = shape_of(ctx, 0).and_then(|x| known(x.get(2)));
    expect_dims(ctx, 1, &[Some(dirs), h.map(|h| g * h), input])?;
    expect_dims(ctx, 2, &[Some(dirs), h.map(|h| g * h), h])?;
    if let Some(b) = shape_of(ctx, 3) {
        let want = h.map(|h| 2 * g * h);
        if b.len() != 2 || want.is_some_and(|w| b[1].value().is_some_and(|v| v != w)) {
            return Err(rule!(
                "bias has shape {b:?}, expected [{dirs}, {}]",
                want.unwrap_or(-1)
            ));
        }
    }
    let per_dir = if ctx.node.op_type == "RNN" {
        1
    } else {
        2 + (g == 4) as i64
    };
    activations_check(ctx, per_dir * dirs)
}

/// The attributes every recurrent cell shares (ONNX's RNN, GRU and LSTM, ONNX Runtime's
/// DynamicQuantizeLSTM): activations (`acts`, whose default differs), clip, direction and
/// hidden size.
pub(crate) fn cell_attrs(s: OpSpec, acts: AttrSpec) -> OpSpec {
    s.attr(AttrSpec::of("activation_alpha", AttrKind::Floats))
        .attr(AttrSpec::of("activation_beta", AttrKind::Floats))
        .attr(acts)
        .attr(AttrSpec::of("clip", AttrKind::Float).float_buckets(&[
            (1e-3, 1.0),
            (1.0, 10.0),
            (10.0, f64::INFINITY),
        ]))
        .attr(AttrSpec::string("direction", "forward").one_of(&[
            "forward",
            "reverse",
            "bidirectional",
        ]))
        .attr(
            AttrSpec::of("hidden_size", AttrKind::Int)
                .range(1, MAX)
                .int_buckets(&[(1, 1), (2, 16), (17, 128), (129, MAX)]),
        )
}

/// The `activations` attribute, when given: names of ONNX's list (any case), at least `n`.
pub(crate) fn activations_check(ctx: &InferCtx, n: i64) -> Result<(), InferError> {
    let Some(AttrValue::Strings(v)) = ctx.attr("activations") else {
        return Ok(());
    };
    const OK: &[&str] = &[
        "Relu",
        "Tanh",
        "Sigmoid",
        "Affine",
        "LeakyRelu",
        "ThresholdedRelu",
        "ScaledTanh",
        "HardSigmoid",
        "Elu",
        "Softsign",
        "Softplus",
    ];
    for a in v {
        let a = String::from_utf8_lossy(a);
        if !OK.iter().any(|o| o.eq_ignore_ascii_case(&a)) {
            return Err(rule!("unknown activation '{a}'"));
        }
    }
    if (v.len() as i64) < n {
        return Err(rule!("{} activations given, expected {n}", v.len()));
    }
    Ok(())
}

fn rnn_spec(op: &'static str, versions: &[i64]) -> OpSpec {
    // The gates clip and compare (NaN), and their sums have no fixed order (Inf).
    let s = OpSpec::new(op, versions, Category::Rnn)
        .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED)
        .input("X", "T")
        .input("W", "T")
        .input("R", "T")
        .opt_input("B", "T")
        .opt_input("sequence_lens", "T1")
        .opt_input("initial_h", "T");
    let s = if op == "LSTM" {
        s.opt_input("initial_c", "T").opt_input("P", "T")
    } else {
        s
    };
    let s = s.opt_output("Y", "T").opt_output("Y_h", "T");
    let s = if op == "LSTM" {
        s.opt_output("Y_c", "T")
    } else {
        s
    };
    let acts = if op == "RNN" {
        AttrSpec {
            default: Some(AttrValue::Strings(vec![b"Tanh".to_vec(), b"Tanh".to_vec()])),
            ..AttrSpec::of("activations", AttrKind::Strings)
        }
    } else {
        AttrSpec::of("activations", AttrKind::Strings)
    };
    let s = cell_attrs(s, acts)
        .attr(flag("layout").versions(14, None))
        .attr(flag("output_sequence").versions(1, Some(7)));
    let s = match op {
        "LSTM" => s.attr(flag("input_forget")),
        "GRU" => s.attr(flag("linear_before_reset").versions(3, None)),
        _ => s,
    };
    s.types("T", FLOAT)
        .types("T1", &[DType::I32])
        .infer(rnn_infer)
        .requires(rnn_check)
}

/// Registers RNN, LSTM and GRU.
pub(super) fn register(r: &mut Registry) {
    r.add(rnn_spec("RNN", &[1, 7, 14, 22]));
    r.add(rnn_spec("LSTM", &[1, 7, 14, 22]));
    r.add(rnn_spec("GRU", &[1, 3, 7, 14, 22]));
}
