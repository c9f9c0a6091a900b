//! The activations: those without attributes (Relu, Sigmoid, HardSwish, Softplus, Softsign,
//! Mish) and those with (LeakyRelu, PRelu, Elu, Selu, Celu, Gelu, HardSigmoid, ThresholdedRelu,
//! Shrink, Swish).

use super::requires::requires_ew;
use super::unary::{UnaryRow, add_unary};
use super::{FLT, consumed};
use crate::dtype::DType::{self, *};
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// PRelu.
const PRELU: &[DType] = &[F16, F32, F64, BF16, I32, I64, U32, U64];

/// Alpha-like float buckets: negative / zero / (0,1) / one / above one.
const ALPHA_B: &[(f64, f64)] = &[
    (f64::NEG_INFINITY, 0.0),
    (0.0, 1e-12),
    (1e-12, 1.0),
    (1.0, 1.000001),
    (1.000001, f64::INFINITY),
];
/// Selu's constants: nonpositive / (0,1) / near the defaults / large / huge.
const SELU_B: &[(f64, f64)] = &[
    (f64::NEG_INFINITY, 1e-12),
    (1e-12, 1.0),
    (1.0, 2.0),
    (2.0, 10.0),
    (10.0, f64::INFINITY),
];
/// Celu alpha (0 is invalid): negative / (0,1) / one / (1,10) / large.
const CELU_B: &[(f64, f64)] = &[
    (1e-12, 1.0),
    (1.0, 1.000001),
    (1.000001, 10.0),
    (10.0, f64::INFINITY),
];
/// Offsets (HardSigmoid beta, Shrink bias): negative / zero / (0,1) / [1,10) / large.
const OFFSET_B: &[(f64, f64)] = &[
    (f64::NEG_INFINITY, 0.0),
    (0.0, 1e-12),
    (1e-12, 1.0),
    (1.0, 10.0),
    (10.0, f64::INFINITY),
];

fn alpha(default: f32) -> AttrSpec {
    AttrSpec::float("alpha", default).float_buckets(ALPHA_B)
}

/// PRelu: slope broadcasts onto X (unidirectionally from opset 7); the output has X's shape.
fn prelu(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let s = ctx.tensor(1)?;
    if ctx.opset >= 7
        && let (Some(sx), Some(ss)) = (&x.shape, &s.shape)
    {
        if ss.len() > sx.len() {
            return Err(rule!(
                "slope of rank {} does not broadcast to X of rank {}",
                ss.len(),
                sx.len()
            ));
        }
        let off = sx.len() - ss.len();
        for (k, d) in ss.iter().enumerate() {
            if let (Dim::Known(a), Dim::Known(b)) = (d, &sx[off + k])
                && a != b
                && *a != 1
            {
                return Err(rule!(
                    "slope dim {k} = {a} does not broadcast to X dim {} = {b}",
                    off + k
                ));
            }
        }
    }
    Ok(vec![tensor(x.dtype, x.shape)])
}

/// Registers the activations without attributes.
pub(super) fn register_unary(r: &mut Registry) {
    use Category::Activation as A;
    // Activations without attributes: (name, versions, dtypes, X/Y ports, legacy
    // `consumed_inputs` in opset 1, category, traits).
    #[rustfmt::skip]
    let unary_ops: &[UnaryRow] = &[
        ("Relu", &[1, 6, 13, 14], SIGNED_NUMERIC, true, true, A, Traits::NAN_UNSPECIFIED | Traits::ACTIVATION),
        ("Sigmoid", &[1, 6, 13], FLT, true, true, A, Traits::NAN_UNSPECIFIED | Traits::ACTIVATION),
        ("HardSwish", &[14, 22], FLT, true, false, A, Traits::NAN_UNSPECIFIED | Traits::ACTIVATION),
        ("Softplus", &[1, 22], FLT, true, false, A, Traits::NAN_UNSPECIFIED | Traits::ACTIVATION),
        ("Softsign", &[1, 22], FLT, false, false, A, Traits::ACTIVATION),
        ("Mish", &[18, 22], FLT, true, false, A, Traits::ACTIVATION),
    ];
    add_unary(r, unary_ops);
}

/// Registers the activations with attributes.
pub(super) fn register(r: &mut Registry) {
    use Category::Activation as A;
    // Activations with attributes.
    r.add(
        OpSpec::new("LeakyRelu", &[1, 6, 16], A)
            .traits(Traits::NAN_UNSPECIFIED | Traits::ACTIVATION)
            .input("X", "T")
            .output("Y", "T")
            .attr(alpha(0.01))
            .attr(consumed())
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("PRelu", &[1, 6, 7, 9, 16], A)
            .traits(Traits::NAN_UNSPECIFIED | Traits::ACTIVATION)
            .input("X", "T")
            .input("slope", "T")
            .output("Y", "T")
            .attr(consumed())
            .types("T", PRELU)
            .infer(prelu)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Elu", &[1, 6, 22], A)
            .traits(Traits::NAN_UNSPECIFIED | Traits::ACTIVATION)
            .input("X", "T")
            .output("Y", "T")
            .attr(alpha(1.0))
            .attr(consumed())
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Selu", &[1, 6, 22], A)
            .traits(Traits::NAN_UNSPECIFIED | Traits::ACTIVATION)
            .input("X", "T")
            .output("Y", "T")
            .attr(AttrSpec::float("alpha", 1.6732632).float_buckets(SELU_B))
            .attr(AttrSpec::float("gamma", 1.050701).float_buckets(SELU_B))
            .attr(consumed())
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Celu", &[12], A)
            .traits(Traits::NAN_UNSPECIFIED | Traits::ACTIVATION)
            .input("X", "T")
            .output("Y", "T")
            .attr(AttrSpec::float("alpha", 1.0).float_buckets(CELU_B))
            .types("T", &[F32])
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Gelu", &[20], A)
            .traits(Traits::ACTIVATION)
            .input("X", "T")
            .output("Y", "T")
            .attr(AttrSpec::string("approximate", "none").one_of(&["none", "tanh"]))
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("HardSigmoid", &[1, 6, 22], A)
            .traits(Traits::NAN_UNSPECIFIED | Traits::ACTIVATION)
            .input("X", "T")
            .output("Y", "T")
            .attr(alpha(0.2))
            .attr(AttrSpec::float("beta", 0.5).float_buckets(OFFSET_B))
            .attr(consumed())
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("ThresholdedRelu", &[10, 22], A)
            .traits(Traits::NAN_UNSPECIFIED | Traits::ACTIVATION)
            .input("X", "T")
            .output("Y", "T")
            .attr(alpha(1.0))
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    // Swish (opset 24): x * Sigmoid(alpha * x). NaN handling open as Sigmoid's, which it is
    // defined by.
    r.add(
        OpSpec::new("Swish", &[24], A)
            .traits(Traits::NAN_UNSPECIFIED | Traits::ACTIVATION)
            .input("X", "T")
            .output("Y", "T")
            .attr(alpha(1.0))
            .types("T", FLT)
            .infer(unary)
            .requires(requires_ew),
    );
    r.add(
        OpSpec::new("Shrink", &[9], A)
            .traits(Traits::NAN_UNSPECIFIED)
            .input("input", "T")
            .output("output", "T")
            .attr(AttrSpec::float("bias", 0.0).float_buckets(OFFSET_B))
            .attr(AttrSpec::float("lambd", 0.5).float_buckets(&OFFSET_B[1..]))
            .types("T", NUMERIC)
            .infer(unary)
            .requires(requires_ew),
    );
}
