//! AFRp (How-Far): replaces one activation op by a different activation of the same type
//! (through its recipe when the book has one, else a plain node with default attributes);
//! uncovered activation types first.
use super::lr::{bypassable_nodes, pick_node};
use crate::error::BuildError;
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome, commit};
use crate::operators::common::{activations, is_activation, model_op_types, prefer, remove_node};
use crate::site::Site;

/// Activation function replacement.
pub struct ActivationReplacement;

impl Mutator for ActivationReplacement {
    fn name(&self) -> &'static str {
        "AFRp"
    }
    fn family(&self) -> Family {
        Family::Structure
    }
    fn description(&self) -> &'static str {
        "replace one activation op by a different activation"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let cands = bypassable_nodes(model, |n| {
            n.domain().is_empty() && is_activation(&n.op_type)
        });
        let Some((id, x, out)) = pick_node(model, ctx, &cands) else {
            return Outcome::Skipped("no activation to replace".into());
        };
        let Some(old) = model.graph.node(id).map(|n| n.op_type.clone()) else {
            return Outcome::Skipped("node vanished".into());
        };
        let Some(t) = crate::operators::common::static_type_of(model, &x) else {
            return Outcome::Skipped("activation input has no static type".into());
        };
        let rank = t.rank().unwrap_or(0);
        let present = model_op_types(model);
        let cov = ctx.coverage;
        let others: Vec<&'static str> = activations().into_iter().filter(|a| *a != old).collect();
        let order = prefer(ctx, others, |a| !cov.has_op(a), |a| !present.contains(*a));
        let recipes = ctx.recipes;
        let mut last_err = String::new();
        for new in order {
            let built = {
                let mut site = Site::new(model, ctx.rng, ctx.limits);
                let y = match recipes.get(new) {
                    Some(r) if r.accepts(t.dtype, rank) => r.build(&mut site, &x, &t, ctx.rng),
                    Some(_) => Err(BuildError::not_applicable(format!(
                        "{new} does not accept {:?}",
                        t.dtype
                    ))),
                    None if new == "PRelu" => {
                        let slope =
                            site.random_constant("slope", t.dtype, &[1], 0.01, 0.5, ctx.rng);
                        site.op1(new, &[&x, &slope], vec![])
                    }
                    None => site.op1(new, &[&x], vec![]),
                };
                y.and_then(|y| {
                    if site.added_nodes() != 1 {
                        return Err(BuildError::not_applicable(format!(
                            "{new} took {} ops",
                            site.added_nodes()
                        )));
                    }
                    if site.static_type(&y).as_ref() != Some(&t) {
                        return Err(BuildError::ChangesType {
                            what: new.to_string(),
                        });
                    }
                    site.reroute(&out, &y);
                    remove_node(&mut site, id, &x);
                    Ok(site.into_patch())
                })
            };
            match built {
                Ok(patch) => {
                    return commit(
                        model,
                        self.name(),
                        format!("replaced {old} by {new} making {out}"),
                        &patch,
                    );
                }
                Err(e) => last_err = e.to_string(),
            }
        }
        Outcome::Skipped(format!("no replacement for {old}: {last_err}"))
    }
}
