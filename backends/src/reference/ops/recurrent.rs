//! Recurrent ops: RNN, GRU, LSTM (forward, reverse, bidirectional; both layouts).
use super::unary::{sigmoid, softplus};
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, opt};
use crate::semantics::rnn::{Act, Cell, Dims, Spec};
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

/// An activation function on one value.
fn apply(a: Act, x: f64) -> f64 {
    match a {
        Act::Sigmoid => sigmoid(x),
        Act::Tanh => x.tanh(),
        Act::Relu => x.max(0.0),
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

fn recurrent(n: &Node, ins: &[Option<&V>]) -> Out {
    let spec = Spec::parse(n)?;
    let kind = spec.cell;
    let shapes: Vec<Option<&[usize]>> = (0..ins.len().min(8))
        .map(|i| Ok(opt(ins, i)?.map(|t| t.shape.as_slice())))
        .collect::<R<_>>()?;
    let Dims {
        seq,
        batch,
        input: isz,
    } = spec.dims(&shapes)?;
    let x = inp(ins, 0)?;
    let w = inp(ins, 1)?.floats()?;
    let r = inp(ins, 2)?.floats()?;
    let b = opt(ins, 3)?.map(|t| t.floats()).transpose()?;
    let lens = opt(ins, 4)?.map(|t| t.ints()).transpose()?;
    // Initial states as [directions, batch, hidden] whatever the layout.
    let state = |i: usize| -> R<Option<Vec<f64>>> {
        match opt(ins, i)? {
            None => Ok(None),
            Some(t) if spec.batch_first => Ok(Some(super::transpose(t, &[1, 0, 2])?.floats()?)),
            Some(t) => Ok(Some(t.floats()?)),
        }
    };
    let h0 = state(5)?;
    let (c0, p) = if kind == Cell::Lstm {
        (state(6)?, opt(ins, 7)?.map(|t| t.floats()).transpose()?)
    } else {
        (None, None)
    };
    let hs = spec.hidden;
    let dirs = spec.dirs();
    let g = kind.gates();
    let clip = spec.clip;
    let xv = x.fs()?;
    let xat = |t: usize, bi: usize| -> &[f64] {
        let off = if spec.batch_first {
            (bi * seq + t) * isz
        } else {
            (t * batch + bi) * isz
        };
        &xv[off..off + isz]
    };
    let mut y = vec![0.0; seq * dirs * batch * hs];
    let mut yh = vec![0.0; dirs * batch * hs];
    let mut yc = vec![0.0; dirs * batch * hs];
    for d in 0..dirs {
        let reverse = spec.reverse(d);
        let wd = &w[d * g * hs * isz..(d + 1) * g * hs * isz];
        let rd = &r[d * g * hs * hs..(d + 1) * g * hs * hs];
        let zero = vec![0.0; 2 * g * hs];
        let bd = b
            .as_ref()
            .map(|b| &b[d * 2 * g * hs..(d + 1) * 2 * g * hs])
            .unwrap_or(&zero);
        let (wb, rb) = bd.split_at(g * hs);
        let [f, gact, hact] = spec.functions(d);
        let cl = |v: f64| clipped(clip, v);
        for bi in 0..batch {
            let len = match &lens {
                Some(l) => (*l.get(bi).ok_or_else(|| err("sequence_lens length"))?)
                    .clamp(0, seq as i64) as usize,
                None => seq,
            };
            let mut h: Vec<f64> = match &h0 {
                Some(h) => h[(d * batch + bi) * hs..(d * batch + bi + 1) * hs].to_vec(),
                None => vec![0.0; hs],
            };
            let mut c: Vec<f64> = match &c0 {
                Some(c) => c[(d * batch + bi) * hs..(d * batch + bi + 1) * hs].to_vec(),
                None => vec![0.0; hs],
            };
            for step in 0..len {
                let t = if reverse { len - 1 - step } else { step };
                let xt = xat(t, bi);
                let gx = matvec(wd, 0, g * hs, isz, xt);
                let gh = matvec(rd, 0, g * hs, hs, &h);
                match kind {
                    Cell::Rnn => {
                        for j in 0..hs {
                            h[j] = apply(f, cl(gx[j] + gh[j] + wb[j] + rb[j]));
                        }
                    }
                    Cell::Gru => gru_step(&spec, [f, gact], (&gx, &gh), (wb, rb), rd, &mut h),
                    Cell::Lstm => {
                        let pd = p.as_ref().map(|p| &p[d * 3 * hs..(d + 1) * 3 * hs]);
                        lstm_step(
                            &spec,
                            [f, gact, hact],
                            (&gx, &gh),
                            (wb, rb),
                            pd,
                            (&mut h, &mut c),
                        )
                    }
                }
                for j in 0..hs {
                    y[((t * dirs + d) * batch + bi) * hs + j] = h[j];
                }
            }
            yh[(d * batch + bi) * hs..(d * batch + bi + 1) * hs].copy_from_slice(&h);
            yc[(d * batch + bi) * hs..(d * batch + bi + 1) * hs].copy_from_slice(&c);
        }
    }
    let dt = x.dt;
    let (y, yshape) = if !spec.batch_first {
        (y, vec![seq, dirs, batch, hs])
    } else {
        let t = T::f(dt, vec![seq, dirs, batch, hs], y);
        let t = super::transpose(&t, &[2, 0, 1, 3])?;
        (t.fs()?.to_vec(), vec![batch, seq, dirs, hs])
    };
    let state = |v: Vec<f64>| -> R<T> {
        let t = T::f(dt, vec![dirs, batch, hs], v);
        if !spec.batch_first {
            Ok(t)
        } else {
            super::transpose(&t, &[1, 0, 2])
        }
    };
    let mut out = vec![V::T(T::f(dt, yshape, y)), V::T(state(yh)?)];
    if kind == Cell::Lstm {
        out.push(V::T(state(yc)?));
    }
    Ok(out)
}

pub(super) fn op_recurrent(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    recurrent(n, ins)
}
