//! ONNX operators over burn tensors. Each op takes its present inputs (`None` = absent optional)
//! and returns its outputs; ONNX shapes are tracked next to the padded burn tensors.
use super::tensor::{
    Class, K, R, Val, bax, class, each, mk_b, mk_from_f64, mk_i, pad, run_err, run_unsup,
};
use crate::backend::BackendError;
use burn::tensor::activation as act;
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::{Int, Slice, Tensor, TensorData};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

pub(crate) type Res<T> = Result<T, BackendError>;
pub(crate) type Outs<B> = Vec<Option<Val<B>>>;

macro_rules! cmp {
    ($op:expr, $p:expr, $q:expr) => {
        match $op {
            "Equal" => $p.equal($q),
            "Less" => $p.lower($q),
            "LessOrEqual" => $p.lower_equal($q),
            "Greater" => $p.greater($q),
            _ => $p.greater_equal($q),
        }
    };
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
pub(crate) fn norm_axis(axis: i64, rank: usize) -> Res<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r.max(1) && !(r == 0 && a == 0) {
        return Err(run_err(format!("axis {axis} out of range for rank {rank}")));
    }
    Ok(a as usize)
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
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let y = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return Err(run_err(format!("shapes {a:?} and {b:?} do not broadcast")));
        };
    }
    Ok(out)
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

/// Permutes the ONNX axes of a value.
fn permute<B: BurnBackend>(v: Val<B>, perm: &[usize]) -> Val<B> {
    let r = v.rank();
    let mut axes = [0usize; R];
    for (i, a) in axes.iter_mut().enumerate() {
        *a = i;
    }
    for (i, &p) in perm.iter().enumerate() {
        axes[R - r + i] = R - r + p;
    }
    let shape: Vec<usize> = perm.iter().map(|&p| v.shape[p]).collect();
    let k = each!(v.k, |t| t.permute(axes));
    Val::new(k, shape, v.dtype)
}

fn expand_to<B: BurnBackend>(v: &Val<B>, shape: &[usize]) -> K<B> {
    if v.shape == shape {
        return v.k.clone();
    }
    let p = pad(shape);
    if shape.contains(&0) {
        // burn's expand refuses a zero size: an empty result is made, not broadcast.
        return each!(v.k.clone(), |t| t.zeros_like().slice(
            p.iter()
                .map(|&d| Slice::from(0..d))
                .collect::<Vec<_>>()
                .as_slice()
        ));
    }
    each!(v.k.clone(), |t| t.expand(p))
}

/// Runs one node.
pub(crate) fn exec<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let dev = cx.dev;
    match op {
        // ---- element-wise unary ----
        "Identity" => one(req(ins, 0, op)?.clone()),
        "Abs" | "Neg" | "Sign" => {
            let x = req(ins, 0, op)?;
            let k = match &x.k {
                K::F(t) => K::F(match op {
                    "Abs" => t.clone().abs(),
                    "Neg" => t.clone().neg(),
                    _ => t.clone().sign(),
                }),
                K::I(t) => K::I(match op {
                    "Abs" => t.clone().abs(),
                    "Neg" => t.clone().neg(),
                    _ => t.clone().sign(),
                }),
                K::B(_) => return Err(run_unsup(format!("{op} on bool"))),
            };
            one(Val::new(k, x.shape.clone(), x.dtype))
        }
        "Relu" => {
            let x = req(ins, 0, op)?;
            let k = match &x.k {
                K::F(t) => K::F(act::relu(t.clone())),
                K::I(t) => K::I(t.clone().clamp_min(0)),
                K::B(_) => return Err(run_unsup("Relu on bool")),
            };
            one(Val::new(k, x.shape.clone(), x.dtype))
        }
        "Sqrt" | "Exp" | "Log" | "Sin" | "Cos" | "Tan" | "Asin" | "Acos" | "Atan" | "Sinh"
        | "Cosh" | "Asinh" | "Acosh" | "Atanh" | "Tanh" | "Erf" | "Reciprocal" | "Floor"
        | "Ceil" | "Round" | "Sigmoid" | "Softsign" | "Mish" | "HardSwish" | "Softplus" => {
            let x = req(ins, 0, op)?;
            let t = need_float(x, op)?;
            let y = match op {
                "Sqrt" => t.sqrt(),
                "Exp" => t.exp(),
                "Log" => t.log(),
                "Sin" => t.sin(),
                "Cos" => t.cos(),
                "Tan" => t.tan(),
                "Asin" => t.asin(),
                "Acos" => t.acos(),
                "Atan" => t.atan(),
                "Sinh" => t.sinh(),
                "Cosh" => t.cosh(),
                "Asinh" => t.asinh(),
                "Acosh" => t.acosh(),
                "Atanh" => t.atanh(),
                "Tanh" => act::tanh(t),
                "Erf" => t.erf(),
                "Reciprocal" => t.recip(),
                "Floor" => t.floor(),
                "Ceil" => t.ceil(),
                "Round" => t.round(),
                "Sigmoid" => act::sigmoid(t),
                "Softsign" => act::softsign(t),
                "Mish" => act::mish(t),
                "HardSwish" => act::hard_swish(t),
                _ => act::softplus(t, 1.0),
            };
            one(fval(y, x, x.shape.clone()))
        }
        "LeakyRelu" | "Elu" | "Celu" | "ThresholdedRelu" | "Selu" | "HardSigmoid" | "Gelu"
        | "Shrink" => {
            let x = req(ins, 0, op)?;
            let t = need_float(x, op)?;
            let y = match op {
                "LeakyRelu" => act::leaky_relu(t, a.float("alpha", 0.01) as f64),
                "Elu" => act::elu(t, a.float("alpha", 1.0) as f64),
                "Celu" => act::celu(t, a.float("alpha", 1.0) as f64),
                "ThresholdedRelu" => act::thresholded_relu(t, a.float("alpha", 1.0) as f64),
                "HardSigmoid" => {
                    act::hard_sigmoid(t, a.float("alpha", 0.2) as f64, a.float("beta", 0.5) as f64)
                }
                "Shrink" => {
                    act::shrink(t, a.float("lambd", 0.5) as f64, a.float("bias", 0.0) as f64)
                }
                "Gelu" => {
                    if a.string("approximate", "none") == "tanh" {
                        act::gelu_approximate(t)
                    } else {
                        act::gelu(t)
                    }
                }
                _ => {
                    let alpha = a.float("alpha", 1.673_263_2) as f64;
                    let gamma = a.float("gamma", 1.050_701) as f64;
                    if a.attr("alpha").is_none() && a.attr("gamma").is_none() {
                        act::selu(t)
                    } else {
                        let pos = t.clone().greater_elem(0.0);
                        let neg = t.clone().exp().sub_scalar(1.0).mul_scalar(alpha);
                        neg.mask_where(pos, t).mul_scalar(gamma)
                    }
                }
            };
            one(fval(y, x, x.shape.clone()))
        }
        "PRelu" => {
            let x = req(ins, 0, op)?;
            let s = req(ins, 1, op)?;
            let t = need_float(x, op)?;
            // Before opset 7 a 1-D slope of C values applies per channel (axis 1).
            let legacy = cx.opset < 7
                && s.rank() == 1
                && x.rank() > 2
                && s.shape[0] == x.shape[1]
                && s.shape[0] != 1;
            let shape = if legacy {
                x.shape.clone()
            } else {
                bshape(&x.shape, &s.shape)?
            };
            if shape != x.shape {
                return Err(run_err("PRelu: slope does not broadcast to X"));
            }
            // burn's `prelu` activation takes channels on its dim 1, which is not ONNX's
            // channel axis once tensors are padded to rank 6: use a masked multiply with the
            // slope broadcast in ONNX terms instead.
            let slope = if legacy {
                let mut sh = vec![s.shape[0]];
                sh.extend(vec![1; x.rank() - 2]);
                s.clone().reshape(sh)
            } else {
                s.clone()
            };
            let y = {
                let neg = t.clone().lower_elem(0.0);
                t.clone().mask_where(neg, t.mul(slope.f()))
            };
            one(fval(y, x, shape))
        }
        "Not" => {
            let x = req(ins, 0, op)?;
            one(Val::new(
                K::B(x.b().bool_not()),
                x.shape.clone(),
                DType::Bool,
            ))
        }
        "IsNaN" => {
            let x = req(ins, 0, op)?;
            one(Val::new(
                K::B(need_float(x, op)?.is_nan()),
                x.shape.clone(),
                DType::Bool,
            ))
        }
        "IsInf" => {
            let x = req(ins, 0, op)?;
            let t = need_float(x, op)?;
            let pos = a.int("detect_positive", 1) != 0;
            let neg = a.int("detect_negative", 1) != 0;
            let y = match (pos, neg) {
                (true, true) => t.is_inf(),
                (true, false) => t.equal_elem(f64::INFINITY),
                (false, true) => t.equal_elem(f64::NEG_INFINITY),
                (false, false) => t.clone().is_nan().bool_and(t.is_nan().bool_not()),
            };
            one(Val::new(K::B(y), x.shape.clone(), DType::Bool))
        }
        "Cast" | "CastLike" => {
            let x = req(ins, 0, op)?;
            let to = if op == "Cast" {
                DType::from_code(a.int("to", 0) as i32)
            } else {
                req(ins, 1, op)?.dtype
            };
            one(cast(x, to)?)
        }
        "Clip" => {
            let x = req(ins, 0, op)?;
            let (lo, hi) = if cx.opset < 11 {
                (
                    a.attr("min").map(|_| a.float("min", 0.0) as f64),
                    a.attr("max").map(|_| a.float("max", 0.0) as f64),
                )
            } else {
                (
                    opt(ins, 1).map(scalar_f).transpose()?,
                    opt(ins, 2).map(scalar_f).transpose()?,
                )
            };
            let k = match &x.k {
                K::F(t) => {
                    let mut t = t.clone();
                    if let Some(l) = lo {
                        t = t.clamp_min(l);
                    }
                    if let Some(h) = hi {
                        t = t.clamp_max(h);
                    }
                    K::F(t)
                }
                K::I(t) => {
                    let mut t = t.clone();
                    if let Some(l) = lo {
                        t = t.clamp_min(l as i64);
                    }
                    if let Some(h) = hi {
                        t = t.clamp_max(h as i64);
                    }
                    K::I(t)
                }
                K::B(_) => return Err(run_unsup("Clip on bool")),
            };
            one(Val::new(k, x.shape.clone(), x.dtype))
        }

        // ---- element-wise binary ----
        "Add" | "Sub" | "Mul" | "Div" => {
            let x = req(ins, 0, op)?;
            let y = req(ins, 1, op)?;
            one(arith(op, x, y)?)
        }
        "Pow" => {
            let x = req(ins, 0, op)?;
            let y = req(ins, 1, op)?;
            let shape = bshape(&x.shape, &y.shape)?;
            let p = x.f().powf(y.f());
            one(match x.class() {
                Class::Float => fval(p, x, shape),
                _ => Val::new(K::I(p.round().int()), shape, x.dtype),
            })
        }
        "Mod" => {
            let x = req(ins, 0, op)?;
            let y = req(ins, 1, op)?;
            let shape = bshape(&x.shape, &y.shape)?;
            let fmod = a.int("fmod", 0) != 0;
            let k = match (&x.k, &y.k) {
                (K::F(p), K::F(q)) => {
                    if fmod {
                        K::F(p.clone().fmod(q.clone()))
                    } else {
                        K::F(p.clone().remainder(q.clone()))
                    }
                }
                (K::I(p), K::I(q)) => {
                    if fmod {
                        let quot = p.clone().div(q.clone());
                        K::I(p.clone().sub(quot.mul(q.clone())))
                    } else {
                        K::I(p.clone().remainder(q.clone()))
                    }
                }
                _ => return Err(run_unsup("Mod on mixed or bool inputs")),
            };
            one(Val::new(k, shape, x.dtype))
        }
        "Equal" | "Less" | "LessOrEqual" | "Greater" | "GreaterOrEqual" => {
            let x = req(ins, 0, op)?;
            let y = req(ins, 1, op)?;
            let shape = bshape(&x.shape, &y.shape)?;
            let t = match (&x.k, &y.k) {
                (K::F(p), K::F(q)) => cmp!(op, p.clone(), q.clone()),
                (K::I(p), K::I(q)) => cmp!(op, p.clone(), q.clone()),
                (K::B(p), K::B(q)) if op == "Equal" => p.clone().equal(q.clone()),
                _ => return Err(run_unsup(format!("{op} on these types"))),
            };
            one(Val::new(K::B(t), shape, DType::Bool))
        }
        "And" | "Or" | "Xor" => {
            let x = req(ins, 0, op)?;
            let y = req(ins, 1, op)?;
            let shape = bshape(&x.shape, &y.shape)?;
            let (p, q) = (x.b(), y.b());
            let t = match op {
                "And" => p.bool_and(q),
                "Or" => p.bool_or(q),
                _ => p.bool_xor(q),
            };
            one(Val::new(K::B(t), shape, DType::Bool))
        }
        "BitwiseAnd" | "BitwiseOr" | "BitwiseXor" | "BitShift" => {
            let x = req(ins, 0, op)?;
            let y = req(ins, 1, op)?;
            let shape = bshape(&x.shape, &y.shape)?;
            let (p, q) = match (&x.k, &y.k) {
                (K::I(p), K::I(q)) => (p.clone(), q.clone()),
                _ => return Err(run_unsup(format!("{op} on non-integers"))),
            };
            let t = match op {
                "BitwiseAnd" => p.bitwise_and(q),
                "BitwiseOr" => p.bitwise_or(q),
                "BitwiseXor" => p.bitwise_xor(q),
                _ => {
                    if a.string("direction", "") == "LEFT" {
                        p.bitwise_left_shift(q)
                    } else {
                        p.bitwise_right_shift(q)
                    }
                }
            };
            one(Val::new(K::I(t), shape, x.dtype))
        }
        "BitwiseNot" => {
            let x = req(ins, 0, op)?;
            match &x.k {
                K::I(t) => one(Val::new(
                    K::I(t.clone().bitwise_not()),
                    x.shape.clone(),
                    x.dtype,
                )),
                _ => Err(run_unsup("BitwiseNot on non-integers")),
            }
        }
        "Max" | "Min" | "Sum" | "Mean" => {
            let first = req(ins, 0, op)?;
            let mut acc = first.clone();
            for v in ins.iter().skip(1) {
                let v = v
                    .as_ref()
                    .ok_or_else(|| run_err(format!("{op}: missing input")))?;
                let shape = bshape(&acc.shape, &v.shape)?;
                let k = match (&acc.k, &v.k) {
                    (K::F(p), K::F(q)) => K::F(match op {
                        "Max" => p.clone().max_pair(q.clone()),
                        "Min" => p.clone().min_pair(q.clone()),
                        _ => p.clone().add(q.clone()),
                    }),
                    (K::I(p), K::I(q)) => K::I(match op {
                        "Max" => p.clone().max_pair(q.clone()),
                        "Min" => p.clone().min_pair(q.clone()),
                        _ => p.clone().add(q.clone()),
                    }),
                    _ => return Err(run_unsup(format!("{op} on these types"))),
                };
                acc = Val::new(k, shape, acc.dtype);
            }
            if op == "Mean" && ins.len() > 1 {
                let n = ins.len() as f64;
                acc.k = match acc.k {
                    K::F(t) => K::F(t.div_scalar(n)),
                    K::I(t) => K::I(t.div_scalar(n as i64)),
                    k => k,
                };
            }
            if acc.shape != first.shape || ins.len() == 1 {
                // make sure the result is a tensor of its own shape (burn broadcasts lazily)
                let s = acc.shape.clone();
                acc.k = expand_to(&acc, &s);
            }
            one(acc)
        }
        "Where" => {
            let c = req(ins, 0, op)?;
            let x = req(ins, 1, op)?;
            let y = req(ins, 2, op)?;
            let shape = bshape(&bshape(&c.shape, &x.shape)?, &y.shape)?;
            let cb = match expand_to(c, &shape) {
                K::B(t) => t,
                _ => return Err(run_err("Where: condition is not bool")),
            };
            let k = match (expand_to(x, &shape), expand_to(y, &shape)) {
                (K::F(p), K::F(q)) => K::F(q.mask_where(cb, p)),
                (K::I(p), K::I(q)) => K::I(q.mask_where(cb, p)),
                (K::B(p), K::B(q)) => K::B(q.mask_where(cb, p)),
                _ => return Err(run_err("Where: X and Y differ in type")),
            };
            one(Val::new(k, shape, x.dtype))
        }

        // ---- softmax family ----
        "Softmax" | "LogSoftmax" | "Hardmax" => {
            let x = req(ins, 0, op)?;
            let t = need_float(x, op)?;
            let r = x.rank();
            let legacy = cx.opset < 13;
            let axis = norm_axis(a.int("axis", if legacy { 1 } else { -1 }), r)?;
            let (t, dim, back) = if legacy {
                let outer: usize = x.shape[..axis].iter().product();
                let inner: usize = x.shape[axis..].iter().product();
                (t.reshape(pad(&[outer, inner])), R - 1, true)
            } else {
                (t, bax(r, axis), false)
            };
            let y = match op {
                "Softmax" => act::softmax(t, dim),
                "LogSoftmax" => act::log_softmax(t, dim),
                // an empty input has an empty output (argmax has nothing to pick from)
                _ if x.numel() == 0 => t.zeros_like(),
                _ => {
                    let n = t.dims()[dim];
                    let idx = t.clone().argmax(dim);
                    let mut s = [1usize; R];
                    s[dim] = n;
                    let iota = Tensor::<B, 1, Int>::arange(0..n as i64, dev).reshape(s);
                    let dims = t.dims();
                    iota.expand(dims).equal(idx.expand(dims)).float()
                }
            };
            let y = if back { y.reshape(pad(&x.shape)) } else { y };
            one(fval(y, x, x.shape.clone()))
        }

        // ---- linear algebra ----
        "MatMul" => {
            let x = req(ins, 0, op)?;
            let y = req(ins, 1, op)?;
            one(matmul(x, y)?)
        }
        "Gemm" => {
            let x = req(ins, 0, op)?;
            let y = req(ins, 1, op)?;
            if x.rank() != 2 || y.rank() != 2 {
                return Err(run_err("Gemm: A and B must be 2-D"));
            }
            let mut p = need_float(x, op)?;
            let mut q = need_float(y, op)?;
            let (mut m, mut k) = (x.shape[0], x.shape[1]);
            let (mut k2, mut n) = (y.shape[0], y.shape[1]);
            if a.int("transA", 0) != 0 {
                p = p.swap_dims(R - 2, R - 1);
                std::mem::swap(&mut m, &mut k);
            }
            if a.int("transB", 0) != 0 {
                q = q.swap_dims(R - 2, R - 1);
                std::mem::swap(&mut k2, &mut n);
            }
            if k != k2 {
                return Err(run_err(format!(
                    "Gemm: inner dimensions {k} and {k2} differ"
                )));
            }
            let alpha = a.float("alpha", 1.0) as f64;
            let beta = a.float("beta", 1.0) as f64;
            let mut out = p.matmul(q);
            if alpha != 1.0 {
                out = out.mul_scalar(alpha);
            }
            if let Some(c) = opt(ins, 2) {
                let s = bshape(&[m, n], &c.shape)?;
                if s != [m, n] {
                    return Err(run_err("Gemm: C does not broadcast to (M, N)"));
                }
                let mut ct = c.f();
                if beta != 1.0 {
                    ct = ct.mul_scalar(beta);
                }
                out = out.add(ct);
            }
            one(fval(out, x, vec![m, n]))
        }

        // ---- recurrent layers ----
        "RNN" | "GRU" | "LSTM" => super::rnn::recurrent(node, ins, cx),

        // ---- convolution and pooling ----
        "Conv" => super::nn::conv(node, ins, cx),
        "ConvTranspose" => super::nn::conv_transpose(node, ins, cx),
        "MaxPool" | "AveragePool" => super::nn::pool(node, ins, cx),
        "GlobalAveragePool" | "GlobalMaxPool" => {
            let x = req(ins, 0, op)?;
            let t = need_float(x, op)?;
            if x.rank() < 3 {
                return Err(run_err(format!("{op}: input rank {} below 3", x.rank())));
            }
            let mut y = t;
            let mut shape = x.shape.clone();
            for (ax, s) in shape.iter_mut().enumerate().skip(2) {
                let d = bax(x.rank(), ax);
                y = if op == "GlobalAveragePool" {
                    y.mean_dim(d)
                } else {
                    y.max_dim(d)
                };
                *s = 1;
            }
            one(fval(y, x, shape))
        }
        "BatchNormalization"
        | "InstanceNormalization"
        | "LayerNormalization"
        | "LpNormalization"
        | "MeanVarianceNormalization" => super::nn::norm(node, ins, cx),

        // ---- reductions ----
        "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1"
        | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => {
            let x = req(ins, 0, op)?;
            let axes_from_input = if op == "ReduceSum" {
                cx.opset >= 13
            } else {
                cx.opset >= 18
            };
            let axes: Option<Vec<i64>> = if axes_from_input {
                opt(ins, 1).map(|v| v.host_i64())
            } else {
                a.ints("axes").map(|v| v.to_vec())
            };
            let keep = a.int("keepdims", 1) != 0;
            let noop = a.int("noop_with_empty_axes", 0) != 0;
            let axes = match axes {
                Some(v) if !v.is_empty() => norm_axes(&v, x.rank())?,
                _ if noop => return one(x.clone()),
                _ => (0..x.rank()).collect(),
            };
            one(reduce(op, x, &axes, keep, dev)?)
        }
        "ArgMax" | "ArgMin" => {
            let x = req(ins, 0, op)?;
            let axis = norm_axis(a.int("axis", 0), x.rank())?;
            let keep = a.int("keepdims", 1) != 0;
            let last = a.int("select_last_index", 0) != 0;
            let d = bax(x.rank(), axis);
            let n = x.shape[axis];
            if n == 0 {
                return Err(run_err(format!("{op} over an empty axis")));
            }
            let mut idx = match &x.k {
                K::F(t) => {
                    let t = if last {
                        t.clone().flip([d as isize])
                    } else {
                        t.clone()
                    };
                    if op == "ArgMax" {
                        t.argmax(d)
                    } else {
                        t.argmin(d)
                    }
                }
                K::I(t) => {
                    let t = if last {
                        t.clone().flip([d as isize])
                    } else {
                        t.clone()
                    };
                    if op == "ArgMax" {
                        t.argmax(d)
                    } else {
                        t.argmin(d)
                    }
                }
                K::B(_) => return Err(run_unsup(format!("{op} on bool"))),
            };
            if last {
                idx = idx.neg().add_scalar(n as i64 - 1);
            }
            let mut shape = x.shape.clone();
            shape[axis] = 1;
            let v = Val::new(K::I(idx), shape.clone(), DType::I64);
            if keep {
                one(v)
            } else {
                shape.remove(axis);
                one(v.reshape(shape))
            }
        }
        "CumSum" => {
            let x = req(ins, 0, op)?;
            let axis = norm_axis(scalar_i(req(ins, 1, op)?)?, x.rank())?;
            let d = bax(x.rank(), axis);
            let rev = a.int("reverse", 0) != 0;
            let excl = a.int("exclusive", 0) != 0;
            let k = match &x.k {
                K::F(t) => {
                    let t = if rev {
                        t.clone().flip([d as isize])
                    } else {
                        t.clone()
                    };
                    let c = if excl { exclusive(t, d) } else { t.cumsum(d) };
                    K::F(if rev { c.flip([d as isize]) } else { c })
                }
                K::I(t) => {
                    let t = if rev {
                        t.clone().flip([d as isize])
                    } else {
                        t.clone()
                    };
                    let c = if excl { exclusive(t, d) } else { t.cumsum(d) };
                    K::I(if rev { c.flip([d as isize]) } else { c })
                }
                K::B(_) => return Err(run_unsup("CumSum on bool")),
            };
            one(Val::new(k, x.shape.clone(), x.dtype))
        }

        // ---- shape manipulation ----
        "Reshape" => {
            let x = req(ins, 0, op)?;
            let spec = if cx.opset < 5 {
                a.ints("shape").unwrap_or(&[]).to_vec()
            } else {
                req(ins, 1, op)?.host_i64()
            };
            let allowzero = a.int("allowzero", 0) != 0;
            let shape = reshape_target(&x.shape, &spec, allowzero)?;
            one(x.clone().reshape(shape))
        }
        "Flatten" => {
            let x = req(ins, 0, op)?;
            let r = x.rank() as i64;
            let mut axis = a.int("axis", 1);
            if axis < 0 {
                axis += r;
            }
            if axis < 0 || axis > r {
                return Err(run_err(format!("Flatten: axis {axis} out of range")));
            }
            let outer: usize = x.shape[..axis as usize].iter().product();
            let inner: usize = x.shape[axis as usize..].iter().product();
            one(x.clone().reshape(vec![outer, inner]))
        }
        "Squeeze" => {
            let x = req(ins, 0, op)?;
            let axes: Option<Vec<i64>> = if cx.opset < 13 {
                a.ints("axes").map(|v| v.to_vec())
            } else {
                opt(ins, 1).map(|v| v.host_i64())
            };
            let shape: Vec<usize> = match axes {
                Some(ax) => {
                    let ax = norm_axes(&ax, x.rank())?;
                    for &i in &ax {
                        if x.shape[i] != 1 {
                            return Err(run_err(format!(
                                "Squeeze: dimension {i} of {:?} is not 1",
                                x.shape
                            )));
                        }
                    }
                    x.shape
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !ax.contains(i))
                        .map(|(_, &d)| d)
                        .collect()
                }
                None => x.shape.iter().copied().filter(|&d| d != 1).collect(),
            };
            one(x.clone().reshape(shape))
        }
        "Unsqueeze" => {
            let x = req(ins, 0, op)?;
            let axes: Vec<i64> = if cx.opset < 13 {
                a.ints("axes").unwrap_or(&[]).to_vec()
            } else {
                req(ins, 1, op)?.host_i64()
            };
            let out_rank = x.rank() + axes.len();
            if out_rank > R {
                return Err(run_unsup(format!("rank {out_rank} above {R}")));
            }
            let ax = norm_axes(&axes, out_rank)?;
            let mut shape = Vec::with_capacity(out_rank);
            let mut it = x.shape.iter();
            for i in 0..out_rank {
                if ax.contains(&i) {
                    shape.push(1);
                } else {
                    shape.push(*it.next().ok_or_else(|| run_err("Unsqueeze: bad axes"))?);
                }
            }
            one(x.clone().reshape(shape))
        }
        "Transpose" => {
            let x = req(ins, 0, op)?;
            let r = x.rank();
            let perm: Vec<usize> = match a.ints("perm") {
                Some(p) => {
                    let p = to_usize(p, "perm")?;
                    let mut s = p.clone();
                    s.sort();
                    if s != (0..r).collect::<Vec<_>>() {
                        return Err(run_err(format!("Transpose: bad perm {p:?}")));
                    }
                    p
                }
                None => (0..r).rev().collect(),
            };
            one(permute(x.clone(), &perm))
        }
        "Concat" => {
            let first = req(ins, 0, op)?;
            let r = first.rank();
            let axis = norm_axis(a.int("axis", 0), r)?;
            let mut shape = first.shape.clone();
            shape[axis] = 0;
            let mut parts = Vec::new();
            for v in ins.iter() {
                let v = v.as_ref().ok_or_else(|| run_err("Concat: missing input"))?;
                if v.rank() != r
                    || v.shape
                        .iter()
                        .enumerate()
                        .any(|(i, &d)| i != axis && d != first.shape[i])
                    || v.class() != first.class()
                {
                    return Err(run_err("Concat: inputs differ in rank, shape or type"));
                }
                shape[axis] += v.shape[axis];
                if v.numel() > 0 {
                    parts.push(v.k.clone());
                }
            }
            let d = bax(r, axis);
            if parts.is_empty() {
                return one(full(shape, 0.0, first.dtype, dev)?);
            }
            let k = super::tensor::cat(parts, d)?;
            one(Val::new(k, shape, first.dtype))
        }
        "Split" => {
            let x = req(ins, 0, op)?;
            let axis = norm_axis(a.int("axis", 0), x.rank())?;
            let n = x.shape[axis];
            let nout = node.outputs.len();
            let sizes: Vec<usize> = {
                let given: Option<Vec<i64>> = if cx.opset < 13 {
                    a.ints("split").map(|v| v.to_vec())
                } else {
                    opt(ins, 1).map(|v| v.host_i64())
                };
                match given {
                    Some(s) => to_usize(&s, "split")?,
                    None => {
                        let parts = a.int("num_outputs", nout as i64).max(1) as usize;
                        let chunk = n.div_ceil(parts);
                        if cx.opset < 18 && n % parts != 0 {
                            return Err(run_err(format!("Split: {n} not divisible by {parts}")));
                        }
                        let mut v = Vec::new();
                        let mut left = n;
                        for _ in 0..parts {
                            let c = chunk.min(left);
                            v.push(c);
                            left -= c;
                        }
                        v
                    }
                }
            };
            if sizes.iter().sum::<usize>() != n || sizes.len() != nout {
                return Err(run_err(format!(
                    "Split: sizes {sizes:?} do not split {n} into {nout} outputs"
                )));
            }
            let d = bax(x.rank(), axis);
            let mut out = Vec::new();
            let nonzero: Vec<usize> = sizes.iter().copied().filter(|&s| s > 0).collect();
            let mut pieces: std::collections::VecDeque<K<B>> = match &x.k {
                K::F(t) => t
                    .clone()
                    .split_with_sizes(nonzero, d)
                    .into_iter()
                    .map(K::F)
                    .collect(),
                K::I(t) => t
                    .clone()
                    .split_with_sizes(nonzero, d)
                    .into_iter()
                    .map(K::I)
                    .collect(),
                K::B(t) => t
                    .clone()
                    .split_with_sizes(nonzero, d)
                    .into_iter()
                    .map(K::B)
                    .collect(),
            };
            for s in sizes {
                let mut shape = x.shape.clone();
                shape[axis] = s;
                if s == 0 {
                    out.push(Some(full(shape, 0.0, x.dtype, dev)?));
                } else {
                    let k = pieces
                        .pop_front()
                        .ok_or_else(|| run_err("Split: missing piece"))?;
                    out.push(Some(Val::new(k, shape, x.dtype)));
                }
            }
            Ok(out)
        }
        "Slice" => {
            let x = req(ins, 0, op)?;
            let (starts, ends, axes, steps) = if cx.opset < 10 {
                (
                    a.ints("starts").unwrap_or(&[]).to_vec(),
                    a.ints("ends").unwrap_or(&[]).to_vec(),
                    a.ints("axes").map(|v| v.to_vec()),
                    None,
                )
            } else {
                (
                    req(ins, 1, op)?.host_i64(),
                    req(ins, 2, op)?.host_i64(),
                    opt(ins, 3).map(|v| v.host_i64()),
                    opt(ins, 4).map(|v| v.host_i64()),
                )
            };
            one(slice(x, &starts, &ends, axes, steps, dev)?)
        }
        "Gather" => {
            let x = req(ins, 0, op)?;
            let idx = req(ins, 1, op)?;
            let axis = norm_axis(a.int("axis", 0), x.rank())?;
            let n = x.shape[axis] as i64;
            let mut iv = idx.host_i64();
            for i in iv.iter_mut() {
                if *i < -n || *i >= n {
                    return Err(run_err(format!("Gather: index {i} out of range for {n}")));
                }
                if *i < 0 {
                    *i += n;
                }
            }
            let mut shape: Vec<usize> = x.shape[..axis].to_vec();
            shape.extend_from_slice(&idx.shape);
            shape.extend_from_slice(&x.shape[axis + 1..]);
            if shape.len() > R {
                return Err(run_unsup(format!("rank {} above {R}", shape.len())));
            }
            let cnt = iv.len();
            if cnt == 0 || x.numel() == 0 {
                return one(full(shape, 0.0, x.dtype, dev)?);
            }
            let it = Tensor::<B, 1, Int>::from_data(burn::tensor::TensorData::new(iv, [cnt]), dev);
            let d = bax(x.rank(), axis);
            let k = each!(x.k.clone(), |t| t.select(d, it.clone()));
            let mut mid = x.shape.clone();
            mid[axis] = cnt;
            one(Val::new(k, mid, x.dtype).reshape(shape))
        }
        "GatherElements" => {
            let x = req(ins, 0, op)?;
            let idx = req(ins, 1, op)?;
            let axis = norm_axis(a.int("axis", 0), x.rank())?;
            if idx.rank() != x.rank() {
                return Err(run_err("GatherElements: ranks differ"));
            }
            let n = x.shape[axis] as i64;
            let mut iv = idx.host_i64();
            for i in iv.iter_mut() {
                if *i < -n || *i >= n {
                    return Err(run_err(format!("GatherElements: index {i} out of range")));
                }
                if *i < 0 {
                    *i += n;
                }
            }
            // burn's gather wants the data and the indices of one shape outside the axis; ONNX
            // lets the indices be smaller there: the data is cut to them first.
            let mut ends: Vec<i64> = Vec::new();
            for (i, (&xd, &id)) in x.shape.iter().zip(&idx.shape).enumerate() {
                if i != axis && id > xd {
                    return Err(run_err(format!(
                        "GatherElements: indices dimension {i} ({id}) exceeds the data's ({xd})"
                    )));
                }
                ends.push(if i == axis { xd } else { id } as i64);
            }
            let x = &slice(x, &vec![0; ends.len()], &ends, None, None, dev)?;
            let it = mk_i::<B>(iv, idx.shape.clone(), DType::I64, dev).i();
            let d = bax(x.rank(), axis);
            let k = each!(x.k.clone(), |t| t.gather(d, it.clone()));
            one(Val::new(k, idx.shape.clone(), x.dtype))
        }
        "Expand" => {
            let x = req(ins, 0, op)?;
            let s = to_usize(&req(ins, 1, op)?.host_i64(), "shape")?;
            let shape = bshape(&x.shape, &s)?;
            if shape.len() > R {
                return Err(run_unsup(format!("rank {} above {R}", shape.len())));
            }
            if shape.contains(&0) {
                // burn's expand refuses a zero size; an empty result needs no data.
                return one(full(shape, 0.0, x.dtype, dev)?);
            }
            let p = pad(&shape);
            let k = each!(x.k.clone(), |t| t.expand(p));
            one(Val::new(k, shape, x.dtype))
        }
        "Tile" => {
            let x = req(ins, 0, op)?;
            let reps = to_usize(&req(ins, 1, op)?.host_i64(), "repeats")?;
            if reps.len() != x.rank() {
                return Err(run_err("Tile: repeats length differs from rank"));
            }
            let shape: Vec<usize> = x.shape.iter().zip(&reps).map(|(a, b)| a * b).collect();
            if shape.contains(&0) {
                return one(full(shape, 0.0, x.dtype, dev)?);
            }
            let p = pad(&reps);
            let k = each!(x.k.clone(), |t| t.repeat(&p));
            one(Val::new(k, shape, x.dtype))
        }
        "Pad" => super::nn::pad_op(node, ins, cx),
        "Resize" => super::nn::resize(node, ins, cx),
        "GatherND" | "ScatterND" | "ScatterElements" | "OneHot" | "Compress" => {
            super::nn::index_ops(node, ins, cx)
        }
        "NegativeLogLikelihoodLoss" | "SoftmaxCrossEntropyLoss" => super::nn::loss(node, ins, cx),
        "Shape" => {
            let x = req(ins, 0, op)?;
            let r = x.rank() as i64;
            let clampi = |v: i64| if v < 0 { (v + r).max(0) } else { v.min(r) };
            let s = clampi(a.int("start", 0)) as usize;
            let e = clampi(a.int("end", r)) as usize;
            let v: Vec<i64> = if s < e {
                x.shape[s..e].iter().map(|&d| d as i64).collect()
            } else {
                Vec::new()
            };
            let n = v.len();
            one(mk_i(v, vec![n], DType::I64, dev))
        }
        "Size" => {
            let x = req(ins, 0, op)?;
            one(mk_i(vec![x.numel() as i64], vec![], DType::I64, dev))
        }
        "Constant" => {
            let h = super::constant_value(a)?;
            one(super::tensor::upload(&h, dev)?)
        }
        "ConstantOfShape" => {
            let s = to_usize(&req(ins, 0, op)?.host_i64(), "shape")?;
            let (v, dt) = match a.tensor("value") {
                Some(t) => {
                    let h = crate::value::HostTensor::from_proto(t)
                        .map_err(|e| run_err(e.to_string()))?;
                    let x = h.to_f64s().ok_or_else(|| run_unsup("value type"))?;
                    (x.first().copied().unwrap_or(0.0), h.dtype)
                }
                None => (0.0, DType::F32),
            };
            one(full(s, v, dt, dev)?)
        }
        "Range" => {
            let s = req(ins, 0, op)?;
            let l = req(ins, 1, op)?;
            let d = req(ins, 2, op)?;
            let v: Vec<f64> = if s.class() == Class::Int {
                let (s, l, d) = (scalar_i(s)?, scalar_i(l)?, scalar_i(d)?);
                if d == 0 {
                    return Err(run_err("Range: delta is 0"));
                }
                let n = ((l - s) as f64 / d as f64).ceil().max(0.0) as i64;
                (0..n).map(|i| (s + i * d) as f64).collect()
            } else {
                let (s, l, d) = (scalar_f(s)?, scalar_f(l)?, scalar_f(d)?);
                if d == 0.0 {
                    return Err(run_err("Range: delta is 0"));
                }
                let n = ((l - s) / d).ceil().max(0.0) as usize;
                (0..n).map(|i| s + i as f64 * d).collect()
            };
            let n = v.len();
            one(mk_from_f64(&v, vec![n], s.dtype, dev)?)
        }
        "Dropout" => {
            let x = req(ins, 0, op)?;
            let training = opt(ins, 2)
                .map(|v| v.host_i64())
                .is_some_and(|v| v.first() == Some(&1));
            if training {
                return Err(run_unsup("Dropout in training mode"));
            }
            let mut out = vec![Some(x.clone())];
            if node.outputs.len() > 1 {
                out.push(Some(mk_b(vec![true; x.numel()], x.shape.clone(), dev)));
            }
            Ok(out)
        }
        "Trilu" => {
            let x = req(ins, 0, op)?;
            if x.rank() < 2 {
                return Err(run_err("Trilu: rank below 2"));
            }
            let kk = opt(ins, 1).map(scalar_i).transpose()?.unwrap_or(0);
            let upper = a.int("upper", 1) != 0;
            let k = match &x.k {
                K::F(t) => K::F(if upper {
                    t.clone().triu(kk)
                } else {
                    t.clone().tril(kk)
                }),
                K::I(t) => K::I(if upper {
                    t.clone().triu(kk)
                } else {
                    t.clone().tril(kk)
                }),
                K::B(_) => return Err(run_unsup("Trilu on bool")),
            };
            one(Val::new(k, x.shape.clone(), x.dtype))
        }
        "DepthToSpace" | "SpaceToDepth" => {
            let x = req(ins, 0, op)?;
            if x.rank() != 4 {
                return Err(run_err(format!("{op}: input must be 4-D")));
            }
            let b = a.int("blocksize", 0);
            if b <= 0 {
                return Err(run_err(format!("{op}: bad blocksize {b}")));
            }
            let b = b as usize;
            let (n, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
            if op == "DepthToSpace" {
                if c % (b * b) != 0 {
                    return Err(run_err("DepthToSpace: channels not divisible"));
                }
                let c2 = c / (b * b);
                let crd = a.string("mode", "DCR") == "CRD";
                let (s6, perm) = if crd {
                    (vec![n, c2, b, b, h, w], [0, 1, 4, 2, 5, 3])
                } else {
                    (vec![n, b, b, c2, h, w], [0, 3, 4, 1, 5, 2])
                };
                let y = permute(x.clone().reshape(s6), &perm);
                one(y.reshape(vec![n, c2, h * b, w * b]))
            } else {
                if h % b != 0 || w % b != 0 {
                    return Err(run_err("SpaceToDepth: spatial size not divisible"));
                }
                let y = permute(
                    x.clone().reshape(vec![n, c, h / b, b, w / b, b]),
                    &[0, 3, 5, 1, 2, 4],
                );
                one(y.reshape(vec![n, c * b * b, h / b, w / b]))
            }
        }
        "EyeLike" => {
            let x = req(ins, 0, op)?;
            if x.rank() != 2 {
                return Err(run_err("EyeLike: input must be 2-D"));
            }
            let dt = match a.int_opt("dtype") {
                Some(c) => DType::from_code(c as i32),
                None => x.dtype,
            };
            let k = a.int("k", 0);
            let (r, c) = (x.shape[0], x.shape[1]);
            let mut v = vec![0.0; r * c];
            for i in 0..r {
                let j = i as i64 + k;
                if j >= 0 && (j as usize) < c {
                    v[i * c + j as usize] = 1.0;
                }
            }
            one(mk_from_f64(&v, vec![r, c], dt, dev)?)
        }
        "NonZero" => {
            let x = req(ins, 0, op)?;
            let r = x.rank();
            if r == 0 {
                return Err(run_unsup("NonZero of a scalar"));
            }
            let pos = x.b().argwhere();
            let n = pos.dims()[0];
            if n == 0 {
                return one(mk_i(Vec::new(), vec![r, 0], DType::I64, dev));
            }
            let cols = pos.slice([0..n, R - r..R]).swap_dims(0, 1);
            let shape = vec![r, n];
            let t: Tensor<B, R, Int> = cols.reshape(pad(&shape));
            one(Val::new(K::I(t), shape, DType::I64))
        }
        "TopK" => {
            let x = req(ins, 0, op)?;
            let k = if cx.opset < 10 {
                a.int("k", 0)
            } else {
                scalar_i(req(ins, 1, op)?)?
            };
            let axis = norm_axis(a.int("axis", -1), x.rank())?;
            let n = x.shape[axis];
            if k < 0 || k as usize > n {
                return Err(run_err(format!("TopK: k = {k} for axis of {n}")));
            }
            let k = k as usize;
            let largest = a.int("largest", 1) != 0;
            let d = bax(x.rank(), axis);
            let mut shape = x.shape.clone();
            shape[axis] = k;
            if k == 0 {
                return Ok(vec![
                    Some(full(shape.clone(), 0.0, x.dtype, dev)?),
                    Some(full(shape, 0.0, DType::I64, dev)?),
                ]);
            }
            let (vals, idx) = match &x.k {
                K::F(t) => {
                    if largest {
                        let (v, i) = t.clone().topk_with_indices(k, d);
                        (K::F(v), i)
                    } else {
                        let (v, i) = t.clone().neg().topk_with_indices(k, d);
                        (K::F(v.neg()), i)
                    }
                }
                K::I(t) => {
                    if largest {
                        let (v, i) = t.clone().topk_with_indices(k, d);
                        (K::I(v), i)
                    } else {
                        let (v, i) = t.clone().neg().topk_with_indices(k, d);
                        (K::I(v.neg()), i)
                    }
                }
                K::B(_) => return Err(run_unsup("TopK on bool")),
            };
            Ok(vec![
                Some(Val::new(vals, shape.clone(), x.dtype)),
                Some(Val::new(K::I(idx), shape, DType::I64)),
            ])
        }
        other => Err(run_unsup(format!("op {other}"))),
    }
}

fn arith<B: BurnBackend>(op: &str, x: &Val<B>, y: &Val<B>) -> Res<Val<B>> {
    let shape = bshape(&x.shape, &y.shape)?;
    macro_rules! bin {
        ($p:expr, $q:expr) => {
            match op {
                "Add" => $p.add($q),
                "Sub" => $p.sub($q),
                "Mul" => $p.mul($q),
                _ => $p.div($q),
            }
        };
    }
    let k = match (&x.k, &y.k) {
        (K::F(p), K::F(q)) => K::F(bin!(p.clone(), q.clone())),
        (K::I(p), K::I(q)) => {
            if op == "Div" && y.host_i64().contains(&0) {
                return Err(run_err("integer division by zero"));
            }
            K::I(bin!(p.clone(), q.clone()))
        }
        _ => return Err(run_unsup(format!("{op} on {} and {}", x.dtype, y.dtype))),
    };
    Ok(Val::new(k, shape, x.dtype))
}

pub(crate) fn cast<B: BurnBackend>(x: &Val<B>, to: DType) -> Res<Val<B>> {
    let cls = class(to).ok_or_else(|| run_unsup(format!("Cast to {to}")))?;
    let k = match cls {
        Class::Float => K::F(x.f()),
        Class::Int => match &x.k {
            K::F(t) => {
                if x.host_f64().iter().any(|v| !v.is_finite()) {
                    return Err(run_unsup("Cast of non-finite floats to integers"));
                }
                K::I(t.clone().int())
            }
            _ => K::I(x.i()),
        },
        Class::Bool => K::B(x.b()),
    };
    Ok(wrap_narrow(Val::new(k, x.shape.clone(), to)))
}

/// `v` with its integer elements wrapped around to the values its element type stores when
/// that type is narrower than burn's one integer type (i64 on NdArray): a u8 subtraction that
/// goes below 0 gives 255 - .., as in the library the model describes, not a negative number
/// the next op would then compute with.
///
/// Floats of a type narrower than the backend's float type (f16 and bf16, and f32 when the
/// backend computes in f64) are rounded to that type: each op computes wide and stores its
/// result in the declared type, as ONNX Runtime's kernels do, so a Cast or a Floor downstream
/// sees the value the model holds.
pub(crate) fn wrap_narrow<B: BurnBackend>(v: Val<B>) -> Val<B> {
    let wide = 8 * std::mem::size_of::<B::IntElem>();
    let to = v.dtype;
    if let K::F(t) = &v.k
        && to.is_float()
        && to
            .bits()
            .is_some_and(|b| b < 8 * std::mem::size_of::<B::FloatElem>())
        && v.numel() > 0
    {
        let x: Vec<f64> = t.to_data().iter::<f64>().collect();
        let r: Vec<f64> = match to {
            DType::F16 => x.iter().map(|&a| half::f16::from_f64(a).to_f64()).collect(),
            DType::BF16 => x
                .iter()
                .map(|&a| half::bf16::from_f64(a).to_f64())
                .collect(),
            _ => x.iter().map(|&a| a as f32 as f64).collect(),
        };
        let t = Tensor::<B, R>::from_data(TensorData::new(r, t.dims()), &t.device());
        return Val::new(K::F(t), v.shape.clone(), to);
    }
    match (&v.k, to.bits()) {
        (K::I(t), Some(bits)) if bits < wide && to.is_int() => {
            let m = 1i64 << bits;
            // ((v mod m) + m) mod m, whatever sign the remainder takes.
            let modulo =
                |t: Tensor<B, R, Int>| t.remainder_scalar(m).add_scalar(m).remainder_scalar(m);
            let wrapped = if to.is_signed_int() {
                modulo(t.clone().add_scalar(m / 2)).sub_scalar(m / 2)
            } else {
                modulo(t.clone())
            };
            Val::new(K::I(wrapped), v.shape.clone(), to)
        }
        _ => v,
    }
}

fn matmul<B: BurnBackend>(x: &Val<B>, y: &Val<B>) -> Res<Val<B>> {
    if x.rank() == 0 || y.rank() == 0 {
        return Err(run_err("MatMul of a scalar"));
    }
    let (mut sa, mut sb) = (x.shape.clone(), y.shape.clone());
    let a1 = sa.len() == 1;
    if a1 {
        sa.insert(0, 1);
    }
    let b1 = sb.len() == 1;
    if b1 {
        sb.push(1);
    }
    let (na, nb) = (sa.len(), sb.len());
    if sa[na - 1] != sb[nb - 2] {
        return Err(run_err(format!(
            "MatMul: inner dimensions of {:?} and {:?} differ",
            x.shape, y.shape
        )));
    }
    let mut out = bshape(&sa[..na - 2], &sb[..nb - 2])?;
    out.push(sa[na - 2]);
    out.push(sb[nb - 1]);
    if out.len() > R {
        return Err(run_unsup(format!("rank {} above {R}", out.len())));
    }
    let mut fin = out.clone();
    if b1 {
        fin.pop();
    }
    if a1 {
        let l = fin.len();
        fin.remove(l - 1 - usize::from(!b1));
    }
    let (pa, pb) = (pad(&sa), pad(&sb));
    let k = match (&x.k, &y.k) {
        (K::F(p), K::F(q)) => K::F(p.clone().reshape(pa).matmul(q.clone().reshape(pb))),
        (K::I(p), K::I(q)) => K::I(p.clone().reshape(pa).matmul(q.clone().reshape(pb))),
        _ => return Err(run_unsup("MatMul on these types")),
    };
    Ok(Val::new(k, out, x.dtype).reshape(fin))
}

fn reshape_target(input: &[usize], spec: &[i64], allowzero: bool) -> Res<Vec<usize>> {
    let n: usize = input.iter().product();
    let mut out = Vec::with_capacity(spec.len());
    let mut infer = None;
    for (i, &d) in spec.iter().enumerate() {
        if d == -1 {
            if infer.is_some() {
                return Err(run_err("Reshape: more than one -1"));
            }
            infer = Some(i);
            out.push(1);
        } else if d == 0 && !allowzero {
            out.push(
                *input
                    .get(i)
                    .ok_or_else(|| run_err("Reshape: 0 beyond the input rank"))?,
            );
        } else if d < 0 {
            return Err(run_err(format!("Reshape: bad dimension {d}")));
        } else {
            out.push(d as usize);
        }
    }
    if let Some(i) = infer {
        let rest: usize = out.iter().product();
        if rest == 0 || !n.is_multiple_of(rest) {
            return Err(run_err(format!(
                "Reshape: cannot infer -1 for {input:?} -> {spec:?}"
            )));
        }
        out[i] = n / rest;
    }
    if out.iter().product::<usize>() != n {
        return Err(run_err(format!("Reshape: {input:?} cannot become {out:?}")));
    }
    if out.len() > R {
        return Err(run_unsup(format!("rank {} above {R}", out.len())));
    }
    Ok(out)
}

/// Exclusive cumulative sum along burn axis `d`: the inclusive sum shifted by one, a zero
/// first (subtracting the element instead would turn a NaN or Inf element into NaN).
fn exclusive<B: BurnBackend, K>(t: Tensor<B, R, K>, d: usize) -> Tensor<B, R, K>
where
    K: burn::tensor::Numeric<B>,
    K::Elem: burn::tensor::Element,
{
    let n = t.dims()[d];
    if n <= 1 {
        return t.zeros_like();
    }
    let zero = t.clone().narrow(d, 0, 1).zeros_like();
    let inc = t.narrow(d, 0, n - 1).cumsum(d);
    Tensor::cat(vec![zero, inc], d)
}

fn slice<B: BurnBackend>(
    x: &Val<B>,
    starts: &[i64],
    ends: &[i64],
    axes: Option<Vec<i64>>,
    steps: Option<Vec<i64>>,
    dev: &B::Device,
) -> Res<Val<B>> {
    let r = x.rank();
    let axes = match axes {
        Some(a) => norm_axes(&a, r)?,
        None => (0..starts.len()).collect(),
    };
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(run_err(
            "Slice: starts, ends, axes and steps differ in length",
        ));
    }
    let mut sl = vec![Slice::new(0, None, 1); R];
    let mut shape = x.shape.clone();
    for i in 0..starts.len() {
        let ax = axes[i];
        let dim = x.shape[ax] as i64;
        let step = steps[i];
        if step == 0 {
            return Err(run_err("Slice: step 0"));
        }
        let fix = |v: i64| if v < 0 { v + dim } else { v };
        let (mut s, mut e) = (fix(starts[i]), fix(ends[i]));
        let (lo, hi, len) = if step > 0 {
            s = s.clamp(0, dim);
            e = e.clamp(0, dim);
            let len = if e > s { (e - s + step - 1) / step } else { 0 };
            (s, e.max(s), len)
        } else {
            s = s.clamp(-1, dim - 1);
            e = e.clamp(-1, dim - 1);
            let len = if s > e {
                (s - e + (-step) - 1) / (-step)
            } else {
                0
            };
            // burn walks [lo, hi) backwards from hi - 1
            (e + 1, (s + 1).max(e + 1), len)
        };
        shape[ax] = len as usize;
        sl[bax(r, ax)] = Slice::new(lo as isize, Some(hi as isize), step as isize);
    }
    if shape.contains(&0) {
        return full(shape, 0.0, x.dtype, dev);
    }
    let k = each!(x.k.clone(), |t| t.slice(sl.as_slice()));
    Ok(Val::new(k, shape, x.dtype))
}

fn reduce<B: BurnBackend>(
    op: &str,
    x: &Val<B>,
    axes: &[usize],
    keep: bool,
    dev: &B::Device,
) -> Res<Val<B>> {
    let r = x.rank();
    let mut kshape = x.shape.clone();
    for &a in axes {
        kshape[a] = 1;
    }
    let out_shape: Vec<usize> = if keep {
        kshape.clone()
    } else {
        x.shape
            .iter()
            .enumerate()
            .filter(|(i, _)| !axes.contains(i))
            .map(|(_, &d)| d)
            .collect()
    };
    if x.numel() == 0 {
        let n: usize = kshape.iter().product();
        if n > 0 {
            let v = match op {
                "ReduceProd" => 1.0,
                "ReduceMax" | "ReduceLogSum" | "ReduceLogSumExp" => f64::NEG_INFINITY,
                "ReduceMin" => f64::INFINITY,
                "ReduceMean" => f64::NAN,
                _ => 0.0,
            };
            if x.class() == Class::Int && !v.is_finite() {
                let v = if v > 0.0 { i64::MAX } else { i64::MIN } as f64;
                return full(out_shape, v, x.dtype, dev);
            }
            return full(out_shape, v, x.dtype, dev);
        }
        return full(out_shape, 0.0, x.dtype, dev);
    }
    let dims: Vec<usize> = axes.iter().map(|&a| bax(r, a)).collect();
    let k = match &x.k {
        K::F(t) => {
            let mut t = t.clone();
            match op {
                "ReduceL1" => t = t.abs(),
                "ReduceL2" | "ReduceSumSquare" => t = t.clone().mul(t),
                "ReduceLogSumExp" => t = t.exp(),
                _ => {}
            }
            for &d in &dims {
                t = match op {
                    "ReduceMean" => t.mean_dim(d),
                    "ReduceMax" => t.max_dim(d),
                    "ReduceMin" => t.min_dim(d),
                    "ReduceProd" => t.prod_dim(d),
                    _ => t.sum_dim(d),
                };
            }
            match op {
                "ReduceL2" => t = t.sqrt(),
                "ReduceLogSum" | "ReduceLogSumExp" => t = t.log(),
                _ => {}
            }
            K::F(t)
        }
        K::I(t) => {
            let mut t = t.clone();
            match op {
                "ReduceL1" => t = t.abs(),
                "ReduceSumSquare" => t = t.clone().mul(t),
                "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" => {}
                _ => return Err(run_unsup(format!("{op} on integers"))),
            }
            for &d in &dims {
                t = match op {
                    "ReduceMean" => t.mean_dim(d),
                    "ReduceMax" => t.max_dim(d),
                    "ReduceMin" => t.min_dim(d),
                    "ReduceProd" => t.prod_dim(d),
                    _ => t.sum_dim(d),
                };
            }
            K::I(t)
        }
        K::B(_) => return Err(run_unsup(format!("{op} on bool"))),
    };
    Ok(Val::new(k, kshape, x.dtype).reshape(out_shape))
}

/// Attribute value as a float list or int list helper for other modules.
pub(crate) fn ints_attr(a: &[mutagraph_ir::attr::Attribute], name: &str) -> Option<Vec<i64>> {
    match a.attr(name) {
        Some(AttrValue::Ints(v)) => Some(v.clone()),
        _ => None,
    }
}
