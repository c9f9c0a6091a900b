//! Recurrent ops: RNN, GRU, LSTM (forward, reverse, bidirectional; both layouts), and the
//! layer under ONNX Runtime's DynamicQuantizeLSTM (its products on quantized operands).
use super::quantize::fake_quantize;
use super::unary::{sigmoid, softplus};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, opt};
use crate::semantics::rnn::{Act, Cell, Dims, Spec};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

/// An activation function on one value.
fn apply(a: Act, x: f64) -> f64 {
    match a {
        Act::Sigmoid => sigmoid(x),
        Act::Tanh => x.tanh(),
        Act::Relu => {
            if x < 0.0 {
                0.0
            } else {
                x
            }
        }
        Act::Affine(a, b) => a * x + b,
        Act::LeakyRelu(a) => {
            if x < 0.0 {
                a * x
            } else {
                x
            }
        }
        Act::ThresholdedRelu(a) => {
            if x > a {
                x
            } else {
                0.0
            }
        }
        Act::ScaledTanh(a, b) => a * (b * x).tanh(),
        Act::HardSigmoid(a, b) => (a * x + b).clamp(0.0, 1.0),
        Act::Elu(a) => {
            if x < 0.0 {
                a * (x.exp() - 1.0)
            } else {
                x
            }
        }
        Act::Softsign => x / (1.0 + x.abs()),
        Act::Softplus => softplus(x),
    }
}

/// `out[j] = sum_k m[(row0 + j) * cols + k] * v[k]` for `rows` rows.
fn matvec(m: &[f64], row0: usize, rows: usize, cols: usize, v: &[f64]) -> Vec<f64> {
    (0..rows)
        .map(|j| {
            let r = &m[(row0 + j) * cols..(row0 + j + 1) * cols];
            r.iter().zip(v).map(|(a, b)| a * b).sum()
        })
        .collect()
}

/// `v` clipped to [-clip, clip] when the node has a clip.
fn clipped(clip: Option<f64>, v: f64) -> f64 {
    match clip {
        Some(c) => v.max(-c).min(c),
        None => v,
    }
}

/// One GRU step of one batch entry: `h` from the gate pre-activations `gx` = W x and
/// `gh` = R h, the biases (Wb, Rb) and the direction's R `rd`.
fn gru_step(
    spec: &Spec,
    [f, gact]: [Act; 2],
    (gx, gh): (&[f64], &[f64]),
    (wb, rb): (&[f64], &[f64]),
    rd: &[f64],
    h: &mut [f64],
) {
    let hs = spec.hidden;
    let lbr = spec.linear_before_reset;
    let cl = |v: f64| clipped(spec.clip, v);
    let z: Vec<f64> = (0..hs)
        .map(|j| apply(f, cl(gx[j] + gh[j] + wb[j] + rb[j])))
        .collect();
    let rr: Vec<f64> = (0..hs)
        .map(|j| {
            let k = hs + j;
            apply(f, cl(gx[k] + gh[k] + wb[k] + rb[k]))
        })
        .collect();
    let hh: Vec<f64> = if lbr {
        (0..hs)
            .map(|j| {
                let k = 2 * hs + j;
                apply(gact, cl(gx[k] + rr[j] * (gh[k] + rb[k]) + wb[k]))
            })
            .collect()
    } else {
        let rh: Vec<f64> = (0..hs).map(|j| rr[j] * h[j]).collect();
        let ghr = matvec(rd, 2 * hs, hs, hs, &rh);
        (0..hs)
            .map(|j| {
                let k = 2 * hs + j;
                apply(gact, cl(gx[k] + ghr[j] + rb[k] + wb[k]))
            })
            .collect()
    };
    for j in 0..hs {
        h[j] = (1.0 - z[j]) * hh[j] + z[j] * h[j];
    }
}

/// One LSTM step of one batch entry: (`h`, `c`) from the gate pre-activations `gx` = W x and
/// `gh` = R h, the biases (Wb, Rb) and the direction's peepholes `pd`.
fn lstm_step(
    spec: &Spec,
    [f, gact, hact]: [Act; 3],
    (gx, gh): (&[f64], &[f64]),
    (wb, rb): (&[f64], &[f64]),
    pd: Option<&[f64]>,
    (h, c): (&mut [f64], &mut [f64]),
) {
    let hs = spec.hidden;
    let cl = |v: f64| clipped(spec.clip, v);
    let pre = |gate: usize, j: usize| {
        let k = gate * hs + j;
        gx[k] + gh[k] + wb[k] + rb[k]
    };
    let peep = |which: usize, j: usize, cv: f64| pd.map(|p| p[which * hs + j] * cv).unwrap_or(0.0);
    for j in 0..hs {
        let i = apply(f, cl(pre(0, j) + peep(0, j, c[j])));
        let fg = apply(f, cl(pre(2, j) + peep(2, j, c[j])));
        let cc = apply(gact, cl(pre(3, j)));
        let cn = fg * c[j] + i * cc;
        let o = apply(f, cl(pre(1, j) + peep(1, j, cn)));
        c[j] = cn;
        h[j] = o * apply(hact, cn);
    }
}

/// How DynamicQuantizeLSTM's products read their operands (ONNX Runtime's kernel with one
/// intra-op thread): X quantized to uint8 as DynamicQuantizeLinear does, once, over the time
/// steps the longest sequence reaches; H likewise at every step, over the batch. A finished
/// sequence's row counts as 0 when the node has a Y output (the kernel zeroes that row of Y,
/// which it reads as the next step's H) and as its last H when not.
#[derive(Clone, Copy, Debug)]
pub(super) struct Quantized {
    /// Whether the node has a Y output.
    pub y_output: bool,
}

/// A recurrent node's inputs, read: the initial states as [directions, batch, hidden]
/// whatever the layout, every sequence's length.
struct Layer {
    spec: Spec,
    dims: Dims,
    x: Vec<f64>,
    w: Vec<f64>,
    r: Vec<f64>,
    b: Option<Vec<f64>>,
    lens: Vec<usize>,
    h0: Option<Vec<f64>>,
    c0: Option<Vec<f64>>,
    p: Option<Vec<f64>>,
}

/// Every sequence's length: `sequence_lens` clamped to the time steps, or all of them.
fn lengths(lens: Option<&T>, dims: Dims) -> R<Vec<usize>> {
    let Some(l) = lens else {
        return Ok(vec![dims.seq; dims.batch]);
    };
    let v = l.ints()?;
    (0..dims.batch)
        .map(|bi| {
            let len = v.get(bi).ok_or_else(|| err("sequence_lens length"))?;
            Ok((*len).clamp(0, dims.seq as i64) as usize)
        })
        .collect()
}

impl Layer {
    fn read(n: &Node, ins: &[Option<&V>]) -> R<Layer> {
        let spec = Spec::parse(n)?;
        let shapes: Vec<Option<&[usize]>> = (0..ins.len().min(8))
            .map(|i| Ok(opt(ins, i)?.map(|t| t.shape.as_slice())))
            .collect::<R<_>>()?;
        let dims = spec.dims(&shapes)?;
        let floats = |i: usize| opt(ins, i)?.map(|t| t.floats()).transpose();
        let lens = lengths(opt(ins, 4)?, dims)?;
        let state = |i: usize| -> R<Option<Vec<f64>>> {
            match opt(ins, i)? {
                Some(t) if spec.batch_first => Ok(Some(super::transpose(t, &[1, 0, 2])?.floats()?)),
                t => t.map(|t| t.floats()).transpose(),
            }
        };
        let lstm = spec.cell == Cell::Lstm;
        Ok(Layer {
            x: inp(ins, 0)?.floats()?,
            w: inp(ins, 1)?.floats()?,
            r: inp(ins, 2)?.floats()?,
            b: floats(3)?,
            lens,
            h0: state(5)?,
            c0: if lstm { state(6)? } else { None },
            p: if lstm { floats(7)? } else { None },
            spec,
            dims,
        })
    }

    /// Where X's features at time step `t` of batch entry `bi` start.
    fn x_offset(&self, t: usize, bi: usize) -> usize {
        let Dims { seq, batch, input } = self.dims;
        if self.spec.batch_first {
            (bi * seq + t) * input
        } else {
            (t * batch + bi) * input
        }
    }

    fn x_at(&self, t: usize, bi: usize) -> &[f64] {
        &self.x[self.x_offset(t, bi)..][..self.dims.input]
    }

    /// X's time steps up to the longest sequence, quantized and dequantized (see
    /// [`Quantized`]).
    fn quantize_x(&mut self) {
        let steps = self.lens.iter().copied().max().unwrap_or(0);
        let idx: Vec<usize> = (0..steps)
            .flat_map(|t| (0..self.dims.batch).map(move |bi| (t, bi)))
            .flat_map(|(t, bi)| {
                let o = self.x_offset(t, bi);
                o..o + self.dims.input
            })
            .collect();
        let v: Vec<f64> = idx.iter().map(|&i| self.x[i]).collect();
        for (&i, q) in idx.iter().zip(fake_quantize(&v)) {
            self.x[i] = q;
        }
    }

    /// Direction `d`'s initial state `s` (h0 or c0) of batch entry `bi`.
    fn initial(&self, s: &Option<Vec<f64>>, d: usize, bi: usize) -> Vec<f64> {
        let hs = self.spec.hidden;
        match s {
            Some(v) => v[(d * self.dims.batch + bi) * hs..][..hs].to_vec(),
            None => vec![0.0; hs],
        }
    }
}

/// The H that step `step`'s products read (see [`Quantized`]).
fn quantized_states(h: &[Vec<f64>], lens: &[usize], step: usize, q: Quantized) -> Vec<Vec<f64>> {
    let hs = h.first().map_or(1, Vec::len).max(1);
    let flat: Vec<f64> = h
        .iter()
        .zip(lens)
        .flat_map(|(h, &len)| {
            let live = step == 0 || step < len || !q.y_output;
            h.iter().map(move |&v| if live { v } else { 0.0 })
        })
        .collect();
    fake_quantize(&flat)
        .chunks(hs)
        .map(<[f64]>::to_vec)
        .collect()
}

/// One direction of `l`: writes its Y rows into `y` ([seq, directions, batch, hidden]) and
/// returns its final states (h, c), each [batch, hidden].
fn direction(l: &Layer, d: usize, quant: Option<Quantized>, y: &mut [f64]) -> (Vec<f64>, Vec<f64>) {
    let (spec, batch, isz) = (&l.spec, l.dims.batch, l.dims.input);
    let (hs, g, dirs) = (spec.hidden, spec.cell.gates(), spec.dirs());
    let wd = &l.w[d * g * hs * isz..][..g * hs * isz];
    let rd = &l.r[d * g * hs * hs..][..g * hs * hs];
    let zero = vec![0.0; 2 * g * hs];
    let bd =
        l.b.as_ref()
            .map_or(&zero[..], |b| &b[d * 2 * g * hs..][..2 * g * hs]);
    let (wb, rb) = bd.split_at(g * hs);
    let pd = l.p.as_ref().map(|p| &p[d * 3 * hs..][..3 * hs]);
    let acts = spec.functions(d);
    let mut h: Vec<Vec<f64>> = (0..batch).map(|bi| l.initial(&l.h0, d, bi)).collect();
    let mut c: Vec<Vec<f64>> = (0..batch).map(|bi| l.initial(&l.c0, d, bi)).collect();
    for step in 0..l.lens.iter().copied().max().unwrap_or(0) {
        let hq = quant.map(|q| quantized_states(&h, &l.lens, step, q));
        for bi in (0..batch).filter(|&bi| step < l.lens[bi]) {
            let t = if spec.reverse(d) {
                l.lens[bi] - 1 - step
            } else {
                step
            };
            let gx = matvec(wd, 0, g * hs, isz, l.x_at(t, bi));
            let gh = matvec(rd, 0, g * hs, hs, hq.as_ref().map_or(&h[bi], |q| &q[bi]));
            let (hb, cb) = (&mut h[bi], &mut c[bi]);
            match spec.cell {
                Cell::Rnn => {
                    for j in 0..hs {
                        hb[j] = apply(acts[0], clipped(spec.clip, gx[j] + gh[j] + wb[j] + rb[j]));
                    }
                }
                Cell::Gru => gru_step(spec, [acts[0], acts[1]], (&gx, &gh), (wb, rb), rd, hb),
                Cell::Lstm => lstm_step(spec, acts, (&gx, &gh), (wb, rb), pd, (hb, cb)),
            }
            y[((t * dirs + d) * batch + bi) * hs..][..hs].copy_from_slice(hb);
        }
    }
    (h.concat(), c.concat())
}

/// Y, Y_h (and Y_c for LSTM) in the node's layout, from [seq, directions, batch, hidden] and
/// [directions, batch, hidden].
fn outputs(l: &Layer, dt: DType, y: Vec<f64>, yh: Vec<f64>, yc: Vec<f64>) -> Out {
    let (seq, batch, hs, dirs) = (l.dims.seq, l.dims.batch, l.spec.hidden, l.spec.dirs());
    let first = l.spec.batch_first;
    let y = T::f(dt, vec![seq, dirs, batch, hs], y);
    let y = if first {
        super::transpose(&y, &[2, 0, 1, 3])?
    } else {
        y
    };
    let state = |v: Vec<f64>| -> R<V> {
        let t = T::f(dt, vec![dirs, batch, hs], v);
        Ok(V::T(if first {
            super::transpose(&t, &[1, 0, 2])?
        } else {
            t
        }))
    };
    let mut out = vec![V::T(y), state(yh)?];
    if l.spec.cell == Cell::Lstm {
        out.push(state(yc)?);
    }
    Ok(out)
}

/// RNN, GRU or LSTM on `ins` (in the ONNX op's input order and layouts); `quant` makes the
/// products read quantized operands, as DynamicQuantizeLSTM's do.
pub(super) fn recurrent(n: &Node, ins: &[Option<&V>], quant: Option<Quantized>) -> Out {
    let mut l = Layer::read(n, ins)?;
    if quant.is_some() {
        l.quantize_x();
    }
    let (seq, batch, hs, dirs) = (l.dims.seq, l.dims.batch, l.spec.hidden, l.spec.dirs());
    let mut y = vec![0.0; seq * dirs * batch * hs];
    let (mut yh, mut yc) = (Vec::new(), Vec::new());
    for d in 0..dirs {
        let (h, c) = direction(&l, d, quant, &mut y);
        yh.extend(h);
        yc.extend(c);
    }
    outputs(&l, inp(ins, 0)?.dt, y, yh, yc)
}

pub(super) fn op_recurrent(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    recurrent(n, ins, None)
}
