use crate::attr::AttrValue;
use crate::dtype::DType::{F32, I64};
use crate::graph::Node;
use crate::ops::common::*;
use crate::registry::{InferCtx, Registry};
use crate::tensor::{Tensor, TensorExt};
use crate::types::Dim;
use crate::types::{TensorType, ValueType};
use std::collections::HashMap;

fn run(
    node: &Node,
    opset: i64,
    inputs: Vec<Option<ValueType>>,
    consts: Vec<Option<Tensor>>,
) -> Infer {
    let spec = Registry::global().for_node(node).unwrap();
    let ctx = InferCtx::new(node, opset, inputs, consts);
    (spec.infer)(&ctx)
}

fn t(dims: &[i64]) -> Option<ValueType> {
    Some(ValueType::Tensor(TensorType::fixed(F32, dims)))
}

#[test]
fn reduce_axes_input_and_noop() {
    let n = Node::new("ReduceSum", &["x", "a"], &["y"]);
    let out = run(
        &n,
        13,
        vec![t(&[2, 3, 4]), t(&[1])],
        vec![None, Some(i64_vec(vec![-1]))],
    )
    .unwrap();
    assert_eq!(out[0], fixed(F32, &[2, 3, 1]));
    // Empty axes: reduce everything, or nothing with noop_with_empty_axes.
    let out = run(
        &n,
        13,
        vec![t(&[2, 3, 4]), t(&[0])],
        vec![None, Some(i64_vec(vec![]))],
    )
    .unwrap();
    assert_eq!(out[0], fixed(F32, &[1, 1, 1]));
    let n2 = n
        .clone()
        .with_attr("noop_with_empty_axes", AttrValue::Int(1))
        .with_attr("keepdims", AttrValue::Int(0));
    let out = run(
        &n2,
        13,
        vec![t(&[2, 3, 4]), t(&[0])],
        vec![None, Some(i64_vec(vec![]))],
    )
    .unwrap();
    assert_eq!(out[0], fixed(F32, &[2, 3, 4]));
    // Unknown axes with keepdims=0 and a 2-element axes input: rank 1, size unknown.
    let n3 = n.clone().with_attr("keepdims", AttrValue::Int(0));
    let out = run(&n3, 13, vec![t(&[2, 3, 4]), t(&[2])], vec![None, None]).unwrap();
    assert_eq!(out[0], tensor(F32, Some(vec![Dim::Unknown])));
    // Old opset: axes attribute.
    let n4 = Node::new("ReduceMean", &["x"], &["y"])
        .with_attr("axes", AttrValue::Ints(vec![0, 2]))
        .with_attr("keepdims", AttrValue::Int(0));
    let out = run(&n4, 11, vec![t(&[2, 3, 4])], vec![None]).unwrap();
    assert_eq!(out[0], fixed(F32, &[3]));
    assert!(run(&n4, 11, vec![t(&[2, 3])], vec![None]).is_err());
}

#[test]
fn reduce_prod_folds_shapes() {
    let n = Node::new("ReduceProd", &["x"], &["y"]).with_attr("keepdims", AttrValue::Int(0));
    let spec = Registry::global().for_node(&n).unwrap();
    let ctx = InferCtx {
        node: &n,
        opset: 13,
        inputs: crate::registry::owned_types(vec![Some(ValueType::Tensor(TensorType::fixed(
            I64,
            &[3],
        )))]),
        consts: crate::registry::owned(vec![Some(i64_vec(vec![2, 3, 4]))]),
        subgraph_outputs: HashMap::new(),
    };
    let v = (spec.fold.unwrap())(&ctx).unwrap();
    assert_eq!(v[0].to_i64s().unwrap(), vec![24]);
    assert!(v[0].dims.is_empty());
    let n = Node::new("ReduceSum", &["x", "a"], &["y"]);
    let spec = Registry::global().for_node(&n).unwrap();
    let ctx = InferCtx {
        node: &n,
        opset: 13,
        inputs: crate::registry::owned_types(vec![
            Some(ValueType::Tensor(TensorType::fixed(I64, &[2, 3]))),
            Some(ValueType::Tensor(TensorType::fixed(I64, &[1]))),
        ]),
        consts: crate::registry::owned(vec![
            Some(i64_tensor(&[2, 3], vec![1, 2, 3, 4, 5, 6])),
            Some(i64_vec(vec![0])),
        ]),
        subgraph_outputs: HashMap::new(),
    };
    let v = (spec.fold.unwrap())(&ctx).unwrap();
    assert_eq!(v[0].to_i64s().unwrap(), vec![5, 7, 9]);
    assert_eq!(v[0].dims, vec![1, 3]);
}

#[test]
fn topk_k_from_input_or_attribute() {
    let n = Node::new("TopK", &["x", "k"], &["v", "i"]).with_attr("axis", AttrValue::Int(1));
    let out = run(
        &n,
        11,
        vec![t(&[3, 4]), t(&[1])],
        vec![None, Some(i64_vec(vec![2]))],
    )
    .unwrap();
    assert_eq!(out[0], fixed(F32, &[3, 2]));
    assert_eq!(out[1], fixed(I64, &[3, 2]));
    let out = run(&n, 11, vec![t(&[3, 4]), t(&[1])], vec![None, None]).unwrap();
    assert_eq!(out[0], tensor(F32, Some(vec![Dim::Known(3), Dim::Unknown])));
    assert!(
        run(
            &n,
            11,
            vec![t(&[3, 4]), t(&[1])],
            vec![None, Some(i64_vec(vec![5]))]
        )
        .is_err()
    );
    // A scalar input is refused (axis 0 of a scalar used to index past its empty shape).
    let n0 = Node::new("TopK", &["x", "k"], &["v", "i"]).with_attr("axis", AttrValue::Int(0));
    assert!(
        run(
            &n0,
            11,
            vec![t(&[]), t(&[1])],
            vec![None, Some(i64_vec(vec![1]))]
        )
        .is_err()
    );
    let old = Node::new("TopK", &["x"], &["v", "i"]).with_attr("k", AttrValue::Int(3));
    let out = run(&old, 1, vec![t(&[5, 6])], vec![None]).unwrap();
    assert_eq!(out[1], fixed(I64, &[5, 3]));
}

#[test]
fn softmax_default_axis_depends_on_opset() {
    let n = Node::new("Softmax", &["x"], &["y"]);
    assert!(run(&n, 11, vec![t(&[4])], vec![None]).is_err());
    assert!(run(&n, 1, vec![t(&[4])], vec![None]).is_ok());
    assert_eq!(
        run(&n, 13, vec![t(&[4])], vec![None]).unwrap()[0],
        fixed(F32, &[4])
    );
}

#[test]
fn dft_onesided_and_axis_input() {
    let n = Node::new("DFT", &["x", "", "axis"], &["y"]).with_attr("onesided", AttrValue::Int(1));
    let out = run(
        &n,
        20,
        vec![t(&[2, 10, 1]), None, t(&[])],
        vec![None, None, Some(i64_tensor(&[], vec![1]))],
    )
    .unwrap();
    assert_eq!(out[0], fixed(F32, &[2, 6, 2]));
    let n = Node::new("DFT", &["x"], &["y"]);
    let out = run(&n, 17, vec![t(&[2, 10, 1])], vec![None]).unwrap();
    assert_eq!(out[0], fixed(F32, &[2, 10, 2]));
    let n = n
        .with_attr("onesided", AttrValue::Int(1))
        .with_attr("inverse", AttrValue::Int(1));
    let out = run(&n, 17, vec![t(&[2, 10, 2])], vec![None]).unwrap();
    assert_eq!(out[0], fixed(F32, &[2, 18, 1]));
    assert!(run(&n, 17, vec![t(&[2, 10, 1])], vec![None]).is_err());
}
