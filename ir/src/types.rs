//! Types of values: tensors with symbolic shapes, and the non-tensor ONNX types.
use crate::dtype::DType;
use crate::pb;
use std::fmt;

/// One dimension of a shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A known size.
    Known(i64),
    /// A named symbolic size (`batch`, `N`, ...).
    Param(String),
    /// Nothing is known.
    Unknown,
}

impl Dim {
    /// The size if known.
    pub fn value(&self) -> Option<i64> {
        match self {
            Dim::Known(v) => Some(*v),
            _ => None,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Known(v) => write!(f, "{v}"),
            Dim::Param(p) => f.write_str(p),
            Dim::Unknown => f.write_str("?"),
        }
    }
}

impl From<i64> for Dim {
    fn from(v: i64) -> Dim {
        Dim::Known(v)
    }
}

/// A tensor type: element type and (maybe unknown) shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// Element type.
    pub dtype: DType,
    /// `None` when even the rank is unknown.
    pub shape: Option<Vec<Dim>>,
}

impl TensorType {
    /// A tensor of known dtype and static shape.
    pub fn fixed(dtype: DType, dims: &[i64]) -> TensorType {
        TensorType {
            dtype,
            shape: Some(dims.iter().map(|&d| Dim::Known(d)).collect()),
        }
    }

    /// A tensor of known dtype and unknown rank.
    pub fn unranked(dtype: DType) -> TensorType {
        TensorType { dtype, shape: None }
    }

    /// Rank if known.
    pub fn rank(&self) -> Option<usize> {
        self.shape.as_ref().map(|s| s.len())
    }

    /// The static shape, if every dim is known.
    pub fn static_dims(&self) -> Option<Vec<i64>> {
        self.shape.as_ref()?.iter().map(Dim::value).collect()
    }

    /// Number of elements if the shape is static.
    pub fn num_elements(&self) -> Option<i64> {
        self.static_dims().map(|d| d.iter().product())
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.dtype)?;
        match &self.shape {
            None => f.write_str("[*]"),
            Some(s) => {
                f.write_str("[")?;
                for (i, d) in s.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{d}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// The type of any ONNX value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// A dense tensor.
    Tensor(TensorType),
    /// A sparse tensor.
    SparseTensor(TensorType),
    /// A sequence of values of one type.
    Sequence(Box<ValueType>),
    /// A map (ONNX-ML).
    Map(DType, Box<ValueType>),
    /// An optional value.
    Optional(Box<ValueType>),
    /// An opaque type.
    Opaque(String, String),
    /// Nothing is known.
    Unknown,
}

impl ValueType {
    /// The tensor type, if this is a tensor.
    pub fn tensor(&self) -> Option<&TensorType> {
        match self {
            ValueType::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// Shorthand for a tensor value type.
    pub fn t(dtype: DType, shape: Option<Vec<Dim>>) -> ValueType {
        ValueType::Tensor(TensorType { dtype, shape })
    }

    /// Reads a `TypeProto`.
    pub fn from_proto(tp: &pb::TypeProto) -> ValueType {
        use pb::type_proto::Value;
        match &tp.value {
            Some(Value::TensorType(t)) => ValueType::Tensor(TensorType {
                dtype: DType::from_code(t.elem_type.unwrap_or(0)),
                shape: t.shape.as_ref().map(shape_from_proto),
            }),
            Some(Value::SparseTensorType(t)) => ValueType::SparseTensor(TensorType {
                dtype: DType::from_code(t.elem_type.unwrap_or(0)),
                shape: t.shape.as_ref().map(shape_from_proto),
            }),
            Some(Value::SequenceType(s)) => ValueType::Sequence(Box::new(
                s.elem_type
                    .as_deref()
                    .map(ValueType::from_proto)
                    .unwrap_or(ValueType::Unknown),
            )),
            Some(Value::OptionalType(s)) => ValueType::Optional(Box::new(
                s.elem_type
                    .as_deref()
                    .map(ValueType::from_proto)
                    .unwrap_or(ValueType::Unknown),
            )),
            Some(Value::MapType(m)) => ValueType::Map(
                DType::from_code(m.key_type.unwrap_or(0)),
                Box::new(
                    m.value_type
                        .as_deref()
                        .map(ValueType::from_proto)
                        .unwrap_or(ValueType::Unknown),
                ),
            ),
            Some(Value::OpaqueType(o)) => ValueType::Opaque(
                o.domain.clone().unwrap_or_default(),
                o.name.clone().unwrap_or_default(),
            ),
            None => ValueType::Unknown,
        }
    }

    /// Writes a `TypeProto` (used for inferred types; declared types are kept verbatim).
    pub fn to_proto(&self) -> pb::TypeProto {
        use pb::type_proto::{self as tp, Value};
        let value = match self {
            ValueType::Tensor(t) => Some(Value::TensorType(tp::Tensor {
                elem_type: Some(t.dtype.code()),
                shape: t.shape.as_ref().map(|s| shape_to_proto(s)),
            })),
            ValueType::SparseTensor(t) => Some(Value::SparseTensorType(tp::SparseTensor {
                elem_type: Some(t.dtype.code()),
                shape: t.shape.as_ref().map(|s| shape_to_proto(s)),
            })),
            ValueType::Sequence(e) => Some(Value::SequenceType(Box::new(tp::Sequence {
                elem_type: Some(Box::new(e.to_proto())),
            }))),
            ValueType::Optional(e) => Some(Value::OptionalType(Box::new(tp::Optional {
                elem_type: Some(Box::new(e.to_proto())),
            }))),
            ValueType::Map(k, v) => Some(Value::MapType(Box::new(tp::Map {
                key_type: Some(k.code()),
                value_type: Some(Box::new(v.to_proto())),
            }))),
            ValueType::Opaque(d, n) => Some(Value::OpaqueType(tp::Opaque {
                domain: Some(d.clone()),
                name: Some(n.clone()),
            })),
            ValueType::Unknown => None,
        };
        pb::TypeProto {
            value,
            denotation: None,
        }
    }

    /// True when nothing in this type is unknown (static shapes, known dtypes).
    pub fn is_fully_known(&self) -> bool {
        match self {
            ValueType::Tensor(t) | ValueType::SparseTensor(t) => {
                t.dtype.is_known() && t.static_dims().is_some()
            }
            ValueType::Sequence(e) | ValueType::Optional(e) | ValueType::Map(_, e) => {
                e.is_fully_known()
            }
            ValueType::Opaque(..) => true,
            ValueType::Unknown => false,
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueType::Tensor(t) => write!(f, "{t}"),
            ValueType::SparseTensor(t) => write!(f, "sparse<{t}>"),
            ValueType::Sequence(e) => write!(f, "seq<{e}>"),
            ValueType::Optional(e) => write!(f, "optional<{e}>"),
            ValueType::Map(k, v) => write!(f, "map<{k},{v}>"),
            ValueType::Opaque(d, n) => write!(f, "opaque<{d}.{n}>"),
            ValueType::Unknown => f.write_str("?"),
        }
    }
}

/// Reads a declared shape. A negative `dim_value` (exporters write -1 for a dynamic size, and
/// ONNX Runtime and tract read it so) is an unknown dim, like a dim without a value; the file
/// keeps what it said ([`crate::import::declared_dim_notes`] lists such dims). A `dim_value`
/// of 0 is a size: ONNX Runtime feeds such an input only empty tensors.
fn shape_from_proto(s: &pb::TensorShapeProto) -> Vec<Dim> {
    use pb::tensor_shape_proto::dimension::Value;
    s.dim
        .iter()
        .map(|d| match &d.value {
            Some(Value::DimValue(v)) if *v >= 0 => Dim::Known(*v),
            Some(Value::DimParam(p)) if !p.is_empty() => Dim::Param(p.clone()),
            _ => Dim::Unknown,
        })
        .collect()
}

fn shape_to_proto(s: &[Dim]) -> pb::TensorShapeProto {
    use pb::tensor_shape_proto::{Dimension, dimension::Value};
    pb::TensorShapeProto {
        dim: s
            .iter()
            .map(|d| Dimension {
                value: match d {
                    Dim::Known(v) => Some(Value::DimValue(*v)),
                    Dim::Param(p) => Some(Value::DimParam(p.clone())),
                    Dim::Unknown => None,
                },
                denotation: None,
            })
            .collect(),
    }
}
