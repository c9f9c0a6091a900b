//! Normalizations: BatchNormalization, InstanceNormalization, LayerNormalization,
//! GroupNormalization, LRN, MeanVarianceNormalization and LpNormalization; and ONNX Runtime's
//! SimplifiedLayerNormalization (its own schema in the default domain), which shares
//! LayerNormalization's arithmetic.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

fn per_channel(t: &T, c: usize, what: &str) -> R<Vec<f64>> {
    let v = t.floats()?;
    if v.len() != c {
        return Err(err(format!(
            "{what} has {} values for {c} channels",
            v.len()
        )));
    }
    Ok(v)
}

pub(super) fn op_batch_norm(cx: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    if x.rank() < 2 {
        return Err(err("BatchNormalization input rank < 2"));
    }
    let c = x.shape[1];
    let scale = per_channel(inp(ins, 1)?, c, "scale")?;
    let bias = per_channel(inp(ins, 2)?, c, "B")?;
    let rmean = per_channel(inp(ins, 3)?, c, "mean")?;
    let rvar = per_channel(inp(ins, 4)?, c, "var")?;
    let eps = n.float("epsilon", 1e-5) as f64;
    let training = cx.opset >= 14 && n.int("training_mode", 0) != 0;
    let xv = x.fs()?;
    let nb = x.shape[0];
    let inner = numel(&x.shape[2..]);
    let (mean, var) = if training {
        let cnt = (nb * inner) as f64;
        let mut m = vec![0.0; c];
        let mut v = vec![0.0; c];
        for b in 0..nb {
            for ch in 0..c {
                for i in 0..inner {
                    m[ch] += xv[(b * c + ch) * inner + i];
                }
            }
        }
        m.iter_mut().for_each(|a| *a /= cnt);
        for b in 0..nb {
            for ch in 0..c {
                for i in 0..inner {
                    let d = xv[(b * c + ch) * inner + i] - m[ch];
                    v[ch] += d * d;
                }
            }
        }
        v.iter_mut().for_each(|a| *a /= cnt);
        (m, v)
    } else {
        (rmean.clone(), rvar.clone())
    };
    let mut y = vec![0.0; xv.len()];
    for b in 0..nb {
        for ch in 0..c {
            let k = scale[ch] / (var[ch] + eps).sqrt();
            for i in 0..inner {
                let p = (b * c + ch) * inner + i;
                y[p] = (xv[p] - mean[ch]) * k + bias[ch];
            }
        }
    }
    let mut out = vec![V::T(T::f(x.dt, x.shape.clone(), y))];
    if training {
        let mom = n.float("momentum", 0.9) as f64;
        let mdt = inp(ins, 3)?.dt;
        let vdt = inp(ins, 4)?.dt;
        let nm: Vec<f64> = (0..c)
            .map(|i| rmean[i] * mom + mean[i] * (1.0 - mom))
            .collect();
        let nv: Vec<f64> = (0..c)
            .map(|i| rvar[i] * mom + var[i] * (1.0 - mom))
            .collect();
        out.push(V::T(T::f(mdt, vec![c], nm)));
        out.push(V::T(T::f(vdt, vec![c], nv)));
    } else if n.outputs.len() > 1 {
        return Err(unsup(
            "BatchNormalization extra outputs outside training mode",
        ));
    }
    Ok(out)
}

pub(super) fn op_instance_norm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    if x.rank() < 2 {
        return Err(err("InstanceNormalization input rank < 2"));
    }
    let c = x.shape[1];
    let scale = per_channel(inp(ins, 1)?, c, "scale")?;
    let bias = per_channel(inp(ins, 2)?, c, "B")?;
    let eps = n.float("epsilon", 1e-5) as f64;
    let xv = x.fs()?;
    let inner = numel(&x.shape[2..]);
    let mut y = vec![0.0; xv.len()];
    for bc in 0..x.shape[0] * c {
        let ch = bc % c;
        let s = &xv[bc * inner..(bc + 1) * inner];
        let m = s.iter().sum::<f64>() / inner as f64;
        let v = s.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / inner as f64;
        let k = scale[ch] / (v + eps).sqrt();
        for i in 0..inner {
            y[bc * inner + i] = (s[i] - m) * k + bias[ch];
        }
    }
    one(T::f(x.dt, x.shape.clone(), y))
}

/// The statistics of [`normalize`]: one per row (the axes before `axis`), of `X`'s shape with
/// the normalized axes of size 1, in `stash_type`.
struct Stats {
    shape: Vec<usize>,
    dt: DType,
    means: Vec<f64>,
    invs: Vec<f64>,
}

impl Stats {
    fn value(&self, v: Vec<f64>) -> R<V> {
        Ok(V::T(T::from_f64s(self.dt, self.shape.clone(), v)?))
    }
}

/// Normalizes `X` over the axes from `axis` on and scales it: LayerNormalization (`centred`:
/// `(x - mean) / sqrt(var + epsilon) * Scale + B`) or ONNX Runtime's
/// SimplifiedLayerNormalization (not centred, no bias: `x / sqrt(mean(x²) + epsilon) * scale`,
/// the root mean square).
fn normalize(n: &Node, ins: &[Option<&V>], centred: bool) -> R<(V, Stats)> {
    let x = inp(ins, 0)?;
    let r = x.rank();
    let axis = norm_axis(n.int("axis", -1), r)?;
    let eps = n.float("epsilon", 1e-5) as f64;
    let scale = expand_to(inp(ins, 1)?, &x.shape)?.floats()?;
    let bias = match opt(ins, 2)? {
        Some(b) if centred => Some(expand_to(b, &x.shape)?.floats()?),
        _ => None,
    };
    let xv = x.fs()?;
    let outer = numel(&x.shape[..axis]);
    let inner = numel(&x.shape[axis..]);
    let mut y = vec![0.0; xv.len()];
    let mut means = Vec::with_capacity(outer);
    let mut invs = Vec::with_capacity(outer);
    for o in 0..outer {
        let s = &xv[o * inner..(o + 1) * inner];
        let m = if centred {
            s.iter().sum::<f64>() / inner as f64
        } else {
            0.0
        };
        let v = s.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / inner as f64;
        let inv = 1.0 / (v + eps).sqrt();
        for i in 0..inner {
            let p = o * inner + i;
            y[p] = (s[i] - m) * inv * scale[p] + bias.as_ref().map(|b| b[p]).unwrap_or(0.0);
        }
        means.push(m);
        invs.push(inv);
    }
    let mut shape = x.shape[..axis].to_vec();
    shape.extend(vec![1; r - axis]);
    let dt = match n.int("stash_type", 1) {
        1 => DType::F32,
        c => DType::from_code(c as i32),
    };
    let stats = Stats {
        shape,
        dt,
        means,
        invs,
    };
    Ok((V::T(T::f(x.dt, x.shape.clone(), y)), stats))
}

pub(super) fn op_layer_norm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let (y, s) = normalize(n, ins, true)?;
    Ok(vec![y, s.value(s.means.clone())?, s.value(s.invs.clone())?])
}

/// ONNX Runtime's SimplifiedLayerNormalization (its own schema in the default domain):
/// outputs `Y` and `inv_std_var`.
pub(super) fn op_simplified_layer_norm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let (y, s) = normalize(n, ins, false)?;
    Ok(vec![y, s.value(s.invs.clone())?])
}

pub(super) fn op_group_norm(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    if x.rank() < 2 {
        return Err(err("GroupNormalization input rank < 2"));
    }
    let g = n.int("num_groups", 0);
    let c = x.shape[1];
    if g < 1 || c % g as usize != 0 {
        return Err(err(format!("num_groups {g} for {c} channels")));
    }
    let g = g as usize;
    let eps = n.float("epsilon", 1e-5) as f64;
    let scale = inp(ins, 1)?.floats()?;
    let bias = inp(ins, 2)?.floats()?;
    let per_group = scale.len() == g && g != c;
    if !(scale.len() == c || per_group) || bias.len() != scale.len() {
        return Err(err("GroupNormalization scale / bias length"));
    }
    let xv = x.fs()?;
    let inner = numel(&x.shape[2..]);
    let cpg = c / g;
    let gs = cpg * inner;
    let mut y = vec![0.0; xv.len()];
    for bg in 0..x.shape[0] * g {
        let s = &xv[bg * gs..(bg + 1) * gs];
        let m = s.iter().sum::<f64>() / gs as f64;
        let v = s.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / gs as f64;
        let inv = 1.0 / (v + eps).sqrt();
        for (j, &xx) in s.iter().enumerate() {
            let ch = (bg % g) * cpg + j / inner;
            let k = if per_group { bg % g } else { ch };
            y[bg * gs + j] = (xx - m) * inv * scale[k] + bias[k];
        }
    }
    one(T::f(x.dt, x.shape.clone(), y))
}

pub(super) fn op_lrn(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    if x.rank() < 2 {
        return Err(err("LRN input rank < 2"));
    }
    let size = n.int("size", 0);
    if size < 1 {
        return Err(err("LRN size"));
    }
    let alpha = n.float("alpha", 1e-4) as f64;
    let beta = n.float("beta", 0.75) as f64;
    let bias = n.float("bias", 1.0) as f64;
    let c = x.shape[1];
    let inner = numel(&x.shape[2..]);
    let xv = x.fs()?;
    let lo = (size - 1) / 2;
    let hi = size - 1 - lo;
    let mut y = vec![0.0; xv.len()];
    for b in 0..x.shape[0] {
        for ch in 0..c {
            let from = (ch as i64 - lo).max(0) as usize;
            let to = ((ch as i64 + hi) as usize).min(c - 1);
            for i in 0..inner {
                let mut s = 0.0;
                for k in from..=to {
                    let v = xv[(b * c + k) * inner + i];
                    s += v * v;
                }
                let p = (b * c + ch) * inner + i;
                y[p] = xv[p] / (bias + alpha / size as f64 * s).powf(beta);
            }
        }
    }
    one(T::f(x.dt, x.shape.clone(), y))
}

pub(super) fn op_mvn(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let axes: Vec<usize> = match n.ints("axes") {
        Some(a) => super::norm_axes(a, x.rank())?,
        None => super::norm_axes(&[0, 2, 3], x.rank())?,
    };
    let mut kept = x.shape.clone();
    for &a in &axes {
        kept[a] = 1;
    }
    let ost = strides(&kept);
    let s: Vec<isize> = (0..x.rank())
        .map(|d| {
            if axes.contains(&d) {
                0
            } else {
                ost[d] as isize
            }
        })
        .collect();
    let map = strided_index(&x.shape, &s, 0);
    let on = numel(&kept);
    let cnt = (x.len() / on.max(1)) as f64;
    let xv = x.fs()?;
    // ONNX's function body: (X - mean) / (sqrt(E[X^2] - mean^2) + 1e-9). The variance is
    // taken as E[(X - mean)^2], its exact value, which rounding cannot make negative (the
    // difference form gives NaN for constant slices).
    let mut m = vec![0.0; on];
    for (i, &o) in map.iter().enumerate() {
        m[o] += xv[i] / cnt;
    }
    let mut var = vec![0.0; on];
    for (i, &o) in map.iter().enumerate() {
        var[o] += (xv[i] - m[o]) * (xv[i] - m[o]) / cnt;
    }
    let y = map
        .iter()
        .enumerate()
        .map(|(i, &o)| (xv[i] - m[o]) / (var[o].sqrt() + 1e-9))
        .collect();
    one(T::f(x.dt, x.shape.clone(), y))
}

pub(super) fn op_lp_normalization(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let axis = norm_axis(n.int("axis", -1), x.rank())?;
    let p = n.int("p", 2);
    if p != 1 && p != 2 {
        return Err(err(format!("LpNormalization p={p}")));
    }
    let (outer, len, inner) = split_at_axis(&x.shape, axis);
    let xv = x.fs()?;
    let mut out = vec![0.0; xv.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * len + k) * inner + i;
            let norm = if p == 1 {
                (0..len).map(|k| xv[at(k)].abs()).sum::<f64>()
            } else {
                (0..len).map(|k| xv[at(k)] * xv[at(k)]).sum::<f64>().sqrt()
            };
            for k in 0..len {
                out[at(k)] = if norm == 0.0 { 0.0 } else { xv[at(k)] / norm };
            }
        }
    }
    one(T::f(x.dt, x.shape.clone(), out))
}

#[cfg(test)]
mod tests {
    use crate::backend::Backend;
    use crate::reference::Reference;
    use crate::value::{Data, HostTensor, Value};

    /// The values ONNX Runtime 1.31.1 computes (CPU, no graph optimizations) for its
    /// SimplifiedLayerNormalization of the default domain at opset 13, as
    /// onnxruntime.transformers writes it: /tmp/contrib/verify_SimplifiedLayerNormalization.py,
    /// "rust case" (the f64 formula matches them to 1.1e-7; its f32 cases to 3.7e-7).
    #[test]
    fn simplified_layer_norm_is_onnx_runtimes() {
        let text = "<ir_version: 8, opset_import: [\"\" : 13]>\n\
             g (float[2, 2, 3] x) => (float[2, 2, 3] y, float[2, 1, 1] inv)\n\
             <float[2, 3] s = {0.5, -1.0, 2.0, 1.5, 0.25, -0.75}>\n\
             { y, inv = SimplifiedLayerNormalization <axis = 1, epsilon = 0.01> (x, s) }";
        let model = mutagraph_ir::text::parse_model(text).unwrap().to_bytes();
        let x: Vec<f32> = (0..12).map(|i| (i as f32 - 5.0) * 0.75).collect();
        let x = Value::Tensor(HostTensor::new(vec![2, 2, 3], Data::F32(x)));
        let mut p = Reference::new_f64().prepare(&model).unwrap();
        let out = p.run(&vec![("x".to_string(), x)]).unwrap();
        let got: Vec<Vec<f64>> = out
            .iter()
            .map(|(_, v)| v.tensor().unwrap().to_f64s().unwrap())
            .collect();
        let y = [
            -0.8249232769,
            1.3198771477,
            -1.9798158407,
            -0.9899078608,
            -0.0824923217,
            -0.0,
            0.1283129603,
            -0.5132518411,
            1.5397555828,
            1.5397555828,
            0.3207823932,
            -1.1548166276,
        ];
        let inv = [0.4399590790, 0.3421678841];
        for (g, w) in got.iter().zip([&y[..], &inv[..]]) {
            assert_eq!(g.len(), w.len());
            for (a, b) in g.iter().zip(w) {
                assert!((a - b).abs() < 3e-7, "{g:?} vs ONNX Runtime's {w:?}");
            }
        }
    }
}
