//! Sequences and optionals.
use super::control::as_tensor;
use super::control::stack;
use super::slice::{concat, slice_axis};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, eval_subgraph, inp, one, opt};
use crate::semantics::control::{body, sequence_position};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

// Sequences.

fn seq<'v>(ins: &[Option<&'v V>], i: usize) -> R<&'v Vec<V>> {
    match ins.get(i).copied().flatten() {
        Some(V::Seq(s)) => Ok(s),
        _ => Err(err(format!("input {i}: expected a sequence"))),
    }
}

fn position(t: Option<&T>, len: usize, insert: bool) -> R<usize> {
    sequence_position(t.map(|p| p.scalar_i()).transpose()?, len, insert)
}

pub(super) fn op_sequence_empty(_: &Cx, _: &Node, _: &[Option<&V>]) -> Out {
    Ok(vec![V::Seq(vec![])])
}

pub(super) fn op_sequence_construct(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let items: Vec<V> = (0..ins.len())
        .map(|i| inp(ins, i).map(|t| V::T(t.clone())))
        .collect::<R<_>>()?;
    Ok(vec![V::Seq(items)])
}

pub(super) fn op_sequence_insert(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let mut s = seq(ins, 0)?.clone();
    let t = inp(ins, 1)?;
    let p = position(opt(ins, 2)?, s.len(), true)?;
    s.insert(p, V::T(t.clone()));
    Ok(vec![V::Seq(s)])
}

pub(super) fn op_sequence_at(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let s = seq(ins, 0)?;
    let p = position(Some(inp(ins, 1)?), s.len(), false)?;
    Ok(vec![s[p].clone()])
}

pub(super) fn op_sequence_erase(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let mut s = seq(ins, 0)?.clone();
    if s.is_empty() {
        return Err(err("SequenceErase of an empty sequence"));
    }
    let p = position(opt(ins, 1)?, s.len(), false)?;
    s.remove(p);
    Ok(vec![V::Seq(s)])
}

pub(super) fn op_sequence_length(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    one(T::scalar_i64(seq(ins, 0)?.len() as i64))
}

pub(super) fn op_split_to_sequence(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let t = inp(ins, 0)?;
    let axis = norm_axis(n.int("axis", 0), t.rank())?;
    let dim = t.shape[axis];
    let keep = n.int("keepdims", 1) != 0;
    let (sizes, squeeze) = match opt(ins, 1)? {
        None => (vec![1; dim], !keep),
        Some(s) if s.rank() == 0 => {
            let k = s.scalar_i()?;
            if k < 1 {
                return Err(err("split size must be positive"));
            }
            let k = k as usize;
            let mut v = vec![k; dim / k];
            if dim % k != 0 {
                v.push(dim % k);
            }
            (v, false)
        }
        Some(s) => (dims(&s.ints()?)?, false),
    };
    if sizes.iter().sum::<usize>() != dim {
        return Err(err(format!("split {sizes:?} of {dim}")));
    }
    let mut lo = 0;
    let mut out = Vec::new();
    for s in sizes {
        let mut p = slice_axis(t, axis, lo, s);
        if squeeze {
            let mut sh = p.shape.clone();
            sh.remove(axis);
            p = p.reshaped(sh)?;
        }
        out.push(V::T(p));
        lo += s;
    }
    Ok(vec![V::Seq(out)])
}

pub(super) fn op_concat_from_sequence(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let s = seq(ins, 0)?;
    let ts: Vec<T> = s.iter().cloned().map(as_tensor).collect::<R<_>>()?;
    let first = ts
        .first()
        .ok_or_else(|| err("ConcatFromSequence of an empty sequence"))?;
    let new_axis = n.int("new_axis", 0) != 0;
    let r = first.rank() + new_axis as usize;
    let axis = norm_axis(n.int_opt("axis").ok_or_else(|| err("missing axis"))?, r)?;
    if new_axis {
        one(stack(&ts, axis)?)
    } else {
        one(concat(&ts.iter().collect::<Vec<_>>(), axis)?)
    }
}

pub(super) fn op_sequence_map(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let g = body(n, "body")?;
    let len = seq(ins, 0)?.len();
    let nout = g.outputs.len();
    let mut outs: Vec<Vec<V>> = vec![Vec::new(); nout];
    for i in 0..len {
        let mut args = Vec::new();
        for v in ins {
            match v {
                Some(V::Seq(s)) => args.push(
                    s.get(i)
                        .cloned()
                        .ok_or_else(|| err("SequenceMap: sequences differ in length"))?,
                ),
                Some(v) => args.push((*v).clone()),
                None => return Err(err("SequenceMap: missing input")),
            }
        }
        for (o, v) in outs.iter_mut().zip(eval_subgraph(cx, g, args)?) {
            o.push(v);
        }
    }
    Ok(outs.into_iter().map(V::Seq).collect())
}

// Optionals.

pub(super) fn op_optional(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    Ok(vec![V::Opt(
        ins.first().copied().flatten().map(|v| Box::new(v.clone())),
    )])
}

pub(super) fn op_optional_has_element(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let has = match ins.first().copied().flatten() {
        None | Some(V::Opt(None)) => false,
        Some(_) => true,
    };
    one(T::b(vec![], vec![has]))
}

pub(super) fn op_optional_get_element(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    match ins.first().copied().flatten() {
        Some(V::Opt(Some(v))) => Ok(vec![(**v).clone()]),
        Some(V::Opt(None)) | None => Err(err("OptionalGetElement of an empty optional")),
        Some(v) => Ok(vec![v.clone()]),
    }
}
