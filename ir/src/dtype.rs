//! Element types of tensors (ONNX `TensorProto.DataType`).
use std::fmt;

/// An ONNX tensor element type. Codes that this build does not know are kept as `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 8-bit unsigned.
    U8,
    /// 8-bit signed.
    I8,
    /// 16-bit unsigned.
    U16,
    /// 16-bit signed.
    I16,
    /// 32-bit signed.
    I32,
    /// 64-bit signed.
    I64,
    /// Byte string.
    String,
    /// Boolean.
    Bool,
    /// IEEE half.
    F16,
    /// 64-bit float.
    F64,
    /// 32-bit unsigned.
    U32,
    /// 64-bit unsigned.
    U64,
    /// Complex of two f32.
    C64,
    /// Complex of two f64.
    C128,
    /// bfloat16.
    BF16,
    /// float8 e4m3fn.
    F8E4M3FN,
    /// float8 e4m3fnuz.
    F8E4M3FNUZ,
    /// float8 e5m2.
    F8E5M2,
    /// float8 e5m2fnuz.
    F8E5M2FNUZ,
    /// 4-bit unsigned.
    U4,
    /// 4-bit signed.
    I4,
    /// float4 e2m1.
    F4E2M1,
    /// float8 e8m0.
    F8E8M0,
    /// 2-bit unsigned.
    U2,
    /// 2-bit signed.
    I2,
    /// A code this build does not know (0 = UNDEFINED).
    Other(i32),
}

use DType::*;

/// All known element types, in code order.
pub const ALL: &[DType] = &[
    F32, U8, I8, U16, I16, I32, I64, String, Bool, F16, F64, U32, U64, C64, C128, BF16, F8E4M3FN,
    F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, U4, I4, F4E2M1, F8E8M0, U2, I2,
];

impl DType {
    /// From the ONNX code.
    pub fn from_code(code: i32) -> DType {
        match code {
            1..=26 => ALL[(code - 1) as usize],
            c => Other(c),
        }
    }

    /// The ONNX code.
    pub fn code(self) -> i32 {
        match self {
            Other(c) => c,
            d => ALL.iter().position(|x| *x == d).unwrap() as i32 + 1,
        }
    }

    /// Lower-case short name as used in reports (`f32`, `i64`, ...).
    pub fn name(self) -> &'static str {
        match self {
            F32 => "f32",
            U8 => "u8",
            I8 => "i8",
            U16 => "u16",
            I16 => "i16",
            I32 => "i32",
            I64 => "i64",
            String => "string",
            Bool => "bool",
            F16 => "f16",
            F64 => "f64",
            U32 => "u32",
            U64 => "u64",
            C64 => "c64",
            C128 => "c128",
            BF16 => "bf16",
            F8E4M3FN => "f8e4m3fn",
            F8E4M3FNUZ => "f8e4m3fnuz",
            F8E5M2 => "f8e5m2",
            F8E5M2FNUZ => "f8e5m2fnuz",
            U4 => "u4",
            I4 => "i4",
            F4E2M1 => "f4e2m1",
            F8E8M0 => "f8e8m0",
            U2 => "u2",
            I2 => "i2",
            Other(_) => "undefined",
        }
    }

    /// Parses a name produced by [`DType::name`].
    pub fn from_name(s: &str) -> Option<DType> {
        ALL.iter().copied().find(|d| d.name() == s)
    }

    /// Size of one element in bits (`None` for strings and unknown codes).
    pub fn bits(self) -> Option<usize> {
        Some(match self {
            Bool | U8 | I8 | F8E4M3FN | F8E4M3FNUZ | F8E5M2 | F8E5M2FNUZ | F8E8M0 => 8,
            U16 | I16 | F16 | BF16 => 16,
            F32 | I32 | U32 => 32,
            F64 | I64 | U64 | C64 => 64,
            C128 => 128,
            U4 | I4 | F4E2M1 => 4,
            U2 | I2 => 2,
            String | Other(_) => return None,
        })
    }

    /// Floating point (real) types.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            F32 | F64 | F16 | BF16 | F8E4M3FN | F8E4M3FNUZ | F8E5M2 | F8E5M2FNUZ | F4E2M1 | F8E8M0
        )
    }

    /// Signed integers.
    pub fn is_signed_int(self) -> bool {
        matches!(self, I8 | I16 | I32 | I64 | I4 | I2)
    }

    /// Unsigned integers.
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, U8 | U16 | U32 | U64 | U4 | U2)
    }

    /// Any integer.
    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    /// Numeric (int or float, not bool/string/complex).
    pub fn is_numeric(self) -> bool {
        self.is_int() || self.is_float()
    }

    /// A known, defined element type.
    pub fn is_known(self) -> bool {
        !matches!(self, Other(_))
    }
}

impl serde::Serialize for DType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Other(c) => write!(f, "dtype#{c}"),
            d => f.write_str(d.name()),
        }
    }
}

/// Common dtype sets used by op specs.
pub mod sets {
    use super::DType::{self, *};
    /// IEEE floats that every backend has.
    pub const FLOAT: &[DType] = &[F16, F32, F64, BF16];
    /// Signed and unsigned integers of 8 to 64 bits.
    pub const INT: &[DType] = &[I8, I16, I32, I64, U8, U16, U32, U64];
    /// Signed integers and floats.
    pub const SIGNED_NUMERIC: &[DType] = &[I8, I16, I32, I64, F16, F32, F64, BF16];
    /// Every numeric type.
    pub const NUMERIC: &[DType] = &[I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BF16];
    /// Every numeric type and bool.
    pub const NUMERIC_BOOL: &[DType] = &[
        I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BF16, Bool,
    ];
    /// Index types.
    pub const INDEX: &[DType] = &[I32, I64];
    /// Bool only.
    pub const BOOL: &[DType] = &[Bool];
    /// Any known type.
    pub const ANY: &[DType] = super::ALL;
    /// The 15 types of the first ONNX releases: numbers, bool, string, complex (no bfloat16).
    pub const CLASSIC: &[DType] = &[
        F32, U8, I8, U16, I16, I32, I64, String, Bool, F16, F64, U32, U64, C64, C128,
    ];
    /// [`CLASSIC`] and bfloat16.
    pub const CLASSIC_BF16: &[DType] = &[
        F32, U8, I8, U16, I16, I32, I64, String, Bool, F16, F64, U32, U64, C64, C128, BF16,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn codes_round_trip() {
        for c in 0..40 {
            assert_eq!(DType::from_code(c).code(), c);
        }
        assert_eq!(DType::from_code(1), F32);
        assert_eq!(DType::from_code(7), I64);
        assert_eq!(DType::from_code(16), BF16);
        assert_eq!(DType::from_name("i64"), Some(I64));
    }
}
