//! Tensor values as the text writes them, and [`normalize`]: a model reduced to what the text
//! carries.
use crate::attr::AttrKind;
use crate::import::legacy_kind;
use crate::model::Model;
use crate::pb;

/// The `TensorProto` field that holds values of an element type in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    /// `float_data` (float, complex64).
    F32,
    /// `double_data` (double, complex128).
    F64,
    /// `int32_data` (small ints, bool, float16, bfloat16, float8, 4-bit and 2-bit types).
    I32,
    /// `int64_data`.
    I64,
    /// `uint64_data` (uint32, uint64).
    U64,
    /// `string_data`.
    Str,
}

/// The field of an element type code (`None` for undefined or unknown codes).
pub(crate) fn field_of(code: i32) -> Option<Field> {
    Some(match code {
        1 | 14 => Field::F32,
        11 | 15 => Field::F64,
        7 => Field::I64,
        12 | 13 => Field::U64,
        8 => Field::Str,
        2..=6 | 9 | 10 | 16..=26 => Field::I32,
        _ => return None,
    })
}

/// How many field entries a tensor of `n` elements holds (complex numbers take two, 4-bit
/// types are packed two and 2-bit types four per entry).
pub(crate) fn entries_for(code: i32, n: u128) -> u128 {
    match code {
        14 | 15 => n.saturating_mul(2),
        21..=23 => n.div_ceil(2),
        25 | 26 => n.div_ceil(4),
        _ => n,
    }
}

/// Tensor values in the field the text uses.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Data {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    Str(Vec<Vec<u8>>),
}

/// The values of `t` as the text writes them: `raw_data` decoded, else the field of its
/// element type. `None` when the element type is undefined or unknown.
pub(crate) fn data_of(t: &pb::TensorProto) -> Option<Data> {
    let code = t.data_type.unwrap_or(0);
    let field = field_of(code)?;
    if let (Some(raw), false) = (&t.raw_data, field == Field::Str) {
        return Some(decode_raw(code, field, raw));
    }
    Some(match field {
        Field::F32 => Data::F32(t.float_data.clone()),
        Field::F64 => Data::F64(t.double_data.clone()),
        Field::I32 => Data::I32(t.int32_data.clone()),
        Field::I64 => Data::I64(t.int64_data.clone()),
        Field::U64 => Data::U64(t.uint64_data.clone()),
        Field::Str => Data::Str(t.string_data.clone()),
    })
}

fn decode_raw(code: i32, field: Field, raw: &[u8]) -> Data {
    fn le<const N: usize>(raw: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
        raw.chunks_exact(N).map(|c| c.try_into().unwrap())
    }
    match field {
        Field::F32 => Data::F32(le::<4>(raw).map(f32::from_le_bytes).collect()),
        Field::F64 => Data::F64(le::<8>(raw).map(f64::from_le_bytes).collect()),
        Field::I64 => Data::I64(le::<8>(raw).map(i64::from_le_bytes).collect()),
        Field::U64 if code == 12 => {
            Data::U64(le::<4>(raw).map(|b| u32::from_le_bytes(b) as u64).collect())
        }
        Field::U64 => Data::U64(le::<8>(raw).map(u64::from_le_bytes).collect()),
        Field::I32 => Data::I32(match code {
            3 => raw.iter().map(|&b| b as i8 as i32).collect(),
            4 | 10 | 16 => le::<2>(raw).map(|b| u16::from_le_bytes(b) as i32).collect(),
            5 => le::<2>(raw).map(|b| i16::from_le_bytes(b) as i32).collect(),
            6 => le::<4>(raw).map(i32::from_le_bytes).collect(),
            // uint8, bool, float8, 4-bit and 2-bit types: one byte per entry.
            _ => raw.iter().map(|&b| b as i32).collect(),
        }),
        Field::Str => Data::Str(Vec::new()),
    }
}

/// Replaces the data of `t` with `d` in its field (every other data field and `raw_data`
/// cleared).
pub(crate) fn set_data(t: &mut pb::TensorProto, d: Data) {
    t.float_data.clear();
    t.double_data.clear();
    t.int32_data.clear();
    t.int64_data.clear();
    t.uint64_data.clear();
    t.string_data.clear();
    t.raw_data = None;
    match d {
        Data::F32(v) => t.float_data = v,
        Data::F64(v) => t.double_data = v,
        Data::I32(v) => t.int32_data = v,
        Data::I64(v) => t.int64_data = v,
        Data::U64(v) => t.uint64_data = v,
        Data::Str(v) => t.string_data = v,
    }
}

/// The NaN the parser gives for `nan` / `-nan`: only the sign of a NaN survives the text.
pub(crate) fn canon_f32(v: f32) -> f32 {
    if v.is_nan() {
        if v.is_sign_negative() {
            -f32::NAN
        } else {
            f32::NAN
        }
    } else {
        v
    }
}

/// [`canon_f32`] for doubles.
pub(crate) fn canon_f64(v: f64) -> f64 {
    if v.is_nan() {
        if v.is_sign_negative() {
            -f64::NAN
        } else {
            f64::NAN
        }
    } else {
        v
    }
}

fn lossy(b: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(b).into_owned().into_bytes()
}

/// The model as the text carries it: `parse_model(&print_model(m))` equals `normalize(m)`
/// (compared through [`Model::to_bytes`]). The module documentation lists what is dropped.
pub fn normalize(m: &Model) -> Model {
    let mut p = crate::export::model_to_proto(m);
    normalize_model(&mut p);
    // The proto came from a valid IR and normalization only removes or canonicalizes fields.
    crate::import::model_from_proto(p).unwrap_or_else(|_| m.clone())
}

fn normalize_entries(v: &mut [pb::StringStringEntryProto]) {
    for e in v {
        e.key.get_or_insert_with(String::new);
        e.value.get_or_insert_with(String::new);
    }
}

fn normalize_opsets(v: &mut Vec<pb::OperatorSetIdProto>) {
    v.retain(|o| o.version.is_some());
    for o in v {
        o.domain.get_or_insert_with(String::new);
    }
}

pub(crate) fn normalize_model(p: &mut pb::ModelProto) {
    p.training_info.clear();
    p.configuration.clear();
    normalize_opsets(&mut p.opset_import);
    normalize_entries(&mut p.metadata_props);
    if let Some(g) = &mut p.graph {
        normalize_graph(g);
    }
    for f in &mut p.functions {
        normalize_function(f);
    }
}

pub(crate) fn normalize_function(f: &mut pb::FunctionProto) {
    f.name.get_or_insert_with(String::new);
    f.metadata_props.clear();
    normalize_opsets(&mut f.opset_import);
    for n in &mut f.node {
        normalize_node(n);
    }
    f.attribute_proto = std::mem::take(&mut f.attribute_proto)
        .into_iter()
        .filter_map(normalize_attr)
        .collect();
    for v in &mut f.value_info {
        normalize_value_info(v);
    }
}

pub(crate) fn normalize_graph(g: &mut pb::GraphProto) {
    g.name.get_or_insert_with(String::new);
    g.doc_string = None;
    g.sparse_initializer.clear();
    g.quantization_annotation.clear();
    g.metadata_props.clear();
    for v in g
        .input
        .iter_mut()
        .chain(&mut g.output)
        .chain(&mut g.value_info)
    {
        normalize_value_info(v);
    }
    g.initializer = std::mem::take(&mut g.initializer)
        .into_iter()
        .filter_map(normalize_tensor)
        .collect();
    for n in &mut g.node {
        normalize_node(n);
    }
}

fn normalize_value_info(v: &mut pb::ValueInfoProto) {
    v.name.get_or_insert_with(String::new);
    v.doc_string = None;
    v.metadata_props.clear();
    v.r#type = v.r#type.take().and_then(normalize_type);
}

/// The type as the text writes it; `None` when the text cannot write it (then the value is
/// written without a type).
pub(crate) fn normalize_type(t: pb::TypeProto) -> Option<pb::TypeProto> {
    use pb::type_proto::{self as tp, Value};
    let value = match t.value? {
        Value::TensorType(x) => Value::TensorType(tp::Tensor {
            elem_type: Some(known(x.elem_type)?),
            shape: x.shape.map(normalize_shape),
        }),
        Value::SparseTensorType(x) => Value::SparseTensorType(tp::SparseTensor {
            elem_type: Some(known(x.elem_type)?),
            shape: x.shape.map(normalize_shape),
        }),
        Value::SequenceType(s) => Value::SequenceType(Box::new(tp::Sequence {
            elem_type: Some(Box::new(normalize_type(*s.elem_type?)?)),
        })),
        Value::OptionalType(s) => Value::OptionalType(Box::new(tp::Optional {
            elem_type: Some(Box::new(normalize_type(*s.elem_type?)?)),
        })),
        Value::MapType(m) => Value::MapType(Box::new(tp::Map {
            key_type: Some(known(m.key_type)?),
            value_type: Some(Box::new(normalize_type(*m.value_type?)?)),
        })),
        Value::OpaqueType(o) => {
            let domain = o.domain.filter(|d| !d.is_empty());
            let name = match (&domain, o.name) {
                (Some(_), n) => Some(n.unwrap_or_default()),
                (None, n) => n,
            };
            Value::OpaqueType(tp::Opaque { domain, name })
        }
    };
    Some(pb::TypeProto {
        denotation: None,
        value: Some(value),
    })
}

fn known(code: Option<i32>) -> Option<i32> {
    code.filter(|c| super::dtype_name(*c).is_some())
}

fn normalize_shape(s: pb::TensorShapeProto) -> pb::TensorShapeProto {
    use pb::tensor_shape_proto::{Dimension, dimension::Value};
    pb::TensorShapeProto {
        dim: s
            .dim
            .into_iter()
            .map(|d| Dimension {
                denotation: None,
                value: match d.value {
                    Some(Value::DimParam(p)) if p.is_empty() => None,
                    v => v,
                },
            })
            .collect(),
    }
}

fn normalize_node(n: &mut pb::NodeProto) {
    if n.domain.as_deref() == Some("") {
        n.domain = None;
    }
    n.overload = None;
    n.doc_string = None;
    n.metadata_props.clear();
    n.device_configurations.clear();
    n.attribute = std::mem::take(&mut n.attribute)
        .into_iter()
        .filter_map(normalize_attr)
        .collect();
}

/// The attribute as the text writes it (`None`: the text cannot write it).
pub(crate) fn normalize_attr(a: pb::AttributeProto) -> Option<pb::AttributeProto> {
    let mut out = pb::AttributeProto {
        name: Some(a.name.clone().unwrap_or_default()),
        ..Default::default()
    };
    if a.ref_attr_name.is_some() {
        out.ref_attr_name = a.ref_attr_name;
        out.r#type = a.r#type.filter(|c| printable_kind(*c).is_some());
        return Some(out);
    }
    let kind = match a.r#type {
        Some(c) => printable_kind(c)?,
        None => printable_kind(legacy_kind(&a).code())?,
    };
    out.r#type = Some(kind.code());
    match kind {
        AttrKind::Float => out.f = Some(canon_f32(a.f.unwrap_or_default())),
        AttrKind::Int => out.i = Some(a.i.unwrap_or_default()),
        AttrKind::String => out.s = Some(lossy(&a.s.unwrap_or_default())),
        AttrKind::Tensor => out.t = Some(normalize_tensor(a.t.unwrap_or_default())?),
        AttrKind::Graph => {
            let mut g = a.g.unwrap_or_default();
            normalize_graph(&mut g);
            out.g = Some(g);
        }
        AttrKind::TypeProto => out.tp = Some(normalize_type(a.tp?)?),
        AttrKind::Floats => out.floats = a.floats.into_iter().map(canon_f32).collect(),
        AttrKind::Ints => out.ints = a.ints,
        AttrKind::Strings => out.strings = a.strings.iter().map(|s| lossy(s)).collect(),
        AttrKind::Tensors => {
            out.tensors = a
                .tensors
                .into_iter()
                .map(normalize_tensor)
                .collect::<Option<_>>()?
        }
        AttrKind::Graphs => {
            out.graphs = a.graphs;
            for g in &mut out.graphs {
                normalize_graph(g);
            }
        }
        AttrKind::TypeProtos => {
            out.type_protos = a
                .type_protos
                .into_iter()
                .map(normalize_type)
                .collect::<Option<_>>()?
        }
        AttrKind::SparseTensor | AttrKind::SparseTensors | AttrKind::Undefined => return None,
    }
    Some(out)
}

/// The kind of an attribute type code when the text can write values of it.
pub(crate) fn printable_kind(code: i32) -> Option<AttrKind> {
    AttrKind::from_code(code).filter(|k| {
        !matches!(
            k,
            AttrKind::SparseTensor | AttrKind::SparseTensors | AttrKind::Undefined
        )
    })
}

/// The tensor as the text writes it (`None`: its element type has no name in the text).
pub(crate) fn normalize_tensor(t: pb::TensorProto) -> Option<pb::TensorProto> {
    let code = known(t.data_type)?;
    let mut out = pb::TensorProto {
        dims: t.dims.clone(),
        data_type: Some(code),
        name: t.name.clone().filter(|n| !n.is_empty()),
        ..Default::default()
    };
    if t.data_location == Some(1) {
        out.data_location = Some(1);
        out.external_data = t.external_data;
        normalize_entries(&mut out.external_data);
        return Some(out);
    }
    let data = match data_of(&t)? {
        Data::F32(v) => Data::F32(v.into_iter().map(canon_f32).collect()),
        Data::F64(v) => Data::F64(v.into_iter().map(canon_f64).collect()),
        Data::Str(v) => Data::Str(v.iter().map(|s| lossy(s)).collect()),
        d => d,
    };
    set_data(&mut out, data);
    Some(out)
}
