//! Value formatting: dtype names, numbers as a tensor of a dtype holds them, dims and
//! attributes as the text writes them.

use mutagraph_ir::DType;
use mutagraph_ir::attr::AttrValue;

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

/// f32 to IEEE half bits (round to nearest; subnormals flush to zero).
fn f16_bits(f: f32) -> u16 {
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    if f.is_nan() {
        return sign | 0x7e00;
    }
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let man = b & 0x7f_ffff;
    if f.is_infinite() || exp >= 0x1f {
        return sign | 0x7c00;
    }
    if exp <= 0 {
        return sign;
    }
    let m = (man + 0x1000) >> 13; // rounded
    // A carry of the rounding into the exponent is right.
    (sign as u32 | (((exp as u32) << 10) + m)) as u16
}

/// A number written as a value of a tensor of dtype `d` (`None`: not representable).
pub(super) fn value_text(d: DType, v: f64) -> Option<String> {
    let int = v.fract() == 0.0 && v.is_finite();
    match d {
        DType::F32 | DType::F64 => Some(float_text(v)),
        DType::F16 => Some(f16_bits(v as f32).to_string()),
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
