//! Tensors: initializers and the tensors held by attributes have a defined element type, sizes
//! that are not negative and data that matches them.

use super::Diagnostics;
use crate::attr::AttrValue;
use crate::dtype::DType;
use crate::graph::{Graph, Node};
use crate::pb;
use crate::tensor::Tensor;

/// Initializers: a defined element type, sizes that are not negative, data that matches them.
pub(super) fn check_initializers(g: &Graph, path: &str, d: &mut Diagnostics) {
    use crate::tensor::TensorExt;
    for (name, t) in &g.initializers {
        if !check_tensor(t, &|| format!("{path}: initializer '{name}'"), d) {
            continue;
        }
        if t.is_external() || !(t.dtype().is_numeric() || t.dtype() == crate::DType::Bool) {
            continue;
        }
        if t.dtype().bits().is_some_and(|b| b >= 8)
            && let Err(e) = crate::tensor::check_data(t)
        {
            d.errors.push(format!("{path}: {e}"));
        }
    }
}

/// A tensor's element type must be one ONNX defines (not 0, UNDEFINED) and its dims must not
/// be negative (`onnx.checker`'s `check_tensor`). Returns whether the tensor passed.
fn check_tensor(t: &Tensor, who: &dyn Fn() -> String, d: &mut Diagnostics) -> bool {
    let mut ok = true;
    let problem = match t.data_type {
        None => Some("has no data_type".to_string()),
        Some(0) => Some("has data_type 0 (UNDEFINED)".to_string()),
        Some(c) if !DType::from_code(c).is_known() => Some(format!(
            "has data_type {c}, which is not an ONNX element type"
        )),
        Some(_) => None,
    };
    if let Some(p) = problem {
        d.errors.push(format!("{} {p}", who()));
        ok = false;
    }
    if let Some(&x) = t.dims.iter().find(|&&x| x < 0) {
        d.errors.push(format!(
            "{} has a negative size {x} in its dims {:?}",
            who(),
            t.dims
        ));
        ok = false;
    }
    ok
}

pub(super) fn check_sparse(
    s: &pb::SparseTensorProto,
    who: &dyn Fn() -> String,
    d: &mut Diagnostics,
) {
    if let Some(v) = &s.values {
        check_tensor(v, &|| format!("{} values", who()), d);
    }
    if let Some(i) = &s.indices {
        check_tensor(i, &|| format!("{} indices", who()), d);
    }
    if let Some(&x) = s.dims.iter().find(|&&x| x < 0) {
        d.errors.push(format!(
            "{} has a negative size {x} in its dims {:?}",
            who(),
            s.dims
        ));
    }
}

/// Tensors held by a node's attributes (`Constant` values, `ConstantOfShape` fills, ...).
pub(super) fn check_attribute_tensors(n: &Node, path: &str, d: &mut Diagnostics) {
    for a in &n.attributes {
        let who = || format!("{path}: node {} attribute '{}'", n.label(), a.name);
        match &a.value {
            AttrValue::Tensor(t) => {
                check_tensor(t, &who, d);
            }
            AttrValue::Tensors(ts) => {
                for (i, t) in ts.iter().enumerate() {
                    check_tensor(t, &|| format!("{} tensor #{i}", who()), d);
                }
            }
            AttrValue::SparseTensor(s) => check_sparse(s, &who, d),
            AttrValue::SparseTensors(ss) => {
                for (i, s) in ss.iter().enumerate() {
                    check_sparse(s, &|| format!("{} sparse tensor #{i}", who()), d);
                }
            }
            _ => {}
        }
    }
}
