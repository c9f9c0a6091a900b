use super::einsum::einsum_shape;
use super::matmul::matmul_shape;
use super::window::Window;
use crate::attr::AttrValue;
use crate::dtype::DType;
use crate::ops::common::*;
use crate::registry::{InferCtx, Registry};
use crate::types::Dim;

fn win(k: &[i64], s: &[i64], d: &[i64], p: &[i64], auto_pad: &str, ceil: bool) -> Window {
    Window {
        kernel: k.to_vec(),
        strides: s.to_vec(),
        dilations: d.to_vec(),
        pads: p.to_vec(),
        auto_pad: auto_pad.into(),
        ceil,
    }
}

fn sizes(w: &Window, input: &[i64]) -> Vec<i64> {
    let dims: Vec<Dim> = input.iter().map(|v| Dim::Known(*v)).collect();
    w.spatial(&dims)
        .unwrap()
        .iter()
        .map(|d| d.value().unwrap())
        .collect()
}

#[test]
fn conv_pool_sizes() {
    // 5x5 input, 3x3 kernel, stride 2, pad 1: 3x3
    assert_eq!(
        sizes(
            &win(&[3, 3], &[2, 2], &[1, 1], &[1, 1, 1, 1], "NOTSET", false),
            &[5, 5]
        ),
        vec![3, 3]
    );
    // dilation 2 makes the kernel 5 wide
    assert_eq!(
        sizes(&win(&[3], &[1], &[2], &[0, 0], "NOTSET", false), &[7]),
        vec![3]
    );
    // SAME_UPPER ignores pads: ceil(in / stride)
    assert_eq!(
        sizes(
            &win(
                &[3, 3],
                &[2, 2],
                &[1, 1],
                &[9, 9, 9, 9],
                "SAME_UPPER",
                false
            ),
            &[5, 6]
        ),
        vec![3, 3]
    );
    // VALID ignores pads; ceil_mode still rounds up
    assert_eq!(
        sizes(&win(&[3], &[2], &[1], &[0, 0], "VALID", true), &[10]),
        vec![5]
    );
    assert_eq!(
        sizes(&win(&[3], &[2], &[1], &[5, 5], "VALID", false), &[6]),
        vec![2]
    );
    // ceil_mode: 32 input, kernel 3 stride 2: floor 15, ceil 16
    assert_eq!(
        sizes(&win(&[3], &[2], &[1], &[0, 0], "NOTSET", false), &[32]),
        vec![15]
    );
    assert_eq!(
        sizes(&win(&[3], &[2], &[1], &[0, 0], "NOTSET", true), &[32]),
        vec![16]
    );
    // ceil_mode must not start a window in the end padding: 4 input, k 2, s 2, pad 1+1
    assert_eq!(
        sizes(&win(&[2], &[2], &[1], &[1, 1], "NOTSET", true), &[4]),
        vec![3]
    );
    // a window larger than the padded input is an error
    assert!(
        win(&[5], &[1], &[1], &[0, 0], "NOTSET", false)
            .out_dim(0, &Dim::Known(4))
            .is_err()
    );
}

fn ctx_infer(node: &crate::graph::Node, inputs: &[&[i64]]) -> Result<Vec<Vec<i64>>, InferError> {
    let ctx = InferCtx {
        node,
        opset: 22,
        inputs: crate::registry::owned_types(
            inputs.iter().map(|d| Some(fixed(DType::F32, d))).collect(),
        ),
        consts: vec![None; inputs.len()],
        subgraph_outputs: Default::default(),
    };
    let spec = Registry::global().for_node(node).unwrap();
    if let Some(req) = spec.requires {
        req(&ctx)?;
    }
    Ok((spec.infer)(&ctx)?
        .iter()
        .map(|t| t.tensor().unwrap().static_dims().unwrap())
        .collect())
}

fn node(op: &str, n_in: usize, attrs: &[(&str, AttrValue)]) -> crate::graph::Node {
    let names = ["x", "w", "b"];
    let mut n = crate::graph::Node::new(op, &names[..n_in], &["y"]);
    for (k, v) in attrs {
        n = n.with_attr(k, v.clone());
    }
    n
}

#[test]
fn conv_transpose_sizes() {
    let ints = |v: &[i64]| AttrValue::Ints(v.to_vec());
    // plain: (3-1)*1 + 3 = 5
    let n = node("ConvTranspose", 2, &[]);
    assert_eq!(
        ctx_infer(&n, &[&[1, 1, 3, 3], &[1, 2, 3, 3]]).unwrap()[0],
        vec![1, 2, 5, 5]
    );
    // strides, pads, output_padding, dilation
    let n = node(
        "ConvTranspose",
        2,
        &[
            ("strides", ints(&[3, 2])),
            ("pads", ints(&[1, 2, 1, 2])),
            ("output_padding", ints(&[1, 1])),
        ],
    );
    // h: 3*(3-1) + 1 + 3 - 2 = 8 ; w: 2*(3-1) + 1 + 3 - 4 = 4
    assert_eq!(
        ctx_infer(&n, &[&[1, 1, 3, 3], &[1, 2, 3, 3]]).unwrap()[0],
        vec![1, 2, 8, 4]
    );
    // group multiplies the output channels
    let n = node(
        "ConvTranspose",
        2,
        &[("group", AttrValue::Int(2)), ("dilations", ints(&[2, 2]))],
    );
    assert_eq!(
        ctx_infer(&n, &[&[1, 2, 3, 3], &[2, 3, 3, 3]]).unwrap()[0],
        vec![1, 6, 7, 7]
    );
    // output_shape wins over pads; SAME gives in * stride
    let n = node(
        "ConvTranspose",
        2,
        &[("strides", ints(&[3, 2])), ("output_shape", ints(&[8, 7]))],
    );
    assert_eq!(
        ctx_infer(&n, &[&[1, 1, 3, 3], &[1, 2, 3, 3]]).unwrap()[0],
        vec![1, 2, 8, 7]
    );
    // Past the reach, a negative total padding: valid (the suite has one), but open.
    let n = node(
        "ConvTranspose",
        2,
        &[("strides", ints(&[3, 2])), ("output_shape", ints(&[10, 8]))],
    );
    assert_eq!(
        ctx_infer(&n, &[&[1, 1, 3, 3], &[1, 2, 3, 3]]).unwrap()[0],
        vec![1, 2, 10, 8]
    );
    let n = node(
        "ConvTranspose",
        2,
        &[
            ("strides", ints(&[2, 2])),
            ("auto_pad", AttrValue::String(b"SAME_UPPER".to_vec())),
        ],
    );
    assert_eq!(
        ctx_infer(&n, &[&[1, 1, 3, 3], &[1, 2, 3, 3]]).unwrap()[0],
        vec![1, 2, 6, 6]
    );
}

#[test]
fn conv_and_pool_nodes() {
    let ints = |v: &[i64]| AttrValue::Ints(v.to_vec());
    // kernel from W, 3-D, SAME_LOWER with stride 2
    let n = node(
        "Conv",
        2,
        &[
            ("strides", ints(&[2, 2, 2])),
            ("auto_pad", AttrValue::String(b"SAME_LOWER".to_vec())),
        ],
    );
    assert_eq!(
        ctx_infer(&n, &[&[2, 4, 7, 8, 9], &[6, 4, 3, 3, 3]]).unwrap()[0],
        vec![2, 6, 4, 4, 5]
    );
    // group must divide channels, and W channels == C / group
    let n = node("Conv", 2, &[("group", AttrValue::Int(2))]);
    assert!(ctx_infer(&n, &[&[1, 4, 5, 5], &[6, 2, 3, 3]]).is_ok());
    assert!(ctx_infer(&n, &[&[1, 4, 5, 5], &[6, 4, 3, 3]]).is_err());
    assert!(ctx_infer(&n, &[&[1, 4, 5, 5], &[5, 2, 3, 3]]).is_err());
    // bias length
    let n = node("Conv", 3, &[]);
    assert!(ctx_infer(&n, &[&[1, 2, 5], &[3, 2, 3], &[3]]).is_ok());
    assert!(ctx_infer(&n, &[&[1, 2, 5], &[3, 2, 3], &[4]]).is_err());
    // MaxPool ceil_mode with indices output
    let mut n = node(
        "MaxPool",
        1,
        &[
            ("kernel_shape", ints(&[3, 3])),
            ("strides", ints(&[2, 2])),
            ("ceil_mode", AttrValue::Int(1)),
        ],
    );
    n.outputs.push("i".into());
    let out = ctx_infer(&n, &[&[1, 3, 32, 31]]).unwrap();
    assert_eq!(out, vec![vec![1, 3, 16, 15], vec![1, 3, 16, 15]]);
    // 1-D average pool with pads
    let n = node(
        "AveragePool",
        1,
        &[("kernel_shape", ints(&[3])), ("pads", ints(&[1, 1]))],
    );
    assert_eq!(ctx_infer(&n, &[&[1, 3, 8]]).unwrap()[0], vec![1, 3, 8]);
}

#[test]
fn einsum_shapes() {
    let s = |v: &[i64]| Some(v.iter().map(|x| Dim::Known(*x)).collect::<Vec<_>>());
    let known = |r: Option<Vec<Dim>>| {
        r.unwrap()
            .iter()
            .map(|d| d.value().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        known(einsum_shape("ij,jk->ik", &[s(&[2, 3]), s(&[3, 4])]).unwrap()),
        vec![2, 4]
    );
    // implicit output: labels seen once, sorted
    assert_eq!(
        known(einsum_shape("ij,jk", &[s(&[2, 3]), s(&[3, 4])]).unwrap()),
        vec![2, 4]
    );
    assert_eq!(
        known(einsum_shape("ba", &[s(&[2, 3])]).unwrap()),
        vec![3, 2]
    );
    // trace and diagonal
    assert_eq!(
        known(einsum_shape("ii->", &[s(&[3, 3])]).unwrap()),
        Vec::<i64>::new()
    );
    assert_eq!(
        known(einsum_shape("ii->i", &[s(&[3, 3])]).unwrap()),
        vec![3]
    );
    // ellipsis broadcast, explicit and implicit
    assert_eq!(
        known(einsum_shape("...ij,...jk->...ik", &[s(&[5, 1, 2, 3]), s(&[4, 3, 6])]).unwrap()),
        vec![5, 4, 2, 6]
    );
    assert_eq!(
        known(einsum_shape("...ij,...jk", &[s(&[7, 2, 3]), s(&[3, 4])]).unwrap()),
        vec![7, 2, 4]
    );
    assert_eq!(
        known(einsum_shape(" i , i -> ", &[s(&[3]), s(&[3])]).unwrap()),
        Vec::<i64>::new()
    );
    assert!(einsum_shape("ij,jk->ik", &[s(&[2, 3]), s(&[4, 4])]).is_err());
    assert!(einsum_shape("ij->ik", &[s(&[2, 3])]).is_err());
    assert!(einsum_shape("ij,jk", &[s(&[2, 3])]).is_err());
}

#[test]
fn matmul_shapes() {
    let s = |v: &[i64]| Some(v.iter().map(|x| Dim::Known(*x)).collect::<Vec<_>>());
    assert_eq!(matmul_shape(s(&[3]), s(&[3])).unwrap(), Some(vec![]));
    assert_eq!(
        matmul_shape(s(&[2, 1, 4, 3]), s(&[5, 3, 6])).unwrap(),
        s(&[2, 5, 4, 6])
    );
    assert_eq!(matmul_shape(s(&[4, 3]), s(&[3])).unwrap(), s(&[4]));
    assert!(matmul_shape(s(&[4, 3]), s(&[2, 5])).is_err());
}
