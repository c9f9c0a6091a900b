//! ONNX operators over burn tensors, one file per op or small group of ops. Each op takes its
//! present inputs (`None` = absent optional) and returns its outputs; ONNX shapes are tracked
//! next to the padded burn tensors. Each file ends with its table (the `table!` macro): the
//! names of the ops it implements and the function that runs each; [`OPS`] and [`exec`]
//! gather the files' tables. Control flow, sequences, optionals and Identity are
//! [`super::control`]'s.
use crate::backend::BackendError;
use crate::burn::tensor::{Class, K, R, Val, class, pad, run_err, run_unsup};
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::{Int, Tensor};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

/// Declares the op table of one file of this folder: its `OPS`, the names, and its `find`, the
/// function of a name. Each file lists the ops it implements; [`OPS`] and `find` gather the
/// files in the order `groups!` names them.
macro_rules! table {
    ($($($name:literal)|+ => $f:path,)*) => {
        /// The ops of this file.
        pub(super) const OPS: &[&str] = &[$($($name,)+)*];

        /// The function that runs op `op`, if this file implements it.
        pub(super) fn find<B: ::burn::tensor::backend::Backend>(
            op: &str,
        ) -> Option<super::OpFn<B>> {
            Some(match op {
                $($($name)|+ => $f as super::OpFn<B>,)*
                _ => return None,
            })
        }
    };
}

mod binary;
mod cast;
mod constant;
mod conv;
mod gather;
mod linalg;
mod loss;
mod norm;
mod pad;
mod pool;
mod recurrent;
mod reduce;
mod resize;
mod scatter;
mod shape;
mod slice;
mod softmax;
mod unary;
mod window;

pub(crate) use cast::wrap_narrow;

pub(crate) type Res<T> = Result<T, BackendError>;
pub(crate) type Outs<B> = Vec<Option<Val<B>>>;

/// An op's implementation: node, inputs (`None` for absent optional ones), context -> outputs.
pub(crate) type OpFn<B> = fn(&Node, &[Option<Val<B>>], &Cx<B>) -> Res<Outs<B>>;

/// The files of this folder that implement ops, in the order their ops are listed and
/// looked up.
macro_rules! groups {
    ($($m:ident),* $(,)?) => {
        /// The ops of this folder: every op of the interpreter but [`super::control`]'s.
        pub(crate) static OPS: std::sync::LazyLock<Vec<&'static str>> =
            std::sync::LazyLock::new(|| [$($m::OPS),*].concat());

        /// The function that runs op `op`.
        fn find<B: BurnBackend>(op: &str) -> Option<OpFn<B>> {
            None$(.or_else(|| $m::find::<B>(op)))*
        }
    };
}

groups!(
    unary, cast, binary, softmax, linalg, recurrent, conv, pool, norm, reduce, shape, slice, pad,
    resize, gather, scatter, loss, constant
);

/// Runs one node.
pub(crate) fn exec<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    match find::<B>(&node.op_type) {
        Some(run) => run(node, ins, cx),
        None => Err(run_unsup(format!("op {}", node.op_type))),
    }
}

/// What an op needs besides its inputs.
pub(crate) struct Cx<'a, B: BurnBackend> {
    pub dev: &'a B::Device,
    pub opset: i64,
}

pub(crate) fn req<'v, B: BurnBackend>(
    ins: &'v [Option<Val<B>>],
    i: usize,
    op: &str,
) -> Res<&'v Val<B>> {
    ins.get(i)
        .and_then(|v| v.as_ref())
        .ok_or_else(|| run_err(format!("{op}: required input {i} is missing")))
}

pub(crate) fn opt<B: BurnBackend>(ins: &[Option<Val<B>>], i: usize) -> Option<&Val<B>> {
    ins.get(i).and_then(|v| v.as_ref())
}

fn one<B: BurnBackend>(v: Val<B>) -> Res<Outs<B>> {
    Ok(vec![Some(v)])
}

/// Normalizes a possibly negative axis against `rank`.
/// ONNX's rule ([`mutagraph_ir::ops::common::norm_axis`]; axis 0 of a scalar allowed).
pub(crate) fn norm_axis(axis: i64, rank: usize) -> Res<usize> {
    mutagraph_ir::ops::common::norm_axis(axis, rank)
        .map_err(|_| run_err(format!("axis {axis} out of range for rank {rank}")))
}

fn norm_axes(axes: &[i64], rank: usize) -> Res<Vec<usize>> {
    let mut out = Vec::new();
    for &a in axes {
        let n = norm_axis(a, rank)?;
        if out.contains(&n) {
            return Err(run_err(format!("axis {a} repeated")));
        }
        out.push(n);
    }
    Ok(out)
}

/// Numpy broadcasting of two shapes.
pub(crate) fn bshape(a: &[usize], b: &[usize]) -> Res<Vec<usize>> {
    crate::value::broadcast_all(&[a, b])
        .ok_or_else(|| run_err(format!("shapes {a:?} and {b:?} do not broadcast")))
}

pub(crate) fn need_float<B: BurnBackend>(v: &Val<B>, op: &str) -> Res<Tensor<B, R>> {
    match &v.k {
        K::F(t) => Ok(t.clone()),
        _ => Err(run_unsup(format!("{op} on {}", v.dtype))),
    }
}

fn fval<B: BurnBackend>(t: Tensor<B, R>, like: &Val<B>, shape: Vec<usize>) -> Val<B> {
    Val::float(t, shape, like.dtype)
}

fn scalar_f<B: BurnBackend>(v: &Val<B>) -> Res<f64> {
    let x = v.host_f64();
    if x.len() != 1 {
        return Err(run_err(format!("expected one value, got {}", x.len())));
    }
    Ok(x[0])
}

fn scalar_i<B: BurnBackend>(v: &Val<B>) -> Res<i64> {
    let x = v.host_i64();
    if x.len() != 1 {
        return Err(run_err(format!("expected one value, got {}", x.len())));
    }
    Ok(x[0])
}

fn to_usize(v: &[i64], what: &str) -> Res<Vec<usize>> {
    v.iter()
        .map(|&x| usize::try_from(x).map_err(|_| run_err(format!("negative {what} value {x}"))))
        .collect()
}

/// A value of the given class filled with one value.
pub(crate) fn full<B: BurnBackend>(
    shape: Vec<usize>,
    v: f64,
    dtype: DType,
    dev: &B::Device,
) -> Res<Val<B>> {
    let p = pad(&shape);
    Ok(match class(dtype) {
        Some(Class::Float) => Val::new(K::F(Tensor::full(p, v, dev)), shape, dtype),
        Some(Class::Int) => Val::new(K::I(Tensor::full(p, v as i64, dev)), shape, dtype),
        Some(Class::Bool) => {
            let t: Tensor<B, R, Int> = Tensor::full(p, (v != 0.0) as i64, dev);
            Val::new(K::B(t.bool()), shape, dtype)
        }
        None => return Err(run_unsup(format!("element type {dtype}"))),
    })
}

/// Attribute value as a float list or int list helper for other modules.
pub(crate) fn ints_attr(a: &[mutagraph_ir::attr::Attribute], name: &str) -> Option<Vec<i64>> {
    match a.attr(name) {
        Some(AttrValue::Ints(v)) => Some(v.clone()),
        _ => None,
    }
}
