//! Values made from attributes and shapes: Constant, ConstantOfShape, Range, EyeLike; and Trilu
//! (its input under a triangular mask).
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

fn proto_to_t(p: &mutagraph_ir::tensor::Tensor) -> R<T> {
    let h = crate::value::HostTensor::from_proto(p).map_err(|e| err(e.to_string()))?;
    crate::reference::host_to_t(&h)
}

pub(super) fn op_constant_of_shape(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let shape = dims(&inp(ins, 0)?.ints()?)?;
    let total = check_size(&shape)?;
    let v = match n.tensor("value") {
        Some(p) => proto_to_t(p)?,
        None => T::f(DType::F32, vec![1], vec![0.0]),
    };
    if v.len() != 1 {
        return Err(err("ConstantOfShape value must have one element"));
    }
    one(v.take(shape, &vec![0; total]))
}

pub(super) fn op_constant(_: &Cx, n: &Node, _: &[Option<&V>]) -> Out {
    let a = n
        .attributes
        .first()
        .ok_or_else(|| err("Constant without value"))?;
    one(match (&a.name[..], &a.value) {
        ("value", AttrValue::Tensor(p)) => proto_to_t(p)?,
        ("value_float", AttrValue::Float(f)) => T::f(DType::F32, vec![], vec![*f as f64]),
        ("value_floats", AttrValue::Floats(f)) => T::f(
            DType::F32,
            vec![f.len()],
            f.iter().map(|&x| x as f64).collect(),
        ),
        ("value_int", AttrValue::Int(i)) => T::scalar_i64(*i),
        ("value_ints", AttrValue::Ints(i)) => T::vec_i64(i.clone()),
        ("value_string", AttrValue::String(s)) => T {
            dt: DType::String,
            shape: vec![],
            buf: Buf::S(vec![s.clone()]),
        },
        ("value_strings", AttrValue::Strings(s)) => T {
            dt: DType::String,
            shape: vec![s.len()],
            buf: Buf::S(s.clone()),
        },
        (name, _) => return Err(unsup(format!("Constant attribute {name}"))),
    })
}

pub(super) fn op_range(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let s = inp(ins, 0)?;
    let l = inp(ins, 1)?;
    let d = inp(ins, 2)?;
    match &s.buf {
        Buf::I(_) => {
            let (a, b, c) = (s.scalar_i()?, l.scalar_i()?, d.scalar_i()?);
            if c == 0 {
                return Err(err("Range delta 0"));
            }
            let n = ((b - a) as f64 / c as f64).ceil().max(0.0) as usize;
            check_size(&[n])?;
            one(T::i(
                s.dt,
                vec![n],
                (0..n).map(|i| a + i as i64 * c).collect(),
            ))
        }
        _ => {
            let (a, b, c) = (s.scalar_f()?, l.scalar_f()?, d.scalar_f()?);
            if c == 0.0 {
                return Err(err("Range delta 0"));
            }
            let n = ((b - a) / c).ceil().max(0.0) as usize;
            check_size(&[n])?;
            one(T::f(
                s.dt,
                vec![n],
                (0..n).map(|i| a + i as f64 * c).collect(),
            ))
        }
    }
}

pub(super) fn op_eye_like(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    if t.rank() != 2 {
        return Err(err("EyeLike needs a 2-D input"));
    }
    let dt = n
        .int_opt("dtype")
        .map(|c| DType::from_code(c as i32))
        .unwrap_or(t.dt);
    let k = n.int("k", 0);
    let (h, w) = (t.shape[0], t.shape[1]);
    let mut v = vec![0.0; h * w];
    for i in 0..h as i64 {
        let j = i + k;
        if j >= 0 && j < w as i64 {
            v[i as usize * w + j as usize] = 1.0;
        }
    }
    one(T::from_f64s(dt, vec![h, w], v)?)
}

pub(super) fn op_trilu(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let k = match opt(ins, 1)? {
        Some(k) => k.scalar_i()?,
        None => 0,
    };
    let upper = n.int("upper", 1) != 0;
    if t.rank() < 2 {
        return Err(err("Trilu needs rank >= 2"));
    }
    let (h, w) = (t.shape[t.rank() - 2], t.shape[t.rank() - 1]);
    let mut out = t.clone();
    let zero = t.buf.zeros_like(1);
    for p in 0..t.len() {
        let i = ((p / w.max(1)) % h.max(1)) as i64;
        let j = (p % w.max(1)) as i64;
        let keep = if upper { j - i >= k } else { j - i <= k };
        if !keep {
            out.buf.set_from(p, &zero, 0)?;
        }
    }
    one(out)
}
