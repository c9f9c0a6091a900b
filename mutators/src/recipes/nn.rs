//! Ops whose weights depend on drawn attributes: convolutions, Gemm, normalizations and RNNs.
use super::Recipe;
use super::generic::draw_attrs;
use crate::builder::SplitMix64;
use crate::ir::DType;
use crate::ir::attr::AttrValue;
use crate::ir::types::TensorType;
use crate::site::Site;

const FLOATS: &[DType] = &[DType::F32, DType::F16, DType::F64];

type BuildFn = fn(&mut Site<'_>, &str, &TensorType, &mut SplitMix64) -> Result<String, String>;

struct Custom {
    op: &'static str,
    ranks: (usize, usize),
    out: fn(DType, usize) -> Vec<(DType, usize)>,
    build: BuildFn,
}

impl Recipe for Custom {
    fn op_type(&self) -> &'static str {
        self.op
    }
    fn accepts(&self, dtype: DType, rank: usize) -> bool {
        FLOATS.contains(&dtype) && rank >= self.ranks.0 && rank <= self.ranks.1
    }
    fn outputs(&self, dtype: DType, rank: usize) -> Vec<(DType, usize)> {
        (self.out)(dtype, rank)
    }
    fn build(
        &self,
        site: &mut Site<'_>,
        x: &str,
        t: &TensorType,
        rng: &mut SplitMix64,
    ) -> Result<String, String> {
        (self.build)(site, x, t, rng)
    }
}

fn pick(rng: &mut SplitMix64, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

fn int_attr(attrs: &[(&'static str, AttrValue)], name: &str) -> Option<i64> {
    attrs.iter().find_map(|(k, v)| match v {
        AttrValue::Int(i) if *k == name => Some(*i),
        _ => None,
    })
}

fn ints_attr(attrs: &[(&'static str, AttrValue)], name: &str) -> Option<Vec<i64>> {
    attrs.iter().find_map(|(k, v)| match v {
        AttrValue::Ints(i) if *k == name => Some(i.clone()),
        _ => None,
    })
}

fn weight(
    site: &mut Site<'_>,
    hint: &str,
    dtype: DType,
    dims: &[i64],
    fan_in: i64,
    rng: &mut SplitMix64,
) -> String {
    let b = (3.0 / fan_in.max(1) as f64).sqrt();
    site.random_constant(hint, dtype, dims, -b, b, rng)
}

/// Tries drawn attribute sets (the last try with defaults only) until the node is accepted.
fn attempts<F>(
    site: &mut Site<'_>,
    op: &str,
    rank: usize,
    fixed: &[&str],
    rng: &mut SplitMix64,
    mut make: F,
) -> Result<String, String>
where
    F: FnMut(
        &mut Site<'_>,
        Vec<(&'static str, AttrValue)>,
        &mut SplitMix64,
    ) -> Result<(Vec<String>, Vec<(&'static str, AttrValue)>), String>,
{
    let mut last = String::new();
    for attempt in 0..6 {
        let drawn = if attempt < 5 {
            draw_attrs(op, site.opset(), rank, fixed, &[], rng)
        } else {
            Vec::new()
        };
        let (inputs, attrs) = match make(site, drawn, rng) {
            Ok(v) => v,
            Err(e) => {
                last = e;
                continue;
            }
        };
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        match site.op1(op, &refs, attrs) {
            Ok(y) => return Ok(y),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn conv(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = t.static_dims().ok_or("no static shape")?;
    let (c, spatial) = (d[1], d.len() - 2);
    let min_sp = d[2..].iter().copied().min().unwrap_or(1);
    attempts(
        site,
        "Conv",
        d.len(),
        &["kernel_shape"],
        rng,
        |site, mut attrs, rng| {
            let mut group = int_attr(&attrs, "group").unwrap_or(1).max(1);
            if c % group != 0 {
                group = if rng.unit() < 0.5 { c } else { 1 };
                attrs.retain(|(k, _)| *k != "group");
                attrs.push(("group", AttrValue::Int(group)));
            }
            let k = 1 + pick(rng, min_sp.min(3) as usize) as i64;
            let kernel = vec![k; spatial];
            attrs.push(("kernel_shape", AttrValue::Ints(kernel.clone())));
            let m = group * (1 + pick(rng, 2) as i64);
            let mut wdims = vec![m, c / group];
            wdims.extend(&kernel);
            let fan: i64 = wdims[1..].iter().product();
            let w = weight(site, "conv_w", t.dtype, &wdims, fan, rng);
            let mut ins = vec![x.to_string(), w];
            if rng.unit() < 0.6 {
                ins.push(weight(site, "conv_b", t.dtype, &[m], fan, rng));
            }
            Ok((ins, attrs))
        },
    )
}

fn conv_transpose(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = t.static_dims().ok_or("no static shape")?;
    let (c, spatial) = (d[1], d.len() - 2);
    attempts(
        site,
        "ConvTranspose",
        d.len(),
        &["kernel_shape", "output_shape"],
        rng,
        |site, mut attrs, rng| {
            let mut group = int_attr(&attrs, "group").unwrap_or(1).max(1);
            if c % group != 0 {
                group = 1;
                attrs.retain(|(k, _)| *k != "group");
            }
            if let Some(op) = ints_attr(&attrs, "output_padding") {
                let strides = ints_attr(&attrs, "strides").unwrap_or(vec![1; spatial]);
                if op.iter().zip(&strides).any(|(p, s)| p >= s) {
                    attrs.retain(|(k, _)| *k != "output_padding");
                }
            }
            let k = 1 + pick(rng, 3) as i64;
            let kernel = vec![k; spatial];
            attrs.push(("kernel_shape", AttrValue::Ints(kernel.clone())));
            let m = 1 + pick(rng, 3) as i64;
            let mut wdims = vec![c, m];
            wdims.extend(&kernel);
            let w = weight(site, "convt_w", t.dtype, &wdims, c * k, rng);
            let mut ins = vec![x.to_string(), w];
            if rng.unit() < 0.5 {
                ins.push(weight(site, "convt_b", t.dtype, &[m * group], c * k, rng));
            }
            Ok((ins, attrs))
        },
    )
}

fn gemm(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = t.static_dims().ok_or("no static shape")?;
    attempts(site, "Gemm", 2, &[], rng, |site, attrs, rng| {
        let ta = int_attr(&attrs, "transA").unwrap_or(0) != 0;
        let tb = int_attr(&attrs, "transB").unwrap_or(0) != 0;
        let k = if ta { d[0] } else { d[1] };
        let n = 2 + pick(rng, 6) as i64;
        let b = weight(
            site,
            "gemm_b",
            t.dtype,
            &if tb { [n, k] } else { [k, n] },
            k,
            rng,
        );
        let mut ins = vec![x.to_string(), b];
        if rng.unit() < 0.7 {
            let shape: Vec<i64> = if rng.unit() < 0.5 { vec![n] } else { vec![] };
            ins.push(weight(site, "gemm_c", t.dtype, &shape, k, rng));
        }
        Ok((ins, attrs))
    })
}

fn batchnorm(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = t.static_dims().ok_or("no static shape")?;
    let c = d[1];
    attempts(
        site,
        "BatchNormalization",
        d.len(),
        &["training_mode"],
        rng,
        |site, attrs, rng| {
            let scale = site.random_constant("bn_scale", t.dtype, &[c], 0.5, 1.5, rng);
            let bias = site.random_constant("bn_bias", t.dtype, &[c], -0.5, 0.5, rng);
            let mean = site.random_constant("bn_mean", t.dtype, &[c], -0.5, 0.5, rng);
            let var = site.random_constant("bn_var", t.dtype, &[c], 0.5, 1.5, rng);
            Ok((vec![x.to_string(), scale, bias, mean, var], attrs))
        },
    )
}

fn instancenorm(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = t.static_dims().ok_or("no static shape")?;
    let c = d[1];
    attempts(
        site,
        "InstanceNormalization",
        d.len(),
        &[],
        rng,
        |site, attrs, rng| {
            let scale = site.random_constant("in_scale", t.dtype, &[c], 0.5, 1.5, rng);
            let bias = site.random_constant("in_bias", t.dtype, &[c], -0.5, 0.5, rng);
            Ok((vec![x.to_string(), scale, bias], attrs))
        },
    )
}

fn layernorm(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    let d = t.static_dims().ok_or("no static shape")?;
    let r = d.len() as i64;
    attempts(
        site,
        "LayerNormalization",
        d.len(),
        &["axis"],
        rng,
        |site, mut attrs, rng| {
            let axis = pick(rng, r as usize) as i64;
            let axis_attr = if rng.unit() < 0.3 { axis - r } else { axis };
            attrs.push(("axis", AttrValue::Int(axis_attr)));
            let shape: Vec<i64> = d[axis as usize..].to_vec();
            let scale = site.random_constant("ln_scale", t.dtype, &shape, 0.5, 1.5, rng);
            let mut ins = vec![x.to_string(), scale];
            if rng.unit() < 0.6 {
                ins.push(site.random_constant("ln_bias", t.dtype, &shape, -0.5, 0.5, rng));
            }
            Ok((ins, attrs))
        },
    )
}

fn rnn_like(
    op: &'static str,
    gates: i64,
) -> impl Fn(&mut Site<'_>, &str, &TensorType, &mut SplitMix64) -> Result<String, String> {
    move |site, x, t, rng| {
        let d = t.static_dims().ok_or("no static shape")?;
        attempts(
            site,
            op,
            3,
            &[
                "hidden_size",
                "activations",
                "activation_alpha",
                "activation_beta",
            ],
            rng,
            |site, mut attrs, rng| {
                let layout = int_attr(&attrs, "layout").unwrap_or(0);
                let input = d[2];
                let _ = layout;
                let hidden = 2 + pick(rng, 4) as i64;
                let dirs = match attrs.iter().find(|(k, _)| *k == "direction") {
                    Some((_, AttrValue::String(s))) if s == b"bidirectional" => 2,
                    _ => 1,
                };
                attrs.push(("hidden_size", AttrValue::Int(hidden)));
                let w = weight(
                    site,
                    "rnn_w",
                    t.dtype,
                    &[dirs, gates * hidden, input],
                    input,
                    rng,
                );
                let r = weight(
                    site,
                    "rnn_r",
                    t.dtype,
                    &[dirs, gates * hidden, hidden],
                    hidden,
                    rng,
                );
                let mut ins = vec![x.to_string(), w, r];
                if rng.unit() < 0.6 {
                    ins.push(weight(
                        site,
                        "rnn_b",
                        t.dtype,
                        &[dirs, 2 * gates * hidden],
                        hidden,
                        rng,
                    ));
                }
                Ok((ins, attrs))
            },
        )
    }
}

fn lstm(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    rnn_like("LSTM", 4)(site, x, t, rng)
}

fn gru(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    rnn_like("GRU", 3)(site, x, t, rng)
}

fn rnn(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, String> {
    rnn_like("RNN", 1)(site, x, t, rng)
}

fn same(d: DType, r: usize) -> Vec<(DType, usize)> {
    vec![(d, r)]
}

fn rank4(d: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(d, 4)]
}

fn rank2(d: DType, _: usize) -> Vec<(DType, usize)> {
    vec![(d, 2)]
}

/// The custom recipes.
pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    let table: Vec<Custom> = vec![
        Custom {
            op: "Conv",
            ranks: (3, 5),
            out: same,
            build: conv,
        },
        Custom {
            op: "ConvTranspose",
            ranks: (3, 5),
            out: same,
            build: conv_transpose,
        },
        Custom {
            op: "Gemm",
            ranks: (2, 2),
            out: rank2,
            build: gemm,
        },
        Custom {
            op: "BatchNormalization",
            ranks: (2, 5),
            out: same,
            build: batchnorm,
        },
        Custom {
            op: "InstanceNormalization",
            ranks: (3, 5),
            out: same,
            build: instancenorm,
        },
        Custom {
            op: "LayerNormalization",
            ranks: (1, 5),
            out: same,
            build: layernorm,
        },
        Custom {
            op: "LSTM",
            ranks: (3, 3),
            out: rank4,
            build: lstm,
        },
        Custom {
            op: "GRU",
            ranks: (3, 3),
            out: rank4,
            build: gru,
        },
        Custom {
            op: "RNN",
            ranks: (3, 3),
            out: rank4,
            build: rnn,
        },
    ];
    for c in table {
        list.push(Box::new(c));
    }
}
