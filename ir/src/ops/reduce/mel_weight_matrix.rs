//! MelWeightMatrix.

use super::const_scalar;
use crate::dtype::DType::F32;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn mel_infer(ctx: &InferCtx) -> Infer {
    let dt = dtype_attr(ctx, "output_datatype", F32);
    let bins = const_scalar(ctx, 1)
        .map(|n| Dim::Known(n / 2 + 1))
        .unwrap_or(Dim::Unknown);
    let mels = const_scalar(ctx, 0).map(Dim::Known).unwrap_or(Dim::Unknown);
    Ok(vec![tensor(dt, Some(vec![bins, mels]))])
}

/// Registers MelWeightMatrix.
pub(super) fn register(r: &mut Registry) {
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
