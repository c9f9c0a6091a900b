//! RNN, GRU and LSTM over burn tensors, as a burn user would write a recurrent layer: the input
//! projection of every time step in one matmul, then one step per time step (a matmul with the
//! recurrence weights, the gates sliced out, burn's activation functions), forward, reverse or
//! both; `sequence_lens` masks the steps past each batch entry's length. What the attributes
//! mean and which shapes fit them is read by [`crate::semantics::rnn`], as for the reference.
use super::ops::{Cx, Outs, Res, full, need_float, opt, req};
use super::tensor::{R, ReshapeExact, Val, reshaped, run_err};
use crate::semantics::rnn::{Act, Cell, Dims, Spec};
use burn::tensor::activation as act;
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::{Bool, Tensor, TensorData};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

/// Activation function `a` on `t`, with burn's functions.
fn apply<B: BurnBackend>(a: Act, t: Tensor<B, 2>) -> Tensor<B, 2> {
    match a {
        Act::Sigmoid => act::sigmoid(t),
        Act::Tanh => act::tanh(t),
        Act::Relu => act::relu(t),
        Act::Affine(alpha, beta) => t.mul_scalar(alpha).add_scalar(beta),
        Act::LeakyRelu(alpha) => act::leaky_relu(t, alpha),
        Act::ThresholdedRelu(alpha) => act::thresholded_relu(t, alpha),
        Act::ScaledTanh(alpha, beta) => act::tanh(t.mul_scalar(beta)).mul_scalar(alpha),
        Act::HardSigmoid(alpha, beta) => act::hard_sigmoid(t, alpha, beta),
        Act::Elu(alpha) => act::elu(t, alpha),
        Act::Softsign => act::softsign(t),
        Act::Softplus => act::softplus(t, 1.0),
    }
}

/// A float input as a burn tensor of rank `D` (its ONNX shape), `None` when absent.
fn float_input<B: BurnBackend, const D: usize>(
    ins: &[Option<Val<B>>],
    i: usize,
    op: &str,
) -> Res<Option<Tensor<B, D>>> {
    let Some(v) = opt(ins, i) else {
        return Ok(None);
    };
    let mut dims = [0usize; D];
    dims.copy_from_slice(&v.shape);
    Ok(Some(need_float(v, op)?.reshape(dims)))
}

/// One time step of one direction: the new hidden state (and cell state for LSTM).
struct Step<'a, B: BurnBackend> {
    spec: &'a Spec,
    /// f, g, h.
    funcs: [Act; 3],
    /// R transposed: [hidden, gates * hidden].
    rt: Tensor<B, 2>,
    /// The recurrence bias Rb: [1, gates * hidden], when given.
    rb: Option<Tensor<B, 2>>,
    /// Peepholes i, o, f: [1, hidden] each.
    peep: Option<[Tensor<B, 2>; 3]>,
}

impl<B: BurnBackend> Step<'_, B> {
    fn clip(&self, t: Tensor<B, 2>) -> Tensor<B, 2> {
        match self.spec.clip {
            Some(c) => t.clamp(-c, c),
            None => t,
        }
    }

    /// Gate `k` of a [batch, gates * hidden] tensor.
    fn gate(&self, t: &Tensor<B, 2>, k: usize) -> Tensor<B, 2> {
        let h = self.spec.hidden;
        t.clone().narrow(1, k * h, h)
    }

    /// `h R^T + Rb` restricted to gates `from..from + n`.
    fn recur(&self, h: Tensor<B, 2>, from: usize, n: usize) -> Tensor<B, 2> {
        let hs = self.spec.hidden;
        let r = self.rt.clone().narrow(1, from * hs, n * hs);
        let y = h.matmul(r);
        match &self.rb {
            Some(b) => y.add(b.clone().narrow(1, from * hs, n * hs)),
            None => y,
        }
    }

    /// `xw`: this step's `X W^T + Wb` [batch, gates * hidden].
    fn run(
        &self,
        xw: Tensor<B, 2>,
        h: Tensor<B, 2>,
        c: Tensor<B, 2>,
    ) -> (Tensor<B, 2>, Tensor<B, 2>) {
        let [f, g, hf] = self.funcs;
        match self.spec.cell {
            Cell::Rnn => {
                let pre = xw.add(self.recur(h, 0, 1));
                (apply(f, self.clip(pre)), c)
            }
            Cell::Gru => {
                let zr = self.recur(h.clone(), 0, 2);
                let z = apply(f, self.clip(self.gate(&xw, 0).add(self.gate(&zr, 0))));
                let r = apply(f, self.clip(self.gate(&xw, 1).add(self.gate(&zr, 1))));
                let hh = if self.spec.linear_before_reset {
                    let rh = self.recur(h.clone(), 2, 1);
                    self.gate(&xw, 2).add(r.mul(rh))
                } else {
                    self.gate(&xw, 2).add(self.recur(r.mul(h.clone()), 2, 1))
                };
                let hh = apply(g, self.clip(hh));
                // (1 - z) * hh + z * h
                let keep = z.clone().neg().add_scalar(1.0);
                (keep.mul(hh).add(z.mul(h)), c)
            }
            Cell::Lstm => {
                let pre = xw.add(self.recur(h, 0, 4));
                let peep = |k: usize, state: &Tensor<B, 2>| -> Option<Tensor<B, 2>> {
                    self.peep.as_ref().map(|p| p[k].clone().mul(state.clone()))
                };
                let with = |t: Tensor<B, 2>, p: Option<Tensor<B, 2>>| match p {
                    Some(p) => t.add(p),
                    None => t,
                };
                let i = apply(f, self.clip(with(self.gate(&pre, 0), peep(0, &c))));
                let fg = apply(f, self.clip(with(self.gate(&pre, 2), peep(2, &c))));
                let cc = apply(g, self.clip(self.gate(&pre, 3)));
                let cn = fg.mul(c).add(i.mul(cc));
                let o = apply(f, self.clip(with(self.gate(&pre, 1), peep(1, &cn))));
                (o.mul(apply(hf, cn.clone())), cn)
            }
        }
    }
}

/// `sequence_lens` as a mask [seq, batch, 1]: step t of batch entry b runs when t < lens[b]; the
/// others keep the state and give zeros in Y. `None` when no entry is short.
fn step_masks<B: BurnBackend>(
    lens: Option<&Val<B>>,
    seq: usize,
    batch: usize,
    dev: &B::Device,
) -> Option<Tensor<B, 3, Bool>> {
    match lens {
        Some(l) => {
            let lens: Vec<usize> = l
                .host_i64()
                .iter()
                .map(|&v| v.clamp(0, seq as i64) as usize)
                .collect();
            if lens.iter().all(|&l| l == seq) {
                None
            } else {
                let m: Vec<bool> = (0..seq)
                    .flat_map(|t| lens.iter().map(move |&l| t < l))
                    .collect();
                Some(Tensor::from_data(TensorData::new(m, [seq, batch, 1]), dev))
            }
        }
        None => None,
    }
}

/// Runs the steps of direction `d` over the input projection `xw` [seq, batch, gates * hidden]
/// from the state (`h`, `c`): each step's output, and the final state.
fn run_steps<B: BurnBackend>(
    step: &Step<'_, B>,
    xw: &Tensor<B, 3>,
    masks: Option<&Tensor<B, 3, Bool>>,
    d: usize,
    (mut h, mut c): (Tensor<B, 2>, Tensor<B, 2>),
) -> (Vec<Option<Tensor<B, 2>>>, Tensor<B, 2>, Tensor<B, 2>) {
    let [seq, batch, gh] = xw.dims();
    let hs = h.dims()[1];
    let mut y: Vec<Option<Tensor<B, 2>>> = vec![None; seq];
    for s in 0..seq {
        let t = if step.spec.reverse(d) { seq - 1 - s } else { s };
        let xt = xw.clone().narrow(0, t, 1).reshape_exact([batch, gh]);
        let (hn, cn) = step.run(xt, h.clone(), c.clone());
        match masks {
            Some(m) => {
                let m = m
                    .clone()
                    .narrow(0, t, 1)
                    .reshape_exact([batch, 1])
                    .expand([batch, hs]);
                y[t] = Some(hn.zeros_like().mask_where(m.clone(), hn.clone()));
                h = h.mask_where(m.clone(), hn);
                c = c.mask_where(m, cn);
            }
            None => {
                y[t] = Some(hn.clone());
                h = hn;
                c = cn;
            }
        }
    }
    (y, h, c)
}

/// Y from the outputs of each direction ([seq, batch, hidden] each; none when `seq` is 0).
fn stack_y<B: BurnBackend>(
    ys: Vec<Tensor<B, 3>>,
    y_shape: Vec<usize>,
    batch_first: bool,
    dt: DType,
    cx: &Cx<B>,
) -> Res<Val<B>> {
    Ok(if ys.is_empty() {
        full(y_shape, 0.0, dt, cx.dev)?
    } else {
        // [seq, dirs, batch, hidden]
        let y: Tensor<B, 4> = Tensor::stack(ys, 1);
        let y = if batch_first {
            y.permute([2, 0, 1, 3])
        } else {
            y
        };
        Val::float(reshaped(y, &y_shape), y_shape, dt)
    })
}

/// `RNN`, `GRU` or `LSTM`: outputs Y, Y_h (and Y_c).
pub(crate) fn recurrent<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let spec = Spec::parse(node)?;
    let shapes: Vec<Option<&[usize]>> = (0..ins.len().min(8))
        .map(|i| opt(ins, i).map(|v| v.shape.as_slice()))
        .collect();
    let Dims { seq, batch, input } = spec.dims(&shapes)?;
    let x = req(ins, 0, op)?;
    let dt = x.dtype;
    let (dirs, hs, g) = (spec.dirs(), spec.hidden, spec.cell.gates());
    let lstm = spec.cell == Cell::Lstm;
    let y_shape = if spec.batch_first {
        vec![batch, seq, dirs, hs]
    } else {
        vec![seq, dirs, batch, hs]
    };
    let state_shape = if spec.batch_first {
        vec![batch, dirs, hs]
    } else {
        vec![dirs, batch, hs]
    };
    let outputs = |y: Val<B>, yh: Val<B>, yc: Val<B>| -> Outs<B> {
        let mut out = vec![Some(y), Some(yh)];
        if lstm {
            out.push(Some(yc));
        }
        out
    };
    if batch == 0 {
        let empty = |s: &[usize]| full(s.to_vec(), 0.0, dt, cx.dev);
        return Ok(outputs(
            empty(&y_shape)?,
            empty(&state_shape)?,
            empty(&state_shape)?,
        ));
    }
    // X as [seq, batch, input] and W, read only when there is something to project (burn
    // reads a 0 in a reshape target as "keep this dimension").
    let project = seq > 0 && input > 0;
    let xw_in: Option<(Tensor<B, 3>, Tensor<B, 3>)> = if project {
        let x3: Tensor<B, 3> = float_input(ins, 0, op)?.ok_or_else(|| run_err("X is missing"))?;
        let x3 = if spec.batch_first {
            x3.swap_dims(0, 1)
        } else {
            x3
        };
        let w: Tensor<B, 3> = float_input(ins, 1, op)?.ok_or_else(|| run_err("W is missing"))?;
        Some((x3, w))
    } else {
        None
    };
    let r: Tensor<B, 3> = float_input(ins, 2, op)?.ok_or_else(|| run_err("R is missing"))?;
    let b: Option<Tensor<B, 2>> = float_input(ins, 3, op)?;
    // initial states as [directions, batch, hidden]
    let state = |i: usize| -> Res<Option<Tensor<B, 3>>> {
        let t: Option<Tensor<B, 3>> = float_input(ins, i, op)?;
        Ok(t.map(|t| {
            if spec.batch_first {
                t.swap_dims(0, 1)
            } else {
                t
            }
        }))
    };
    let h0 = state(5)?;
    let (c0, p) = if lstm {
        (state(6)?, float_input::<B, 2>(ins, 7, op)?)
    } else {
        (None, None)
    };
    // sequence_lens: step t of batch entry b runs when t < lens[b]; the others keep the
    // state and give zeros in Y. One mask [seq, batch, 1], only when some entry is short.
    let masks = step_masks(opt(ins, 4), seq, batch, cx.dev);
    let (mut ys, mut yhs, mut ycs) = (Vec::new(), Vec::new(), Vec::new());
    for d in 0..dirs {
        let pick3 = |t: &Tensor<B, 3>, rows: usize, cols: usize| -> Tensor<B, 2> {
            t.clone().narrow(0, d, 1).reshape_exact([rows, cols])
        };
        // The input projection of every step at once: [seq, batch, gates * hidden].
        let bias = b.as_ref().map(|b| b.clone().narrow(0, d, 1));
        let wb = bias.as_ref().map(|b| b.clone().narrow(1, 0, g * hs));
        let rb = bias.map(|b| b.narrow(1, g * hs, g * hs));
        let xw: Option<Tensor<B, 3>> = (seq > 0).then(|| {
            let xw: Tensor<B, 2> = match &xw_in {
                Some((x3, w)) => x3
                    .clone()
                    .reshape_exact([seq * batch, input])
                    .matmul(pick3(w, g * hs, input).transpose()),
                None => Tensor::zeros([seq * batch, g * hs], cx.dev),
            };
            let xw = match wb {
                Some(wb) => xw.add(wb),
                None => xw,
            };
            xw.reshape_exact([seq, batch, g * hs])
        });
        let step = Step {
            spec: &spec,
            funcs: spec.functions(d),
            rt: pick3(&r, g * hs, hs).transpose(),
            rb,
            peep: p.as_ref().map(|p| {
                let p = p.clone().narrow(0, d, 1);
                [0, 1, 2].map(|k| p.clone().narrow(1, k * hs, hs))
            }),
        };
        let init = |s: &Option<Tensor<B, 3>>| -> Tensor<B, 2> {
            match s {
                Some(s) => pick3(s, batch, hs),
                None => Tensor::zeros([batch, hs], cx.dev),
            }
        };
        let (y, h, c) = match &xw {
            Some(xw) => run_steps(&step, xw, masks.as_ref(), d, (init(&h0), init(&c0))),
            None => (Vec::new(), init(&h0), init(&c0)),
        };
        let y: Vec<Tensor<B, 2>> = y.into_iter().flatten().collect();
        if seq > 0 {
            ys.push(Tensor::stack::<3>(y, 0));
        }
        yhs.push(h);
        ycs.push(c);
    }
    let yv = stack_y(ys, y_shape, spec.batch_first, dt, cx)?;
    let states = |v: Vec<Tensor<B, 2>>| -> Val<B> {
        let t: Tensor<B, 3> = Tensor::stack(v, 0);
        let t = if spec.batch_first {
            t.swap_dims(0, 1)
        } else {
            t
        };
        let t: Tensor<B, R> = reshaped(t, &state_shape);
        Val::float(t, state_shape.clone(), dt)
    };
    Ok(outputs(yv, states(yhs), states(ycs)))
}
