//! Tensors are kept as ONNX `TensorProto`s (lossless); this module reads and builds them.
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::pb::TensorProto;
use crate::types::TensorType;

/// The IR's tensor: the protobuf message itself, so that nothing is lost on export.
pub type Tensor = TensorProto;

/// Convenience methods on [`Tensor`].
pub trait TensorExt {
    /// Element type.
    fn dtype(&self) -> DType;
    /// Type of the tensor (dtype and static shape).
    fn tensor_type(&self) -> TensorType;
    /// Number of elements (product of dims; 1 for a scalar).
    fn num_elements(&self) -> i64;
    /// Values as f64 (ints and bools converted; f16/bf16 decoded).
    fn to_f64s(&self) -> Result<Vec<f64>>;
    /// Values as i64 (floats truncated toward zero).
    fn to_i64s(&self) -> Result<Vec<i64>>;
    /// True when the data is stored outside the model file.
    fn is_external(&self) -> bool;
}

impl TensorExt for Tensor {
    fn dtype(&self) -> DType {
        DType::from_code(self.data_type.unwrap_or(0))
    }

    fn tensor_type(&self) -> TensorType {
        TensorType::fixed(self.dtype(), &self.dims)
    }

    fn num_elements(&self) -> i64 {
        self.dims
            .iter()
            .fold(1i64, |a, &d| a.saturating_mul(d.max(0)))
    }

    fn is_external(&self) -> bool {
        self.data_location == Some(1)
    }

    fn to_f64s(&self) -> Result<Vec<f64>> {
        decode(self)
    }

    fn to_i64s(&self) -> Result<Vec<i64>> {
        let dt = self.dtype();
        if matches!(dt, DType::I64) {
            if let Some(raw) = &self.raw_data {
                check_len(self, raw.len(), 8)?;
                return Ok(raw
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                    .collect());
            }
            return Ok(self.int64_data.clone());
        }
        if matches!(dt, DType::U64) && self.raw_data.is_none() {
            return Ok(self.uint64_data.iter().map(|&v| v as i64).collect());
        }
        Ok(decode(self)?.into_iter().map(|v| v as i64).collect())
    }
}

/// Whether [`TensorExt::to_f64s`] can decode `t`: the same errors, without decoding the
/// values (validation checks every initializer; decoding them all into f64 made it cost
/// as much as the model's weights).
pub fn check_data(t: &Tensor) -> Result<()> {
    if t.is_external() {
        return Err(Error::Malformed(format!(
            "tensor '{}' keeps its data in an external file",
            t.name.as_deref().unwrap_or("")
        )));
    }
    let dt = t.dtype();
    if let Some(raw) = &t.raw_data {
        let bits = dt
            .bits()
            .filter(|b| *b >= 8)
            .ok_or_else(|| Error::Malformed(format!("cannot decode raw data of dtype {dt}")))?;
        check_len(t, raw.len(), bits / 8)?;
        if !(dt.is_numeric() || dt == DType::Bool)
            || matches!(
                dt,
                DType::F8E4M3FN
                    | DType::F8E4M3FNUZ
                    | DType::F8E5M2
                    | DType::F8E5M2FNUZ
                    | DType::F8E8M0
            )
        {
            return Err(Error::Malformed(format!(
                "cannot decode tensor of dtype {dt} as numbers"
            )));
        }
        return Ok(());
    }
    let len = match dt {
        DType::F32 => t.float_data.len(),
        DType::F64 => t.double_data.len(),
        DType::I64 => t.int64_data.len(),
        DType::U32 | DType::U64 => t.uint64_data.len(),
        DType::F16
        | DType::BF16
        | DType::I32
        | DType::I16
        | DType::I8
        | DType::U16
        | DType::U8
        | DType::Bool => t.int32_data.len(),
        d => {
            return Err(Error::Malformed(format!(
                "cannot decode tensor of dtype {d} as numbers"
            )));
        }
    };
    if len as i64 != t.num_elements() {
        return Err(Error::Malformed(format!(
            "tensor '{}' has {} values for dims {:?}",
            t.name.as_deref().unwrap_or(""),
            len,
            t.dims
        )));
    }
    Ok(())
}

fn check_len(t: &Tensor, got: usize, elem: usize) -> Result<()> {
    let n = t.num_elements();
    if n < 0 || (got as u128) != (n as u128) * (elem as u128) {
        return Err(Error::Malformed(format!(
            "tensor '{}': raw_data holds {} bytes, dims {:?} need {}",
            t.name.as_deref().unwrap_or(""),
            got,
            t.dims,
            (n as i128) * elem as i128
        )));
    }
    Ok(())
}

/// Decodes a half-precision float.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) & 1) as u32;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = if exp == 0 {
        if man == 0 {
            sign << 31
        } else {
            // subnormal
            let mut e = 127 - 15 + 1;
            let mut m = man;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            (sign << 31) | ((e as u32) << 23) | ((m & 0x3ff) << 13)
        }
    } else if exp == 0x1f {
        (sign << 31) | (0xff << 23) | (man << 13)
    } else {
        (sign << 31) | ((exp + 127 - 15) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

fn decode(t: &Tensor) -> Result<Vec<f64>> {
    // Every check (external data, element type, length) is `check_data`'s.
    check_data(t)?;
    let dt = t.dtype();
    if let Some(raw) = &t.raw_data {
        let w = dt.bits().unwrap_or(8) / 8;
        return Ok(raw
            .chunks_exact(w)
            .map(|c| match dt {
                DType::F32 => f32::from_le_bytes(c.try_into().unwrap()) as f64,
                DType::F64 => f64::from_le_bytes(c.try_into().unwrap()),
                DType::F16 => f16_to_f32(u16::from_le_bytes(c.try_into().unwrap())) as f64,
                DType::BF16 => {
                    f32::from_bits((u16::from_le_bytes(c.try_into().unwrap()) as u32) << 16) as f64
                }
                DType::I8 => c[0] as i8 as f64,
                DType::U8 | DType::Bool => c[0] as f64,
                DType::I16 => i16::from_le_bytes(c.try_into().unwrap()) as f64,
                DType::U16 => u16::from_le_bytes(c.try_into().unwrap()) as f64,
                DType::I32 => i32::from_le_bytes(c.try_into().unwrap()) as f64,
                DType::U32 => u32::from_le_bytes(c.try_into().unwrap()) as f64,
                DType::I64 => i64::from_le_bytes(c.try_into().unwrap()) as f64,
                DType::U64 => u64::from_le_bytes(c.try_into().unwrap()) as f64,
                _ => f64::NAN,
            })
            .collect());
    }
    Ok(match dt {
        DType::F32 => t.float_data.iter().map(|&v| v as f64).collect(),
        DType::F64 => t.double_data.clone(),
        DType::I64 => t.int64_data.iter().map(|&v| v as f64).collect(),
        DType::U32 | DType::U64 => t.uint64_data.iter().map(|&v| v as f64).collect(),
        DType::F16 => t
            .int32_data
            .iter()
            .map(|&v| f16_to_f32(v as u16) as f64)
            .collect(),
        DType::BF16 => t
            .int32_data
            .iter()
            .map(|&v| f32::from_bits((v as u32) << 16) as f64)
            .collect(),
        // The other types check_data accepts in typed fields.
        _ => t.int32_data.iter().map(|&v| v as f64).collect(),
    })
}

/// Builds an i64 tensor.
pub fn from_i64s(name: &str, dims: &[i64], values: &[i64]) -> Tensor {
    Tensor {
        name: Some(name.to_string()),
        dims: dims.to_vec(),
        data_type: Some(DType::I64.code()),
        int64_data: values.to_vec(),
        ..Default::default()
    }
}

/// Builds a tensor of a numeric `dtype` from f64 values (stored as raw little-endian data).
pub fn from_f64s(name: &str, dtype: DType, dims: &[i64], values: &[f64]) -> Tensor {
    let mut raw = Vec::with_capacity(values.len() * dtype.bits().unwrap_or(8) / 8);
    for &v in values {
        match dtype {
            DType::F32 => raw.extend_from_slice(&(v as f32).to_le_bytes()),
            DType::F64 => raw.extend_from_slice(&v.to_le_bytes()),
            DType::I8 => raw.push(v as i8 as u8),
            DType::U8 => raw.push(v as u8),
            DType::Bool => raw.push((v != 0.0) as u8),
            DType::I16 => raw.extend_from_slice(&(v as i16).to_le_bytes()),
            DType::U16 => raw.extend_from_slice(&(v as u16).to_le_bytes()),
            DType::I32 => raw.extend_from_slice(&(v as i32).to_le_bytes()),
            DType::U32 => raw.extend_from_slice(&(v as u32).to_le_bytes()),
            DType::I64 => raw.extend_from_slice(&(v as i64).to_le_bytes()),
            DType::U64 => raw.extend_from_slice(&(v as u64).to_le_bytes()),
            DType::F16 => raw.extend_from_slice(&f32_to_f16(v as f32).to_le_bytes()),
            DType::BF16 => {
                raw.extend_from_slice(&(((v as f32).to_bits() >> 16) as u16).to_le_bytes())
            }
            _ => raw.extend_from_slice(&(v as f32).to_le_bytes()),
        }
    }
    Tensor {
        name: Some(name.to_string()),
        dims: dims.to_vec(),
        data_type: Some(dtype.code()),
        raw_data: Some(raw.into()),
        ..Default::default()
    }
}

/// Encodes a half-precision float (round to nearest even).
pub fn f32_to_f16(f: f32) -> u16 {
    let x = f.to_bits();
    let sign = ((x >> 16) & 0x8000) as u16;
    let exp = ((x >> 23) & 0xff) as i32;
    let man = x & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let mut r = m >> shift;
        let rem = m & ((1 << shift) - 1);
        if rem > half || (rem == half && (r & 1) == 1) {
            r += 1;
        }
        return sign | r as u16;
    }
    let mut r = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    if rem > 0x1000 || (rem == 0x1000 && (r & 1) == 1) {
        r += 1;
    }
    sign | r as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn half_round_trip() {
        for v in [0.0f32, 1.0, -2.5, 65504.0, 6.1035156e-5, 5.9604645e-8] {
            assert_eq!(f16_to_f32(f32_to_f16(v)), v);
        }
        assert!(f16_to_f32(f32_to_f16(f32::NAN)).is_nan());
    }

    #[test]
    fn raw_and_typed_decode_agree() {
        let a = from_f64s("a", DType::F32, &[2, 2], &[1.0, -2.0, 3.5, 4.0]);
        let b = Tensor {
            dims: vec![2, 2],
            data_type: Some(1),
            float_data: vec![1.0, -2.0, 3.5, 4.0],
            ..Default::default()
        };
        assert_eq!(a.to_f64s().unwrap(), b.to_f64s().unwrap());
        let i = from_i64s("i", &[3], &[1, -5, 7]);
        assert_eq!(i.to_i64s().unwrap(), vec![1, -5, 7]);
        let bad = Tensor {
            dims: vec![3],
            data_type: Some(1),
            raw_data: Some(vec![0; 5].into()),
            ..Default::default()
        };
        assert!(bad.to_f64s().is_err());
    }

    /// `check_data` says what decoding would: the same error, or none.
    #[test]
    fn check_data_agrees_with_decoding() {
        let raw = |dt: DType, dims: &[i64], n: usize| Tensor {
            name: Some("t".into()),
            dims: dims.to_vec(),
            data_type: Some(dt.code()),
            raw_data: Some(vec![0u8; n].into()),
            ..Default::default()
        };
        let mut cases = vec![
            raw(DType::F32, &[2, 2], 16),
            raw(DType::F32, &[2, 2], 15),
            raw(DType::F16, &[3], 6),
            raw(DType::I64, &[], 8),
            raw(DType::F8E4M3FN, &[2], 2),
            raw(DType::U4, &[2], 1),
            raw(DType::String, &[1], 1),
            raw(DType::F32, &[-1], 0),
            from_i64s("i", &[3], &[1, 2, 3]),
            from_i64s("i", &[4], &[1, 2, 3]),
        ];
        let mut typed = Tensor {
            dims: vec![2],
            data_type: Some(DType::Bool.code()),
            int32_data: vec![1, 0],
            ..Default::default()
        };
        cases.push(typed.clone());
        typed.dims = vec![3];
        cases.push(typed.clone());
        typed.data_type = Some(DType::C64.code());
        cases.push(typed);
        let mut ext = raw(DType::F32, &[1], 4);
        ext.data_location = Some(1);
        cases.push(ext);
        for t in &cases {
            let want = t.to_f64s().err().map(|e| e.to_string());
            let got = check_data(t).err().map(|e| e.to_string());
            assert_eq!(got, want, "{t:?}");
        }
    }
}
