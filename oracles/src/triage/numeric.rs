//! Steps 4 to 6 for numeric findings (NaN/Inf, inconsistency): the precision envelope, the
//! witnesses, localization to the first diverging node, and the catalogue of what ONNX leaves
//! open.

use super::confirm::{Blamed, Shows};
use super::{Cache, Triage, Triaged, Verdict, plain};
use crate::MutantRuns;
use crate::envelope::{PATH_ROUNDINGS, Precision, inside, largest_on_path, new_nonfinite};
use crate::finding::{Finding, Kind, Layer};
use crate::localize::unit_of;
use crate::localize::{Exposed, Localization, Verdict as LocVerdict, localize_with};
use mutagraph_backends::catalog;
use mutagraph_backends::value::{HostTensor, NamedValues};
use mutagraph_backends::worker::Pool;
use mutagraph_ir::graph::NodeId;
use mutagraph_ir::model::Model;

/// The precision envelope of a numeric finding: the f64 reference's outputs, the
/// native-precision reference's when it ran, and the tolerances.
struct Envelope<'a> {
    want: &'a NamedValues,
    native: Option<&'a NamedValues>,
    precision: &'a Precision,
}

impl Envelope<'_> {
    /// True when `got` is outside the envelope: a result the spec's own evaluation in the
    /// model's types gives is no bug. An inconsistency outside takes the comparison's
    /// symptom, message and metrics.
    fn excludes(&self, f: &mut Finding, got: &NamedValues) -> bool {
        match f.kind {
            Kind::Nan => new_nonfinite(self.want, self.native, got).0 > 0,
            _ => match inside(self.want, self.native, got, self.precision) {
                Ok(_) => new_nonfinite(self.want, self.native, got).0 > 0,
                Err((symptom, msg, metrics)) => {
                    f.symptom = symptom;
                    f.message = msg;
                    f.metrics = Some(metrics);
                    true
                }
            },
        }
    }

    /// [`Envelope::holds`] with the precision conditioned on the reference's values of the
    /// model (`truth`, and its `inputs`): a half-precision value may carry a few roundings of
    /// the largest value on its path ([`Precision::conditioned`]).
    fn holds_conditioned(
        &self,
        model: &Model,
        truth: &NamedValues,
        inputs: &NamedValues,
        got: &NamedValues,
    ) -> bool {
        let seen: NamedValues = truth.iter().chain(inputs.iter()).cloned().collect();
        Envelope {
            precision: &self.precision.conditioned(model, &seen),
            ..*self
        }
        .holds(got)
    }

    /// True when `got` is inside the envelope, without new NaN or Inf.
    fn holds(&self, got: &NamedValues) -> bool {
        inside(self.want, self.native, got, self.precision).is_ok()
            && new_nonfinite(self.want, self.native, got).0 == 0
    }
}

/// Whether `got` is within the rounding of `want` when each value may carry a few roundings
/// of the largest value on its path, those values read from `seen` (a run's intermediates and
/// the inputs) ([`Precision::conditioned`]).
pub(super) fn within_conditioned(
    model: &Model,
    precision: &Precision,
    want: &NamedValues,
    seen: (&NamedValues, &NamedValues),
    got: &NamedValues,
) -> bool {
    Envelope {
        want,
        native: None,
        precision,
    }
    .holds_conditioned(model, seen.0, seen.1, got)
}

/// Which arithmetic of `backend`'s the envelope allowed for (empty: none applied): `burn-cuda
/// may compute in TF32 matrix units, fused multiply-add, allowed for`.
fn arithmetic_words(backend: &str, precision: &Precision) -> String {
    let applied = precision.arithmetic_applied();
    if applied.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = applied.iter().map(|a| a.describe()).collect();
    format!("{backend} may compute in {}, allowed for", names.join(", "))
}

/// Why an error of `error` (`None`: a NaN or infinity, no size) is the model's conditioning
/// when its result moves by `moves` as every input and weight moves by a few rounding steps
/// ([`crate::localize::model_sensitivity`]): the moves are infinite (the result turns NaN or
/// infinite), or the error is within [`CONDITIONING_MOVES`] of them.
pub(super) fn conditioning(moves: f64, error: Option<f64>) -> Option<String> {
    if moves.is_infinite() {
        return Some(
            "the model sits on a singularity at its inputs: its result turns NaN or infinite \
             when every input and weight moves by a few rounding steps (a log of a sum that \
             cancels to zero), so any reordering of the arithmetic may land anywhere"
                .to_string(),
        );
    }
    let error = error?;
    (CONDITIONING_MOVES * moves >= error).then(|| {
        format!(
            "the model is ill-conditioned at its inputs: its result moves by {moves:.3e} when \
             every input and weight moves by a few rounding steps, and an optimizer's \
             reordering of the arithmetic lands within {CONDITIONING_MOVES} such moves \
             ({error:.3e})"
        )
    })
}

impl Triage {
    pub(super) fn triage_numeric(
        &mut self,
        pool: &mut Pool,
        cache: &mut Cache,
        runs: &MutantRuns,
        mut f: Finding,
    ) -> Triaged {
        let faulty = f.backends[0].clone();
        let (Some(want), Some(got)) = (
            runs.reference_outputs().cloned(),
            runs.runs
                .iter()
                .find(|r| r.backend == faulty)
                .and_then(|r| r.outcome.outputs().cloned()),
        ) else {
            return plain(f, Verdict::Report);
        };
        let native = self.native(pool, cache);
        let precision = self.precision(cache, &faulty);
        let envelope = Envelope {
            want: &want,
            native: native.as_ref(),
            precision: &precision,
        };
        let outside = envelope.excludes(&mut f, &got);
        let arithmetic = arithmetic_words(&faulty, &precision);
        if outside && !arithmetic.is_empty() {
            f.message = format!("{} ({arithmetic})", f.message);
        }
        let mut t = plain(f, Verdict::Report);
        if !outside {
            t.verdict = Verdict::Unstable(format!(
                "inside the precision envelope (the f64 reference and the spec's evaluation in \
                 the model's element types{})",
                if arithmetic.is_empty() {
                    String::new()
                } else {
                    format!("; {arithmetic}")
                }
            ));
            return t;
        }
        t.finding.witnesses = self.numeric_witnesses(runs, &faulty, &envelope);
        // The library's other variants (which of them show it: the layer) are run only for a
        // finding that stays a report: most numeric findings of a campaign end as behaviour the
        // spec leaves open or as rounding, which localization alone decides.
        let (Some(model), Some(rname)) = (cache.model(), self.reference().map(str::to_string))
        else {
            self.variants(pool, cache, runs, &mut t.finding);
            return t;
        };
        let truth = self.exposed(pool, cache, &rname);
        // A half-precision result inside the rounding of the largest value on its path (a
        // small result of large intermediates cancels) is rounding too.
        if let Some(w) = &truth
            && envelope.holds_conditioned(model, w, cache.inputs, &got)
        {
            t.verdict = Verdict::Unstable(
                "inside the rounding of the half-precision values it is computed from (a few \
                 units in the last place of the largest value on its path: a small result of \
                 large intermediates cancels)"
                    .into(),
            );
            return t;
        }
        let native_ex = if native.is_some() {
            self.exposed(pool, cache, "reference-native")
        } else {
            None
        };
        let faulty_ex = self.exposed(pool, cache, &faulty);
        // The first divergence on the way to the output found wrong: another output's bug
        // upstream elsewhere in the model is another finding (a minimizer keeping a GRU beside
        // a MatMulInteger filed its values under the MatMulInteger).
        let faulty_ex = match (faulty_ex, t.finding.named_output()) {
            (Some(v), Some(o)) => Some(upstream_of(model, o, v)),
            (v, _) => v,
        };
        let exposed = match (&truth, &faulty_ex) {
            (Some(w), Some(g)) => Some(Exposed {
                reference: w,
                native: native_ex.as_ref(),
                backend: g,
            }),
            _ => None,
        };
        let l = localize_or_fail(
            model,
            t.finding.kind,
            cache.inputs,
            exposed.as_ref(),
            &precision,
            pool,
        );
        // Not pinned on a node: behaviour ONNX leaves open anywhere in the model (values
        // taken from the reference) may be the cause; else only an optimizer's rewrite, which
        // exposing the intermediates undoes, explains it.
        let not_pinned = matches!(l.verdict, LocVerdict::NotReproduced | LocVerdict::Failed(_));
        if not_pinned
            && let Some(w) = &truth
            && let Some(hit) = self.undefined_on_way(model, None, w, cache.inputs)
        {
            t.verdict = Verdict::Undefined(hit);
        }
        if t.verdict == Verdict::Report
            && !matches!(l.verdict, LocVerdict::Unstable | LocVerdict::Undefined(_))
        {
            self.variants(pool, cache, runs, &mut t.finding);
        }
        if not_pinned && t.verdict == Verdict::Report && t.finding.layer != Some(Layer::Optimizer) {
            t.verdict = Verdict::Unlocalized(format!(
                "the difference does not show with every intermediate exposed ({})",
                match &l.verdict {
                    LocVerdict::Failed(w) => w.clone(),
                    _ => "the outputs then agree".into(),
                }
            ));
        }
        apply_localization(&mut t, &l, exposed.as_ref());
        if not_pinned && t.verdict == Verdict::Report && t.finding.layer == Some(Layer::Optimizer) {
            let shows = Shows::Values {
                kind: t.finding.kind,
                precision: &precision,
                native: native.is_some(),
            };
            let at = (model, faulty.as_str(), cache.inputs);
            self.unpinned_optimizer(pool, at, (&want, truth.as_ref()), &shows, &mut t);
        }
        if l.verdict == LocVerdict::Localized
            && let (Some(e), Some(loc)) = (&exposed, &l.location)
            && let Some(node) = model.graph.producer(&loc.value)
        {
            let at = Blamed {
                model,
                node,
                faulty: &faulty,
                inputs: cache.inputs,
                library: Some(e.backend),
                fresh: true,
            };
            let shows = Shows::Values {
                kind: t.finding.kind,
                precision: &precision,
                native: e.native.is_some(),
            };
            self.check_blame(pool, at, &shows, &mut t);
        }
        t.localization = Some(l);
        t.intermediates = truth;
        t
    }

    /// An optimizer's finding that exposing the intermediates undoes (`at`: the model, the
    /// faulty library, the inputs): rounding when the model moves as far under a nudge of a few
    /// roundings ([`CONDITIONING_MOVES`]); else the rewrite it needs, looked for on the whole
    /// model.
    fn unpinned_optimizer(
        &mut self,
        pool: &mut Pool,
        (model, faulty, inputs): (&Model, &str, &NamedValues),
        (want, truth): (&NamedValues, Option<&NamedValues>),
        shows: &Shows,
        t: &mut Triaged,
    ) {
        let moves = crate::localize::model_sensitivity(model, inputs, want, pool);
        let error = t.finding.metrics.as_ref().map(|m| m.max_abs);
        if let Some(why) = moves.and_then(|moves| conditioning(moves, error)) {
            t.verdict = Verdict::Unstable(why);
            return;
        }
        // A Round, Floor or Ceil on the way that takes a value within a few nudges of its step,
        // or a dynamic quantizer whose input moves, jumps by a step under any reordering of the
        // arithmetic before it.
        let path = output_path(model, t.finding.named_output());
        if let Some(near) =
            crate::localize::steps_within_reach(model, &path, inputs, CONDITIONING_MOVES, pool)
            && let Some(op) = near.first()
        {
            t.verdict = Verdict::Unstable(if matches!(op.as_str(), "Round" | "Floor" | "Ceil") {
                format!(
                    "a {op} on the way to the output takes a value within {CONDITIONING_MOVES} \
                     moves of its step (a move: how far the value goes when every input and \
                     weight moves by a few rounding steps): an optimizer's reordering of the \
                     arithmetic before it carries the value across"
                )
            } else {
                format!(
                    "a {op} on the way to the output quantizes with a scale drawn from its \
                     input's range, which moves when every input and weight moves by a few \
                     rounding steps: an optimizer's reordering of the arithmetic before it moves \
                     the scale and carries elements across a quantization step"
                )
            });
            return;
        }
        // A square root or a log on the way whose input holds a value within a few roundings
        // of zero, at the scale of the largest value on its path: a reordering of the
        // arithmetic before it takes the value below zero.
        if t.finding.kind == Kind::Nan
            && let Some(seen) = truth
            && let Some(op) = edge_within_rounding(model, &path, seen, inputs)
        {
            let what = if op == "ReduceProd" {
                "flips its sign, and so the sign of the product that overflowed"
            } else {
                "makes it negative"
            };
            t.verdict = Verdict::Unstable(format!(
                "a {op} on the way to the output takes a value within {PATH_ROUNDINGS} roundings \
                 of 0, at the scale of the largest value on its path: an optimizer's reordering \
                 of the arithmetic before it {what}"
            ));
            return;
        }
        self.check_model_rewrite(pool, model, faulty, inputs, shows, t);
    }

    /// The other libraries whose runs are inside the envelope, then the reference.
    fn numeric_witnesses(
        &self,
        runs: &MutantRuns,
        faulty: &str,
        envelope: &Envelope,
    ) -> Vec<String> {
        let mut witnesses: Vec<String> = runs
            .others()
            .filter(|r| catalog::library(&r.backend) != catalog::library(faulty))
            .filter(|r| r.outcome.outputs().is_some_and(|o| envelope.holds(o)))
            .map(|r| r.backend.clone())
            .collect();
        if let Some(r) = self.reference() {
            witnesses.push(r.to_string());
        }
        witnesses
    }

    /// What ONNX leaves open at the first node, in topological order, on the way to `output`
    /// (anywhere in the model when it names none; values taken from `truth`).
    pub(super) fn undefined_on_way(
        &self,
        model: &Model,
        output: Option<&str>,
        truth: &NamedValues,
        inputs: &NamedValues,
    ) -> Option<String> {
        let on_way: std::collections::HashSet<NodeId> =
            output_path(model, output).into_iter().collect();
        let ids: Vec<NodeId> = model.graph.topo_order().unwrap_or_default();
        ids.into_iter()
            .filter(|id| on_way.contains(id))
            .find_map(|id| self.undefined_at(model, id, truth, inputs, false))
    }
}

/// How many times its move under a nudge of a few roundings an optimizer's error may be on an
/// ill-conditioned model ([`crate::localize::model_sensitivity`]) to be rounding.
const CONDITIONING_MOVES: f64 = 4.0;

/// The nodes on the way to the output `named` (the producer and its ancestors), or every node
/// when it names none.
fn output_path(model: &Model, named: Option<&str>) -> Vec<NodeId> {
    let producer = named.and_then(|o| model.graph.producer(o));
    match producer {
        Some(id) => {
            let mut v = crate::triage::crash::ancestors(model, id);
            v.push(id);
            v
        }
        None => model.graph.topo_order().unwrap_or_default(),
    }
}

/// The values of `values` computed on the way to `output` (by its producer and that node's
/// ancestors); all of them when `output` has no producer.
fn upstream_of(model: &Model, output: &str, values: NamedValues) -> NamedValues {
    let g = &model.graph;
    let Some(last) = g.producer(output) else {
        return values;
    };
    let mut ids = crate::triage::crash::ancestors(model, last);
    ids.push(last);
    let on_way: std::collections::HashSet<&str> = ids
        .iter()
        .filter_map(|id| g.node(*id))
        .flat_map(|n| n.outputs.iter().map(String::as_str))
        .collect();
    values
        .into_iter()
        .filter(|(n, _)| on_way.contains(n.as_str()))
        .collect()
}

/// Localization over the `exposed` values, or its failure when the exposed model did not run
/// on both sides.
fn localize_or_fail(
    model: &Model,
    kind: Kind,
    inputs: &NamedValues,
    exposed: Option<&Exposed>,
    precision: &Precision,
    pool: &mut Pool,
) -> Localization {
    match exposed {
        Some(e) => localize_with(model, kind, inputs, e, precision, pool),
        None => Localization {
            verdict: LocVerdict::Failed("the exposed model did not run on both sides".into()),
            location: None,
            values: Vec::new(),
            max_r: None,
        },
    }
}

/// What localization `l` decides: rounding (unstable), behaviour ONNX leaves open, or the
/// location (and, for an inconsistency, the NaN symptom of the blamed node).
fn apply_localization(t: &mut Triaged, l: &Localization, exposed: Option<&Exposed>) {
    match &l.verdict {
        LocVerdict::Unstable => {
            t.verdict = Verdict::Unstable(format!(
                "the first diverging node ({}) is rounding amplified, ill-conditioned or at \
                 the edge of the float range",
                l.location.as_ref().map_or("?", |x| x.op_type.as_str())
            ))
        }
        LocVerdict::Undefined(why) => t.verdict = Verdict::Undefined(why.clone()),
        LocVerdict::Localized => {
            t.finding.location = l.location.clone();
            // The symptom is the blamed node's: NaN or Inf that it makes from finite
            // inputs is a NaN bug even where later nodes turn it into wrong values.
            if t.finding.kind == Kind::Inconsistency
                && let (Some(loc), Some(e)) = (&l.location, exposed)
            {
                let one = |vals: &NamedValues| -> NamedValues {
                    vals.iter()
                        .filter(|(n, _)| *n == loc.value)
                        .cloned()
                        .collect()
                };
                let nat = e.native.map(one);
                let shape = |vals: &NamedValues| {
                    one(vals)
                        .first()
                        .and_then(|(_, v)| Some(v.tensor()?.shape.clone()))
                };
                // A wrong shape at the blamed node that later nodes turn into wrong values (an
                // ArgMin over a pooled axis one row short) is that shape's finding, as the
                // failures it makes elsewhere are.
                if let (Some(w), Some(g)) = (shape(e.reference), shape(e.backend))
                    && w != g
                {
                    let f = &mut t.finding;
                    f.symptom = "shape".into();
                    f.message = format!(
                        "{} gives '{}' ({}) the shape {g:?}, the reference {w:?}; downstream: {}",
                        f.backends[0], loc.value, loc.op_type, f.message
                    );
                    return;
                }
                let (n, total, _) = new_nonfinite(&one(e.reference), nat.as_ref(), &one(e.backend));
                if n > 0 {
                    let f = &mut t.finding;
                    f.kind = Kind::Nan;
                    f.symptom = "nan".into();
                    f.message = format!(
                        "{n} of {total} elements NaN/Inf where the reference is finite (first \
                         in '{}', downstream: {})",
                        loc.value, f.message
                    );
                }
            }
        }
        _ => {}
    }
}

/// The first Sqrt or Log, or ReduceProd whose product overflowed, among `path`'s nodes whose
/// input, in the reference's run (`seen`,
/// with the model's `inputs` and initializers), holds a non-zero value within
/// [`PATH_ROUNDINGS`] roundings of zero at the scale of the largest value on its path (the
/// rounding of the input's element type): its sign is rounding (a square root of 4.5e-7 left
/// from terms of 6.6e-3 after float32 convolutions, which ONNX Runtime's rule-based rewrites
/// made negative). Its op type.
fn edge_within_rounding(
    model: &Model,
    path: &[NodeId],
    seen: &NamedValues,
    inputs: &NamedValues,
) -> Option<String> {
    let g = &model.graph;
    let known: NamedValues = seen.iter().chain(inputs).cloned().collect();
    let largest = largest_on_path(model, &known);
    for id in g.topo_order().ok()? {
        let n = g.node(id)?;
        if !path.contains(&id) || !matches!(n.op_type.as_str(), "Sqrt" | "Log" | "ReduceProd") {
            continue;
        }
        // A product's factor near zero decides only the sign of a product that overflowed
        // (round 14: ReduceProd over 8192 values, ±inf in every run, its sign one factor's).
        let overflowed = |out: &str| {
            known.iter().any(|(k, v)| {
                k == out
                    && v.tensor()
                        .and_then(HostTensor::to_f64s)
                        .is_some_and(|v| v.iter().any(|x| x.is_infinite()))
            })
        };
        if n.op_type == "ReduceProd" && !n.outputs.first().is_some_and(|o| overflowed(o)) {
            continue;
        }
        let Some(name) = n.inputs.first() else {
            continue;
        };
        let x = match known.iter().find(|(k, _)| k == name) {
            Some((_, v)) => v.tensor().cloned(),
            None => g
                .initializers
                .get(name)
                .and_then(|t| HostTensor::from_proto(t).ok()),
        };
        let Some(x) = x else { continue };
        let Some(unit) = unit_of(x.dtype) else {
            continue;
        };
        let reach = PATH_ROUNDINGS * unit * largest.get(name).copied().unwrap_or(0.0);
        let near = x
            .to_f64s()?
            .iter()
            .any(|v| v.is_finite() && *v != 0.0 && v.abs() <= reach);
        if near {
            return Some(n.op_type.clone());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::edge_within_rounding;
    use mutagraph_backends::value::{Data, HostTensor, NamedValues, Value};

    /// A square root of a difference of terms of 100 left at 3e-6 (a float32 rounding of 100
    /// is 6e-6): its sign is rounding. Far from zero, or exactly zero, it is not.
    #[test]
    fn a_square_root_of_a_difference_within_rounding_of_zero_is_an_edge() {
        let model = mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[1] x, float[1] c) => (float[1] y) {\n m = Mul (x, x)\n d = Sub (m, c)\n \
             y = Sqrt (d)\n}",
        )
        .unwrap();
        let path = model.graph.topo_order().unwrap();
        let f = |v: f32| Value::Tensor(HostTensor::new(vec![1], Data::F32(vec![v])));
        let inputs: NamedValues = vec![("x".into(), f(10.0)), ("c".into(), f(100.0))];
        let seen = |d: f32| -> NamedValues {
            vec![
                ("m".into(), f(100.0)),
                ("d".into(), f(d)),
                ("y".into(), f(d.sqrt())),
            ]
        };
        let edge = |d| edge_within_rounding(&model, &path, &seen(d), &inputs);
        assert_eq!(edge(3e-6).as_deref(), Some("Sqrt"));
        assert_eq!(edge(1.0), None);
        assert_eq!(edge(0.0), None);
    }

    /// A product of many factors that overflowed: a factor within rounding of zero decides its
    /// sign (round 14). A finite product, or factors far from zero, are no edge.
    #[test]
    fn an_overflowed_product_with_a_factor_within_rounding_of_zero_is_an_edge() {
        let model = mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[4] x) => (float[1] y) {\n m = Tan (x)\n y = ReduceProd (m)\n}",
        )
        .unwrap();
        let path = model.graph.topo_order().unwrap();
        let f = |v: Vec<f32>| Value::Tensor(HostTensor::new(vec![v.len()], Data::F32(v)));
        let inputs: NamedValues = vec![("x".into(), f(vec![1.5; 4]))];
        let seen = |small: f32, y: f32| -> NamedValues {
            vec![
                ("m".into(), f(vec![4766.0, 2.0, 3.0, small])),
                ("y".into(), f(vec![y])),
            ]
        };
        let edge = |small, y| edge_within_rounding(&model, &path, &seen(small, y), &inputs);
        assert_eq!(
            edge(-4.67e-5, f32::NEG_INFINITY).as_deref(),
            Some("ReduceProd")
        );
        assert_eq!(edge(-4.67e-5, -1e30), None);
        assert_eq!(edge(-3.0, f32::NEG_INFINITY), None);
    }
}
