use super::loop_op::loop_infer;
use super::merge::{loop_carried, merge_types};
use super::scan::scan_infer;
use super::sequence::split_to_seq_infer;
use crate::attr::AttrValue;
use crate::dtype::DType::{self, Bool, F32, I64};
use crate::graph::Node;
use crate::ops::common::*;
use crate::registry::InferCtx;
use crate::types::{Dim, ValueType};
use std::collections::HashMap;

fn t(dt: DType, dims: &[i64]) -> Option<ValueType> {
    Some(fixed(dt, dims))
}

#[test]
fn merging_branch_types() {
    let a = fixed(F32, &[2, 3]);
    let b = fixed(F32, &[2, 4]);
    assert_eq!(
        merge_types(&a, &b).unwrap(),
        tensor(F32, Some(vec![Dim::Known(2), Dim::Unknown]))
    );
    assert_eq!(
        merge_types(&a, &fixed(F32, &[2])).unwrap(),
        tensor(F32, None)
    );
    assert!(merge_types(&a, &fixed(I64, &[2, 3])).is_err());
    let s = ValueType::Sequence(Box::new(a.clone()));
    assert!(merge_types(&s, &a).is_err());
    assert_eq!(
        loop_carried(&a, &ValueType::Unknown).unwrap(),
        tensor(F32, None)
    );
    let opt = ValueType::Optional(Box::new(s.clone()));
    assert_eq!(loop_carried(&opt, &s).unwrap(), s);
}

#[test]
fn loop_outputs_carried_then_scanned() {
    let n = Node::new("Loop", &["", "", "y"], &["y_final", "scan"]);
    let mut subs = HashMap::new();
    subs.insert(
        "body".to_string(),
        vec![vec![
            fixed(Bool, &[]),
            fixed(F32, &[1]),
            fixed(F32, &[1, 4]),
        ]],
    );
    let mut consts = vec![Some(i64_tensor(&[], vec![5])), None, None];
    let ctx = InferCtx {
        node: &n,
        opset: 13,
        inputs: crate::registry::owned_types(vec![t(I64, &[]), None, t(F32, &[1])]),
        consts: crate::registry::owned(consts.clone()),
        subgraph_outputs: subs.clone(),
    };
    let out = loop_infer(&ctx).unwrap();
    assert_eq!(out[0], fixed(F32, &[1]));
    assert_eq!(out[1], fixed(F32, &[5, 1, 4]));
    // With a condition input the trip count is unknown.
    consts[1] = None;
    let ctx = InferCtx {
        node: &n,
        opset: 13,
        inputs: crate::registry::owned_types(vec![t(I64, &[]), t(Bool, &[]), t(F32, &[1])]),
        consts: crate::registry::owned(consts),
        subgraph_outputs: subs,
    };
    assert_eq!(
        loop_infer(&ctx).unwrap()[1],
        tensor(F32, Some(vec![Dim::Unknown, Dim::Known(1), Dim::Known(4)]))
    );
}

#[test]
fn scan_inserts_sequence_dim() {
    let n = Node::new("Scan", &["init", "x"], &["s", "z"])
        .with_attr("num_scan_inputs", AttrValue::Int(1))
        .with_attr("scan_input_axes", AttrValue::Ints(vec![1]))
        .with_attr("scan_output_axes", AttrValue::Ints(vec![-1]));
    let mut subs = HashMap::new();
    subs.insert(
        "body".to_string(),
        vec![vec![fixed(F32, &[2]), fixed(F32, &[2])]],
    );
    let ctx = InferCtx {
        node: &n,
        opset: 11,
        inputs: crate::registry::owned_types(vec![t(F32, &[2]), t(F32, &[2, 7])]),
        consts: vec![None, None],
        subgraph_outputs: subs,
    };
    let out = scan_infer(&ctx).unwrap();
    assert_eq!(out[0], fixed(F32, &[2]));
    assert_eq!(out[1], fixed(F32, &[2, 7]));
}

#[test]
fn split_to_sequence_split_forms() {
    let n = Node::new("SplitToSequence", &["x", "s"], &["y"]);
    let run = |split: crate::tensor::Tensor| {
        let st = ValueType::Tensor(crate::tensor::TensorExt::tensor_type(&split));
        let ctx = InferCtx {
            node: &n,
            opset: 13,
            inputs: crate::registry::owned_types(vec![t(F32, &[6, 4]), Some(st)]),
            consts: crate::registry::owned(vec![None, Some(split)]),
            subgraph_outputs: HashMap::new(),
        };
        split_to_seq_infer(&ctx)
    };
    let seq = |dims: Vec<Dim>| vec![ValueType::Sequence(Box::new(tensor(F32, Some(dims))))];
    assert_eq!(
        run(i64_tensor(&[], vec![3])).unwrap(),
        seq(vec![Dim::Known(3), Dim::Known(4)])
    );
    assert_eq!(
        run(i64_tensor(&[], vec![4])).unwrap(),
        seq(vec![Dim::Unknown, Dim::Known(4)])
    );
    assert_eq!(
        run(i64_vec(vec![2, 4])).unwrap(),
        seq(vec![Dim::Unknown, Dim::Known(4)])
    );
    assert!(run(i64_vec(vec![2, 3])).is_err());
}
