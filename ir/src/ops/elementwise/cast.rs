//! Cast and CastLike.

use super::fold::fold_typed;
use super::requires::requires_ew;
use crate::attr::{AttrKind, AttrLookup, AttrValue};
use crate::dtype::DType::{self, *};
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};

/// Cast / CastLike: every type but the complex ones (union over opsets).
const CAST: &[DType] = &[
    F32, U8, I8, U16, I16, I32, I64, String, Bool, F16, F64, U32, U64, BF16, F8E4M3FN, F8E4M3FNUZ,
    F8E5M2, F8E5M2FNUZ, U4, I4, F4E2M1, F8E8M0, U2, I2,
];

/// The target dtype of Cast (`to` is a dtype code; opset 1 spelled it as a name).
pub(super) fn cast_target(ctx: &InferCtx) -> Option<DType> {
    match ctx.attr("to")? {
        AttrValue::Int(c) => Some(DType::from_code(*c as i32)),
        AttrValue::String(s) => {
            const NAMES: &[&str] = &[
                "FLOAT",
                "UINT8",
                "INT8",
                "UINT16",
                "INT16",
                "INT32",
                "INT64",
                "STRING",
                "BOOL",
                "FLOAT16",
                "DOUBLE",
                "UINT32",
                "UINT64",
                "COMPLEX64",
                "COMPLEX128",
                "BFLOAT16",
            ];
            let s = std::string::String::from_utf8_lossy(s).to_ascii_uppercase();
            NAMES
                .iter()
                .position(|n| *n == s)
                .map(|p| DType::from_code(p as i32 + 1))
        }
        _ => None,
    }
}

/// First opset of the low-precision dtypes in Cast, CastLike and Identity.
pub(super) fn low_precision_since(d: DType) -> i64 {
    match d {
        BF16 => 13,
        F8E4M3FN | F8E4M3FNUZ | F8E5M2 | F8E5M2FNUZ => 19,
        U4 | I4 => 21,
        F4E2M1 => 23,
        F8E8M0 => 24,
        U2 | I2 => 25,
        _ => 1,
    }
}

/// `round_mode` of Cast and CastLike (from opset 24).
fn round_mode_attr() -> AttrSpec {
    AttrSpec::string("round_mode", "up")
        .one_of(&["up", "down", "nearest"])
        .versions(24, None)
}

/// Registers Cast and CastLike.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Cast", &[1, 6, 9, 13, 19, 21, 23, 24, 25], Category::Cast)
            .traits(Traits::DISCRETE)
            .input("input", "T1")
            .output("output", "T2")
            .attr(
                AttrSpec::of("to", AttrKind::String)
                    .required()
                    .no_buckets()
                    .versions(1, Some(6)),
            )
            .attr(
                AttrSpec::of("to", AttrKind::Int)
                    .required()
                    .range(1, 26)
                    .int_buckets(&[(1, 1), (2, 7), (8, 9), (10, 16), (17, 26)])
                    .versions(6, None),
            )
            .attr(saturate_attr())
            .attr(round_mode_attr())
            .types("T1", CAST)
            .types("T2", CAST)
            .infer(|c| unary_to(c, cast_target(c).unwrap_or(Other(0))))
            .requires(requires_ew)
            .fold(|c| {
                cast_target(c).and_then(|d| {
                    fold_typed(c, &[0], c.dtype(0), d, &|v| Some(v[0]), &|v| Some(v[0]))
                })
            }),
    );
    r.add(
        OpSpec::new("CastLike", &[15, 19, 21, 23, 24, 25], Category::Cast)
            .traits(Traits::DISCRETE)
            .input("input", "T1")
            .input("target_type", "T2")
            .output("output", "T2")
            .attr(saturate_attr())
            .attr(round_mode_attr())
            .types("T1", CAST)
            .types("T2", CAST)
            .infer(|c| unary_to(c, c.dtype(1)))
            .requires(requires_ew),
    );
}
