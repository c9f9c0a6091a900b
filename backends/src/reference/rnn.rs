//! Recurrent ops: RNN, GRU, LSTM (forward, reverse, bidirectional; both layouts).
use super::elementwise::{sigmoid, softplus};
use super::tensor::*;
use super::{Cx, OpFn, V, inp, opt};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::graph::Node;
use std::collections::BTreeMap;

type Out = R<Vec<V>>;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Rnn,
    Gru,
    Lstm,
}

impl Kind {
    fn gates(self) -> usize {
        match self {
            Kind::Rnn => 1,
            Kind::Gru => 3,
            Kind::Lstm => 4,
        }
    }
}

#[derive(Clone, Copy)]
enum Act {
    Sigmoid,
    Tanh,
    Relu,
    Affine(f64, f64),
    LeakyRelu(f64),
    ThresholdedRelu(f64),
    ScaledTanh(f64, f64),
    HardSigmoid(f64, f64),
    Elu(f64),
    Softsign,
    Softplus,
}

impl Act {
    fn apply(self, x: f64) -> f64 {
        match self {
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
}

fn activations(n: &Node, kind: Kind, dirs: usize) -> R<Vec<Act>> {
    let per = match kind {
        Kind::Rnn => 1,
        Kind::Gru => 2,
        Kind::Lstm => 3,
    };
    let names: Vec<String> = match n.attr("activations") {
        Some(AttrValue::Strings(v)) => v
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect(),
        _ => {
            let d: &[&str] = match kind {
                Kind::Rnn => &["Tanh"],
                Kind::Gru => &["Sigmoid", "Tanh"],
                Kind::Lstm => &["Sigmoid", "Tanh", "Tanh"],
            };
            (0..dirs)
                .flat_map(|_| d.iter().map(|s| s.to_string()))
                .collect()
        }
    };
    if names.len() != per * dirs {
        return Err(err(format!(
            "{} activations for {dirs} directions",
            names.len()
        )));
    }
    let alphas = n.floats("activation_alpha").unwrap_or(&[]);
    let betas = n.floats("activation_beta").unwrap_or(&[]);
    names
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let a = |d: f64| alphas.get(i).map(|&x| x as f64).unwrap_or(d);
            let b = |d: f64| betas.get(i).map(|&x| x as f64).unwrap_or(d);
            Ok(match s.to_ascii_lowercase().as_str() {
                "sigmoid" => Act::Sigmoid,
                "tanh" => Act::Tanh,
                "relu" => Act::Relu,
                "affine" => Act::Affine(a(1.0), b(0.0)),
                "leakyrelu" => Act::LeakyRelu(a(0.01)),
                "thresholdedrelu" => Act::ThresholdedRelu(a(1.0)),
                "scaledtanh" => Act::ScaledTanh(a(1.0), b(1.0)),
                "hardsigmoid" => Act::HardSigmoid(a(0.2), b(0.5)),
                "elu" => Act::Elu(a(1.0)),
                "softsign" => Act::Softsign,
                "softplus" => Act::Softplus,
                o => return Err(unsup(format!("activation {o}"))),
            })
        })
        .collect()
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

fn recurrent(n: &Node, ins: &[Option<&V>], kind: Kind) -> Out {
    let x = inp(ins, 0)?;
    let w = inp(ins, 1)?.floats()?;
    let r = inp(ins, 2)?.floats()?;
    let b = opt(ins, 3)?.map(|t| t.floats()).transpose()?;
    let lens = opt(ins, 4)?.map(|t| t.ints()).transpose()?;
    let h0 = opt(ins, 5)?.map(|t| t.floats()).transpose()?;
    let (c0, p) = if kind == Kind::Lstm {
        (
            opt(ins, 6)?.map(|t| t.floats()).transpose()?,
            opt(ins, 7)?.map(|t| t.floats()).transpose()?,
        )
    } else {
        (None, None)
    };
    let layout = n.int("layout", 0);
    if x.rank() != 3 {
        return Err(err("recurrent input must be 3-D"));
    }
    let (seq, batch, isz) = if layout == 0 {
        (x.shape[0], x.shape[1], x.shape[2])
    } else {
        (x.shape[1], x.shape[0], x.shape[2])
    };
    let hs = n.int("hidden_size", 0);
    if hs < 1 {
        return Err(err("hidden_size must be positive"));
    }
    let hs = hs as usize;
    let direction = n.string("direction", "forward");
    let dirs = if direction == "bidirectional" { 2 } else { 1 };
    let g = kind.gates();
    if w.len() != dirs * g * hs * isz || r.len() != dirs * g * hs * hs {
        return Err(err("recurrent weight shapes"));
    }
    if b.as_ref().is_some_and(|b| b.len() != dirs * 2 * g * hs) {
        return Err(err("recurrent bias shape"));
    }
    if h0.as_ref().is_some_and(|h| h.len() != dirs * batch * hs)
        || c0.as_ref().is_some_and(|h| h.len() != dirs * batch * hs)
        || p.as_ref().is_some_and(|h| h.len() != dirs * 3 * hs)
    {
        return Err(err("recurrent state shapes"));
    }
    if kind == Kind::Lstm && n.int("input_forget", 0) != 0 {
        return Err(unsup("LSTM input_forget"));
    }
    let clip = n.float_opt_f64("clip");
    let lbr = n.int("linear_before_reset", 0) != 0;
    let acts = activations(n, kind, dirs)?;
    let xv = x.fs()?;
    let xat = |t: usize, bi: usize| -> &[f64] {
        let off = if layout == 0 {
            (t * batch + bi) * isz
        } else {
            (bi * seq + t) * isz
        };
        &xv[off..off + isz]
    };
    let per = acts.len() / dirs;
    let mut y = vec![0.0; seq * dirs * batch * hs];
    let mut yh = vec![0.0; dirs * batch * hs];
    let mut yc = vec![0.0; dirs * batch * hs];
    for d in 0..dirs {
        let reverse = direction == "reverse" || d == 1;
        let wd = &w[d * g * hs * isz..(d + 1) * g * hs * isz];
        let rd = &r[d * g * hs * hs..(d + 1) * g * hs * hs];
        let zero = vec![0.0; 2 * g * hs];
        let bd = b
            .as_ref()
            .map(|b| &b[d * 2 * g * hs..(d + 1) * 2 * g * hs])
            .unwrap_or(&zero);
        let (wb, rb) = bd.split_at(g * hs);
        let f = acts[d * per];
        let gact = acts.get(d * per + 1).copied().unwrap_or(f);
        let hact = acts.get(d * per + 2).copied().unwrap_or(gact);
        let cl = |v: f64| match clip {
            Some(c) => v.max(-c.abs()).min(c.abs()),
            None => v,
        };
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
                    Kind::Rnn => {
                        for j in 0..hs {
                            h[j] = f.apply(cl(gx[j] + gh[j] + wb[j] + rb[j]));
                        }
                    }
                    Kind::Gru => {
                        let z: Vec<f64> = (0..hs)
                            .map(|j| f.apply(cl(gx[j] + gh[j] + wb[j] + rb[j])))
                            .collect();
                        let rr: Vec<f64> = (0..hs)
                            .map(|j| {
                                let k = hs + j;
                                f.apply(cl(gx[k] + gh[k] + wb[k] + rb[k]))
                            })
                            .collect();
                        let hh: Vec<f64> = if lbr {
                            (0..hs)
                                .map(|j| {
                                    let k = 2 * hs + j;
                                    gact.apply(cl(gx[k] + rr[j] * (gh[k] + rb[k]) + wb[k]))
                                })
                                .collect()
                        } else {
                            let rh: Vec<f64> = (0..hs).map(|j| rr[j] * h[j]).collect();
                            let ghr = matvec(rd, 2 * hs, hs, hs, &rh);
                            (0..hs)
                                .map(|j| {
                                    let k = 2 * hs + j;
                                    gact.apply(cl(gx[k] + ghr[j] + rb[k] + wb[k]))
                                })
                                .collect()
                        };
                        for j in 0..hs {
                            h[j] = (1.0 - z[j]) * hh[j] + z[j] * h[j];
                        }
                    }
                    Kind::Lstm => {
                        let pre = |gate: usize, j: usize| {
                            let k = gate * hs + j;
                            gx[k] + gh[k] + wb[k] + rb[k]
                        };
                        let pd = p.as_ref().map(|p| &p[d * 3 * hs..(d + 1) * 3 * hs]);
                        let peep = |which: usize, j: usize, cv: f64| {
                            pd.map(|p| p[which * hs + j] * cv).unwrap_or(0.0)
                        };
                        for j in 0..hs {
                            let i = f.apply(cl(pre(0, j) + peep(0, j, c[j])));
                            let fg = f.apply(cl(pre(2, j) + peep(2, j, c[j])));
                            let cc = gact.apply(cl(pre(3, j)));
                            let cn = fg * c[j] + i * cc;
                            let o = f.apply(cl(pre(1, j) + peep(1, j, cn)));
                            c[j] = cn;
                            h[j] = o * hact.apply(cn);
                        }
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
    let (y, yshape) = if layout == 0 {
        (y, vec![seq, dirs, batch, hs])
    } else {
        let t = T::f(dt, vec![seq, dirs, batch, hs], y);
        let t = super::shape::transpose(&t, &[2, 0, 1, 3])?;
        (t.fs()?.to_vec(), vec![batch, seq, dirs, hs])
    };
    let state = |v: Vec<f64>| -> R<T> {
        let t = T::f(dt, vec![dirs, batch, hs], v);
        if layout == 0 {
            Ok(t)
        } else {
            super::shape::transpose(&t, &[1, 0, 2])
        }
    };
    let mut out = vec![V::T(T::f(dt, yshape, y)), V::T(state(yh)?)];
    if kind == Kind::Lstm {
        out.push(V::T(state(yc)?));
    }
    Ok(out)
}

trait FloatOpt {
    fn float_opt_f64(&self, name: &str) -> Option<f64>;
}

impl FloatOpt for Node {
    fn float_opt_f64(&self, name: &str) -> Option<f64> {
        match self.attr(name) {
            Some(AttrValue::Float(f)) => Some(*f as f64),
            _ => None,
        }
    }
}

fn op_rnn(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    recurrent(n, ins, Kind::Rnn)
}
fn op_gru(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    recurrent(n, ins, Kind::Gru)
}
fn op_lstm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    recurrent(n, ins, Kind::Lstm)
}

pub(super) fn register(t: &mut BTreeMap<&'static str, OpFn>) {
    t.insert("RNN", op_rnn as OpFn);
    t.insert("GRU", op_gru as OpFn);
    t.insert("LSTM", op_lstm as OpFn);
}
