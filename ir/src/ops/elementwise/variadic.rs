//! The variadic broadcasting ops: Sum, Mean, Max and Min.

use super::fold::fold_elementwise;
use super::requires::requires_ew;
use super::{FLT, consumed};
use crate::dtype::DType::{self};
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;

/// Before opset 8, the variadic ops take inputs of one shape.
pub(super) fn same_shapes_before_8(ctx: &InferCtx) -> Result<(), InferError> {
    if ctx.opset >= 8 {
        return Ok(());
    }
    let shapes: Vec<Vec<Dim>> = (0..ctx.n_inputs())
        .filter_map(|i| ctx.tensor(i).ok().and_then(|t| t.shape))
        .collect();
    for s in shapes.iter().skip(1) {
        let s0 = &shapes[0];
        let differ = s.len() != s0.len()
            || s.iter()
                .zip(s0)
                .any(|(x, y)| matches!((x, y), (Dim::Known(a), Dim::Known(b)) if a != b));
        if differ {
            return Err(rule!(
                "inputs of shapes {s0:?} and {s:?} differ (broadcasting needs opset 8)"
            ));
        }
    }
    Ok(())
}

/// A variadic op: name, versions, dtypes, output name, traits.
type VariadicRow = (
    &'static str,
    &'static [i64],
    &'static [DType],
    &'static str,
    Traits,
);

/// Registers Sum, Mean, Max and Min.
pub(super) fn register(r: &mut Registry) {
    use Category::Elementwise as E;
    // Variadic broadcasting ops.
    #[rustfmt::skip]
    let variadic: &[VariadicRow] = &[
        ("Sum", &[1, 6, 8, 13], FLT, "sum", Traits::NONE),
        ("Mean", &[1, 6, 8, 13], FLT, "mean", Traits::NONE),
        ("Max", &[1, 6, 8, 12, 13], NUMERIC, "max", Traits::NAN_UNSPECIFIED),
        ("Min", &[1, 6, 8, 12, 13], NUMERIC, "min", Traits::NAN_UNSPECIFIED),
    ];
    for &(name, versions, dts, out, traits) in variadic {
        let s = OpSpec::new(name, versions, E)
            .traits(traits)
            .var_input("data_0", "T", 1)
            .output(out, "T")
            .attr(consumed())
            .types("T", dts)
            .infer(|c| broadcast(c, None))
            .requires(requires_ew);
        r.add(if name == "Mean" {
            s
        } else {
            s.fold(fold_elementwise)
        });
    }
}
