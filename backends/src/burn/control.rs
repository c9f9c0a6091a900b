//! Control flow (If, Loop, Scan), sequences and optionals, and Identity on any value.
//!
//! A subgraph runs through the same interpreter ([`super::eval`]) in a scope whose parent is
//! the node's, so it reads the values it captures from the graphs around it. Conditions and
//! trip counts are read back to the host, as a burn program decides its control flow in Rust;
//! per-iteration results are stacked with burn's `cat`. Sequences are host-side vectors of
//! burn tensors. What Scan's attributes mean, the Loop iteration cap and the value of a scan
//! output of a body that never ran come from [`crate::semantics::control`], shared with the
//! reference.
use super::ops::{Cx, Res, full, norm_axis};
use super::tensor::{Item, R, Val, bax, cat, each, mk_b, mk_i, run_err, run_unsup};
use super::{Step, eval};
use crate::semantics::control::{
    MAX_LOOP_ITERATIONS, ScanSpec, empty_scan_output, sequence_position,
};
use burn::tensor::backend::Backend as BurnBackend;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Graph;

/// The ops of this module: they take and give values of any kind.
pub(crate) const OPS: &[&str] = &[
    "Identity",
    "If",
    "Loop",
    "Optional",
    "OptionalGetElement",
    "OptionalHasElement",
    "Scan",
    "SequenceAt",
    "SequenceConstruct",
    "SequenceEmpty",
    "SequenceErase",
    "SequenceInsert",
    "SequenceLength",
];

type Items<B> = Vec<Option<Item<B>>>;

fn tensor<B: BurnBackend>(ins: &[Option<Item<B>>], i: usize) -> Res<Val<B>> {
    ins.get(i)
        .cloned()
        .flatten()
        .ok_or_else(|| run_err(format!("required input {i} is missing")))?
        .into_tensor(&format!("input {i}"))
}

fn opt_tensor<B: BurnBackend>(ins: &[Option<Item<B>>], i: usize) -> Res<Option<Val<B>>> {
    match ins.get(i).cloned().flatten() {
        None => Ok(None),
        Some(v) => v.into_tensor(&format!("input {i}")).map(Some),
    }
}

fn sequence<B: BurnBackend>(ins: &[Option<Item<B>>], i: usize) -> Res<Vec<Item<B>>> {
    match ins.get(i).cloned().flatten() {
        Some(Item::Seq(s)) => Ok(s),
        Some(v) => Err(run_err(format!(
            "input {i} is {} where a sequence is expected",
            v.describe()
        ))),
        None => Err(run_err(format!("required input {i} is missing"))),
    }
}

/// The one element of `v`, read back to the host.
fn scalar<B: BurnBackend>(v: &Val<B>, what: &str) -> Res<i64> {
    let x = v.host_i64();
    match x.as_slice() {
        [x] => Ok(*x),
        _ => Err(run_err(format!("{what} has {} elements, not one", x.len()))),
    }
}

/// A boolean condition: true when its one element is not zero.
fn condition<B: BurnBackend>(v: &Val<B>, what: &str) -> Res<bool> {
    if v.numel() != 1 {
        return Err(run_err(format!(
            "{what} has {} elements, not one",
            v.numel()
        )));
    }
    // read as an integer, as `Val::host_i64` reads bools (GPU backends store them as ints)
    Ok(v.b().int().into_data().iter::<i64>().next() == Some(1))
}

/// Runs one node of this module.
pub(crate) fn exec<B: BurnBackend>(
    step: &Step<Val<B>>,
    ins: Items<B>,
    cx: &Cx<B>,
    scope: &super::Scope<B>,
) -> Res<Items<B>> {
    let node = &step.node;
    let one = |v: Item<B>| Ok(vec![Some(v)]);
    match node.op_type.as_str() {
        "Identity" => one(ins
            .into_iter()
            .next()
            .flatten()
            .ok_or_else(|| run_err("required input 0 is missing"))?),
        "If" => {
            let c = condition(&tensor(&ins, 0)?, "the condition")?;
            let branch = step.sub(if c { "then_branch" } else { "else_branch" })?;
            let outs = eval(branch, cx, Some(scope), Vec::new())?;
            Ok(outs.into_iter().map(Some).collect())
        }
        "Loop" => run_loop(step, &ins, cx, scope),
        "Scan" => scan(step, &ins, cx, scope),
        "SequenceEmpty" => one(Item::Seq(Vec::new())),
        "SequenceConstruct" => {
            let items = (0..ins.len())
                .map(|i| tensor(&ins, i).map(Item::T))
                .collect::<Res<Vec<_>>>()?;
            one(Item::Seq(items))
        }
        "SequenceInsert" => {
            let mut s = sequence(&ins, 0)?;
            let t = tensor(&ins, 1)?;
            let p = opt_tensor(&ins, 2)?
                .map(|p| scalar(&p, "the position"))
                .transpose()?;
            let at = sequence_position(p, s.len(), true)?;
            s.insert(at, Item::T(t));
            one(Item::Seq(s))
        }
        "SequenceAt" => {
            let s = sequence(&ins, 0)?;
            let p = scalar(&tensor(&ins, 1)?, "the position")?;
            let at = sequence_position(Some(p), s.len(), false)?;
            one(s[at].clone())
        }
        "SequenceErase" => {
            let mut s = sequence(&ins, 0)?;
            let p = opt_tensor(&ins, 1)?
                .map(|p| scalar(&p, "the position"))
                .transpose()?;
            let at = sequence_position(p, s.len(), false)?;
            s.remove(at);
            one(Item::Seq(s))
        }
        "SequenceLength" => {
            let s = sequence(&ins, 0)?;
            one(Item::T(mk_i(
                vec![s.len() as i64],
                vec![],
                DType::I64,
                cx.dev,
            )))
        }
        "Optional" => one(Item::Opt(ins.into_iter().next().flatten().map(Box::new))),
        "OptionalHasElement" => {
            let has = !matches!(ins.first(), None | Some(None) | Some(Some(Item::Opt(None))));
            one(Item::T(mk_b(vec![has], vec![], cx.dev)))
        }
        "OptionalGetElement" => match ins.into_iter().next().flatten() {
            Some(Item::Opt(Some(v))) => one(*v),
            Some(Item::Opt(None)) | None => Err(run_err("OptionalGetElement of an empty optional")),
            Some(v) => one(v),
        },
        other => Err(run_unsup(format!("op {other}"))),
    }
}

/// Stacks values of one shape and type along a new axis `axis` (`0..=rank`).
fn stack<B: BurnBackend>(items: Vec<Val<B>>, axis: usize, dev: &B::Device) -> Res<Val<B>> {
    let first = items.first().ok_or_else(|| run_err("stacking nothing"))?;
    let (shape, dtype) = (first.shape.clone(), first.dtype);
    let r = shape.len() + 1;
    if r > R {
        return Err(run_unsup(format!("stacked rank {r} above {R}")));
    }
    let mut out = shape.clone();
    out.insert(axis, items.len());
    if out.contains(&0) {
        return full(out, 0.0, dtype, dev);
    }
    let mut one = shape.clone();
    one.insert(axis, 1);
    let mut parts = Vec::with_capacity(items.len());
    for v in items {
        if v.shape != shape || v.dtype != dtype {
            return Err(run_err(format!(
                "values to stack differ: {} {:?} and {dtype} {shape:?}",
                v.dtype, v.shape
            )));
        }
        parts.push(v.reshape(one.clone()).k);
    }
    Ok(Val::new(cat(parts, bax(r, axis))?, out, dtype))
}

/// Entry `i` of `v` along ONNX axis `axis`, that axis dropped.
fn take<B: BurnBackend>(v: &Val<B>, axis: usize, i: usize) -> Val<B> {
    let d = bax(v.rank(), axis);
    let mut kept = v.shape.clone();
    kept[axis] = 1;
    let k = each!(v.k.clone(), |t| t.narrow(d, i, 1));
    let mut shape = v.shape.clone();
    shape.remove(axis);
    Val::new(k, kept, v.dtype).reshape(shape)
}

/// The scan outputs of a body that never ran: output `i` of `g` stacked along `axis` zero
/// times.
fn empty<B: BurnBackend>(g: &Graph, i: usize, axis: i64, cx: &Cx<B>) -> Res<Val<B>> {
    let (dtype, shape) = empty_scan_output(g, i, axis);
    full(shape, 0.0, dtype, cx.dev)
}

fn body_graph<B: BurnBackend>(step: &Step<Val<B>>) -> Res<&Graph> {
    step.node
        .graph("body")
        .ok_or_else(|| run_err(format!("{} without attribute body", step.node.op_type)))
}

/// `Loop`: inputs M (optional trip count), cond (optional), the initial loop-carried values;
/// the body takes (iteration, cond, carried...) and gives (cond, carried..., scan outputs...);
/// the outputs are the final carried values and the scan outputs stacked along a new axis 0.
fn run_loop<B: BurnBackend>(
    step: &Step<Val<B>>,
    ins: &[Option<Item<B>>],
    cx: &Cx<B>,
    scope: &super::Scope<B>,
) -> Res<Items<B>> {
    let body = step.sub("body")?;
    let trips = opt_tensor(ins, 0)?.map(|m| scalar(&m, "M")).transpose()?;
    let mut cond = match opt_tensor(ins, 1)? {
        Some(c) => condition(&c, "cond")?,
        None => true,
    };
    let mut carried: Vec<Item<B>> = Vec::new();
    for (i, v) in ins.iter().enumerate().skip(2) {
        carried.push(
            v.clone()
                .ok_or_else(|| run_err(format!("loop-carried input {i} is missing")))?,
        );
    }
    let nc = carried.len();
    if body.inputs.len() != 2 + nc || body.outputs.len() < 1 + nc {
        return Err(run_err(format!(
            "the body takes {} inputs and gives {} outputs for {nc} loop-carried values",
            body.inputs.len(),
            body.outputs.len()
        )));
    }
    let nscan = body.outputs.len() - 1 - nc;
    let mut scans: Vec<Vec<Val<B>>> = (0..nscan).map(|_| Vec::new()).collect();
    let mut it = 0i64;
    while cond && trips.is_none_or(|m| it < m) {
        if it >= MAX_LOOP_ITERATIONS {
            return Err(run_err(format!(
                "Loop ran {MAX_LOOP_ITERATIONS} iterations and would run more"
            )));
        }
        let mut args = vec![
            Item::T(mk_i(vec![it], vec![], DType::I64, cx.dev)),
            Item::T(mk_b(vec![cond], vec![], cx.dev)),
        ];
        args.append(&mut carried);
        let bound = body.inputs.iter().cloned().zip(args).collect();
        let mut outs = eval(body, cx, Some(scope), bound)?.into_iter();
        let c = outs
            .next()
            .ok_or_else(|| run_err("the body gives no condition"))?;
        cond = condition(
            &c.into_tensor("the body's condition")?,
            "the body's condition",
        )?;
        carried = outs.by_ref().take(nc).collect();
        for (s, v) in scans.iter_mut().zip(outs) {
            s.push(v.into_tensor("a scan output")?);
        }
        it += 1;
    }
    let g = body_graph(step)?;
    let mut result: Items<B> = carried.into_iter().map(Some).collect();
    for (j, s) in scans.into_iter().enumerate() {
        result.push(Some(Item::T(if s.is_empty() {
            empty(g, 1 + nc + j, 0, cx)?
        } else {
            stack(s, 0, cx.dev)?
        })));
    }
    Ok(result)
}

/// Runs a scan body over `len` steps: the states start as `states`, scan input `j` gives its
/// entry along `axes[j]` (last to first when `spec.input_reverse[j]`); returns the final
/// states and each scan output's per-step values in step order.
#[allow(clippy::type_complexity)]
fn scan_steps<B: BurnBackend>(
    step: &Step<Val<B>>,
    spec: &ScanSpec,
    mut states: Vec<Item<B>>,
    inputs: &[Val<B>],
    axes: &[usize],
    cx: &Cx<B>,
    scope: &super::Scope<B>,
) -> Res<(Vec<Item<B>>, Vec<Vec<Val<B>>>)> {
    let body = step.sub("body")?;
    let len = inputs
        .first()
        .map(|t| t.shape[axes[0]])
        .ok_or_else(|| run_err("Scan without scan inputs"))?;
    if inputs.iter().zip(axes).any(|(t, &a)| t.shape[a] != len) {
        return Err(run_err("scan inputs differ in sequence length"));
    }
    if body.inputs.len() != spec.states + spec.scan_inputs {
        return Err(run_err(format!(
            "the body takes {} inputs for {} states and {} scan inputs",
            body.inputs.len(),
            spec.states,
            spec.scan_inputs
        )));
    }
    let mut outs: Vec<Vec<Val<B>>> = (0..spec.scan_outputs).map(|_| Vec::new()).collect();
    for s in 0..len {
        let mut args = std::mem::take(&mut states);
        for (j, t) in inputs.iter().enumerate() {
            let i = if spec.input_reverse[j] {
                len - 1 - s
            } else {
                s
            };
            args.push(Item::T(take(t, axes[j], i)));
        }
        let bound = body.inputs.iter().cloned().zip(args).collect();
        let mut r = eval(body, cx, Some(scope), bound)?.into_iter();
        states = r.by_ref().take(spec.states).collect();
        for (o, v) in outs.iter_mut().zip(r) {
            o.push(v.into_tensor("a scan output")?);
        }
    }
    Ok((states, outs))
}

/// `Scan`: from opset 9 the N states then the M scan inputs, each read along its own axis
/// and direction, and the scan outputs stacked along their own axes and directions; Scan-8
/// runs the same per entry of the batch axis that everything carries first, after a leading
/// `sequence_lens`.
fn scan<B: BurnBackend>(
    step: &Step<Val<B>>,
    ins: &[Option<Item<B>>],
    cx: &Cx<B>,
    scope: &super::Scope<B>,
) -> Res<Items<B>> {
    let g = body_graph(step)?;
    let spec = ScanSpec::parse(&step.node, cx.opset, ins.len(), g.outputs.len())?;
    let lead = usize::from(spec.batched);
    let states: Vec<Item<B>> = (lead..lead + spec.states)
        .map(|i| {
            ins[i]
                .clone()
                .ok_or_else(|| run_err(format!("state input {i} is missing")))
        })
        .collect::<Res<_>>()?;
    let inputs: Vec<Val<B>> = (lead + spec.states..ins.len())
        .map(|i| tensor(ins, i))
        .collect::<Res<_>>()?;
    if !spec.batched {
        let axes: Vec<usize> = inputs
            .iter()
            .zip(&spec.input_axes)
            .map(|(t, &a)| norm_axis(a, t.rank()))
            .collect::<Res<_>>()?;
        let (states, outs) = scan_steps(step, &spec, states, &inputs, &axes, cx, scope)?;
        let mut result: Items<B> = states.into_iter().map(Some).collect();
        for (j, mut o) in outs.into_iter().enumerate() {
            if spec.output_reverse[j] {
                o.reverse();
            }
            let axis = spec.output_axes[j];
            result.push(Some(Item::T(match o.first() {
                None => empty(g, spec.states + j, axis, cx)?,
                Some(v) => {
                    let a = norm_axis(axis, v.rank() + 1)?;
                    stack(o, a, cx.dev)?
                }
            })));
        }
        return Ok(result);
    }
    // Scan-8: every state and scan input is [batch, ...], scan inputs [batch, sequence, ...].
    let first = inputs
        .first()
        .ok_or_else(|| run_err("Scan without scan inputs"))?;
    if first.rank() < 2 {
        return Err(run_err("Scan-8 scan inputs need [batch, sequence, ...]"));
    }
    let (batch, seq) = (first.shape[0], first.shape[1]);
    let tensors: Vec<Val<B>> = states
        .into_iter()
        .map(|s| s.into_tensor("a Scan-8 state"))
        .collect::<Res<_>>()?;
    if tensors
        .iter()
        .chain(&inputs)
        .any(|t| t.shape.first() != Some(&batch))
        || inputs.iter().any(|t| t.rank() < 2 || t.shape[1] != seq)
    {
        return Err(run_err("Scan: batch or sequence sizes differ"));
    }
    if let Some(l) = opt_tensor(ins, 0)?
        && l.host_i64()
            .iter()
            .any(|&n| n.clamp(0, seq as i64) < seq as i64)
    {
        return Err(run_unsup(
            "Scan-8 with sequences shorter than the batch maximum",
        ));
    }
    if seq == 0 {
        return Err(run_unsup("Scan-8 with empty sequences"));
    }
    let mut finals: Vec<Vec<Val<B>>> = (0..spec.states).map(|_| Vec::new()).collect();
    let mut outs: Vec<Vec<Val<B>>> = (0..spec.scan_outputs).map(|_| Vec::new()).collect();
    for b in 0..batch {
        let st: Vec<Item<B>> = tensors.iter().map(|t| Item::T(take(t, 0, b))).collect();
        let rows: Vec<Val<B>> = inputs.iter().map(|t| take(t, 0, b)).collect();
        let axes = vec![0; rows.len()];
        let (st, per) = scan_steps(step, &spec, st, &rows, &axes, cx, scope)?;
        for (f, v) in finals.iter_mut().zip(st) {
            f.push(v.into_tensor("a Scan-8 state")?);
        }
        for (o, p) in outs.iter_mut().zip(per) {
            o.push(stack(p, 0, cx.dev)?);
        }
    }
    let mut result = Vec::new();
    for f in finals.into_iter().chain(outs) {
        result.push(Some(Item::T(stack(f, 0, cx.dev)?)));
    }
    Ok(result)
}
