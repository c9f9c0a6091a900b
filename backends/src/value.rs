//! Runtime values exchanged with backends: host tensors, sequences and optionals, and their
//! ONNX protobuf encodings (`TensorProto`, and the `SequenceProto` / `OptionalProto` messages of
//! ONNX's data schema that the backend test suite uses for non-tensor inputs and outputs).
use half::{bf16, f16};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::pb::TensorProto;
use mutagraph_ir::tensor::TensorExt;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The elements of a tensor, in row-major order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Data {
    /// f32 values.
    F32(#[serde(with = "wire")] Vec<f32>),
    /// f64 values.
    F64(#[serde(with = "wire")] Vec<f64>),
    /// IEEE half values.
    F16(#[serde(with = "wire")] Vec<f16>),
    /// bfloat16 values.
    BF16(#[serde(with = "wire")] Vec<bf16>),
    /// i8 values.
    I8(#[serde(with = "wire")] Vec<i8>),
    /// i16 values.
    I16(#[serde(with = "wire")] Vec<i16>),
    /// i32 values.
    I32(#[serde(with = "wire")] Vec<i32>),
    /// i64 values.
    I64(#[serde(with = "wire")] Vec<i64>),
    /// u8 values.
    U8(#[serde(with = "wire")] Vec<u8>),
    /// u16 values.
    U16(#[serde(with = "wire")] Vec<u16>),
    /// u32 values.
    U32(#[serde(with = "wire")] Vec<u32>),
    /// u64 values.
    U64(#[serde(with = "wire")] Vec<u64>),
    /// Booleans.
    Bool(#[serde(with = "wire")] Vec<bool>),
    /// Byte strings.
    String(Vec<Vec<u8>>),
    /// Any other element type (float8, 4-bit, complex), as the `raw_data` bytes of its
    /// `TensorProto` encoding.
    Raw(Vec<u8>),
}

impl Data {
    /// Number of elements (for `Raw`, the number of bytes).
    pub fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::F64(v) => v.len(),
            Data::F16(v) => v.len(),
            Data::BF16(v) => v.len(),
            Data::I8(v) => v.len(),
            Data::I16(v) => v.len(),
            Data::I32(v) => v.len(),
            Data::I64(v) => v.len(),
            Data::U8(v) => v.len(),
            Data::U16(v) => v.len(),
            Data::U32(v) => v.len(),
            Data::U64(v) => v.len(),
            Data::Bool(v) => v.len(),
            Data::String(v) => v.len(),
            Data::Raw(v) => v.len(),
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type the variant holds (`None` for `Raw`, whose type is kept beside it).
    pub fn dtype(&self) -> Option<DType> {
        Some(match self {
            Data::F32(_) => DType::F32,
            Data::F64(_) => DType::F64,
            Data::F16(_) => DType::F16,
            Data::BF16(_) => DType::BF16,
            Data::I8(_) => DType::I8,
            Data::I16(_) => DType::I16,
            Data::I32(_) => DType::I32,
            Data::I64(_) => DType::I64,
            Data::U8(_) => DType::U8,
            Data::U16(_) => DType::U16,
            Data::U32(_) => DType::U32,
            Data::U64(_) => DType::U64,
            Data::Bool(_) => DType::Bool,
            Data::String(_) => DType::String,
            Data::Raw(_) => return None,
        })
    }
}

/// Element vectors cross the worker protocol as one byte string each (little-endian), not
/// element by element.
mod wire {
    use half::{bf16, f16};
    use serde::{Deserialize, Deserializer, Serializer};

    pub trait Elem: Copy {
        const N: usize;
        fn put(self, out: &mut Vec<u8>);
        fn get(b: &[u8]) -> Self;
    }

    macro_rules! elem {
        ($($t:ty => $n:expr),*) => {$(
            impl Elem for $t {
                const N: usize = $n;
                fn put(self, out: &mut Vec<u8>) {
                    out.extend_from_slice(&self.to_le_bytes());
                }
                fn get(b: &[u8]) -> Self {
                    <$t>::from_le_bytes(b.try_into().expect("chunk of N bytes"))
                }
            }
        )*};
    }
    elem!(f32 => 4, f64 => 8, f16 => 2, bf16 => 2, i8 => 1, i16 => 2, i32 => 4, i64 => 8,
          u8 => 1, u16 => 2, u32 => 4, u64 => 8);

    impl Elem for bool {
        const N: usize = 1;
        fn put(self, out: &mut Vec<u8>) {
            out.push(self as u8);
        }
        fn get(b: &[u8]) -> Self {
            b[0] != 0
        }
    }

    pub fn serialize<S: Serializer, T: Elem>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
        let mut b = Vec::with_capacity(v.len() * T::N);
        for &x in v {
            x.put(&mut b);
        }
        s.serialize_bytes(&b)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Elem>(d: D) -> Result<Vec<T>, D::Error> {
        let b = serde_bytes::ByteBuf::deserialize(d)?;
        if b.len() % T::N != 0 {
            return Err(serde::de::Error::custom(format!(
                "{} bytes is not a whole number of {}-byte elements",
                b.len(),
                T::N
            )));
        }
        Ok(b.chunks_exact(T::N).map(T::get).collect())
    }
}

/// A dense tensor in host memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostTensor {
    /// Element type (kept separately from `data` so that `Raw` data keeps its type).
    #[serde(with = "dtype_code")]
    pub dtype: DType,
    /// Dimensions.
    pub shape: Vec<usize>,
    /// Elements.
    pub data: Data,
}

mod dtype_code {
    use mutagraph_ir::dtype::DType;
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(d: &DType, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i32(d.code())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DType, D::Error> {
        Ok(DType::from_code(i32::deserialize(d)?))
    }
}

/// Errors of value conversion.
#[derive(Debug, thiserror::Error)]
pub enum ValueError {
    /// The protobuf message could not be decoded or is inconsistent.
    #[error("{0}")]
    Malformed(String),
    /// The element type cannot be held by this conversion.
    #[error("unsupported element type {0}")]
    Unsupported(DType),
}

impl HostTensor {
    /// Builds a tensor; panics if the data length does not match the shape (a bug of the caller).
    pub fn new(shape: Vec<usize>, data: Data) -> HostTensor {
        let dtype = data
            .dtype()
            .expect("HostTensor::new cannot infer the dtype of raw data");
        let n: usize = shape.iter().product();
        assert_eq!(
            n,
            data.len(),
            "shape {shape:?} does not match {} elements",
            data.len()
        );
        HostTensor { dtype, shape, data }
    }

    /// A tensor of `dtype` and `shape` from f64 values (converted with `as` casts; bools are
    /// `v != 0`).
    pub fn from_f64s(dtype: DType, shape: Vec<usize>, v: &[f64]) -> Result<HostTensor, ValueError> {
        let data = match dtype {
            DType::F32 => Data::F32(v.iter().map(|&x| x as f32).collect()),
            DType::F64 => Data::F64(v.to_vec()),
            DType::F16 => Data::F16(v.iter().map(|&x| f16::from_f64(x)).collect()),
            DType::BF16 => Data::BF16(v.iter().map(|&x| bf16::from_f64(x)).collect()),
            DType::I8 => Data::I8(v.iter().map(|&x| x as i8).collect()),
            DType::I16 => Data::I16(v.iter().map(|&x| x as i16).collect()),
            DType::I32 => Data::I32(v.iter().map(|&x| x as i32).collect()),
            DType::I64 => Data::I64(v.iter().map(|&x| x as i64).collect()),
            DType::U8 => Data::U8(v.iter().map(|&x| x as u8).collect()),
            DType::U16 => Data::U16(v.iter().map(|&x| x as u16).collect()),
            DType::U32 => Data::U32(v.iter().map(|&x| x as u32).collect()),
            DType::U64 => Data::U64(v.iter().map(|&x| x as u64).collect()),
            DType::Bool => Data::Bool(v.iter().map(|&x| x != 0.0).collect()),
            d => return Err(ValueError::Unsupported(d)),
        };
        let n: usize = shape.iter().product();
        if n != data.len() {
            return Err(ValueError::Malformed(format!(
                "shape {shape:?} needs {n} values, got {}",
                data.len()
            )));
        }
        Ok(HostTensor { dtype, shape, data })
    }

    /// Number of elements.
    pub fn num_elements(&self) -> usize {
        self.shape.iter().product()
    }

    /// The values as f64 (`None` for strings and raw data).
    pub fn to_f64s(&self) -> Option<Vec<f64>> {
        Some(match &self.data {
            Data::F32(v) => v.iter().map(|&x| x as f64).collect(),
            Data::F64(v) => v.clone(),
            Data::F16(v) => v.iter().map(|x| x.to_f64()).collect(),
            Data::BF16(v) => v.iter().map(|x| x.to_f64()).collect(),
            Data::I8(v) => v.iter().map(|&x| x as f64).collect(),
            Data::I16(v) => v.iter().map(|&x| x as f64).collect(),
            Data::I32(v) => v.iter().map(|&x| x as f64).collect(),
            Data::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Data::U8(v) => v.iter().map(|&x| x as f64).collect(),
            Data::U16(v) => v.iter().map(|&x| x as f64).collect(),
            Data::U32(v) => v.iter().map(|&x| x as f64).collect(),
            Data::U64(v) => v.iter().map(|&x| x as f64).collect(),
            Data::Bool(v) => v.iter().map(|&x| x as u8 as f64).collect(),
            Data::String(_) | Data::Raw(_) => return None,
        })
    }

    /// The values as i64 when the tensor holds integers or booleans.
    pub fn to_i64s(&self) -> Option<Vec<i64>> {
        Some(match &self.data {
            Data::I8(v) => v.iter().map(|&x| x as i64).collect(),
            Data::I16(v) => v.iter().map(|&x| x as i64).collect(),
            Data::I32(v) => v.iter().map(|&x| x as i64).collect(),
            Data::I64(v) => v.clone(),
            Data::U8(v) => v.iter().map(|&x| x as i64).collect(),
            Data::U16(v) => v.iter().map(|&x| x as i64).collect(),
            Data::U32(v) => v.iter().map(|&x| x as i64).collect(),
            Data::U64(v) => v.iter().map(|&x| x as i64).collect(),
            Data::Bool(v) => v.iter().map(|&x| x as i64).collect(),
            _ => return None,
        })
    }

    /// Decodes a `TensorProto` (inline or raw data; external data is refused).
    pub fn from_proto(t: &TensorProto) -> Result<HostTensor, ValueError> {
        let dtype = t.dtype();
        if t.dims.iter().any(|&d| d < 0) {
            return Err(ValueError::Malformed(format!(
                "negative dimension in {:?}",
                t.dims
            )));
        }
        let shape: Vec<usize> = t.dims.iter().map(|&d| d as usize).collect();
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| ValueError::Malformed(format!("dims {:?} overflow", t.dims)))?;
        if t.is_external() {
            return Err(ValueError::Malformed(format!(
                "tensor '{}' keeps its data in an external file",
                t.name.as_deref().unwrap_or("")
            )));
        }
        let data = match dtype {
            DType::String => Data::String(t.string_data.clone()),
            DType::F32 => match &t.raw_data {
                Some(r) => Data::F32(chunks(r, n, f32::from_le_bytes)?),
                None => Data::F32(t.float_data.clone()),
            },
            DType::F64 => match &t.raw_data {
                Some(r) => Data::F64(chunks(r, n, f64::from_le_bytes)?),
                None => Data::F64(t.double_data.clone()),
            },
            DType::I64 => match &t.raw_data {
                Some(r) => Data::I64(chunks(r, n, i64::from_le_bytes)?),
                None => Data::I64(t.int64_data.clone()),
            },
            DType::U64 => match &t.raw_data {
                Some(r) => Data::U64(chunks(r, n, u64::from_le_bytes)?),
                None => Data::U64(t.uint64_data.clone()),
            },
            DType::U32 => match &t.raw_data {
                Some(r) => Data::U32(chunks(r, n, u32::from_le_bytes)?),
                None => Data::U32(t.uint64_data.iter().map(|&x| x as u32).collect()),
            },
            DType::I32 => match &t.raw_data {
                Some(r) => Data::I32(chunks(r, n, i32::from_le_bytes)?),
                None => Data::I32(t.int32_data.clone()),
            },
            DType::I16 => match &t.raw_data {
                Some(r) => Data::I16(chunks(r, n, i16::from_le_bytes)?),
                None => Data::I16(t.int32_data.iter().map(|&x| x as i16).collect()),
            },
            DType::U16 => match &t.raw_data {
                Some(r) => Data::U16(chunks(r, n, u16::from_le_bytes)?),
                None => Data::U16(t.int32_data.iter().map(|&x| x as u16).collect()),
            },
            DType::I8 => match &t.raw_data {
                Some(r) => Data::I8(chunks(r, n, |c: [u8; 1]| c[0] as i8)?),
                None => Data::I8(t.int32_data.iter().map(|&x| x as i8).collect()),
            },
            DType::U8 => match &t.raw_data {
                Some(r) => Data::U8(chunks(r, n, |c: [u8; 1]| c[0])?),
                None => Data::U8(t.int32_data.iter().map(|&x| x as u8).collect()),
            },
            DType::Bool => match &t.raw_data {
                Some(r) => Data::Bool(chunks(r, n, |c: [u8; 1]| c[0] != 0)?),
                None => Data::Bool(t.int32_data.iter().map(|&x| x != 0).collect()),
            },
            DType::F16 => match &t.raw_data {
                Some(r) => Data::F16(chunks(r, n, |c: [u8; 2]| f16::from_le_bytes(c))?),
                None => Data::F16(
                    t.int32_data
                        .iter()
                        .map(|&x| f16::from_bits(x as u16))
                        .collect(),
                ),
            },
            DType::BF16 => match &t.raw_data {
                Some(r) => Data::BF16(chunks(r, n, |c: [u8; 2]| bf16::from_le_bytes(c))?),
                None => Data::BF16(
                    t.int32_data
                        .iter()
                        .map(|&x| bf16::from_bits(x as u16))
                        .collect(),
                ),
            },
            DType::Other(_) => return Err(ValueError::Unsupported(dtype)),
            _ => match &t.raw_data {
                Some(r) => Data::Raw(r.to_vec()),
                None => return Err(ValueError::Unsupported(dtype)),
            },
        };
        if !matches!(data, Data::Raw(_)) && data.len() != n {
            return Err(ValueError::Malformed(format!(
                "tensor '{}' has {} values for dims {:?}",
                t.name.as_deref().unwrap_or(""),
                data.len(),
                t.dims
            )));
        }
        Ok(HostTensor { dtype, shape, data })
    }

    /// Encodes as a `TensorProto` (raw data, except strings).
    pub fn to_proto(&self, name: &str) -> TensorProto {
        fn raw<T, const N: usize>(v: &[T], f: impl Fn(&T) -> [u8; N]) -> Vec<u8> {
            let mut out = Vec::with_capacity(v.len() * N);
            for x in v {
                out.extend_from_slice(&f(x));
            }
            out
        }
        let mut t = TensorProto {
            name: Some(name.to_string()),
            dims: self.shape.iter().map(|&d| d as i64).collect(),
            data_type: Some(self.dtype.code()),
            ..Default::default()
        };
        let bytes = match &self.data {
            Data::F32(v) => raw(v, |x| x.to_le_bytes()),
            Data::F64(v) => raw(v, |x| x.to_le_bytes()),
            Data::F16(v) => raw(v, |x| x.to_le_bytes()),
            Data::BF16(v) => raw(v, |x| x.to_le_bytes()),
            Data::I8(v) => raw(v, |x| x.to_le_bytes()),
            Data::I16(v) => raw(v, |x| x.to_le_bytes()),
            Data::I32(v) => raw(v, |x| x.to_le_bytes()),
            Data::I64(v) => raw(v, |x| x.to_le_bytes()),
            Data::U8(v) => v.clone(),
            Data::U16(v) => raw(v, |x| x.to_le_bytes()),
            Data::U32(v) => raw(v, |x| x.to_le_bytes()),
            Data::U64(v) => raw(v, |x| x.to_le_bytes()),
            Data::Bool(v) => v.iter().map(|&b| b as u8).collect(),
            Data::String(v) => {
                t.string_data = v.clone();
                return t;
            }
            Data::Raw(v) => v.clone(),
        };
        t.raw_data = Some(bytes.into());
        t
    }

    /// Counts of NaN and infinite elements.
    pub fn nan_inf_counts(&self) -> (usize, usize) {
        match self.to_f64s() {
            Some(v) => (
                v.iter().filter(|x| x.is_nan()).count(),
                v.iter().filter(|x| x.is_infinite()).count(),
            ),
            None => (0, 0),
        }
    }
}

fn chunks<T, const N: usize>(
    raw: &[u8],
    n: usize,
    f: impl Fn([u8; N]) -> T,
) -> Result<Vec<T>, ValueError> {
    if raw.len() != n.saturating_mul(N) {
        return Err(ValueError::Malformed(format!(
            "raw_data holds {} bytes, {n} elements of {N} bytes need {}",
            raw.len(),
            n.saturating_mul(N)
        )));
    }
    Ok(raw
        .chunks_exact(N)
        .map(|c| f(c.try_into().unwrap()))
        .collect())
}

impl fmt::Display for HostTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{:?}", self.dtype, self.shape)
    }
}

/// Any runtime value of an ONNX graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Value {
    /// A dense tensor.
    Tensor(HostTensor),
    /// A sequence (possibly empty) of values.
    Sequence(Vec<Value>),
    /// An optional value; `None` is the empty optional.
    Optional(Option<Box<Value>>),
}

impl Value {
    /// The tensor, if this is one.
    pub fn tensor(&self) -> Option<&HostTensor> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// All tensors inside this value, depth first.
    pub fn tensors(&self) -> Vec<&HostTensor> {
        let mut out = Vec::new();
        fn walk<'a>(v: &'a Value, out: &mut Vec<&'a HostTensor>) {
            match v {
                Value::Tensor(t) => out.push(t),
                Value::Sequence(s) => s.iter().for_each(|x| walk(x, out)),
                Value::Optional(Some(x)) => walk(x, out),
                Value::Optional(None) => {}
            }
        }
        walk(self, &mut out);
        out
    }

    /// A short description (`f32[2, 3]`, `seq(3)`, `optional(none)`).
    pub fn describe(&self) -> String {
        match self {
            Value::Tensor(t) => t.to_string(),
            Value::Sequence(s) => format!("seq({})", s.len()),
            Value::Optional(None) => "optional(none)".into(),
            Value::Optional(Some(v)) => format!("optional({})", v.describe()),
        }
    }
}

impl From<HostTensor> for Value {
    fn from(t: HostTensor) -> Value {
        Value::Tensor(t)
    }
}

/// ONNX data schema `SequenceProto` (field numbers as in ONNX's onnx-data.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SequenceProto {
    /// Name.
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// Kind of the elements: 1 tensor, 2 sparse tensor, 3 sequence, 4 map, 5 optional.
    #[prost(int32, optional, tag = "2")]
    pub elem_type: Option<i32>,
    /// Tensor elements.
    #[prost(message, repeated, tag = "3")]
    pub tensor_values: Vec<TensorProto>,
    /// Sequence elements.
    #[prost(message, repeated, tag = "5")]
    pub sequence_values: Vec<SequenceProto>,
    /// Optional elements.
    #[prost(message, repeated, tag = "7")]
    pub optional_values: Vec<OptionalProto>,
}

/// ONNX data schema `OptionalProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OptionalProto {
    /// Name.
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// Kind of the element (0 = empty, 1 tensor, 3 sequence, 5 optional).
    #[prost(int32, optional, tag = "2")]
    pub elem_type: Option<i32>,
    /// A tensor element.
    #[prost(message, optional, tag = "3")]
    pub tensor_value: Option<TensorProto>,
    /// A sequence element.
    #[prost(message, optional, tag = "5")]
    pub sequence_value: Option<SequenceProto>,
    /// An optional element.
    #[prost(message, optional, boxed, tag = "7")]
    pub optional_value: Option<Box<OptionalProto>>,
}

const ELEM_TENSOR: i32 = 1;
const ELEM_SEQUENCE: i32 = 3;
const ELEM_OPTIONAL: i32 = 5;

impl Value {
    /// Decodes a value serialized as the given ONNX type (`TensorProto`, `SequenceProto` or
    /// `OptionalProto`, as in the backend test suite's `input_N.pb` files).
    pub fn decode(bytes: &[u8], ty: &mutagraph_ir::types::ValueType) -> Result<Value, ValueError> {
        use mutagraph_ir::types::ValueType as T;
        use prost::Message;
        let err = |e: prost::DecodeError| ValueError::Malformed(e.to_string());
        match ty {
            T::Sequence(_) => Ok(Value::from_sequence(
                &SequenceProto::decode(bytes).map_err(err)?,
            )?),
            T::Optional(_) => Ok(Value::from_optional(
                &OptionalProto::decode(bytes).map_err(err)?,
            )?),
            _ => Ok(Value::Tensor(HostTensor::from_proto(
                &TensorProto::decode(bytes).map_err(err)?,
            )?)),
        }
    }

    /// Decodes a `SequenceProto`.
    pub fn from_sequence(s: &SequenceProto) -> Result<Value, ValueError> {
        let mut out = Vec::new();
        for t in &s.tensor_values {
            out.push(Value::Tensor(HostTensor::from_proto(t)?));
        }
        for q in &s.sequence_values {
            out.push(Value::from_sequence(q)?);
        }
        for o in &s.optional_values {
            out.push(Value::from_optional(o)?);
        }
        Ok(Value::Sequence(out))
    }

    /// Decodes an `OptionalProto`.
    pub fn from_optional(o: &OptionalProto) -> Result<Value, ValueError> {
        Ok(Value::Optional(match o.elem_type.unwrap_or(0) {
            ELEM_TENSOR => o
                .tensor_value
                .as_ref()
                .map(|t| HostTensor::from_proto(t).map(|t| Box::new(Value::Tensor(t))))
                .transpose()?,
            ELEM_SEQUENCE => o
                .sequence_value
                .as_ref()
                .map(|s| Value::from_sequence(s).map(Box::new))
                .transpose()?,
            ELEM_OPTIONAL => o
                .optional_value
                .as_ref()
                .map(|s| Value::from_optional(s).map(Box::new))
                .transpose()?,
            _ => None,
        }))
    }

    /// Encodes as protobuf bytes (`TensorProto`, `SequenceProto` or `OptionalProto`).
    pub fn encode(&self, name: &str) -> Vec<u8> {
        use prost::Message;
        match self {
            Value::Tensor(t) => t.to_proto(name).encode_to_vec(),
            Value::Sequence(_) => self.to_sequence(name).encode_to_vec(),
            Value::Optional(_) => self.to_optional(name).encode_to_vec(),
        }
    }

    fn to_sequence(&self, name: &str) -> SequenceProto {
        let mut s = SequenceProto {
            name: Some(name.to_string()),
            elem_type: Some(ELEM_TENSOR),
            ..Default::default()
        };
        if let Value::Sequence(items) = self {
            for v in items {
                match v {
                    Value::Tensor(t) => s.tensor_values.push(t.to_proto("")),
                    Value::Sequence(_) => {
                        s.elem_type = Some(ELEM_SEQUENCE);
                        s.sequence_values.push(v.to_sequence(""))
                    }
                    Value::Optional(_) => {
                        s.elem_type = Some(ELEM_OPTIONAL);
                        s.optional_values.push(v.to_optional(""))
                    }
                }
            }
        }
        s
    }

    fn to_optional(&self, name: &str) -> OptionalProto {
        let mut o = OptionalProto {
            name: Some(name.to_string()),
            elem_type: Some(0),
            ..Default::default()
        };
        if let Value::Optional(Some(v)) = self {
            match &**v {
                Value::Tensor(t) => {
                    o.elem_type = Some(ELEM_TENSOR);
                    o.tensor_value = Some(t.to_proto(""));
                }
                Value::Sequence(_) => {
                    o.elem_type = Some(ELEM_SEQUENCE);
                    o.sequence_value = Some(v.to_sequence(""));
                }
                Value::Optional(_) => {
                    o.elem_type = Some(ELEM_OPTIONAL);
                    o.optional_value = Some(Box::new(v.to_optional("")));
                }
            }
        }
        o
    }
}

/// Named values, in graph order.
pub type NamedValues = Vec<(String, Value)>;

/// The value named `name` as a model run sees it: one of `inputs`, else the model's weight of
/// that name. `None` for anything else (a value computed by a node, or an unreadable weight).
pub fn input_or_weight(
    model: &mutagraph_ir::model::Model,
    inputs: &NamedValues,
    name: &str,
) -> Option<HostTensor> {
    inputs
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, v)| v.tensor().cloned())
        .or_else(|| {
            model
                .graph
                .initializers
                .get(name)
                .and_then(|t| HostTensor::from_proto(t).ok())
        })
}
/// The numpy broadcast of concrete shapes (`None` where they do not broadcast): the backends'
/// one adapter of [`mutagraph_ir::ops::common::broadcast_dims`], for the reference and burn.
pub fn broadcast_all(shapes: &[&[usize]]) -> Option<Vec<usize>> {
    let mut out: Vec<i64> = Vec::new();
    for s in shapes {
        let s: Vec<i64> = s.iter().map(|&d| d as i64).collect();
        out = mutagraph_ir::ops::common::broadcast_dims(&out, &s)?;
    }
    Some(out.into_iter().map(|d| d as usize).collect())
}
