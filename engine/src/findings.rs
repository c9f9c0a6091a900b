//! What happens to a finding after an oracle reports it: localization on the exposed model,
//! the dedup record, and the minimization predicate ("does this smaller model still show the
//! same bug?") shared by the campaign's background minimizer and `mutagraph minimize`.
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_backends::intermediates::expose_all;
use mutagraph_backends::value::{HostTensor, NamedValues, Value};
use mutagraph_backends::worker::{Pool, RunReport};
use mutagraph_ir::Model;
use mutagraph_oracles::localize::{
    Blamed, Localization, Verdict, extract, key_attrs, localize_blamed,
};
use mutagraph_oracles::{Finding, Kind, Location, MutantRuns, Oracle, judge_all};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// When a signature was seen.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Seen {
    /// Campaign iteration.
    pub iteration: u64,
    /// Campaign wall time, seconds.
    pub elapsed_s: f64,
}

/// One deduplicated bug: its bundle directory and how often it was hit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SigEntry {
    /// Bundle directory name under `findings/`.
    pub id: String,
    /// Kind.
    pub kind: Kind,
    /// Times the oracles reported it.
    pub hits: u64,
    /// First time.
    pub first_seen: Seen,
    /// Last time.
    pub last_seen: Seen,
}

/// The kinds the minimizer works on (the others depend on timing or load).
pub fn minimizable(kind: Kind) -> bool {
    matches!(kind, Kind::Crash | Kind::Nan | Kind::Inconsistency)
}

/// Values by name for the inputs of smaller models: the original inputs and every
/// intermediate value the reference computed. A cut that turns an intermediate into a graph
/// input is fed what that value was in the original run, so the bug keeps its trigger.
#[derive(Clone, Debug, Default)]
pub struct ValueMap {
    values: HashMap<String, HostTensor>,
    seed: u64,
}

impl ValueMap {
    /// From the original inputs and the reference's intermediates.
    pub fn new(inputs: &NamedValues, intermediates: Option<&NamedValues>, seed: u64) -> ValueMap {
        let mut values = HashMap::new();
        for (n, v) in inputs.iter().chain(intermediates.into_iter().flatten()) {
            if let Value::Tensor(t) = v {
                values.insert(n.clone(), t.clone());
            }
        }
        ValueMap { values, seed }
    }

    /// Inputs for `model`: known values when their shape fits (a leading block when the
    /// model's dims are smaller), generated ones otherwise.
    pub fn inputs_for(&self, model: &Model) -> Option<NamedValues> {
        let generated = inputs::generate(model, self.seed, &GenOptions::default()).ok()?;
        Some(
            generated
                .into_iter()
                .map(|(name, g)| {
                    let Value::Tensor(gt) = &g else {
                        return (name, g);
                    };
                    match self.values.get(&name).and_then(|k| fit(k, gt)) {
                        Some(t) => (name, Value::Tensor(t)),
                        None => (name, g),
                    }
                })
                .collect(),
        )
    }
}

/// `known` cut to the shape of `like` (same dtype and rank, each dim no larger).
fn fit(known: &HostTensor, like: &HostTensor) -> Option<HostTensor> {
    if known.dtype != like.dtype || known.shape.len() != like.shape.len() {
        return None;
    }
    if known.shape == like.shape {
        return Some(known.clone());
    }
    if known.shape.iter().zip(&like.shape).any(|(k, l)| l > k) {
        return None;
    }
    let src = known.to_f64s()?;
    let rank = like.shape.len();
    let mut strides = vec![1usize; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * known.shape[d + 1];
    }
    let n: usize = like.shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; rank];
    for _ in 0..n {
        out.push(src[idx.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>()]);
        for d in (0..rank).rev() {
            idx[d] += 1;
            if idx[d] < like.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    HostTensor::from_f64s(like.dtype, like.shape.clone(), &out).ok()
}

/// "Same bug" for minimization: run a candidate on the backends that matter, judge it with the
/// oracles, localize numeric findings, and compare signatures with the target.
pub struct Reproducer<'a> {
    /// The pool that runs every backend.
    pub pool: &'a mut Pool,
    /// Backends to run (the reference first when there is one).
    pub backends: Vec<String>,
    /// Index of the reference in `backends`.
    pub reference: Option<usize>,
    /// The oracles.
    pub oracles: Vec<Box<dyn Oracle>>,
    /// Tolerance of localization.
    pub tolerance: Tolerance,
    /// The signature to keep.
    pub target: String,
    /// Input values.
    pub values: ValueMap,
    /// Predicate calls so far.
    pub calls: usize,
}

/// What one check of a candidate found.
pub struct Check {
    /// The runs.
    pub runs: MutantRuns,
    /// The inputs used.
    pub inputs: NamedValues,
    /// The finding with the target signature, localized, if it is still there.
    pub finding: Option<(Finding, Option<Localization>)>,
}

impl Reproducer<'_> {
    /// The backends a finding needs: the faulty ones and the reference, or every backend of
    /// the campaign when the reference itself is blamed.
    pub fn backends_for(f: &Finding, all: &[String], reference: Option<&str>) -> Vec<String> {
        let mut v: Vec<String> = reference.into_iter().map(String::from).collect();
        if f.backends.iter().any(|b| Some(b.as_str()) == reference) {
            v.extend(
                all.iter()
                    .filter(|b| Some(b.as_str()) != reference)
                    .cloned(),
            );
        } else {
            v.extend(f.backends.iter().cloned());
        }
        v.dedup();
        v
    }

    /// Runs and judges `model`.
    pub fn check(&mut self, model: &Model) -> Option<Check> {
        self.calls += 1;
        let inputs = self.values.inputs_for(model)?;
        let bytes = model.to_bytes();
        let mut runs: Vec<RunReport> = Vec::new();
        for b in &self.backends {
            runs.push(self.pool.run(b, &bytes, &inputs).ok()?);
        }
        let mr = MutantRuns {
            runs,
            reference: self.reference,
            reruns: Vec::new(),
        };
        let mut found = None;
        for mut f in mutagraph_oracles::merge_variants(judge_all(&self.oracles, &mr), &mr) {
            if let Some(r) = self.reference {
                let rname = self.backends[r].clone();
                refine_crash(self.pool, &rname, &mut f, model, &inputs);
            }
            let mut loc = None;
            if f.kind.is_numeric()
                && f.location.is_none()
                && let Some(r) = self.reference
            {
                let rname = self.backends[r].clone();
                let truth = agreeing(&mr).map(str::to_string);
                let (l, _) = localize_one(
                    self.pool,
                    &rname,
                    &f,
                    model,
                    &inputs,
                    self.tolerance,
                    truth.as_deref(),
                );
                if l.verdict == Verdict::Localized {
                    f.location = l.location.clone();
                }
                loc = Some(l);
            }
            if f.signature() == self.target {
                found = Some((f, loc));
                break;
            }
        }
        Some(Check {
            runs: mr,
            inputs,
            finding: found,
        })
    }

    /// True when `model` still shows the target bug.
    pub fn reproduces(&mut self, model: &Model) -> bool {
        self.check(model).is_some_and(|c| c.finding.is_some())
    }
}

/// The first node to which `faulty` gives an output of another shape than the reference does,
/// searched on the longest prefix of `model` (in topological order, every output exposed) that
/// `faulty` still runs: a crash downstream of such a node is that node's wrong shape showing
/// up (one wrongly shaped MaxPool makes a Concat, a Reshape or an Add fail, each with its own
/// message). Returns the node's location and what differs.
pub fn shape_root_cause(
    pool: &mut Pool,
    reference: &str,
    faulty: &str,
    model: &Model,
    inputs: &NamedValues,
) -> Option<(Location, String)> {
    let order = model.graph.topo_order().ok()?;
    if order.len() < 2 {
        return None;
    }
    let (exposed, _) = expose_all(model).ok()?;
    let truth = pool
        .run(reference, &exposed.to_bytes(), inputs)
        .ok()?
        .outcome
        .outputs()?
        .clone();
    let mut run_prefix = |k: usize| -> Option<NamedValues> {
        let prefix = extract(model, &order[..k]).ok()?;
        let (prefix, _) = expose_all(&prefix).ok()?;
        let wanted: Vec<String> = prefix
            .graph
            .real_inputs()
            .iter()
            .filter_map(|vi| vi.name.clone())
            .collect();
        let feed: NamedValues = inputs
            .iter()
            .filter(|(n, _)| wanted.contains(n))
            .cloned()
            .collect();
        pool.run(faulty, &prefix.to_bytes(), &feed)
            .ok()?
            .outcome
            .outputs()
            .cloned()
    };
    // Bisection: `lo` nodes run (0: trivially), `hi` do not.
    let (mut lo, mut hi) = (0usize, order.len());
    let mut got: Option<NamedValues> = None;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        match run_prefix(mid) {
            Some(o) => {
                lo = mid;
                got = Some(o);
            }
            None => hi = mid,
        }
    }
    let got = got?;
    let shape = |vals: &NamedValues, name: &str| {
        vals.iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.tensor().map(|t| t.shape.clone()))
    };
    for id in &order[..lo] {
        let node = model.graph.node(*id)?;
        for o in node.outputs.iter().filter(|o| !o.is_empty()) {
            let (Some(w), Some(g)) = (shape(&truth, o), shape(&got, o)) else {
                continue;
            };
            if w != g {
                return Some((
                    Location {
                        op_type: node.op_type.clone(),
                        value: o.clone(),
                        attrs: key_attrs(node),
                    },
                    format!(
                        "{faulty} gives '{o}' ({}) the shape {g:?}, the reference {w:?}",
                        node.op_type
                    ),
                ));
            }
        }
    }
    None
}

/// A crash of one backend that [`shape_root_cause`] traces to a wrongly shaped output becomes
/// the inconsistency (shape) of that node, the same finding as when no later op trips over it.
pub fn refine_crash(
    pool: &mut Pool,
    reference: &str,
    f: &mut Finding,
    model: &Model,
    inputs: &NamedValues,
) {
    if !refinable(f, reference) {
        return;
    }
    let faulty = f.backends[0].clone();
    if let Some(cause) = shape_root_cause(pool, reference, &faulty, model, inputs) {
        apply_root_cause(f, cause);
    }
}

/// Whether [`refine_crash`] would look at `f`: a crash of backends other than the reference
/// (several when variants of one library crash alike; the first one is probed).
pub fn refinable(f: &Finding, reference: &str) -> bool {
    f.kind == Kind::Crash && !f.backends.is_empty() && f.backends.iter().all(|b| b != reference)
}

/// Turns a crash into the shape inconsistency of the node [`shape_root_cause`] found.
pub fn apply_root_cause(f: &mut Finding, (loc, why): (Location, String)) {
    f.message = format!("{why}; downstream: {}", f.message);
    f.kind = Kind::Inconsistency;
    f.stage = None;
    f.symptom = "shape".into();
    f.location = Some(loc);
}

/// Localizes `f` with one pool running both the reference and the faulty backend.
/// A backend other than the reference that ran the mutant: the truth for localizing a
/// finding that blames the reference (the others agree with each other against it).
pub fn agreeing(runs: &MutantRuns) -> Option<&str> {
    runs.others()
        .find(|r| r.outcome.outputs().is_some())
        .map(|r| r.backend.as_str())
}

/// Localizes a numeric finding (see [`localize_blamed`]); `agreeing` names a backend that
/// agrees with the others when the finding blames the reference.
#[allow(clippy::too_many_arguments)]
pub fn localize_one(
    pool: &mut Pool,
    reference: &str,
    f: &Finding,
    model: &Model,
    inputs: &NamedValues,
    tolerance: Tolerance,
    agreeing: Option<&str>,
) -> (Localization, Option<NamedValues>) {
    // Pool is `&mut`; run the reference and the backend one after the other on it.
    let exposed = match expose_all(model) {
        Ok((m, _)) => m.to_bytes(),
        Err(e) => {
            return (
                Localization {
                    verdict: Verdict::Failed(format!("exposing intermediates: {e}")),
                    location: None,
                    values: Vec::new(),
                    max_r: None,
                },
                None,
            );
        }
    };
    // A finding that blames the reference (backends agreeing against it) is localized with
    // one of those backends as the truth.
    let (truth, faulty, blamed) = if f.backends[0] == reference {
        match agreeing {
            Some(b) => (b, reference, Blamed::Reference),
            None => {
                return (
                    Localization {
                        verdict: Verdict::Failed("no backend to compare the reference with".into()),
                        location: None,
                        values: Vec::new(),
                        max_r: None,
                    },
                    None,
                );
            }
        }
    } else {
        (reference, f.backends[0].as_str(), Blamed::Backend)
    };
    let mut outs = Vec::new();
    for b in [truth, faulty] {
        match pool.run(b, &exposed, inputs) {
            Ok(r) => outs.push(r.outcome.outputs().cloned()),
            Err(_) => outs.push(None),
        }
    }
    match (&outs[0], &outs[1]) {
        (Some(w), Some(g)) => (
            localize_blamed(model, f.kind, inputs, w, g, tolerance, blamed),
            // The reference's intermediates (kept for cut inputs in minimization).
            Some(if blamed == Blamed::Reference {
                g.clone()
            } else {
                w.clone()
            }),
        ),
        _ => (
            Localization {
                verdict: Verdict::Failed("the exposed model did not run on both backends".into()),
                location: None,
                values: Vec::new(),
                max_r: None,
            },
            outs[0].clone(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_backends::value::Data;

    #[test]
    fn known_values_are_cut_to_smaller_shapes() {
        let k = HostTensor::new(vec![2, 3], Data::F32(vec![0., 1., 2., 3., 4., 5.]));
        let like = HostTensor::new(vec![1, 2], Data::F32(vec![9., 9.]));
        assert_eq!(fit(&k, &like).unwrap().to_f64s().unwrap(), vec![0., 1.]);
        let like = HostTensor::new(vec![2, 2], Data::F32(vec![9.; 4]));
        assert_eq!(
            fit(&k, &like).unwrap().to_f64s().unwrap(),
            vec![0., 1., 3., 4.]
        );
        let bigger = HostTensor::new(vec![3, 3], Data::F32(vec![9.; 9]));
        assert!(fit(&k, &bigger).is_none());
    }
}
