//! When two values have "the same type": the same element type and the same shape for every
//! size the model's inputs can take, so that readers of one can read the other.
//!
//! Exported models have symbolic input sizes (`batch`, `height`, `width`), and inference leaves
//! the spatial sizes behind a strided `Conv` unknown: the static types of a block's input and
//! output say nothing. So the model is also inferred at sample sizes: every symbolic or unknown
//! input dimension gets a value of its own (distinct dimensions get distinct values, so that a
//! `Transpose` of height and width is not taken for the identity), in up to three samples taken
//! from a list, large sizes first (small ones collapse: a short sequence is one STFT frame before
//! and after a stride-2 layer): odd primes (a stride-2 layer followed by a 2× upsampling gives
//! back an odd size only when it is the identity) and series of multiples of 32 or 16. A sample
//! whose inference reports more errors than the model's own (an FPN that needs sizes divisible
//! by 32 fails on the primes, a text recognizer needs a height of about 48) is left out; when
//! fewer than two samples remain, the samples give every dimension the same size. Each
//! dimension of a value's key is then its static size, or the list of its sizes in the samples
//! kept (at least two; not all 1), or the symbol inference gave it; a dimension that is none of
//! these makes the value incomparable.
use crate::ir::types::{Dim, ValueType};
use crate::ir::{DType, Model};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum DimKey {
    Known(i64),
    Sampled(Vec<i64>),
    Symbol(String),
}

/// Type keys of the values of a model's main graph: two values have the same key when one can
/// replace the other.
pub(crate) struct TypeKeys {
    by_name: HashMap<String, u32>,
    /// Where the symbolic input dims are: (graph input index, axis, symbol index).
    pub sites: Vec<(usize, usize, usize)>,
    /// The sample sizes kept (one value per symbol).
    pub samples: Vec<Vec<i64>>,
}

const MAX_SAMPLES: usize = 3;

fn primes_from(lo: i64, n: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(n);
    let mut x = lo;
    while out.len() < n {
        if x > 1 && (2..).take_while(|d| d * d <= x).all(|d| x % d != 0) {
            out.push(x);
        }
        x += 1;
    }
    out
}

impl TypeKeys {
    /// Infers the model (its `types` are left as inferred at its own input sizes) and the keys.
    pub fn infer(m: &mut Model) -> TypeKeys {
        let base_errors = crate::ir::infer::infer_model(m, Default::default())
            .errors
            .len();
        let base = std::mem::take(&mut m.graph.types);
        // The symbolic dimensions of the real inputs: (input index, axis, symbol index).
        let mut symbols: Vec<String> = Vec::new();
        let mut sites: Vec<(usize, usize, usize)> = Vec::new();
        let real: Vec<usize> = m
            .graph
            .inputs
            .iter()
            .enumerate()
            .filter(|(_, v)| {
                !m.graph
                    .initializers
                    .contains_key(v.name.as_deref().unwrap_or(""))
            })
            .map(|(i, _)| i)
            .collect();
        for &i in &real {
            let v = &m.graph.inputs[i];
            let Some(ValueType::Tensor(t)) = v.r#type.as_ref().map(ValueType::from_proto) else {
                continue;
            };
            for (axis, d) in t.shape.iter().flatten().enumerate() {
                let sym = match d {
                    Dim::Known(_) => continue,
                    Dim::Param(p) => p.clone(),
                    Dim::Unknown => format!("?{i}:{axis}"),
                };
                let k = symbols.iter().position(|s| *s == sym).unwrap_or_else(|| {
                    symbols.push(sym);
                    symbols.len() - 1
                });
                sites.push((i, axis, k));
            }
        }
        let mut samples: Vec<HashMap<String, ValueType>> = Vec::new();
        let mut kept: Vec<Vec<i64>> = Vec::new();
        if !symbols.is_empty() {
            let n = symbols.len();
            let series = |a: i64, d: i64| (0..n as i64).map(|k| a + d * k).collect::<Vec<i64>>();
            // Large sizes first: small ones collapse (a sequence of 59 samples is one STFT
            // frame before and after a stride-2 layer).
            let distinct: Vec<Vec<i64>> = vec![
                primes_from(1009, n),
                series(1024, 32),
                series(1536, 96),
                primes_from(211, n),
                series(224, 32),
                series(192, 96),
                primes_from(53, n),
                series(32, 16),
                primes_from(29, n),
                series(16, 8),
            ];
            let same: Vec<Vec<i64>> = [1009, 1024, 224, 97, 160, 32, 48, 16]
                .iter()
                .map(|&v| vec![v; n])
                .collect();
            for series in [distinct, same] {
                samples.clear();
                kept.clear();
                for values in series {
                    if let Some(t) = sample(m, &sites, &values, base_errors) {
                        samples.push(t);
                        kept.push(values);
                    }
                    if samples.len() == MAX_SAMPLES {
                        break;
                    }
                }
                if samples.len() >= 2 {
                    break;
                }
            }
            if samples.len() < 2 {
                samples.clear();
                kept.clear();
            }
        }
        m.graph.types = base;
        let mut interned: HashMap<(DType, Vec<DimKey>), u32> = HashMap::new();
        let mut by_name = HashMap::new();
        for (name, t) in &m.graph.types {
            let Some(t) = t.tensor() else { continue };
            let Some(shape) = &t.shape else { continue };
            if !t.dtype.is_known() {
                continue;
            }
            let mut dims = Vec::with_capacity(shape.len());
            for (axis, d) in shape.iter().enumerate() {
                let k = match d {
                    Dim::Known(v) => Some(DimKey::Known(*v)),
                    _ => {
                        let sampled: Option<Vec<i64>> = if samples.is_empty() {
                            None
                        } else {
                            samples
                                .iter()
                                .map(|s| {
                                    let st = s.get(name)?.tensor()?;
                                    (st.dtype == t.dtype).then_some(())?;
                                    st.shape.as_ref()?.get(axis)?.value()
                                })
                                .collect()
                        };
                        match (sampled, d) {
                            // 1 at every sample size: collapsed, says nothing.
                            (Some(v), _) if v.iter().any(|&x| x != 1) => Some(DimKey::Sampled(v)),
                            (None, Dim::Param(p)) => Some(DimKey::Symbol(p.clone())),
                            _ => None,
                        }
                    }
                };
                match k {
                    Some(k) => dims.push(k),
                    None => break,
                }
            }
            if dims.len() != shape.len() {
                continue;
            }
            let next = interned.len() as u32;
            let id = *interned.entry((t.dtype, dims)).or_insert(next);
            by_name.insert(name.clone(), id);
        }
        TypeKeys {
            by_name,
            sites,
            samples: kept,
        }
    }

    /// The key of a value (`None`: not comparable).
    pub fn key(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }
}

/// The types of the model inferred with its symbolic input dims set to `values`; `None` when
/// that inference reports more errors than the model's own.
fn sample(
    m: &mut Model,
    sites: &[(usize, usize, usize)],
    values: &[i64],
    base_errors: usize,
) -> Option<HashMap<String, ValueType>> {
    let (types, errors) = infer_at(m, sites, values);
    (errors <= base_errors).then_some(types)
}

/// The types of the model (left without inferred types) inferred with its symbolic input dims
/// set to `values`, and the number of inference errors.
pub(crate) fn infer_at(
    m: &mut Model,
    sites: &[(usize, usize, usize)],
    values: &[i64],
) -> (HashMap<String, ValueType>, usize) {
    let saved: Vec<_> = m.graph.inputs.clone();
    for &(i, axis, k) in sites {
        let v = &mut m.graph.inputs[i];
        let Some(ValueType::Tensor(mut t)) = v.r#type.as_ref().map(ValueType::from_proto) else {
            continue;
        };
        if let Some(s) = t.shape.as_mut() {
            s[axis] = Dim::Known(values[k]);
        }
        v.r#type = Some(ValueType::Tensor(t).to_proto());
    }
    let errors = crate::ir::infer::infer_model(m, Default::default())
        .errors
        .len();
    m.graph.inputs = saved;
    (std::mem::take(&mut m.graph.types), errors)
}
