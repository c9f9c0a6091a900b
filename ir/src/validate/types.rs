//! Types: the dtype constraints of every node on the types inference found, and the element
//! types and sizes of the declared types of graph inputs, outputs and value_info.

use super::Diagnostics;
use crate::dtype::DType;
use crate::graph::Graph;
use crate::infer::{Inferred, MAX_SUBGRAPH_DEPTH};
use crate::pb;
use crate::registry::Registry;
use crate::types::ValueType;

/// Dtype constraints of every node, using the inferred types of its inputs (`inferred`: what
/// inference found for `g`; `None` where it did not run, and the types stored in `g` are read).
pub(super) fn check_types(
    g: &Graph,
    inferred: Option<&Inferred<'_>>,
    path: &str,
    opset: i64,
    depth: usize,
    d: &mut Diagnostics,
) {
    if depth > MAX_SUBGRAPH_DEPTH {
        return; // check_graph reports it
    }
    let reg = Registry::global();
    let view = g.type_view();
    // The element type of a value: inferred, else of the initializer, else declared.
    let dtype = |name: &str| -> Option<DType> {
        let inferred = match inferred {
            Some(r) => r.types.get(name),
            None => g.types.get(name),
        };
        let t = match inferred {
            Some(ValueType::Tensor(t)) => return Some(t.dtype),
            Some(t) if *t != ValueType::Unknown => return None,
            _ => match g.initializers.get(name) {
                Some(t) => return Some(crate::tensor::TensorExt::dtype(t)),
                None => view.declared_type(name),
            },
        };
        match t {
            Some(ValueType::Tensor(t)) => Some(t.dtype),
            _ => None,
        }
    };
    for n in g.nodes() {
        if let Some(spec) = reg.for_node(n) {
            let mut bound: Vec<(&str, DType)> = Vec::new();
            for (slot, name) in n.inputs.iter().enumerate() {
                if name.is_empty() {
                    continue;
                }
                let tc = spec.input_tc(slot);
                let Some(dt) = dtype(name).filter(|dt| dt.is_known()) else {
                    continue;
                };
                let Some(allows) = spec.input_allows_at(slot, opset, dt) else {
                    continue;
                };
                if !allows {
                    let allowed = spec.input_allowed_at(slot, opset).unwrap_or_default();
                    d.errors.push(format!(
                        "{path}: node {} input {slot} ('{name}') is {dt}, but {} allows {}",
                        n.label(),
                        spec.op_type,
                        allowed
                            .iter()
                            .map(|x| x.name())
                            .collect::<Vec<_>>()
                            .join("|")
                    ));
                } else if let Some(b) = bound.iter_mut().find(|(t, _)| *t == tc) {
                    let prev = std::mem::replace(&mut b.1, dt);
                    if prev != dt {
                        d.errors.push(format!(
                            "{path}: node {} mixes {prev} and {dt} for type {tc}",
                            n.label(),
                        ));
                    }
                } else {
                    bound.push((tc, dt));
                }
            }
        }
        for (pos, idx, name, sub) in n.subgraphs_at() {
            check_types(
                sub,
                inferred.and_then(|r| r.sub(n.id, pos, idx)),
                &format!("{path} > {} attribute '{name}'", n.label()),
                opset,
                depth + 1,
                d,
            );
        }
    }
}

/// Declared types of graph inputs, outputs and value_info: element types ONNX defines
/// (`TypeProto.Tensor.elem_type` "MUST NOT have the value of UNDEFINED" and "MUST have a valid
/// TensorProto.DataType value", onnx.proto) and sizes that are not negative. A `dim_value` of
/// -1 is what exporters write for a dynamic dim, and is read so ([`crate::import::DimNote`]);
/// any other negative size is an error.
pub(super) fn check_declared(g: &Graph, path: &str, d: &mut Diagnostics) {
    let lists = [
        ("input", &g.inputs),
        ("output", &g.outputs),
        ("value_info", &g.value_info),
    ];
    for (role, list) in lists {
        for v in list {
            if let Some(tp) = &v.r#type {
                let name = v.name.as_deref().unwrap_or("");
                check_type(tp, &|| format!("{path}: {role} '{name}'"), 0, d);
            }
        }
    }
}

fn check_type(tp: &pb::TypeProto, who: &dyn Fn() -> String, depth: usize, d: &mut Diagnostics) {
    use pb::tensor_shape_proto::dimension::Value as DimValue;
    use pb::type_proto::Value;
    if depth > MAX_SUBGRAPH_DEPTH {
        d.errors.push(format!(
            "{}: the type nests deeper than {MAX_SUBGRAPH_DEPTH} levels",
            who()
        ));
        return;
    }
    let elem = |code: Option<i32>, field: &str, d: &mut Diagnostics| match code {
        Some(0) => d
            .errors
            .push(format!("{}: {field} is 0 (UNDEFINED)", who())),
        Some(c) if !DType::from_code(c).is_known() => d.errors.push(format!(
            "{}: {field} is {c}, which is not an ONNX element type",
            who()
        )),
        _ => {}
    };
    let shape = |s: Option<&pb::TensorShapeProto>, d: &mut Diagnostics| {
        for (i, dim) in s.into_iter().flat_map(|s| s.dim.iter()).enumerate() {
            if let Some(DimValue::DimValue(v)) = dim.value
                && v < -1
            {
                d.errors.push(format!(
                    "{}: dim {i} is {v}; a size is never negative (-1 is read as a dynamic \
                     dim)",
                    who()
                ));
            }
        }
    };
    match &tp.value {
        Some(Value::TensorType(t)) => {
            elem(t.elem_type, "elem_type", d);
            shape(t.shape.as_ref(), d);
        }
        Some(Value::SparseTensorType(t)) => {
            elem(t.elem_type, "elem_type", d);
            shape(t.shape.as_ref(), d);
        }
        Some(Value::SequenceType(s)) => {
            if let Some(e) = &s.elem_type {
                check_type(e, &|| format!("{} (sequence element)", who()), depth + 1, d);
            }
        }
        Some(Value::OptionalType(o)) => {
            if let Some(e) = &o.elem_type {
                check_type(e, &|| format!("{} (optional element)", who()), depth + 1, d);
            }
        }
        Some(Value::MapType(m)) => {
            elem(m.key_type, "key_type", d);
            if let Some(v) = &m.value_type {
                check_type(v, &|| format!("{} (map value)", who()), depth + 1, d);
            }
        }
        _ => {}
    }
}
