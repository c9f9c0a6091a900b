//! ImageDecoder.

use crate::attr::AttrLookup;
use crate::dtype::DType::U8;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, OpSpec, Registry};
use crate::types::Dim;

/// Registers ImageDecoder.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("ImageDecoder", &[20], Category::Misc)
            .input("encoded_stream", "T1")
            .output("image", "T2")
            .attr(AttrSpec::string("pixel_format", "RGB").one_of(&["RGB", "BGR", "Grayscale"]))
            .types("T1", &[U8])
            .types("T2", &[U8])
            .infer(|c| {
                if let Some(r) = c.tensor(0)?.rank()
                    && r != 1
                {
                    return Err(rule!(
                        "ImageDecoder needs a 1-D byte stream, found rank {r}"
                    ));
                }
                let ch = if c.string("pixel_format", "RGB") == "Grayscale" {
                    1
                } else {
                    3
                };
                Ok(vec![tensor(
                    U8,
                    Some(vec![Dim::Unknown, Dim::Unknown, Dim::Known(ch)]),
                )])
            }),
    );
}
