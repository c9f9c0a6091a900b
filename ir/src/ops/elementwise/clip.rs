//! Clip.

use super::consumed;
use super::requires::requires_ew;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, OpSpec, Registry, Traits};

/// Bounds of Clip (legacy attributes): unbounded below / negative / zero / positive / unbounded above.
const BOUND_B: &[(f64, f64)] = &[
    (f64::NEG_INFINITY, -1e30),
    (-1e30, 0.0),
    (0.0, 1e-12),
    (1e-12, 1e30),
    (1e30, f64::INFINITY),
];

/// Registers Clip.
pub(super) fn register(r: &mut Registry) {
    use Category::Elementwise as E;
    r.add(
        OpSpec::new("Clip", &[1, 6, 11, 12, 13], E)
            .traits(Traits::NAN_UNSPECIFIED | Traits::ACTIVATION)
            .input("input", "T")
            .opt_input("min", "T")
            .opt_input("max", "T")
            .output("output", "T")
            .attr(consumed())
            .attr(
                AttrSpec::float("min", f32::MIN)
                    .versions(1, Some(11))
                    .float_buckets(BOUND_B),
            )
            .attr(
                AttrSpec::float("max", f32::MAX)
                    .versions(1, Some(11))
                    .float_buckets(BOUND_B),
            )
            .types("T", NUMERIC)
            .infer(unary)
            .requires(requires_ew)
            .ambiguous(|c| vector_for_scalar(c, "Clip", &[1, 2])),
    );
}
