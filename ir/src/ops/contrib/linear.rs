//! The fused linear ops of `com.microsoft`: FusedConv (Conv, then an activation), FusedGemm
//! (Gemm, then an activation) and FusedMatMul (numpy matmul scaled by `alpha`, operands
//! transposed on their last two axes or moved from the batch by `transBatch*`). ORT's
//! optimizer makes them from Conv + Relu, Gemm + activation and MatMul + Transpose / scale.
use super::MS;
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType;
use crate::ops::common::*;
use crate::ops::nn::{
    conv_attrs, conv_check, conv_infer, flag, gemm, gemm_check, matmul_shape, shape_of,
};
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// The activations FusedConv applies (MLAS's fused activations) and how many
/// `activation_params` each reads.
pub const CONV_ACTIVATIONS: &[(&str, usize)] = &[
    ("Relu", 0),
    ("Tanh", 0),
    ("Sigmoid", 0),
    ("LeakyRelu", 1),
    ("Clip", 2),
    ("HardSigmoid", 2),
];

/// The activations FusedGemm applies and the `activation_*` attributes each reads (ORT's
/// kernel fails on a missing one).
pub const GEMM_ACTIVATIONS: &[(&str, &[&str])] = &[
    ("Relu", &[]),
    ("Tanh", &[]),
    ("Sigmoid", &[]),
    ("Softsign", &[]),
    ("Softplus", &[]),
    ("LeakyRelu", &["activation_alpha"]),
    ("Elu", &["activation_alpha"]),
    ("ThresholdedRelu", &["activation_alpha"]),
    ("HardSigmoid", &["activation_alpha", "activation_beta"]),
    ("Selu", &["activation_alpha", "activation_gamma"]),
];

fn names<T>(table: &[(&'static str, T)]) -> Vec<&'static str> {
    table.iter().map(|(n, _)| *n).collect()
}

fn fused_conv_check(c: &InferCtx) -> Result<(), InferError> {
    conv_check(c, 0, 1, Some(2))?;
    let act = c.string("activation", "");
    let params = c.floats("activation_params").map_or(0, |p| p.len());
    if let Some((_, n)) = CONV_ACTIVATIONS.iter().find(|(a, _)| *a == act)
        && params != *n
    {
        return Err(rule!(
            "activation {act} takes {n} activation_params, found {params}"
        ));
    }
    if c.has_input(3) {
        let y = conv_infer(c)?.remove(0);
        let y = y.tensor().and_then(|t| t.shape.clone());
        if let (Some(y), Some(z)) = (y, shape_of(c, 3))
            && y != z
        {
            return Err(rule!("Z must have the output's shape"));
        }
    }
    Ok(())
}

fn fused_gemm_check(c: &InferCtx) -> Result<(), InferError> {
    gemm_check(c)?;
    let act = c.string("activation", "");
    let Some((_, needs)) = GEMM_ACTIVATIONS.iter().find(|(a, _)| *a == act) else {
        return Err(rule!("FusedGemm needs an activation"));
    };
    for n in *needs {
        if c.node.attr(n).is_none() {
            return Err(rule!("activation {act} reads {n}, which is missing"));
        }
    }
    Ok(())
}

/// `x`'s shape as FusedMatMul reads it: the first axis moved to just before the last two
/// (`transBatch`), then the last two swapped (`trans`).
fn operand(s: Vec<Dim>, trans_batch: bool, trans: bool) -> Vec<Dim> {
    let mut s = s;
    let r = s.len();
    if trans_batch && r >= 3 {
        let first = s.remove(0);
        s.insert(r - 2, first);
    }
    if trans && r >= 2 {
        s.swap(r - 2, r - 1);
    }
    s
}

fn fused_matmul(c: &InferCtx) -> Infer {
    let side = |i: usize, tb: &str, t: &str| {
        shape_of(c, i).map(|s| operand(s, c.int(tb, 0) != 0, c.int(t, 0) != 0))
    };
    let a = side(0, "transBatchA", "transA");
    let b = side(1, "transBatchB", "transB");
    Ok(vec![tensor(c.dtype(0), matmul_shape(a, b)?)])
}

/// What ORT's kernel takes: a batch transpose on operands of one rank, 3 or more.
fn fused_matmul_check(c: &InferCtx) -> Result<(), InferError> {
    let (a, b) = (shape_of(c, 0), shape_of(c, 1));
    for (tb, s) in [("transBatchA", &a), ("transBatchB", &b)] {
        if c.int(tb, 0) != 0
            && let (Some(a), Some(b), Some(s)) = (&a, &b, s)
            && (s.len() < 3 || a.len() != b.len())
        {
            return Err(rule!("{tb} needs operands of one rank, 3 or more"));
        }
    }
    Ok(())
}

/// A transpose of a vector's last two axes is not defined (ORT ignores it; numpy has none).
fn fused_matmul_vector_transpose(c: &InferCtx) -> Result<(), InferError> {
    for (i, t) in [(0, "transA"), (1, "transB")] {
        if c.int(t, 0) != 0 && shape_of(c, i).is_some_and(|s| s.len() < 2) {
            return Err(rule!("{t} on a vector"));
        }
    }
    Ok(())
}

fn act_param(name: &'static str) -> AttrSpec {
    AttrSpec::of(name, AttrKind::Float).float_buckets(&[
        (f64::NEG_INFINITY, 0.0),
        (0.0, 1.0),
        (1.0, f64::INFINITY),
    ])
}

pub(super) fn register(r: &mut Registry) {
    r.add(
        conv_attrs(
            OpSpec::new("FusedConv", &[1], Category::Conv)
                .domain(MS)
                // The activations' NaN handling, as ONNX leaves Relu's, Sigmoid's, ... open.
                .traits(Traits::NAN_UNSPECIFIED),
            true,
        )
        .attr(AttrSpec::of("activation", AttrKind::String).one_of(&names(CONV_ACTIVATIONS)))
        .attr(AttrSpec::of("activation_params", AttrKind::Floats))
        .input("X", "T")
        .input("W", "T")
        .opt_input("B", "T")
        .opt_input("Z", "T")
        .output("Y", "T")
        .types("T", &[DType::F32])
        .infer(conv_infer)
        .requires(fused_conv_check),
    );
    let scale: &[(f64, f64)] = &[
        (f64::NEG_INFINITY, 0.0),
        (0.0, 1.0),
        (1.0, 1.0 + 1e-6),
        (1.0 + 1e-6, f64::INFINITY),
    ];
    r.add(
        OpSpec::new("FusedGemm", &[1], Category::Linear)
            .domain(MS)
            .traits(Traits::NAN_UNSPECIFIED)
            .attr(AttrSpec::float("alpha", 1.0).float_buckets(scale))
            .attr(AttrSpec::float("beta", 1.0).float_buckets(scale))
            .attr(flag("transA"))
            .attr(flag("transB"))
            .attr(AttrSpec::of("activation", AttrKind::String).one_of(&names(GEMM_ACTIVATIONS)))
            .attr(act_param("activation_alpha"))
            .attr(act_param("activation_beta"))
            .attr(act_param("activation_gamma"))
            .input("A", "T")
            .input("B", "T")
            .opt_input("C", "T")
            .output("Y", "T")
            .types("T", &[DType::F32])
            .infer(gemm)
            .requires(fused_gemm_check),
    );
    r.add(
        OpSpec::new("FusedMatMul", &[1], Category::Linear)
            .domain(MS)
            .attr(AttrSpec::float("alpha", 1.0).float_buckets(scale))
            .attr(flag("transA"))
            .attr(flag("transB"))
            .attr(flag("transBatchA"))
            .attr(flag("transBatchB"))
            .input("A", "T")
            .input("B", "T")
            .output("Y", "T")
            .types("T", &[DType::F32, DType::F64])
            .infer(fused_matmul)
            .requires(fused_matmul_check)
            .ambiguous(fused_matmul_vector_transpose),
    );
}
