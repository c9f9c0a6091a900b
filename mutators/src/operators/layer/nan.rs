//! NaN (MEMO): makes an op's input contain NaN or ±Inf: either a float input of an op (on the
//! backbone first) gets `Add(x, c)` with `c` zero but for a few NaN / Inf entries, or a few
//! elements of a weight become NaN / Inf.
use crate::ir::Model;
use crate::ir::patch::{Patch, PatchOp};
use crate::ir::tensor::{self, TensorExt};
use crate::mutation::{Ctx, Family, Mutator, Outcome, commit};
use crate::operators::common::{backbone, static_values, weights};
use crate::site::Site;

/// NaN / Inf injection.
pub struct NanInjection;

const SPECIALS: [f64; 3] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

impl Mutator for NanInjection {
    fn name(&self) -> &'static str {
        "NaN"
    }
    fn family(&self) -> Family {
        Family::Value
    }
    fn description(&self) -> &'static str {
        "feed NaN / Inf into an op (an input value or a weight)"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let ws = weights(model);
        if !ws.is_empty() && ctx.chance(0.3) {
            let (name, _) = ws[ctx.below(ws.len())].clone();
            let t = model.graph.initializers.get(&name).unwrap();
            let Ok(mut vals) = t.to_f64s() else {
                return Outcome::Skipped("weight not readable".into());
            };
            let k = ctx.between(1, 3.min(vals.len()));
            for _ in 0..k {
                let i = ctx.below(vals.len());
                vals[i] = SPECIALS[ctx.below(3)];
            }
            let mut nt = tensor::from_f64s(&name, t.dtype(), &t.dims, &vals);
            nt.name = Some(name.clone());
            let mut p = Patch::new();
            p.push(PatchOp::AddInitializer(nt));
            return commit(model, self.name(), format!("NaN/Inf in weight {name}"), &p);
        }
        let spine = backbone(model);
        let mut cands: Vec<(String, crate::ir::types::TensorType)> = static_values(model)
            .into_iter()
            .filter(|(v, t)| t.dtype.is_float() && !model.graph.consumers(v).is_empty())
            .collect();
        if cands.is_empty() {
            return Outcome::Skipped("no float value read by an op".into());
        }
        ctx.shuffle(&mut cands);
        cands.sort_by_key(|(v, _)| !spine.contains(v));
        let (x, t) = cands.swap_remove(0);
        let readers = model.graph.consumers(&x);
        let reader = readers[ctx.below(readers.len())];
        let node = model.graph.node(reader).unwrap().clone();
        let dims = t.static_dims().unwrap_or_default();
        let n: i64 = dims.iter().product();
        let mut vals = vec![0.0; n.max(1) as usize];
        let k = ctx.between(1, 3.min(vals.len()));
        for _ in 0..k {
            let i = ctx.below(vals.len());
            vals[i] = SPECIALS[ctx.below(3)];
        }
        let patch = {
            let mut site = Site::new(model, ctx.rng, ctx.limits);
            let c = site.constant_f64s("nan", t.dtype, &dims, &vals);
            let Ok(y) = site.op1("Add", &[&x, &c], vec![]) else {
                return Outcome::Skipped("Add refused".into());
            };
            let mut p = site.into_patch();
            for (slot, i) in node.inputs.iter().enumerate() {
                if *i == x {
                    p.push(PatchOp::SetInput {
                        node: reader,
                        slot,
                        value: y.clone(),
                    });
                }
            }
            p
        };
        commit(
            model,
            self.name(),
            format!("NaN/Inf into {} (input {x})", node.op_type),
            &patch,
        )
    }
}
