//! MatMulNBits of `com.microsoft`: A times a constant weight matrix quantized to 2, 4 or 8
//! bits by blocks of `block_size` values along K. B is `(N, blocks, blob)` bytes: each
//! column of the product is a row of B, its values packed low bits first within each block
//! (the last block padded); `scales` holds one value per (column, block), the zero points one
//! per (column, block) too, packed the same way as uint8 or unpacked in A's type
//! (`2^(bits - 1)` when absent). ONNX Runtime's CPU kernel dequantizes in f32 and multiplies in f32 unless
//! `accuracy_level` is 4, where it quantizes A to int8 by blocks (see [`open_cases`]).
use super::MS;
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType;
use crate::ops::common::*;
use crate::ops::nn::{expect_dims, matmul_shape, shape_of};
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

/// The packing of a weight of `k` rows in blocks of `block` at `bits` bits: blocks per column,
/// bytes per block, bytes of a column's packed zero points.
pub fn nbits_layout(k: i64, block: i64, bits: i64) -> (i64, i64, i64) {
    let blocks = (k + block - 1) / block.max(1);
    (blocks, block * bits / 8, (blocks * bits + 7) / 8)
}

fn infer(c: &InferCtx) -> Infer {
    let w = match (c.int_opt("K"), c.int_opt("N")) {
        (Some(k), Some(n)) => Some(vec![Dim::Known(k), Dim::Known(n)]),
        _ => None,
    };
    Ok(vec![tensor(c.dtype(0), matmul_shape(shape_of(c, 0), w)?)])
}

/// Input `i`, when present, is `(rows * cols)` or `(rows, cols)` (the flat form is ORT's
/// older one, which its kernel still reads).
fn flat_or_matrix(c: &InferCtx, i: usize, rows: i64, cols: i64) -> Result<(), InferError> {
    match shape_of(c, i).map(|s| s.len()) {
        Some(1) => expect_dims(c, i, &[Some(rows * cols)]),
        Some(_) => expect_dims(c, i, &[Some(rows), Some(cols)]),
        None => Ok(()),
    }
}

/// Unpacked zero points have A's type, and the CPU kernel reads them at 2 and 4 bits only.
fn zero_points(
    c: &InferCtx,
    n: i64,
    blocks: i64,
    packed: i64,
    bits: i64,
) -> Result<(), InferError> {
    if !c.has_input(3) {
        return Ok(());
    }
    let dt = c.dtype(3);
    if dt == DType::U8 {
        return flat_or_matrix(c, 3, n, packed);
    }
    if dt != c.dtype(0) {
        return Err(rule!("zero_points of {dt} for A of {}", c.dtype(0)));
    }
    if bits == 8 {
        return Err(rule!("unpacked zero_points with 8 bits have no CPU kernel"));
    }
    flat_or_matrix(c, 3, n, blocks)
}

fn check(c: &InferCtx) -> Result<(), InferError> {
    infer(c)?;
    let (Some(k), Some(n), Some(block)) = (c.int_opt("K"), c.int_opt("N"), c.int_opt("block_size"))
    else {
        return Err(rule!("K, N and block_size are required"));
    };
    let bits = c.int("bits", 4);
    let (blocks, blob, packed) = nbits_layout(k, block, bits);
    expect_dims(c, 1, &[Some(n), Some(blocks), Some(blob)])?;
    flat_or_matrix(c, 2, n, blocks)?;
    zero_points(c, n, blocks, packed, bits)?;
    if let Some(g) = shape_of(c, 4)
        && g.len() == 1
        && g[0].value().is_some_and(|v| v != k && v != blocks * block)
    {
        return Err(rule!("g_idx must hold K or blocks x block_size values"));
    }
    if let Some(g) = c.const_i64s(4)
        && g.iter().any(|&v| v < 0 || v >= blocks)
    {
        return Err(rule!("g_idx values must be blocks, in [0, {blocks})"));
    }
    expect_dims(c, 5, &[Some(n)])
}

/// What the docs leave open: `accuracy_level` 4, where the CPU kernel quantizes A to int8 by
/// blocks ("can be quantized": the product is approximate, 5e-2 off on unit values, and
/// exact again when B is not a constant); `g_idx` ("deprecated", with no definition; ORT
/// ignores uint8 zero points when it is present); `weight_prepacked`, CUDA layouts that the
/// CPU kernel reads as the plain one.
fn open_cases(c: &InferCtx) -> Result<(), InferError> {
    if c.int("accuracy_level", 0) == 4 {
        return Err(rule!(
            "accuracy_level = 4: ONNX Runtime's CPU kernel quantizes A to int8 (approximate)"
        ));
    }
    if c.has_input(4) {
        return Err(rule!(
            "g_idx is deprecated and undefined (ONNX Runtime then ignores uint8 zero points)"
        ));
    }
    if c.int("weight_prepacked", 0) != 0 {
        return Err(rule!(
            "weight_prepacked names a CUDA layout, which the CPU kernel does not read"
        ));
    }
    Ok(())
}

pub(super) fn register(r: &mut Registry) {
    let dim = |name| {
        AttrSpec::of(name, AttrKind::Int)
            .required()
            .range(1, i64::MAX)
            .int_buckets(&[(1, 1), (2, 16), (17, 256), (257, i64::MAX)])
    };
    r.add(
        OpSpec::new("MatMulNBits", &[1], Category::Quantize)
            .domain(MS)
            .attr(dim("K"))
            .attr(dim("N"))
            .attr(AttrSpec::int("bits", 4).one_of_ints(&[2, 4, 8]))
            .attr(
                AttrSpec::of("block_size", AttrKind::Int)
                    .required()
                    .one_of_ints(&[16, 32, 64, 128, 256]),
            )
            .attr(AttrSpec::int("accuracy_level", 0).one_of_ints(&[0, 1, 2, 3, 4]))
            .attr(AttrSpec::int("weight_prepacked", 0).one_of_ints(&[0, 1, 2]))
            .input("A", "T1")
            .input("B", "T2")
            .input("scales", "T1")
            .opt_input("zero_points", "T3")
            .opt_input("g_idx", "T4")
            .opt_input("bias", "T1")
            .output("Y", "T1")
            .types("T1", &[DType::F32, DType::F16])
            .types("T2", &[DType::U8])
            .types("T3", &[DType::U8, DType::F32, DType::F16])
            .types("T4", &[DType::I32])
            .infer(infer)
            .requires(check)
            .ambiguous(open_cases),
    );
}

#[cfg(test)]
mod tests {
    use crate::text::parse_model;
    use crate::validate::{Diagnostics, validate};

    /// A (2, 32) times a 4-bit weight of 3 columns in blocks of 16, with `extra` initializers,
    /// `attrs` added and the inputs after A, B and scales `rest`.
    fn model(b: &str, extra: &str, attrs: &str, rest: &str) -> String {
        let bytes = vec!["17"; 48].join(", ");
        format!(
            "g (float[2, 32] a) => (float[2, 3] y)\n\
             <uint8[{b}] b = {{{bytes}}}, float[3, 2] s = {{1, 2, 3, 4, 5, 6}}{extra}>\n\
             {{ y = com.microsoft.MatMulNBits <K = 32, N = 3, block_size = 16{attrs}> \
             (a, b, s{rest}) }}"
        )
    }

    fn check(body: &str) -> Result<Diagnostics, String> {
        let src =
            format!("<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n{body}");
        validate(&parse_model(&src).unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn b_is_packed_by_blocks_and_zero_points_by_type() {
        let d = check(&model("3, 2, 8", "", "", "")).unwrap();
        assert!(d.ambiguous.is_empty() && d.warnings.is_empty(), "{d:?}");
        // B as (N, K * bits / 8), or with 2 bits' blob.
        assert!(check(&model("3, 16", "", "", "")).is_err());
        assert!(check(&model("3, 2, 8", "", ", bits = 2", "")).is_err());
        assert!(check(&model("6, 1, 8", "", ", block_size = 8", "")).is_err());
        let zp = |t: &str| format!(", {t} z = {{1, 2, 3, 4, 5, 6}}");
        // Packed: two blocks' 4-bit zero points in one byte per column.
        assert!(check(&model("3, 2, 8", ", uint8[3] z = {1, 2, 3}", "", ", z")).is_ok());
        assert!(check(&model("3, 2, 8", &zp("uint8[3, 2]"), "", ", z")).is_err());
        assert!(check(&model("3, 2, 8", &zp("float[3, 2]"), "", ", z")).is_ok());
        assert!(check(&model("3, 2, 8", &zp("float16[3, 2]"), "", ", z")).is_err());
    }

    #[test]
    fn int8_products_and_g_idx_are_left_open() {
        let d = check(&model("3, 2, 8", "", ", accuracy_level = 4", "")).unwrap();
        assert!(d.ambiguous.iter().any(|a| a.contains("int8")), "{d:?}");
        assert!(
            check(&model("3, 2, 8", "", ", accuracy_level = 1", ""))
                .unwrap()
                .ambiguous
                .is_empty()
        );
        let g = format!(", int32[32] g = {{{}}}", vec!["0"; 32].join(", "));
        let d = check(&model("3, 2, 8", &g, "", ", \"\", g")).unwrap();
        assert!(
            d.ambiguous.iter().any(|a| a.contains("deprecated")),
            "{d:?}"
        );
    }
}
