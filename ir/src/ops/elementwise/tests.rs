use crate::attr::AttrValue;
use crate::dtype::DType::*;
use crate::graph::Node;
use crate::ops::common::*;
use crate::registry::{InferCtx, OpSpec, Registry};
use crate::tensor::from_i64s;
use crate::tensor::{Tensor, TensorExt};
use crate::types::Dim;
use crate::types::{TensorType, ValueType};

fn ctx<'a>(
    node: &'a Node,
    opset: i64,
    ins: Vec<ValueType>,
    consts: Vec<Option<Tensor>>,
) -> InferCtx<'a> {
    InferCtx::new(node, opset, ins.into_iter().map(Some).collect(), consts)
}

fn spec(op: &str) -> &'static OpSpec {
    Registry::global().get("", op).unwrap()
}

#[test]
fn legacy_broadcast_keeps_shape_of_a() {
    let n = Node::new("Add", &["a", "b"], &["c"])
        .with_attr("broadcast", AttrValue::Int(1))
        .with_attr("axis", AttrValue::Int(1));
    let c = ctx(
        &n,
        6,
        vec![fixed(F32, &[2, 3, 4, 5]), fixed(F32, &[3, 4])],
        vec![None, None],
    );
    assert_eq!(
        (spec("Add").infer)(&c).unwrap(),
        vec![fixed(F32, &[2, 3, 4, 5])]
    );
    // Numpy rules would give [2,3,4,5] too for [5]; with axis=1 a [5] B clashes with dim 3.
    let c = ctx(
        &n,
        6,
        vec![fixed(F32, &[2, 3, 4, 5]), fixed(F32, &[5])],
        vec![None, None],
    );
    assert!((spec("Add").infer)(&c).is_err());
    // From opset 7 numpy broadcasting, symbolic dims kept.
    let n = Node::new("Add", &["a", "b"], &["c"]);
    let a = ValueType::Tensor(TensorType {
        dtype: F32,
        shape: Some(vec![Dim::Param("N".into()), Dim::Known(1)]),
    });
    let c = ctx(&n, 14, vec![a, fixed(F32, &[3])], vec![None, None]);
    let want = ValueType::Tensor(TensorType {
        dtype: F32,
        shape: Some(vec![Dim::Param("N".into()), Dim::Known(3)]),
    });
    assert_eq!((spec("Add").infer)(&c).unwrap(), vec![want]);
}

#[test]
fn folds_broadcast_arithmetic_and_mod_sign() {
    let n = Node::new("Mul", &["a", "b"], &["c"]);
    let a = from_i64s("", &[2, 1], &[2, 3]);
    let b = from_i64s("", &[3], &[1, 10, 100]);
    let c = ctx(
        &n,
        14,
        vec![fixed(I64, &[2, 1]), fixed(I64, &[3])],
        vec![Some(a), Some(b)],
    );
    let out = (spec("Mul").fold.unwrap())(&c).unwrap();
    assert_eq!(out[0].dims, vec![2, 3]);
    assert_eq!(out[0].to_i64s().unwrap(), vec![2, 20, 200, 3, 30, 300]);
    // Mod follows the divisor's sign unless fmod=1.
    let a = from_i64s("", &[2], &[-7, 7]);
    let b = from_i64s("", &[1], &[3]);
    let n = Node::new("Mod", &["a", "b"], &["c"]);
    let c = ctx(
        &n,
        13,
        vec![fixed(I64, &[2]), fixed(I64, &[1])],
        vec![Some(a.clone()), Some(b.clone())],
    );
    assert_eq!(
        (spec("Mod").fold.unwrap())(&c).unwrap()[0]
            .to_i64s()
            .unwrap(),
        vec![2, 1]
    );
    let n = n.with_attr("fmod", AttrValue::Int(1));
    let c = ctx(
        &n,
        13,
        vec![fixed(I64, &[2]), fixed(I64, &[1])],
        vec![Some(a), Some(b)],
    );
    assert_eq!(
        (spec("Mod").fold.unwrap())(&c).unwrap()[0]
            .to_i64s()
            .unwrap(),
        vec![-1, 1]
    );
}

#[test]
fn cast_and_where() {
    let n = Node::new("Cast", &["x"], &["y"]).with_attr("to", AttrValue::Int(1));
    let x = from_i64s("", &[2], &[4, -2]);
    let c = ctx(&n, 13, vec![fixed(I64, &[2])], vec![Some(x)]);
    assert_eq!((spec("Cast").infer)(&c).unwrap(), vec![fixed(F32, &[2])]);
    let out = (spec("Cast").fold.unwrap())(&c).unwrap();
    assert_eq!(out[0].dtype(), F32);
    assert_eq!(out[0].to_f64s().unwrap(), vec![4.0, -2.0]);
    let n = Node::new("Cast", &["x"], &["y"]).with_attr("to", AttrValue::Int(17));
    let c = ctx(&n, 13, vec![fixed(F32, &[2])], vec![None]);
    assert!((spec("Cast").requires.unwrap())(&c).is_err());
    // Where takes X's dtype, not the condition's.
    let n = Node::new("Where", &["c", "x", "y"], &["o"]);
    let c = ctx(
        &n,
        16,
        vec![fixed(Bool, &[2, 1]), fixed(I32, &[3]), fixed(I32, &[1])],
        vec![None, None, None],
    );
    assert_eq!(
        (spec("Where").infer)(&c).unwrap(),
        vec![fixed(I32, &[2, 3])]
    );
}

#[test]
fn dtypes_follow_the_opset() {
    let n = Node::new("Add", &["a", "b"], &["c"]);
    let at = |op: &str, opset, d| {
        let n = Node {
            op_type: op.into(),
            ..n.clone()
        };
        let c = ctx(
            &n,
            opset,
            vec![fixed(d, &[2]), fixed(d, &[2])],
            vec![None, None],
        );
        (spec(op).requires.unwrap())(&c).is_ok()
    };
    assert!(!at("Add", 13, I8));
    assert!(at("Add", 14, I8));
    assert!(at("Add", 7, I64));
    assert!(!at("Acos", 13, BF16));
    assert!(at("Acos", 22, BF16));
    assert!(at("Erf", 9, I32));
    assert!(!at("Erf", 13, I32));
    assert!(!at("Equal", 9, F32));
    assert!(!at("Mod", 13, F32));
}
