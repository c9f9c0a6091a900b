//! TopK in a burn reproduction, as the interpreter runs it: burn's `topk_with_indices` along
//! the axis held at rank `R` (on the negated values for `largest = 0`), the values or the
//! indices as the finding's output.
use super::{MAX_ELEMENTS, Plan, R, bax, first_input_lines, input};
use crate::value::NamedValues;
use mutagraph_ir::DType;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;
use mutagraph_ir::model::Model;
use mutagraph_ir::ops::common::norm_axis;

/// The plan of a sorted TopK on floats whose `k` is known (an attribute before opset 10, a
/// graph input or weight after); `indices` when the finding is on its second output.
pub(super) fn plan(
    model: &Model,
    inputs: &NamedValues,
    node: &Node,
    indices: bool,
) -> Option<Plan> {
    let a = &node.attributes;
    let x = input(model, inputs, node, 0)?;
    let elem = match x.dtype {
        DType::F32 => "f32",
        DType::F64 => "f64",
        _ => return None,
    };
    let r = x.shape.len();
    if r == 0 || r > R || x.num_elements() > MAX_ELEMENTS || a.int("sorted", 1) == 0 {
        return None;
    }
    let k = if model.opset("").unwrap_or(0) < 10 {
        a.int("k", 0)
    } else {
        *input(model, inputs, node, 1)?.to_i64s()?.first()?
    };
    let axis = norm_axis(a.int("axis", -1), r).ok()?;
    if k < 1 || k as usize > x.shape[axis] {
        return None;
    }
    let d = bax(r, axis);
    let (from, back) = if a.int("largest", 1) != 0 {
        ("x", "v")
    } else {
        ("x.neg()", "v.neg()")
    };
    let y = if indices { "i" } else { back };
    Some(Plan {
        float: elem,
        elem,
        kind: "",
        inputs: first_input_lines(&node.inputs[0], &x, elem)?,
        stmts: format!(
            "    // ties keep the lower index first (ONNX TopK)\n    \
             let (v, i) = {from}.topk_with_indices({k}, {d});\n    \
             let _ = (&v, &i);\n    \
             let y = {y};\n"
        ),
        held_rank: R,
    })
}
