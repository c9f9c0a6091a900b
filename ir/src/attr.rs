//! Typed node attributes.
use crate::graph::Graph;
use crate::pb;
use crate::tensor::Tensor;

/// A node attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    /// Attribute name.
    pub name: String,
    /// Its value.
    pub value: AttrValue,
    /// The `type` field as written in the file (`None` in legacy files that omit it).
    pub type_code: Option<i32>,
    /// Reference to an attribute of the enclosing function, if any.
    pub ref_attr_name: Option<String>,
    /// Documentation.
    pub doc_string: Option<String>,
}

/// The value of an attribute.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum AttrValue {
    /// FLOAT
    Float(f32),
    /// INT
    Int(i64),
    /// STRING (bytes)
    String(Vec<u8>),
    /// TENSOR
    Tensor(Tensor),
    /// GRAPH: a nested graph (If / Loop / Scan bodies).
    Graph(Box<Graph>),
    /// SPARSE_TENSOR, kept verbatim (boxed: inline, its two tensors made every attribute of
    /// every node 800 bytes, most of the memory a long graph takes).
    SparseTensor(Box<pb::SparseTensorProto>),
    /// TYPE_PROTO, kept verbatim.
    TypeProto(pb::TypeProto),
    /// FLOATS
    Floats(Vec<f32>),
    /// INTS
    Ints(Vec<i64>),
    /// STRINGS
    Strings(Vec<Vec<u8>>),
    /// TENSORS
    Tensors(Vec<Tensor>),
    /// GRAPHS
    Graphs(Vec<Graph>),
    /// SPARSE_TENSORS, kept verbatim.
    SparseTensors(Vec<pb::SparseTensorProto>),
    /// TYPE_PROTOS, kept verbatim.
    TypeProtos(Vec<pb::TypeProto>),
    /// No value (a function attribute reference, or an UNDEFINED attribute).
    Undefined,
}

/// The kind of an attribute value (the ONNX `AttributeType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttrKind {
    /// FLOAT
    Float,
    /// INT
    Int,
    /// STRING
    String,
    /// TENSOR
    Tensor,
    /// GRAPH
    Graph,
    /// SPARSE_TENSOR
    SparseTensor,
    /// TYPE_PROTO
    TypeProto,
    /// FLOATS
    Floats,
    /// INTS
    Ints,
    /// STRINGS
    Strings,
    /// TENSORS
    Tensors,
    /// GRAPHS
    Graphs,
    /// SPARSE_TENSORS
    SparseTensors,
    /// TYPE_PROTOS
    TypeProtos,
    /// UNDEFINED
    Undefined,
}

impl AttrKind {
    /// The `AttributeType` code.
    pub fn code(self) -> i32 {
        use AttrKind::*;
        match self {
            Undefined => 0,
            Float => 1,
            Int => 2,
            String => 3,
            Tensor => 4,
            Graph => 5,
            Floats => 6,
            Ints => 7,
            Strings => 8,
            Tensors => 9,
            Graphs => 10,
            SparseTensor => 11,
            SparseTensors => 12,
            TypeProto => 13,
            TypeProtos => 14,
        }
    }

    /// From an `AttributeType` code.
    pub fn from_code(c: i32) -> Option<AttrKind> {
        use AttrKind::*;
        Some(match c {
            0 => Undefined,
            1 => Float,
            2 => Int,
            3 => String,
            4 => Tensor,
            5 => Graph,
            6 => Floats,
            7 => Ints,
            8 => Strings,
            9 => Tensors,
            10 => Graphs,
            11 => SparseTensor,
            12 => SparseTensors,
            13 => TypeProto,
            14 => TypeProtos,
            _ => return None,
        })
    }

    /// Lower-case name (`int`, `floats`, ...).
    pub fn name(self) -> &'static str {
        use AttrKind::*;
        match self {
            Undefined => "undefined",
            Float => "float",
            Int => "int",
            String => "string",
            Tensor => "tensor",
            Graph => "graph",
            Floats => "floats",
            Ints => "ints",
            Strings => "strings",
            Tensors => "tensors",
            Graphs => "graphs",
            SparseTensor => "sparse_tensor",
            SparseTensors => "sparse_tensors",
            TypeProto => "type_proto",
            TypeProtos => "type_protos",
        }
    }
}

impl AttrValue {
    /// The kind of this value.
    pub fn kind(&self) -> AttrKind {
        match self {
            AttrValue::Float(_) => AttrKind::Float,
            AttrValue::Int(_) => AttrKind::Int,
            AttrValue::String(_) => AttrKind::String,
            AttrValue::Tensor(_) => AttrKind::Tensor,
            AttrValue::Graph(_) => AttrKind::Graph,
            AttrValue::SparseTensor(_) => AttrKind::SparseTensor,
            AttrValue::TypeProto(_) => AttrKind::TypeProto,
            AttrValue::Floats(_) => AttrKind::Floats,
            AttrValue::Ints(_) => AttrKind::Ints,
            AttrValue::Strings(_) => AttrKind::Strings,
            AttrValue::Tensors(_) => AttrKind::Tensors,
            AttrValue::Graphs(_) => AttrKind::Graphs,
            AttrValue::SparseTensors(_) => AttrKind::SparseTensors,
            AttrValue::TypeProtos(_) => AttrKind::TypeProtos,
            AttrValue::Undefined => AttrKind::Undefined,
        }
    }

    /// Short human-readable rendering for reports.
    pub fn short(&self) -> String {
        match self {
            AttrValue::Float(f) => format!("{f}"),
            AttrValue::Int(i) => format!("{i}"),
            AttrValue::String(s) => format!("{:?}", String::from_utf8_lossy(s)),
            AttrValue::Ints(v) => format!("{v:?}"),
            AttrValue::Floats(v) => format!("{v:?}"),
            AttrValue::Strings(v) => {
                format!(
                    "{:?}",
                    v.iter()
                        .map(|s| String::from_utf8_lossy(s))
                        .collect::<Vec<_>>()
                )
            }
            AttrValue::Tensor(t) => format!("tensor{:?}", t.dims),
            AttrValue::Graph(g) => format!("graph({} nodes)", g.node_count()),
            AttrValue::Graphs(g) => format!("{} graphs", g.len()),
            AttrValue::Tensors(t) => format!("{} tensors", t.len()),
            other => other.kind().name().to_string(),
        }
    }
}

impl Attribute {
    /// A new attribute with the canonical type code.
    pub fn new(name: impl Into<String>, value: AttrValue) -> Attribute {
        let type_code = Some(value.kind().code());
        Attribute {
            name: name.into(),
            value,
            type_code,
            ref_attr_name: None,
            doc_string: None,
        }
    }
}

/// Typed attribute look-ups on a list of attributes.
pub trait AttrLookup {
    /// The attribute named `name`.
    fn attr(&self, name: &str) -> Option<&AttrValue>;

    /// INT attribute or default.
    fn int(&self, name: &str, default: i64) -> i64 {
        match self.attr(name) {
            Some(AttrValue::Int(v)) => *v,
            _ => default,
        }
    }
    /// INT attribute if present.
    fn int_opt(&self, name: &str) -> Option<i64> {
        match self.attr(name) {
            Some(AttrValue::Int(v)) => Some(*v),
            _ => None,
        }
    }
    /// FLOAT attribute or default.
    fn float(&self, name: &str, default: f32) -> f32 {
        match self.attr(name) {
            Some(AttrValue::Float(v)) => *v,
            _ => default,
        }
    }
    /// INTS attribute if present.
    fn ints(&self, name: &str) -> Option<&[i64]> {
        match self.attr(name) {
            Some(AttrValue::Ints(v)) => Some(v),
            _ => None,
        }
    }
    /// FLOATS attribute if present.
    fn floats(&self, name: &str) -> Option<&[f32]> {
        match self.attr(name) {
            Some(AttrValue::Floats(v)) => Some(v),
            _ => None,
        }
    }
    /// STRING attribute (lossy UTF-8) or default.
    fn string(&self, name: &str, default: &str) -> String {
        match self.attr(name) {
            Some(AttrValue::String(v)) => String::from_utf8_lossy(v).into_owned(),
            _ => default.to_string(),
        }
    }
    /// TENSOR attribute if present.
    fn tensor(&self, name: &str) -> Option<&Tensor> {
        match self.attr(name) {
            Some(AttrValue::Tensor(t)) => Some(t),
            _ => None,
        }
    }
    /// GRAPH attribute if present.
    fn graph(&self, name: &str) -> Option<&Graph> {
        match self.attr(name) {
            Some(AttrValue::Graph(g)) => Some(g),
            _ => None,
        }
    }
}

impl AttrLookup for [Attribute] {
    fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.iter().find(|a| a.name == name).map(|a| &a.value)
    }
}

impl AttrLookup for Vec<Attribute> {
    fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.as_slice().attr(name)
    }
}
