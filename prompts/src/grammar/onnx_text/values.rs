//! Value formatting: dtype names, numbers as a tensor of a dtype holds them, dims and
//! attributes as the text writes them.

use mutagraph_ir::DType;
use mutagraph_ir::attr::AttrValue;
use mutagraph_ir::tensor::f32_to_f16;

/// Dtypes a grammar offers, in the order preferred (the first that validates is the base).
pub(super) const DTYPES: &[(DType, &str)] = &[
    (DType::F32, "float"),
    (DType::I64, "int64"),
    (DType::I32, "int32"),
    (DType::F64, "double"),
    (DType::F16, "float16"),
    (DType::U8, "uint8"),
    (DType::I8, "int8"),
    (DType::Bool, "bool"),
    (DType::I16, "int16"),
    (DType::U16, "uint16"),
    (DType::U32, "uint32"),
    (DType::U64, "uint64"),
    (DType::BF16, "bfloat16"),
    (DType::String, "string"),
];

pub(super) fn dtype_text(d: DType) -> &'static str {
    DTYPES
        .iter()
        .find(|(x, _)| *x == d)
        .map_or("float", |(_, n)| n)
}

pub(super) fn rank_of(d: DType) -> usize {
    DTYPES
        .iter()
        .position(|(x, _)| *x == d)
        .unwrap_or(usize::MAX)
}

/// A float as the text writes it (always with a point or exponent; `nan`, `inf`, `-inf`).
pub(super) fn float_text(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        let s = format!("{f:?}");
        if s.contains(['.', 'e', 'E']) {
            s
        } else {
            format!("{s}.0")
        }
    }
}

/// A number written as a value of a tensor of dtype `d` (`None`: not representable).
pub(super) fn value_text(d: DType, v: f64) -> Option<String> {
    let int = v.fract() == 0.0 && v.is_finite();
    match d {
        DType::F32 | DType::F64 => Some(float_text(v)),
        DType::F16 => Some(f32_to_f16(v as f32).to_string()),
        DType::BF16 => Some(((((v as f32).to_bits()) + 0x8000) >> 16).to_string()),
        DType::Bool => (v == 0.0 || v == 1.0).then(|| format!("{}", v as i64)),
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => {
            (int && v >= 0.0).then(|| format!("{}", v as i64))
        }
        DType::String => Some("\"a\"".into()),
        _ => int.then(|| format!("{}", v as i64)),
    }
}

pub(super) fn dims_text(dims: &[i64]) -> String {
    if dims.is_empty() {
        String::new()
    } else {
        let d: Vec<String> = dims.iter().map(|x| x.to_string()).collect();
        format!("[{}]", d.join(", "))
    }
}

pub(super) fn count(dims: &[i64]) -> i64 {
    dims.iter().product()
}

// ---- instances ----

/// `name: kind = value`.
pub(super) fn attr_text(name: &str, v: &AttrValue) -> Option<String> {
    let s = |b: &[u8]| serde_json::to_string(&String::from_utf8_lossy(b)).unwrap_or_default();
    let val = match v {
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) => float_text(*f as f64),
        AttrValue::String(b) => s(b),
        AttrValue::Ints(v) => format!(
            "[{}]",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        AttrValue::Floats(v) => format!(
            "[{}]",
            v.iter()
                .map(|x| float_text(*x as f64))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        AttrValue::Strings(v) => format!(
            "[{}]",
            v.iter().map(|b| s(b)).collect::<Vec<_>>().join(", ")
        ),
        _ => return None,
    };
    Some(format!("{name}: {} = {val}", v.kind().name()))
}

#[cfg(test)]
mod tests {
    use mutagraph_ir::DType;
    use mutagraph_ir::tensor::f32_to_f16;

    /// (f32 input, IEEE-754 binary16 bits). The bits come from numpy 2.4.6:
    /// `numpy.float32(x).astype(numpy.float16).view(numpy.uint16)` (round to nearest even).
    const HALF_TRUTH: &[(f32, u16)] = &[
        (0.0, 0x0000),
        (-0.0, 0x8000),
        (1.0, 0x3c00),
        (-3.5, 0xc300),
        (65504.0, 0x7bff),
        (65519.0, 0x7bff),
        (65520.0, 0x7c00),
        (f32::INFINITY, 0x7c00),
        (f32::NEG_INFINITY, 0xfc00),
        (1e-5, 0x00a8),
        (5.96e-8, 0x0001),
        (3e-8, 0x0001),
        (2.98e-8, 0x0000),
        (2.9802322e-8, 0x0000),
        (8.940697e-8, 0x0002),
        (6.1e-5, 0x03ff),
        (6.1035156e-5, 0x0400),
        (6.1005354e-5, 0x0400),
        (1.000_488_3, 0x3c00),
        (1.001_464_8, 0x3c02),
        (14.065684, 0x4b08),
        (26.4466, 0x4e9d),
        (63.400772, 0x53ed),
        (-4.454183e-5, 0x82eb),
        (3.0371993e-5, 0x01fe),
        (7.816219e-5, 0x051f),
    ];

    /// `mutagraph_ir::tensor::f32_to_f16` (what F16 initializer values are written with)
    /// rounds to nearest even and keeps subnormals. (This module's own former `f16_bits`
    /// flushed subnormals to zero, e.g. 1e-5 to 0x0000, and rounded ties away, 1 + 2^-11 to
    /// 0x3c01.)
    #[test]
    fn half_bits_are_ieee_binary16() {
        for &(x, want) in HALF_TRUTH {
            assert_eq!(f32_to_f16(x), want, "{x:e}");
            assert_eq!(
                super::value_text(DType::F16, f64::from(x)),
                Some(want.to_string()),
                "{x:e}"
            );
        }
        // numpy writes NaN as 0x7e00 (a quiet NaN).
        assert_eq!(f32_to_f16(f32::NAN), 0x7e00);
    }
}
