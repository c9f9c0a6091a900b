//! Weight operators (LEMON / How-Far): they change the values of one weight tensor (a float
//! initializer read by an op) and keep its dtype and dims, so the mutant is valid by
//! construction.
use crate::builder::SplitMix64;
use crate::ir::Model;
use crate::ir::patch::{Patch, PatchOp};
use crate::ir::tensor::{self, TensorExt};
use crate::mutation::{Ctx, Mutator, Outcome, commit};
use crate::operators::common::{backbone, weights};

mod gf;
mod nai;
mod neb;
mod ns;
mod ws;

pub use gf::GaussianFuzzing;
pub use nai::NeuronActivationInverse;
pub use neb::NeuronEffectBlock;
pub use ns::NeuronSwitch;
pub use ws::WeightShuffle;

/// The weight operators.
pub fn all() -> Vec<Box<dyn Mutator>> {
    vec![
        Box::new(WeightShuffle),
        Box::new(NeuronSwitch),
        Box::new(GaussianFuzzing),
        Box::new(NeuronActivationInverse),
        Box::new(NeuronEffectBlock),
    ]
}

/// A weight to change: its name, dims and values.
pub(crate) struct Weight {
    pub name: String,
    pub dims: Vec<i64>,
    pub values: Vec<f64>,
}

impl Weight {
    /// Length of one neuron's slice (elements per index of the first dim).
    pub fn neuron_len(&self) -> usize {
        self.dims.iter().skip(1).product::<i64>().max(1) as usize
    }
    /// Number of neurons (the first dim).
    pub fn neurons(&self) -> usize {
        self.values.len() / self.neuron_len()
    }
}

/// Picks a weight, preferring ones read by backbone ops.
pub(crate) fn pick_weight(model: &Model, ctx: &mut Ctx<'_>) -> Option<Weight> {
    let all = weights(model);
    if all.is_empty() {
        return None;
    }
    let spine = backbone(model);
    let on: Vec<&(String, crate::ir::NodeId)> = all
        .iter()
        .filter(|(_, id)| {
            model
                .graph
                .node(*id)
                .and_then(|n| n.outputs.first())
                .is_some_and(|o| spine.contains(o))
        })
        .collect();
    let (name, _) = if !on.is_empty() && ctx.chance(0.8) {
        on[ctx.below(on.len())].clone()
    } else {
        all[ctx.below(all.len())].clone()
    };
    let t = model.graph.initializers.get(&name)?;
    let values = t.to_f64s().ok()?;
    Some(Weight {
        name,
        dims: t.dims.clone(),
        values,
    })
}

/// Writes the changed values back (same name, dtype and dims) as the operator's mutation.
pub(crate) fn commit_weight(model: &mut Model, op: &str, w: Weight, summary: String) -> Outcome {
    let Some(old) = model.graph.initializers.get(&w.name) else {
        return Outcome::Skipped("weight vanished".into());
    };
    let dtype = old.dtype();
    let mut t = tensor::from_f64s(&w.name, dtype, &w.dims, &w.values);
    t.name = Some(w.name.clone());
    if t == *old {
        return Outcome::Skipped("values unchanged".into());
    }
    let mut p = Patch::new();
    p.push(PatchOp::AddInitializer(t));
    commit(model, op, summary, &p)
}

/// Maps every value of one neuron (a random index of the first dim) of a picked weight through
/// `f`, as operator `op`'s mutation (summary: `{verb} neuron k of w`).
pub(crate) fn change_neuron(
    model: &mut Model,
    ctx: &mut Ctx<'_>,
    op: &str,
    verb: &str,
    f: impl Fn(f64) -> f64,
) -> Outcome {
    let Some(mut w) = pick_weight(model, ctx) else {
        return Outcome::Skipped("no weights".into());
    };
    let len = w.neuron_len();
    let k = ctx.below(w.neurons());
    for v in &mut w.values[k * len..(k + 1) * len] {
        *v = f(*v);
    }
    let summary = format!("{verb} neuron {k} of {}", w.name);
    commit_weight(model, op, w, summary)
}

/// A standard normal draw (Box-Muller).
pub(crate) fn normal(rng: &mut SplitMix64) -> f64 {
    let u1 = rng.unit().max(1e-300);
    let u2 = rng.unit();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}
