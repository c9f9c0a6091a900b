use super::reshape::reshape_dims;
use super::slice::slice_range;
use crate::attr::AttrValue;
use crate::dtype::DType::F32;
use crate::graph::Node;
use crate::ops::common::*;
use crate::registry::{InferCtx, Registry};
use crate::tensor::{Tensor, TensorExt};
use crate::types::{Dim, TensorType, ValueType};

fn run(
    node: &Node,
    opset: i64,
    inputs: Vec<Option<ValueType>>,
    consts: Vec<Option<Tensor>>,
) -> (Result<Vec<ValueType>, InferError>, Option<Vec<Tensor>>) {
    let ctx = InferCtx::new(node, opset, inputs, consts);
    let spec = Registry::global().for_node(node).expect("spec");
    ((spec.infer)(&ctx), spec.fold.and_then(|f| f(&ctx)))
}

fn f32t(dims: &[i64]) -> Option<ValueType> {
    Some(fixed(F32, dims))
}

fn i64c(v: &[i64]) -> (Option<ValueType>, Option<Tensor>) {
    let t = i64_vec(v.to_vec());
    (Some(ValueType::Tensor(t.tensor_type())), Some(t))
}

fn shape_of(r: &Result<Vec<ValueType>, InferError>) -> String {
    r.as_ref()
        .map(|v| v[0].to_string())
        .unwrap_or_else(|e| format!("error: {e}"))
}

#[test]
fn slice_clamps_starts_and_ends() {
    assert_eq!(slice_range(10, 1000, 1000, 1), (10, 0));
    assert_eq!(slice_range(10, -1000, 1000, 2), (0, 5));
    assert_eq!(slice_range(5, -1, -1000, -1), (4, 5));
    assert_eq!(slice_range(20, 20, 0, -1), (19, 19));
    assert_eq!(slice_range(5, 3, 4, -1), (3, 0));
    let node = Node::new("Slice", &["x", "s", "e", "a", "p"], &["y"]);
    let (s, sc) = i64c(&[0, -1000, -1]);
    let (e, ec) = i64c(&[i64::MAX, 1000, -1000]);
    let (a, ac) = i64c(&[0, 1, 2]);
    let (p, pc) = i64c(&[1, 2, -1]);
    let (r, _) = run(
        &node,
        13,
        vec![f32t(&[20, 10, 5]), s, e, a, p],
        vec![None, sc, ec, ac, pc],
    );
    assert_eq!(shape_of(&r), "f32[20,5,5]");
    // Old form: attributes.
    let node = Node::new("Slice", &["x"], &["y"])
        .with_attr("starts", AttrValue::Ints(vec![1]))
        .with_attr("ends", AttrValue::Ints(vec![-1]))
        .with_attr("axes", AttrValue::Ints(vec![-1]));
    let (r, _) = run(&node, 9, vec![f32t(&[2, 7])], vec![None]);
    assert_eq!(shape_of(&r), "f32[2,5]");
}

#[test]
fn reshape_zero_and_minus_one() {
    let d = |v: &[i64]| v.iter().map(|&x| Dim::Known(x)).collect::<Vec<_>>();
    assert_eq!(
        reshape_dims(Some(&d(&[2, 3, 4])), &[0, -1], false).unwrap(),
        d(&[2, 12])
    );
    assert_eq!(
        reshape_dims(Some(&d(&[2, 3, 4])), &[4, 0, -1], false).unwrap(),
        d(&[4, 3, 2])
    );
    assert!(reshape_dims(Some(&d(&[2, 3, 4])), &[5, -1], false).is_err());
    assert!(reshape_dims(Some(&d(&[2, 3, 4])), &[-1, -1], false).is_err());
    assert!(reshape_dims(Some(&d(&[2, 3, 4])), &[0, 4], true).is_err());
    assert_eq!(
        reshape_dims(Some(&d(&[0, 3])), &[3, 0], true).unwrap(),
        d(&[3, 0])
    );
    let sym = vec![Dim::Param("N".into()), Dim::Known(3), Dim::Known(4)];
    assert_eq!(
        reshape_dims(Some(&sym), &[0, -1], false).unwrap(),
        vec![Dim::Param("N".into()), Dim::Known(12)]
    );
    assert_eq!(
        reshape_dims(Some(&sym), &[12, -1], false).unwrap(),
        vec![Dim::Known(12), Dim::Param("N".into())]
    );
    assert_eq!(
        reshape_dims(Some(&sym), &[4, -1], false).unwrap(),
        vec![Dim::Known(4), Dim::Unknown]
    );
}

#[test]
fn resize_output_size_rounding() {
    let node = Node::new("Resize", &["x", "", "s"], &["y"]);
    let sc = f64_tensor(F32, &[4], &[1.0, 1.0, 0.6, 0.6]);
    let inputs = vec![
        f32t(&[1, 1, 4, 4]),
        None,
        Some(ValueType::Tensor(sc.tensor_type())),
    ];
    let (r, _) = run(&node, 13, inputs, vec![None, None, Some(sc)]);
    assert_eq!(shape_of(&r), "f32[1,1,2,2]");
    let node = Node::new("Resize", &["x", "", "", "z"], &["y"])
        .with_attr(
            "keep_aspect_ratio_policy",
            AttrValue::String(b"not_larger".to_vec()),
        )
        .with_attr("axes", AttrValue::Ints(vec![2, 3]));
    let (z, zc) = i64c(&[7, 8]);
    let (r, _) = run(
        &node,
        18,
        vec![f32t(&[1, 1, 4, 4]), None, None, z],
        vec![None, None, None, zc],
    );
    assert_eq!(shape_of(&r), "f32[1,1,7,7]");
}

#[test]
fn folding_chain_gives_static_reshape() {
    // Shape of a non-constant input folds from its static dims.
    let x = ValueType::Tensor(TensorType {
        dtype: F32,
        shape: Some(vec![Dim::Known(2), Dim::Known(3), Dim::Known(4)]),
    });
    let shape = Node::new("Shape", &["x"], &["s"]);
    let (_, f) = run(&shape, 15, vec![Some(x.clone())], vec![None]);
    let s = f.expect("Shape folds").remove(0);
    assert_eq!(s.to_i64s().unwrap(), vec![2, 3, 4]);
    let gather = Node::new("Gather", &["s", "i"], &["g"]);
    let idx = i64_tensor(&[], vec![-3]);
    let (r, f) = run(
        &gather,
        13,
        vec![
            Some(ValueType::Tensor(s.tensor_type())),
            Some(ValueType::Tensor(idx.tensor_type())),
        ],
        vec![Some(s.clone()), Some(idx)],
    );
    assert_eq!(shape_of(&r), "i64[]");
    let g = f.expect("Gather folds").remove(0);
    assert_eq!((g.dims.clone(), g.to_i64s().unwrap()), (vec![], vec![2]));
    let unsq = Node::new("Unsqueeze", &["g", "a"], &["u"]);
    let (a, ac) = i64c(&[0]);
    let (_, f) = run(
        &unsq,
        13,
        vec![Some(ValueType::Tensor(g.tensor_type())), a],
        vec![Some(g), ac],
    );
    let u = f.expect("Unsqueeze folds").remove(0);
    let concat = Node::new("Concat", &["u", "m"], &["c"]).with_attr("axis", AttrValue::Int(0));
    let (m, mc) = i64c(&[-1]);
    let (_, f) = run(
        &concat,
        13,
        vec![Some(ValueType::Tensor(u.tensor_type())), m],
        vec![Some(u), mc],
    );
    let c = f.expect("Concat folds").remove(0);
    assert_eq!(c.to_i64s().unwrap(), vec![2, -1]);
    let reshape = Node::new("Reshape", &["x", "c"], &["y"]);
    let (r, _) = run(
        &reshape,
        14,
        vec![Some(x), Some(ValueType::Tensor(c.tensor_type()))],
        vec![None, Some(c)],
    );
    assert_eq!(shape_of(&r), "f32[2,12]");
}

#[test]
fn split_num_outputs_and_fold_slice_negative_step() {
    let node =
        Node::new("Split", &["x"], &["a", "b", "c"]).with_attr("num_outputs", AttrValue::Int(3));
    let (r, _) = run(&node, 18, vec![f32t(&[7, 2])], vec![None]);
    let got: Vec<String> = r.unwrap().iter().map(|t| t.to_string()).collect();
    assert_eq!(got, vec!["f32[3,2]", "f32[3,2]", "f32[1,2]"]);
    let data = i64_vec(vec![10, 11, 12, 13, 14]);
    let node = Node::new("Slice", &["d", "s", "e", "", "p"], &["y"]);
    let (s, sc) = i64c(&[-1]);
    let (e, ec) = i64c(&[0]);
    let (p, pc) = i64c(&[-2]);
    let (_, f) = run(
        &node,
        13,
        vec![Some(ValueType::Tensor(data.tensor_type())), s, e, None, p],
        vec![Some(data), sc, ec, None, pc],
    );
    assert_eq!(f.expect("Slice folds")[0].to_i64s().unwrap(), vec![14, 12]);
}
