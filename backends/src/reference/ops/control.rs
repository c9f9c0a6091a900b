//! Control flow: If, Loop, Scan.
use super::reshape::transpose;
use super::slice::{concat, slice_axis};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, eval_subgraph, inp, opt};
use crate::semantics::control::{MAX_LOOP_ITERATIONS, ScanSpec, body, empty_scan_output};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::{Graph, Node};

type Out = R<Vec<V>>;

/// An empty scan output: the body's `i`-th output, stacked along `axis` zero times.
fn empty_scan(g: &Graph, i: usize, axis: i64) -> R<T> {
    let (dt, shape) = empty_scan_output(g, i, axis);
    Ok(match kind(dt)? {
        Kind::Str => T {
            dt,
            shape,
            buf: Buf::S(vec![]),
        },
        _ => T::from_f64s(dt, shape, vec![])?,
    })
}

pub(super) fn op_if(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let c = inp(ins, 0)?;
    let take = match &c.buf {
        Buf::B(v) if v.len() == 1 => v[0],
        _ => c.scalar_f()? != 0.0,
    };
    let g = body(n, if take { "then_branch" } else { "else_branch" })?;
    eval_subgraph(cx, g, vec![])
}

/// Stacks equally shaped tensors along a new axis at `axis`.
pub(super) fn stack(items: &[T], axis: usize) -> R<T> {
    let first = items.first().ok_or_else(|| err("stack of nothing"))?;
    let mut parts = Vec::with_capacity(items.len());
    for t in items {
        if t.shape != first.shape {
            return Err(err(format!(
                "scan outputs of shapes {:?} and {:?}",
                first.shape, t.shape
            )));
        }
        let mut s = t.shape.clone();
        s.insert(axis, 1);
        parts.push(t.reshaped(s)?);
    }
    concat(&parts.iter().collect::<Vec<_>>(), axis)
}

pub(super) fn as_tensor(v: V) -> R<T> {
    match v {
        V::T(t) => Ok(t),
        _ => Err(err("expected a tensor")),
    }
}

pub(super) fn op_loop(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let g = body(n, "body")?;
    let max_trip = match opt(ins, 0)? {
        Some(t) => Some(t.scalar_i()?),
        None => None,
    };
    let mut cond = match opt(ins, 1)? {
        Some(t) => t.scalar_i()? != 0,
        None => true,
    };
    let mut carried: Vec<V> = Vec::new();
    for i in 2..ins.len() {
        carried.push(
            ins[i]
                .ok_or_else(|| err("Loop: missing loop-carried input"))?
                .clone(),
        );
    }
    let nc = carried.len();
    let nscan = g.outputs.len().saturating_sub(1 + nc);
    let mut scans: Vec<Vec<V>> = vec![Vec::new(); nscan];
    let mut it = 0i64;
    while cond && max_trip.is_none_or(|m| it < m) {
        if it >= MAX_LOOP_ITERATIONS {
            return Err(err(format!(
                "Loop ran {MAX_LOOP_ITERATIONS} iterations and would run more"
            )));
        }
        let mut args = vec![
            V::T(T::i(DType::I64, vec![], vec![it])),
            V::T(T::b(vec![], vec![cond])),
        ];
        args.extend(carried.iter().cloned());
        let outs = eval_subgraph(cx, g, args)?;
        if outs.len() != 1 + nc + nscan {
            return Err(err("Loop body output count"));
        }
        let mut outs = outs.into_iter();
        let c = as_tensor(outs.next().unwrap())?;
        cond = c.scalar_i()? != 0;
        carried = outs.by_ref().take(nc).collect();
        for (s, v) in scans.iter_mut().zip(outs) {
            s.push(v);
        }
        it += 1;
    }
    let mut result = carried;
    for (j, s) in scans.into_iter().enumerate() {
        if s.is_empty() {
            result.push(V::T(empty_scan(g, 1 + nc + j, 0)?));
        } else if s.iter().all(|v| matches!(v, V::T(_))) {
            let ts: Vec<T> = s.into_iter().map(as_tensor).collect::<R<_>>()?;
            result.push(V::T(stack(&ts, 0)?));
        } else {
            return Err(unsup("Loop scan outputs that are not tensors"));
        }
    }
    Ok(result)
}

pub(super) fn op_scan(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    if cx.opset < 9 {
        return scan8(cx, n, ins);
    }
    let g = body(n, "body")?;
    let spec = ScanSpec::parse(n, cx.opset, ins.len(), g.outputs.len())?;
    let (ns, k) = (spec.states, spec.scan_outputs);
    let mut states: Vec<V> = (0..ns)
        .map(|i| ins[i].cloned().ok_or_else(|| err("Scan: missing state")))
        .collect::<R<_>>()?;
    let scan_in: Vec<&T> = (ns..ins.len()).map(|i| inp(ins, i)).collect::<R<_>>()?;
    let (in_axes, out_axes) = (&spec.input_axes, &spec.output_axes);
    let axes: Vec<usize> = scan_in
        .iter()
        .zip(in_axes)
        .map(|(t, &a)| norm_axis(a, t.rank()))
        .collect::<R<_>>()?;
    let len = match scan_in.first() {
        Some(t) => t.shape[axes[0]],
        None => return Err(err("Scan without scan inputs")),
    };
    if scan_in.iter().zip(&axes).any(|(t, &a)| t.shape[a] != len) {
        return Err(err("Scan inputs differ in sequence length"));
    }
    let mut outs: Vec<Vec<T>> = vec![Vec::new(); k];
    for step in 0..len {
        let mut args = states.clone();
        for (j, t) in scan_in.iter().enumerate() {
            let i = if spec.input_reverse[j] {
                len - 1 - step
            } else {
                step
            };
            let s = slice_axis(t, axes[j], i, 1);
            let mut shape = s.shape.clone();
            shape.remove(axes[j]);
            args.push(V::T(s.reshaped(shape)?));
        }
        let r = eval_subgraph(cx, g, args)?;
        if r.len() != ns + k {
            return Err(err("Scan body output count"));
        }
        let mut r = r.into_iter();
        states = r.by_ref().take(ns).collect();
        for (o, v) in outs.iter_mut().zip(r) {
            o.push(as_tensor(v)?);
        }
    }
    let mut result = states;
    for (j, mut o) in outs.into_iter().enumerate() {
        if spec.output_reverse[j] {
            o.reverse();
        }
        if o.is_empty() {
            result.push(V::T(empty_scan(g, ns + j, out_axes[j])?));
            continue;
        }
        let r = o[0].rank() + 1;
        let a = norm_axis(out_axes[j], r)?;
        let s = stack(&o, 0)?;
        // Move the new axis 0 to `a`.
        let mut perm: Vec<usize> = (1..r).collect();
        perm.insert(a, 0);
        result.push(V::T(transpose(&s, &perm)?));
    }
    Ok(result)
}

/// Scan-8: a leading optional `sequence_lens`, then states and scan inputs that all carry a
/// batch dimension first; the body runs per batch entry.
fn scan8(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let g = body(n, "body")?;
    let spec = ScanSpec::parse(n, cx.opset, ins.len(), g.outputs.len())?;
    let lens = opt(ins, 0)?.map(|t| t.ints()).transpose()?;
    let (ns, k) = (spec.states, spec.scan_outputs);
    let states: Vec<&T> = (1..1 + ns).map(|i| inp(ins, i)).collect::<R<_>>()?;
    let scans: Vec<&T> = (1 + ns..ins.len()).map(|i| inp(ins, i)).collect::<R<_>>()?;
    let first = scans
        .first()
        .ok_or_else(|| err("Scan without scan inputs"))?;
    if first.rank() < 2 {
        return Err(err("Scan-8 scan inputs need [batch, sequence, ...]"));
    }
    let (batch, seq) = (first.shape[0], first.shape[1]);
    if states
        .iter()
        .chain(&scans)
        .any(|t| t.shape.first() != Some(&batch))
        || scans.iter().any(|t| t.rank() < 2 || t.shape[1] != seq)
    {
        return Err(err("Scan: batch or sequence sizes differ"));
    }
    let drop0 = |t: T| -> R<T> {
        let s = t.shape[1..].to_vec();
        t.reshaped(s)
    };
    let mut final_states: Vec<Vec<T>> = vec![Vec::new(); ns];
    let mut outs: Vec<Vec<T>> = vec![Vec::new(); k];
    for b in 0..batch {
        let len = match &lens {
            Some(l) => (*l.get(b).ok_or_else(|| err("sequence_lens length"))?).clamp(0, seq as i64)
                as usize,
            None => seq,
        };
        let mut st: Vec<V> = states
            .iter()
            .map(|t| drop0(slice_axis(t, 0, b, 1)).map(V::T))
            .collect::<R<_>>()?;
        let rows: Vec<T> = scans
            .iter()
            .map(|t| drop0(slice_axis(t, 0, b, 1)))
            .collect::<R<_>>()?;
        let mut per: Vec<Vec<T>> = vec![Vec::new(); k];
        for step in 0..len {
            let mut args = st.clone();
            for (j, t) in rows.iter().enumerate() {
                let i = if spec.input_reverse[j] {
                    len - 1 - step
                } else {
                    step
                };
                args.push(V::T(drop0(slice_axis(t, 0, i, 1))?));
            }
            let r = eval_subgraph(cx, g, args)?;
            if r.len() != ns + k {
                return Err(err("Scan body output count"));
            }
            let mut r = r.into_iter();
            st = r.by_ref().take(ns).collect();
            for (o, v) in per.iter_mut().zip(r) {
                o.push(as_tensor(v)?);
            }
        }
        if len < seq {
            return Err(unsup(
                "Scan-8 with sequences shorter than the batch maximum",
            ));
        }
        for (f, v) in final_states.iter_mut().zip(st) {
            f.push(as_tensor(v)?);
        }
        for (o, p) in outs.iter_mut().zip(per) {
            if p.is_empty() {
                return Err(unsup("Scan-8 with empty sequences"));
            }
            o.push(stack(&p, 0)?);
        }
    }
    let mut result = Vec::new();
    for f in final_states.into_iter().chain(outs) {
        result.push(V::T(stack(&f, 0)?));
    }
    Ok(result)
}
