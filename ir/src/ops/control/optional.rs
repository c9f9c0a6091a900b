//! The optional ops: Optional, OptionalGetElement and OptionalHasElement.

use crate::attr::{AttrKind, AttrLookup, AttrValue};
use crate::dtype::DType::Bool;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::ValueType;

fn optional_infer(ctx: &InferCtx) -> Infer {
    if ctx.has_input(0) {
        return Ok(vec![ValueType::Optional(Box::new(ctx.input_type(0)))]);
    }
    match ctx.attr("type") {
        Some(AttrValue::TypeProto(tp)) => Ok(vec![ValueType::Optional(Box::new(
            ValueType::from_proto(tp),
        ))]),
        _ => Err(rule!("Optional without an input needs the type attribute")),
    }
}

fn optional_get_infer(ctx: &InferCtx) -> Infer {
    Ok(vec![match ctx.input_type(0) {
        ValueType::Optional(e) => *e,
        // From opset 18 a plain tensor or sequence passes through.
        t @ (ValueType::Tensor(_) | ValueType::Sequence(_)) if ctx.opset >= 18 => t,
        ValueType::Unknown => ValueType::Unknown,
        other => {
            return Err(rule!("OptionalGetElement needs an optional, found {other}"));
        }
    }])
}

/// Registers Optional, OptionalGetElement and OptionalHasElement.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Optional", &[15], Category::Sequence)
            .opt_input("input", "")
            .output("output", "")
            .attr(AttrSpec::of("type", AttrKind::TypeProto))
            .infer(optional_infer),
    );
    r.add(
        OpSpec::new("OptionalGetElement", &[15, 18], Category::Sequence)
            .input("input", "")
            .output("output", "")
            .infer(optional_get_infer),
    );
    r.add(
        OpSpec::new("OptionalHasElement", &[15, 18], Category::Sequence)
            .opt_input("input", "")
            .output("output", "B")
            .types("B", BOOL)
            .infer(|_| Ok(vec![fixed(Bool, &[])])),
    );
}
